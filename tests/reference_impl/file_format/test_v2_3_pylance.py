"""The reference reads file format 2.3 as pylance 14 writes it, row for row
(``reference_impl.file_format.v2_1``: :mod:`.planar`, :mod:`.sparse`).

Every case is a table of one family of types (ints of every width, floats,
strings and binaries small and large, low-cardinality strings, dictionaries,
booleans, temporal and decimal types, lists, nested lists, structs, nested
structs, fixed-size lists and fixed-size lists of structs, maps), with nulls
none, some or all. Each is written by pylance 14 as a dataset in batches
small enough, with a page size small enough, that its columns span several
pages, then read by ``Dataset.open(path).to_table()`` and by
``lance.dataset(path).to_table()``: the rows must be equal
(``conformance.comparison.compare_tables``: no difference).

At 2.3 each case is written with every ``lance-encoding:structural-encoding``
pylance accepts (its default, ``sparse``, ``miniblock``, ``fullzip``) and
with the general compressions (``lance-encoding:compression`` ``zstd`` and
``lz4``); at 2.1 and 2.2 with the default, to show the older layouts still
read. The property at the end draws tables from the conformance strategies
with random encoding metadata at 2.3.
"""

from __future__ import annotations

import datetime
import decimal
import tempfile
from collections.abc import Callable

import lance
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from conformance import strategies
from conformance.comparison import compare_tables
from reference_impl.dataset import Dataset
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.storage import LocalStorage

N = 2000
BATCH_ROWS = 300
# Small pages: a column of N rows spans several (pylance 14 flushes a page
# when its writer's data cache fills; max_page_bytes alone does not split).
PAGE_BYTES = 4096
STRUCTURAL = "lance-encoding:structural-encoding"
COMPRESSION = "lance-encoding:compression"
EXAMPLES = min(10, settings.default.max_examples)

_rng = np.random.default_rng(20261129)


def _mask(kind: str, n: int = N) -> np.ndarray | None:
    """Null slots: none, some (a random third) or all."""
    if kind == "none":
        return None
    if kind == "all":
        return np.ones(n, bool)
    return _rng.random(n) < 0.3


def _ints(dtype: str, nulls: str) -> pa.Array:
    info = np.iinfo(dtype)
    return pa.array(_rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True), mask=_mask(nulls))


def _strings(n: int, length: int, nulls: str = "some") -> list[str | None]:
    mask = _mask(nulls, n)
    values = ["".join(chr(97 + c) for c in _rng.integers(0, 26, int(_rng.integers(0, length + 1)))) for _ in range(n)]
    return values if mask is None else [None if m else v for v, m in zip(values, mask, strict=True)]


def _lists(n: int, item: Callable[[], object], max_len: int = 4) -> list:
    rows: list = []
    for _ in range(n):
        roll = _rng.random()
        rows.append(
            None if roll < 0.1 else [] if roll < 0.2 else [item() for _ in range(int(_rng.integers(1, max_len)))]
        )
    return rows


def _small_int() -> int | None:
    return None if _rng.random() < 0.1 else int(_rng.integers(-1000, 1000))


def _struct_rows(n: int) -> list:
    return [
        None if _rng.random() < 0.15 else {"a": _small_int(), "b": _strings(1, 6)[0], "c": {"d": _small_int()}}
        for _ in range(n)
    ]


def _vector(dimension: int) -> list[float]:
    return _rng.standard_normal(dimension).astype("float32").tolist()


CASES: dict[str, Callable[[], pa.Table]] = {
    "ints": lambda: pa.table(
        {f"{d}_{k}": _ints(d, k) for d in ("int8", "uint16", "int32", "uint64") for k in ("none", "some")}
        | {"int16": _ints("int16", "some"), "uint8": _ints("uint8", "none"), "uint32": _ints("uint32", "some")}
        | {"int64": _ints("int64", "some"), "all_null": _ints("int64", "all")}
    ),
    "floats": lambda: pa.table(
        {
            "f16": pa.array(_rng.standard_normal(N).astype("float16"), mask=_mask("some")),
            "f32": pa.array(_rng.standard_normal(N).astype("float32"), mask=_mask("some")),
            "f64": pa.array(_rng.standard_normal(N), mask=_mask("none")),
        }
    ),
    "booleans": lambda: pa.table(
        {
            "b": pa.array(_rng.random(N) < 0.5, mask=_mask("some")),
            "b_all_null": pa.array(np.zeros(N, bool), mask=_mask("all")),
            "b_constant": pa.array(np.ones(N, bool)),
        }
    ),
    "strings": lambda: pa.table(
        {
            "s": pa.array(_strings(N, 20)),
            "ls": pa.array(_strings(N, 20, "none"), pa.large_string()),
            "b": pa.array([None if v is None else v.encode() for v in _strings(N, 12)], pa.binary()),
            "lb": pa.array([v.encode() for v in _strings(N, 12, "none")], pa.large_binary()),
            "s_all_null": pa.array([None] * N, pa.string()),
        }
    ),
    "large values": lambda: pa.table(
        {
            "big": pa.array([None if i % 7 == 3 else f"{i}" * 150 for i in range(N // 4)]),
            "big_binary": pa.array([bytes(_rng.integers(0, 256, 900, dtype="uint8")) for _ in range(N // 4)]),
        }
    ),
    "low cardinality": lambda: pa.table(
        {
            "city": pa.array([None if i % 11 == 0 else ["oslo", "lima", "pune"][i % 3] for i in range(N)]),
            "dict": pa.array([["x", "yy", "zzz"][i % 3] for i in range(N)]).dictionary_encode(),
            "repeated": pa.array([7] * N, pa.int32()),
        }
    ),
    "sparse columns": lambda: pa.table(
        {
            "rare_int": pa.array([i if i % 97 == 0 else None for i in range(N)], pa.int64()),
            "rare_string": pa.array([f"v{i}" if i % 131 == 0 else None for i in range(N)]),
            "rare_list": pa.array([[i, i] if i % 89 == 0 else None for i in range(N)], pa.list_(pa.int32())),
        }
    ),
    "temporal and decimal": lambda: pa.table(
        {
            "date32": pa.array(
                [datetime.date(2000, 1, 1) + datetime.timedelta(days=int(d)) for d in _rng.integers(0, 9000, N)]
            ),
            "date64": pa.array(_rng.integers(0, 10**12, N) // 86_400_000 * 86_400_000, pa.date64()),
            "ts": pa.array(_rng.integers(0, 2**50, N), pa.timestamp("us", "UTC"), mask=_mask("some")),
            "time": pa.array(_rng.integers(0, 86_400, N).astype("int32"), pa.time32("s")),
            "duration": pa.array(_rng.integers(0, 2**40, N), pa.duration("ns")),
            "dec128": pa.array(
                [decimal.Decimal(int(v)).scaleb(-3) for v in _rng.integers(-(10**15), 10**15, N)],
                pa.decimal128(25, 3),
            ),
            "dec256": pa.array([decimal.Decimal(i) for i in range(N)], pa.decimal256(50, 0), mask=_mask("some")),
        }
    ),
    "lists": lambda: pa.table(
        {
            "ints": pa.array(_lists(N, _small_int), pa.list_(pa.int64())),
            "strings": pa.array(_lists(N, lambda: _strings(1, 8)[0]), pa.large_list(pa.string())),
            "nested": pa.array(_lists(N, lambda: _lists(1, _small_int)[0]), pa.list_(pa.list_(pa.int32()))),
            "empty": pa.array([[]] * N, pa.list_(pa.int32())),
        }
    ),
    "structs": lambda: pa.table(
        {
            "s": pa.array(
                _struct_rows(N),
                pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.struct([("d", pa.int64())]))]),
            ),
            "list_of_structs": pa.array(
                _lists(N, lambda: {"x": _small_int(), "y": _strings(1, 4)[0]}),
                pa.list_(pa.struct([("x", pa.int16()), ("y", pa.string())])),
            ),
        }
    ),
    "fixed-size lists": lambda: pa.table(
        {
            "vector": pa.array([_vector(8) for _ in range(N)], pa.list_(pa.float32(), 8)),
            "nullable_vector": pa.array(
                [None if i % 5 == 0 else _vector(4) for i in range(N)], pa.list_(pa.float32(), 4)
            ),
            "wide_vector": pa.array([_vector(256) for _ in range(N // 8)] * 8, pa.list_(pa.float32(), 256)),
        }
    ),
    "repeated fixed-size lists": lambda: pa.table(
        {
            # Few distinct lists with null items: 2.3 dictionary-encodes them.
            "pairs": pa.array(
                [[[100, 101], [200, None], None, [None, None]][i % 4] for i in range(N)], pa.list_(pa.int64(), 2)
            ),
            "nested": pa.array(
                [[[[1, 2], None], None, [[3, None], [4, 5]]][i % 3] for i in range(N)],
                pa.list_(pa.list_(pa.int16(), 2), 2),
            ),
        }
    ),
    "fixed-size lists of structs": lambda: pa.table(
        {
            "pairs": pa.array(
                [None if i % 6 == 0 else [{"p": _small_int(), "q": 1.5}, None] for i in range(N)],
                pa.list_(pa.struct([("p", pa.int32()), ("q", pa.float64())]), 2),
            ),
        }
    ),
    "maps": lambda: pa.table(
        {
            "m": pa.array(
                _lists(N, lambda: (_strings(1, 5, "none")[0], _small_int())),
                pa.map_(pa.string(), pa.int64()),
            ),
        }
    ),
}


def _with_metadata(table: pa.Table, metadata: dict[str, str]) -> pa.Table:
    if not metadata:
        return table
    fields = [field.with_metadata(metadata) for field in table.schema]
    return pa.Table.from_arrays(table.columns, schema=pa.schema(fields))


def _batches(table: pa.Table, rows: int = BATCH_ROWS) -> pa.RecordBatchReader:
    """``table`` in batches of :data:`BATCH_ROWS` rows, each a copy: pylance
    14 panics writing a struct of structs, or a fixed-size list of structs,
    that is a slice (docs/spec-discrepancies.md, "File format 2.3", item 6)."""
    indices = pa.array(np.arange(rows))
    copies = [batch.take(indices[: batch.num_rows]) for batch in table.to_batches(max_chunksize=rows)]
    return pa.RecordBatchReader.from_batches(table.schema, copies)


def _read_both(
    table: pa.Table, version: str, directory: str, rows: int = BATCH_ROWS, page_bytes: int = PAGE_BYTES
) -> tuple[pa.Table, pa.Table]:
    """Rows pylance and the reference read from ``table`` written by pylance."""
    batches = _batches(table, rows)
    lance.write_dataset(
        batches, directory, data_storage_version=version, max_page_bytes=page_bytes, data_cache_bytes=page_bytes
    )
    return lance.dataset(directory).to_table(), Dataset.open(directory).to_table()


def _assert_same_rows(table: pa.Table, version: str, tmp_path) -> None:
    theirs, ours = _read_both(table, version, str(tmp_path / "dataset"))
    assert theirs.num_rows == table.num_rows
    result = compare_tables(theirs, ours)
    assert not result.differences, (version, result.differences[:3])


@pytest.mark.parametrize("structural", [None, "sparse", "miniblock", "fullzip"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_reference_reads_pylance_2_3_row_for_row(case, structural, tmp_path):
    table = _with_metadata(CASES[case](), {STRUCTURAL: structural} if structural else {})
    _assert_same_rows(table, "2.3", tmp_path)


@pytest.mark.parametrize("structural", [None, "sparse"])
def test_the_cases_span_several_pages(structural, tmp_path):
    """The cases' columns do span pages: each file of the "ints" and
    "strings" cases has columns of more than one page, all read back."""
    for case in ("ints", "strings"):
        directory = tmp_path / case
        table = _with_metadata(CASES[case](), {STRUCTURAL: structural} if structural else {})
        theirs, ours = _read_both(table, "2.3", str(directory))
        assert not compare_tables(theirs, ours).differences
        for data_file in (directory / "data").glob("*.lance"):
            metadata = read_v2_metadata(LocalStorage(str(data_file.parent)), data_file.name)
            assert metadata.version == (2, 3)
            assert max(len(column.pages) for column in metadata.columns) > 1


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
@pytest.mark.parametrize("case", ["ints", "strings", "large values", "sparse columns", "fixed-size lists"])
def test_the_reference_reads_pylance_2_3_under_general_compression(case, codec, tmp_path):
    _assert_same_rows(_with_metadata(CASES[case](), {COMPRESSION: codec}), "2.3", tmp_path)


# What pylance 14 refuses to write ("not enabled by the selected file format").
_REFUSED = {("2.1", "maps"), ("2.1", "fixed-size lists of structs")}


@pytest.mark.parametrize(
    "case, version",
    [(case, version) for version in ("2.1", "2.2") for case in sorted(CASES) if (version, case) not in _REFUSED],
)
def test_the_older_layouts_still_read_row_for_row(case, version, tmp_path):
    _assert_same_rows(CASES[case](), version, tmp_path)


def _null_rows_then(last: list, dimension: int, item: pa.DataType, rows: int = 200) -> pa.Table:
    return pa.table({"c": pa.array([None] * (rows - 1) + [last], pa.list_(item, dimension))})


@pytest.mark.parametrize("version", ["2.1", "2.2", "2.3"])
@pytest.mark.parametrize(
    "table",
    [
        # A page of null lists only (no values, no levels) before one whose
        # list holds a null item: the null lists stay null.
        _null_rows_then([None], 1, pa.int64()),
        # Pages whose items are all null (stored in 0 bits) joined with one
        # whose items are stored.
        pa.table(
            {
                "a": pa.array([None] * 102, pa.list_(pa.bool_())),
                "b": pa.array([None] * 102, pa.list_(pa.bool_())),
                "c": pa.array([None] * 99 + [[None, None], None, [None, False]], pa.list_(pa.bool_(), 2)),
            }
        ),
    ],
    ids=["null lists then a null item", "null items then stored items"],
)
def test_fixed_size_lists_read_across_pages_of_nulls(table, version, tmp_path):
    """Found by the property with several pages: both read wrong at 2.1 and
    2.2 before (a null list read as a list of nulls; pages that do not join)."""
    theirs, ours = _read_both(table, version, str(tmp_path / "dataset"), rows=50, page_bytes=1024)
    assert not compare_tables(theirs, ours).differences


def _metadata_choices(data_type: pa.DataType) -> st.SearchStrategy[dict[str, str]]:
    """Encoding metadata pylance 14 accepts at 2.3 on a field of ``data_type``."""
    structural = st.sampled_from([{}, {STRUCTURAL: "sparse"}, {STRUCTURAL: "miniblock"}])
    if pa.types.is_nested(data_type) or pa.types.is_dictionary(data_type):
        return structural
    general = st.sampled_from([{}, {COMPRESSION: "zstd"}, {COMPRESSION: "lz4"}])
    return st.builds(lambda a, b: a | b, structural, general)


@st.composite
def encoded_tables(draw) -> pa.Table:
    table = draw(strategies.arrow_tables(max_rows=80))
    fields = [field.with_metadata(draw(_metadata_choices(field.type)) or None) for field in table.schema]
    return pa.Table.from_arrays(table.columns, schema=pa.schema(fields))


def _pylance_writes(table: pa.Table, directory: str) -> bool:
    """Whether pylance 14 writes ``table`` at 2.3. It refuses some metadata
    on some types (an error), and panics on others: ``miniblock`` on a
    struct holding a fixed-size list of booleans whose items are all null,
    at 2.2 as at 2.3 (the property is about what it writes)."""
    try:
        # Batches of 16 rows and a small data cache: the columns span pages.
        lance.write_dataset(_batches(table, 16), directory, data_storage_version="2.3", data_cache_bytes=512)
    except (OSError, ValueError):
        return False
    except BaseException as exc:  # pyo3's PanicException derives from BaseException
        if type(exc).__name__ != "PanicException":
            raise
        return False
    return True


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(encoded_tables())
def test_the_reference_reads_what_pylance_writes_at_2_3(table):
    """Property: for any table of the strategies' types with random
    structural and general-compression metadata, pylance 14's 2.3 dataset
    (its columns over several pages) reads the same rows through the
    reference as through pylance."""
    with tempfile.TemporaryDirectory(prefix="v23-property-") as directory:
        if not _pylance_writes(table, directory):
            reject()
        theirs = lance.dataset(directory).to_table()
        ours = Dataset.open(directory).to_table()
    result = compare_tables(theirs, ours)
    assert not result.differences, (table.schema, result.differences[:3])
