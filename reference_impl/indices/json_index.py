"""JSON segments (upstream format/index/scalar/json.md): a wrapper that indexes
the value at one path of a JSON column with an ordinary scalar index, the
*target*, whose files are the segment's files.

:func:`read_json_details` decodes ``JsonIndexDetails`` (``path`` = 1,
``target_details`` = 2, a ``google.protobuf.Any`` whose type URL names the
target; ``target_data_type`` = 3 in later releases, absent in what pylance
14 writes). The wire format is read by hand here: the message is small, and
the project's generated protobuf modules hold the table format's messages,
not the index ones.

:func:`value_at` gives the value a document holds at the path, as the
target index stores it (the page's table: booleans, integers, floats and
strings decoded, absent and null values as null; arrays and objects are the
re-serialized subtree, returned as :data:`SUBTREE` here because the
reference does not re-serialize them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..index_metadata import IndexMetadata
from .types import IndexType

#: Stands for an array or object value (stored by the target as JSONB bytes).
SUBTREE = object()
#: Stands for a document that is not JSON text (not compared).
UNREADABLE = object()


class JsonDetailsError(ValueError):
    """Details bytes that are not a ``JsonIndexDetails`` message."""


@dataclass(frozen=True)
class JsonDetails:
    path: str
    target_type_url: str
    target_details: bytes
    #: ``target_data_type`` when recorded (a name or an enum number as text).
    target_data_type: str | None

    @property
    def target_type(self) -> IndexType | None:
        return IndexType.of(
            IndexMetadata(uuid="", name="", fields=[], dataset_version=0, type_url=self.target_type_url)
        )


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise JsonDetailsError("a varint runs past the end")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise JsonDetailsError("a varint runs past 10 bytes")


def message_fields(data: bytes) -> dict[int, list[bytes | int]]:
    """Field number -> values (bytes for length-delimited, int for varints)."""
    out: dict[int, list[bytes | int]] = {}
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
                raise JsonDetailsError(f"field {number} runs past the end")
            value, at = data[at : at + size], at + size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if at + size > len(data):
                raise JsonDetailsError(f"field {number} runs past the end")
            value, at = int.from_bytes(data[at : at + size], "little"), at + size
        else:
            raise JsonDetailsError(f"field {number} has the wire type {wire}")
        out.setdefault(number, []).append(value)
    return out


def _text(value: bytes | int, what: str) -> str:
    if not isinstance(value, bytes):
        raise JsonDetailsError(f"{what} is not length-delimited")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise JsonDetailsError(f"{what} is not UTF-8") from None


def read_json_details(details: bytes) -> JsonDetails:
    fields = message_fields(bytes(details))
    path = _text(fields.get(1, [b""])[-1], "path")
    target = fields.get(2, [b""])[-1]
    if not isinstance(target, bytes):
        raise JsonDetailsError("target_details is not a message")
    any_fields = message_fields(target)
    type_url = _text(any_fields.get(1, [b""])[-1], "target_details.type_url")
    value = any_fields.get(2, [b""])[-1]
    data_type = None
    if 3 in fields:
        raw = fields[3][-1]
        data_type = _text(raw, "target_data_type") if isinstance(raw, bytes) else str(raw)
    return JsonDetails(path, type_url, value if isinstance(value, bytes) else b"", data_type)


def path_keys(path: str) -> list[str] | None:
    """The object keys a path names, outermost first (``a.b`` or ``$.a.b``);
    None for a path with array steps or quoting, which is not resolved here."""
    if path.startswith("$"):
        path = path[1:].lstrip(".")
    if not path or any(c in path for c in "[]'\"*"):
        return None
    return path.split(".")


def value_at(document: str | None, keys: list[str]):
    """The value at ``keys`` of a JSON text document as the target stores it:
    None for a null document, an absent path or a JSON null."""
    if document is None:
        return None
    try:
        value = json.loads(document)
    except ValueError:
        return UNREADABLE
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    if isinstance(value, (dict, list)):
        return SUBTREE
    return value
