"""The reference driver's ``describe`` against the plain path.

``describe`` builds the description of a fragment straight from its
manifest message (``describe_fragment_messages``) and leaves the fragments
undecoded; ``describe_dataset`` of the version opened in full (the plain
path, which the golden fixtures' expected documents come from) decodes every
fragment and describes it through ``describe_fragment``. The two must give
the same document, byte for byte once written as JSON, and fail the same way.
"""

from __future__ import annotations

import copy
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import strategies
from conformance.describe import to_json
from conformance.drivers import reference
from conformance.fixtures.base_paths import materialize
from conformance.fixtures.case import case_dirs, load_case
from reference_impl.dataset import Dataset
from reference_impl.deletions import encode_arrow_deletions, encode_bitmap_deletions
from reference_impl.errors import LanceFormatError
from reference_impl.fragments import DataFile, DeletionFileType
from reference_impl.manifest_file import encode_manifest_file
from reference_impl.naming import NamingScheme, manifest_path
from tests.hypothesis_budget import examples

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "fixtures"

U64_MAX = 2**64 - 1


def _outcome(describe) -> str | tuple[str, str]:
    """The description as JSON, or the error it raised (type and message)."""
    try:
        return to_json(describe())
    except LanceFormatError as exc:
        return type(exc).__name__, str(exc)


def _plain(path: Path, version: int | None):
    return reference.describe_dataset(Dataset.open(path, version, synchronize=False))


def _same_both_ways(path: Path, version: int | None) -> str | tuple[str, str]:
    fast = _outcome(lambda: reference.describe(path, version))
    assert fast == _outcome(lambda: _plain(path, version)), f"{path} v{version}"
    return fast


@pytest.mark.parametrize("case_dir", case_dirs(CORPUS), ids=lambda d: d.name)
def test_describe_equals_the_plain_path_on_every_golden_version(case_dir, tmp_path):
    """Property: on every version of every golden case, ``describe`` gives
    the JSON document ``describe_dataset`` gives after a full open, or the
    same error."""
    case = load_case(case_dir)
    if case.portable_base_paths:  # what readers are given: the copy with absolute base paths
        case_dir = materialize(case_dir, tmp_path)
    dataset = case_dir / case.dataset
    for version in reference.versions(dataset):
        _same_both_ways(dataset, version)


def test_the_golden_corpus_has_fragments_of_both_kinds():
    """The corpus test above covers both ways a fragment is described: from
    its message alone, and decoded (deletion files or stable row ids)."""
    plain = from_message = 0
    for case_dir in case_dirs(CORPUS):
        case = load_case(case_dir)
        if case.portable_base_paths:
            continue
        opened = Dataset.open(case_dir / case.dataset, check_features=False)
        for fragment in opened.fragments:
            if opened.uses_stable_row_ids or fragment.deletion_file is not None:
                plain += 1
            else:
                from_message += 1
    assert plain > 0 and from_message > 0


@st.composite
def _data_files(draw, field_ids: list[int]) -> list[DataFile]:
    """One to three data file records with every field a description copies
    drawn widely: tombstoned field ids, columns without an index, legacy and
    future file versions, sizes up to u64, and base ids absent, 0 or not."""
    count = draw(st.integers(1, 3))
    files = []
    for number in range(count):
        fields = draw(st.lists(st.sampled_from([*field_ids, -2]), max_size=4))
        files.append(
            DataFile(
                path=draw(st.sampled_from(["", "a.lance", f"{number}-file.lance", "sub/dir/ü.lance"])),
                fields=fields,
                column_indices=draw(st.lists(st.integers(-1, 20), min_size=len(fields), max_size=len(fields))),
                file_major_version=draw(st.integers(0, 3)),
                file_minor_version=draw(st.integers(0, 3)),
                file_size_bytes=draw(st.one_of(st.just(0), st.integers(1, U64_MAX))),
                base_id=draw(st.one_of(st.none(), st.just(0), st.integers(1, 2**32 - 1))),
            )
        )
    return files


def _write_dataset(manifest, root: Path, *, write_deletions: bool) -> None:
    """``manifest`` as version ``manifest.version`` of a dataset at ``root``,
    with the deletion files its fragments name (deleting their first rows)
    when ``write_deletions``; data files are not written (describe does not
    read them)."""
    path = root / manifest_path(manifest.version, NamingScheme.V2)
    path.parent.mkdir(parents=True)
    path.write_bytes(encode_manifest_file(copy.deepcopy(manifest)))
    if not write_deletions:
        return
    for fragment in manifest.fragments:
        deletion = fragment.deletion_file
        if deletion is None:
            continue
        offsets = range(deletion.num_deleted_rows)
        encode = encode_bitmap_deletions if deletion.file_type is DeletionFileType.BITMAP else encode_arrow_deletions
        target = root / deletion.path(fragment.id)
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(encode(offsets))


@settings(
    max_examples=examples(1 / 4),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    manifest=strategies.manifests(max_fragments=12, max_fields=3),
    files=st.data(),
    write_deletions=st.booleans(),
)
def test_describe_equals_the_plain_path_on_generated_manifests(manifest, files, write_deletions):
    """Property: for a generated manifest (with or without stable row ids
    and deletion files, its fragments' data file records drawn widely), the
    latest version's ``describe`` is the plain path's document, or the same
    error when the deletion files it names are missing."""
    field_ids = manifest.schema.field_ids()
    for fragment in manifest.fragments:
        fragment.files = files.draw(_data_files(field_ids))
    root = Path(tempfile.mkdtemp(prefix="describe-fast-"))
    try:
        _write_dataset(manifest, root, write_deletions=write_deletions)
        outcome = _same_both_ways(root, None)
        has_deletions = any(f.deletion_file is not None for f in manifest.fragments)
        # Described, unless a deletion file it needs was left unwritten.
        assert isinstance(outcome, str) == (write_deletions or not has_deletions)
    finally:
        shutil.rmtree(root)
