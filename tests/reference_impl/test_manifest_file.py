"""The manifest file container (table format: manifest), on real pylance
manifests and on hostile bytes."""

from __future__ import annotations

import struct
import tracemalloc

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_impl.dataset import Dataset
from reference_impl.errors import CorruptFileError, LanceFormatError
from reference_impl.fragments import DataFile, Fragment, format_version_of, is_legacy_version
from reference_impl.manifest import Manifest
from reference_impl.manifest_file import FOOTER, decode_manifest_file, decode_manifest_header, encode_manifest_file
from reference_impl.naming import resolve_version
from reference_impl.schema import Field, Schema
from reference_impl.storage import LocalStorage
from reference_impl.wire import table_pb2

lance = pytest.importorskip("lance")


@pytest.fixture(scope="module")
def indexed_dataset(tmp_path_factory):
    """A pylance dataset whose latest manifest has an index section."""
    path = tmp_path_factory.mktemp("manifests") / "ds"
    table = pa.table({"id": pa.array(range(40), pa.int64()), "s": [str(i) for i in range(40)]})
    lance.write_dataset(table, path, max_rows_per_file=10)
    lance.dataset(path).create_scalar_index("id", "BTREE")
    return path


def latest_manifest_bytes(path) -> tuple[bytes, str]:
    storage = LocalStorage(path)
    _, relpath, _ = resolve_version(storage, None)
    return storage.read(relpath), relpath


def test_real_manifest_decodes_with_its_sections(indexed_dataset):
    data, relpath = latest_manifest_bytes(indexed_dataset)
    decoded = decode_manifest_file(data, relpath)
    assert decoded.manifest.version == lance.dataset(indexed_dataset).version
    assert decoded.manifest.index_section is not None
    assert [i.name for i in decoded.indices] == ["id_idx"]
    assert decoded.indices[0].fragment_ids() == [0, 1, 2, 3]
    # pylance places the manifest last, right before the footer.
    body = decode_manifest_file(data, relpath).footer.manifest_position
    (length,) = struct.unpack_from("<I", data, body)
    assert body + 4 + length == len(data) - FOOTER.size


def test_encode_then_decode_is_the_identity(indexed_dataset):
    data, relpath = latest_manifest_bytes(indexed_dataset)
    original = decode_manifest_file(data, relpath)
    again = decode_manifest_file(
        encode_manifest_file(original.manifest, original.indices, original.transaction), "again"
    )
    assert again.manifest == original.manifest
    assert again.indices == original.indices
    assert again.transaction == original.transaction


def _corruptions(data: bytes):
    position = struct.unpack_from("<q", data, len(data) - 16)[0]
    yield "truncated", data[: len(data) // 2]
    yield "shorter than a footer", data[-10:]
    yield "empty", b""
    yield "wrong magic", data[:-4] + b"LANX"
    yield "footer position past the end", data[:-16] + struct.pack("<qHH4s", len(data) * 4, 0, 2, b"LANC")
    yield "negative footer position", data[:-16] + struct.pack("<qHH4s", -8, 0, 2, b"LANC")
    yield "length past the end", data[:position] + struct.pack("<I", 0xFFFFFFF0) + data[position + 4 :]
    garbage = bytes([0xFF] * 64)
    body = struct.pack("<I", len(garbage)) + garbage
    yield "garbage protobuf", body + struct.pack("<qHH4s", 0, 0, 2, b"LANC")


@pytest.mark.parametrize("case", [name for name, _ in _corruptions(b"\0" * 64)])
def test_malformed_manifest_raises_the_documented_error_naming_the_file(indexed_dataset, tmp_path, case):
    data, relpath = latest_manifest_bytes(indexed_dataset)
    corrupted = dict(_corruptions(data))[case]
    (tmp_path / "_versions").mkdir()
    target = tmp_path / relpath
    target.write_bytes(corrupted)
    with pytest.raises(CorruptFileError) as error:
        Dataset.open(tmp_path)
    assert str(target) in str(error.value)
    assert error.value.__cause__ is None or isinstance(error.value.__cause__, LanceFormatError)


def test_a_huge_length_field_allocates_nothing_like_it(indexed_dataset, tmp_path):
    data, relpath = latest_manifest_bytes(indexed_dataset)
    position = struct.unpack_from("<q", data, len(data) - 16)[0]
    hostile = data[:position] + struct.pack("<I", 0xFFFFFFFF) + data[position + 4 :]
    tracemalloc.start()
    with pytest.raises(CorruptFileError, match="runs past the end"):
        decode_manifest_file(hostile, "hostile")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 10 * len(data) + (1 << 20)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(data=st.data())
def test_random_byte_corruption_never_escapes_as_a_foreign_exception(indexed_dataset, data):
    """Property: whatever bytes are flipped, inserted or cut, decoding a
    manifest file (whole, or its header as the commit loop reads newer
    versions) either succeeds or raises a LanceFormatError."""
    original, _ = latest_manifest_bytes(indexed_dataset)
    mutated = bytearray(original)
    for _ in range(data.draw(st.integers(1, 8))):
        kind = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        at = data.draw(st.integers(0, max(len(mutated) - 1, 0)))
        if kind == "flip" and mutated:
            mutated[at] = data.draw(st.integers(0, 255))
        elif kind == "cut":
            del mutated[at : at + data.draw(st.integers(1, 32))]
        else:
            mutated[at:at] = data.draw(st.binary(min_size=1, max_size=16))
    for decode in (decode_manifest_file, decode_manifest_header):
        try:
            decode(bytes(mutated), "fuzzed")
        except LanceFormatError:
            pass


def _old_revision_manifest_bytes() -> bytes:
    """A manifest as the older table.proto revision (table-proto-2024-01) wrote it: no
    data_format, no file versions or sizes in DataFile, no transaction
    section, and a max_fragment_id of 0 left off the wire (it had no
    presence then)."""
    fields = [Field(id=0, name="id", logical_type="int64", nullable=True)]
    manifest = Manifest(
        version=1,
        schema=Schema(fields, {"note": b"old"}),
        fragments=[Fragment(id=0, files=[DataFile("a.lance", [0], [], 0, 0)], physical_rows=3)],
        max_fragment_id=0,
        transaction_file="0-6a8c1e1e-4f1b-4a3c-9c5c-9d3f2b6f0c11.txn",
    )
    message = manifest.to_proto()
    message.ClearField("max_fragment_id")
    # Field 5 was named `metadata` then; the bytes are identical.
    assert message.schema_metadata["note"] == b"old"
    payload = message.SerializeToString()
    return struct.pack("<I", len(payload)) + payload + struct.pack("<qHH4s", 0, 0, 1, b"LANC")


def test_manifest_of_the_older_proto_revision_reads(tmp_path):
    decoded = decode_manifest_file(_old_revision_manifest_bytes(), "old.manifest")
    manifest = decoded.manifest
    assert manifest.version == 1
    assert manifest.data_format is None
    assert manifest.max_fragment_id is None  # absent, not zero: the reader must infer it
    assert manifest.schema.metadata == {"note": b"old"}
    assert manifest.fragments[0].files[0].is_legacy
    assert decoded.footer.major == 0 and decoded.footer.minor == 1
    assert table_pb2.Manifest.FromString(_old_revision_manifest_bytes()[4:-16]).version == 1


@given(st.integers(0, 3), st.integers(0, 5))
def test_a_recorded_version_pair_reads_as_its_data_file_does(major, minor):
    """The version-level answers the validator counts by (major, minor) pair,
    without a DataFile, agree with a DataFile recorded with that pair:
    whether it is legacy, and which file version it means."""
    data_file = DataFile("x.lance", [0], [0], file_major_version=major, file_minor_version=minor)
    assert is_legacy_version(major, minor) == data_file.is_legacy
    assert format_version_of(major, minor) == data_file.format_version
    assert data_file.is_legacy == (major == 0 and minor in (0, 1, 2))
    assert data_file.format_version == ((2, 0) if (major, minor) == (0, 3) else (major, minor))


def test_embedded_transaction_of_a_pylance_manifest_equals_its_transaction_file(indexed_dataset):
    """pylance 14 records the section position in field 23 (not the spec's
    21); the reader must still find the transaction and it must be the one in
    _transactions/."""
    from reference_impl.transactions import read_transaction_file

    dataset = Dataset.open(indexed_dataset)
    embedded = dataset.manifest_file.transaction
    assert embedded is not None, "the embedded transaction was not found"
    assert dataset.manifest.transaction_section_field in (21, 23)
    on_disk = read_transaction_file(dataset.storage, dataset.manifest.transaction_file)
    assert embedded == on_disk
    assert embedded.operation_name == "create_index"


def test_the_header_of_a_pylance_manifest_has_its_version_and_transaction(indexed_dataset):
    """The header the commit loop reads of a newer version (pylance 14 writes
    the transaction section position as field 23) gives the same version and
    transaction as decoding the whole file, and decodes to that file."""
    data, relpath = latest_manifest_bytes(indexed_dataset)
    whole = decode_manifest_file(data, relpath)
    header = decode_manifest_header(data, relpath)
    assert header.transaction is not None
    assert (header.version, header.transaction_file, header.transaction) == (
        whole.manifest.version,
        whole.manifest.transaction_file,
        whole.transaction,
    )
    assert header.transaction_bytes == whole.transaction_bytes
    assert header.decode() == whole


def test_the_writer_records_the_transaction_position_in_field_21(indexed_dataset):
    data, relpath = latest_manifest_bytes(indexed_dataset)
    original = decode_manifest_file(data, relpath)
    rewritten = encode_manifest_file(original.manifest, original.indices, original.transaction)
    position = struct.unpack_from("<q", rewritten, len(rewritten) - 16)[0]
    (length,) = struct.unpack_from("<I", rewritten, position)
    message = table_pb2.Manifest.FromString(rewritten[position + 4 : position + 4 + length])
    assert message.HasField("transaction_section")
    assert decode_manifest_file(rewritten, "again").transaction == original.transaction


def test_a_relative_base_path_resolves_against_the_dataset_root(tmp_path, monkeypatch):
    root = tmp_path / "ds"
    (root / "elsewhere").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    base = LocalStorage(root).for_base("elsewhere")
    assert base.root == root / "elsewhere"
    assert not base.writable


def test_an_oversized_index_bitmap_is_refused_before_expansion(indexed_dataset):
    """A run-length Roaring bitmap of a few kilobytes can claim tens of
    millions of fragment ids; the reader must refuse it without building a
    list of that size."""
    from pyroaring import BitMap

    data, relpath = latest_manifest_bytes(indexed_dataset)
    original = decode_manifest_file(data, relpath)
    hostile = BitMap()
    hostile.add_range(0, 2**25)
    hostile.run_optimize()
    original.indices[0].fragment_bitmap = hostile.serialize()
    assert len(original.indices[0].fragment_bitmap) < 10_000
    encoded = encode_manifest_file(original.manifest, original.indices, original.transaction)
    tracemalloc.start()
    with pytest.raises(CorruptFileError, match="more than any table has"):
        decode_manifest_file(encoded, "hostile")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 10 << 20  # a list of 2**25 ints would take about 1 GiB


def test_a_manifest_read_without_its_transaction_is_otherwise_the_same(indexed_dataset):
    """``with_transaction=False`` (describe) leaves the embedded transaction
    undecoded and nothing else: the manifest and indices are those of a full
    decode, the transaction None."""
    data, relpath = latest_manifest_bytes(indexed_dataset)
    full = decode_manifest_file(data, relpath)
    light = decode_manifest_file(data, relpath, with_transaction=False)
    assert full.transaction is not None and light.transaction is None
    assert (light.manifest, light.indices, light.footer) == (full.manifest, full.indices, full.footer)


def test_a_manifest_read_without_its_fragments_keeps_their_messages(indexed_dataset):
    """``with_fragments=False`` (describe) leaves the fragments as parsed
    messages: ``manifest.fragments`` is empty, ``fragment_messages`` decode
    to the fragments of a full decode, and the rest of the manifest, the
    indices and the transaction are those of a full decode."""
    data, relpath = latest_manifest_bytes(indexed_dataset)
    full = decode_manifest_file(data, relpath)
    light = decode_manifest_file(data, relpath, with_fragments=False)
    assert full.manifest.fragments and full.fragment_messages is None
    assert light.manifest.fragments == [] and light.fragment_messages is not None
    assert [Fragment.from_proto(message) for message in light.fragment_messages] == full.manifest.fragments
    light.manifest.fragments = full.manifest.fragments
    assert (light.manifest, light.indices, light.footer, light.transaction) == (
        full.manifest,
        full.indices,
        full.footer,
        full.transaction,
    )


def test_a_dataset_opened_without_its_fragments_refuses_to_count_or_list_them(indexed_dataset):
    """A dataset opened ``with_fragments=False`` (for describe) holds no
    decoded fragments: asking for them or for its row count is refused
    rather than answered as if the table were empty."""
    light = Dataset.open(indexed_dataset, with_fragments=False)
    assert Dataset.open(indexed_dataset).count_rows() > 0
    for ask in (lambda: light.fragments, light.count_rows):
        with pytest.raises(ValueError, match="with_fragments=False"):
            ask()


def test_a_transaction_section_that_does_not_parse_is_refused_even_when_not_decoded(indexed_dataset):
    """Skipping the decode does not skip the check that the section is there
    and parses: a garbled section is still a CorruptFileError naming it."""
    data, relpath = latest_manifest_bytes(indexed_dataset)
    position = decode_manifest_file(data, relpath).manifest.transaction_section
    assert position is not None
    (length,) = struct.unpack_from("<I", data, position)
    garbled = data[: position + 4] + b"\xff" * length + data[position + 4 + length :]
    with pytest.raises(CorruptFileError, match="transaction section"):
        decode_manifest_file(garbled, relpath, with_transaction=False)


def test_fragments_go_through_the_decoder_given(indexed_dataset):
    """A reader of many versions passes a fragment decoder (the validator
    keeps one object per distinct fragment); every fragment goes through it."""
    data, relpath = latest_manifest_bytes(indexed_dataset)
    seen = []

    def decoder(message):
        seen.append(message.id)
        return Fragment.from_proto(message)

    decoded = decode_manifest_file(data, relpath, decoder)
    assert seen == [f.id for f in decoded.manifest.fragments] == [0, 1, 2, 3]
