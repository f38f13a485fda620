"""The deletion, row id, index and refs rules beyond their error mutations:
the JSON Schemas of tag and branch files, the warnings and infos, and the
bounds that keep hostile files from being expanded (those of deletion files
are the reference reader's own: tests/reference_impl/test_deletions.py)."""

from __future__ import annotations

import json
import shutil
import sys

import jsonschema
import pyarrow as pa
import pytest

from conformance.describe import load_schema
from conformance.mutations.edit import copy_dataset
from conformance.mutations.topics.deletions import (
    UNREFERENCED_NAME,
    leave_a_deletion_file_no_version_refers_to,
    put_a_file_that_is_no_deletion_file_in_deletions,
)
from conformance.mutations.topics.indices import add_a_delta_segment_of_the_index
from conformance.spec_revisions import NEWEST
from conformance.validator import Severity, validate
from conformance.validator.facts import deletions as deletion_facts
from conformance.validator.facts import row_ids as row_id_facts

lance = pytest.importorskip("lance")


def _findings(root, prefix: str | None = None, *, all_versions: bool = True, spec_revision=NEWEST):
    report = validate(root, all_versions=all_versions, spec_revision=spec_revision)
    return [f for f in report.findings if prefix is None or f.rule.startswith(prefix)]


def _by_severity(findings, severity):
    return sorted({f.rule for f in findings if f.severity is severity})


def _errors(root):
    return _by_severity(_findings(root), Severity.ERROR)


# -- JSON Schemas -----------------------------------------------------------------------


def _validator(name):
    schema = load_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_ref_schemas_are_valid_json_schemas():
    _validator("tag.schema.json")
    _validator("branch.schema.json")


def test_pylance_ref_files_match_the_schemas(base_datasets):
    root = base_datasets["branched"]
    tags = sorted((root / "_refs" / "tags").glob("*.json"))
    branches = sorted((root / "_refs" / "branches").glob("*.json"))
    assert len(tags) == 2 and len(branches) == 2
    for path in tags:
        _validator("tag.schema.json").validate(json.loads(path.read_text()))
    for path in branches:
        _validator("branch.schema.json").validate(json.loads(path.read_text()))


@pytest.mark.parametrize(
    "document",
    [
        {"version": 3, "manifest_size": 812},  # upstream branch_tag.md spelling
        {"version": 3, "manifestSize": 812},  # pylance 0.20
        {
            "branch": "feature/x",
            "version": 1,
            "manifestSize": 812,
            "createdAt": "2026-01-01T00:00:00Z",
            "updatedAt": "2026-01-01T00:00:00Z",
            "metadata": {},
        },  # pylance 14
        {"branch": None, "version": 0, "manifestSize": 0, "something_new": [1, 2]},
    ],
)
def test_the_tag_schema_accepts_both_spellings(document):
    _validator("tag.schema.json").validate(document)


@pytest.mark.parametrize(
    "document",
    [
        {"manifestSize": 812},
        {"version": 3},
        {"version": "3", "manifestSize": 812},
        {"version": -1, "manifestSize": 812},
        {"version": 3, "manifestSize": 812, "branch": 7},
        {"version": 3.5, "manifestSize": 812},
        {"version": 3, "manifestSize": 812, "metadata": {"k": 1}},
        [3, 812],
    ],
)
def test_the_tag_schema_refuses_malformed_tags(document):
    assert list(_validator("tag.schema.json").iter_errors(document))


@pytest.mark.parametrize(
    "document",
    [
        {"parent_branch": None, "parent_version": 2, "create_at": 1700000000, "manifest_size": 500},
        {
            "parentBranch": "dev",
            "parentVersion": 2,
            "createAt": 1700000000,
            "manifestSize": 500,
            "identifier": {"version_mapping": [[2, "418797f6a78c4d5eafc8cce35889d1fe"]]},
            "metadata": {},
        },
        {"parentVersion": 2, "create_at": 1700000000, "manifestSize": 500},
    ],
)
def test_the_branch_schema_accepts_both_spellings(document):
    _validator("branch.schema.json").validate(document)


@pytest.mark.parametrize(
    "document",
    [
        {"parentVersion": 2, "createAt": 1700000000},
        {"parentVersion": 2, "manifestSize": 500},
        {"createAt": 1700000000, "manifestSize": 500},
        {"parentVersion": 2, "createAt": "2026-01-01", "manifestSize": 500},
        {"parentVersion": 2, "createAt": 1700000000, "manifestSize": 500, "parentBranch": 3},
        {"parentVersion": 2, "createAt": 1700000000, "manifestSize": 500, "identifier": {"version_mapping": [[2]]}},
    ],
)
def test_the_branch_schema_refuses_malformed_branches(document):
    assert list(_validator("branch.schema.json").iter_errors(document))


# -- refs warnings -----------------------------------------------------------------------


def test_stray_and_misnamed_ref_files_are_warnings(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["branched"], tmp_path / "ds")
    (root / "_refs" / "tags" / "README").write_text("notes")
    shutil.copy(root / "_refs" / "tags" / "v1.json", root / "_refs" / "tags" / "v%32.json")  # encodes "v2"
    (root / "_refs" / "branches" / "nested").mkdir()
    findings = [f for f in _findings(root) if f.rule == "refs/file-location"]
    assert {f.location for f in findings} == {"_refs/tags/README", "_refs/tags/v%32.json", "_refs/branches/nested"}
    assert not _errors(root)


def test_a_branch_directory_without_branch_file_is_a_warning(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["branched"], tmp_path / "ds")
    shutil.copytree(root / "tree" / "empty", root / "tree" / "gone" / "deep")
    findings = _findings(root)
    assert [f.location for f in findings if f.rule == "refs/orphan-branch-directory"] == ["tree/gone/deep"]
    assert not _by_severity(findings, Severity.ERROR)


def test_a_branch_directory_validated_as_a_dataset_names_its_branch(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["branched"], tmp_path / "ds")
    findings = _findings(root / "tree" / "feature" / "x", "refs/manifest-branch-field")
    assert not findings


# -- deletion infos and bounds -------------------------------------------------------------


def test_pylance_uint32_columns_are_an_info(base_datasets):
    findings = _findings(base_datasets["plain"], "deletion/")
    assert {f.rule for f in findings} == {"deletion/arrow-uint32"}
    assert all(f.severity is Severity.INFO for f in findings)


def test_unreferenced_deletion_files_are_an_info(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    leave_a_deletion_file_no_version_refers_to(root)
    put_a_file_that_is_no_deletion_file_in_deletions(root)
    findings = [f for f in _findings(root) if f.rule == "deletion/unreferenced-files"]
    assert len(findings) == 2 and all(f.severity is Severity.INFO for f in findings)
    assert UNREFERENCED_NAME in " ".join(f.message for f in findings)
    assert not _errors(root)


def test_files_beyond_the_size_limit_are_reported_not_read(base_datasets, tmp_path, monkeypatch):
    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    monkeypatch.setattr(deletion_facts, "MAX_FILE_BYTES", 16)
    findings = _findings(root, "deletion/")
    assert {f.rule for f in findings} == {"deletion/unchecked"}


# -- row id warnings and infos ---------------------------------------------------------------


def test_ids_kept_through_an_update_are_an_info_before_the_newest_revision(pylance_datasets):
    """Under upstream-2026-11, whose row id page is the seeds' (an updated row
    gets a new id and the version as created-at), pylance's kept ids and
    creation versions are infos; the newest revision requires both, and
    says nothing."""
    assert _findings(pylance_datasets["stable_row_ids"], "row-id/") == []
    findings = _findings(pylance_datasets["stable_row_ids"], "row-id/", spec_revision="upstream-2026-11")
    assert {(f.rule, f.severity) for f in findings} == {
        ("row-id/kept-on-update", Severity.INFO),
        ("row-id/new-row-versions", Severity.INFO),  # the updated row also keeps its created-at version
    }
    assert all("5" in f.message for f in findings if f.rule == "row-id/kept-on-update")
    (kept_creation,) = [f for f in findings if f.rule == "row-id/new-row-versions"]
    assert kept_creation.version == 4 and "created-at" in kept_creation.message


def test_fragments_beyond_the_row_limit_are_reported_not_expanded(base_datasets, monkeypatch):
    monkeypatch.setattr(row_id_facts, "MAX_ROWS", 10)
    findings = _findings(base_datasets["stable_row_ids"], "row-id/")
    assert {f.rule for f in findings} == {"row-id/unchecked"}


# -- index warnings and infos -------------------------------------------------------------------


def test_delta_indices_sharing_a_name_are_an_info(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    add_a_delta_segment_of_the_index(root)
    findings = _findings(root, "index/", all_versions=False)
    assert [(f.rule, f.severity) for f in findings] == [("index/delta-segments", Severity.INFO)]


def test_pylance_delta_segments_cover_disjoint_fragments(tmp_path):
    """Segments pylance writes for one index (a delta from optimize_indices,
    then both remapped by a compaction) cover disjoint fragments, so
    index/segments-disjoint stays silent on every version."""
    path = tmp_path / "ds"
    lance.write_dataset(pa.table({"id": pa.array(range(40), pa.int64())}), path, max_rows_per_file=20)
    lance.dataset(path).create_scalar_index("id", "BTREE", name="id_btree")
    lance.write_dataset(pa.table({"id": pa.array(range(40, 60), pa.int64())}), path, mode="append")
    lance.dataset(path).optimize.optimize_indices(num_indices_to_merge=0)
    lance.write_dataset(pa.table({"id": pa.array(range(60, 70), pa.int64())}), path, mode="append")
    dataset = lance.dataset(path)
    dataset.delete("id < 5")
    dataset.optimize.compact_files(target_rows_per_fragment=1000)
    (index,) = lance.dataset(path).describe_indices()
    assert len(index.segments) == 2  # the dataset does have segments to compare
    findings = _findings(path, "index/")
    assert not [f for f in findings if f.severity is not Severity.INFO], findings
    assert {f.rule for f in findings} == {"index/delta-segments", "index/fragment-bitmap-from-dataset-version"}


_DELTA_VECTOR_INDEX = """
import sys, lance, pyarrow as pa, pyarrow.compute as pc
def rows(n):
    return pa.table({"vector": pa.FixedSizeListArray.from_arrays(pc.random(32 * n).cast(pa.float32()), 32)})
lance.write_dataset(rows(512), sys.argv[1])
lance.dataset(sys.argv[1]).create_index("vector", index_type="IVF_PQ", num_partitions=1, num_sub_vectors=2)
lance.write_dataset(rows(512), sys.argv[1], mode="append")
lance.dataset(sys.argv[1]).optimize.optimize_indices(num_indices_to_merge=0)
"""


@pytest.mark.old_pylance
def test_an_old_release_repeats_covered_fragments_in_a_delta_segment(tmp_path):
    """pylance 0.20 gives a delta segment of a vector index the earlier
    segment's fragments as well as its own (releases before 0.23.0 do,
    docs/spec-discrepancies.md): index/segments-disjoint reports it as a
    warning naming that known writer defect and its releases; the same steps
    under pylance 14 draw nothing from it."""
    import os
    import subprocess

    from conformance.peers.old_pylance import PeerUnavailableError, ensure_venv
    from tests.conftest import OLD_PYLANCE_VERSION

    try:
        python = ensure_venv(OLD_PYLANCE_VERSION)
    except PeerUnavailableError as exc:
        pytest.fail(f"pylance {OLD_PYLANCE_VERSION} cannot be installed: {exc}")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"LANCE_LOG": "error"}
    for writer, overlaps in ((str(python), True), (sys.executable, False)):
        path = tmp_path / ("old" if overlaps else "current")
        subprocess.run(
            [writer, "-c", _DELTA_VECTOR_INDEX, str(path)],
            check=True,
            env=env,
            cwd=tmp_path,
            capture_output=True,
            timeout=600,
        )
        findings = _findings(path, "index/")
        assert "index/delta-segments" in {f.rule for f in findings}  # there are segments to compare
        overlapping = [f for f in findings if f.rule == "index/segments-disjoint"]
        assert bool(overlapping) == overlaps, (writer, overlapping)
        if overlaps:
            (finding,) = overlapping
            assert finding.version == 4 and "both cover fragments 0:" in finding.message
            assert finding.severity is Severity.WARNING
            assert finding.known_defect == "lance-delta-index-segment-repeats-fragments"
            assert "lance releases >= 0.11.1 and < 0.23.0" in finding.message


def test_overlapping_segments_name_both_uuids(base_datasets, tmp_path):
    from conformance.mutations.topics.indices import let_two_segments_of_an_index_cover_one_fragment

    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    let_two_segments_of_an_index_cover_one_fragment(root)
    (finding,) = _findings(root, "index/segments-disjoint", all_versions=False)
    assert finding.severity is Severity.ERROR and "both cover fragments 2:" in finding.message
    # Neither segment holds all of the other's fragments: not the symptom of
    # the old releases' delta segments, whoever wrote it.
    assert finding.symptom is None
    assert finding.location.endswith("index_section.indices[1].fragment_bitmap")


def test_a_remapped_index_bitmap_is_an_info(tmp_path):
    table = pa.table({"id": list(range(100))})
    dataset = lance.write_dataset(table, tmp_path / "ds", max_rows_per_file=20)
    dataset.create_scalar_index("id", "BTREE")
    dataset = lance.dataset(tmp_path / "ds")
    dataset.delete("id % 3 = 0")
    dataset.optimize.compact_files(target_rows_per_fragment=1000)
    findings = _findings(tmp_path / "ds", "index/", all_versions=False)
    assert [(f.rule, f.severity) for f in findings] == [("index/fragment-bitmap-from-dataset-version", Severity.INFO)]


_VECTOR_INDEX = """
import sys, lance, pyarrow as pa, pyarrow.compute as pc
table = pa.table({"vector": pa.FixedSizeListArray.from_arrays(pc.random(32 * 512).cast(pa.float32()), 32)})
lance.write_dataset(table, sys.argv[1])
lance.dataset(sys.argv[1]).create_index("vector", index_type="IVF_PQ", num_partitions=1, num_sub_vectors=2)
"""


@pytest.mark.old_pylance
def test_an_index_kept_across_the_details_package_rename_is_the_same_index(tmp_path):
    """pylance 14 appending to a dataset whose vector index pylance 0.20 built
    keeps the index's uuid but names its details in the newer protobuf
    package: index/uuid-unique must not call that another index, while a
    different details message under one uuid still is (the mutation test)."""
    import os
    import subprocess

    import lance

    from conformance.peers.old_pylance import PeerUnavailableError, ensure_venv
    from tests.conftest import OLD_PYLANCE_VERSION

    try:
        python = ensure_venv(OLD_PYLANCE_VERSION)
    except PeerUnavailableError as exc:
        pytest.fail(f"pylance {OLD_PYLANCE_VERSION} cannot be installed: {exc}")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"LANCE_LOG": "error"}
    path = tmp_path / "ds"
    subprocess.run(
        [str(python), "-c", _VECTOR_INDEX, str(path)],
        check=True,
        env=env,
        cwd=tmp_path,
        capture_output=True,
        timeout=600,
    )
    dataset = lance.dataset(path)
    lance.write_dataset(dataset.to_table().slice(0, 10), path, mode="append")
    from reference_impl.dataset import Dataset

    before, after = (Dataset.open(path, version=v).manifest_file.indices for v in (2, 3))
    assert before[0].uuid == after[0].uuid and before[0].type_url != after[0].type_url  # the rename happened
    assert not _findings(path, "index/uuid-unique")
