"""Shared helpers of the worker tests: the golden corpus, the broken worker's
command line, and a check that every worker process a test started is gone."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
CORPUS = ROOT / "fixtures"
CASES = CORPUS / "cases"
BROKEN_WORKER = Path(__file__).with_name("broken_worker.py")


def broken_command(*faults: str) -> list[str]:
    """The broken worker's command line with ``faults`` (``REQUEST:URI_PART:BEHAVIOUR``)."""
    return [sys.executable, str(BROKEN_WORKER), *(argument for fault in faults for argument in ("--fault", fault))]


def broken_driver_name(*faults: str) -> str:
    """``cmd:`` driver name of the broken worker."""
    return "cmd:" + shlex.join(broken_command(*faults))


def is_running(pid: int) -> bool:
    """Whether a process ``pid`` exists and is not a zombie (reaped processes are gone)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def dataset() -> str:
    """A three-version golden case every test here reads."""
    return str(CASES / "ref-naming-v1" / "dataset")
