"""Every machine-readable output carries a format version (CHANGELOG.md says
what changed between them): each output's schema requires its version field,
and the outputs written here carry it."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import jsonschema
import pytest

from conformance.conflict_matrix.model import MATRIX_FORMAT, stored_matrix
from conformance.describe import load_schema
from conformance.fixtures import corpus_version, default_corpus
from conformance.fixtures.verify import report_json, verify_corpus
from conformance.validator import validate
from conformance.validator.report import to_json, to_junit, to_sarif

#: Each output's schema and the field holding its format version.
VERSION_FIELDS = {
    "describe.schema.json": "describe_format",
    "validation-report.schema.json": "report_format",
    "validation-baseline.schema.json": "baseline_format",
    "fixture-verify.schema.json": "report_format",
    "fixture-matrix.schema.json": "format",
    "fixture-case.schema.json": "format",
    "fixture-expected.schema.json": "format",
    "writer-conformance-report.schema.json": "report_format",
    "conflict-races-report.schema.json": "report_format",
    "ecosystem-matrix.schema.json": "format",
    "conflict-matrix.schema.json": "format",
    "harness-history.schema.json": "format",
    "harness-report.schema.json": "report_format",
    "expectations.schema.json": "format",
    "compat-matrix.schema.json": "format",
    "corpus-export.schema.json": "export_format",
    "corpus-rows.schema.json": "rows_format",
    "rules-list.schema.json": "rules_format",
    "suite-run-report.schema.json": "report_format",
    "dashboard-results.schema.json": "dashboard_format",
}


@pytest.mark.parametrize("schema_name, field", sorted(VERSION_FIELDS.items()))
def test_each_output_schema_requires_its_format_version(schema_name, field):
    schema = load_schema(schema_name)
    assert field in schema["required"] and field in schema["properties"]


def test_a_validation_report_carries_its_format_in_json_junit_and_sarif():
    report = validate(default_corpus() / "cases" / "ref-tags" / "dataset")
    document = json.loads(to_json(report))
    jsonschema.validate(document, load_schema("validation-report.schema.json"))
    assert document["report_format"] == 1
    properties = {p.get("name"): p.get("value") for p in ElementTree.fromstring(to_junit(report)).iter("property")}
    assert properties["report_format"] == "1"
    assert json.loads(to_sarif(report))["runs"][0]["properties"]["reportFormat"] == 1


def test_the_stored_conflict_matrix_carries_its_format():
    assert stored_matrix().to_json()["format"] == MATRIX_FORMAT == 1


def test_the_golden_corpus_has_a_version_and_the_verify_report_names_it(tmp_path):
    version = corpus_version(default_corpus())
    assert version is not None and version.isdigit()
    assert corpus_version(tmp_path) is None
    results = verify_corpus(default_corpus(), "reference", only={"ref-tags"})
    document = report_json(results, None, version)
    jsonschema.validate(document, load_schema("fixture-verify.schema.json"))
    assert document["corpus_version"] == version
