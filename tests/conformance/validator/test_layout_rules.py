"""The fragment, data file and base path rules beyond their error mutations:
warnings and infos on crafted datasets, garbage that must not crash them, and
the promise that a data file shared by many versions is read once."""

from __future__ import annotations

import pytest

from conformance.mutations.edit import copy_dataset, edit_manifest, edit_untracked
from conformance.mutations.topics.data_files import (
    PLAIN_NAME,
    UNKNOWN_FIELD_ID,
    give_a_data_file_a_plain_name,
    store_a_field_id_the_schema_lacks,
)
from conformance.validator import Severity, validate
from conformance.validator.engine import INTERNAL_ERROR_RULE
from reference_impl.manifest import BasePath
from reference_impl.transactions import Restore

LAYOUT_RULES = ["fragment", "data-file", "base-path"]


def _findings(root, rule_id: str, **options):
    report = validate(root, all_versions=True, **options)
    return [f for f in report.findings if f.rule == rule_id]


def _errors(root) -> set[str]:
    report = validate(root, all_versions=True, rules=LAYOUT_RULES)
    return {f.rule for f in report.findings if f.severity is Severity.ERROR}


@pytest.fixture
def plain(base_datasets, tmp_path):
    return copy_dataset(base_datasets["plain"], tmp_path / "ds")


@pytest.fixture
def clone(base_datasets, tmp_path):
    return copy_dataset(base_datasets["shallow_clone"], tmp_path / "ds")


# -- fragments ---------------------------------------------------------------------------


def test_a_restore_that_lowers_max_fragment_id_is_an_info(plain):
    """pylance 0.20's Restore takes the restored version's max_fragment_id back."""

    def raise_max(manifest_file):
        manifest_file.manifest.max_fragment_id = 10

    def record_a_restore(manifest_file):
        manifest_file.manifest.transaction_file = ""
        manifest_file.transaction.operation = Restore(version=1)

    edit_manifest(plain, raise_max, version=5)
    edit_manifest(plain, record_a_restore, version=6)
    found = _findings(plain, "fragment/max-id-never-decreases")
    assert [(f.version, f.severity) for f in found] == [(6, Severity.INFO)], found
    assert "Restore" in found[0].message


def test_a_retained_max_fragment_id_after_deleting_everything_is_fine(base_datasets, tmp_path):
    import lance

    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    lance.dataset(root).delete("true")
    assert not _findings(root, "fragment/max-id-without-fragments")


# -- data files --------------------------------------------------------------------------


def test_field_ids_outside_the_schema_are_an_info_that_names_them(plain):
    store_a_field_id_the_schema_lacks(plain)
    found = _findings(plain, "data-file/unknown-field-ids")
    assert [f.severity for f in found] == [Severity.INFO] and str(UNKNOWN_FIELD_ID) in found[0].message
    assert not _errors(plain)


@pytest.mark.requirements("data-file.tombstone-allowed")
def test_a_tombstoned_field_id_is_accepted(plain):
    """Replacing a field id by the -2 tombstone is allowed: no rule reports it."""

    def tombstone(manifest_file):
        manifest_file.manifest.fragments[-1].files[0].fields[-1] = -2

    edit_untracked(plain, tombstone)
    report = validate(plain, all_versions=True)
    assert not [f for f in report.findings if f.severity is not Severity.INFO]
    assert not _findings(plain, "data-file/unknown-field-ids")


def test_names_that_are_not_uuid_based_are_an_info_that_names_them(plain):
    give_a_data_file_a_plain_name(plain)
    found = _findings(plain, "data-file/uuid-based-name")
    assert [f.severity for f in found] == [Severity.INFO] and PLAIN_NAME in found[0].message
    assert not _errors(plain)


def test_a_data_file_read_by_every_version_is_read_once(plain, monkeypatch):
    from conformance.validator.facts import data_files

    calls = []
    real = data_files.inspect_file

    def counting(storage, relpath):
        calls.append(relpath)
        return real(storage, relpath)

    monkeypatch.setattr(data_files, "inspect_file", counting)
    validate(plain, all_versions=True, rules=LAYOUT_RULES)
    assert calls and len(calls) == len(set(calls)), calls


# -- base paths --------------------------------------------------------------------------


def test_a_missing_base_no_file_uses_is_an_info(clone, tmp_path):
    def declare(manifest_file):
        manifest_file.manifest.base_paths.append(BasePath(id=1, path=str(tmp_path / "nowhere")))

    edit_manifest(clone, declare)
    found = _findings(clone, "base-path/exists")
    assert [f.severity for f in found] == [Severity.INFO]


def test_undeclared_bases_of_indices_are_reported(plain):
    def point_elsewhere(manifest_file):
        manifest_file.indices[0].base_id = 5

    edit_manifest(plain, point_elsewhere)
    found = _findings(plain, "base-path/base-id-declared")
    assert found and "indices[0]" in found[0].message


# -- garbage -------------------------------------------------------------------------------


GARBAGE = {
    "huge fragment id": lambda m: setattr(m.fragments[0], "id", (1 << 64) - 1),
    "huge physical rows": lambda m: setattr(m.fragments[0], "physical_rows", (1 << 64) - 1),
    "NUL in a data file path": lambda m: setattr(m.fragments[0].files[0], "path", "a\x00b.lance"),
    "data file path of dots": lambda m: setattr(m.fragments[0].files[0], "path", "../../../../.."),
    "data file path that is a directory": lambda m: setattr(m.fragments[0].files[0], "path", "."),
    "huge file size": lambda m: setattr(m.fragments[0].files[0], "file_size_bytes", (1 << 64) - 1),
    "huge versions": lambda m: (
        setattr(m.fragments[0].files[0], "file_major_version", (1 << 32) - 1),
        setattr(m.fragments[0].files[0], "file_minor_version", (1 << 32) - 1),
    ),
    "extreme ids and indices": lambda m: (
        setattr(m.fragments[0].files[0], "fields", [-(1 << 31), (1 << 31) - 1, -2, -1]),
        setattr(m.fragments[0].files[0], "column_indices", [(1 << 31) - 1, -(1 << 31), -1, -1]),
    ),
    "huge base id": lambda m: setattr(m.fragments[0].files[0], "base_id", (1 << 32) - 1),
    "NUL in a base path": lambda m: (
        m.base_paths.append(BasePath(id=0, path="/tmp/a\x00b")),
        setattr(m.fragments[0].files[0], "base_id", 0),
    ),
    "remote base path": lambda m: (
        m.base_paths.append(BasePath(id=0, path="s3://bucket/table")),
        setattr(m.fragments[0].files[0], "base_id", 0),
    ),
    "empty base path": lambda m: (
        m.base_paths.append(BasePath(id=0, path="", is_dataset_root=False)),
        setattr(m.fragments[0].files[0], "base_id", 0),
    ),
    "no data format": lambda m: setattr(m, "data_format", None),
}


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
def test_garbage_in_the_manifest_never_crashes_the_layout_rules(plain, garbage):
    edit_manifest(plain, lambda manifest_file: GARBAGE[garbage](manifest_file.manifest))
    report = validate(plain, all_versions=True, rules=LAYOUT_RULES)
    crashed = [f.message for f in report.findings if f.rule == INTERNAL_ERROR_RULE]
    assert not crashed, crashed


@pytest.mark.parametrize("cut", [1, 8, 17, 40, 200])
def test_a_garbled_legacy_metadata_block_never_crashes(base_datasets, tmp_path, cut):
    root = copy_dataset(base_datasets["legacy"], tmp_path / "ds")
    for path in sorted((root / "data").glob("*.lance")):
        data = bytearray(path.read_bytes())
        start = max(0, len(data) - 16 - cut)
        data[start : len(data) - 16] = b"\xff" * (len(data) - 16 - start)
        path.write_bytes(bytes(data))
    report = validate(root, all_versions=True, rules=LAYOUT_RULES)
    crashed = [f.message for f in report.findings if f.rule == INTERNAL_ERROR_RULE]
    assert not crashed, crashed
