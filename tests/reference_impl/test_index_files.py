"""The index files package as pylance 14 writes its segments
(reference_impl/indices: types and compatibility, files, row address maps)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from reference_impl.dataset import Dataset
from reference_impl.index_metadata import IndexMetadata
from reference_impl.indices.files import IndexFormatError, read_index_file
from reference_impl.indices.row_addr_map import RowAddrMapError, decode_row_addr_map, encode_row_addr_map
from reference_impl.indices.types import IndexType, Usability, compatibility

lance = pytest.importorskip("lance")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """pylance 14: two fragments, a BITMAP on ``colour`` and a BTREE on ``id``."""
    root = tmp_path_factory.mktemp("indexed") / "ds"
    colours = ["red", "green", "blue"]
    table = pa.table({"id": pa.array(range(300)), "colour": pa.array([colours[i % 3] for i in range(300)])})
    dataset = lance.write_dataset(table, root, max_rows_per_file=200)
    dataset.create_scalar_index("colour", "BITMAP")
    dataset.create_scalar_index("id", "BTREE")
    return root


def _index(root, name: str) -> tuple[Dataset, IndexMetadata]:
    dataset = Dataset.open(str(root))
    (index,) = [index for index in dataset.indices if index.name == name]
    return dataset, index


def test_a_bitmap_segment_stores_row_address_maps_that_round_trip(indexed):
    """Property over the segment's keys: each stored map decodes to the row
    addresses pylance answers for its key, and encodes back to its bytes."""
    dataset, index = _index(indexed, "colour_idx")
    assert IndexType.of(index) is IndexType.BITMAP
    contents = read_index_file(dataset, index, "bitmap_page_lookup.lance")
    peer = lance.dataset(str(indexed))
    for key, raw in zip(contents.column("keys").to_pylist(), contents.column("bitmaps").to_pylist(), strict=True):
        addresses = decode_row_addr_map(raw)
        expected = peer.to_table(columns=[], filter=f"colour = '{key}'", with_row_address=True)["_rowaddr"]
        assert addresses.tolist() == sorted(expected.to_pylist()), key
        assert encode_row_addr_map(addresses) == raw


@pytest.mark.parametrize("cut", [0, 3, 9, -1])
def test_a_cut_short_map_is_refused(indexed, cut):
    dataset, index = _index(indexed, "colour_idx")
    raw = read_index_file(dataset, index, "bitmap_page_lookup.lance").column("bitmaps")[0].as_py()
    with pytest.raises(RowAddrMapError):
        decode_row_addr_map(raw[:cut])


def test_index_files_are_read_with_their_own_schema_and_missing_ones_named(indexed):
    dataset, index = _index(indexed, "id_idx")
    lookup = read_index_file(dataset, index, "page_lookup.lance")
    assert {"min", "max"} <= set(lookup.table.column_names)
    with pytest.raises(IndexFormatError, match="has no column 'nope'"):
        lookup.column("nope")
    with pytest.raises(IndexFormatError, match="schema metadata has no 'nope'"):
        lookup.text("nope")
    data = read_index_file(dataset, index, "page_data.lance").table
    assert np.array_equal(np.sort(data.column("values").to_numpy()), np.arange(300))


def test_a_details_message_naming_no_specified_type_is_skipped(indexed):
    """index.md, "Index Compatibility": a type the reference does not know is
    skipped."""
    _, index = _index(indexed, "id_idx")
    assert compatibility(IndexMetadata(**{**index.__dict__, "type_url": "/x.SomethingNewDetails"})).usability is (
        Usability.UNKNOWN_TYPE
    )
    assert IndexType.of(IndexMetadata(**{**index.__dict__, "type_url": "/x.SomethingNewDetails"})) is None
