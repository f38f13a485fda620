"""Acceptance of the reader: for every version of every dataset pylance writes,
the reference implementation's canonical description agrees with pylance's
own view, and both fit the published JSON Schema."""

from __future__ import annotations

import pytest

from conformance.describe import differences, validate_description
from conformance.drivers import reference

pylance_driver = pytest.importorskip("conformance.drivers.pylance_driver")


#: The protobuf packages of index details, older first: pylance 14 reports a
#: ``/lance.table.X`` details type written by older releases as
#: ``/lance.index.pb.X`` (docs/spec-discrepancies.md, "Deletion, row id,
#: index and refs rules", item 7).
_OLD_DETAILS_PACKAGE, _NEW_DETAILS_PACKAGE = "/lance.table.", "/lance.index.pb."


def _as_pylance_14_names_details(ours: dict, theirs: dict) -> dict:
    """``ours`` with the type URLs pylance 14 reports under the newer package
    taken from ``theirs``, where that is the only difference."""
    indices = []
    # The lists may differ in length: the comparison after this reports it.
    for mine, its in zip(ours["indices"], theirs["indices"], strict=False):
        type_url, reported = mine.get("type_url"), its.get("type_url")
        if (
            type_url
            and reported
            and type_url.startswith(_OLD_DETAILS_PACKAGE)
            and reported == _NEW_DETAILS_PACKAGE + type_url[len(_OLD_DETAILS_PACKAGE) :]
        ):
            mine = {**mine, "type_url": reported}
        indices.append(mine)
    return {**ours, "indices": indices + ours["indices"][len(indices) :]}


#: Indices pylance 14 leaves out of its view of a dataset an old release wrote,
#: by scenario: it neither describes nor lists pylance 0.20's IVF_HNSW_PQ
#: (docs/spec-discrepancies.md, "Deletion, row id, index and refs rules",
#: item 8).
OMITTED_BY_PYLANCE_14 = {"hnsw_indices": frozenset({"ivf_hnsw_pq"})}


def _without_omitted(ours: dict, theirs: dict, omitted: frozenset[str]) -> dict:
    """``ours`` without the indices named in ``omitted``, which pylance must
    indeed leave out (the tolerance ends when pylance starts reporting them)."""
    assert not {index["name"] for index in theirs["indices"]} & omitted
    return {**ours, "indices": [index for index in ours["indices"] if index["name"] not in omitted]}


def _check_every_version(path, omitted: frozenset[str] = frozenset()):
    checked = 0
    pylance_versions = pylance_driver.versions(path)
    assert reference.versions(path) == pylance_versions
    for version in pylance_versions:
        ours = reference.describe(path, version)
        validate_description(ours)
        theirs = pylance_driver.describe(path, version)
        validate_description(theirs)
        ours = _without_omitted(ours, theirs, omitted)
        diffs = differences(_as_pylance_14_names_details(ours, theirs), theirs, ignore=pylance_driver.UNREPORTED)
        assert not diffs, f"{path} v{version}:\n" + "\n".join(diffs)
        checked += 1
    return checked


def test_every_version_of_every_pylance_scenario_agrees(pylance_datasets):
    failures = []
    for name, path in sorted(pylance_datasets.items()):
        try:
            _check_every_version(path)
        except AssertionError as exc:
            failures.append(f"[{name}] {exc}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.old_pylance
def test_every_version_written_by_an_old_pylance_release_agrees(old_pylance_datasets):
    failures = []
    for name, path in sorted(old_pylance_datasets.items()):
        try:
            _check_every_version(path, OMITTED_BY_PYLANCE_14.get(name, frozenset()))
        except AssertionError as exc:
            failures.append(f"[{name}] {exc}")
    assert not failures, "\n\n".join(failures)


def test_the_reported_subset_is_not_empty():
    """The comparison must cover what the issue requires pylance to report."""
    required = {
        "num_rows",
        "fragments[].id",
        "fragments[].physical_rows",
        "fragments[].num_deleted_rows",
        "fragments[].deleted_offsets",
        "fragments[].row_ids",
        "schema[].name",
        "schema[].logical_type",
        "indices[].name",
        "indices[].fragment_ids",
    }
    hidden = [
        path
        for path in required
        for pattern in pylance_driver.UNREPORTED
        if path == pattern or path.startswith(pattern + ".") or path.startswith(pattern + "[")
    ]
    assert not hidden, f"the pylance driver leaves out required keys: {hidden}"
