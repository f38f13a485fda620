"""The validator never crashes and never reads outside the dataset root."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conformance.validator import Severity, validate
from conformance.validator.engine import INTERNAL_ERROR_RULE
from reference_impl.errors import NotADatasetError

from conformance.mutations.edit import copy_dataset, manifest_relpath


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
