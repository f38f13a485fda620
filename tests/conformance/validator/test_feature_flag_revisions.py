"""The validator checks one format revision at a time (feature-flags.known-bits,
feature-flags.known-bits-to-2048, feature-flags.paired-bits-agree,
feature-flags.paired-bits-persist), the CLI chooses it, and the reference
reader refuses the newer flags whose meaning it does not implement."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

from conformance import strategies
from conformance.describe import schema_validator
from conformance.mutations.edit import edit_manifest
from conformance.requirements import load_requirements, requirement
from conformance.spec_revisions import NEWEST, OLDEST, REVISIONS, UNDEFINED_FLAG, FlagUse
from conformance.validator import Severity, validate
from conformance.validator.ruleset import rules_by_id
from reference_impl import feature_flags as reference_flags
from reference_impl.dataset import Dataset
from reference_impl.errors import UnsupportedFeatureError
from tests.hypothesis_budget import examples

CORPUS = Path(__file__).resolve().parents[3] / "fixtures" / "cases"


def _dataset(path: Path, *, reader: int = 0, writer: int = 0, version: int | None = None) -> Path:
    Dataset.create(path, pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    Dataset.open(path).append(pa.table({"id": pa.array([4], pa.int64())}))

    def set_flags(manifest_file):
        manifest_file.manifest.reader_feature_flags |= reader
        manifest_file.manifest.writer_feature_flags |= writer

    edit_manifest(path, set_flags, version=version)
    return path


def _by_rule(report, rule: str) -> list:
    return [f for f in report.findings if f.rule == rule]


def _errors(report) -> list[str]:
    return [f"v{f.version} {f.rule}: {f.message}" for f in report.findings if f.severity is Severity.ERROR]


def test_a_flag_the_revision_lacks_is_unknown_to_it_naming_the_revision_that_defines_it(tmp_path):
    path = _dataset(tmp_path / "ds", reader=1024, writer=1024)
    under_seeds = validate(path, spec_revision=OLDEST)
    [finding] = _by_rule(under_seeds, "feature-flags/known")
    assert finding.severity is Severity.ERROR
    assert "unknown to format revision seeds" in finding.message
    assert "1024 (fragment_reuse_index) defined by the later revision upstream-2026-11" in finding.message
    [writer] = _by_rule(under_seeds, "feature-flags/writer-known")
    assert writer.severity is Severity.WARNING and "upstream-2026-11" in writer.message
    assert not _errors(validate(path, spec_revision=NEWEST))


def test_a_flag_no_revision_defines_is_unknown_to_every_revision(tmp_path):
    path = _dataset(tmp_path / "ds", reader=UNDEFINED_FLAG | 4096)
    for item in REVISIONS:
        [finding] = _by_rule(validate(path, spec_revision=item), "feature-flags/known")
        assert f"unknown to format revision {item.name}" in finding.message
        assert "defined by no revision this project knows" in finding.message
    assert "bits 4096, 1099511627776" in finding.message


def test_the_default_revision_is_the_newest_and_the_report_records_it(tmp_path):
    path = _dataset(tmp_path / "ds", reader=256, writer=256)
    report = validate(path)
    assert report.spec_revision is NEWEST and not _errors(report)
    document = report.to_json()
    schema_validator("validation-report.schema.json").validate(document)
    assert document["spec_revision"] == NEWEST.name
    assert validate(path, spec_revision=OLDEST).to_json()["spec_revision"] == "seeds"


def test_half_set_paired_flags_are_an_error_under_the_revision_that_pairs_them(tmp_path):
    path = _dataset(tmp_path / "ds", writer=2048)
    [finding] = _by_rule(validate(path), "feature-flags/paired-bits")
    assert "2048 (managed_blobs) is set in the writer flags but not in the reader flags" in finding.message
    # The seeds' revision does not define the bit: the pairing rule does not run,
    # and the bit is reported as unknown instead.
    under_seeds = validate(path, spec_revision=OLDEST)
    assert "feature-flags/paired-bits" not in under_seeds.rules
    assert _by_rule(under_seeds, "feature-flags/writer-known")


def test_a_persistent_flag_cleared_by_a_later_version_is_an_error(tmp_path):
    path = _dataset(tmp_path / "ds", reader=256, writer=256, version=1)
    report = validate(path, all_versions=True)
    [finding] = _by_rule(report, "feature-flags/paired-bits-persist")
    assert finding.version == 2 and "version 1 sets flag 256 (mixed_data_file_versions)" in finding.message
    kept = _dataset(tmp_path / "kept", reader=256, writer=256)
    edit_manifest(
        kept, lambda m: setattr(m.manifest, "reader_feature_flags", m.manifest.reader_feature_flags | 256), version=1
    )
    edit_manifest(
        kept, lambda m: setattr(m.manifest, "writer_feature_flags", m.manifest.writer_feature_flags | 256), version=1
    )
    assert not _by_rule(validate(kept, all_versions=True), "feature-flags/paired-bits-persist")


def _contradicts_the_seeds(rule_id: str) -> bool:
    """Whether the rule checks only what a later page states against the
    seeds: every requirement it cites is out of force under the seeds, one
    of them replacing a seeds' requirement (the reserved external row id
    arms, for instance). Such a rule may fail a dataset the seeds accept."""
    cited = [requirement(rid) for rid in rules_by_id()[rule_id].requirements]
    replaced = {item.superseded_by for item in load_requirements().values() if item.superseded_by}
    return not any(item.in_force_under(OLDEST) for item in cited) and any(item.id in replaced for item in cited)


def _valid_under_seeds_stays_valid(path: Path) -> None:
    seeds_errors = _errors(validate(path, all_versions=True, spec_revision=OLDEST))
    if seeds_errors:
        return
    for later in REVISIONS[1:]:
        report = validate(path, all_versions=True, spec_revision=later)
        kept = [f for f in report.findings if f.severity is Severity.ERROR and not _contradicts_the_seeds(f.rule)]
        assert kept == [], (path, later.name)


def test_only_a_later_contradiction_fails_what_the_seeds_accept():
    """The exception of the property below is narrow: the rules of
    requirements that replace a seeds' one, and not, say, the rule of
    known flags, whose newest requirement also supersedes the seeds'."""
    assert _contradicts_the_seeds("row-id/external-arms-reserved")
    assert not _contradicts_the_seeds("feature-flags/known")
    assert not _contradicts_the_seeds("data-file/field-id-values")


def _declares_violations(case: Path) -> bool:
    return bool(json.loads((case / "case.json").read_text()).get("violations"))


#: The golden cases meant to be valid: a negative case declares the errors it
#: must show, which may come from requirements only a later revision has (an
#: index disagreeing with its data, judged by the index pages).
VALID_CASES = sorted(p.name for p in CORPUS.iterdir() if (p / "dataset").is_dir() and not _declares_violations(p))


@pytest.mark.parametrize("case", VALID_CASES)
def test_golden_datasets_valid_under_the_seeds_stay_valid_under_every_later_revision(case):
    """Property over the golden corpus's valid cases: every case with no error
    under the seeds' revision has no error under any later revision either,
    but from a rule that checks a later page's contradiction of the seeds."""
    _valid_under_seeds_stays_valid(CORPUS / case / "dataset")


def test_pylance_datasets_are_valid_under_every_revision(base_datasets, pylance_datasets):
    """The pylance-written mutation bases and scenarios are valid under the
    seeds, hence (and checked here) under every later revision."""
    for name, path in {**base_datasets, **pylance_datasets}.items():
        for item in REVISIONS:
            assert _errors(validate(path, all_versions=True, spec_revision=item)) == [], (name, item.name)


@settings(
    max_examples=examples(1 / 6),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(strategies.dataset_recipes(max_steps=4))
def test_generated_datasets_valid_under_the_seeds_stay_valid_under_every_later_revision(recipe):
    """Property: a dataset the reference writer builds from a drawn recipe,
    valid under the seeds' revision, is valid under every later revision."""
    with tempfile.TemporaryDirectory(prefix="recipe-") as directory:
        recipe.build(Path(directory) / "ds")
        _valid_under_seeds_stays_valid(Path(directory) / "ds")


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True, timeout=120)


def test_the_cli_checks_the_chosen_revision_and_refuses_an_unknown_one(tmp_path):
    path = _dataset(tmp_path / "ds", reader=64, writer=64)
    newest = _run_cli("validate", str(path), "--format", "json")
    assert newest.returncode == 0, newest.stdout
    assert json.loads(newest.stdout)["spec_revision"] == NEWEST.name
    seeds = _run_cli("validate", str(path), "--spec-revision", "seeds")
    assert seeds.returncode == 1 and "defined by the later revision upstream-2026-11" in seeds.stdout
    assert "format revision seeds" in seeds.stdout.splitlines()[0]
    unknown = _run_cli("validate", str(path), "--spec-revision", "upstream-1999")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert "unknown format revision 'upstream-1999'; known revisions: seeds, upstream-2026-11" in unknown.stderr
    assert "seeds, upstream-2026-11" in _run_cli("validate", "--help").stdout


def test_the_reference_reader_knows_exactly_the_seeds_flags():
    """It implements the meaning of flags 1 to 16 and of none of the newer ones."""
    assert reference_flags.KNOWN_FLAGS == OLDEST.defined_mask
    assert {bit: name for bit, name in reference_flags.NAMES.items()} == {f.bit: f.name for f in OLDEST.flags}


@pytest.mark.parametrize(
    "flag",
    [f for f in NEWEST.flags if not f.bit & OLDEST.defined_mask and f.use is FlagUse.READER_AND_WRITER],
    ids=lambda f: f.name,
)
@pytest.mark.requirements("feature-flags.reader-refuses-unknown")
def test_the_reference_reader_refuses_newer_reader_flags_it_does_not_implement(flag, tmp_path):
    path = _dataset(tmp_path / "ds", reader=flag.bit, writer=flag.bit)
    with pytest.raises(UnsupportedFeatureError, match=f"0x{flag.bit:x}"):
        Dataset.open(path)
    assert Dataset.open(path, version=1).count_rows() == 3


def test_the_unknown_reader_flag_case_sets_a_bit_no_revision_defines():
    """The golden negative case must stay negative under every revision: the
    bits its version 2 adds to version 1's reader flags are undefined in all."""
    from reference_impl.manifest_file import read_manifest_file
    from reference_impl.naming import list_versions
    from reference_impl.storage import LocalStorage

    storage = LocalStorage(CORPUS / "crafted-unknown-reader-flag" / "dataset")
    manifests = list_versions(storage).manifests()
    first, second = (read_manifest_file(storage, manifests[v]).manifest.reader_feature_flags for v in (1, 2))
    added = second & ~first
    assert added
    for item in REVISIONS:
        assert item.undefined_bits(added) == item.undefined_bits(second) != [], item.name


def test_junit_and_sarif_reports_name_the_revision_checked(tmp_path):
    from xml.etree import ElementTree

    from conformance.validator.report import to_junit, to_sarif

    report = validate(_dataset(tmp_path / "ds"), spec_revision=OLDEST)
    suite = ElementTree.fromstring(to_junit(report))
    assert suite.find("properties/property[@name='spec_revision']").get("value") == "seeds"
    assert json.loads(to_sarif(report))["runs"][0]["properties"]["specRevision"] == "seeds"


def test_the_python_api_takes_a_revision_by_name_and_refuses_an_unknown_one(tmp_path):
    from conformance.spec_revisions import UnknownRevisionError

    path = _dataset(tmp_path / "ds", reader=64, writer=64)
    assert validate(path, spec_revision="seeds").spec_revision is OLDEST
    with pytest.raises(UnknownRevisionError, match="known revisions: seeds, upstream-2026-11"):
        validate(path, spec_revision="upstream-1999")
