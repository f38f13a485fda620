"""The validator never crashes and never reads outside the dataset root."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.mutations.edit import copy_dataset, manifest_relpath
from conformance.validator import Severity, validate
from conformance.validator.engine import INTERNAL_ERROR_RULE
from reference_impl.errors import NotADatasetError


def _victims(root):
    """Files whose bytes a corruption may hit: the latest manifest, every
    deletion file, and the tail (footer) of every data file."""
    yield root / manifest_relpath(root), None
    for path in sorted((root / "_deletions").glob("*")):
        yield path, None
    for path in sorted((root / "data").glob("*.lance")):
        yield path, 64  # corrupt only the last 64 bytes: the footer and offsets tables


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_byte_corruption_never_escapes_the_validator(base_datasets, tmp_path_factory, data):
    """Property: for any flips, cuts and insertions in manifests, deletion
    files and data file footers, validate() returns a report (possibly full of
    errors) and no rule fails with an exception."""
    root = copy_dataset(base_datasets["plain"], tmp_path_factory.mktemp("hostile") / "ds")
    victims = list(_victims(root))
    for _ in range(data.draw(st.integers(1, 4))):
        path, tail = data.draw(st.sampled_from(victims))
        content = bytearray(path.read_bytes())
        low = max(0, len(content) - tail) if tail else 0
        at = data.draw(st.integers(low, max(low, len(content) - 1)))
        kind = data.draw(st.sampled_from(["flip", "cut", "insert", "huge-length"]))
        if kind == "flip" and content:
            content[at] ^= data.draw(st.integers(1, 255))
        elif kind == "cut":
            del content[at : at + data.draw(st.integers(1, 64))]
        elif kind == "insert":
            content[at:at] = data.draw(st.binary(min_size=1, max_size=16))
        else:
            content[at : at + 4] = b"\xff\xff\xff\x7f"
        path.write_bytes(bytes(content))
    report = validate(root, all_versions=True)
    crashed = [f.message for f in report.findings if f.rule == INTERNAL_ERROR_RULE]
    assert not crashed, crashed


def test_a_symlink_out_of_the_root_is_reported_not_followed(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txn"
    secret.write_bytes(b"never to be read")
    from reference_impl.dataset import Dataset

    name = Dataset.open(root).manifest.transaction_file
    os.unlink(root / "_transactions" / name)
    os.symlink(secret, root / "_transactions" / name)
    report = validate(root, rules=["transaction"])
    messages = [f.message for f in report.findings if f.severity is Severity.ERROR]
    assert any("outside" in m for m in messages), messages


def test_a_directory_that_is_no_dataset_is_refused(tmp_path):
    with pytest.raises(NotADatasetError):
        validate(tmp_path)
    (tmp_path / "_versions").mkdir()
    (tmp_path / "_versions" / "notes.txt").write_text("hello")
    with pytest.raises(NotADatasetError):
        validate(tmp_path)


def test_garbage_everywhere_still_yields_a_report(tmp_path):
    (tmp_path / "_versions").mkdir()
    (tmp_path / "_versions" / "1.manifest").write_bytes(os.urandom(300))
    (tmp_path / "_versions" / "2.manifest").write_bytes(b"")
    report = validate(tmp_path, all_versions=True)
    assert report.has_errors
    assert {f.rule for f in report.findings} >= {"manifest/decodes"}
    assert INTERNAL_ERROR_RULE not in {f.rule for f in report.findings}


# -- special files, deep JSON, huge version names, unreadable paths -------------------

#: Seconds a validation of a small damaged dataset may take (it takes well under one).
PROMPTLY = 20


def _manifests(root):
    from reference_impl.naming import list_versions
    from reference_impl.storage import LocalStorage

    return list_versions(LocalStorage(root)).manifests()


def test_named_pipes_in_place_of_a_manifest_and_a_transaction_become_findings(base_datasets, tmp_path):
    from reference_impl.dataset import Dataset
    from tests.hostile_probe import deadline

    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    transaction = root / "_transactions" / Dataset.open(root).manifest.transaction_file
    manifests = _manifests(root)
    first = root / manifests[min(manifests)]
    for path in (transaction, first):
        path.unlink()
        os.mkfifo(path)
    with deadline(PROMPTLY):
        report = validate(root, all_versions=True)
    located = {(f.rule, f.location): f.message for f in report.findings if "named pipe" in f.message}
    assert ("manifest/decodes", manifests[min(manifests)]) in located, report.findings
    assert ("transaction/file-decodes", f"_transactions/{transaction.name}") in located, report.findings
    assert INTERNAL_ERROR_RULE not in {f.rule for f in report.findings}


def test_a_tag_nested_too_deep_is_a_finding_naming_the_depth(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    (root / "_refs" / "tags" / "stable.json").write_text("[" * 100_000 + "]" * 100_000)
    report = validate(root, rules=["refs"])
    messages = [f.message for f in report.findings if f.location == "_refs/tags/stable.json"]
    assert any("JSON nests 100000 levels deep" in m for m in messages), report.findings


@pytest.mark.parametrize("name", ["00000000000000000000.manifest", "99999999999999999999.manifest"])
def test_a_manifest_named_for_a_huge_version_is_reported_without_enumerating_versions(base_datasets, tmp_path, name):
    """A copy of a manifest named for version 2^64 - 1 (V2), or for a V1
    number past u64: the gap below it is counted, not listed, and the name
    is reported as disagreeing with the manifest's version."""
    from tests.hostile_probe import deadline

    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    manifests = _manifests(root)
    (root / "_versions" / name).write_bytes((root / manifests[max(manifests)]).read_bytes())
    named = 2**64 - 1 if name.startswith("0") else int(name.split(".")[0])
    with deadline(PROMPTLY):
        report = validate(root, all_versions=True)
    gaps = [f.message for f in report.findings if f.rule == "history/gapless"]
    assert gaps and f"({named - max(manifests) - 1} in all;" in gaps[0], gaps
    assert any(
        f.rule == "naming/name-matches-version" and f.location == f"_versions/{name}" for f in report.findings
    ), report.findings


def _validate_unprivileged(root, *locked: str) -> tuple[int, dict | None, str]:
    """``validate --all-versions --format json`` in a process without root's
    permission bypass, with ``locked`` paths (relative to ``root``) at mode 000."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from tests.hostile_probe import without_permission_bypass

    for relpath in locked:
        (root / relpath).chmod(0)
    try:
        command = without_permission_bypass(
            [sys.executable, "-m", "conformance.cli", "validate", str(root), "--all-versions", "--format", "json"]
        )
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=Path(__file__).parents[3])
    finally:
        for relpath in locked:
            (root / relpath).chmod(0o755)
    try:
        report = json.loads(result.stdout)
    except ValueError:
        report = None
    return result.returncode, report, result.stderr


def test_an_unlistable_versions_directory_still_gives_a_json_report(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    code, report, stderr = _validate_unprivileged(root, "_versions")
    assert code == 1 and report is not None, stderr
    (finding,) = report["findings"]
    assert (finding["rule"], finding["severity"], finding["location"]) == ("validator.unreadable", "error", "_versions")
    assert "Permission denied" in finding["message"]


@pytest.mark.parametrize(
    ("base", "locked"),
    [
        ("branched", ("tree",)),
        ("branched", ("tree/feature/x", "_refs/branches")),
        ("plain", ("_deletions", "_indices", "_transactions")),
        ("plain", ("data",)),
        ("plain", ("_refs",)),
        ("stable_row_ids", ("_deletions",)),
    ],
)
def test_unreadable_directories_become_findings_not_internal_errors(base_datasets, tmp_path, base, locked):
    root = copy_dataset(base_datasets[base], tmp_path / "ds")
    if not all((root / relpath).exists() for relpath in locked):
        pytest.fail(f"the {base} base no longer has {locked}: choose other directories")
    code, report, stderr = _validate_unprivileged(root, *locked)
    assert report is not None, stderr
    assert "Traceback" not in stderr
    assert [f for f in report["findings"] if f["rule"] == INTERNAL_ERROR_RULE] == []
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert code == 1 and errors

    # Every error names a path at or under a locked directory, as its location or in its message.
    def names_a_locked_path(finding):
        return any(
            (finding["location"] or "").startswith(relpath) or f"{root}/{relpath}" in finding["message"]
            for relpath in locked
        )

    assert all(names_a_locked_path(f) for f in errors), errors
