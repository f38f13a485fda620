"""Row lineage sequences spilled to hidden columns (reference_impl.row_lineage;
row id page at 117de6ba, "Inline and Spilled Storage"): the column arms
round-trip through the protobuf, a spilled column is found in exactly one v2
data file of its fragment, and the sequence readers read it only through the
column reader they are given."""

from __future__ import annotations

import pyarrow as pa
import pytest

from reference_impl.errors import CorruptFileError, UnsupportedFeatureError
from reference_impl.fragments import DataFile, Fragment, LineageColumn
from reference_impl.row_ids import fragment_created_at_versions, fragment_row_ids
from reference_impl.row_lineage import (
    LINEAGE_COLUMNS,
    LINEAGE_FIELD_IDS,
    RESERVED_NAMES,
    lineage_file,
    lineage_values,
    spilled,
)
from reference_impl.storage import open_storage, parse_dataset_uri
from reference_impl.wire import table_pb2

ROW_IDS = LINEAGE_COLUMNS["row_id_sequence"]
CREATED = LINEAGE_COLUMNS["created_at_version_sequence"]


def _fragment(*files: DataFile, **sequences) -> Fragment:
    return Fragment(7, list(files), 3, **sequences)


def test_the_reserved_ids_and_names_are_the_pages():
    assert [(c.field_id, c.name) for c in LINEAGE_COLUMNS.values()] == [
        (-3, "_rowid"),
        (-4, "_row_created_at_version"),
        (-5, "_row_last_updated_at_version"),
    ]
    assert LINEAGE_FIELD_IDS == {-3, -4, -5} and "_rowid" in RESERVED_NAMES


def test_the_column_arms_are_fields_12_to_14_and_round_trip():
    fragment = _fragment(
        DataFile("a.lance", [0, -3, -4], [0, 1, 2]),
        row_id_sequence=LineageColumn(),
        created_at_version_sequence=LineageColumn(),
        last_updated_at_version_sequence=b"\x0a\x00",
    )
    message = fragment.to_proto()
    assert message.WhichOneof("row_id_sequence") == "column_row_ids"
    assert message.WhichOneof("created_at_version_sequence") == "column_created_at_versions"
    assert message.WhichOneof("last_updated_at_version_sequence") == "inline_last_updated_at_versions"
    numbers = {f.name: f.number for f in table_pb2.DataFragment.DESCRIPTOR.fields}
    assert (numbers["column_row_ids"], numbers["column_last_updated_at_versions"]) == (12, 13)
    assert numbers["column_created_at_versions"] == 14
    assert (numbers["external_row_ids"], numbers["external_last_updated_at_versions"]) == (6, 8)
    again = Fragment.from_proto(table_pb2.DataFragment.FromString(message.SerializeToString()))
    assert again == fragment
    assert [c.name for c in spilled(again)] == ["_rowid", "_row_created_at_version"]


def test_a_spilled_column_is_in_exactly_one_v2_file_of_its_fragment():
    one = _fragment(DataFile("a.lance", [0], [0]), DataFile("b.lance", [-3], [0]), row_id_sequence=LineageColumn())
    assert lineage_file(one, ROW_IDS, "ctx").path == "b.lance"
    with pytest.raises(CorruptFileError, match="no data file of the fragment list field id -3"):
        lineage_file(_fragment(DataFile("a.lance", [0], [0])), ROW_IDS, "ctx")
    two = _fragment(DataFile("a.lance", [0, -3], [0, 1]), DataFile("b.lance", [-3], [0]))
    with pytest.raises(CorruptFileError, match=r"2 data files \(\[0, 1\]\)"):
        lineage_file(two, ROW_IDS, "ctx")
    legacy = _fragment(DataFile("a.lance", [0, -4], [], 0, 0))
    with pytest.raises(CorruptFileError, match="legacy"):
        lineage_file(legacy, CREATED, "ctx")


def test_a_column_holds_one_non_null_value_per_physical_row():
    fragment = _fragment()
    assert lineage_values(pa.array([5, 6, 7], pa.uint64()), fragment, "f") == [5, 6, 7]
    with pytest.raises(CorruptFileError, match="holds 2 values but the fragment has 3"):
        lineage_values(pa.array([5, 6], pa.uint64()), fragment, "f")
    with pytest.raises(CorruptFileError, match="1 values are null"):
        lineage_values(pa.array([5, None, 7], pa.uint64()), fragment, "f")


def test_the_sequence_readers_read_a_spilled_column_only_through_their_column_reader(tmp_path):
    storage = open_storage(parse_dataset_uri(str(tmp_path)))
    fragment = _fragment(
        DataFile("a.lance", [0, -3, -4], [0, 1, 2]),
        row_id_sequence=LineageColumn(),
        created_at_version_sequence=LineageColumn(),
    )
    asked = []

    def read_column(frag, spec, context):
        asked.append(spec.name)
        return {"_rowid": [10, 11, 12], "_row_created_at_version": [1, 1, 2]}[spec.name]

    assert fragment_row_ids(storage, fragment, read_column=read_column) == [10, 11, 12]
    assert fragment_created_at_versions(storage, fragment, read_column=read_column) == [1, 1, 2]
    assert asked == ["_rowid", "_row_created_at_version"]
    with pytest.raises(UnsupportedFeatureError, match="spilled to a hidden column"):
        fragment_row_ids(storage, fragment)
