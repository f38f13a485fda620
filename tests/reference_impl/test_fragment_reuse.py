"""The fragment reuse index (upstream format/index/system/frag_reuse.md):
after a compaction that defers the index remap, an index covers, as
readers see it, the fragments written in place of the ones it was built on.
pylance 14 writes the datasets and is the reader compared with."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.drivers import pylance_driver, reference
from conformance.mutations.edit import edit_manifest
from reference_impl.dataset import Dataset
from reference_impl.fragment_reuse import (
    FRAGMENT_REUSE_INDEX_NAME,
    FragmentRewrite,
    covered_fragment_ids,
    translated_fragment_ids,
)
from reference_impl.wire import table_pb2

lance = pytest.importorskip("lance")


def _rewrite(sources, destinations) -> FragmentRewrite:
    return FragmentRewrite(frozenset(sources), frozenset(destinations))


@pytest.mark.parametrize(
    "stored, rewrites, covered",
    [
        ([0, 1, 2], [_rewrite([0, 1, 2], [3])], [3]),
        ([0, 1, 5], [_rewrite([0, 1], [6, 7])], [5, 6, 7]),
        # A rewrite of fragments the index does not cover changes nothing.
        ([0, 1], [_rewrite([2, 3], [4])], [0, 1]),
        # Covered only in part: the destinations hold rows the index never saw.
        ([0, 1], [_rewrite([1, 2], [3])], [0]),
        # Rewrites follow each other: 0, 1 -> 2, then 2, 3 -> 4.
        ([0, 1, 3], [_rewrite([0, 1], [2]), _rewrite([2, 3], [4])], [4]),
        ([], [_rewrite([0], [1])], []),
        (None, [_rewrite([0], [1])], None),
    ],
)
def test_coverage_is_translated_through_the_rewrites(stored, rewrites, covered):
    assert translated_fragment_ids(stored, rewrites) == covered


def _indexed_then_compacted(root, compactions: int) -> None:
    """Three appends, a BTree index on them, then ``compactions`` rounds of
    two appends and a compaction that defers the index remap."""
    for start in range(0, 9, 3):
        lance.write_dataset(pa.table({"id": list(range(start, start + 3))}), root, mode="append")
    lance.dataset(root).create_scalar_index("id", "BTREE", name="id_btree")
    for round_ in range(compactions):
        for start in range(100 * (round_ + 1), 100 * (round_ + 1) + 6, 3):
            lance.write_dataset(pa.table({"id": list(range(start, start + 3))}), root, mode="append")
        lance.dataset(root).optimize.compact_files(target_rows_per_fragment=10_000, defer_index_remap=True)


def _coverage(description) -> dict[str, list[int] | None]:
    return {index["name"]: index["fragment_ids"] for index in description["indices"]}


@pytest.mark.parametrize("compactions", [1, 2])
def test_the_reference_describes_coverage_as_pylance_does(tmp_path, compactions):
    root = tmp_path / "reuse"
    _indexed_then_compacted(root, compactions)
    dataset = Dataset.open(root)
    (btree,) = [i for i in dataset.indices if i.name == "id_btree"]
    fragments = {f.id for f in dataset.fragments}
    if compactions == 1:
        assert not set(btree.fragment_ids() or []) & fragments, "the stored bitmap names only compacted fragments"
    expected = _coverage(pylance_driver.describe(str(root)))
    actual = _coverage(reference.describe(str(root)))
    assert actual == expected
    assert set(actual["id_btree"] or []) <= fragments and actual["id_btree"]


def test_content_kept_in_an_external_file_is_read(tmp_path):
    """Content moved out of the manifest into the file the page names,
    ``_indices/<uuid of the reuse index>/details.binpb`` (the path pylance
    resolves in the index's directory), translates as the inline content
    did, and as pylance translates it."""
    root = tmp_path / "reuse"
    _indexed_then_compacted(root, 1)
    inline = _coverage(reference.describe(str(root)))

    def externalise(manifest_file):
        (index,) = [i for i in manifest_file.indices if i.name == FRAGMENT_REUSE_INDEX_NAME]
        details = table_pb2.FragmentReuseIndexDetails.FromString(index.details)
        content = details.inline.SerializeToString()
        (root / "_indices" / index.uuid / "details.binpb").write_bytes(content)
        details.external.path = "details.binpb"  # replaces the inline content (a oneof)
        details.external.size = len(content)
        index.details = details.SerializeToString()

    (root / "_indices").mkdir(exist_ok=True)
    (reuse,) = [i for i in Dataset.open(root).indices if i.name == FRAGMENT_REUSE_INDEX_NAME]
    (root / "_indices" / reuse.uuid).mkdir(exist_ok=True)
    edit_manifest(root, externalise)
    assert _coverage(reference.describe(str(root))) == inline == _coverage(pylance_driver.describe(str(root)))


def test_details_that_do_not_decode_are_a_value_error(tmp_path):
    root = tmp_path / "reuse"
    _indexed_then_compacted(root, 1)
    dataset = Dataset.open(root)
    for index in dataset.indices:
        if index.name == FRAGMENT_REUSE_INDEX_NAME:
            index.details = b"\xff\xff\xff"
    with pytest.raises(ValueError, match="fragment reuse index details do not decode"):
        covered_fragment_ids(dataset.indices, dataset.storage.read)


def test_each_segment_of_a_delta_index_is_translated_as_pylance_does(tmp_path):
    """Two segments of one BTree index (the second built by an
    optimize_indices that merges nothing), then a deferred compaction."""
    root = tmp_path / "delta"
    for start in (0, 3):
        lance.write_dataset(pa.table({"id": list(range(start, start + 3))}), root, mode="append")
    lance.dataset(root).create_scalar_index("id", "BTREE", name="id_btree")
    for start in (6, 9):
        lance.write_dataset(pa.table({"id": list(range(start, start + 3))}), root, mode="append")
    lance.dataset(root).optimize.optimize_indices(num_indices_to_merge=0)
    lance.dataset(root).delete("id = 4")
    lance.dataset(root).optimize.compact_files(target_rows_per_fragment=10_000, defer_index_remap=True)

    def segments(description):
        return sorted((index["uuid"], index["fragment_ids"]) for index in description["indices"])

    expected = segments(pylance_driver.describe(str(root)))
    assert segments(reference.describe(str(root))) == expected
    assert len(expected) == 3  # two segments and the reuse index
