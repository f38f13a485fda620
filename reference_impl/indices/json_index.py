"""JSON segments (upstream format/index/scalar/json.md): a wrapper that indexes
the value at one path of a JSON column with an ordinary scalar index, the
*target*, whose files are the segment's files.

:func:`read_json_details` decodes ``JsonIndexDetails`` (``path`` = 1,
``target_details`` = 2, a ``google.protobuf.Any`` whose type URL names the
target; ``target_data_type`` = 3 in later releases, absent in what pylance
14 writes), field by field (:mod:`.wire_fields`).

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
from .wire_fields import WireFormatError, message_fields, text_field

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


def read_json_details(details: bytes) -> JsonDetails:
    try:
        fields = message_fields(bytes(details))
        path = text_field(fields, 1, "path", "") or ""
        target = fields.get(2, [b""])[-1]
        if not isinstance(target, bytes):
            raise JsonDetailsError("target_details is not a message")
        any_fields = message_fields(target)
        type_url = text_field(any_fields, 1, "target_details.type_url", "") or ""
        data_type = None
        if 3 in fields:
            raw = fields[3][-1]
            data_type = text_field(fields, 3, "target_data_type") if isinstance(raw, bytes) else str(raw)
    except WireFormatError as exc:
        raise JsonDetailsError(str(exc)) from None
    value = any_fields.get(2, [b""])[-1]
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
