"""Which JSONB documents of a column are malformed, for all of them at once
(upstream ``format/table/jsonb.md``; the layout is in :mod:`.jsonb`).

:func:`reference_impl.jsonb.check` walks one document in Python; a column
holds millions. :func:`malformed` applies the same rules with numpy, one
nesting level at a time across every document: the containers of a level
are read together (headers, entry tables, payload positions), their child
containers form the next level, and the strings of every level are checked
as UTF-8 in one Arrow cast. Its answer agrees with :func:`.jsonb.check`
document by document (``tests/reference_impl/test_jsonb.py`` states it as a
property); the message for a malformed document comes from ``check``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from . import jsonb

_INT_SIZES = np.array(sorted(jsonb.INT_WIDTHS), np.int64)
_DECIMAL_SIZES = np.array(sorted(jsonb.DECIMAL_LAYOUTS), np.int64)


def malformed(documents: pa.Array) -> np.ndarray:
    """A boolean per slot of ``documents`` (binary or large binary): whether
    it holds a document :func:`.jsonb.check` refuses (null slots: False)."""
    if documents.type != pa.large_binary():
        documents = documents.cast(pa.large_binary())
    bad = np.zeros(len(documents), bool)
    if not len(documents):
        return bad
    _, offsets_buffer, data_buffer = documents.buffers()
    first = documents.offset
    offsets = np.frombuffer(offsets_buffer, np.int64)[first : first + len(documents) + 1]
    data = np.frombuffer(data_buffer, np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    slots = np.flatnonzero(np.asarray(documents.is_valid())) if documents.null_count else np.arange(len(documents))
    starts, ends, owners = offsets[slots], offsets[slots + 1], slots
    strings: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    depth = 0
    while len(starts):
        if depth > jsonb.MAX_DEPTH:
            bad[owners] = True
            break
        starts, ends, owners = _level(data, starts, ends, owners, bad, strings)
        depth += 1
    _check_strings(data, strings, bad)
    return bad


def _words(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The big-endian u32 at each position of ``at``."""
    out = np.zeros(len(at), np.int64)
    for k in range(4):
        out = (out << 8) | data[at + k]
    return out


def _level(data, starts, ends, owners, bad, strings):
    """Check the containers ``[starts, ends)``; mark their documents in
    ``bad``; return the child containers (start, end, owner)."""
    size = ends - starts
    short = size < 4
    bad[owners[short]] = True
    keep = ~short
    starts, ends, owners = starts[keep], ends[keep], owners[keep]
    header = _words(data, starts)
    kind, count = header & jsonb.KIND_MASK, header & jsonb.COUNT_MASK
    entries = np.where(kind == jsonb.OBJECT, 2 * count, np.where(kind == jsonb.SCALAR, 1, count))
    wrong = ~np.isin(kind, (jsonb.SCALAR, jsonb.ARRAY, jsonb.OBJECT)) | ((kind == jsonb.SCALAR) & (count != 0))
    payload = starts + 4 + 4 * entries
    wrong |= payload > ends
    bad[owners[wrong]] = True
    keep = ~wrong
    starts, ends, owners = starts[keep], ends[keep], owners[keep]
    kind, count, entries, payload = kind[keep], count[keep], entries[keep], payload[keep]
    # One row per entry: its container, its place in the container's table.
    container = np.repeat(np.arange(len(starts)), entries)
    group_start = np.cumsum(entries) - entries
    place = np.arange(len(container)) - group_start[container]
    word = _words(data, starts[container] + 4 + 4 * place)
    kinds, lengths = word & jsonb.TYPE_MASK, word & jsonb.LENGTH_MASK
    # Each payload starts where the ones before it in its container end.
    before = np.cumsum(lengths) - lengths
    at = payload[container] + before - before[group_start[container]]
    wrong_entry = (word & jsonb.RESERVED_BIT) != 0
    wrong_entry |= (kinds == 0x70000000) | (np.isin(kinds, (jsonb.NULL, jsonb.FALSE, jsonb.TRUE)) & (lengths != 0))
    wrong_entry |= (kind[container] == jsonb.SCALAR) & (kinds == jsonb.CONTAINER)
    wrong_entry |= (kind[container] == jsonb.OBJECT) & (place < count[container]) & (kinds != jsonb.STRING)
    filled = payload + np.bincount(container, weights=lengths, minlength=len(starts)).astype(np.int64)
    wrong = filled != ends
    wrong[container[wrong_entry]] = True
    # Every payload now lies inside its container (the lengths fill it exactly).
    within = ~wrong[container]
    wrong[container[within & ~_scalar_bodies_fit(data, kinds, at, lengths, within)]] = True
    bad[owners[wrong]] = True
    fine = ~wrong[container]
    text = fine & (kinds == jsonb.STRING)
    strings.append((at[text], lengths[text], owners[container[text]]))
    child = fine & (kinds == jsonb.CONTAINER)
    return at[child], at[child] + lengths[child], owners[container[child]]


def _scalar_bodies_fit(data, kinds, at, lengths, within) -> np.ndarray:
    """Whether each number and extension payload has a tag and a size some
    layout has (other entries: True)."""
    ok = np.ones(len(kinds), bool)
    number = within & (kinds == jsonb.NUMBER)
    extension = within & (kinds == jsonb.EXTENSION)
    tagged = number | extension
    ok[tagged & (lengths == 0)] = False
    tagged &= lengths > 0
    tag = np.zeros(len(kinds), np.int64)
    tag[tagged] = data[at[tagged]]
    n = number & tagged
    fits = np.zeros(len(kinds), bool)
    fits |= (tag == jsonb.NUMBER_ZERO) & (lengths == 1)
    fits |= np.isin(tag, (jsonb.NUMBER_NAN, jsonb.NUMBER_INF, jsonb.NUMBER_NEG_INF)) & (lengths == 1)
    fits |= np.isin(tag, (jsonb.NUMBER_INT, jsonb.NUMBER_UINT)) & np.isin(lengths, _INT_SIZES)
    fits |= (tag == jsonb.NUMBER_FLOAT) & (lengths == 9)
    fits |= (tag == jsonb.NUMBER_DECIMAL) & np.isin(lengths, _DECIMAL_SIZES)
    ok[n & ~fits] = False
    e = extension & tagged
    fits = tag == jsonb.EXT_BINARY
    fits |= (tag == jsonb.EXT_DATE) & (lengths == 5)
    fits |= (tag == jsonb.EXT_TIMESTAMP) & (lengths == 9)
    fits |= (tag == jsonb.EXT_TIMESTAMP_TZ) & np.isin(lengths, (10, 13))
    fits |= (tag == jsonb.EXT_INTERVAL) & (lengths == 17)
    ok[e & ~fits] = False
    return ok


def _check_strings(data: np.ndarray, strings, bad: np.ndarray) -> None:
    """Mark the documents holding a string that is not UTF-8 (one Arrow
    cast over every string; a string at a time only when it fails)."""
    if not strings:
        return
    at = np.concatenate([s[0] for s in strings])
    lengths = np.concatenate([s[1] for s in strings])
    owners = np.concatenate([s[2] for s in strings])
    if not len(at):
        return
    offsets = np.zeros(len(at) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    gather = np.repeat(at - offsets[:-1], lengths) + np.arange(int(offsets[-1]))
    joined = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(at), [None, pa.py_buffer(offsets), pa.py_buffer(data[gather].tobytes())]
    )
    try:
        joined.cast(pa.large_string())
        return
    except pa.ArrowInvalid:
        pass
    for index, value in enumerate(joined.to_pylist()):  # only when some string is not UTF-8
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            bad[owners[index]] = True
