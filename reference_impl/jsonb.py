"""JSON values as a Lance table stores them (upstream ``format/table/jsonb.md``).

A field whose logical type is ``json`` holds, in each non-null slot of its
large-binary column, one binary JSONB document; scans present the column as
Arrow's ``arrow.json`` extension over UTF-8 text. This module converts in
both directions:

* :func:`render` turns one stored document into the compact text pylance 14
  returns for it, and :func:`encode` turns JSON text into a document;
* :func:`stored_type` / :func:`stored_schema` give the Arrow type a JSON
  column has on disk (large binary, also inside structs, lists and maps),
  :func:`present` converts a column read that way into the scan type, and
  :func:`stored_table` converts a table to write.

The document layout, in short (the page has the whole of it): every integer
is big-endian. A container starts with a 32-bit header whose top three bits
give its kind (scalar ``0x2``, object ``0x4``, array ``0x8``, shifted to the
top) and whose low 29 bits count its elements (key/value pairs for an
object, zero for a scalar). A table of 32-bit entries follows (one for a
scalar, N for an array, 2N for an object: all keys, then all values), then
the payloads in table order. An entry's bit 31 is reserved (zero), bits
28-30 give its type (null, string, number, false, true, container,
extension) and the low 28 bits the payload's length; payloads are found by
summing the lengths before them and must fill their container exactly.
Numbers and extensions start with a one-byte tag that, with the length,
selects the representation.

How the text looks is what pylance 14 prints, measured (the page describes
it only loosely; ``tests/reference_impl/test_jsonb.py`` compares with
pylance): no whitespace, object keys in stored order, strings escaped as
JSON requires (control characters as ``\\uXXXX`` or their short escapes,
everything else as is), NaN and infinities as ``null``, binary64 values in
their shortest round-trip digits, in positional notation when the decimal
exponent is from -5 to 15 (always with a fractional part) and as
``d.ddde+X`` / ``de-X`` outside, decimals divided out in binary64,
extension values as strings (binary in upper-case hex, dates, timestamps,
intervals spelled as below).

Malformed documents raise :class:`JsonbError` naming the problem, never
something from ``struct`` or a recursion overflow: every length is checked
against the bytes there are before anything is sliced, and nesting is
bounded by :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import datetime
import json
import math
import struct
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

#: Nesting depth at which a document is refused (the format has no limit;
#: Python's stack has one).
MAX_DEPTH = 200

#: The largest payload one entry can describe, and the largest count a
#: container header can hold.
MAX_ENTRY_LENGTH = (1 << 28) - 1
MAX_COUNT = (1 << 29) - 1

ARROW_JSON_EXTENSION = "arrow.json"

# Container kinds (header & KIND_MASK).
KIND_MASK = 0xE0000000
COUNT_MASK = 0x1FFFFFFF
SCALAR = 0x20000000
OBJECT = 0x40000000
ARRAY = 0x80000000

# Entry types (entry & TYPE_MASK).
RESERVED_BIT = 0x80000000
TYPE_MASK = 0x70000000
LENGTH_MASK = 0x0FFFFFFF
NULL = 0x00000000
STRING = 0x10000000
NUMBER = 0x20000000
FALSE = 0x30000000
TRUE = 0x40000000
CONTAINER = 0x50000000
EXTENSION = 0x60000000

# Number tags.
NUMBER_ZERO = 0x00
NUMBER_NAN = 0x10
NUMBER_INF = 0x20
NUMBER_NEG_INF = 0x30
NUMBER_INT = 0x40
NUMBER_UINT = 0x50
NUMBER_FLOAT = 0x60
NUMBER_DECIMAL = 0x70

# Extension tags.
EXT_BINARY = 0x00
EXT_DATE = 0x10
EXT_TIMESTAMP = 0x20
EXT_TIMESTAMP_TZ = 0x30
EXT_INTERVAL = 0x40

#: Integer payload length -> value bytes (a tag byte precedes the value).
INT_WIDTHS = {2: 1, 3: 2, 5: 4, 9: 8}
#: Decimal payload length -> (coefficient bytes, whether a precision byte
#: precedes the scale: the historical 128- and 256-bit layouts).
DECIMAL_LAYOUTS = {10: (8, False), 18: (16, False), 34: (32, False), 19: (16, True), 35: (32, True)}

_EPOCH = datetime.datetime(1970, 1, 1)
_MICROS_PER_SECOND = 1_000_000


class JsonbError(ValueError):
    """A JSONB document that is not well formed, or a value its text form
    cannot show; ``problem`` says which and where."""

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(problem)


class UnshowableValueError(JsonbError):
    """A well-formed document holding a value its text form cannot show (a
    date outside the years 1 to 9999)."""


# -- reading -----------------------------------------------------------------------------


def render(document: bytes) -> str:
    """The JSON text of one stored document."""
    view = memoryview(document)
    out: list[str] = []
    _render_container(view, 0, len(view), 0, out)
    return "".join(out)


def check(document: bytes | memoryview) -> None:
    """Raise :class:`JsonbError` if ``document`` is not a well-formed JSONB
    document (the page's validation rules: kinds, counts, lengths that fill
    each container, reserved bits, string keys, UTF-8 strings, number and
    extension layouts). The check walks the document as :func:`render`
    does, so it costs what rendering costs: one pass over the bytes, per
    document (:mod:`.jsonb_batch` checks a column at once). A value the text
    form cannot show is not malformed."""
    _render_container(memoryview(document), 0, len(document), 0, _Unshown())


class _Unshown(list):
    """Text thrown away: a value the text cannot show is passed over."""


def _word(view: memoryview, at: int) -> int:
    return int.from_bytes(view[at : at + 4], "big")


def _render_container(view: memoryview, start: int, end: int, depth: int, out: list[str]) -> None:
    if depth > MAX_DEPTH:
        raise JsonbError(f"nested deeper than {MAX_DEPTH} containers")
    if end - start < 4:
        raise JsonbError(f"a container at byte {start} is {end - start} bytes, too short for its header")
    header = _word(view, start)
    kind, count = header & KIND_MASK, header & COUNT_MASK
    if kind == SCALAR:
        if count != 0:
            raise JsonbError(f"the scalar container at byte {start} counts {count} elements, not 0")
        entries = 1
    elif kind == ARRAY:
        entries = count
    elif kind == OBJECT:
        entries = 2 * count
    else:
        raise JsonbError(f"the container at byte {start} has the undefined kind 0x{kind:08x}")
    payload = start + 4 + 4 * entries
    if payload > end:
        raise JsonbError(f"the container at byte {start} lists {entries} entries, more than its {end - start} bytes")
    words = [_word(view, start + 4 + 4 * i) for i in range(entries)]
    positions = []
    for word in words:
        if word & RESERVED_BIT:
            raise JsonbError(f"an entry of the container at byte {start} sets the reserved bit")
        positions.append(payload)
        payload += word & LENGTH_MASK
    if payload != end:
        raise JsonbError(f"the payloads of the container at byte {start} end at byte {payload}, not {end}")
    if kind == SCALAR:
        if words[0] & TYPE_MASK == CONTAINER:
            raise JsonbError(f"the scalar container at byte {start} holds a container")
        _render_value(view, words[0], positions[0], depth, out)
    elif kind == ARRAY:
        out.append("[")
        for i, (word, at) in enumerate(zip(words, positions, strict=True)):
            if i:
                out.append(",")
            _render_value(view, word, at, depth, out)
        out.append("]")
    else:
        out.append("{")
        for i in range(count):
            key_word, value_word = words[i], words[count + i]
            if key_word & TYPE_MASK != STRING:
                raise JsonbError(f"key {i} of the object at byte {start} is not a string")
            if i:
                out.append(",")
            _render_value(view, key_word, positions[i], depth, out)
            out.append(":")
            _render_value(view, value_word, positions[count + i], depth, out)
        out.append("}")


def _render_value(view: memoryview, word: int, at: int, depth: int, out: list[str]) -> None:
    kind, length = word & TYPE_MASK, word & LENGTH_MASK
    body = view[at : at + length]
    if kind in (NULL, FALSE, TRUE):
        if length:
            raise JsonbError(f"a null or boolean at byte {at} has a payload of {length} bytes")
        out.append("null" if kind == NULL else "false" if kind == FALSE else "true")
    elif kind == STRING:
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonbError(f"the string at byte {at} is not UTF-8 ({exc.reason})") from None
        out.append(json.dumps(text, ensure_ascii=False))
    elif kind == NUMBER:
        out.append(_render_number(bytes(body), at))
    elif kind == CONTAINER:
        _render_container(view, at, at + length, depth + 1, out)
    elif kind == EXTENSION:
        try:
            out.append(json.dumps(_render_extension(bytes(body), at), ensure_ascii=False))
        except UnshowableValueError:
            if not isinstance(out, _Unshown):
                raise
    else:
        raise JsonbError(f"the entry at byte {at} has the undefined type 0x{kind:08x}")


def _render_number(body: bytes, at: int) -> str:
    if not body:
        raise JsonbError(f"the number at byte {at} has no tag")
    tag, size = body[0], len(body)
    if tag == NUMBER_ZERO and size == 1:
        return "0"
    if tag in (NUMBER_NAN, NUMBER_INF, NUMBER_NEG_INF) and size == 1:
        return "null"
    if tag in (NUMBER_INT, NUMBER_UINT) and size in INT_WIDTHS:
        return str(int.from_bytes(body[1:], "big", signed=tag == NUMBER_INT))
    if tag == NUMBER_FLOAT and size == 9:
        return render_float(struct.unpack(">d", body[1:])[0])
    if tag == NUMBER_DECIMAL and size in DECIMAL_LAYOUTS:
        width, _ = DECIMAL_LAYOUTS[size]
        coefficient = int.from_bytes(body[1 : 1 + width], "big", signed=True)
        scale = body[-1]  # a historical layout's precision byte comes before it and means nothing here
        # As Lance renders a decimal: both parts in binary64, then divided.
        return render_float(float(coefficient) / float(10**scale))
    raise JsonbError(f"the number at byte {at} has tag 0x{tag:02x} and {size} bytes, which no layout has")


def render_float(value: float) -> str:
    """A binary64 value as pylance 14 prints it (the module docstring)."""
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    # repr gives the shortest digits that read back as the same value.
    mantissa, _, exponent_text = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    if exponent_text:
        exponent = int(exponent_text) + len(whole) - 1
    elif whole.strip("0"):
        exponent = len(whole.lstrip("0")) - 1
    else:
        exponent = -(len(fraction) - len(fraction.lstrip("0")) + 1)
    digits = digits.rstrip("0") or "0"
    if -5 <= exponent < 16:
        if exponent >= 0:
            integral = digits[: exponent + 1].ljust(exponent + 1, "0")
            return f"{sign}{integral}.{digits[exponent + 1 :] or '0'}"
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    head = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
    return f"{sign}{head}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


def _render_extension(body: bytes, at: int) -> str:
    if not body:
        raise JsonbError(f"the extension value at byte {at} has no tag")
    tag, size = body[0], len(body)
    try:
        if tag == EXT_BINARY:
            return body[1:].hex().upper()
        if tag == EXT_DATE and size == 5:
            days = int.from_bytes(body[1:], "big", signed=True)
            return (_EPOCH + datetime.timedelta(days=days)).date().isoformat()
        if tag == EXT_TIMESTAMP and size == 9:
            return _timestamp(int.from_bytes(body[1:], "big", signed=True))
        if tag == EXT_TIMESTAMP_TZ and size in (13, 10):
            micros = int.from_bytes(body[1:9], "big", signed=True)
            if size == 13:
                offset = int.from_bytes(body[9:], "big", signed=True)
            else:  # the historical layout: whole hours in one signed byte
                offset = int.from_bytes(body[9:], "big", signed=True) * 3600
            return f"{_timestamp(micros + offset * _MICROS_PER_SECOND)} {_offset(offset)}"
        if tag == EXT_INTERVAL and size == 17:
            months, days, micros = struct.unpack(">iiq", body[1:])
            return _interval(months, days, micros)
    except OverflowError:
        raise UnshowableValueError(f"the date or time at byte {at} is outside the years 1 to 9999") from None
    raise JsonbError(f"the extension value at byte {at} has tag 0x{tag:02x} and {size} bytes, which no layout has")


def _timestamp(micros: int) -> str:
    moment = _EPOCH + datetime.timedelta(microseconds=micros)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def _offset(seconds: int) -> str:
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours:02d}{minutes:02d}" + (f"{secs:02d}" if secs else "")


def _plural(count: int, unit: str) -> str:
    return f"{count} {unit}" + ("" if abs(count) == 1 else "s")


def _interval(months: int, days: int, micros: int) -> str:
    """Years, months and days (each left out when zero, a negative count
    keeping its sign), then the time of day when it is not zero or when
    nothing else is shown; the fraction only when there is one."""
    years, months = int(months / 12), months - 12 * int(months / 12)  # both towards zero
    parts = [_plural(n, unit) for n, unit in ((years, "year"), (months, "month"), (days, "day")) if n]
    if micros or not parts:
        sign = "-" if micros < 0 else ""
        seconds, fraction = divmod(abs(micros), _MICROS_PER_SECOND)
        hours, rest = divmod(seconds, 3600)
        minutes, secs = divmod(rest, 60)
        time = f"{sign}{hours:02d}:{minutes:02d}:{secs:02d}" + (f".{fraction:06d}" if fraction else "")
        parts.append(time)
    return " ".join(parts)


# -- writing -----------------------------------------------------------------------------


def encode(text: str) -> bytes:
    """The document of one JSON text (standard JSON, plus NaN and the
    infinities; duplicate keys are refused). Non-negative integers up to
    2^64 - 1 become unsigned integers, negative ones down to -2^63 signed,
    other numbers binary64, as Lance's own text parser does."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise JsonbError(f"not JSON text: {exc}") from None
    kind, payload = _entry(value, 0)
    if kind == CONTAINER:
        return payload
    return struct.pack(">II", SCALAR, kind | len(payload)) + payload


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise JsonbError("an object repeats a key")
    return found


def _entry(value: object, depth: int) -> tuple[int, bytes]:
    """The entry type and payload of one value."""
    if depth > MAX_DEPTH:
        raise JsonbError(f"nested deeper than {MAX_DEPTH} containers")
    if value is None:
        return NULL, b""
    if value is True:
        return TRUE, b""
    if value is False:
        return FALSE, b""
    if isinstance(value, int):
        return NUMBER, _integer(value)
    if isinstance(value, float):
        return NUMBER, _float(value)
    if isinstance(value, str):
        return STRING, _bounded(value.encode("utf-8"))
    if isinstance(value, list):
        entries = [_entry(item, depth + 1) for item in value]
        return CONTAINER, _container(ARRAY, len(entries), entries)
    if isinstance(value, dict):
        keys = sorted(value, key=lambda key: key.encode("utf-8"))
        entries = [(STRING, _bounded(key.encode("utf-8"))) for key in keys]
        entries += [_entry(value[key], depth + 1) for key in keys]
        return CONTAINER, _container(OBJECT, len(keys), entries)
    raise JsonbError(f"no JSON value is a {type(value).__name__}")  # pragma: no cover - json.loads gives none


def _integer(value: int) -> bytes:
    if value == 0:
        return bytes([NUMBER_ZERO])
    if 0 < value < 1 << 64:
        width = next(w for w in (1, 2, 4, 8) if value < 1 << (8 * w))
        return bytes([NUMBER_UINT]) + value.to_bytes(width, "big")
    if -(1 << 63) <= value < 0:
        width = next(w for w in (1, 2, 4, 8) if value >= -(1 << (8 * w - 1)))
        return bytes([NUMBER_INT]) + value.to_bytes(width, "big", signed=True)
    try:
        return _float(float(value))
    except OverflowError:
        return bytes([NUMBER_INF if value > 0 else NUMBER_NEG_INF])


def _float(value: float) -> bytes:
    if math.isnan(value):
        return bytes([NUMBER_NAN])
    if math.isinf(value):
        return bytes([NUMBER_INF if value > 0 else NUMBER_NEG_INF])
    return bytes([NUMBER_FLOAT]) + struct.pack(">d", value)


def _bounded(payload: bytes) -> bytes:
    if len(payload) > MAX_ENTRY_LENGTH:
        raise JsonbError(f"a value of {len(payload)} bytes is more than one entry can describe")
    return payload


def _container(kind: int, count: int, entries: list[tuple[int, bytes]]) -> bytes:
    if count > MAX_COUNT:
        raise JsonbError(f"a container of {count} elements is more than a header can count")
    table = b"".join(struct.pack(">I", entry_type | len(_bounded(payload))) for entry_type, payload in entries)
    return struct.pack(">I", kind | count) + table + b"".join(payload for _, payload in entries)


# -- Arrow columns -----------------------------------------------------------------------


def is_json(data_type: pa.DataType) -> bool:
    """Whether ``data_type`` is Arrow's JSON extension type (the scan type)."""
    return isinstance(data_type, pa.BaseExtensionType) and data_type.extension_name == ARROW_JSON_EXTENSION


def holds_json(data_type: pa.DataType) -> bool:
    """Whether a JSON type is ``data_type`` or nested anywhere in it."""
    if is_json(data_type):
        return True
    return any(holds_json(data_type.field(i).type) for i in range(data_type.num_fields))


def stored_type(data_type: pa.DataType) -> pa.DataType:
    """``data_type`` with every JSON type in it replaced by large binary,
    the type its documents are stored as."""
    if is_json(data_type):
        return pa.large_binary()
    if not holds_json(data_type):
        return data_type
    if pa.types.is_struct(data_type):
        return pa.struct([_stored_field(data_type.field(i)) for i in range(data_type.num_fields)])
    if pa.types.is_map(data_type):
        return pa.map_(_stored_field(data_type.key_field), _stored_field(data_type.item_field))
    if pa.types.is_fixed_size_list(data_type):
        return pa.list_(_stored_field(data_type.value_field), data_type.list_size)
    if pa.types.is_large_list(data_type):
        return pa.large_list(_stored_field(data_type.value_field))
    if pa.types.is_list(data_type):
        return pa.list_(_stored_field(data_type.value_field))
    raise JsonbError(f"JSON nested in {data_type} is not supported")


def _stored_field(field: pa.Field) -> pa.Field:
    return field.with_type(stored_type(field.type))


def stored_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([_stored_field(field) for field in schema], metadata=schema.metadata)


def present(column: pa.Array | pa.ChunkedArray, data_type: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """A column read as :func:`stored_type` of ``data_type``, as
    ``data_type``: each JSON document rendered to its text. Raises
    :class:`JsonbError` for a malformed document."""
    if not holds_json(data_type):
        return column
    if isinstance(column, pa.ChunkedArray):
        return pa.chunked_array([_present(chunk, data_type) for chunk in column.chunks], type=data_type)
    return _present(column, data_type)


def _mask(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None


def _present(array: pa.Array, data_type: pa.DataType) -> pa.Array:
    return _convert_json(array, data_type, _rendered, lambda logical: logical)


def _rendered(array: pa.Array, data_type: pa.DataType) -> pa.Array:
    texts = [None if document is None else render(document) for document in array.to_pylist()]
    return pa.ExtensionArray.from_storage(data_type, pa.array(texts, data_type.storage_type))


def _convert_json(
    array: pa.Array,
    data_type: pa.DataType,
    convert_leaf: Callable[[pa.Array, pa.DataType], pa.Array],
    result_type: Callable[[pa.DataType], pa.DataType],
) -> pa.Array:
    """``array`` (of logical type ``data_type``, or of its stored form) with
    each JSON leaf converted by ``convert_leaf`` and every nesting level
    rebuilt as ``result_type`` of its logical type: the one walk that both
    directions, stored to shown and shown to stored, share."""
    if not holds_json(data_type):
        return array
    if is_json(data_type):
        return convert_leaf(array, data_type)

    def convert(child: pa.Array, child_type: pa.DataType) -> pa.Array:
        return _convert_json(child, child_type, convert_leaf, result_type)

    target = result_type(data_type)
    if pa.types.is_struct(data_type):
        children = [convert(child, data_type.field(i).type) for i, child in enumerate(array.flatten())]
        return pa.StructArray.from_arrays(children, fields=list(target), mask=_mask(array))
    if pa.types.is_fixed_size_list(data_type):
        size = data_type.list_size
        values = convert(array.values.slice(array.offset * size, len(array) * size), data_type.value_type)
        return pa.FixedSizeListArray.from_arrays(values, type=target, mask=_mask(array))
    if pa.types.is_map(data_type):
        start, stop = array.offsets[0].as_py(), array.offsets[-1].as_py()
        offsets = pc.subtract(array.offsets, start)
        keys = convert(array.keys.slice(start, stop - start), data_type.key_type)
        items = convert(array.items.slice(start, stop - start), data_type.item_type)
        return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=_mask(array))
    values = convert(array.values, data_type.value_type)
    list_class = pa.LargeListArray if pa.types.is_large_list(data_type) else pa.ListArray
    return list_class.from_arrays(array.offsets, values, type=target, mask=_mask(array))


def stored_table(table: pa.Table) -> pa.Table:
    """``table`` with every JSON column (nested ones too) encoded as stored
    documents; raises :class:`JsonbError` for text that is not JSON."""
    if not any(holds_json(field.type) for field in table.schema):
        return table
    columns = [_stored_column(column, field.type) for column, field in zip(table.columns, table.schema, strict=True)]
    return pa.Table.from_arrays(columns, schema=stored_schema(table.schema))


def _stored_column(column: pa.ChunkedArray, data_type: pa.DataType) -> pa.ChunkedArray:
    if not holds_json(data_type):
        return column
    return pa.chunked_array([_stored(chunk, data_type) for chunk in column.chunks], type=stored_type(data_type))


def _stored(array: pa.Array, data_type: pa.DataType) -> pa.Array:
    return _convert_json(array, data_type, _encoded, stored_type)


def _encoded(array: pa.Array, data_type: pa.DataType) -> pa.Array:
    documents = [None if text is None else encode(text) for text in array.storage.to_pylist()]
    return pa.array(documents, pa.large_binary())
