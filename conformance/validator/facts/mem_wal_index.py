"""The MemWAL index of a version, decoded once per run, for the MemWAL rules
(:mod:`conformance.validator.rules.mem_wal` and the sharding rules).

A MemWAL index is an index entry whose details are a ``MemWalIndexDetails``
message, recognised by the type URL of its details compared without regard
to case (the part after the last ``/`` is ``lance.table.MemWalIndexDetails``;
pylance writes it under the index name ``__lance_mem_wal``). pylance 14 sets
field 12, "maintain every index", which table.proto does not define; it is
read from the unknown fields.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.unknown_fields import UnknownFieldSet

from reference_impl.errors import CorruptFileError
from reference_impl.index_metadata import IndexMetadata
from reference_impl.wire import table_pb2

from ..context import VersionView

MEM_WAL_TYPE_NAME = "lance.table.memwalindexdetails"
#: pylance 14's "maintain all indexes" flag (not in table.proto).
PYLANCE_MAINTAIN_ALL_FIELD = 12


def type_name(type_url: str | None) -> str:
    """The message name of an index's details type URL, lower case."""
    return (type_url or "").rsplit("/", 1)[-1].lower()


@dataclass
class MemWalIndex:
    position: int
    index: IndexMetadata
    details: table_pb2.MemWalIndexDetails
    maintain_all: bool


def decode_details(index: IndexMetadata) -> tuple[table_pb2.MemWalIndexDetails, bool]:
    message = table_pb2.MemWalIndexDetails()
    try:
        message.ParseFromString(index.details)
        maintain_all = any(
            u.field_number == PYLANCE_MAINTAIN_ALL_FIELD and u.wire_type == 0 and u.data != 0
            for u in UnknownFieldSet(message)
        )
    except Exception as exc:  # noqa: BLE001 - protobuf raises several types on hostile bytes
        raise CorruptFileError(f"index {index.name!r}", f"details do not decode as MemWalIndexDetails: {exc}") from None
    return message, maintain_all


def mem_wal_entries(view: VersionView) -> list[tuple[int, IndexMetadata]]:
    """(position, index) of every MemWAL index entry of the version."""
    return [
        (i, index)
        for i, index in enumerate(view.manifest_file.indices or [])
        if type_name(index.type_url) == MEM_WAL_TYPE_NAME
    ]


def loaded_details(view: VersionView, position: int, index: IndexMetadata):
    """The decoded details of the entry at ``position``, once per run (a
    :class:`~conformance.validator.context.Loaded`)."""
    return view.dataset.cached(("mem-wal", view.version, view.manifest_path, position), decode_details, index)


def mem_wal_indexes(view: VersionView):
    """Every MemWAL index of the version whose details decode."""
    for i, index in mem_wal_entries(view):
        loaded = loaded_details(view, i, index)
        if loaded.ok:
            yield MemWalIndex(i, index, *loaded.value)


def details_location(view: VersionView, mem_wal: MemWalIndex, detail: str = "") -> str:
    return view.at(f"indices[{mem_wal.position}].index_details" + (f".{detail}" if detail else ""))
