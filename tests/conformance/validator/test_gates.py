"""CI gates: ``validate --fail-on`` and baselines of accepted findings, through
the command line (``conformance.cli.main``) on real datasets broken by real
mutations (conformance/mutations)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import pyarrow as pa
import pytest

from conformance.cli import main
from conformance.describe import schema_validator
from conformance.mutations import copy_dataset
from conformance.mutations.topics.fragments import give_two_fragments_one_id
from conformance.mutations.topics.indices import (
    misrecord_an_index_file_size,
    remove_a_listed_index_file,
    remove_the_index_directory,
)
from conformance.spec_revisions import NEWEST
from conformance.validator.baseline import REASON_PLACEHOLDER, SCHEMA_NAME

lance = pytest.importorskip("lance")


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def json_report(capsys, *args) -> tuple[int, dict]:
    code, out, _ = run(capsys, "validate", *args, "--format", "json")
    report = json.loads(out)
    schema_validator("validation-report.schema.json").validate(report)
    return code, report


@pytest.fixture
def plain(base_datasets, tmp_path):
    return copy_dataset(base_datasets["plain"], tmp_path / "ds")


def test_a_baseline_suppresses_exactly_the_findings_it_lists(plain, tmp_path, capsys):
    """The acceptance test: a baseline written for today's finding lets the
    gate pass; a new finding, of another rule or of the same rule elsewhere,
    fails it again while the accepted one stays suppressed."""
    baseline = tmp_path / "baseline.json"
    misrecord_an_index_file_size(plain)
    code, report = json_report(capsys, plain)
    assert code == 1 and [f["rule"] for f in report["findings"] if f["severity"] == "error"] == [
        "index/file-sizes-match"
    ]

    code, report = json_report(capsys, plain, "--write-baseline", baseline)
    assert code == 0
    written = json.loads(baseline.read_text())
    schema_validator(SCHEMA_NAME).validate(written)
    assert written["entries"] == [
        {
            "rule": "index/file-sizes-match",
            "location": "_versions/*.manifest#index_section.indices[0].files[0].size_bytes",
            "reason": REASON_PLACEHOLDER,
        }
    ]
    code, report = json_report(capsys, plain, "--baseline", baseline)
    assert code == 0
    assert report["summary"]["errors"] == 0 and report["summary"]["suppressed"] == 1
    assert report["baseline"]["stale"] == []

    give_two_fragments_one_id(plain)  # a new finding of another rule
    code, report = json_report(capsys, plain, "--baseline", baseline)
    assert code == 1
    assert {f["rule"] for f in report["findings"] if f["severity"] == "error"} == {"fragment/id-unique"}
    assert [s["rule"] for s in report["baseline"]["suppressed"]] == ["index/file-sizes-match"]


def test_a_new_finding_of_an_accepted_rule_elsewhere_still_fails(plain, tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    misrecord_an_index_file_size(plain)
    assert run(capsys, "validate", plain, "--write-baseline", baseline)[0] == 0
    remove_a_listed_index_file(plain)  # same rule, a file the entry does not name
    code, report = json_report(capsys, plain, "--baseline", baseline)
    assert code == 1
    (new,) = [f for f in report["findings"] if f["rule"] == "index/file-sizes-match"]
    assert new["location"].startswith("_indices/")


def test_fail_on_sets_the_severity_that_fails(plain, capsys):
    remove_the_index_directory(plain)  # a warning, and pylance's infos
    _, report = json_report(capsys, plain)
    assert report["summary"]["errors"] == 0 and report["summary"]["warnings"] == 1
    assert run(capsys, "validate", plain)[0] == 0  # the default gate is error
    assert run(capsys, "validate", plain, "--fail-on", "error")[0] == 0
    assert run(capsys, "validate", plain, "--fail-on", "warning")[0] == 1
    assert run(capsys, "validate", plain, "--fail-on", "info")[0] == 1


def test_a_written_baseline_accepts_what_gates_and_survives_the_next_commit(tmp_path, capsys):
    """Findings inside the latest manifest name its file, whose name changes
    with each commit; the written entry names every manifest instead, so the
    same finding in the next version is still accepted."""
    path, baseline = tmp_path / "ds", tmp_path / "baseline.json"
    lance.write_dataset(pa.table({"id": pa.array([1, 2], pa.int64())}), path)
    assert run(capsys, "validate", path, "--fail-on", "info")[0] == 1  # pylance's infos
    assert run(capsys, "validate", path, "--fail-on", "info", "--write-baseline", baseline)[0] == 0
    entries = json.loads(baseline.read_text())["entries"]
    assert entries and all("version" not in e for e in entries)
    lance.write_dataset(pa.table({"id": pa.array([3], pa.int64())}), path, mode="append")
    code, report = json_report(capsys, path, "--fail-on", "info", "--baseline", baseline)
    assert code == 0 and report["versions"] == [2]
    assert report["summary"]["suppressed"] == len(entries) and report["baseline"]["stale"] == []
    # At --fail-on error there is nothing to accept: the written baseline is empty.
    assert run(capsys, "validate", path, "--write-baseline", tmp_path / "empty.json")[0] == 0
    assert json.loads((tmp_path / "empty.json").read_text())["entries"] == []


def test_rewriting_a_baseline_keeps_the_reasons_given(plain, tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    misrecord_an_index_file_size(plain)
    run(capsys, "validate", plain, "--write-baseline", baseline)
    document = json.loads(baseline.read_text())
    document["entries"][0]["reason"] = "rebuilt next sprint"
    baseline.write_text(json.dumps(document))
    give_two_fragments_one_id(plain)
    code, _, _ = run(capsys, "validate", plain, "--baseline", baseline, "--write-baseline", baseline)
    assert code == 0
    entries = json.loads(baseline.read_text())["entries"]
    assert [(e["rule"], e["reason"]) for e in entries] == [
        ("index/file-sizes-match", "rebuilt next sprint"),
        ("fragment/id-unique", REASON_PLACEHOLDER),
    ]


def test_stale_and_version_pinned_entries(plain, tmp_path, capsys):
    """An entry matching nothing is a notice, never a failure; an entry pinned
    to another version suppresses nothing."""
    misrecord_an_index_file_size(plain)  # reported on version 6, the latest
    baseline = tmp_path / "baseline.json"
    entry = {"rule": "index/file-sizes-match", "location": "*", "reason": "known"}
    baseline.write_text(
        json.dumps(
            {
                "baseline_format": 1,
                "entries": [
                    {**entry, "version": 5},
                    {"rule": "naming/no-mixture", "location": "_versions/*", "reason": "long fixed"},
                ],
            }
        )
    )
    code, report = json_report(capsys, plain, "--baseline", baseline)
    assert code == 1 and report["summary"]["suppressed"] == 0
    assert [e["rule"] for e in report["baseline"]["stale"]] == ["index/file-sizes-match", "naming/no-mixture"]

    baseline.write_text(
        json.dumps(
            {
                "baseline_format": 1,
                "entries": [
                    {**entry, "version": 6},
                    {"rule": "naming/no-mixture", "location": "_versions/*", "reason": "long fixed"},
                ],
            }
        )
    )
    code, text, _ = run(capsys, "validate", plain, "--baseline", baseline)
    assert code == 0
    assert "suppressed 1 findings: index/file-sizes-match (1)" in text
    assert "STALE   baseline entry naming/no-mixture at '_versions/*'" in text
    assert text.rstrip().endswith("1 suppressed by the baseline")

    code, junit, _ = run(capsys, "validate", plain, "--baseline", baseline, "--format", "junit")
    suite = ElementTree.fromstring(junit)
    assert code == 0 and suite.get("failures") == "0"
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert properties == {
        "report_format": "1",
        "spec_revision": NEWEST.name,
        "deep": "false",
        "baseline": str(baseline),
        "suppressed": "1",
    }
    assert "stale baseline entry naming/no-mixture" in suite.find("system-out").text

    code, sarif, _ = run(capsys, "validate", plain, "--baseline", baseline, "--format", "sarif")
    run_ = json.loads(sarif)["runs"][0]
    (accepted,) = [r for r in run_["results"] if "suppressions" in r]
    assert accepted["ruleId"] == "index/file-sizes-match"
    assert accepted["suppressions"] == [{"kind": "external", "status": "accepted", "justification": "known"}]
    (notice,) = run_["invocations"][0]["toolExecutionNotifications"]
    assert "naming/no-mixture" in notice["message"]["text"]


@pytest.mark.parametrize(
    "content, problem",
    [
        (None, "no such file"),
        ("{not json", "not valid JSON"),
        ('{"baseline_format": 1, "entries": [{"rule": "x", "location": "*"}]}', "'reason' is a required property"),
        ('{"baseline_format": 2, "entries": []}', "baseline_format"),
        ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
    ],
    ids=["missing", "not-json", "no-reason", "future-format", "deep"],
)
def test_a_malformed_baseline_is_a_usage_error_naming_the_file(plain, tmp_path, capsys, content, problem):
    baseline = tmp_path / "bad-baseline.json"
    if content is not None:
        baseline.write_text(content)
    code, out, err = run(capsys, "validate", plain, "--baseline", baseline)
    assert code == 2 and out == ""
    assert err.startswith(f"lance-conformance: baseline {baseline}: ") and problem in err, err
    assert "Traceback" not in err
