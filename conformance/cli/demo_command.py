"""``lance-conformance demo``: datasets written with pylance, checked with the suite."""

from __future__ import annotations

import argparse

from .common import quiet_peers


def _demo(args: argparse.Namespace) -> int:
    # lazy: the demo brings pyarrow and the report templates (jinja2), pylance as it runs; only this command needs them
    from ..demo import run_demo

    quiet_peers()
    return run_demo(args.out)


def add_demo(commands) -> None:
    demo = commands.add_parser("demo", help="write datasets with pylance and check them with the suite")
    demo.add_argument("--out", default=None, help="directory for the demo datasets (default: a temporary one)")
    demo.set_defaults(run=_demo)
