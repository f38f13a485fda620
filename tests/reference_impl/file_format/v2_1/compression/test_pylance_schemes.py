"""Every compression scheme pylance 14 writes, in real 2.1/2.2 files, read by
the reference reader row for row (encoding.md, "Compression" and
"Compression Configuration").

Each case writes a table with pylance's ``LanceFileWriter`` at the given
version, the field metadata of the configuration table choosing the scheme
(``lance-encoding:compression``, ``-compression-level``, ``-rle-threshold``,
``-bss``, ``-structural-encoding``, ``-packed``, ``-dict-values-compression``),
then walks the file's page metadata to assert the schemes the case exists
for really appear, and compares the reference reader's rows with pylance's.
A second test flips bytes inside those files' pages: the reader must either
read rows or raise a format error, never anything else.
"""

from __future__ import annotations

import tracemalloc

import lance
import numpy as np
import pyarrow as pa
import pytest
from google.protobuf import any_pb2
from google.protobuf.message import Message
from lance.file import LanceFileReader as PylanceReader
from lance.file import LanceFileWriter as PylanceWriter

from reference_impl.dataset import Dataset
from reference_impl.errors import LanceFormatError
from reference_impl.file_format import LanceFileReader
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.storage import LocalStorage
from reference_impl.wire import encodings_v2_1_pb2 as enc

# A decoded table here is well under 1 MiB; a lie in a size must not cost more.
ALLOCATION_LIMIT = 64 << 20
N = 3000  # more than one 1024-value bitpacking chunk and several mini blocks
WORDS = ["north", "south", "east", "west", "up", "down", "left", "right"]
COMPRESSION = "lance-encoding:compression"


def _words(rng: np.random.Generator, n: int) -> pa.Array:
    return pa.array([" ".join(rng.choice(WORDS, 4)) + f"-{i}" for i in range(n)])


def _wide_ints(rng: np.random.Generator, n: int) -> pa.Array:
    return pa.array(rng.integers(0, 2**40, n).astype(np.int64))


def _column(name: str, array: pa.Array, **metadata: str) -> tuple[pa.Field, pa.Array]:
    return pa.field(name, array.type, metadata=metadata or None), array


PACKED_TYPE = pa.struct([("id", pa.int32()), ("name", pa.string()), ("score", pa.float64())])

# name -> (columns builder, schemes that must appear, versions)
CASES = {
    "bitpacked_ints": (
        lambda rng: [_column("a", pa.array(rng.integers(0, 300, N).astype(np.int32)))],
        {"inline_bitpacking"},
        ("2.1", "2.2"),
    ),
    "nullable_ints": (
        lambda rng: [_column("a", pa.array([None if i % 3 else i for i in range(N)], pa.int32()))],
        {"out_of_line_bitpacking"},
        ("2.1", "2.2"),
    ),
    "zstd_ints": (
        lambda rng: [_column("a", _wide_ints(rng, N), **{COMPRESSION: "zstd"})],
        {"general", "buffer:ZSTD"},
        ("2.1", "2.2"),
    ),
    "lz4_ints_level": (
        lambda rng: [_column("a", _wide_ints(rng, N), **{COMPRESSION: "lz4", "lance-encoding:compression-level": "3"})],
        {"general", "buffer:LZ4"},
        ("2.1", "2.2"),
    ),
    "bss_floats": (
        lambda rng: [_column("x", pa.array(rng.normal(size=N)), **{COMPRESSION: "zstd", "lance-encoding:bss": "on"})],
        {"byte_stream_split", "general"},
        ("2.1", "2.2"),
    ),
    "bss_float32_lz4": (
        lambda rng: [
            _column(
                "x", pa.array(rng.normal(size=N).astype(np.float32)), **{COMPRESSION: "lz4", "lance-encoding:bss": "on"}
            )
        ],
        {"byte_stream_split", "general", "buffer:LZ4"},
        ("2.1", "2.2"),
    ),
    "mini_block_forced_for_long_strings": (
        lambda rng: [
            _column(
                "s",
                pa.array([f"{WORDS[i % 8]}{i} " * 150 for i in range(300)] * (N // 300)),
                **{"lance-encoding:structural-encoding": "miniblock", COMPRESSION: "zstd"},
            )
        ],
        {"mini_block_layout", "general", "buffer:ZSTD"},
        ("2.1", "2.2"),
    ),
    "fsst_strings": (
        lambda rng: [_column("s", _words(rng, N), **{COMPRESSION: "fsst"})],
        {"fsst", "variable"},
        ("2.1", "2.2"),
    ),
    "zstd_strings": (
        lambda rng: [_column("s", _words(rng, N), **{COMPRESSION: "zstd", "lance-encoding:compression-level": "9"})],
        {"general", "variable", "buffer:ZSTD"},
        ("2.1", "2.2"),
    ),
    "runs": (
        lambda rng: [
            _column(
                "r",
                pa.array(np.repeat(rng.integers(0, 2**40, N // 100), 100).astype(np.int64)),
                **{"lance-encoding:rle-threshold": "0.9"},
            )
        ],
        {"rle"},
        ("2.1", "2.2"),
    ),
    "dictionary_strings": (
        lambda rng: [
            _column("s", pa.array(list(rng.choice(WORDS, N))), **{"lance-encoding:dict-values-compression": "zstd"})
        ],
        {"inline_bitpacking", "variable"},
        ("2.1", "2.2"),
    ),
    "dictionary_zstd_at_2_2": (
        lambda rng: [
            _column("s", pa.array(list(rng.choice(WORDS, N))), **{"lance-encoding:dict-values-compression": "zstd"})
        ],
        {"inline_bitpacking", "variable", "general", "buffer:ZSTD"},
        ("2.2",),
    ),
    "full_zip_fsst": (
        lambda rng: [
            _column("s", _words(rng, N), **{COMPRESSION: "fsst", "lance-encoding:structural-encoding": "fullzip"})
        ],
        {"full_zip_layout", "fsst"},
        ("2.1", "2.2"),
    ),
    "full_zip_zstd_per_value": (
        lambda rng: [
            _column(
                "b", pa.array([rng.bytes(33000) for _ in range(6)] + [None, b""], pa.binary()), **{COMPRESSION: "zstd"}
            )
        ],
        {"full_zip_layout", "general", "buffer:ZSTD"},
        ("2.1", "2.2"),
    ),
    "packed_struct": (
        lambda rng: [
            (
                pa.field(
                    "p", pa.struct([("x", pa.int32()), ("y", pa.float64())]), metadata={"lance-encoding:packed": "true"}
                ),
                pa.array([{"x": i, "y": i / 4} for i in range(N)], pa.struct([("x", pa.int32()), ("y", pa.float64())])),
            )
        ],
        {"packed_struct"},
        ("2.1", "2.2"),
    ),
    "variable_packed_struct": (
        lambda rng: [
            (
                pa.field("p", PACKED_TYPE, metadata={"lance-encoding:packed": "true"}),
                pa.array(
                    [
                        {"id": i, "name": f"{WORDS[i % 8]} {WORDS[i * 3 % 8]} {i}" * (i % 3), "score": i / 8}
                        for i in range(N)
                    ],
                    PACKED_TYPE,
                ),
            )
        ],
        {"full_zip_layout", "variable_packed_struct", "fsst"},
        ("2.2",),
    ),
    "nested_lists": (
        lambda rng: [
            _column(
                "l",
                pa.array(
                    [None if i % 5 == 0 else [None if j % 3 == 0 else j * i for j in range(i % 4)] for i in range(N)],
                    pa.list_(pa.int64()),
                ),
            )
        ],
        {"inline_bitpacking", "out_of_line_bitpacking"},
        ("2.1", "2.2"),
    ),
}


def _schemes(message: Message, found: set[str]) -> None:
    """Every compressive encoding and general codec under ``message``."""
    if isinstance(message, enc.CompressiveEncoding) and message.WhichOneof("compression"):
        found.add(message.WhichOneof("compression"))
    if isinstance(message, enc.BufferCompression):
        found.add("buffer:" + enc.CompressionScheme.Name(message.scheme).rsplit("_", 1)[-1])
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        for item in value if descriptor.is_repeated else [value]:
            _schemes(item, found)


def file_schemes(directory, name: str) -> set[str]:
    """The page layouts and compression schemes a data file uses."""
    found: set[str] = set()
    for column in read_v2_metadata(LocalStorage(directory), name).columns:
        for page in column.pages:
            wrapper = any_pb2.Any()
            wrapper.ParseFromString(page.encoding.direct.encoding)
            layout = enc.PageLayout()
            layout.ParseFromString(wrapper.value)
            found.add(layout.WhichOneof("layout"))
            _schemes(layout, found)
    return found


def _write(directory, name: str, version: str):
    columns = CASES[name][0](np.random.default_rng(sum(map(ord, name))))
    schema = pa.schema([field for field, _ in columns])
    table = pa.table([array for _, array in columns], schema=schema)
    path = directory / "f.lance"
    with PylanceWriter(str(path), schema, version=version) as writer:
        writer.write_batch(table)
    return table


PARAMS = [(name, version) for name, (_, _, versions) in CASES.items() for version in versions]


@pytest.mark.parametrize("name, version", PARAMS)
def test_each_scheme_pylance_writes_is_in_the_file_and_read_row_for_row(tmp_path, name, version):
    table = _write(tmp_path, name, version)
    schemes = file_schemes(tmp_path, "f.lance")
    assert CASES[name][1] <= schemes, f"{name} at {version} holds {sorted(schemes)}"
    expected = PylanceReader(str(tmp_path / "f.lance")).read_all().to_table()
    assert expected.to_pylist() == table.to_pylist()
    actual = LanceFileReader(LocalStorage(tmp_path), "f.lance").read(arrow_schema=table.schema)
    assert actual.to_pylist() == expected.to_pylist()


HOSTILE = [
    "variable_packed_struct",
    "zstd_ints",
    "lz4_ints_level",
    "bss_floats",
    "fsst_strings",
    "full_zip_zstd_per_value",
    "nullable_ints",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_flipped_bytes_in_compressed_pages_raise_format_errors_only(tmp_path, name):
    """Property: whatever byte of a compressed page changes, the reader reads
    rows or raises a ``LanceFormatError`` naming the file, allocating less
    than ALLOCATION_LIMIT (60 seeded flips per file)."""
    table = _write(tmp_path, name, "2.2")
    original = (tmp_path / "f.lance").read_bytes()
    pages = [
        (int(position), int(size))
        for column in read_v2_metadata(LocalStorage(tmp_path), "f.lance").columns
        for page in column.pages
        for position, size in zip(page.buffer_offsets, page.buffer_sizes, strict=True)
        if size
    ]
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(60):
        position, size = pages[rng.integers(len(pages))]
        at = position + int(rng.integers(size))
        mutated = bytearray(original)
        mutated[at] ^= int(rng.integers(1, 256))
        (tmp_path / "m.lance").write_bytes(bytes(mutated))
        tracemalloc.start()
        try:
            LanceFileReader(LocalStorage(tmp_path), "m.lance").read(arrow_schema=table.schema)
        except LanceFormatError as error:
            assert "m.lance" in str(error)
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        assert peak < ALLOCATION_LIMIT


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_a_dataset_of_every_scheme_reads_through_the_manifest(tmp_path, version):
    """One dataset whose fields carry the metadata of every case of its
    version, written by ``lance.write_dataset`` in two data files: the
    reference ``Dataset`` reads pylance's rows, and the files hold the
    schemes the cases exist for."""
    columns = []
    expected: set[str] = set()
    for name, (build, schemes, versions) in CASES.items():
        if version not in versions or name == "full_zip_zstd_per_value":
            continue  # a column of 8 rows cannot share a table of N
        for field, array in build(np.random.default_rng(sum(map(ord, name)))):
            columns.append((field.with_name(f"{name}_{field.name}"), array))
        expected |= schemes
    table = pa.table([array for _, array in columns], schema=pa.schema([field for field, _ in columns]))
    dataset = lance.write_dataset(table, str(tmp_path / "ds"), data_storage_version=version, max_rows_per_file=N // 2)
    assert len(dataset.get_fragments()) == 2
    found: set[str] = set()
    for data_file in (tmp_path / "ds" / "data").iterdir():
        found |= file_schemes(data_file.parent, data_file.name)
    assert expected <= found, sorted(expected - found)
    assert Dataset.open(tmp_path / "ds").to_table().to_pylist() == dataset.to_table().to_pylist()
