"""A small harness run end to end with real writer processes: pylance 14 and
the reference, 8 writers each, the mixed workload, must show no anomaly."""

from __future__ import annotations

import json

import pytest

from conformance.drivers.writes import WriteKind, WriteOutcome
from conformance.harness.attribution import EFFECTLESS_OPERATIONS, attribute
from conformance.harness.checker import check
from conformance.harness.executors import ProcessExecutor
from conformance.harness.history import load_history
from conformance.harness.observe import observe
from conformance.harness.runner import HISTORY_FILE, REPORT_FILE, RUN_FILE, run
from conformance.harness.spec import RunSpec
from conformance.harness.workloads import parse_workload, workload_to_json
from reference_impl.dataset import Dataset


def _spec(tmp_path, writer: str, **changes) -> RunSpec:
    options = dict(
        uri=str(tmp_path / "t.lance"),
        storage_options={},
        writer=writer,
        writers=8,
        operations=6,
        workloads=workload_to_json(parse_workload("mixed")),
        seed=11,
        stable_row_ids=True,
        naming="v2",
    )
    options.update(changes)
    return RunSpec(**options)


@pytest.mark.parametrize("writer", ["pylance", "reference"])
def test_eight_writers_mixed_workload_show_no_anomaly(tmp_path, writer):
    result = run(_spec(tmp_path, writer), ProcessExecutor(), tmp_path / "out")
    assert result.report.anomalies == []
    attempts = [a for a in result.history if a.writer >= 0]
    assert len(attempts) == 8 * 6
    assert {a.writer for a in attempts} == set(range(8))
    assert len({a.op_id for a in result.history}) == len(result.history)
    acknowledged = [a for a in attempts if a.outcome is WriteOutcome.ACKNOWLEDGED]
    assert acknowledged and all(a.read_version is not None for a in acknowledged)
    # Every version that changed something is attributed to one operation, from
    # the dataset itself (tokens, then the writer's word, then the window); a
    # compaction's reservation of fragment ids changes nothing.
    observations = observe(result.spec.uri)
    claims = attribute(result.history, observations).claims
    changed = [o.version for o in observations.versions if o.operation not in EFFECTLESS_OPERATIONS]
    assert set(changed) <= set(claims), sorted(set(changed) - set(claims))
    assert all(len(claimers) == 1 for claimers in claims.values()), claims
    # Saved as the plan says, and the saved history checks the same.
    assert load_history(tmp_path / "out" / HISTORY_FILE) == result.history
    assert json.loads((tmp_path / "out" / RUN_FILE).read_text())["writer"] == writer
    assert json.loads((tmp_path / "out" / REPORT_FILE).read_text())["anomalies"] == []
    if writer == "reference":
        assert result.skipped == ["upsert"]
        assert not any(a.kind == "upsert" for a in attempts)
    # Each writer's default data file version: the checker read its rows.
    assert json.loads((tmp_path / "out" / RUN_FILE).read_text())["data_storage_version"] is None
    assert _data_versions(tmp_path / "t.lance") == {"pylance": {(2, 2)}, "reference": {(2, 0)}}[writer]


def _data_versions(uri) -> set[tuple[int, int]]:
    """The (major, minor) file versions of the latest version's data files."""
    dataset = Dataset.open(uri)
    return {(f.file_major_version, f.file_minor_version) for fragment in dataset.fragments for f in fragment.files}


@pytest.mark.parametrize(("writer", "version"), [("pylance", "2.0"), ("reference", "2.1")])
def test_the_run_spec_names_the_data_storage_version(tmp_path, writer, version):
    """A version named in the spec is the one the dataset is created with
    (and the appends keep it); the checker, reading those rows, finds every
    acknowledged append."""
    spec = _spec(tmp_path, writer, writers=2, operations=3, workloads={"append": 1.0}, data_storage_version=version)
    result = run(spec, ProcessExecutor(), tmp_path / "out", validate=False)
    assert result.report.anomalies == []
    assert _data_versions(tmp_path / "t.lance") == {tuple(int(part) for part in version.split("."))}
    assert RunSpec.load(tmp_path / "out" / RUN_FILE).data_storage_version == version


def test_v1_naming_without_stable_row_ids(tmp_path):
    spec = _spec(tmp_path, "reference", writers=3, operations=5, stable_row_ids=False, naming="v1")
    result = run(spec, ProcessExecutor(), tmp_path / "out", validate=False)
    assert result.report.anomalies == []
    assert (tmp_path / "t.lance" / "_versions" / "1.manifest").exists()
    # A history that lost an acknowledged append is caught on the same dataset.
    history = list(result.history)
    appended = next(a for a in history if a.kind is WriteKind.APPEND and a.outcome is WriteOutcome.ACKNOWLEDGED)
    history.append(
        type(appended)(
            "forged-1",
            0,
            WriteKind.APPEND,
            {"ids": [999_999_999_999]},
            1,
            WriteOutcome.ACKNOWLEDGED,
            appended.version,
            None,
            0.0,
            0.0,
        )
    )
    assert "lost append" in check(history, spec, validate=False).names()
