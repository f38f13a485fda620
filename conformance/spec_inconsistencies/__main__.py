"""``python -m conformance.spec_inconsistencies``: list or render the disagreements."""

from __future__ import annotations

import argparse
import sys

from ..spec_sources import load_documents
from . import THREADS, inconsistencies, meaning_changes
from .markdown import render_markdown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.spec_inconsistencies",
        description="Print where the upstream pages disagree (one subject a line, or Markdown).",
    )
    parser.add_argument(
        "--markdown", action="store_true", help="the page docs/spec-inconsistencies.md instead of one line each"
    )
    args = parser.parse_args(argv)
    if args.markdown:
        sys.stdout.write(render_markdown(inconsistencies(), meaning_changes(), THREADS, load_documents()))
        return 0
    for item in inconsistencies():
        meanings = " | ".join(
            f"{meaning.key} ({', '.join(c.document for c in claims)})" for meaning, claims in item.meanings
        )
        print(f"{item.subject}: {meanings}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
