"""The operations the newest transaction proto adds (read 2026-11-29):
ReserveRowIds (field 116) and DataOverlay (field 115), and the experimental
CompositeOperation that another upstream proto puts on field 116.

ReserveRowIds is committed by the reference writer (next_row_id moves past
the reserved ids; only under stable row ids) and raced by the commit loop;
DataOverlay is decoded, re-encoded and judged by ``decide`` but not committed
(data overlay files are experimental); a CompositeOperation on field 116 is
kept as an unknown operation, which conflicts with everything.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.validator import Severity, validate
from reference_impl.commit import Outcome, decide
from reference_impl.dataset import Dataset
from reference_impl.errors import IncompatibleConflictError, InvalidOperationError, UnsupportedFeatureError
from reference_impl.fragments import DataFile, Fragment
from reference_impl.newer_operations import DataOverlay, DataOverlayFile, DataOverlayGroup, ReserveRowIds
from reference_impl.transactions import (
    Append,
    Merge,
    Overwrite,
    Restore,
    Rewrite,
    RewriteGroup,
    Transaction,
    UnknownOperation,
    Update,
    UpdateMode,
)
from reference_impl.wire import transaction_pb2


def rows(start: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64())})


def _round_trip(txn: Transaction) -> Transaction:
    msg = transaction_pb2.Transaction()
    msg.ParseFromString(txn.to_proto().SerializeToString())
    back = Transaction.from_proto(msg)
    assert back.to_proto() == msg
    return back


OVERLAY = DataOverlay(
    [
        DataOverlayGroup(
            3,
            [
                DataOverlayFile(DataFile("ov-a.lance", [1, 2], [0, 1]), shared_offset_bitmap=b"\x3a\x30"),
                DataOverlayFile(
                    DataFile("ov-b.lance", [2], [0]), field_offset_bitmaps=[b"\x01\x02"], committed_version=7
                ),
            ],
        )
    ]
)


def test_both_operations_round_trip_through_their_fields():
    for operation, field in ((ReserveRowIds(1 << 40), 116), (OVERLAY, 115)):
        txn = Transaction.create(4, operation)
        assert txn.to_proto().WhichOneof("operation") == operation.NAME
        assert transaction_pb2.Transaction.DESCRIPTOR.fields_by_name[operation.NAME].number == field
        assert _round_trip(txn) == txn
    assert OVERLAY.fragment_ids == {3} and OVERLAY.fields == {1, 2}


def _composite_on_field_116() -> bytes:
    """A transaction whose field 116 holds a CompositeOperation (actions.proto:
    field 1, a repeated UserAction message with a description), written as
    raw protobuf: the reference has no CompositeOperation message."""
    user_action = b"\x0a\x06append"  # UserAction.description = "append"
    composite = b"\x0a" + bytes([len(user_action)]) + user_action  # CompositeOperation.actions[0]
    head = transaction_pb2.Transaction(read_version=2, uuid="c0ffee").SerializeToString()
    # field 116, wire type 2: tag (116 << 3 | 2) = 930 as a varint
    return head + b"\xa2\x07" + bytes([len(composite)]) + composite


@pytest.mark.requirements("transaction.composite-operation-experimental", "commit.unknown-operation-conflicts")
def test_a_composite_operation_on_field_116_is_an_unknown_operation_not_a_reservation():
    """Field 116 is ReserveRowIds in transaction.proto and CompositeOperation in
    transaction/transaction.proto: a 116 message carrying fields ReserveRowIds
    lacks is kept whole as an unknown operation (round trip included), which
    conflicts with everything, and the validator warns about it."""
    data = _composite_on_field_116()
    msg = transaction_pb2.Transaction()
    msg.ParseFromString(data)
    assert msg.WhichOneof("operation") == "reserve_row_ids"  # protobuf alone would take it for one
    txn = Transaction.from_proto(msg)
    assert txn.operation == UnknownOperation((116,)) and not txn.has_known_operation
    assert txn.to_proto().SerializeToString() == data
    for mine in (Append(), ReserveRowIds(4)):
        decision = decide(Transaction.create(2, mine), txn)
        assert decision.outcome is Outcome.INCOMPATIBLE
        assert decision.requirement_ids == ("commit.unknown-operation-conflicts",)
    assert decide(txn, Transaction.create(2, Append())).outcome is Outcome.INCOMPATIBLE


def test_a_reservation_with_only_its_own_field_stays_a_reservation():
    msg = Transaction.create(1, ReserveRowIds(9)).to_proto()
    assert Transaction.from_proto(msg).operation == ReserveRowIds(9)


@pytest.mark.requirements(
    "transaction.reserve-row-ids-advances-next-row-id", "transaction.reserve-row-ids-needs-stable-row-ids"
)
def test_a_reservation_moves_next_row_id_and_later_rows_take_ids_above_it(tmp_path):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 10), stable_row_ids=True)
    reserved = Dataset.open(path).commit(ReserveRowIds(num_row_ids=25))
    assert reserved.manifest.next_row_id == 35
    assert [f.id for f in reserved.manifest.fragments] == [f.id for f in Dataset.open(path, 1).manifest.fragments]
    appended = Dataset.open(path).append(rows(10, 5))
    assert appended.manifest.next_row_id == 40
    assert appended.to_table(with_row_id=True)["_rowid"].to_pylist()[-5:] == [35, 36, 37, 38, 39]
    findings = [f for f in validate(path, all_versions=True).findings if f.severity is not Severity.INFO]
    assert findings == []


@pytest.mark.requirements("transaction.reserve-row-ids-needs-stable-row-ids")
def test_a_table_without_stable_row_ids_refuses_a_reservation(tmp_path):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 4))
    with pytest.raises(InvalidOperationError, match="stable row ids"):
        Dataset.open(path).commit(ReserveRowIds(num_row_ids=3))
    assert Dataset.open(path).version == 1


def test_the_reference_does_not_commit_data_overlays(tmp_path):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 4))
    with pytest.raises(UnsupportedFeatureError, match="DataOverlay"):
        Dataset.open(path).commit(DataOverlay([DataOverlayGroup(0, [])]))
    assert Dataset.open(path).version == 1


@pytest.mark.requirements(
    "conflict.reserve-row-ids-after-overwrite-or-restore-incompatible", "conflict.reserve-row-ids-otherwise-compatible"
)
def test_racing_reservations_both_commit_and_an_overwrite_stops_one(tmp_path):
    """Two writers reserve from the same version: the second rebuilds on the
    first (compatible), so the ids never overlap; after an Overwrite the
    reservation is refused."""
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 10), stable_row_ids=True)
    a, b = Dataset.open(path, 1), Dataset.open(path, 1)
    a.commit(ReserveRowIds(num_row_ids=5))
    second = b.commit(ReserveRowIds(num_row_ids=7))
    assert second.manifest.next_row_id == 10 + 5 + 7
    c = Dataset.open(path)
    Dataset.open(path).overwrite(rows(100, 3))
    with pytest.raises(IncompatibleConflictError):
        c.commit(ReserveRowIds(num_row_ids=2))


@pytest.mark.requirements(
    "conflict.data-overlay-after-overwrite-restore-or-mem-wal-incompatible",
    "conflict.data-overlay-otherwise-compatible",
)
def test_an_overlay_is_stopped_only_by_what_replaces_the_table():
    overlay = Transaction.create(1, OVERLAY)
    for theirs in (Overwrite(), Restore(1)):
        assert decide(overlay, Transaction.create(1, theirs)).outcome is Outcome.INCOMPATIBLE
    for theirs in (Append(), OVERLAY, ReserveRowIds(3)):
        assert decide(overlay, Transaction.create(1, theirs)).outcome is Outcome.COMPATIBLE


@pytest.mark.requirements(
    "conflict.data-overlay-after-rewrite-overlapping-retryable",
    "conflict.data-overlay-after-merge-retryable",
    "conflict.data-overlay-after-row-moving-update-retryable",
)
def test_an_overlay_retries_only_when_its_fragments_rows_moved():
    """The overlay targets fragment 3: a Rewrite or a row-moving Update of
    fragment 3, or any Merge, make it retryable; the same on fragment 4, or a
    column rewrite in place of fragment 3, do not."""

    def fragment(i: int) -> Fragment:
        return Fragment(i, [DataFile(f"f{i}.lance", [1, 2], [0, 1])], 10)

    overlay = Transaction.create(1, OVERLAY)

    def outcome(theirs) -> Outcome:
        return decide(overlay, Transaction.create(1, theirs)).outcome

    assert outcome(Rewrite(groups=[RewriteGroup([fragment(3)], [fragment(9)])])) is Outcome.RETRYABLE
    assert outcome(Rewrite(groups=[RewriteGroup([fragment(4)], [fragment(9)])])) is Outcome.COMPATIBLE
    assert outcome(Merge([fragment(4)])) is Outcome.RETRYABLE
    assert outcome(Update(updated_fragments=[fragment(3)], new_fragments=[fragment(9)])) is Outcome.RETRYABLE
    assert outcome(Update(updated_fragments=[fragment(4)], new_fragments=[fragment(9)])) is Outcome.COMPATIBLE
    in_place = Update(updated_fragments=[fragment(3)], fields_modified=[2], update_mode=UpdateMode.REWRITE_COLUMNS)
    assert outcome(in_place) is Outcome.COMPATIBLE
