"""A dataset that sets a flag bit the upstream pages give different meanings
draws the info finding feature-flags/contested-bit, naming every meaning and
its page (feature-flags.one-meaning-per-bit, docs/spec-inconsistencies.md);
one that sets no such bit draws none. The datasets are pylance 14's, with
the bit set by editing a manifest as the feature-flag mutations do."""

from __future__ import annotations

import pytest

from conformance.mutations import copy_dataset
from conformance.mutations.bases import build_plain
from conformance.mutations.edit import edit_manifest
from conformance.spec_inconsistencies import contested_bit
from conformance.spec_revisions import NEWEST, OLDEST
from conformance.spec_sources import load_documents
from conformance.validator import Severity, validate

RULE = "feature-flags/contested-bit"


@pytest.fixture(scope="module")
def pylance_dataset(tmp_path_factory):
    """pylance 14's plain base: appends, deletes, a scalar index, a tag, table config."""
    root = tmp_path_factory.mktemp("contested") / "plain"
    build_plain(root)
    return root


def _with_flags(source, target, *, reader: int = 0, writer: int = 0):
    root = copy_dataset(source, target)

    def set_flags(manifest_file):
        manifest_file.manifest.reader_feature_flags |= reader
        manifest_file.manifest.writer_feature_flags |= writer

    edit_manifest(root, set_flags)
    return root


def _contested(report) -> list:
    return [f for f in report.findings if f.rule == RULE]


@pytest.mark.requirements("feature-flags.one-meaning-per-bit")
def test_a_contested_bit_is_reported_with_every_meaning_and_page(pylance_dataset, tmp_path):
    root = _with_flags(pylance_dataset, tmp_path / "ds", reader=512, writer=512)
    report = validate(root)
    [finding] = _contested(report)
    assert finding.severity is Severity.INFO
    assert finding.requirements == ("feature-flags.one-meaning-per-bit",)
    assert finding.location.endswith("#reader_feature_flags")
    assert "flag 512 is set in the reader and writer flags" in finding.message
    documents = load_documents()
    for meaning, claims in contested_bit(512).meanings:
        assert meaning.text in finding.message
        for claim in claims:
            page = documents[claim.document]
            assert f"{page.path.rsplit('/', 1)[1]}@{page.commit[:8]}, {claim.section}" in finding.message
    flag = NEWEST.flag(512)
    assert flag is not None
    assert f"this run reads it as {flag.name}, as format revision {NEWEST.name} does" in finding.message
    # The dataset is not made invalid by the ambiguity: nothing above info is reported.
    assert [f for f in report.findings if f.severity is not Severity.INFO] == []


def test_a_dataset_without_a_contested_bit_draws_no_finding(pylance_dataset, tmp_path):
    assert _contested(validate(pylance_dataset, all_versions=True)) == []
    # A bit one page alone defines (1024) is not contested either.
    root = _with_flags(pylance_dataset, tmp_path / "ds", reader=1024, writer=1024)
    assert _contested(validate(root)) == []


def test_a_writer_only_bit_the_revision_does_not_define_is_reported_beside_the_unknown_flag(pylance_dataset, tmp_path):
    """4096 in the writer flags, as the clustering providers page sets it: the
    newest revision calls it unknown (a warning), and the finding names the page."""
    root = _with_flags(pylance_dataset, tmp_path / "ds", writer=4096)
    report = validate(root)
    [finding] = _contested(report)
    assert "flag 4096 is set in the writer flags" in finding.message
    assert finding.location.endswith("#writer_feature_flags")
    assert "clustering.md@fee6e8a2, Compatibility" in finding.message
    assert f"format revision {NEWEST.name}, which this run checks, does not define it" in finding.message
    assert [f.rule for f in report.findings if f.severity is Severity.WARNING] == ["feature-flags/writer-known"]


def test_the_rule_does_not_run_under_a_revision_before_its_requirement(pylance_dataset, tmp_path):
    root = _with_flags(pylance_dataset, tmp_path / "ds", reader=2048, writer=2048)
    assert RULE not in validate(root, spec_revision=OLDEST).rules
    [finding] = _contested(validate(root))
    assert "row_id_lineage.md@117de6ba" in finding.message and "liquid_clustering.md@77b5fb03" in finding.message
