"""Protobuf messages read field by field (the wire format: a key varint of
field number and wire type, then a varint, a fixed 8 or 4 bytes, or a
length and that many bytes), for the index details messages the project's
generated modules do not hold (JSON, MINHASH_LSH and the tokenizer they
share with INVERTED). Every length is checked against the bytes left.
"""

from __future__ import annotations

#: A message's fields: field number -> its values in order (bytes for
#: length-delimited fields, ints for varints and fixed-width fields).
Fields = dict[int, list[bytes | int]]


class WireFormatError(ValueError):
    """Bytes that are not a protobuf message (a varint or a field that runs
    past the end, an unknown wire type), or a field of the wrong kind."""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise WireFormatError("a varint runs past the end")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise WireFormatError("a varint runs past 10 bytes")


def message_fields(data: bytes) -> Fields:
    """Field number -> values (bytes for length-delimited, int otherwise)."""
    out: Fields = {}
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        value: bytes | int
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 2:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise WireFormatError(f"field {number} runs past the end")
            value, at = data[at : at + size], at + size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if at + size > len(data):
                raise WireFormatError(f"field {number} runs past the end")
            value, at = int.from_bytes(data[at : at + size], "little"), at + size
        else:
            raise WireFormatError(f"field {number} has the wire type {wire}")
        out.setdefault(number, []).append(value)
    return out


def text_field(fields: Fields, number: int, what: str, default: str | None = None) -> str | None:
    """The last value of string field ``number`` (``default`` when absent);
    ``what`` names the field in the error of a value that is not UTF-8
    text."""
    value = fields.get(number, [None])[-1]
    if value is None:
        return default
    if not isinstance(value, bytes):
        raise WireFormatError(f"{what} is not length-delimited")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise WireFormatError(f"{what} is not UTF-8") from None
