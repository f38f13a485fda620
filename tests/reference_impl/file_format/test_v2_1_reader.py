"""The reference reader on Lance files of version 2.1 and 2.2, against pylance 14.

Every table is written by pylance's ``LanceFileWriter`` at ``version="2.1"``
and ``"2.2"`` (or as a dataset with ``data_storage_version``) and read by the
reference reader (``reference_impl.file_format.LanceFileReader``, which routes
2.1+ files to ``reference_impl.file_format.v2_1``); the rows must equal what
pylance reads. Most data is random, so that pylance keeps plain values and the
tests stay about the structural layouts; others ask for a scheme (field
metadata, few distinct values, long similar strings). A file whose pages use
a compressive encoding the reader lacks is marked xfail naming it, after
checking the error names an encoding
:data:`~reference_impl.file_format.v2_1.compression.SCHEMES` lacks."""

from __future__ import annotations

import datetime
import decimal
import os
import re
import tracemalloc

import lance
import numpy as np
import pyarrow as pa
import pytest
from google.protobuf import any_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lance.file import LanceFileReader as PylanceReader
from lance.file import LanceFileWriter as PylanceWriter

from reference_impl.dataset import Dataset
from reference_impl.errors import LanceFormatError, UnsupportedFeatureError
from reference_impl.file_format import LanceFileReader
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.file_format.v2_1.compression import SCHEMES, decode_values
from reference_impl.storage import LocalStorage
from reference_impl.wire import encodings_v2_1_pb2 as enc21

VERSIONS = ["2.1", "2.2"]
N = 257  # not a power of two: the last mini block chunk is a partial one
_rng = np.random.default_rng(20261124)


def _mask(n: int, every: int) -> np.ndarray:
    return np.arange(n) % every == 1


def _random_ints(n: int, dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    return _rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def _random_strings(n: int, nulls_every: int = 0, max_len: int = 24) -> list[str | None]:
    values = [os.urandom(int(_rng.integers(0, max_len))).hex() for _ in range(n)]
    return [None if nulls_every and i % nulls_every == 1 else v for i, v in enumerate(values)]


def _random_lists(n: int, item, nulls_every: int = 5, empties_every: int = 7, max_len: int = 4):
    rows = []
    for i in range(n):
        if nulls_every and i % nulls_every == 1:
            rows.append(None)
        elif empties_every and i % empties_every == 3:
            rows.append([])
        else:
            rows.append([item(i, j) for j in range(int(_rng.integers(1, max_len + 1)))])
    return rows


def _rint(*_):
    return int(_rng.integers(-(2**62), 2**62))


def _primitives() -> pa.Table:
    columns = {}
    for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        columns[dtype] = pa.array(_random_ints(N, dtype), mask=_mask(N, 3 + len(columns)))
    columns["float32"] = pa.array(_rng.standard_normal(N).astype("float32"), mask=_mask(N, 4))
    columns["float64"] = pa.array(_rng.standard_normal(N), mask=_mask(N, 5))
    columns["bool"] = pa.array(_rng.integers(0, 2, N).astype(bool), mask=_mask(N, 6))
    columns["required_int64"] = pa.array(_random_ints(N, "int64"))
    return pa.table(columns)


def _temporal_and_decimal() -> pa.Table:
    day = datetime.date(2000, 1, 1)
    return pa.table(
        {
            "date": pa.array([day + datetime.timedelta(days=int(d)) for d in _rng.integers(0, 20000, N)]),
            "ts": pa.array(_random_ints(N, "int64") // 1000, pa.timestamp("us"), mask=_mask(N, 3)),
            "dec": pa.array(
                [decimal.Decimal(int(v)).scaleb(-2) for v in _rng.integers(-(10**15), 10**15, N)], pa.decimal128(20, 2)
            ),
            "fsb": pa.array([os.urandom(5) for _ in range(N)], pa.binary(5)),
        }
    )


def _strings() -> pa.Table:
    return pa.table(
        {
            "s": pa.array(_random_strings(N, 4)),
            "ls": pa.array(_random_strings(N, 0), pa.large_string()),
            "b": pa.array([None if i % 6 == 2 else os.urandom(int(_rng.integers(0, 12))) for i in range(N)]),
            "lb": pa.array([os.urandom(int(_rng.integers(0, 12))) for _ in range(N)], pa.large_binary()),
        }
    )


def _lists() -> pa.Table:
    return pa.table(
        {
            "li": pa.array(_random_lists(N, _rint), pa.list_(pa.int64())),
            "ll": pa.array(
                _random_lists(N, lambda i, j: _random_strings(1)[0], nulls_every=0), pa.large_list(pa.string())
            ),
            "nested": pa.array(
                _random_lists(N, lambda i, j: None if (i + j) % 4 == 0 else [_rint() for _ in range(j % 3)]),
                pa.list_(pa.list_(pa.int64())),
            ),
            "items_null": pa.array(
                _random_lists(N, lambda i, j: None if j == 1 else _rint(), nulls_every=0), pa.list_(pa.int64())
            ),
        }
    )


_POINT = pa.struct([("x", pa.int64()), ("name", pa.string())])


def _structs() -> pa.Table:
    def point(i):
        if i % 5 == 1:
            return None
        return {"x": None if i % 3 == 0 else _rint(), "name": None if i % 4 == 0 else _random_strings(1)[0]}

    outer = pa.struct([("inner", _POINT), ("flag", pa.bool_())])
    return pa.table(
        {
            "point": pa.array([point(i) for i in range(N)], _POINT),
            "outer": pa.array(
                [None if i % 7 == 2 else {"inner": point(i), "flag": bool(i % 2)} for i in range(N)], outer
            ),
        }
    )


def _lists_and_structs() -> pa.Table:
    def point(i, j):
        return None if (i + j) % 5 == 0 else {"x": None if j == 2 else _rint(), "name": _random_strings(1)[0]}

    with_list = pa.struct([("tags", pa.list_(pa.string())), ("n", pa.int64())])
    return pa.table(
        {
            "points": pa.array(_random_lists(N, point), pa.list_(_POINT)),
            "with_list": pa.array(
                [
                    None
                    if i % 6 == 1
                    else {"tags": None if i % 4 == 0 else _random_strings(i % 3), "n": None if i % 5 == 0 else _rint()}
                    for i in range(N)
                ],
                with_list,
            ),
        }
    )


def _vectors() -> pa.Table:
    values = _rng.standard_normal(N * 4).astype("float32")
    items_null = pa.array(values, mask=_mask(N * 4, 9))
    return pa.table(
        {
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(values), 4),
            "vec_nulls": pa.FixedSizeListArray.from_arrays(items_null, 4, mask=pa.array(_mask(N, 5))),
            "vec_of_vec": pa.array(
                [
                    None if i % 5 == 2 else [None if (i + j) % 4 == 0 else [i, None if j else -i] for j in range(2)]
                    for i in range(N)
                ],
                pa.list_(pa.list_(pa.int32(), 2), 2),
            ),
            "list_of_vec": pa.array(
                _random_lists(N, lambda i, j: _rng.standard_normal(2).tolist()), pa.list_(pa.list_(pa.float64(), 2))
            ),
        }
    )


def _large_values() -> pa.Table:
    """Values of 256 bytes and more: pylance lays them out as full zip pages."""
    blobs = [None if i % 4 == 1 else os.urandom(300 + int(_rng.integers(0, 200))) for i in range(40)]
    return pa.table(
        {
            "big": pa.array(blobs, pa.binary()),
            "big_lists": pa.array(
                [None if i % 5 == 1 else [os.urandom(400) for _ in range(i % 3)] for i in range(40)],
                pa.list_(pa.binary()),
            ),
            "wide_vec": pa.FixedSizeListArray.from_arrays(pa.array(_rng.standard_normal(40 * 128)), 128),
            "wide_vec_nulls": pa.FixedSizeListArray.from_arrays(
                pa.array(_rng.standard_normal(40 * 128)), 128, mask=pa.array(_mask(40, 3))
            ),
        }
    )


def _all_null() -> pa.Table:
    return pa.table(
        {
            "ints": pa.nulls(N, pa.int32()),
            "strings": pa.nulls(N, pa.string()),
            "lists": pa.nulls(N, pa.list_(pa.int64())),
            "in_lists": pa.array([None if i % 3 == 0 else [None] * (i % 4) for i in range(N)], pa.list_(pa.int64())),
            "structs": pa.array([None] * N, _POINT),
        }
    )


def _constant() -> pa.Table:
    return pa.table(
        {
            "same": pa.array([7] * N, pa.int32()),
            "same_or_null": pa.array([None if i % 3 == 0 else 1.5 for i in range(N)], pa.float64()),
            "same_string": pa.array(["changed"] * N),
            "same_string_or_null": pa.array([None if i % 4 == 0 else "x" * 40 for i in range(N)]),
            "lists_of_same": pa.array(
                [None if i % 5 == 0 else ["k"] * (i % 3) for i in range(N)], pa.list_(pa.string())
            ),
            # 2.2: a boolean inline value is a one-byte bitmap; a large
            # string's scalar buffer holds 64-bit offsets.
            "same_bool": pa.array([None if i % 3 == 0 else False for i in range(N)]),
            "same_large_string": pa.array([None if i % 4 == 0 else "y" * 9 for i in range(N)], pa.large_string()),
            "same_large_binary": pa.array([b"\x00\x01"] * N, pa.large_binary()),
        }
    )


def _fixed_size_list_items() -> pa.Table:
    """Fixed-size lists with null items: all null (a ``constant`` without a
    value under the ``FixedSizeList`` encoding), and lists wide enough for a
    full zip page (each list zipped with its item validity), nested too."""
    wide = [None if i % 9 == 4 else [None if (i + j) % 7 == 0 else i * j for j in range(80)] for i in range(N)]
    nested = [
        None
        if i % 6 == 1
        else [None if j == 1 else [None if k % 5 == i % 5 else i + k for k in range(33)] for j in range(3)]
        for i in range(N)
    ]
    return pa.table(
        {
            "null_items": pa.array([None if i % 5 == 2 else [None, None] for i in range(N)], pa.list_(pa.int32(), 2)),
            "wide_null_items": pa.array(wide, pa.list_(pa.int64(), 80)),
            "nested_wide_null_items": pa.array(nested, pa.list_(pa.list_(pa.int64(), 33), 3)),
        }
    )


def _dictionaries() -> pa.Table:
    """Few distinct values: pylance dictionary-encodes the pages."""
    words = ["alpha", "beta", "gamma", None]
    return pa.table(
        {
            "words": pa.array([words[i % 4] for i in range(N)]),
            "ints": pa.array([None if i % 4 == 3 else (i % 3) * 1000003 for i in range(N)], pa.int64()),
            "arrow_dictionary": pa.array([words[(i * 7) % 4] for i in range(N)]).dictionary_encode(),
        }
    )


def _empty() -> pa.Table:
    return pa.table({"i": pa.array([], pa.int64()), "s": pa.array([], pa.string())})


TABLES = {
    "primitives": _primitives,
    "temporal_and_decimal": _temporal_and_decimal,
    "strings": _strings,
    "lists": _lists,
    "structs": _structs,
    "lists_and_structs": _lists_and_structs,
    "vectors": _vectors,
    "large_values": _large_values,
    "all_null": _all_null,
    "constant": _constant,
    "fixed_size_list_items": _fixed_size_list_items,
    "dictionaries": _dictionaries,
    "empty": _empty,
}


def _pylance_write(path, table: pa.Table, version: str, **options) -> None:
    with PylanceWriter(str(path), table.schema, version=version, **options) as writer:
        writer.write_batch(table)


def _pylance_read(path) -> pa.Table:
    return PylanceReader(str(path)).read_all().to_table()


def _reference_read(directory, name: str, schema: pa.Schema | None = None) -> pa.Table:
    return LanceFileReader(LocalStorage(directory), name).read(arrow_schema=schema)


def _expect_equal_or_missing_scheme(read, expected: pa.Table) -> None:
    """The rows equal ``expected``; or the read names a compressive encoding
    the reader lacks (then the test is xfailed with that name)."""
    try:
        actual = read()
    except UnsupportedFeatureError as exc:
        message = str(exc)
        named = re.search(r"compressive encoding '(\w+)' is not supported( in the \w+ context)?", message)
        general = re.search(r"general compression (\w+)", message)
        assert named or general, f"unsupported for a reason other than a missing compressive encoding: {exc}"
        if named:
            assert named.group(1) not in SCHEMES or named.group(2), message
        pytest.xfail(f"needs {(named or general).group(0)}")
    assert actual.num_rows == expected.num_rows
    assert actual.combine_chunks().to_pylist() == expected.combine_chunks().to_pylist()
    assert actual.schema.names == expected.schema.names


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", sorted(TABLES))
def test_reference_reads_pylance_files_row_for_row(tmp_path, name, version):
    table = TABLES[name]()
    _pylance_write(tmp_path / "f.lance", table, version)
    expected = _pylance_read(tmp_path / "f.lance")
    assert expected.to_pylist() == table.to_pylist()
    _expect_equal_or_missing_scheme(lambda: _reference_read(tmp_path, "f.lance", table.schema), expected)


def _maps_and_fixed_size_lists_of_structs() -> pa.Table:
    """Types pylance 14 writes from 2.2 on only."""
    entry = pa.struct([("a", pa.int32()), ("b", pa.string())])
    return pa.table(
        {
            "map": pa.array(
                [
                    None
                    if i % 5 == 1
                    else [(_random_strings(1)[0] + str(j), None if j == 1 else _rint()) for j in range(i % 3)]
                    for i in range(N)
                ],
                pa.map_(pa.string(), pa.int64()),
            ),
            "fsl_struct": pa.array(
                [
                    None
                    if i % 4 == 1
                    else [None if (i + j) % 3 == 0 else {"a": i, "b": _random_strings(1)[0]} for j in range(2)]
                    for i in range(N)
                ],
                pa.list_(entry, 2),
            ),
        }
    )


@pytest.mark.parametrize("column", ["map", "fsl_struct"])
def test_maps_and_fixed_size_lists_of_structs_2_2(tmp_path, column):
    """Maps read as lists of entries; a fixed-size list of structs is a layer
    of the structural encoding, its validity repeated per element. One file
    per column: pylance's file reader refuses to read both together
    ("columns of differing lengths": the latter's pages count elements)."""
    table = _maps_and_fixed_size_lists_of_structs().select([column])
    _pylance_write(tmp_path / "f.lance", table, "2.2")
    expected = _pylance_read(tmp_path / "f.lance")
    assert expected.to_pylist() == table.to_pylist()
    _expect_equal_or_missing_scheme(lambda: _reference_read(tmp_path, "f.lance", table.schema), expected)


def _layouts(path, name: str) -> set[str]:
    """The page layouts of a file (inner layouts of blob pages included)."""
    found = set()
    for layout in _page_layouts(path, name):
        kind = layout.WhichOneof("layout")
        found.add(kind)
        if kind == "blob_layout":
            found.add("inner " + layout.blob_layout.inner_layout.WhichOneof("layout"))
    return found


@pytest.mark.parametrize("version", VERSIONS)
def test_the_tables_cover_every_page_layout(tmp_path, version):
    """The row-for-row tests above see mini block, full zip and constant
    pages; blob pages are covered by the blob test below."""
    seen: set[str] = set()
    for name, make in TABLES.items():
        _pylance_write(tmp_path / f"{name}.lance", make(), version)
        seen |= _layouts(tmp_path, f"{name}.lance")
    assert {"mini_block_layout", "full_zip_layout", "constant_layout"} <= seen


@pytest.mark.parametrize("version", VERSIONS)
def test_pages_split_across_many_pages_and_chunks(tmp_path, version):
    """Many rows: the list column spans several pages, every column several
    chunks (lists cross chunk boundaries); the reader joins the levels and
    values of all of them."""
    n = 50000
    table = pa.table(
        {
            "i": pa.array(_random_ints(n, "int64"), mask=_mask(n, 7)),
            "b": pa.array([None if i % 5 == 1 else os.urandom(i % 9) for i in range(n)], pa.binary()),
            "l": pa.array(_random_lists(n, _rint), pa.list_(pa.int64())),
            "st": pa.concat_arrays([_structs().column("outer").combine_chunks()] * (n // N + 1))[:n],
        }
    )
    _pylance_write(tmp_path / "f.lance", table, version, max_page_bytes=8 * 1024)
    metadata = read_v2_metadata(LocalStorage(tmp_path), "f.lance")
    assert any(len(column.pages) > 1 for column in metadata.columns)
    _expect_equal_or_missing_scheme(lambda: _reference_read(tmp_path, "f.lance", table.schema), table)


@pytest.mark.parametrize("version", VERSIONS)
def test_blob_columns_read_as_their_bytes(tmp_path, version):
    field = pa.field("blob", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    values = [os.urandom(5000), None, b"", os.urandom(10), None, os.urandom(70000)]
    table = pa.table({"blob": pa.array(values, pa.large_binary())}, schema=pa.schema([field]))
    _pylance_write(tmp_path / "f.lance", table, version)
    assert "blob_layout" in _layouts(tmp_path, "f.lance")
    assert _reference_read(tmp_path, "f.lance").column("blob").to_pylist() == values


@pytest.mark.parametrize("version", VERSIONS)
def test_packed_structs_read_as_structs(tmp_path, version):
    packed = pa.struct([("a", pa.int32()), ("b", pa.float64()), ("c", pa.uint8())])
    field = pa.field("p", packed, metadata={"lance-encoding:packed": "true"})
    rows = [
        None if i % 4 == 1 else {"a": int(_rng.integers(-(2**31), 2**31)), "b": float(_rng.random()), "c": i % 256}
        for i in range(N)
    ]
    table = pa.table({"p": pa.array(rows, packed)}, schema=pa.schema([field]))
    _pylance_write(tmp_path / "f.lance", table, version)
    metadata = read_v2_metadata(LocalStorage(tmp_path), "f.lance")
    assert len(metadata.columns) == 1  # one column for the whole struct
    _expect_equal_or_missing_scheme(lambda: _reference_read(tmp_path, "f.lance"), _pylance_read(tmp_path / "f.lance"))


def test_packed_structs_with_variable_width_children_2_2(tmp_path):
    """2.2's variable packed struct: each row's children one after another
    (strings behind their length), in full zip pages."""
    packed = pa.struct(
        [pa.field("a", pa.int32(), False), pa.field("s", pa.string(), False), pa.field("b", pa.binary(), False)]
    )
    field = pa.field("p", packed, False, metadata={"lance-encoding:packed": "true"})
    rows = [{"a": i, "s": _random_strings(1)[0], "b": os.urandom(i % 5)} for i in range(N)]
    table = pa.table({"p": pa.array(rows, packed)}, schema=pa.schema([field]))
    _pylance_write(tmp_path / "f.lance", table, "2.2")
    layout = _page_layouts(tmp_path, "f.lance")[0]
    assert layout.full_zip_layout.value_compression.WhichOneof("compression") == "variable_packed_struct"
    _expect_equal_or_missing_scheme(lambda: _reference_read(tmp_path, "f.lance"), _pylance_read(tmp_path / "f.lance"))


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("scheme", ["lz4", "zstd"])
def test_general_compression_asked_for_in_field_metadata(tmp_path, version, scheme):
    """``lance-encoding:compression`` makes pylance compress whole chunks
    (mini block) and each value (full zip) with LZ4 or Zstandard."""
    metadata = {"lance-encoding:compression": scheme, "lance-encoding:bss": "off"}
    schema = pa.schema(
        [
            pa.field("i", pa.int64(), metadata=metadata),
            pa.field("s", pa.string(), metadata=metadata),
            pa.field("big", pa.binary(), metadata=metadata),
        ]
    )
    table = pa.table(
        {
            "i": pa.array((np.arange(N) % 7) * 1000003, mask=_mask(N, 5)),
            "s": pa.array([None if i % 6 == 1 else f"text {i % 11}" for i in range(N)]),
            "big": pa.array([None if i % 3 == 1 else bytes([i % 251]) * 600 for i in range(N)]),
        },
        schema=schema,
    )
    _pylance_write(tmp_path / "f.lance", table, version)
    assert any("general" in str(layout) for layout in _page_layouts(tmp_path, "f.lance"))
    _expect_equal_or_missing_scheme(lambda: _reference_read(tmp_path, "f.lance"), _pylance_read(tmp_path / "f.lance"))


def test_large_values_are_compressed_one_by_one_in_full_zip_pages(tmp_path):
    """Values of 32 KiB and more: pylance 2.2 compresses each full zip value."""
    values = [None if i % 4 == 1 else str(i).encode() * 40000 for i in range(12)]
    table = pa.table({"big": pa.array(values, pa.binary())})
    _pylance_write(tmp_path / "f.lance", table, "2.2")
    layouts = _page_layouts(tmp_path, "f.lance")
    assert any(layout.full_zip_layout.value_compression.WhichOneof("compression") == "general" for layout in layouts)
    assert _reference_read(tmp_path, "f.lance").column("big").to_pylist() == values


@pytest.mark.parametrize("version", VERSIONS)
def test_fsst_compressed_strings(tmp_path, version):
    """Pages of many similar strings: pylance compresses them with FSST (its
    escapes included: some strings hold bytes no symbol covers)."""
    n = 20000
    words = [
        None if i % 9 == 4 else f"row-{int(v)}-\xff{chr(0x100 + i % 50)}"
        for i, v in enumerate(_random_ints(n, "int32"))
    ]
    table = pa.table({"s": pa.array(words), "ls": pa.array(words, pa.large_string())})
    _pylance_write(tmp_path / "f.lance", table, version)
    assert any("fsst" in str(layout) for layout in _page_layouts(tmp_path, "f.lance"))
    _expect_equal_or_missing_scheme(lambda: _reference_read(tmp_path, "f.lance", table.schema), table)


@pytest.mark.parametrize("version", VERSIONS)
def test_byte_stream_split_floats_under_general_compression(tmp_path, version):
    """``lance-encoding:bss`` with a general compression: each chunk's floats
    are stored byte position by byte position, then compressed."""
    metadata = {"lance-encoding:compression": "zstd", "lance-encoding:bss": "on"}
    n = 5000
    schema = pa.schema([pa.field("f", pa.float64(), metadata=metadata), pa.field("g", pa.float32(), metadata=metadata)])
    table = pa.table(
        {
            "f": pa.array(_rng.standard_normal(n)),
            "g": pa.array(_rng.standard_normal(n).astype("float32"), mask=_mask(n, 7)),
        },
        schema=schema,
    )
    _pylance_write(tmp_path / "f.lance", table, version)
    assert all("byte_stream_split" in str(layout) for layout in _page_layouts(tmp_path, "f.lance"))
    _expect_equal_or_missing_scheme(lambda: _reference_read(tmp_path, "f.lance", table.schema), table)


def test_constant_values_repeat_the_encoded_value_within_bounds():
    """A ``Constant`` compressive encoding stores nothing: its value repeats;
    a count whose copies no buffer backs beyond the cap is corrupt."""
    encoding = enc21.CompressiveEncoding(constant=enc21.Constant(value=(7).to_bytes(4, "little")))
    values = decode_values(encoding, [], 5, where="f.lance")
    assert values.bits_per_value == 32 and values.data.view("<i4").tolist() == [7] * 5
    with pytest.raises(LanceFormatError, match="f.lance"):
        decode_values(encoding, [], 2**40, where="f.lance")


def _page_layouts(path, name: str) -> list[enc21.PageLayout]:
    layouts = []
    for column in read_v2_metadata(LocalStorage(path), name).columns:
        for page in column.pages:
            wrapper = any_pb2.Any()
            wrapper.ParseFromString(page.encoding.direct.encoding)
            layout = enc21.PageLayout()
            layout.ParseFromString(wrapper.value)
            layouts.append(layout)
    return layouts


@pytest.mark.parametrize("version", VERSIONS)
def test_datasets_read_through_the_manifest(tmp_path, version):
    """A dataset (struct and list fields own no column in 2.1+: only leaves)
    read through ``Dataset``/``scan`` equals pylance's rows."""
    table = pa.concat_tables([_lists_and_structs(), _lists_and_structs()]).combine_chunks()
    table = table.append_column("id", pa.array(np.arange(table.num_rows)))
    dataset = lance.write_dataset(table, str(tmp_path / "ds"), data_storage_version=version, max_rows_per_file=300)
    assert len(dataset.get_fragments()) == 2
    ours = Dataset.open(tmp_path / "ds").to_table()
    assert ours.to_pylist() == dataset.to_table().to_pylist()


# -- hostile inputs --------------------------------------------------------------

# Most bytes the reader may allocate (as numpy tracks it) reading a hostile
# variant of the small sample file: far more than honest decoding needs,
# far less than a count taken on trust would ask for.
ALLOCATION_LIMIT = 64 << 20
# Rows of the hostile samples: enough for pylance to dictionary-encode.
HOSTILE_ROWS = 128


@pytest.fixture(scope="module")
def hostile_samples(tmp_path_factory):
    """Small pylance files of each version covering the layouts."""
    directory = tmp_path_factory.mktemp("hostile")
    samples = {}
    table = pa.table(
        {
            "i": pa.array(_random_ints(HOSTILE_ROWS, "int64"), mask=_mask(HOSTILE_ROWS, 3)),
            "s": pa.array(_random_strings(HOSTILE_ROWS, 4)),
            "l": pa.array(_random_lists(HOSTILE_ROWS, _rint), pa.list_(pa.int64())),
            "st": _structs().column("outer").combine_chunks()[:HOSTILE_ROWS],
            "big": pa.array([None if i % 3 == 1 else os.urandom(300) for i in range(HOSTILE_ROWS)]),
            "n": pa.nulls(HOSTILE_ROWS, pa.int32()),
            "d": pa.array(["alpha", "beta", None, "gamma"] * HOSTILE_ROWS)[:HOSTILE_ROWS],  # a dictionary, LZ4 in 2.2
            # 2.2 constant pages: a scalar buffer, an inline boolean.
            "cs": pa.array(["same"] * HOSTILE_ROWS, pa.large_string()),
            "cb": pa.array([None if i % 5 == 0 else True for i in range(HOSTILE_ROWS)]),
            # Full zip fixed-size lists zipped with their item validity, and
            # items all null (a constant without a value).
            "fz": pa.array(
                [[None if (i + j) % 9 == 0 else i - j for j in range(34)] for i in range(HOSTILE_ROWS)],
                pa.list_(pa.int64(), 34),
            ),
            "ni": pa.array(
                [None if i % 4 == 0 else [None, None] for i in range(HOSTILE_ROWS)], pa.list_(pa.int32(), 2)
            ),
        }
    )
    for version in VERSIONS:
        _pylance_write(directory / f"s{version}.lance", table, version)
        samples[version] = (directory / f"s{version}.lance").read_bytes()
    return table, samples


def _read_hostile(tmp_path, data: bytes, schema: pa.Schema) -> None:
    (tmp_path / "bad.lance").write_bytes(data)
    tracemalloc.start()
    try:
        _reference_read(tmp_path, "bad.lance", schema)
    except LanceFormatError as exc:
        assert "bad.lance" in str(exc)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < ALLOCATION_LIMIT


@settings(
    deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(data=st.data())
def test_flipped_bytes_in_2_1_pages_raise_format_errors_only(tmp_path_factory, hostile_samples, data):
    """Property: changing bytes anywhere in the pages and metadata of a 2.1 or
    2.2 file makes the reference reader either read a table or raise a
    LanceFormatError naming the file; never another exception, and never an
    allocation beyond ALLOCATION_LIMIT."""
    table, samples = hostile_samples
    version = data.draw(st.sampled_from(VERSIONS))
    sample = bytearray(samples[version])
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(sample) - 41))  # the 40-byte footer stays intact
        sample[position] = data.draw(st.integers(0, 255))
    _read_hostile(tmp_path_factory.mktemp("flip"), bytes(sample), table.schema)


@settings(
    deadline=None, max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(data=st.data())
def test_large_values_written_into_2_1_pages_raise_format_errors_only(tmp_path_factory, hostile_samples, data):
    """Property: overwriting 2, 4 or 8 bytes of a 2.1/2.2 file's pages with a
    huge little-endian count or offset (the bytes a page's lengths are made
    of) gives a table or a LanceFormatError naming the file, within
    ALLOCATION_LIMIT."""
    table, samples = hostile_samples
    version = data.draw(st.sampled_from(VERSIONS))
    sample = bytearray(samples[version])
    width = data.draw(st.sampled_from([2, 4, 8]))
    position = data.draw(st.integers(0, len(sample) - 41 - width))
    value = data.draw(st.sampled_from([2 ** (8 * width) - 1, 2 ** (8 * width - 1), 2 ** (8 * width) // 3]))
    sample[position : position + width] = value.to_bytes(width, "little")
    _read_hostile(tmp_path_factory.mktemp("big"), bytes(sample), table.schema)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("keep", [0, 40, 200, -41, -100])
def test_truncated_2_1_files_are_corrupt(tmp_path, hostile_samples, version, keep):
    table, samples = hostile_samples
    data = samples[version]
    _read_hostile(tmp_path, data[:keep] if keep >= 0 else data[: len(data) + keep], table.schema)
    with pytest.raises(LanceFormatError, match="bad.lance"):
        _reference_read(tmp_path, "bad.lance", table.schema)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_file_schema_that_renames_a_field_is_corrupt(tmp_path, hostile_samples, version):
    """The file's own schema names the columns; if its bytes name another
    field than the Arrow schema asked for, the file is corrupt (not the call)."""
    table, samples = hostile_samples
    data = samples[version]
    position = data.rindex(b"flag")  # a child of the struct "st", in the file's schema
    renamed = data[:position] + b"flog" + data[position + 4 :]
    (tmp_path / "bad.lance").write_bytes(renamed)
    with pytest.raises(LanceFormatError, match="bad.lance.*flag"):
        _reference_read(tmp_path, "bad.lance", table.schema)
    position = data.rindex(b"big")
    (tmp_path / "bad.lance").write_bytes(data[:position] + b"bag" + data[position + 3 :])
    with pytest.raises(LanceFormatError, match="bad.lance.*big"):
        _reference_read(tmp_path, "bad.lance", table.schema)
