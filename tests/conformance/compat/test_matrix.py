"""The compatibility matrix between the pylance installed beside the project
(14) and 0.20.0, each in its own environment: real releases write real
datasets, and each reads the other's in a worker (lance-conformance compat).
The wider corpus is tests/conformance/compat/test_release_corpus.py (tox -e releases)."""

from __future__ import annotations

import json
from datetime import datetime
from importlib import metadata

import pyarrow as pa
import pytest

from conformance.cli import main
from conformance.compat.document import FORMAT, ISSUE_9454, REPORT, validate_document
from conformance.compat.outcomes import FailureKind, Outcome
from conformance.compat.releases import INSTALLED, resolve
from conformance.compat.run import judge, open_reader, read_dataset
from conformance.dashboard.inputs import InputError, read_file
from conformance.exit_codes import ExitCode
from tests.conformance.compat.conftest import SMALL_FEATURES

pytestmark = pytest.mark.old_pylance("0.20.0")

INSTALLED_VERSION = metadata.version("pylance")


def _cells(document, feature, writer=None, reader=None):
    return [
        c
        for c in document["cells"]
        if c["feature"] == feature and writer in (None, c["writer"]) and reader in (None, c["reader"])
    ]


def _write(document, release, feature):
    return next(w for w in document["writes"] if w["release"] == release and w["feature"] == feature)


def test_the_document_fits_its_schema_and_names_its_format_releases_and_date(small_compat):
    _, document = small_compat
    validate_document(document)
    assert (document["report"], document["format"], document["implementation"]) == (REPORT, FORMAT, "pylance")
    assert document["releases"] == ["0.20.0", INSTALLED_VERSION]  # oldest first
    assert document["release_environments"] == {"0.20.0": "venv", INSTALLED_VERSION: INSTALLED}
    started, ended = datetime.fromisoformat(document["started"]), datetime.fromisoformat(document["generated"])
    assert started <= ended and document["run_date"] == ended.date().isoformat()
    assert [f["name"] for f in document["features"]] == list(SMALL_FEATURES)
    # Every written dataset is read by both releases, and nothing else is read.
    written = [(w["release"], w["feature"]) for w in document["writes"] if w["status"] == "written"]
    assert sorted((c["writer"], c["feature"], c["reader"]) for c in document["cells"]) == sorted(
        (writer, feature, reader) for writer, feature in written for reader in ("0.20.0", INSTALLED_VERSION)
    )
    assert document["summary"]["cells"] == len(document["cells"]) == sum(document["summary"][o.value] for o in Outcome)


def test_each_release_reads_its_own_datasets(small_compat):
    _, document = small_compat
    diagonal = [c for c in document["cells"] if c["writer"] == c["reader"]]
    assert diagonal and all(c["status"] == "pass" for c in diagonal), diagonal


def test_both_directions_of_2_0_files_pass(small_compat):
    """The newer reader reads the older writer's 2.0 files and the older
    reader the newer's: same rows, same description."""
    _, document = small_compat
    cells = _cells(document, "file-2.0")
    assert {(c["writer"], c["reader"]) for c in cells if c["writer"] != c["reader"]} == {
        ("0.20.0", INSTALLED_VERSION),
        (INSTALLED_VERSION, "0.20.0"),
    }
    assert all(c["status"] == "pass" for c in cells), cells


def test_a_file_version_the_older_reader_does_not_know_is_refused_cleanly(small_compat):
    _, document = small_compat
    assert _write(document, "0.20.0", "file-2.2")["status"] == "not-offered"
    (cell,) = _cells(document, "file-2.2", INSTALLED_VERSION, "0.20.0")
    assert cell["status"] == "refused" and cell["failure_kind"] is None
    assert "2.2" in cell["message"]


def test_a_panic_of_the_older_reader_is_a_failure_with_its_message(small_compat):
    """0.20.0 panics on pylance 14's 2.1 files and on its BTREE index (as measured)."""
    _, document = small_compat
    failing = [c for c in document["cells"] if c["status"] == "fail"]
    assert failing and {c["reader"] for c in failing} == {"0.20.0"}
    assert all(c["message"] and c["failure_kind"] in {k.value for k in FailureKind} for c in failing)
    assert any(c["failure_kind"] == "panic" for c in failing)
    assert not document["passed"]


def test_the_9454_note_says_why_these_releases_cannot_reproduce_it(small_compat):
    """0.20.0 has no DataOverlay, pylance 14 records its transaction where
    older readers do not look, and no reader here decodes inline transactions."""
    _, document = small_compat
    assert _write(document, "0.20.0", "txn-data-overlay")["status"] == "not-offered"
    (note,) = [n for n in document["notes"] if n["id"] == ISSUE_9454]
    assert note["status"] == "not-reproduced" and note["cells"] == []
    assert "field 23" in note["text"] and "1.0 and 8.x" in note["text"]
    assert all(c["status"] == "pass" for c in _cells(document, "txn-data-overlay"))


def test_rows_or_a_description_other_than_the_writers_fail_the_cell(small_compat):
    """What the comparison catches: a read whose rows differ from the
    writer's own is wrong-rows, one whose description differs is
    wrong-description (the reads are real; the difference is made here)."""
    run, _ = small_compat
    installed = resolve(INSTALLED)
    path = next(r for r in run.writes if r.release == installed.name).datasets["file-2.0"]
    driver, info = open_reader(installed)
    try:
        own = read_dataset(driver, path)
    finally:
        driver.close()
    assert own.table is not None and own.description is not None
    infos = {installed.name: info}
    same = judge(installed.name, installed.name, "file-2.0", own, own, infos)
    assert same.outcome is Outcome.PASS

    values = pa.array([(v or 0.0) + 1.0 for v in own.table.column("value").to_pylist()], pa.float64())
    changed = own.table.set_column(own.table.schema.get_field_index("value"), "value", values)
    wrong_rows = judge(installed.name, installed.name, "file-2.0", own, type(own)(own.description, changed), infos)
    assert (wrong_rows.outcome, wrong_rows.failure_kind) == (Outcome.FAIL, FailureKind.WRONG_ROWS)
    assert any(d.startswith("rows:") and "value" in d for d in wrong_rows.differences)

    description = dict(own.description, num_rows=own.description["num_rows"] + 1)
    wrong = judge(installed.name, installed.name, "file-2.0", own, type(own)(description, own.table), infos)
    assert (wrong.outcome, wrong.failure_kind) == (Outcome.FAIL, FailureKind.WRONG_DESCRIPTION)
    assert any("num_rows" in d for d in wrong.differences)


def test_the_command_writes_json_and_html_and_exits_0_when_every_cell_passes(tmp_path, capsys):
    out = tmp_path / "out"
    command = ["compat", "--releases", INSTALLED, "--features", "file-2.0,txn-update", "--out", str(out)]
    assert main([*command, "--run-date", "2001-02-03"]) == 0
    document = json.loads((out / "compat.json").read_text())
    validate_document(document)
    assert document["run_date"] == "2001-02-03" and document["generated"][:10] != "2001-02-03"
    assert {c["status"] for c in document["cells"]} == {"pass"} and len(document["cells"]) == 2
    page = (out / "compat.html").read_text()
    assert 'data-feature="txn-update"' in page and "<script>" in page
    assert "2 cells: 2 pass" in capsys.readouterr().out


@pytest.mark.parametrize(
    "options",
    [
        ["--releases", "0.0.1"],
        ["--releases", "installed", "--features", "no-such-feature"],
        ["--releases", ","],
    ],
)
def test_the_command_refuses_what_it_does_not_know(tmp_path, capsys, options):
    assert main(["compat", *options, "--out", str(tmp_path / "out")]) == ExitCode.USAGE
    assert "compat:" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_dashboard_gives_each_reader_release_a_result_from_its_cells(small_compat, tmp_path):
    """The dashboard's compat adapter on a real document: one result per
    reader release, a clean refusal counted as a pass; a cell whose status
    the schema does not know makes the file unreadable, naming the place."""
    _, document = small_compat
    path = tmp_path / "compat.json"
    path.write_text(json.dumps(document))
    found = {result.release: result for result in read_file(path, "compat.json")}
    assert set(found) == set(document["releases"])
    for reader, result in found.items():
        statuses = [cell["status"] for cell in document["cells"] if cell["reader"] == reader]
        assert result.passed == statuses.count("pass") + statuses.count("refused")
        assert result.failed == statuses.count("fail")
        assert result.run_date == document["run_date"]
    document["cells"][0]["status"] = "crashed"
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match="cells/0/status"):
        read_file(path, "compat.json")
