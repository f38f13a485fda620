"""Fixed-size lists of primitive items whose items are all null, as the two
writers of the field store them in a 2.1 full zip page (encoding.md, "Fixed
Size List" and "Full Zip Page Layout"):

- pylance 14 zips each list's item validity with its items under a
  ``FixedSizeList`` encoding whose items are a ``Constant`` without a value
  (docs/spec-discrepancies.md, "File format 2.1 and 2.2", item 18);
- Lance 6.0, which the SQL engine's Lance extension embeds, stores values of
  zero bits under a bare ``Constant`` without a value: each item is its
  control word alone (item 19). Those pages are crafted here from the bytes
  that writer stores, in the reference writer's container.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from google.protobuf import any_pb2
from lance.file import LanceFileReader as PylanceReader
from lance.file import LanceFileWriter as PylanceWriter

from reference_impl.arrow_schema import schema_from_arrow
from reference_impl.errors import CorruptFileError
from reference_impl.file_format import LanceFileReader
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.file_format.writer_v2_1 import V2_1_VERSION, _assemble, _Page
from reference_impl.storage import LocalStorage
from reference_impl.wire import encodings_v2_1_pb2 as enc
from reference_impl.wire import file_pb2

ONE_UINT64 = pa.list_(pa.uint64(), 1)
BARE_NULL_CONSTANT = enc.CompressiveEncoding(constant=enc.Constant())


def _write_page(path, table: pa.Table, layout: enc.FullZipLayout, buffers: list[bytes]) -> None:
    """A 2.1 file holding ``table``'s schema and one full zip page."""
    fields = schema_from_arrow(table.schema).fields
    descriptor = file_pb2.FileDescriptor(
        schema=file_pb2.Schema(fields=[field.to_proto() for field in fields]), length=table.num_rows
    )
    page = _Page(enc.PageLayout(full_zip_layout=layout), buffers, table.num_rows)
    path.write_bytes(b"".join(bytes(chunk) for chunk in _assemble([[page]], descriptor, V2_1_VERSION)))


def _zero_bit_layout(num_items: int, num_visible: int, layers, bits_rep: int = 0, bits_def: int = 0):
    return enc.FullZipLayout(
        bits_rep=bits_rep,
        bits_def=bits_def,
        bits_per_value=0,
        num_items=num_items,
        num_visible_items=num_visible,
        value_compression=BARE_NULL_CONSTANT,
        layers=layers,
    )


def _reference_rows(tmp_path, table: pa.Table) -> list:
    return LanceFileReader(LocalStorage(str(tmp_path)), "f.lance").read(arrow_schema=table.schema).to_pylist()


def test_zero_bit_values_without_control_words_are_lists_of_null_items(tmp_path):
    """No null lists: no control words, so the page's data buffer is empty
    and every row is a valid list whose one item is null."""
    table = pa.table({"a": pa.array([[None]] * 3, ONE_UINT64)})
    layout = _zero_bit_layout(3, 3, [enc.REPDEF_ALL_VALID_ITEM])
    _write_page(tmp_path / "f.lance", table, layout, [b""])
    assert _reference_rows(tmp_path, table) == [{"a": [None]}] * 3


def test_zero_bit_values_with_definition_levels_agree_with_pylance(tmp_path):
    """Null lists among them: one-byte control words (definition 1 for a
    null list) and nothing else; pylance 14 reads the page the same way."""
    rows = [[None], None, [None], None]
    table = pa.table({"a": pa.array(rows, ONE_UINT64)})
    layout = _zero_bit_layout(4, 4, [enc.REPDEF_NULLABLE_ITEM], bits_def=1)
    _write_page(tmp_path / "f.lance", table, layout, [bytes([0, 1, 0, 1])])
    assert _reference_rows(tmp_path, table) == [{"a": row} for row in rows]
    assert PylanceReader(str(tmp_path / "f.lance")).read_all().to_table().to_pylist() == [{"a": r} for r in rows]


def test_zero_bit_values_inside_a_list_walk_the_control_words(tmp_path):
    """``list<fixed_size_list<uint64>[1]>``: control words of one repetition
    and two definition bits (a null item list is 1, a null outer list 2, an
    empty one 3), a row start per row in buffer 1."""
    rows = [[[None], None], None, [], [[None]]]
    table = pa.table({"a": pa.array(rows, pa.list_(ONE_UINT64))})
    # (rep << 2) | def, item by item: a new row starts with rep 1.
    words = [(1 << 2) | 0, 1, (1 << 2) | 2, (1 << 2) | 3, (1 << 2) | 0]
    layout = _zero_bit_layout(5, 3, [enc.REPDEF_NULLABLE_ITEM, enc.REPDEF_NULL_AND_EMPTY_LIST], bits_rep=1, bits_def=2)
    _write_page(tmp_path / "f.lance", table, layout, [bytes(words), bytes([0, 2, 3, 4, 5])])
    assert _reference_rows(tmp_path, table) == [{"a": row} for row in rows]


def test_zero_bits_under_an_encoding_that_stores_values_are_corrupt(tmp_path):
    """Only a constant without a value may take no bytes: flat values of
    zero bits name the page as corrupt."""
    table = pa.table({"a": pa.array([[None]] * 2, ONE_UINT64)})
    layout = _zero_bit_layout(2, 2, [enc.REPDEF_ALL_VALID_ITEM])
    layout.value_compression.CopyFrom(enc.CompressiveEncoding(flat=enc.Flat(bits_per_value=64)))
    _write_page(tmp_path / "f.lance", table, layout, [b""])
    with pytest.raises(CorruptFileError, match="0 bits under an encoding that stores values"):
        _reference_rows(tmp_path, table)


def test_more_zero_bit_items_than_rows_are_corrupt(tmp_path):
    """Without control words or value bytes, only the page's row count
    bounds the items: a layout claiming more is refused before decoding."""
    table = pa.table({"a": pa.array([[None]] * 2, ONE_UINT64)})
    layout = _zero_bit_layout(2**31, 2**31, [enc.REPDEF_ALL_VALID_ITEM])
    _write_page(tmp_path / "f.lance", table, layout, [b""])
    with pytest.raises(CorruptFileError, match="cannot fit"):
        _reference_rows(tmp_path, table)


def _layouts(path) -> list[enc.PageLayout]:
    layouts = []
    for column in read_v2_metadata(LocalStorage(str(path.parent)), path.name).columns:
        for page in column.pages:
            wrapper = any_pb2.Any()
            wrapper.ParseFromString(page.encoding.direct.encoding)
            layout = enc.PageLayout()
            layout.ParseFromString(wrapper.value)
            layouts.append(layout)
    return layouts


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_pylance_fixed_size_lists_of_null_items_read_row_for_row(tmp_path, version):
    """The same shape written by pylance 14: all items null (with and
    without null lists) is a full zip page of lists zipped with their item
    validity, items a constant without a value; beside it, lists with values."""
    table = pa.table(
        {
            "null_items": pa.array([None if i % 4 == 1 else [None] for i in range(40)], ONE_UINT64),
            "only_null_items": pa.array([[None]] * 40, ONE_UINT64),
            "mixed": pa.array([None if i % 5 == 0 else [i if i % 2 else None] for i in range(40)], ONE_UINT64),
        }
    )
    path = tmp_path / "f.lance"
    with PylanceWriter(str(path), table.schema, version=version) as writer:
        writer.write_batch(table)
    null_items, only_null_items, _ = _layouts(path)
    for layout in (null_items, only_null_items):
        lists = layout.full_zip_layout.value_compression.fixed_size_list
        assert lists.has_validity and lists.values.WhichOneof("compression") == "constant"
    assert PylanceReader(str(path)).read_all().to_table().to_pylist() == table.to_pylist()
    assert _reference_rows(tmp_path, table) == table.to_pylist()
