"""``lance-conformance conflicts``: the stored conflict matrix, as a user prints it, and
``conflicts --driver DRIVER``: the matrix raced by one writing driver."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conformance.cli import main
from conformance.conflict_matrix.model import check_document, stored_matrix
from conformance.conflict_matrix.races import races, select
from conformance.describe import load_schema

from .conflict_matrix import swallowing_writer

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True, timeout=120)


def test_conflicts_prints_a_text_table_of_every_cell():
    result = run_cli("conflicts")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:2] == ["first", "->"]
    assert "pylance/pylance" in lines[0]
    rows = [line for line in lines if " -> " in line and not line.startswith("first")]
    assert len(rows) == len(stored_matrix().cells)
    same_rows = next(line for line in rows if line.startswith("delete -> delete:same-rows"))
    assert same_rows.split()[3:5] == ["retryable", "retryable"]


def test_conflicts_format_json_prints_the_data_on_standard_output():
    result = run_cli("conflicts", "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    check_document(document)
    stored = json.loads((ROOT / "conformance" / "data" / "conflict_matrix.json").read_text(encoding="utf-8"))
    assert document == stored


def test_conflicts_format_markdown_prints_the_docs_page():
    result = run_cli("conflicts", "--format", "markdown")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (ROOT / "docs" / "conflicts.md").read_text(encoding="utf-8")


# -- conflicts --driver: the matrix raced by one writing driver ------------------------------


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    """``lance-conformance`` in this process: its exit code, standard output and error."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def cell_lines(text: str) -> dict[str, list[str]]:
    """The cell lines of the text report by cell id: the status, then the rest."""
    ids = {race.cell.id for race in races()}
    found = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[1] in ids:
            found[words[1]] = [words[0], *words[2:]]
    return found


#: The default run races a handful of cells: every pair of a Delete with
#: another operation, and the cells where pylance 14 and the reference were
#: measured to differ; the whole matrix (about 10 s a driver) runs under the
#: ``races`` marker (tox -e races).
SOME_CELLS = "delete/*,overwrite/update_config:any,create_index/create_index:*,*:stable-row-ids"


@pytest.mark.parametrize(
    "cells", [pytest.param(SOME_CELLS, id="some"), pytest.param(None, id="all", marks=pytest.mark.races)]
)
def test_the_reference_races_the_cells_as_the_stored_matrix_says(capsys, cells):
    code, out, err = run_main(
        capsys, "conflicts", "--driver", "reference", *(() if cells is None else ("--cells", cells))
    )
    assert code == 0, out + err
    lines = cell_lines(out)
    assert set(lines) == {race.cell.id for race in select(races(), None if cells is None else cells.split(","))}
    assert {words[0] for words in lines.values()} == {"agrees"}
    # A conflict's kind is compared: the reference says whether it is retryable.
    assert lines["delete/delete:same-rows"][1:] == ["retryable", "stored", "retryable"]
    assert lines["delete/merge:any"][1:] == ["retryable", "stored", "retryable"]


@pytest.mark.parametrize(
    "cells", [pytest.param(SOME_CELLS, id="some"), pytest.param(None, id="all", marks=pytest.mark.races)]
)
def test_pylance_agrees_but_where_its_shipped_expectations_record_a_known_discrepancy(capsys, tmp_path, cells):
    out_file = tmp_path / "report.json"
    chosen = () if cells is None else ("--cells", cells)
    code, out, err = run_main(
        capsys, "conflicts", "--driver", "pylance", *chosen, "--format", "json", "--out", str(out_file)
    )
    assert code == 0, out + err
    document = json.loads(out)
    jsonschema.validate(document, load_schema("conflict-races-report.schema.json"))
    assert json.loads(out_file.read_text(encoding="utf-8")) == document
    assert document["passed"] and document["oracle"] == "reference/reference"
    status = {cell["id"]: cell["status"] for cell in document["cells"]}
    # Where pylance 14 and the reference were measured to differ, pylance's
    # expectations apply; everywhere else it agrees with the oracle.
    differing = {race.cell.id for race in races() if race.expected is not race.beside}
    assert differing and {c for c, s in status.items() if s == "expected-difference"} == differing
    assert {s for c, s in status.items() if c not in differing} == {"agrees"}


def test_lancedb_writes_on_the_latest_version_only_so_no_cell_is_raced(capsys):
    pytest.importorskip("lancedb")
    code, out, err = run_main(capsys, "conflicts", "--driver", "lancedb", "--cells", "delete/*,*:same-rows")
    assert code == 0, out + err
    lines = cell_lines(out)
    assert "delete/delete:same-rows" in lines and "update/update:same-rows" in lines
    assert all(words[:2] == ["not-applicable", "not"] for words in lines.values())
    assert out.count("lacks the 'write-at-version' capability") == len(lines)
    assert "(no cell raced)" in out


def test_a_driver_that_swallows_its_conflicts_is_reported_naming_the_cell(capsys):
    code, out, err = run_main(
        capsys,
        "conflicts",
        "--driver",
        swallowing_writer.__name__,
        "--cells",
        "delete/delete:same-rows,append/append:any",
    )
    assert code == 1, out + err
    lines = cell_lines(out)
    assert lines["delete/delete:same-rows"][:2] == ["differs", "committed"]
    assert lines["append/append:any"][0] == "agrees"
    assert "where the stored matrix records reference/reference retryable" in out
    assert "no version followed the first's" in out


def test_an_expectations_file_turns_a_difference_into_an_expected_one_and_a_stale_entry_fails(capsys, tmp_path):
    entry = {
        "suite": "conflicts",
        "case": "delete/delete:same-rows",
        "requirement": "transaction.conflict-errors",
        "kind": "bug",
        "reason": "conflicts are swallowed",
        "reproducer": "delete id 0 twice from one read version",
    }
    path = tmp_path / "expectations.json"
    path.write_text(json.dumps({"format": 1, "implementation": "any", "expectations": [entry]}), encoding="utf-8")
    cells = ("--cells", "delete/delete:same-rows", "--expectations", str(path))
    code, out, _ = run_main(capsys, "conflicts", "--driver", swallowing_writer.__name__, *cells)
    assert code == 0 and cell_lines(out)["delete/delete:same-rows"][0] == "expected-difference"
    code, out, _ = run_main(capsys, "conflicts", "--driver", "reference", *cells)
    assert code == 1 and cell_lines(out)["delete/delete:same-rows"][0] == "fixed"
    assert "remove the entry" in out


def test_a_worker_driver_races_through_the_worker_protocol(capsys):
    """A ``cmd:`` worker (here the Python worker serving the reference): its
    conflicts cross the protocol as conflicts."""
    worker = f"cmd:{sys.executable} -m conformance.drivers.worker --driver reference"
    code, out, err = run_main(
        capsys, "conflicts", "--driver", worker, "--cells", "delete/delete:same-rows,delete/delete:disjoint-fragments"
    )
    assert code == 0, out + err
    lines = cell_lines(out)
    assert lines["delete/delete:disjoint-fragments"][:2] == ["agrees", "committed"]
    # The protocol's conflict carries no kind: any conflict agrees with a stored one.
    assert lines["delete/delete:same-rows"][0] == "agrees"
    assert lines["delete/delete:same-rows"][1] in ("conflict", "retryable")


@pytest.mark.parametrize(
    "args, code, message",
    [
        (("--driver", "no_such_driver_module"), 2, "unknown driver 'no_such_driver_module'"),
        (("--driver", "reference", "--cells", "nothing/*"), 2, "no raced cell matches 'nothing/*'"),
        (("--cells", "delete/*"), 2, "--cells needs --driver"),
        (("--driver", "reference", "--format", "markdown"), 2, "not markdown"),
        (("--driver", "cmd:/nonexistent/lance-worker"), 3, "cannot be started"),
    ],
)
def test_usage_errors_exit_2_and_a_driver_that_cannot_load_exits_3(capsys, args, code, message):
    got, out, err = run_main(capsys, "conflicts", *args)
    assert (got, out) == (code, "")
    assert message in err and "Traceback" not in err
