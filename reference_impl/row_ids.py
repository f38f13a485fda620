"""Row ids and row version sequences (row id & lineage specification;
``rowids.proto``).

Row addresses
    ``(fragment_id << 32) | offset``: where a row physically is. They change
    when a row moves. :func:`row_address` and :func:`split_row_address`.

Stable row ids
    With the stable-row-id feature (reader/writer flag 2) each fragment stores
    one u64 per *physical* row (deleted rows included), in physical order, as a
    serialized ``RowIdSequence``. :func:`decode_row_id_sequence` turns the bytes
    into a list, :func:`encode_row_id_sequence` does the reverse. Ids are
    distinct within one sequence (the decoder checks this), but not across
    fragments: pylance keeps a row's id when it updates the row, so the
    deleted original and the rewritten copy carry the same id. Only visible
    rows have distinct ids table-wide.

Row version sequences
    ``RowDatasetVersionSequence`` gives, for each physical row, the dataset
    version at which it was created (``created_at``) or last updated
    (``last_updated_at``), as runs of ``(span, version)``. A run covers as many
    rows as its ``span`` segment holds values; the values themselves are row
    positions but only their *count* decides anything. (pylance keeps the
    positions a run had in the fragment it came from, so after compaction a
    span may read ``range_with_bitmap{start: 290, end: 300}`` in a fragment
    whose rows start at 0: values are never checked against the fragment.)

Segments (``U64Segment``) and their decoding:

* ``range``: every value of ``[start, end)``;
* ``range_with_holes``: ``[start, end)`` without the ``holes``, which are
  absolute values (not offsets from ``start``), strictly ascending and inside
  the range;
* ``range_with_bitmap``: ``start + i`` for each set bit ``i`` of ``bitmap``;
  bit ``i`` is bit ``i % 8`` (least significant first) of byte ``i // 8``, and
  the bitmap holds exactly ``ceil((end - start) / 8)`` bytes. (The upstream
  proto comment says most significant bit first; pylance writes least
  significant first. See docs/spec-discrepancies.md.)
* ``sorted_array``: strictly ascending values; ``array``: values in any order.

Both array kinds are an ``EncodedU64Array``: little-endian ``u16`` or ``u32``
offsets added to a ``base``, or plain little-endian ``u64`` values.

Bounds. Nothing here allocates in proportion to a number read from the bytes:
every segment's length is computed from its header first, the total is checked
against a limit (the fragment's ``physical_rows`` when known, else
:data:`DEFAULT_MAX_ROWS`) and only then are values produced. Arrays and
bitmaps can only be as long as the bytes that hold them. Every problem is a
:class:`~reference_impl.errors.CorruptFileError` naming the file or the
fragment.

Encoding choice (:func:`encode_row_id_sequence`): the values are cut into
maximal runs of consecutive integers. A run of at least
:data:`MIN_RANGE_RUN` values becomes a ``range`` segment (two varints however
long it is). The values between such runs are gathered into one array
segment: ``sorted_array`` when strictly ascending, ``array`` otherwise, with
the narrowest width that holds ``max - min`` (u16, then u32, then plain u64;
base = the minimum). ``range_with_holes`` and ``range_with_bitmap`` are never
chosen automatically: they are only smaller than this split for long ranges
with many scattered holes, and keeping the writer's choices few keeps its
output easy to check. :func:`encode_row_id_segments` builds any segment kind
explicitly (tests use it to reach every decoder path).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from google.protobuf.message import DecodeError

from .errors import CorruptFileError, UnsupportedFeatureError
from .fragments import ExternalFile, Fragment, LineageColumn, StoredSequence
from .row_lineage import LINEAGE_COLUMNS, ColumnReader
from .storage import Storage
from .wire import rowids_pb2

U64_MAX = 2**64 - 1
U32_MAX = 2**32 - 1

#: Limit on the rows one sequence may expand to when the caller gives none.
#: A Python list of this many ints costs several hundred megabytes; pass the
#: fragment's ``physical_rows`` (the fragment helpers do) for anything larger.
DEFAULT_MAX_ROWS = 1 << 24

#: Shortest run of consecutive values the encoder stores as a ``range``.
MIN_RANGE_RUN = 8

SEGMENT_KINDS = ("range", "range_with_holes", "range_with_bitmap", "sorted_array", "array")
ARRAY_WIDTHS = ("u16", "u32", "u64")

_ARRAY_FIELD = {"u16": "u16_array", "u32": "u32_array", "u64": "u64_array"}
_ARRAY_WIDTH_OF_FIELD = {v: k for k, v in _ARRAY_FIELD.items()}
_WIDTH_BYTES = {"u16": 2, "u32": 4, "u64": 8}
_WIDTH_CODE = {"u16": "H", "u32": "I", "u64": "Q"}
_WIDTH_SPAN = {"u16": 0xFFFF, "u32": U32_MAX, "u64": U64_MAX}


# -- row addresses ------------------------------------------------------------


def row_address(fragment_id: int, offset: int) -> int:
    """``(fragment_id << 32) | offset``; both parts must fit in 32 bits."""
    if not (0 <= fragment_id <= U32_MAX and 0 <= offset <= U32_MAX):
        raise ValueError(f"fragment id {fragment_id} or offset {offset} does not fit in 32 bits")
    return (fragment_id << 32) | offset


def split_row_address(address: int) -> tuple[int, int]:
    """The ``(fragment_id, offset)`` a row address encodes."""
    if not 0 <= address <= U64_MAX:
        raise ValueError(f"row address {address} is not a u64")
    return address >> 32, address & U32_MAX


# -- decoding -------------------------------------------------------------------


def _parse(message, data: bytes, context: str, what: str):
    try:
        message.ParseFromString(bytes(data))
    except (DecodeError, RuntimeError, ValueError, TypeError) as exc:
        raise CorruptFileError(context, f"{what} does not decode: {exc}") from None
    return message


def decode_encoded_array(msg: rowids_pb2.EncodedU64Array, context: str) -> tuple[str, list[int]]:
    """The width and values of an ``EncodedU64Array`` (at most as many values
    as its bytes can hold)."""
    which = msg.WhichOneof("array")
    if which is None:
        raise CorruptFileError(context, "EncodedU64Array has no array set")
    width = _ARRAY_WIDTH_OF_FIELD[which]
    size = _WIDTH_BYTES[width]
    inner = getattr(msg, which)
    raw = bytes(inner.values if width == "u64" else inner.offsets)
    if len(raw) % size:
        raise CorruptFileError(context, f"{width} array holds {len(raw)} bytes, not a multiple of {size}")
    items = struct.unpack(f"<{len(raw) // size}{_WIDTH_CODE[width]}", raw)
    if width == "u64":
        return width, list(items)
    base = inner.base
    if items and base + max(items) > U64_MAX:
        raise CorruptFileError(context, f"{width} array base {base} plus offset {max(items)} overflows u64")
    return width, [base + item for item in items]


def _check_range(start: int, end: int, kind: str, context: str) -> None:
    if start > end:
        raise CorruptFileError(context, f"{kind} segment has start {start} after end {end}")


def _strictly_ascending(values: Sequence[int]) -> bool:
    return all(a < b for a, b in pairwise(values))


@dataclass
class _Segment:
    """A validated segment whose values have not necessarily been produced."""

    kind: str
    length: int
    start: int = 0
    end: int = 0
    holes: list[int] | None = None
    bitmap: bytes = b""
    values: list[int] | None = None

    def expand(self) -> list[int]:
        if self.kind == "range":
            return list(range(self.start, self.end))
        if self.kind == "range_with_holes":
            out: list[int] = []
            cursor = self.start
            for hole in self.holes or ():
                out.extend(range(cursor, hole))
                cursor = hole + 1
            out.extend(range(cursor, self.end))
            return out
        if self.kind == "range_with_bitmap":
            out = []
            span = self.end - self.start
            for byte_index, byte in enumerate(self.bitmap):
                if not byte:
                    continue
                first = byte_index * 8
                for bit in range(8):
                    if byte >> bit & 1 and first + bit < span:
                        out.append(self.start + first + bit)
            return out
        return list(self.values or ())


def _inspect_segment(msg: rowids_pb2.U64Segment, context: str) -> _Segment:
    """Validate one segment and count its values without expanding ranges."""
    kind = msg.WhichOneof("segment")
    if kind is None:
        raise CorruptFileError(context, "U64Segment has no segment kind set")
    if kind == "range":
        _check_range(msg.range.start, msg.range.end, kind, context)
        return _Segment(kind, msg.range.end - msg.range.start, msg.range.start, msg.range.end)
    if kind == "range_with_holes":
        seg = msg.range_with_holes
        _check_range(seg.start, seg.end, kind, context)
        if not seg.HasField("holes"):
            raise CorruptFileError(context, "range_with_holes segment has no holes array")
        _, holes = decode_encoded_array(seg.holes, context)
        if not _strictly_ascending(holes):
            raise CorruptFileError(context, "range_with_holes holes are not strictly ascending")
        if holes and (holes[0] < seg.start or holes[-1] >= seg.end):
            raise CorruptFileError(context, f"range_with_holes has a hole outside [{seg.start}, {seg.end})")
        return _Segment(kind, seg.end - seg.start - len(holes), seg.start, seg.end, holes=holes)
    if kind == "range_with_bitmap":
        seg = msg.range_with_bitmap
        _check_range(seg.start, seg.end, kind, context)
        span = seg.end - seg.start
        bitmap = bytes(seg.bitmap)
        expected = (span + 7) // 8
        if len(bitmap) != expected:
            raise CorruptFileError(
                context, f"range_with_bitmap over {span} values needs {expected} bitmap bytes, has {len(bitmap)}"
            )
        present = int.from_bytes(bitmap, "little") & ((1 << span) - 1)
        return _Segment(kind, bin(present).count("1"), seg.start, seg.end, bitmap=bitmap)
    # sorted_array or array
    _, values = decode_encoded_array(getattr(msg, kind), context)
    if kind == "sorted_array" and not _strictly_ascending(values):
        raise CorruptFileError(context, "sorted_array values are not strictly ascending")
    return _Segment(kind, len(values), values=values)


def _limit(max_rows: int | None) -> int:
    return DEFAULT_MAX_ROWS if max_rows is None else max_rows


def _check_total(total: int, limit: int, context: str, what: str) -> None:
    if total > limit:
        raise CorruptFileError(context, f"{what} holds {total} rows, more than the limit of {limit}")


def row_id_segment_kinds(data: bytes, context: str = "row id sequence") -> list[str]:
    """The kind of each segment of a serialized ``RowIdSequence``."""
    msg = _parse(rowids_pb2.RowIdSequence(), data, context, "RowIdSequence")
    return [_inspect_segment(seg, context).kind for seg in msg.segments]


def decode_row_id_sequence(data: bytes, context: str = "row id sequence", *, max_rows: int | None = None) -> list[int]:
    """The row ids of a serialized ``RowIdSequence``, in physical row order.

    Raises :class:`CorruptFileError` (naming ``context``) when the bytes do not
    decode, a segment is malformed, the total exceeds ``max_rows`` (default
    :data:`DEFAULT_MAX_ROWS`) or a row id appears twice.
    """
    msg = _parse(rowids_pb2.RowIdSequence(), data, context, "RowIdSequence")
    segments = [_inspect_segment(seg, context) for seg in msg.segments]
    _check_total(sum(s.length for s in segments), _limit(max_rows), context, "row id sequence")
    values: list[int] = []
    for segment in segments:
        values.extend(segment.expand())
    if len(set(values)) != len(values):
        raise CorruptFileError(context, "row id sequence holds a row id more than once")
    return values


def decode_version_sequence(
    data: bytes, context: str = "row version sequence", *, max_rows: int | None = None
) -> list[int]:
    """The per-row versions of a serialized ``RowDatasetVersionSequence``.

    Each run contributes its version once per value of its span. Raises
    :class:`CorruptFileError` on bytes that do not decode, a run without a
    span, a malformed span or more rows than ``max_rows``.
    """
    msg = _parse(rowids_pb2.RowDatasetVersionSequence(), data, context, "RowDatasetVersionSequence")
    runs: list[tuple[int, int]] = []
    for index, run in enumerate(msg.runs):
        if not run.HasField("span"):
            raise CorruptFileError(context, f"version run {index} has no span")
        runs.append((_inspect_segment(run.span, context).length, run.version))
    _check_total(sum(n for n, _ in runs), _limit(max_rows), context, "row version sequence")
    versions: list[int] = []
    for count, version in runs:
        versions.extend([version] * count)
    return versions


# -- encoding -------------------------------------------------------------------


def _narrowest_width(values: Sequence[int]) -> str:
    if not values:
        return "u16"
    spread = max(values) - min(values)
    for width in ("u16", "u32"):
        if spread <= _WIDTH_SPAN[width]:
            return width
    return "u64"


def encode_array(values: Sequence[int], width: str | None = None) -> rowids_pb2.EncodedU64Array:
    """An ``EncodedU64Array`` of ``values``; ``width`` defaults to the
    narrowest one that fits (base = the minimum value)."""
    for v in values:
        if not 0 <= v <= U64_MAX:
            raise ValueError(f"{v} is not a u64")
    width = width or _narrowest_width(values)
    if width not in _WIDTH_BYTES:
        raise ValueError(f"unknown array width {width!r}")
    msg = rowids_pb2.EncodedU64Array()
    code = f"<{len(values)}{_WIDTH_CODE[width]}"
    if width == "u64":
        msg.u64_array.values = struct.pack(code, *values)
        return msg
    base = min(values) if values else 0
    if values and max(values) - base > _WIDTH_SPAN[width]:
        raise ValueError(f"values spread over {max(values) - base}, too wide for {width}")
    inner = getattr(msg, _ARRAY_FIELD[width])
    inner.base = base
    inner.offsets = struct.pack(code, *(v - base for v in values))
    return msg


def segment_to_proto(kind: str, values: Sequence[int], *, width: str | None = None) -> rowids_pb2.U64Segment:
    """Encode ``values`` as one segment of the given kind.

    ``range`` needs consecutive ascending values; ``range_with_holes`` and
    ``range_with_bitmap`` need strictly ascending values and span
    ``[min, max + 1)`` (an empty list gives the empty range ``[0, 0)``);
    ``sorted_array`` needs strictly ascending values; ``array`` takes any
    distinct u64s. ``width`` picks the array width where the kind has one.
    Raises ``ValueError`` when the values do not fit the kind.
    """
    values = list(values)
    msg = rowids_pb2.U64Segment()
    if kind not in SEGMENT_KINDS:
        raise ValueError(f"unknown segment kind {kind!r}")
    if kind in ("sorted_array", "array"):
        if kind == "sorted_array" and not _strictly_ascending(values):
            raise ValueError("sorted_array needs strictly ascending values")
        getattr(msg, kind).CopyFrom(encode_array(values, width))
        return msg
    if not _strictly_ascending(values):
        raise ValueError(f"{kind} needs strictly ascending values")
    start = values[0] if values else 0
    end = values[-1] + 1 if values else 0
    if end > U64_MAX:
        raise ValueError(f"{kind} cannot hold the value {U64_MAX}: its end would not fit in a u64")
    if kind == "range":
        if len(values) != end - start:
            raise ValueError("range needs consecutive values")
        msg.range.start, msg.range.end = start, end
        return msg
    present = set(values)
    if kind == "range_with_holes":
        seg = msg.range_with_holes
        seg.start, seg.end = start, end
        holes = [v for v in range(start, end) if v not in present]
        seg.holes.CopyFrom(encode_array(holes, width))
        return msg
    seg = msg.range_with_bitmap
    seg.start, seg.end = start, end
    bitmap = bytearray((end - start + 7) // 8)
    for v in values:
        bitmap[(v - start) // 8] |= 1 << ((v - start) % 8)
    seg.bitmap = bytes(bitmap)
    return msg


def _check_row_ids(values: Sequence[int]) -> None:
    for v in values:
        if not isinstance(v, int) or not 0 <= v <= U64_MAX:
            raise ValueError(f"row id {v!r} is not a u64")
    if len(set(values)) != len(values):
        raise ValueError("row ids must be distinct")


def _auto_segments(values: Sequence[int]) -> list[tuple[str, list[int]]]:
    """The segmentation described in the module docstring."""
    runs: list[list[int]] = []
    for v in values:
        if runs and runs[-1][-1] + 1 == v:
            runs[-1].append(v)
        else:
            runs.append([v])
    out: list[tuple[str, list[int]]] = []
    loose: list[int] = []

    def flush() -> None:
        if loose:
            out.append(("sorted_array" if _strictly_ascending(loose) else "array", list(loose)))
            loose.clear()

    for run in runs:
        if len(run) >= MIN_RANGE_RUN:
            flush()
            out.append(("range", run))
        else:
            loose.extend(run)
    flush()
    return out


def encode_row_id_segments(segments: Iterable[tuple[str, Sequence[int]]], *, width: str | None = None) -> bytes:
    """A ``RowIdSequence`` made of the given ``(kind, values)`` segments, in
    order (see :func:`segment_to_proto` for what each kind accepts)."""
    segments = [(kind, list(values)) for kind, values in segments]
    _check_row_ids([v for _, values in segments for v in values])
    msg = rowids_pb2.RowIdSequence()
    for kind, values in segments:
        msg.segments.append(segment_to_proto(kind, values, width=width))
    return msg.SerializeToString(deterministic=True)


def encode_row_id_sequence(values: Sequence[int]) -> bytes:
    """Serialize row ids (distinct u64s) with the segmentation described in
    the module docstring."""
    values = list(values)
    _check_row_ids(values)
    return encode_row_id_segments(_auto_segments(values))


def encode_version_sequence(versions: Sequence[int]) -> bytes:
    """Serialize per-row versions as runs of equal consecutive versions; each
    run's span is the ``range`` of the row positions it covers, counted from
    0 (as pylance writes a fresh fragment)."""
    msg = rowids_pb2.RowDatasetVersionSequence()
    position = 0
    index = 0
    versions = list(versions)
    for v in versions:
        if not isinstance(v, int) or not 0 <= v <= U64_MAX:
            raise ValueError(f"version {v!r} is not a u64")
    while index < len(versions):
        version = versions[index]
        stop = index
        while stop < len(versions) and versions[stop] == version:
            stop += 1
        run = msg.runs.add()
        run.span.range.start = position
        run.span.range.end = position + (stop - index)
        run.version = version
        position += stop - index
        index = stop
    return msg.SerializeToString(deterministic=True)


# -- sequences stored in fragments -------------------------------------------------


def load_stored_sequence(storage: Storage, stored: StoredSequence, context: str) -> bytes:
    """The serialized sequence: the inline bytes, or the byte range of an
    external file (relative to the dataset root) read through ``storage``.
    A spilled sequence has no serialized form: :func:`fragment_row_ids` and
    its siblings read its column."""
    if isinstance(stored, ExternalFile):
        return storage.read(stored.path, stored.offset, stored.size)
    if isinstance(stored, (bytes, bytearray, memoryview)):
        return bytes(stored)
    raise TypeError(f"{context}: not a stored sequence: {stored!r}")


def _describe(
    fragment: Fragment, stored: StoredSequence, storage: Storage, what: str, manifest_path: str | None
) -> str:
    """The file an error about the sequence names: the external file, or
    for an inline sequence the manifest holding it (when known)."""
    if isinstance(stored, ExternalFile):
        return f"{storage.path(stored.path)} [{stored.offset}, +{stored.size}) ({what} of fragment {fragment.id})"
    if isinstance(stored, LineageColumn):
        return f"fragment {fragment.id} {what}, spilled to a hidden column"
    if manifest_path is None:
        return f"fragment {fragment.id} inline {what}"
    return f"{manifest_path} (inline {what} of fragment {fragment.id})"


def _fragment_sequence(
    storage: Storage,
    fragment: Fragment,
    attr: str,
    what: str,
    decode,
    max_rows: int | None,
    manifest_path: str | None,
    read_column: ColumnReader | None,
):
    stored = getattr(fragment, attr)
    if stored is None:
        return None
    context = _describe(fragment, stored, storage, what, manifest_path)
    limit = _limit(max_rows)
    if fragment.physical_rows > limit:
        raise CorruptFileError(
            context, f"fragment has {fragment.physical_rows} physical rows, more than the limit of {limit}"
        )
    if isinstance(stored, LineageColumn):
        # The column holds the values themselves, one per physical row.
        if read_column is None:
            raise UnsupportedFeatureError(context, "the sequence is spilled to a hidden column and no reader was given")
        return read_column(fragment, LINEAGE_COLUMNS[attr], context)
    values = decode(load_stored_sequence(storage, stored, context), context, max_rows=fragment.physical_rows)
    if len(values) != fragment.physical_rows:
        raise CorruptFileError(
            context, f"{what} holds {len(values)} rows but the fragment has {fragment.physical_rows} physical rows"
        )
    return values


def fragment_row_ids(
    storage: Storage,
    fragment: Fragment,
    *,
    max_rows: int | None = None,
    manifest_path: str | None = None,
    read_column: ColumnReader | None = None,
) -> list[int] | None:
    """The row id of every physical row of ``fragment`` (deleted ones
    included), or None when the fragment stores no row id sequence. Errors
    about an inline sequence name ``manifest_path``, the manifest holding
    the fragment, when it is given. A spilled sequence is read by
    ``read_column`` (:meth:`reference_impl.dataset.Dataset.lineage_column`);
    without one it is an UnsupportedFeatureError."""
    return _fragment_sequence(
        storage,
        fragment,
        "row_id_sequence",
        "row id sequence",
        decode_row_id_sequence,
        max_rows,
        manifest_path,
        read_column,
    )


def fragment_created_at_versions(
    storage: Storage,
    fragment: Fragment,
    *,
    max_rows: int | None = None,
    manifest_path: str | None = None,
    read_column: ColumnReader | None = None,
) -> list[int] | None:
    """Per physical row, the version that created it; None when not stored."""
    return _fragment_sequence(
        storage,
        fragment,
        "created_at_version_sequence",
        "created-at version sequence",
        decode_version_sequence,
        max_rows,
        manifest_path,
        read_column,
    )


def fragment_last_updated_at_versions(
    storage: Storage,
    fragment: Fragment,
    *,
    max_rows: int | None = None,
    manifest_path: str | None = None,
    read_column: ColumnReader | None = None,
) -> list[int] | None:
    """Per physical row, the version that last updated it; None when not stored."""
    return _fragment_sequence(
        storage,
        fragment,
        "last_updated_at_version_sequence",
        "last-updated-at version sequence",
        decode_version_sequence,
        max_rows,
        manifest_path,
        read_column,
    )
