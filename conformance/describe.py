"""The canonical description of one dataset version.

Every reader-facing view in lance-conformance goes through this document: the
``describe`` command prints it, every driver produces it from its own
implementation, and conformance checks compare two of them. Its JSON Schema is
``conformance/schemas/describe.schema.json``; :class:`Description` and the
shapes it is made of are the same document as typed dictionaries, which every
driver builds (their keys are declared in the schema's order, the order the
JSON is written in).

Standard library only: the pylance driver imports this module inside an old
pylance release's own environment (:mod:`conformance.drivers.release`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any, Literal, TypedDict

DESCRIBE_FORMAT = 1

#: The manifest naming scheme; ``legacy`` for a dataset known only through
#: ``_latest.manifest``.
NamingScheme = Literal["v1", "v2", "legacy"]


class FieldDescription(TypedDict):
    """One schema field; fields are listed depth first, in manifest order."""

    id: int
    parent_id: int
    name: str
    logical_type: str
    nullable: bool


class DataFileDescription(TypedDict):
    """One data file of a fragment, as the manifest records it."""

    path: str
    fields: list[int]
    column_indices: list[int]
    file_major_version: int
    file_minor_version: int
    #: The recorded size; 0 means unknown.
    file_size_bytes: int | None
    base_id: int | None


class FragmentDescription(TypedDict):
    """One fragment: its rows, deleted offsets (ascending), files and the
    stable row ids of its visible rows (None without stable row ids)."""

    id: int
    physical_rows: int
    num_deleted_rows: int
    deleted_offsets: list[int]
    files: list[DataFileDescription]
    row_ids: list[int] | None


class DataFormatDescription(TypedDict):
    file_format: str
    version: str


class WriterVersionDescription(TypedDict):
    library: str
    version: str


class IndexDescription(TypedDict):
    """One index segment; the document lists them by (name, uuid).

    ``fragment_ids`` (ascending) are the fragments the segment covers as a
    reader sees them: the stored bitmap, translated through the fragment
    reuse index where one records rewrites of covered fragments
    (:func:`reference_impl.fragment_reuse.covered_fragment_ids`). It is None when
    the manifest stores no bitmap at all, and ``[]`` for a stored bitmap that
    holds no id. The two stay apart: table.proto's ``fragment_bitmap`` is a
    serialized Roaring bitmap, and an empty bitmap still serializes to a
    header of 8 bytes, so zero bytes is no bitmap, not an empty one; Lance
    itself reads zero bytes as "coverage unknown", which is not "covers
    nothing" (docs/spec-discrepancies.md, "Golden fixtures", item 4)."""

    name: str
    uuid: str
    fields: list[int]
    dataset_version: int
    fragment_ids: list[int] | None
    type_url: str | None


class BasePathDescription(TypedDict):
    id: int
    name: str | None
    is_dataset_root: bool
    path: str


class TagDescription(TypedDict):
    name: str
    version: int
    branch: str | None


class Description(TypedDict):
    """The canonical description of one version (the schema's top level).

    Lists that stand for sets are in one canonical order, whatever order the
    manifest stores them in: ``indices`` by (name, uuid), ``base_paths`` by
    id, ``tags`` by name, ``fragments[].deleted_offsets`` and
    ``indices[].fragment_ids`` ascending, and the metadata maps by key. The
    other lists keep the manifest's order because it means something: schema
    fields (depth first), fragments (scan order), a fragment's data files
    (a later file wins), a data file's fields with their column indices, an
    index's fields, and row ids (row order).

    ``naming_scheme`` is None only from a driver that lists it as unreported
    (a reader that cannot tell which manifest path it followed)."""

    describe_format: int
    version: int
    naming_scheme: NamingScheme | None
    num_rows: int
    schema: list[FieldDescription]
    schema_metadata: dict[str, str]
    fragments: list[FragmentDescription]
    reader_feature_flags: int | None
    writer_feature_flags: int | None
    max_fragment_id: int | None
    next_row_id: int | None
    data_format: DataFormatDescription | None
    writer_version: WriterVersionDescription | None
    indices: list[IndexDescription]
    config: dict[str, str]
    table_metadata: dict[str, str]
    base_paths: list[BasePathDescription]
    tags: list[TagDescription]


@cache
def load_schema(name: str) -> dict:
    """A JSON Schema shipped in ``conformance/schemas``."""
    # One name per joinpath: importlib's Traversable takes only one before
    # Python 3.11.
    text = resources.files("conformance").joinpath("schemas").joinpath(name).read_text()
    return json.loads(text)


@cache
def schema_validator(name: str):
    """A compiled validator for a shipped JSON Schema (checked once, reused)."""
    import jsonschema  # lazy: importing this module needs the standard library only (docstring)

    schema = load_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def validate_description(document: Mapping[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``document`` fits the schema."""
    import jsonschema  # lazy: importing this module needs the standard library only (docstring)

    error = jsonschema.exceptions.best_match(schema_validator("describe.schema.json").iter_errors(document))
    if error is not None:
        raise error


def metadata_value(raw: bytes) -> str:
    """Metadata bytes as text: UTF-8 when they are, else ``base64:...``."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(raw).decode("ascii")


def to_json(document: Description) -> str:
    return json.dumps(document, indent=2, sort_keys=False)


def to_text(document: Description) -> str:
    """A short human-readable rendering."""
    lines = [
        f"version {document['version']} ({document['naming_scheme']} names), {document['num_rows']} rows, "
        f"{len(document['fragments'])} fragments",
    ]
    writer = document.get("writer_version")
    if writer:
        lines.append(f"written by {writer['library']} {writer['version']}")
    data_format = document.get("data_format")
    if data_format:
        lines.append(f"data format {data_format['file_format']} {data_format['version']}")
    lines.append("schema:")
    depth = {-1: 0}
    for field in document["schema"]:
        level = depth.get(field["parent_id"], 0) + 1
        depth[field["id"]] = level
        nullable = "" if field["nullable"] else " not null"
        lines.append(f"{'  ' * level}{field['id']}: {field['name']} {field['logical_type']}{nullable}")
    for fragment in document["fragments"]:
        deleted = f", {fragment['num_deleted_rows']} deleted" if fragment["num_deleted_rows"] else ""
        lines.append(
            f"fragment {fragment['id']}: {fragment['physical_rows']} rows{deleted}, {len(fragment['files'])} files"
        )
    for index in document["indices"]:
        lines.append(f"index {index['name']} on fields {index['fields']} covering fragments {index['fragment_ids']}")
    for tag in document["tags"]:
        lines.append(f"tag {tag['name']} -> version {tag['version']}")
    return "\n".join(lines)


# -- comparison ------------------------------------------------------------------


def _matches(pattern: str, path: str) -> bool:
    """Whether a document path such as ``fragments[3].files[0].path`` matches a
    pattern such as ``fragments[].files[].path`` (``[]`` matches any index)."""
    regex = "^" + re.escape(pattern).replace(r"\[\]", r"\[\d+\]") + "$"
    return re.match(regex, path) is not None


def differences(expected: Any, actual: Any, *, ignore: Iterable[str] = (), path: str = "") -> list[str]:
    """Every place where two documents differ, as ``path: expected != actual``.

    ``ignore`` lists paths (with ``[]`` for any list index) a side cannot
    report; they and everything below them are skipped.
    """
    ignore = tuple(ignore)
    if path and any(_matches(p, path) for p in ignore):
        return []
    if isinstance(expected, dict) and isinstance(actual, dict):
        found = []
        for key in sorted(set(expected) | set(actual)):
            child = f"{path}.{key}" if path else key
            if key not in expected or key not in actual:
                if not any(_matches(p, child) for p in ignore):
                    found.append(f"{child}: present on one side only")
                continue
            found.extend(differences(expected[key], actual[key], ignore=ignore, path=child))
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{path}: {len(expected)} items != {len(actual)} items"]
        found = []
        for i, (a, b) in enumerate(zip(expected, actual, strict=True)):
            found.extend(differences(a, b, ignore=ignore, path=f"{path}[{i}]"))
        return found
    if expected != actual:
        return [f"{path}: {expected!r} != {actual!r}"]
    return []
