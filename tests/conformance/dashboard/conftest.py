"""Real results for the dashboard's tests, written by the project's own
commands on tiny inputs (nothing here is written by hand):

* ``two_days`` (session): a results directory holding two runs of different
  days over three implementations: ``matrix`` of the reference, pylance and
  LanceDB drivers over a two-case corpus, filed under yesterday with
  ``--run-date``; and, as run today, ``writer-check`` of LanceDB. The
  corpus's two cases are chosen so that a pass rate is not 100%: LanceDB's
  shipped expectations record that it reads ``crafted-unknown-reader-flag``
  although it must refuse it.
* :func:`run_cli`: one command through ``conformance.cli.main``, its stdout kept.

The runs are made once per test session, also under xdist: the first
worker that needs them makes them in the session's shared temporary
directory, under a lock, and the others wait for it and read them (xdist's
recipe for a session fixture run once; the xdist groups of tests/conftest.py
would do, but with pytest 9 xdist's ``loadgroup`` no longer keeps a group on
one worker).
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import io
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.fixtures import default_corpus

#: The drivers of the matrix run: three implementations, all installed by the test extra.
DRIVERS = ("reference", "pylance", "lancedb")
#: The golden cases of the tiny corpus: one LanceDB is expected to fail, one every driver passes.
CASES = ("crafted-unknown-reader-flag", "ref-empty-table")


def run_cli(argv: list[str]) -> tuple[int, str]:
    """``lance-conformance ARGV`` in this process: its exit status and stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def tiny_corpus(root: Path) -> Path:
    """A golden corpus of :data:`CASES` only, copied from the shipped one."""
    shipped = default_corpus() / "cases"
    (root / "cases").mkdir(parents=True)
    shutil.copyfile(shipped / "VERSION", root / "cases" / "VERSION")
    for case in CASES:
        shutil.copytree(shipped / case, root / "cases" / case)
    return root


@dataclass(frozen=True)
class TwoDays:
    results: Path
    #: The matrix's document (filed under ``yesterday``) and the writer-check's (run today).
    matrix: Path
    writer_check: Path
    yesterday: str


def make_two_days(root: Path) -> TwoDays:
    corpus = tiny_corpus(root / "tiny-corpus")
    yesterday = (datetime.datetime.now(datetime.timezone.utc).date() - datetime.timedelta(days=1)).isoformat()
    results = root / "results"
    matrix = results / yesterday / "matrix.json"
    matrix.parent.mkdir(parents=True)
    argv = ["matrix", "--drivers", ",".join(DRIVERS), "--corpus", str(corpus), "--in-process"]
    argv += ["--json", str(matrix), "--html", str(root / "matrix.html"), "--run-date", yesterday]
    code, out = run_cli(argv)
    assert code == 0, out
    writer_check = results / "today" / "lancedb-writers.json"
    writer_check.parent.mkdir()
    argv = ["writer-check", "--driver", "lancedb", "--reader", "reference", "--in-process", "--format", "json"]
    code, out = run_cli(argv)
    assert code == 0, out
    writer_check.write_text(out, encoding="utf-8")
    return TwoDays(results, matrix, writer_check, yesterday)


@pytest.fixture(scope="session")
def two_days(tmp_path_factory) -> TwoDays:
    # The session's temporary root: under xdist each worker's basetemp is below it, shared by them all.
    basetemp = tmp_path_factory.getbasetemp()
    shared = (basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp) / "dashboard-two-days"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            made = shared / "made.json"
            if made.exists():
                fields = json.loads(made.read_text())
                return TwoDays(
                    Path(fields["results"]), Path(fields["matrix"]), Path(fields["writer_check"]), fields["yesterday"]
                )
            runs = make_two_days(shared)
            made.write_text(
                json.dumps(
                    {
                        "results": str(runs.results),
                        "matrix": str(runs.matrix),
                        "writer_check": str(runs.writer_check),
                        "yesterday": runs.yesterday,
                    }
                )
            )
            return runs
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
