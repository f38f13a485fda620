"""Transactions (transaction specification): pylance's transaction files of
every kind we can make it write, decoded, compared with pylance's own view and
re-encoded byte for byte; round trips; hostile bytes."""

from __future__ import annotations

import re
import shutil
import uuid as uuid_module

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import strategies
from reference_impl.errors import CommitConflictError, CorruptFileError, PathEscapeError
from reference_impl.manifest_file import decode_manifest_file, encode_manifest_file, read_manifest_file
from reference_impl.naming import committed_manifests
from reference_impl.storage import LocalStorage, Storage
from reference_impl.transactions import (
    OPERATIONS,
    Append,
    CreateIndex,
    Restore,
    Transaction,
    UnknownOperation,
    UpdateConfig,
    UpdateMap,
    UpdateMapEntry,
    UpdateMode,
    decode_transaction,
    read_transaction_file,
    write_transaction_file,
)
from reference_impl.wire import transaction_pb2

lance = pytest.importorskip("lance")


def _examples(factor: int) -> int:
    """``factor`` times the example count of the active Hypothesis profile
    (tests/conftest.py), so dev/ci/nightly all scale this file."""
    return max(1, factor * settings.default.max_examples)


def _rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table({"a": pa.array(ids, pa.int64()), "b": pa.array([f"r{i}" for i in ids])})


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """One dataset taken through every operation pylance's Python API offers,
    plus a shallow clone of it. Returns (dataset path, clone path)."""
    root = tmp_path_factory.mktemp("txn")
    path, clone = root / "ds", root / "clone"
    lance.write_dataset(_rows(0, 600), path, max_rows_per_file=200, enable_stable_row_ids=True)
    ds = lance.write_dataset(_rows(600, 100), path, mode="append")
    ds.delete("a % 7 = 0")
    ds.add_columns({"c": "a * 2"})
    ds.drop_columns(["c"])
    ds.alter_columns({"path": "b", "name": "bb"})
    ds.update({"a": "a + 1000"}, where="a > 650")
    ds.optimize.compact_files()
    ds = lance.dataset(path)
    ds.create_scalar_index("a", "BTREE")
    ds.update_config({"k": "v"})
    ds.update_schema_metadata({"sk": "sv"})
    ds.update_field_metadata({"bb": {"fk": "fv"}})
    ds.update_metadata({"tk": "tv"})
    ds.update_metadata({"tk": None})
    upsert = pa.table({"a": pa.array([1, 5000], pa.int64()), "bb": ["one", "new"]})
    ds.merge_insert("a").when_matched_update_all().when_not_matched_insert_all().execute(upsert)
    ds = lance.dataset(path)
    ds.add_bases([lance.DatasetBasePath(str(root / "other"), name="other", is_dataset_root=True)])
    lance.dataset(path, version=2).restore()
    ds = lance.write_dataset(_rows(0, 10), path, mode="overwrite")
    ds.shallow_clone(clone, ds.version)
    return path, clone


def _transactions(path) -> dict[int, tuple[str, Transaction]]:
    """version -> (transaction file name, decoded transaction)."""
    storage = LocalStorage(path)
    manifests, _ = committed_manifests(storage)
    out = {}
    for version, relpath in sorted(manifests.items()):
        name = read_manifest_file(storage, relpath).manifest.transaction_file
        out[version] = (name, read_transaction_file(storage, name))
    return out


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_history_covers_the_operations(history):
    path, clone = history
    names = [t.operation_name for _, t in _transactions(path).values()]
    names += [t.operation_name for _, t in _transactions(clone).values()]
    required = {
        "overwrite", "append", "delete", "merge", "project", "update", "rewrite",
        "create_index", "update_config", "restore", "update_bases", "clone",
    }  # fmt: skip
    assert required <= set(names)
    assert None not in names


@pytest.mark.parametrize("which", ["dataset", "clone"])
def test_transactions_agree_with_pylance(history, which):
    path = history[0] if which == "dataset" else history[1]
    ds = lance.dataset(path)
    for version, (name, txn) in _transactions(path).items():
        theirs = ds.read_transaction(version)
        assert name == f"{theirs.read_version}-{theirs.uuid}.txn"
        assert (txn.read_version, txn.uuid, txn.properties) == (
            theirs.read_version,
            theirs.uuid,
            theirs.transaction_properties or {},
        )
        kind = type(theirs.operation).__name__
        if kind != "BaseOperation":  # pylance's Python layer hides a few kinds
            assert txn.operation_name == _snake(kind), f"version {version}"


@pytest.mark.parametrize("which", ["dataset", "clone"])
def test_pylance_files_re_encode_byte_for_byte(history, which):
    """from_proto then to_proto loses nothing: the bytes come back identical."""
    path = history[0] if which == "dataset" else history[1]
    for name, txn in _transactions(path).values():
        raw = (path / "_transactions" / name).read_bytes()
        assert txn.to_proto().SerializeToString() == raw, name
        assert txn.unknown_fields == b""


def _by_name(path) -> dict[str, list[Transaction]]:
    out: dict[str, list[Transaction]] = {}
    for _, txn in _transactions(path).values():
        out.setdefault(txn.operation_name, []).append(txn)
    return out


def test_operation_contents(history):
    path, clone = history
    ops = _by_name(path)
    assert ops["overwrite"][0].read_version == 0
    assert sum(f.physical_rows for f in ops["overwrite"][0].operation.fragments) == 600
    assert [f.name for f in ops["overwrite"][0].operation.schema.top_level()] == ["a", "b"]
    (append,) = ops["append"]
    assert [f.physical_rows for f in append.operation.fragments] == [100]
    delete = ops["delete"][0].operation
    assert delete.predicate == "a % 7 = 0"
    assert all(f.deletion_file is not None for f in delete.updated_fragments)
    (merge,) = ops["merge"]
    assert [f.name for f in merge.operation.schema.top_level()] == ["a", "b", "c"]
    assert all(len(f.files) == 2 for f in merge.operation.fragments)
    drop, rename = ops["project"]
    assert [f.name for f in drop.operation.schema.top_level()] == ["a", "b"]
    assert [f.name for f in rename.operation.schema.top_level()] == ["a", "bb"]
    rewrite = ops["rewrite"][0].operation
    assert rewrite.groups and not rewrite.old_fragments
    for group in rewrite.groups:
        assert sum(f.num_rows for f in group.old_fragments) == sum(f.physical_rows for f in group.new_fragments)
    (index_txn,) = ops["create_index"]
    (index,) = index_txn.operation.new_indices
    assert (index.name, index.fields, index.fragment_ids()) == (
        "a_idx",
        [0],
        [f.fragment_id for f in lance.dataset(path, version=index_txn.read_version).get_fragments()],
    )
    configs = [t.operation for t in ops["update_config"]]
    assert configs[0].config_updates == UpdateMap([UpdateMapEntry("k", "v")])
    assert configs[1].schema_metadata_updates == UpdateMap([UpdateMapEntry("sk", "sv")])
    assert configs[2].field_metadata_updates == {1: UpdateMap([UpdateMapEntry("fk", "fv")])}
    assert configs[3].table_metadata_updates == UpdateMap([UpdateMapEntry("tk", "tv")])
    assert configs[4].table_metadata_updates == UpdateMap([UpdateMapEntry("tk", None)])
    assert configs[4].table_metadata_updates.apply({"tk": "tv", "x": "y"}) == {"x": "y"}
    updates = [t.operation for t in ops["update"]]
    assert all(u.update_mode is UpdateMode.REWRITE_ROWS for u in updates)
    assert all(u.new_fragments for u in updates)
    (restore,) = ops["restore"]
    assert restore.operation == Restore(version=2)
    (bases,) = ops["update_bases"]
    assert [(b.name, b.is_dataset_root) for b in bases.operation.new_bases] == [("other", True)]
    ((clone_txn,),) = [_by_name(clone)["clone"]]
    assert clone_txn.operation.is_shallow and clone_txn.operation.ref_path == str(path)
    assert clone_txn.operation.ref_version == lance.dataset(path).version


@pytest.mark.parametrize("embed", [False, True], ids=["file", "embedded"])
def test_pylance_reads_a_transaction_we_wrote(history, tmp_path, embed):
    """In a copy of the dataset, swap the transaction of the restore commit for
    one built here (same read version and uuid, so the manifest still names
    its file). pylance 14 embeds each transaction in the manifest file too, so
    the manifest is re-encoded by the reference: without a transaction section
    (pylance must read our file) or with ours embedded (``transaction_section``
    as table.proto numbers it). Either way pylance reports our operation."""
    copy = tmp_path / "copy"
    shutil.copytree(history[0], copy)
    storage = LocalStorage(copy)
    version, (name, original) = next((v, e) for v, e in _transactions(copy).items() if e[1].operation_name == "restore")
    ours = Transaction(
        read_version=original.read_version,
        uuid=original.uuid,
        operation=UpdateConfig(config_updates=UpdateMap([UpdateMapEntry("written-by", "reference")])),
        properties={"__lance_commit_message": "hello from the reference"},
    )
    with pytest.raises(CommitConflictError):
        write_transaction_file(storage, ours)
    storage.delete(f"_transactions/{name}")
    assert write_transaction_file(storage, ours) == name
    assert read_transaction_file(storage, name) == ours
    assert ours.commit_message == "hello from the reference"

    manifests, _ = committed_manifests(storage)
    decoded = read_manifest_file(storage, manifests[version])
    storage.delete(manifests[version])
    storage.put_if_not_exists(
        manifests[version], encode_manifest_file(decoded.manifest, decoded.indices, ours if embed else None)
    )

    theirs = lance.dataset(copy).read_transaction(version)
    assert type(theirs.operation).__name__ == "UpdateConfig"
    assert theirs.operation.config_updates.updates == {"written-by": "reference"}
    assert theirs.transaction_properties == {"__lance_commit_message": "hello from the reference"}


def test_pylance_embeds_the_transaction_at_field_23(history):
    """pylance 14 keeps a copy of each transaction inside the manifest file,
    but records its position in Manifest field 23, which neither the specification's
    nor this project's table.proto knows (their transaction_section is field
    21). Pinned here because the manifest reader misses it."""
    from google.protobuf.unknown_fields import UnknownFieldSet

    from reference_impl.manifest_file import read_section
    from reference_impl.wire import table_pb2

    path = history[0]
    storage = LocalStorage(path)
    manifests, _ = committed_manifests(storage)
    known = table_pb2.Manifest.DESCRIPTOR.fields_by_number.get(23)
    for version, relpath in manifests.items():
        decoded = read_manifest_file(storage, relpath)
        data = storage.read(relpath)
        msg = table_pb2.Manifest()
        msg.ParseFromString(read_section(data, decoded.footer.manifest_position, relpath, "manifest"))
        assert 21 not in [f.number for f, _ in msg.ListFields()], "pylance 14 leaves field 21 unset"
        if known is not None:  # once the project's proto learns the field
            positions = [getattr(msg, known.name)] if msg.HasField(known.name) else []
        else:
            positions = [f.data for f in UnknownFieldSet(msg) if f.field_number == 23]
        assert len(positions) == 1, f"version {version}"
        embedded = read_section(data, positions[0], relpath, "transaction")
        name = decoded.manifest.transaction_file
        assert embedded == storage.read(f"_transactions/{name}"), f"version {version}"
        assert decode_transaction(embedded, relpath) == read_transaction_file(storage, name)


def test_transaction_embedded_in_a_manifest(history):
    """manifest_file keeps working with the typed transactions."""
    path = history[0]
    storage = LocalStorage(path)
    manifests, _ = committed_manifests(storage)
    for relpath in manifests.values():
        decoded = read_manifest_file(storage, relpath)
        txn = read_transaction_file(storage, decoded.manifest.transaction_file)
        again = decode_manifest_file(encode_manifest_file(decoded.manifest, decoded.indices, txn), "again")
        assert again.transaction == txn


# -- unknown operations ------------------------------------------------------------------


def _field_bytes(number: int, payload: bytes) -> bytes:
    key = (number << 3) | 2
    out = bytearray()
    for value in (key, len(payload)):
        while value >= 0x80:
            out.append(value & 0x7F | 0x80)
            value >>= 7
        out.append(value)
    return bytes(out) + payload


def test_unknown_operation_round_trips_and_is_flagged():
    base = transaction_pb2.Transaction(read_version=3, uuid=str(uuid_module.uuid4())).SerializeToString()
    data = base + _field_bytes(150, b"\x08\x01")
    msg = transaction_pb2.Transaction()
    msg.ParseFromString(data)
    txn = Transaction.from_proto(msg)
    assert txn.operation == UnknownOperation((150,))
    assert txn.operation_name is None and not txn.has_known_operation
    assert txn.to_proto().SerializeToString() == data
    unset = Transaction.from_proto(transaction_pb2.Transaction(read_version=1, uuid="u"))
    assert unset.operation == UnknownOperation(()) and not unset.has_known_operation
    known = Transaction.create(1, Restore(4))
    assert known.has_known_operation and known.operation_name == "restore"


def test_unknown_operation_names_each_unknown_field_once_in_order():
    """Several unknown top-level fields (one repeated): their numbers in the
    order they came, each once; the bytes still round-trip."""
    base = transaction_pb2.Transaction(read_version=3, uuid="u").SerializeToString()
    data = base + _field_bytes(151, b"\x08\x01") + _field_bytes(150, b"") + _field_bytes(151, b"\x10\x02")
    msg = transaction_pb2.Transaction()
    msg.ParseFromString(data)
    txn = Transaction.from_proto(msg)
    assert txn.operation == UnknownOperation((151, 150))
    assert txn.to_proto().SerializeToString() == data


def test_unknown_top_level_field_next_to_a_known_operation_is_kept():
    msg = Transaction.create(1, Append()).to_proto()
    data = msg.SerializeToString() + _field_bytes(7, b"future")
    parsed = transaction_pb2.Transaction()
    parsed.ParseFromString(data)
    txn = Transaction.from_proto(parsed)
    assert txn.operation == Append() and txn.unknown_fields
    assert txn.to_proto() == parsed


# -- round trips -------------------------------------------------------------------------

transactions = strategies.wire_transactions()


def test_every_operation_has_a_strategy_and_a_class():
    oneof = transaction_pb2.Transaction.DESCRIPTOR.oneofs_by_name["operation"]
    assert set(OPERATIONS) == {f.name for f in oneof.fields}


@settings(max_examples=_examples(5))
@given(transactions)
def test_transactions_round_trip(txn):
    """For any transaction, decoding its serialized form gives it back, and
    re-encoding the decoded message gives the same message."""
    msg = transaction_pb2.Transaction()
    msg.ParseFromString(txn.to_proto().SerializeToString())
    back = Transaction.from_proto(msg)
    assert back == txn
    assert back.to_proto() == msg
    assert back.operation_name == type(txn.operation).NAME


@settings(max_examples=_examples(1))
@given(transactions)
def test_transaction_files_round_trip(tmp_path_factory, txn):
    """write_transaction_file then read_transaction_file gives the transaction
    back, under the name {read_version}-{uuid}.txn."""
    storage = LocalStorage(tmp_path_factory.mktemp("files"))
    name = write_transaction_file(storage, txn)
    assert name == f"{txn.read_version}-{txn.uuid}.txn"
    assert read_transaction_file(storage, name) == txn


# -- hostile bytes -----------------------------------------------------------------------


def _install(tmp_path, name: str, data: bytes) -> Storage:
    storage = LocalStorage(tmp_path)
    storage.put_if_not_exists(f"_transactions/{name}", data)
    return storage


@pytest.mark.parametrize(
    "data",
    [b"\xff\xff\xff\xff garbage", b"", b"\x12\x05ab", b"\x0a\x02\xc3\x28"],
    ids=["garbage", "empty", "truncated", "invalid utf-8"],
)
def test_garbage_is_corrupt(tmp_path, data):
    storage = _install(tmp_path, "1-x.txn", data)
    with pytest.raises(CorruptFileError, match="1-x.txn"):
        read_transaction_file(storage, "1-x.txn")


def test_truncated_real_file_is_corrupt(history, tmp_path):
    name, _ = next(iter(_transactions(history[0]).values()))
    data = (history[0] / "_transactions" / name).read_bytes()
    storage = _install(tmp_path, name, data[: len(data) // 2])
    with pytest.raises(CorruptFileError, match=re.escape(name)):
        read_transaction_file(storage, name)


def test_name_must_match_content(tmp_path):
    txn = Transaction.create(4, Restore(1))
    storage = _install(tmp_path, f"5-{txn.uuid}.txn", txn.to_proto().SerializeToString())
    with pytest.raises(CorruptFileError, match="read version 5"):
        read_transaction_file(storage, f"5-{txn.uuid}.txn")
    with pytest.raises(PathEscapeError):
        read_transaction_file(storage, "../escape.txn")


def test_bad_uuid_inside_an_operation_is_corrupt():
    msg = Transaction.create(1, CreateIndex()).to_proto()
    index = msg.create_index.new_indices.add(name="i")
    index.uuid.uuid = b"short"
    with pytest.raises(CorruptFileError, match="ctx"):
        Transaction.from_proto(msg, "ctx")
    with pytest.raises(CorruptFileError):
        decode_transaction(msg.SerializeToString(), "file.txn")


@settings(max_examples=_examples(4))
@given(st.binary(max_size=200))
def test_random_bytes_only_raise_corrupt(data):
    """Random bytes either decode or raise CorruptFileError, nothing else."""
    try:
        decode_transaction(data, "random.txn", "1-x.txn")
    except CorruptFileError:
        pass


def test_deprecated_update_config_fields_round_trip():
    msg = transaction_pb2.Transaction(read_version=2, uuid="u")
    msg.update_config.upsert_values["a"] = "1"
    msg.update_config.delete_keys.append("b")
    msg.update_config.schema_metadata["c"] = "3"
    msg.update_config.field_metadata[4].metadata["d"] = "4"
    txn = Transaction.from_proto(msg)
    assert txn.operation == UpdateConfig(
        upsert_values={"a": "1"}, delete_keys=["b"], schema_metadata={"c": "3"}, field_metadata={4: {"d": "4"}}
    )
    assert txn.to_proto() == msg


def test_empty_sub_messages_keep_their_presence():
    """An UpdateMap with no entries is not the same as no UpdateMap."""
    txn = Transaction.create(1, UpdateConfig(config_updates=UpdateMap()))
    msg = txn.to_proto()
    assert msg.update_config.HasField("config_updates")
    assert not msg.update_config.HasField("table_metadata_updates")
    assert Transaction.from_proto(msg) == txn
    assert Transaction.from_proto(Transaction.create(1, Append()).to_proto()).operation == Append()
