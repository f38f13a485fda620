"""The ecosystem document: statuses, cells, and the JSON form with its schema."""

from __future__ import annotations

import jsonschema
import pytest

from conformance.ecosystem.model import (
    ECOSYSTEM_FORMAT,
    Cell,
    DriverEntry,
    EcosystemMatrix,
    Grid,
    Outcome,
    Status,
    check_document,
    dumps,
    load_file,
    worst,
)


def test_a_cell_shows_the_worst_status_of_its_outcomes():
    assert worst([Status.PASS, Status.EXPECTED_FAILURE]) is Status.EXPECTED_FAILURE
    assert worst([Status.PASS, Status.FIXED, Status.EXPECTED_FAILURE]) is Status.FIXED
    assert worst([Status.FIXED, Status.FAIL]) is Status.FAIL
    assert worst([Status.NOT_APPLICABLE, Status.PASS]) is Status.PASS
    assert worst([Status.NOT_APPLICABLE]) is Status.NOT_APPLICABLE
    assert worst([]) is Status.NOT_APPLICABLE
    assert {s for s in Status if s.fails_run} == {Status.FAIL, Status.FIXED}


def _matrix(status: Status) -> EcosystemMatrix:
    outcome = Outcome("case-a", status, ("v1: differs",), ("note",), ("manifest.footer-magic",), ("txn.append",))
    grid = Grid("readers", "t", "d", "writer", "reader", ("w",), ("r",), (Cell("w", "r", (outcome,)),))
    return EcosystemMatrix(
        generated="2026-01-01T00:00:00+00:00",
        versions={"python": "CPython 3.11"},
        drivers=(DriverEntry("r", {"name": "r"}), DriverEntry("broken", None, "cannot be loaded")),
        expectations=(),
        grids=(grid,),
    )


def test_the_document_round_trips_through_its_schema(tmp_path):
    matrix = _matrix(Status.EXPECTED_FAILURE)
    path = tmp_path / "m.json"
    path.write_text(dumps(matrix), encoding="utf-8")
    assert load_file(path) == matrix
    assert matrix.to_json()["format"] == ECOSYSTEM_FORMAT
    assert matrix.passed and not _matrix(Status.FIXED).passed and not _matrix(Status.FAIL).passed


def test_the_schema_refuses_an_unknown_status_and_a_missing_version():
    document = _matrix(Status.PASS).to_json()
    document["grids"][0]["cells"][0]["outcomes"][0]["status"] = "known-deviation"
    with pytest.raises(jsonschema.ValidationError):
        check_document(document)
    document = _matrix(Status.PASS).to_json()
    del document["format"]
    with pytest.raises(jsonschema.ValidationError):
        check_document(document)
