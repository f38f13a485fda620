"""Known writer defects (conformance/data/writer_defects.json): the table is
consistent with the rules and the catalog, and a finding a defect of the
dataset's writer explains becomes a warning naming it, while the same finding
from any other writer stays an error (requirement
writer-version.identifies-writer)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.describe import schema_validator
from conformance.mutations.edit import copy_dataset, edit_manifest, edit_untracked, transactions
from conformance.peers.old_pylance import PINNED_REQUIREMENTS
from conformance.requirements import load_requirements
from conformance.validator import Severity, validate
from conformance.validator.rules.data_files import LEGACY_SIZE_UNDERSTATED, TRAILER_NUMBER_RECORDED
from conformance.validator.rules.transactions import RECORDS_DROPPED_COLUMN_FILES, RESTORES_DROPPED_COLUMN_FILES
from conformance.validator.ruleset import rules_by_id
from conformance.validator.writer_defects import known_defects, release_key
from reference_impl.manifest import WriterVersion

pytestmark = pytest.mark.requirements("writer-version.identifies-writer")


def _defect(rule: str, symptom: str):
    (found,) = [d for d in known_defects() if any((s.rule, s.symptom) == (rule, symptom) for s in d.symptoms)]
    return found


SIZE_DEFECT = _defect("data-file/size", LEGACY_SIZE_UNDERSTATED)
RECORD_DEFECT = _defect("data-file/version-matches-file", TRAILER_NUMBER_RECORDED)


def _before(release: str) -> str:
    """A release number just below ``release`` (its own patch line's 0 minus one)."""
    major, minor, patch = release_key(release)
    if patch:
        return f"{major}.{minor}.{patch - 1}"
    return f"{major}.{minor - 1}.99" if minor else f"{major - 1}.99.99"


def test_the_table_names_rules_symptoms_requirements_and_releases_that_exist():
    rules = rules_by_id()
    catalog = load_requirements()
    for defect in known_defects():
        assert defect.requirement in catalog, defect.id
        for symptom in defect.symptoms:
            assert symptom.symptom in rules[symptom.rule].symptoms, (defect.id, symptom)
            assert defect.requirement in rules[symptom.rule].requirements, (defect.id, symptom.rule)
        if defect.first_fixed is not None:
            assert release_key(defect.first_affected) < release_key(defect.first_fixed), defect.id
        # Every release the range was measured with is one the peers install.
        assert set(defect.measured_with) <= set(PINNED_REQUIREMENTS), defect.id
        assert defect.first_affected in defect.measured_with and (
            defect.first_fixed is None or defect.first_fixed in defect.measured_with
        ), defect.id
    assert len({d.id for d in known_defects()}) == len(known_defects())


def _misstate_the_size(root, library: str, release: str, by: int = -1) -> None:
    def edit(manifest_file):
        manifest_file.manifest.writer_version = WriterVersion(library, release)
        manifest_file.manifest.fragments[0].files[0].file_size_bytes += by

    edit_untracked(root, edit)


def _record_as_trailer_number(root, release: str) -> None:
    def edit(manifest_file):
        manifest_file.manifest.writer_version = WriterVersion("lance", release)
        for fragment in manifest_file.manifest.fragments:
            for data_file in fragment.files:
                data_file.file_major_version, data_file.file_minor_version = 0, 3

    edit_untracked(root, edit)


def _latest(root, rule_id):
    report = validate(root)
    schema_validator("validation-report.schema.json").validate(report.to_json())
    return [f for f in report.findings if f.rule == rule_id], report


@pytest.mark.parametrize(
    "release, explained",
    [
        (SIZE_DEFECT.first_affected, True),
        (_before(SIZE_DEFECT.first_fixed) if SIZE_DEFECT.first_fixed else "99.0.0", True),
        (_before(SIZE_DEFECT.first_affected), False),
    ]
    + ([(SIZE_DEFECT.first_fixed, False)] if SIZE_DEFECT.first_fixed else []),
)
def test_a_misstated_legacy_size_is_a_warning_only_from_the_releases_that_write_it(
    base_datasets, tmp_path, release, explained
):
    root = copy_dataset(base_datasets["legacy"], tmp_path / "ds")
    _misstate_the_size(root, SIZE_DEFECT.library, release)
    (finding,), report = _latest(root, "data-file/size")
    if explained:
        assert finding.severity is Severity.WARNING
        assert finding.known_defect == SIZE_DEFECT.id
        assert SIZE_DEFECT.id in finding.message and SIZE_DEFECT.releases in finding.message
        assert report.to_json()["findings"][report.findings.index(finding)]["known_defect"] == SIZE_DEFECT.id
    else:
        assert finding.severity is Severity.ERROR and finding.known_defect is None
        assert "known writer defect" not in finding.message


def test_another_library_with_the_same_release_number_is_not_excused(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["legacy"], tmp_path / "ds")
    _misstate_the_size(root, "not-lance", SIZE_DEFECT.first_affected)
    (finding,), _ = _latest(root, "data-file/size")
    assert finding.severity is Severity.ERROR


def test_a_legacy_size_recorded_too_large_is_an_error_even_from_an_affected_release(base_datasets, tmp_path):
    """The affected releases record too small a size; too large is another defect."""
    root = copy_dataset(base_datasets["legacy"], tmp_path / "ds")
    _misstate_the_size(root, SIZE_DEFECT.library, SIZE_DEFECT.first_affected, by=+1)
    (finding,), _ = _latest(root, "data-file/size")
    assert finding.severity is Severity.ERROR and finding.known_defect is None


def test_a_misstated_size_of_a_2_0_file_is_an_error_even_from_an_affected_release(base_datasets, tmp_path):
    """The defect is about legacy files; a 2.0 file's misstated size has no excuse."""
    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    _misstate_the_size(root, SIZE_DEFECT.library, SIZE_DEFECT.first_affected)
    (finding,), _ = _latest(root, "data-file/size")
    assert finding.severity is Severity.ERROR and finding.known_defect is None


@pytest.mark.parametrize("release", [RECORD_DEFECT.first_affected, RECORD_DEFECT.first_fixed])
def test_a_2_0_file_recorded_as_0_3_is_one_honest_finding(base_datasets, tmp_path, release):
    """A 2.0 file recorded with its trailer number is a 2.0 file: not legacy,
    and of the same version as data_format says; the one finding says what
    the record holds and what it should hold, and is a warning exactly when
    the writer is a release known to record it so."""
    root = copy_dataset(base_datasets["v2_0"], tmp_path / "ds")
    _record_as_trailer_number(root, release)
    report = validate(root)
    problems = [f for f in report.findings if f.severity is not Severity.INFO]
    assert {f.rule for f in problems} == {"data-file/version-matches-file"}, [f.message for f in problems]
    for finding in problems:
        assert "recorded as version 0.3, the number in its trailer" in finding.message
        assert "but its trailer says 0.3" not in finding.message
        assert finding.symptom == TRAILER_NUMBER_RECORDED
        if release == RECORD_DEFECT.first_affected:
            assert finding.severity is Severity.WARNING and finding.known_defect == RECORD_DEFECT.id
            assert RECORD_DEFECT.releases in finding.message
        else:
            assert finding.severity is Severity.ERROR and finding.known_defect is None


# -- An Update rebased over a Project records the dropped column's data file


def _update_rebased_over_a_project(tmp_path):
    """pylance drops a column, and a second pylance handle opened at the same
    version updates one row (REWRITE_ROWS): the Update rebases over the
    Project (conflict matrix cell project/update:any)."""
    from conformance.conflict_matrix.cells import Template, build_template

    lance = pytest.importorskip("lance")
    uri = tmp_path / "table"
    read = build_template(Template.PLAIN, uri)
    first, second = lance.dataset(uri, version=read), lance.dataset(uri, version=read)
    first.drop_columns(["extra"])
    second.update({"value": "-1"}, where="id = 0")
    return uri


STALE_RECORD_DEFECT = _defect("transaction/update", RECORDS_DROPPED_COLUMN_FILES)


def test_an_update_rebased_over_a_project_is_a_warning_naming_the_defect(tmp_path):
    uri = _update_rebased_over_a_project(tmp_path)
    report = validate(uri)
    assert not [f for f in report.findings if f.severity is Severity.ERROR], report.findings
    (finding,) = [f for f in report.findings if f.rule == "transaction/update"]
    assert finding.severity is Severity.WARNING and finding.known_defect == STALE_RECORD_DEFECT.id
    assert "dropped" in finding.message and STALE_RECORD_DEFECT.releases in finding.message


@pytest.mark.parametrize(
    "library, release",
    [("lance-conformance", "0.1.0"), ("lance", _before(STALE_RECORD_DEFECT.first_affected))],
)
def test_the_same_stale_record_from_another_writer_is_an_error(tmp_path, library, release):
    uri = _update_rebased_over_a_project(tmp_path)

    def edit(manifest_file):
        manifest_file.manifest.writer_version = WriterVersion(library, release)

    edit_manifest(uri, edit)  # the transaction stays
    (finding,) = [f for f in validate(uri).findings if f.rule == "transaction/update"]
    assert finding.severity is Severity.ERROR and finding.known_defect is None


RESTORED_FILE_DEFECT = _defect("transaction/update", RESTORES_DROPPED_COLUMN_FILES)


@pytest.mark.parametrize(
    "library, release, explained",
    [
        ("lance", RESTORED_FILE_DEFECT.first_affected, True),
        ("lance", _before(RESTORED_FILE_DEFECT.first_fixed), True),
        ("lance", RESTORED_FILE_DEFECT.first_fixed, False),
        ("lance-conformance", "0.1.0", False),
    ],
)
def test_an_update_putting_the_dropped_columns_file_back_is_excused_only_for_the_releases_that_do(
    tmp_path, library, release, explained
):
    """What releases before 13.0.0 commit for the same race: the manifest
    holds the fragment as the Update recorded it, the dropped column's data
    file included."""
    uri = _update_rebased_over_a_project(tmp_path)
    update = transactions(uri)[max(transactions(uri))].operation

    def put_the_file_back(manifest_file):
        manifest_file.manifest.writer_version = WriterVersion(library, release)
        recorded = {f.id: f for f in update.updated_fragments}
        manifest_file.manifest.fragments = [
            replace(f, files=recorded[f.id].files) if f.id in recorded else f for f in manifest_file.manifest.fragments
        ]

    edit_manifest(uri, put_the_file_back)
    (finding,) = [f for f in validate(uri).findings if f.rule == "transaction/update"]
    assert finding.symptom == RESTORES_DROPPED_COLUMN_FILES and "back" in finding.message
    if explained:
        assert finding.severity is Severity.WARNING and finding.known_defect == RESTORED_FILE_DEFECT.id
    else:
        assert finding.severity is Severity.ERROR and finding.known_defect is None
