"""Rules on the unenforced primary key (table format: unenforced primary
key; schema format: field metadata)."""

from __future__ import annotations

import re
from collections import Counter

from reference_impl.schema import Field, FieldType, field_role, primary_key_fields
from reference_impl.transactions import Overwrite, Restore
from reference_impl.type_grammar import PRIMARY_KEY_KEY, PRIMARY_KEY_POSITION_KEY

from ..context import VersionView
from ..facts.findings import tolerated
from ..facts.schema_tree import SchemaTree, field_label, metadata_text, schema_tree
from ..facts.text import listed
from ..facts.transactions import previous_version, version_operation
from ..registry import Severity, rule

_LIST_KINDS = ("list", "large_list", "list.struct", "large_list.struct")
_MAP_KINDS = ("map",)


# --------------------------------------------------------------------------
# The unenforced primary key
# --------------------------------------------------------------------------


def _key_fields(view: VersionView) -> list[Field]:
    return primary_key_fields(view.manifest.schema)


@rule(
    "primary-key/non-nullable",
    severity=Severity.ERROR,
    requirements=("primary-key.non-nullable",),
    summary="Primary key fields and all their ancestors are non-nullable",
)
def key_non_nullable(view: VersionView):
    tree = schema_tree(view)
    for f in _key_fields(view):
        where = view.at(f"fields[{tree.position.get(f.id, 0)}].nullable")
        if f.nullable:
            yield f"primary key {field_label(f)} is nullable", where
        for a in tree.ancestors(f):
            if a.nullable:
                yield (
                    f"primary key {field_label(f)} has a nullable ancestor {a.name!r} (id {a.id})",
                    view.at(f"fields[{tree.position[a.id]}].nullable"),
                )


@rule(
    "primary-key/leaf",
    severity=Severity.ERROR,
    requirements=("primary-key.leaf-only",),
    summary="Primary key fields are leaves: primitive types without child fields",
)
def key_leaf(view: VersionView):
    tree = schema_tree(view)
    for f in _key_fields(view):
        kids = tree.children.get(f.id, [])
        if kids or field_role(f.logical_type) is not FieldType.LEAF:
            yield (
                f"primary key {field_label(f)} is not a leaf: logical type {f.logical_type!r}, {len(kids)} child "
                "fields",
                view.at(f"fields[{tree.position.get(f.id, 0)}]"),
            )


def _container_ancestors(tree: SchemaTree, f: Field, kinds) -> list[Field]:
    return [a for a in tree.ancestors(f) if a.logical_type.partition(":")[0] in kinds]


@rule(
    "primary-key/not-under-list-or-map",
    severity=Severity.ERROR,
    requirements=("primary-key.not-under-list-or-map",),
    summary="No primary key field lies inside a list or a map",
)
def key_not_under_list(view: VersionView):
    tree = schema_tree(view)
    for f in _key_fields(view):
        for a in _container_ancestors(tree, f, _LIST_KINDS + _MAP_KINDS):
            yield (
                f"primary key {tree.path(f)!r} (id {f.id}) lies inside the {a.logical_type!r} field {a.name!r}",
                view.at(f"fields[{tree.position.get(f.id, 0)}]"),
            )


@rule(
    "primary-key/under-fixed-size-list",
    severity=Severity.INFO,
    requirements=("primary-key.not-under-list-or-map",),
    summary="No primary key field lies inside a fixed-size list (pylance allows it)",
)
def key_under_fixed_size_list(view: VersionView):
    tree = schema_tree(view)
    for f in _key_fields(view):
        for a in _container_ancestors(tree, f, ("fixed_size_list",)):
            yield (
                f"primary key {tree.path(f)!r} (id {f.id}) lies inside the fixed-size list {a.name!r}; "
                f"the table overview page forbids keys within list types, {view.writer} wrote it "
                "(see docs/spec-discrepancies.md)",
                view.at(f"fields[{tree.position.get(f.id, 0)}]"),
            )


@rule(
    "primary-key/positions",
    severity=Severity.INFO,
    requirements=("primary-key.position-base",),
    summary="Explicit key positions run 1, 2, 3, ... without repeats or gaps",
)
def key_positions(view: VersionView):
    positions = sorted(p for p in (f.unenforced_primary_key_position for f in _key_fields(view)) if p)
    if not positions:
        return
    repeated = sorted(p for p, n in Counter(positions).items() if n > 1)
    if repeated:
        yield (
            f"primary key positions {repeated} are used by more than one field (ties are ordered by field id)",
            view.at("fields"),
        )
    elif positions != list(range(1, len(positions) + 1)):
        yield f"primary key positions {listed(positions, 10)} do not run 1, 2, 3, ...", view.at("fields")


@rule(
    "primary-key/position-without-flag",
    severity=Severity.WARNING,
    requirements=("primary-key.position-base",),
    summary="A field with a key position also has the primary key flag set",
)
def key_position_without_flag(view: VersionView):
    for i, f in enumerate(view.manifest.schema.fields):
        if f.unenforced_primary_key_position > 0 and not f.unenforced_primary_key:
            yield (
                f"{field_label(f)} has primary key position {f.unenforced_primary_key_position} but not the flag: "
                "pylance counts it as a key column, a reader following the table overview page does not",
                view.at(f"fields[{i}].unenforced_primary_key"),
            )


_PK_TRUE = ("true", "1", "yes")
_U32_MAX = 2**32 - 1


def _metadata_position(text: str | None) -> int | None:
    """The position as pylance reads it (an unsigned 32-bit number, ``+``
    allowed), or None."""
    if text is None or not re.fullmatch(r"\+?\d{1,10}", text):
        return None
    value = int(text)
    return value if value <= _U32_MAX else None


@rule(
    "primary-key/metadata-agrees",
    severity=Severity.WARNING,
    requirements=("primary-key.arrow-metadata-flag", "primary-key.arrow-metadata-position"),
    summary="Primary key metadata kept on a field agrees with its stored primary key flag and position",
)
def key_metadata_agrees(view: VersionView):
    for i, f in enumerate(view.manifest.schema.fields):
        if PRIMARY_KEY_KEY not in f.metadata and PRIMARY_KEY_POSITION_KEY not in f.metadata:
            continue
        flag_text = metadata_text(f.metadata[PRIMARY_KEY_KEY]) if PRIMARY_KEY_KEY in f.metadata else None
        position = _metadata_position(metadata_text(f.metadata.get(PRIMARY_KEY_POSITION_KEY, b"")) or None)
        flag = (flag_text or "").lower() in _PK_TRUE
        stored = f.unenforced_primary_key or f.unenforced_primary_key_position > 0
        where = view.at(f"fields[{i}].metadata")
        if stored != (flag or bool(position)):
            yield (
                f"{field_label(f)}: its metadata {'makes' if not stored else 'does not make'} it a key column, "
                f"the stored flag and position say {'no' if not stored else 'yes'}",
                where,
            )
        elif stored != flag:
            yield tolerated(
                "primary-key/metadata-agrees",
                view,
                f"{field_label(f)} is a key column through its position metadata alone ({PRIMARY_KEY_KEY} is "
                f"{'absent' if flag_text is None else repr(flag_text)}): pylance's reading, "
                "not the table overview page's (see docs/spec-discrepancies.md)",
                where,
            )
        if position is not None and position != f.unenforced_primary_key_position:
            yield (
                f"{field_label(f)}: position metadata says {position}, the stored position is "
                f"{f.unenforced_primary_key_position}",
                where,
            )


@rule(
    "primary-key/fixed",
    severity=Severity.ERROR,
    requirements=("primary-key.fixed",),
    summary="Once set, the primary key (its fields and their order) never changes or goes away",
)
def key_fixed(view: VersionView):
    previous = previous_version(view)
    if previous is None:
        return
    before = [(f.id, f.name) for f in primary_key_fields(previous.manifest.schema)]
    if not before:
        return
    after = [(f.id, f.name) for f in _key_fields(view)]
    if [i for i, _ in before] == [i for i, _ in after]:
        return
    message = f"the primary key was {before} in version {previous.version} and is {after or 'gone'} now"
    operation = version_operation(view)
    if isinstance(operation, (Overwrite, Restore)):
        yield tolerated(
            "primary-key/fixed",
            view,
            f"{message}, changed by the {operation.NAME} operation ({view.writer} allows this; see "
            "docs/spec-discrepancies.md)",
            view.at("fields"),
        )
    else:
        yield message, view.at("fields")
