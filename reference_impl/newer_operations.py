"""The operations the newest ``transaction.proto`` adds (read 2026-11-29):
``DataOverlay`` (field 115) and ``ReserveRowIds`` (field 116).

Kept apart from :mod:`reference_impl.transactions`, which registers them
beside the older fifteen, so that module stays one message per dataclass of
the proto the project was built on.

* :class:`ReserveRowIds` (transaction page, "ReserveRowIds"): moves
  ``next_row_id`` past ``num_row_ids`` ids and changes no fragment; only a
  table with stable row ids may take one. The reference writer commits it.
* :class:`DataOverlay` (transaction page, "DataOverlay"; ``DataOverlayFile``
  of table.proto): overlay files appended to fragments. Experimental (reader
  and writer feature flag 64), and the overlay page it points to
  (``data_overlay_file.md``) is not among the stored upstream pages, so the
  reference decodes, re-encodes and judges conflicts of the transaction but
  does not commit it (:mod:`reference_impl.commit.build` refuses it).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field

from google.protobuf.unknown_fields import UnknownFieldSet

from .fragments import DataFile
from .wire import table_pb2, transaction_pb2

_PB = transaction_pb2.Transaction


@dataclass
class ReserveRowIds:
    """Stable row ids set aside: ``next_row_id`` grows by ``num_row_ids``."""

    NAME = "reserve_row_ids"
    num_row_ids: int = 0

    @classmethod
    def from_proto(cls, msg: _PB.ReserveRowIds) -> ReserveRowIds:
        return cls(msg.num_row_ids)

    def to_proto(self) -> _PB.ReserveRowIds:
        return _PB.ReserveRowIds(num_row_ids=self.num_row_ids)


@dataclass
class DataOverlayFile:
    """One overlay file (table.proto ``DataOverlayFile``). Exactly one of
    ``shared_offset_bitmap`` (one Roaring bitmap for every field) and
    ``field_offset_bitmaps`` (one per field of ``data_file.fields``) is set
    when the coverage is given; both None when it is absent."""

    data_file: DataFile | None = None
    shared_offset_bitmap: bytes | None = None
    field_offset_bitmaps: list[bytes] | None = None
    #: The version whose commit added the overlay (0 until a commit sets it).
    committed_version: int = 0

    @property
    def fields(self) -> list[int]:
        return list(self.data_file.fields) if self.data_file is not None else []

    @classmethod
    def from_proto(cls, msg: table_pb2.DataOverlayFile) -> DataOverlayFile:
        coverage = msg.WhichOneof("coverage")
        return cls(
            data_file=DataFile.from_proto(msg.data_file) if msg.HasField("data_file") else None,
            shared_offset_bitmap=bytes(msg.shared_offset_bitmap) if coverage == "shared_offset_bitmap" else None,
            field_offset_bitmaps=(
                [bytes(b) for b in msg.field_coverage.offset_bitmaps] if coverage == "field_coverage" else None
            ),
            committed_version=msg.committed_version,
        )

    def to_proto(self) -> table_pb2.DataOverlayFile:
        msg = table_pb2.DataOverlayFile(committed_version=self.committed_version)
        if self.data_file is not None:
            msg.data_file.CopyFrom(self.data_file.to_proto())
        if self.shared_offset_bitmap is not None:
            msg.shared_offset_bitmap = self.shared_offset_bitmap
        elif self.field_offset_bitmaps is not None:
            msg.field_coverage.SetInParent()
            msg.field_coverage.offset_bitmaps.extend(self.field_offset_bitmaps)
        return msg


@dataclass
class DataOverlayGroup:
    """Overlays appended to one fragment, oldest first."""

    fragment_id: int = 0
    overlays: list[DataOverlayFile] = dc_field(default_factory=list)

    @classmethod
    def from_proto(cls, msg: _PB.DataOverlayGroup) -> DataOverlayGroup:
        return cls(msg.fragment_id, [DataOverlayFile.from_proto(o) for o in msg.overlays])

    def to_proto(self) -> _PB.DataOverlayGroup:
        return _PB.DataOverlayGroup(fragment_id=self.fragment_id, overlays=[o.to_proto() for o in self.overlays])


@dataclass
class DataOverlay:
    """Overlay files attached to existing fragments (experimental)."""

    NAME = "data_overlay"
    groups: list[DataOverlayGroup] = dc_field(default_factory=list)

    @property
    def fragment_ids(self) -> set[int]:
        return {group.fragment_id for group in self.groups}

    @property
    def fields(self) -> set[int]:
        """The fields any of its overlays supplies values for."""
        return {field_id for group in self.groups for overlay in group.overlays for field_id in overlay.fields}

    @classmethod
    def from_proto(cls, msg: _PB.DataOverlay) -> DataOverlay:
        return cls([DataOverlayGroup.from_proto(g) for g in msg.groups])

    def to_proto(self) -> _PB.DataOverlay:
        return _PB.DataOverlay(groups=[g.to_proto() for g in self.groups])


#: Operation fields whose number an upstream state gives to another message:
#: 116 is ReserveRowIds in ``protos/transaction.proto`` (7c800fd0) but the
#: experimental CompositeOperation in ``protos/transaction/transaction.proto``
#: (a392056d); the conflict matrix once recorded it as AppendFragmentReuseTransitions.
AMBIGUOUS_OPERATIONS = frozenset({ReserveRowIds.NAME})


def foreign_operation(name: str, msg) -> bool:
    """Whether the message in operation field ``name`` is another operation
    sharing its number: it carries fields the operation's message does not
    have (a CompositeOperation's action list in field 116, say). Such a
    transaction is kept as an unknown operation, which conflicts with
    everything, rather than read as a reservation of 0 row ids."""
    return name in AMBIGUOUS_OPERATIONS and len(UnknownFieldSet(msg)) > 0


__all__ = [
    "AMBIGUOUS_OPERATIONS",
    "DataOverlay",
    "DataOverlayFile",
    "DataOverlayGroup",
    "ReserveRowIds",
    "foreign_operation",
]
