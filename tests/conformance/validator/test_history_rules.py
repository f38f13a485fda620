"""The rules added to close the catalog's "no rule yet" gaps, beyond their
error mutations: staged manifest names, fragment and row id assignment across
versions, clones, non-nullable fields, MemWAL region snapshots and the
size-based warnings. Real pylance datasets show what must stay clean; edited
ones show the warnings and infos, and that garbage never crashes a rule."""

from __future__ import annotations

import datetime
import os
import uuid

import pyarrow as pa
import pytest

from conformance.cli import main
from conformance.mutations.edit import copy_dataset, edit_manifest, manifest_relpath
from conformance.mutations.topics.core import commit_the_latest_version_two_numbers_ahead
from conformance.mutations.topics.indices import compact_with_deferred_remap
from conformance.mutations.topics.mem_wal import (
    SNAPSHOT_SCHEMA,
    edit_mem_wal_details,
    region_row,
    snapshot_bytes,
    store_snapshots,
)
from conformance.mutations.topics.schema import add_fields
from conformance.validator import Severity, validate
from conformance.validator.engine import INTERNAL_ERROR_RULE
from reference_impl.dataset import Dataset
from reference_impl.fragments import ExternalFile
from reference_impl.schema import Field

lance = pytest.importorskip("lance")


def _findings(root, prefix: str | None = None):
    report = validate(root, all_versions=True)
    return [f for f in report.findings if prefix is None or f.rule.startswith(prefix)]


def _problems(root) -> list[str]:
    return [
        f"v{f.version} {f.rule}: {f.message}"
        for f in _findings(root)
        if f.severity in (Severity.ERROR, Severity.WARNING)
    ]


def _by_rule(findings) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for f in findings:
        found.setdefault(f.rule, set()).add(f.severity.value)
    return found


@pytest.fixture
def plain(base_datasets, tmp_path):
    return copy_dataset(base_datasets["plain"], tmp_path / "plain")


@pytest.fixture
def nested(base_datasets, tmp_path):
    return copy_dataset(base_datasets["nested_pk"], tmp_path / "nested")


def _table(start: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64()), "v": [i / 2 for i in range(count)]})


# -- staged manifests -------------------------------------------------------------------


@pytest.mark.parametrize(
    "suffix, rule",
    [
        ("3f0e8a52-94c1-4d7b-a1e6-0c2b9d5f7e18", None),
        ("3f0e8a5294c14d7ba1e60c2b9d5f7e18", None),
        ("3F0E8A52-94C1-4D7B-A1E6-0C2B9D5F7E18", None),
        ("0123456789abcdef-0123456789abcdef", "external-store/staged-name"),
        ("-" * 36, "external-store/staged-name"),
        ("12345678-1234-1234-1234-1234567890a", "external-store/staged-name"),
        ("backup", "naming/unrecognized-entries"),
        ("3f0e8a52-94c1-4d7b-a1e6-0c2b9d5f7e18x", "naming/unrecognized-entries"),
    ],
)
def test_staged_names_are_judged_by_one_rule(plain, suffix, rule):
    os.link(plain / manifest_relpath(plain), plain / "_versions" / f"8.manifest-{suffix}")
    fired = {f.rule for f in _findings(plain) if f.severity is not Severity.INFO}
    assert fired == ({rule} if rule else set()), fired


# -- version numbers ---------------------------------------------------------------------


def _tagged_history_cleaned_up(root) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """Versions 1 to 5 written by pylance with version 2 tagged, then a
    cleanup of everything older than now that keeps tagged versions: the
    (rule, severity) pairs found on every version before and after."""
    lance.write_dataset(_table(0, 3), root)
    lance.write_dataset(_table(3, 3), root, mode="append")
    lance.dataset(root).tags.create("kept", 2)
    for start in (6, 9, 12):
        lance.write_dataset(_table(start, 3), root, mode="append")
    before = {(f.rule, f.severity.value) for f in _findings(root)}
    lance.dataset(root).cleanup_old_versions(older_than=datetime.timedelta(0), error_if_tagged_old_versions=False)
    assert sorted(Dataset.open(root).versions()) == [2, 5]
    after = {(f.rule, f.severity.value) for f in _findings(root)}
    return before, after


@pytest.mark.requirements("history.no-skipped-versions")
def test_a_cleanup_of_a_tagged_history_adds_no_finding(tmp_path):
    """Versions 3 and 4 are gone, but version 5's transaction read version 4:
    a cleanup removed them, nothing skipped a number (the requirement's note).
    The findings after the cleanup are the ones pylance's versions had before
    it (infos about pylance's own choices), and none is a warning."""
    root = tmp_path / "tagged"
    before, after = _tagged_history_cleaned_up(root)
    assert after <= before, after - before
    assert not any(rule.startswith("history/") for rule, _ in after), after
    assert not {severity for _, severity in after} & {"error", "warning"}, after
    assert main(["validate", str(root), "--all-versions", "--fail-on", "warning"]) == 0
    assert main(["validate", str(root), "--fail-on", "warning"]) == 0


@pytest.mark.requirements("history.no-skipped-versions")
def test_a_skipped_commit_after_a_cleanup_still_warns(tmp_path):
    """After the cleanup gap, two more commits, the last renumbered two
    ahead: its transaction read the version right before the gap, so the
    gap it leaves is a skip; the cleanup gap before it stays unreported."""
    root = tmp_path / "tagged"
    _tagged_history_cleaned_up(root)
    for start in (15, 18):
        lance.write_dataset(_table(start, 3), root, mode="append")
    commit_the_latest_version_two_numbers_ahead(root)
    warned = [f.message for f in _findings(root, "history/gapless")]
    assert len(warned) == 1, warned
    assert warned[0].startswith("versions 7, 8 between 2 and 9 have no manifest (2 in all;"), warned


@pytest.mark.requirements("history.versions-increase")
def test_each_commit_is_numbered_above_every_earlier_version(tmp_path):
    """The reference writer and pylance, taking turns on one dataset: every
    commit gets a version above all the versions committed before it."""
    import pyarrow.compute as pc

    from reference_impl.naming import list_versions
    from reference_impl.storage import LocalStorage

    path = tmp_path / "turns"
    commits = [
        lambda: Dataset.create(path, _table(0, 10)),
        lambda: lance.write_dataset(_table(10, 5), path, mode="append"),
        lambda: Dataset.open(path).append(_table(15, 5)),
        lambda: lance.dataset(path).delete("id < 3"),
        lambda: Dataset.open(path).delete(pc.field("id") == 12),
        lambda: lance.dataset(path).update_config({"turns": "done"}),
    ]
    earlier: set[int] = set()
    for commit in commits:
        commit()
        versions = set(list_versions(LocalStorage(path)).manifests())
        (new,) = versions - earlier
        assert new > max(earlier, default=0), (new, sorted(earlier))
        earlier = versions
    assert not _problems(path)


# -- fragment ids and row ids across versions --------------------------------------------


@pytest.mark.old_pylance
def test_an_overwrite_that_restarts_fragment_ids_is_an_info(old_pylance_datasets):
    findings = _findings(old_pylance_datasets["overwrite"], "fragment/new-ids-above-max")
    assert [(f.version, f.severity) for f in findings] == [(2, Severity.INFO)]
    assert "as lance 0.20.0 does" in findings[0].message  # the writer, from writer_version


def test_merge_insert_assigns_new_ids_in_turn(tmp_path):
    """pylance's upsert keeps the ids of updated rows and numbers inserted ones
    from next_row_id: clean, with the kept creation versions as infos under
    upstream-2026-11 and nothing to say under the newest revision, which
    keeps them too."""
    path = tmp_path / "upsert"
    lance.write_dataset(_table(0, 10), path, enable_stable_row_ids=True, max_rows_per_file=4)
    lance.write_dataset(_table(10, 5), path, mode="append")
    lance.dataset(path).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        _table(12, 6)
    )
    assert not _problems(path)
    assert _by_rule(_findings(path, "row-id/")) == {}
    report = validate(path, all_versions=True, spec_revision="upstream-2026-11")
    infos = _by_rule([f for f in report.findings if f.rule.startswith("row-id/")])
    assert infos.get("row-id/new-row-versions") == {"info"}


def test_a_restore_may_bring_back_ids_compaction_dropped(tmp_path):
    """Version 3's compaction drops the deleted rows; restoring version 1 brings
    them back under their old ids, which is no reuse."""
    path = tmp_path / "restored"
    lance.write_dataset(_table(0, 20), path, enable_stable_row_ids=True, max_rows_per_file=5)
    lance.dataset(path).delete("id < 7")
    lance.dataset(path).optimize.compact_files(target_rows_per_fragment=100)
    lance.dataset(path, version=1).restore()
    lance.write_dataset(_table(20, 3), path, mode="append")
    assert not _problems(path)


def test_an_append_reusing_the_id_of_a_deleted_row_is_caught(tmp_path):
    """The id of a deleted row is retired: an Append that hands it out again
    breaks row-id/never-reused."""
    path = tmp_path / "retired"
    lance.write_dataset(_table(0, 10), path, enable_stable_row_ids=True)
    lance.dataset(path).delete("id = 3")
    lance.dataset(path).optimize.compact_files(target_rows_per_fragment=100)
    lance.write_dataset(_table(10, 2), path, mode="append")
    assert not _problems(path)
    from reference_impl.row_ids import encode_row_id_sequence

    def edit(manifest_file):
        fragment = manifest_file.manifest.fragments[-1]
        fragment.row_id_sequence = encode_row_id_sequence([3, 11])

    edit_manifest(path, edit)
    errors = {f.rule for f in _findings(path) if f.severity is Severity.ERROR}
    # The id 10 is assigned to no row either.
    assert errors == {"row-id/never-reused", "row-id/sequential-assignment"}, errors


# -- clones ---------------------------------------------------------------------------


def test_pylance_deep_clones_pass(tmp_path):
    source = lance.write_dataset(_table(0, 30), (tmp_path / "source").absolute(), max_rows_per_file=10)
    source.tags.create("t", 1)
    source.deep_clone(str((tmp_path / "deep").absolute()), "t")
    lance.write_dataset(_table(30, 5), tmp_path / "deep", mode="append")
    assert not _problems(tmp_path / "deep")
    assert not _findings(tmp_path / "deep", "transaction/clone")


def test_a_shallow_clone_that_copied_files_is_caught(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["shallow_clone"], tmp_path / "clone")

    def edit(manifest_file):
        for fragment in manifest_file.manifest.fragments:
            fragment.files[0].base_id = None

    edit_manifest(root, edit, version=1)
    messages = [f.message for f in _findings(root, "transaction/clone")]
    assert len(messages) == 1 and "own directory" in messages[0], messages


# -- fields that are not nullable ---------------------------------------------------------


def test_2_0_to_2_2_files_are_read_and_legacy_files_reported_unchecked(base_datasets, tmp_path):
    """pylance's 2.0, 2.1 and 2.2 files (``nested_pk``) are read for nulls and
    found clean; legacy files are counted as unchecked, an info."""
    for name in ("v2_0", "v2_1", "nested_pk"):
        assert not _findings(base_datasets[name], "schema/non-nullable"), name
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    lance.write_dataset(pa.table({"id": [1, 2]}, schema=schema), tmp_path / "legacy", data_storage_version="legacy")
    unchecked = _findings(tmp_path / "legacy", "schema/non-nullable")
    assert unchecked and {f.severity for f in unchecked} == {Severity.INFO}
    assert all("legacy files" in f.message for f in unchecked)


def test_a_missing_child_of_a_missing_nullable_parent_is_fine(nested):
    add_fields(
        nested,
        Field(id=7, name="optional", logical_type="struct"),
        Field(id=8, name="required_inside", logical_type="int32", parent_id=7, nullable=False),
    )
    assert not _findings(nested, "schema/non-nullable-stored")


def test_a_missing_child_of_a_stored_parent_is_caught(nested):
    # "meta" (id 1) is stored in every fragment; a new non-nullable member is not.
    add_fields(nested, Field(id=7, name="late", logical_type="int32", parent_id=1, nullable=False), after="note")
    messages = [f.message for f in _findings(nested, "schema/non-nullable-stored")]
    assert messages and all("'late'" in m for m in messages), messages


# -- MemWAL region snapshots ----------------------------------------------------------------


@pytest.mark.requirements("mem-wal.inline-snapshots-when-few")
def test_a_well_formed_snapshot_passes(nested):
    store_snapshots(nested, region_row(), region_row(region=uuid.uuid4(), spec_id=0, current=1, flushed=()))
    assert not [p for p in _problems(nested)], _problems(nested)


@pytest.mark.parametrize("version", ["2.0", None], ids=["2.0", "default"])
def test_a_snapshot_pylance_writes_is_read(nested, tmp_path, version):
    """A snapshot file pylance's file writer writes, as 2.0 and at its
    default (2.2), is read and checked."""
    from lance.file import LanceFileWriter

    path = str(tmp_path / "snapshot.lance")
    with LanceFileWriter(path, SNAPSHOT_SCHEMA, version=version) as writer:
        writer.write_batch(pa.Table.from_pylist([region_row(current=1)], schema=SNAPSHOT_SCHEMA))
    data = open(path, "rb").read()
    edit_mem_wal_details(nested, lambda d: setattr(d, "inline_snapshots", data))
    found = _by_rule(_findings(nested, "mem-wal/"))
    # current_generation 1 with flushed generations 1 and 2: read, and caught.
    assert found == {"mem-wal/flushed-below-current-generation": {"error"}}, found


def test_a_snapshot_in_a_2_1_file_is_checked_and_a_newer_version_is_an_info(nested, tmp_path):
    """The reference reader decodes 2.1 files: a valid 2.1 snapshot passes;
    the same file claiming version 2.9 in its footer is not checked (info)."""
    from lance.file import LanceFileWriter

    path = str(tmp_path / "snapshot.lance")
    with LanceFileWriter(path, SNAPSHOT_SCHEMA, version="2.1") as writer:
        writer.write_batch(pa.Table.from_pylist([region_row()], schema=SNAPSHOT_SCHEMA))
    data = open(path, "rb").read()
    edit_mem_wal_details(nested, lambda d: setattr(d, "inline_snapshots", data))
    assert _findings(nested, "mem-wal/inline-snapshot") == []
    # The footer ends with u16 major, u16 minor, "LANC".
    newer = data[:-6] + (9).to_bytes(2, "little") + data[-4:]
    edit_mem_wal_details(nested, lambda d: setattr(d, "inline_snapshots", newer))
    found = _findings(nested, "mem-wal/inline-snapshot")
    assert [f.severity for f in found] == [Severity.INFO] and "not checked" in found[0].message


@pytest.mark.parametrize(
    "data",
    [
        b"LANC",
        b"\x00" * 40 + b"\x00\x00\x03\x00LANC",
        bytes(range(256)) * 2 + b"\x00\x00\x03\x00LANC",
        bytes(range(255, -1, -1)) * 2 + b"\x02\x00\x01\x00LANC",
        snapshot_bytes(region_row())[:-200] + snapshot_bytes(region_row())[-40:],
        snapshot_bytes(region_row())[:60] + snapshot_bytes(region_row())[-60:],
    ],
)
def test_hostile_snapshots_never_crash(nested, data):
    edit_mem_wal_details(nested, lambda d: setattr(d, "inline_snapshots", data))
    rules = {f.rule for f in _findings(nested)}
    assert INTERNAL_ERROR_RULE not in rules


def test_a_snapshot_with_odd_columns_is_read_for_what_it_has(nested):
    from reference_impl.file_format import write_v2_0
    from reference_impl.logical_types import schema_from_arrow

    schema = pa.schema([pa.field("region_id", pa.string()), pa.field("current_generation", pa.int8())])
    table = pa.Table.from_pylist([{"region_id": "not bytes", "current_generation": -1}], schema=schema)
    data = write_v2_0(table, schema_from_arrow(schema).fields).data
    edit_mem_wal_details(nested, lambda d: setattr(d, "inline_snapshots", data))
    assert not _problems(nested)


# -- inline or external: the 200 KB threshold ----------------------------------------------


def test_row_id_sequences_kept_in_the_wrong_place_are_warnings(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["stable_row_ids"], tmp_path / "ds")
    (root / "_row_ids").mkdir()
    (root / "_row_ids" / "big.bin").write_bytes(b"\x00" * (300 << 10))

    def edit(manifest_file):
        fragments = manifest_file.manifest.fragments
        fragments[0].created_at_version_sequence = b"\x0a" * (210 << 10)
        fragments[1].last_updated_at_version_sequence = ExternalFile("_row_ids/big.bin", 0, 300 << 10)

    edit_manifest(root, edit)
    warned = [f.message for f in _findings(root, "row-id/inline-when-small")]
    assert len(warned) == 1 and "inline" in warned[0] and "fragment 0" in warned[0], warned


def test_a_pylance_fragment_reuse_index_is_clean(plain):
    """The fragment-reuse index pylance leaves when it defers the index
    remapping of a compaction: small content, inline (the mutations of
    conformance.mutations.topics.indices move or grow it)."""
    compact_with_deferred_remap(plain)
    assert "__lance_frag_reuse" in {i.name for i in Dataset.open(plain).indices}
    assert not _problems(plain)
