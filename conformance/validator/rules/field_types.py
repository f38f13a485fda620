"""Rules on each field's logical type and metadata (schema format: logical
types, field metadata).

Logical type strings may be arbitrarily long or nested: they are parsed
through :func:`~conformance.validator.facts.schema_tree.parse_type`, which
bounds the work and never raises.
"""

from __future__ import annotations

import re
import zoneinfo
from functools import lru_cache

# The grammar and field roles from their own modules, not through
# reference_impl.logical_types, which also brings the Arrow conversion (and
# pyarrow) that no rule here needs.
from reference_impl.schema import FieldType, field_role
from reference_impl.type_grammar import BFLOAT16_EXTENSION, EXTENSION_NAME_KEY, KNOWN_KINDS, ParsedType

from ..context import VersionView
from ..facts.schema_tree import SchemaTree, field_label, metadata_text, parse_type, parsed_type, schema_tree
from ..facts.text import listed
from ..registry import Severity, rule

# --------------------------------------------------------------------------
# Logical types and the shape they give each field
# --------------------------------------------------------------------------


@rule(
    "schema/logical-type-known",
    severity=Severity.ERROR,
    requirements=("schema.logical-type-known", "schema.bfloat16-in-fixed-size-list"),
    summary="Every logical_type names a type the schema format defines",
)
def logical_type_known(view: VersionView):
    for i, f in enumerate(view.manifest.schema.fields):
        head = f.logical_type.partition(":")[0]
        if head in KNOWN_KINDS:
            continue
        shown = f.logical_type if len(f.logical_type) <= 80 else f.logical_type[:80] + "..."
        if head == BFLOAT16_EXTENSION:
            problem = f"{BFLOAT16_EXTENSION!r} is only valid as a fixed-size list element"
        elif not f.logical_type:
            problem = "the logical type is empty"
        else:
            problem = f"{shown!r} is not a logical type of the schema format"
        yield f"{field_label(f)}: {problem}", view.at(f"fields[{i}].logical_type")


@rule(
    "schema/logical-type-format",
    severity=Severity.ERROR,
    requirements=(
        "schema.decimal-format",
        "schema.timestamp-format",
        "schema.date-time-units",
        "schema.fixed-size-list-format",
        "schema.fixed-size-binary-format",
        "schema.dictionary-format",
        "schema.bfloat16-in-fixed-size-list",
    ),
    summary="Parameterised logical types are well formed (units, precision, sizes, element and key types)",
)
def logical_type_format(view: VersionView):
    for i, f in enumerate(view.manifest.schema.fields):
        if f.logical_type.partition(":")[0] not in KNOWN_KINDS:
            continue  # schema/logical-type-known
        _, problem = parse_type(f.logical_type)
        if problem:
            yield f"{field_label(f)}: {problem[:300]}", view.at(f"fields[{i}].logical_type")


@rule(
    "schema/decimal-scale",
    severity=Severity.INFO,
    requirements=("schema.decimal-format",),
    summary="Decimal scales lie between 0 and the precision (pylance writes others)",
)
def decimal_scale(view: VersionView):
    for i, f in enumerate(view.manifest.schema.fields):
        if "decimal" not in f.logical_type:
            continue
        loose, _ = parse_type(f.logical_type)
        if loose is None:
            continue
        _, strict_problem = parse_type(f.logical_type, strict=True)
        if strict_problem:
            yield (
                f"{field_label(f)}: {f.logical_type!r} has a scale outside 0..precision "
                "(readable; see docs/spec-discrepancies.md)",
                view.at(f"fields[{i}].logical_type"),
            )


_FIXED_OFFSET = re.compile(r"[+-]\d{2}(:?\d{2})?")


@lru_cache(maxsize=1)
def _iana_zones() -> frozenset[str]:
    try:
        return frozenset(zoneinfo.available_timezones())
    except Exception:  # noqa: BLE001 - no time zone database: check offsets only
        return frozenset()


def _zones(parsed: ParsedType):
    if parsed.kind == "timestamp" and parsed.timezone is not None:
        yield parsed.timezone
    for inner in (parsed.element, parsed.value):
        if inner is not None:
            yield from _zones(inner)


@rule(
    "schema/timestamp-zone",
    severity=Severity.INFO,
    requirements=("schema.timestamp-format",),
    summary="Timestamp time zones are IANA names (pylance also writes fixed offsets such as +01:00)",
)
def timestamp_zone(view: VersionView):
    known = _iana_zones()
    for i, f in enumerate(view.manifest.schema.fields):
        if "timestamp" not in f.logical_type:
            continue
        parsed, _ = parse_type(f.logical_type)
        if parsed is None:
            continue
        for zone in _zones(parsed):
            if _FIXED_OFFSET.fullmatch(zone):
                why = "is a fixed UTC offset, not an IANA time zone name"
            elif known and zone not in known:
                why = "is not an IANA time zone name this system knows"
            else:
                continue
            yield f"{field_label(f)}: time zone {zone!r} {why}", view.at(f"fields[{i}].logical_type")


def _kind_of(tree: SchemaTree, position: int) -> str | None:
    parsed = parsed_type(tree, tree.fields[position])
    return parsed.kind if parsed is not None else None


@rule(
    "schema/children-fit-type",
    severity=Severity.ERROR,
    requirements=(
        "schema.list-element-child",
        "schema.list-struct-suffix",
        "schema.map-children",
        "schema.fixed-size-list-format",
    ),
    summary="Lists have one element child, maps one entries struct of key and value, list.struct a struct child",
)
def children_fit_type(view: VersionView):
    tree = schema_tree(view)
    for f in tree.by_id.values():
        parsed = parsed_type(tree, f)
        if parsed is None or field_role(f.logical_type) is FieldType.LEAF:
            continue  # leaves with children are schema/parent-is-nested's
        kids = tree.children.get(f.id, [])
        where = view.at(f"fields[{tree.position[f.id]}]")
        expected = parsed.expected_children
        if expected is not None and len(kids) != expected:
            yield f"{field_label(f)} is a {f.logical_type!r} field with {len(kids)} child fields, not {expected}", where
            continue
        if expected is None or not kids:
            continue
        child_kind = _kind_of(tree, kids[0])
        child = tree.fields[kids[0]]
        if child_kind is None:
            continue  # the child's own type is reported elsewhere
        if parsed.child_must_be_struct and child_kind != "struct":
            yield (
                f"{field_label(f)} is a {f.logical_type!r} field but its child {child.name!r} is a {child_kind!r}",
                where,
            )
        elif f.logical_type in ("list", "large_list") and child_kind == "struct":
            yield (
                f"{field_label(f)} has a struct element, so its logical type must be {f.logical_type + '.struct'!r}",
                where,
            )
        elif parsed.kind == "map" and child_kind == "struct":
            entries = tree.children.get(child.id, [])
            if len(entries) != 2:
                yield (
                    f"{field_label(f)}: its entries struct {child.name!r} has {len(entries)} child fields, "
                    "not 2 (key and value)",
                    where,
                )


@rule(
    "schema/field-kind",
    severity=Severity.INFO,
    requirements=("schema.field-kind-matches-type",),
    summary="Field.type (PARENT, REPEATED, LEAF) agrees with the logical type (pylance writes PARENT everywhere)",
)
def field_kind(view: VersionView):
    wrong = []
    for i, f in enumerate(view.manifest.schema.fields):
        if parse_type(f.logical_type)[0] is None:
            continue
        role = field_role(f.logical_type)
        accepted = {role}
        if role is FieldType.REPEATED and f.logical_type.endswith("struct"):
            accepted.add(FieldType.PARENT)  # a list of structs is also the parent of the struct's members
        if f.type not in accepted:
            wrong.append((i, f, role))
    if wrong:
        all_parent = all(f.type is FieldType.PARENT for _, f, _ in wrong)
        detail = listed(
            [f"{field_label(f)} is {f.type.name}, its type makes it {role.name}" for _, f, role in wrong], sep="; "
        )
        note = f" ({view.writer} wrote PARENT for every field; see docs/spec-discrepancies.md)" if all_parent else ""
        yield (
            f"{len(wrong)} fields have a type that disagrees with their logical type{note}: {detail}",
            view.at(f"fields[{wrong[0][0]}].type"),
        )


# --------------------------------------------------------------------------
# Field metadata
# --------------------------------------------------------------------------

_ENCODING_PREFIX = "lance-encoding:"
_COMPRESSION_SCHEMES = ("lz4", "zstd", "none", "fsst")
#: miniblock and fullzip from the table format page; sparse from the file
#: format's encoding page, which names it as the one that requires file
#: version 2.3 (pylance 14 writes it there: fixtures/cases/pylance-format-2-3).
_STRUCTURAL_ENCODINGS = ("miniblock", "fullzip", "sparse")


def _integer(text: str) -> int | None:
    return int(text) if re.fullmatch(r"[+-]?\d{1,12}", text.strip()) else None


def _encoding_problem(key: str, text: str, metadata: dict[str, bytes]) -> str | None:
    name = key[len(_ENCODING_PREFIX) :]
    lowered = text.strip().lower()
    if name == "compression":
        if lowered not in _COMPRESSION_SCHEMES:
            return f"{text!r} is not a documented compression scheme ({', '.join(_COMPRESSION_SCHEMES)})"
    elif name == "compression-level":
        level = _integer(text)
        if level is None:
            return f"{text!r} is not an integer"
        scheme = metadata_text(metadata.get(_ENCODING_PREFIX + "compression", b"")) or ""
        if scheme.strip().lower() == "zstd" and not 0 <= level <= 22:
            return f"zstd levels run from 1 to 22 (0 for the default), not {level}"
    elif name in ("blob", "packed"):
        if lowered not in ("true", "false"):
            return f"{text!r} is neither true nor false"
    elif name == "structural-encoding":
        if lowered not in _STRUCTURAL_ENCODINGS:
            return f"{text!r} is not {', '.join(_STRUCTURAL_ENCODINGS[:-1])} or {_STRUCTURAL_ENCODINGS[-1]}"
    elif name == "bss":
        if lowered not in ("off", "on", "auto"):
            return f"{text!r} is not off, on or auto"
    elif name == "general":
        if lowered not in ("off", "on"):
            return f"{text!r} is neither off nor on"
    elif name == "dict-divisor":
        divisor = _integer(text)
        if divisor is None or divisor <= 1:
            return f"{text!r} is not an integer greater than 1"
    elif name == "rle-threshold":
        try:
            threshold = float(text)
        except ValueError:
            return f"{text!r} is not a number"
        if not 0.0 <= threshold <= 1.0:
            return f"{text!r} is outside 0.0..1.0"
    return None


@rule(
    "schema/encoding-metadata",
    severity=Severity.WARNING,
    requirements=("schema.encoding-metadata-values",),
    summary="Documented lance-encoding: field metadata keys hold values of their documented form",
)
def encoding_metadata(view: VersionView):
    # A warning, not an error: these settings steer writers only (readers
    # follow the encodings recorded in each data file), and pylance stores
    # whatever value it was given.
    for i, f in enumerate(view.manifest.schema.fields):
        for key, value in f.metadata.items():
            if not key.startswith(_ENCODING_PREFIX):
                continue
            text = metadata_text(value)
            problem = "the value is not UTF-8" if text is None else _encoding_problem(key, text, f.metadata)
            if problem:
                yield f"{field_label(f)}: {key} = {problem}", view.at(f"fields[{i}].metadata[{key}]")


@rule(
    "schema/extension-metadata",
    severity=Severity.WARNING,
    requirements=("schema.extension-metadata-namespace",),
    summary="ARROW:extension:name is a non-empty UTF-8 name that agrees with the legacy extension_name",
)
def extension_metadata(view: VersionView):
    for i, f in enumerate(view.manifest.schema.fields):
        raw = f.metadata.get(EXTENSION_NAME_KEY)
        where = view.at(f"fields[{i}].metadata[{EXTENSION_NAME_KEY}]")
        if raw is None:
            continue  # parameters without a name are ignored by Arrow readers: harmless
        name = metadata_text(raw)
        if name is None:
            yield f"{field_label(f)}: {EXTENSION_NAME_KEY} is not UTF-8", where
        elif not name:
            yield f"{field_label(f)}: {EXTENSION_NAME_KEY} is empty", where
        elif f.extension_name and f.extension_name != name:
            yield (
                f"{field_label(f)}: {EXTENSION_NAME_KEY} says {name!r} but the legacy extension_name says "
                f"{f.extension_name!r}; readers disagree on which wins",
                where,
            )
