"""Rules on the schema and the unenforced primary key (schema format: field
ids, parent ids, logical types, field metadata; table format: unenforced
primary key).

Every rule here reads only the manifest's field list, and must stay total on
hostile input: ids may repeat, parents may dangle or form cycles, logical type
strings may be arbitrarily long or nested. The shared :class:`_Tree` works
out the structure once per version with iterative, linear-time walks, so no
rule recurses or loops on a cycle.
"""

from __future__ import annotations

import bisect
import re
import zoneinfo
from collections import Counter
from dataclasses import dataclass, field as dc_field
from functools import lru_cache

from reference_impl.logical_types import (
    BFLOAT16_EXTENSION,
    EXTENSION_NAME_KEY,
    KNOWN_KINDS,
    MAX_NESTING_DEPTH,
    PRIMARY_KEY_KEY,
    PRIMARY_KEY_POSITION_KEY,
    ParsedType,
    field_role,
    parse_logical_type,
    primary_key_fields,
)
from reference_impl.schema import TOP_LEVEL_PARENT, Field, FieldType, Schema
from reference_impl.transactions import Clone, Overwrite, Restore, read_transaction_file

from ..context import VersionView
from ..registry import Finding, Severity, rule, rules_by_id

#: How many individual problems one finding lists before summarising.
_SHOWN = 5

_LIST_KINDS = ("list", "large_list", "list.struct", "large_list.struct")
_MAP_KINDS = ("map",)


# --------------------------------------------------------------------------
# Shared analysis of one version's field list
# --------------------------------------------------------------------------


@dataclass
class _Tree:
    """The field list of one version, taken apart once.

    ``by_id`` keeps the first field listed under each id (duplicates are the
    business of ``schema/field-ids-unique``); ``children`` lists, per field
    id, the positions of the fields naming it as parent; ``rooted`` holds the
    ids whose parent chain reaches the top level and ``cyclic`` those whose
    chain loops (the rest meet a dangling parent id).
    """

    fields: list[Field]
    by_id: dict[int, Field] = dc_field(default_factory=dict)
    position: dict[int, int] = dc_field(default_factory=dict)
    children: dict[int, list[int]] = dc_field(default_factory=dict)
    rooted: set[int] = dc_field(default_factory=set)
    cyclic: set[int] = dc_field(default_factory=set)
    parsed: dict[int, ParsedType | None] = dc_field(default_factory=dict)

    def ancestors(self, f: Field) -> list[Field]:
        """Parents of a rooted field, nearest first (empty for others), at
        most :data:`MAX_NESTING_DEPTH` of them: deeper schemas are beyond
        what Arrow accepts, and the bound keeps hostile chains cheap."""
        chain: list[Field] = []
        if f.id not in self.rooted or self.by_id.get(f.id) is not f:
            return chain  # a repeated id's later field has no reliable chain
        current = f
        while current.parent_id != TOP_LEVEL_PARENT and len(chain) < MAX_NESTING_DEPTH:
            parent = self.by_id.get(current.parent_id)
            if parent is None:
                break
            chain.append(parent)
            current = parent
        return chain

    def path(self, f: Field) -> str:
        return ".".join([a.name for a in reversed(self.ancestors(f))] + [f.name])


def _build_tree(schema: Schema) -> _Tree:
    tree = _Tree(list(schema.fields))
    for i, f in enumerate(tree.fields):
        if f.id not in tree.by_id:
            tree.by_id[f.id] = f
            tree.position[f.id] = i
    for i, f in enumerate(tree.fields):
        if f.parent_id != TOP_LEVEL_PARENT:
            tree.children.setdefault(f.parent_id, []).append(i)
    # Classify every id once: "rooted" (its chain reaches -1), "dangling"
    # (its chain meets a parent id no field has) or "cycle" (its chain loops).
    # Each id is settled the first time a walk passes it, so this is linear
    # even on hostile lists.
    state: dict[int, str] = {}
    for start in tree.by_id:
        chain: list[int] = []
        on_chain: set[int] = set()
        current = start
        while True:
            if current in state:
                verdict = state[current]
                break
            if current in on_chain:
                verdict = "cycle"
                break
            f = tree.by_id[current]
            chain.append(current)
            on_chain.add(current)
            if f.parent_id == TOP_LEVEL_PARENT:
                verdict = "rooted"
                break
            if f.parent_id not in tree.by_id:
                verdict = "dangling"
                break
            current = f.parent_id
        for fid in chain:
            state[fid] = verdict
    tree.rooted = {fid for fid, verdict in state.items() if verdict == "rooted"}
    tree.cyclic = {fid for fid, verdict in state.items() if verdict == "cycle"}
    return tree


def _tree(view: VersionView) -> _Tree:
    key = ("schema-tree", view.version, view.manifest_path)
    loaded = view.dataset.cached(key, lambda: _build_tree(view.manifest.schema))
    return loaded.value


#: No real logical type comes near this length; longer strings are refused
#: unparsed, which bounds the work hostile input can cause.
MAX_LOGICAL_TYPE_LENGTH = 4096


def _parse(text: str, *, strict: bool = False) -> tuple[ParsedType | None, str | None]:
    """Parse a logical type, never raising: (parsed, None) or (None, problem)."""
    if len(text) > MAX_LOGICAL_TYPE_LENGTH:
        return None, f"a logical type of {len(text)} characters is implausibly long"
    try:
        return parse_logical_type(text, strict=strict), None
    except ValueError as exc:
        return None, str(exc)
    except RecursionError:
        return None, "nested too deeply to parse"


def _parsed(tree: _Tree, f: Field) -> ParsedType | None:
    if f.id not in tree.parsed:
        tree.parsed[f.id] = _parse(f.logical_type)[0]
    return tree.parsed[f.id]


def _label(f: Field) -> str:
    return f"field {f.name!r} (id {f.id})"


def _shorten(items: list[str]) -> str:
    shown = "; ".join(items[:_SHOWN])
    return shown + (f"; and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def _operation(view: VersionView):
    """The operation of the transaction that created this version, or None
    when it is not recorded or does not decode."""
    embedded = view.manifest_file.transaction
    if embedded is not None:
        return embedded.operation
    name = view.manifest.transaction_file
    if not name:
        return None
    loaded = view.dataset.cached(("txn", name), lambda: read_transaction_file(view.dataset.storage, name))
    return loaded.value.operation if loaded.ok else None


def _previous(view: VersionView) -> VersionView | None:
    if view.version <= 0:
        return None
    return view.dataset.version_view(view.version - 1)


def _downgraded(rule_id: str, view: VersionView, message: str, location: str) -> Finding:
    """An info finding of a stricter rule: a tolerated departure."""
    found = rules_by_id()[rule_id]
    return found.finding(message, version=view.version, location=location, severity=Severity.INFO)


# --------------------------------------------------------------------------
# Field ids and parent links
# --------------------------------------------------------------------------


@rule(
    "schema/field-ids-unique",
    severity=Severity.ERROR,
    requirements=("schema.field-ids-unique",),
    summary="No two fields of the schema share an id",
)
def field_ids_unique(view: VersionView):
    seen: dict[int, int] = {}
    for i, f in enumerate(view.manifest.schema.fields):
        if f.id in seen:
            first = view.manifest.schema.fields[seen[f.id]]
            yield f"{_label(f)} reuses the id of field {first.name!r} (fields[{seen[f.id]}])", view.at(f"fields[{i}]")
        else:
            seen[f.id] = i


@rule(
    "schema/field-ids-non-negative",
    severity=Severity.ERROR,
    requirements=("schema.field-ids-non-negative",),
    summary="Field ids are non-negative",
)
def field_ids_non_negative(view: VersionView):
    for i, f in enumerate(view.manifest.schema.fields):
        if f.id < 0:
            yield f"{_label(f)} has a negative id", view.at(f"fields[{i}].id")


@rule(
    "schema/parent-exists",
    severity=Severity.ERROR,
    requirements=("schema.parent-id-exists", "schema.top-level-parent-minus-one"),
    summary="Every parent_id is -1 (top level) or the id of another field of the schema",
)
def parent_exists(view: VersionView):
    ids = {f.id for f in view.manifest.schema.fields}
    for i, f in enumerate(view.manifest.schema.fields):
        if f.parent_id == TOP_LEVEL_PARENT or f.parent_id in ids:
            continue
        hint = " (top-level fields have parent_id -1)" if f.parent_id < TOP_LEVEL_PARENT else ""
        yield f"{_label(f)} has parent_id {f.parent_id}, which names no field{hint}", view.at(f"fields[{i}].parent_id")


@rule(
    "schema/parent-cycle",
    severity=Severity.ERROR,
    requirements=("schema.parent-id-exists",),
    summary="Following parent ids from any field reaches the top level (no cycles)",
)
def parent_cycle(view: VersionView):
    tree = _tree(view)
    stuck = [(i, f) for i, f in enumerate(tree.fields) if tree.by_id.get(f.id) is f and f.id in tree.cyclic]
    if stuck:
        names = _shorten([_label(f) for _, f in stuck])
        yield f"parent ids form a cycle: {names} never reach the top level", view.at(f"fields[{stuck[0][0]}].parent_id")


@rule(
    "schema/parent-is-nested",
    severity=Severity.ERROR,
    requirements=("schema.parents-are-nested-types",),
    summary="Only struct, list, map and fixed-size-list-of-struct fields have child fields",
)
def parent_is_nested(view: VersionView):
    tree = _tree(view)
    for parent_id, positions in tree.children.items():
        parent = tree.by_id.get(parent_id)
        if parent is None or _parsed(tree, parent) is None:
            continue  # dangling parents and unparseable types have rules of their own
        if field_role(parent.logical_type) is FieldType.LEAF:
            kids = _shorten([_label(tree.fields[p]) for p in positions])
            yield (
                f"{_label(parent)} has logical type {parent.logical_type!r}, a leaf, but is the parent of {kids}",
                view.at(f"fields[{tree.position[parent_id]}]"),
            )


@rule(
    "schema/depth-first",
    severity=Severity.ERROR,
    requirements=("schema.depth-first-listing",),
    summary="Fields are listed depth-first: each after its parent, each subtree contiguous",
)
def depth_first(view: VersionView):
    tree = _tree(view)
    problems = []
    first_at = None
    # The ids of the open subtrees, outermost first, as a depth-first walk
    # would have them when it reaches each field.
    open_path: list[int] = []
    depth_of: dict[int, int] = {}
    for i, f in enumerate(tree.fields):
        if f.parent_id == TOP_LEVEL_PARENT:
            open_path, depth_of = [f.id], {f.id: 0}
            continue
        if f.id not in tree.rooted or tree.by_id[f.id] is not f:
            continue  # dangling parents, cycles and repeated ids have rules of their own
        if f.parent_id in depth_of:
            for fid in open_path[depth_of[f.parent_id] + 1 :]:
                depth_of.pop(fid, None)
            del open_path[depth_of[f.parent_id] + 1 :]
            if f.id not in depth_of:
                depth_of[f.id] = len(open_path)
                open_path.append(f.id)
            continue
        parent_at = tree.position[f.parent_id]
        if parent_at > i:
            problems.append(f"{_label(f)} (fields[{i}]) comes before its parent (fields[{parent_at}])")
        else:
            problems.append(
                f"{_label(f)} (fields[{i}]) is separated from its parent's subtree (parent at fields[{parent_at}])"
            )
        if first_at is None:
            first_at = i
        # Carry on as if this field opened a subtree of its own, so that its
        # descendants are not reported a second time.
        open_path, depth_of = [f.id], {f.id: 0}
    if problems:
        yield _shorten(problems), view.at(f"fields[{first_at}]")


@rule(
    "schema/initial-ids",
    severity=Severity.ERROR,
    requirements=("schema.initial-ids-depth-first",),
    summary="The version that creates a table numbers its fields 0, 1, 2, ... in list order",
)
def initial_ids(view: VersionView):
    if view.version != 1 or view.manifest.version != 1:
        return
    if not isinstance(_operation(view), Overwrite):
        return  # a clone or an unrecorded first commit need not start afresh
    ids = [f.id for f in view.manifest.schema.fields]
    if len(set(ids)) != len(ids) or any(i < 0 for i in ids):
        return  # schema/field-ids-unique and schema/field-ids-non-negative say what is wrong
    if ids != list(range(len(ids))):
        wrong = next(i for i, fid in enumerate(ids) if fid != i)
        yield (
            f"the table was created with field ids {ids[:12]}{' ...' if len(ids) > 12 else ''}; "
            f"depth-first numbering from 0 would give fields[{wrong}] id {wrong}",
            view.at(f"fields[{wrong}].id"),
        )


def _by_path(tree: _Tree) -> dict[str, Field]:
    """Rooted fields with a unique id, by their dotted name path (the first
    one listed when two share a path)."""
    found: dict[str, Field] = {}
    for f in tree.fields:
        if f.id in tree.rooted and tree.by_id[f.id] is f and len(tree.ancestors(f)) < MAX_NESTING_DEPTH:
            found.setdefault(tree.path(f), f)
    return found


def _type_change(old: Field, new: Field) -> str:
    if old.logical_type == new.logical_type:
        return f"still {new.logical_type!r}, with fields below it retyped"
    return f"{old.logical_type!r} to {new.logical_type!r}"


def _subtree_types(paths: list[str], by_path: dict[str, Field], root: str) -> list[tuple[str, str]]:
    """(path, logical type) of ``root`` and every path below it; ``paths`` is
    ``by_path``'s keys, sorted."""
    found = [(root, by_path[root].logical_type)]
    prefix = root + "."
    at = bisect.bisect_left(paths, prefix)
    while at < len(paths) and paths[at].startswith(prefix):
        found.append((paths[at], by_path[paths[at]].logical_type))
        at += 1
    return found


@rule(
    "schema/ids-stable",
    severity=Severity.ERROR,
    requirements=("schema.ids-stable",),
    summary="A field keeps its id from one version to the next (matched by name path where its id vanished)",
)
def ids_stable(view: VersionView):
    operation = _operation(view)
    if operation is None or isinstance(operation, (Overwrite, Restore, Clone)) or not getattr(operation, "NAME", None):
        return  # a new table, an older table, or an operation nobody can judge
    previous = _previous(view)
    if previous is None:
        return
    before, after = _tree(previous), _tree(view)
    old_paths, new_paths = _by_path(before), _by_path(after)
    old_sorted, new_sorted = sorted(old_paths), sorted(new_paths)
    for path, old in old_paths.items():
        new = new_paths.get(path)
        if new is None or new.id == old.id or old.id in after.by_id or new.id in before.by_id:
            continue  # kept, dropped, or not a plain renumbering
        where = view.at(f"fields[{after.position[new.id]}].id")
        # A nested field counts as retyped when anything below it was.
        if _subtree_types(old_sorted, old_paths, path) == _subtree_types(new_sorted, new_paths, path):
            yield (
                f"field {path!r} had id {old.id} in version {previous.version} and has id {new.id} now "
                f"(same type {new.logical_type!r}, {operation.NAME} operation)",
                where,
            )
        else:
            yield _downgraded(
                "schema/ids-stable",
                view,
                f"field {path!r} changed type ({_type_change(old, new)}) and id ({old.id} to {new.id}); the seed "
                f"keeps ids through type changes, {view.writer} gave the cast column a new id "
                "(see docs/spec-discrepancies.md)",
                where,
            )


def _ids_used(view: VersionView) -> set[int]:
    """Field ids the version uses: its schema and its data files."""
    used = set(view.manifest.schema.field_ids())
    for fragment in view.manifest.fragments:
        for data_file in fragment.files:
            used.update(i for i in data_file.fields if i >= 0)
    return used


def _ceilings(dataset) -> dict[int, int]:
    """For each version, the largest field id used by it or any version before it."""

    def compute() -> dict[int, int]:
        ceilings, highest = {}, -1
        for number in sorted(dataset.manifest_paths()):
            found = dataset.version_view(number)
            if found is not None:
                highest = max([highest, *_ids_used(found)])
            ceilings[number] = highest
        return ceilings

    return dataset.cached(("field-id-ceilings",), compute).value


@rule(
    "schema/new-field-ids",
    severity=Severity.INFO,
    requirements=("schema.new-ids-incremental", "schema.dropped-id-may-be-reused"),
    summary="Fields new in a version get ids above every id the retained history used before",
)
def new_field_ids(view: VersionView):
    previous = _previous(view)
    if previous is None or isinstance(_operation(view), (Restore, Clone)):
        return  # a restore brings old fields back under their old ids
    ceiling = _ceilings(view.dataset).get(previous.version, -1)
    known = _ids_used(previous)
    reused = [f for f in view.manifest.schema.fields if f.id not in known and 0 <= f.id <= ceiling]
    if reused:
        yield (
            f"new fields {_shorten([_label(f) for f in reused])} got ids at or below {ceiling}, an id an earlier "
            "version already used (allowed: some systems reuse dropped ids)",
            view.at("fields"),
        )


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
        yield f"{_label(f)}: {problem}", view.at(f"fields[{i}].logical_type")


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
        _, problem = _parse(f.logical_type)
        if problem:
            yield f"{_label(f)}: {problem[:300]}", view.at(f"fields[{i}].logical_type")


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
        loose, _ = _parse(f.logical_type)
        if loose is None:
            continue
        _, strict_problem = _parse(f.logical_type, strict=True)
        if strict_problem:
            yield (
                f"{_label(f)}: {f.logical_type!r} has a scale outside 0..precision "
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
        parsed, _ = _parse(f.logical_type)
        if parsed is None:
            continue
        for zone in _zones(parsed):
            if _FIXED_OFFSET.fullmatch(zone):
                why = "is a fixed UTC offset, not an IANA time zone name"
            elif known and zone not in known:
                why = "is not an IANA time zone name this system knows"
            else:
                continue
            yield f"{_label(f)}: time zone {zone!r} {why}", view.at(f"fields[{i}].logical_type")


def _kind_of(tree: _Tree, position: int) -> str | None:
    parsed = _parsed(tree, tree.fields[position])
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
    tree = _tree(view)
    for f in tree.by_id.values():
        parsed = _parsed(tree, f)
        if parsed is None or field_role(f.logical_type) is FieldType.LEAF:
            continue  # leaves with children are schema/parent-is-nested's
        kids = tree.children.get(f.id, [])
        where = view.at(f"fields[{tree.position[f.id]}]")
        expected = parsed.expected_children
        if expected is not None and len(kids) != expected:
            yield f"{_label(f)} is a {f.logical_type!r} field with {len(kids)} child fields, not {expected}", where
            continue
        if expected is None or not kids:
            continue
        child_kind = _kind_of(tree, kids[0])
        child = tree.fields[kids[0]]
        if child_kind is None:
            continue  # the child's own type is reported elsewhere
        if parsed.child_must_be_struct and child_kind != "struct":
            yield f"{_label(f)} is a {f.logical_type!r} field but its child {child.name!r} is a {child_kind!r}", where
        elif f.logical_type in ("list", "large_list") and child_kind == "struct":
            yield (
                f"{_label(f)} has a struct element, so its logical type must be {f.logical_type + '.struct'!r}",
                where,
            )
        elif parsed.kind == "map" and child_kind == "struct":
            entries = tree.children.get(child.id, [])
            if len(entries) != 2:
                yield (
                    f"{_label(f)}: its entries struct {child.name!r} has {len(entries)} child fields, "
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
        if _parse(f.logical_type)[0] is None:
            continue
        role = field_role(f.logical_type)
        accepted = {role}
        if role is FieldType.REPEATED and f.logical_type.endswith("struct"):
            accepted.add(FieldType.PARENT)  # a list of structs is also the parent of the struct's members
        if f.type not in accepted:
            wrong.append((i, f, role))
    if wrong:
        all_parent = all(f.type is FieldType.PARENT for _, f, _ in wrong)
        detail = _shorten([f"{_label(f)} is {f.type.name}, its type makes it {role.name}" for _, f, role in wrong])
        note = f" ({view.writer} wrote PARENT for every field; see docs/spec-discrepancies.md)" if all_parent else ""
        yield f"{len(wrong)} fields have a type that disagrees with their logical type{note}: {detail}", view.at(
            f"fields[{wrong[0][0]}].type"
        )


# --------------------------------------------------------------------------
# Field metadata
# --------------------------------------------------------------------------

_ENCODING_PREFIX = "lance-encoding:"
_COMPRESSION_SCHEMES = ("lz4", "zstd", "none", "fsst")


def _text(value: bytes) -> str | None:
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return None


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
        scheme = _text(metadata.get(_ENCODING_PREFIX + "compression", b"")) or ""
        if scheme.strip().lower() == "zstd" and not 0 <= level <= 22:
            return f"zstd levels run from 1 to 22 (0 for the default), not {level}"
    elif name in ("blob", "packed"):
        if lowered not in ("true", "false"):
            return f"{text!r} is neither true nor false"
    elif name == "structural-encoding":
        if lowered not in ("miniblock", "fullzip"):
            return f"{text!r} is neither miniblock nor fullzip"
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
            text = _text(value)
            problem = "the value is not UTF-8" if text is None else _encoding_problem(key, text, f.metadata)
            if problem:
                yield f"{_label(f)}: {key} = {problem}", view.at(f"fields[{i}].metadata[{key}]")


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
        name = _text(raw)
        if name is None:
            yield f"{_label(f)}: {EXTENSION_NAME_KEY} is not UTF-8", where
        elif not name:
            yield f"{_label(f)}: {EXTENSION_NAME_KEY} is empty", where
        elif f.extension_name and f.extension_name != name:
            yield (
                f"{_label(f)}: {EXTENSION_NAME_KEY} says {name!r} but the legacy extension_name says "
                f"{f.extension_name!r}; readers disagree on which wins",
                where,
            )


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
    tree = _tree(view)
    for f in _key_fields(view):
        where = view.at(f"fields[{tree.position.get(f.id, 0)}].nullable")
        if f.nullable:
            yield f"primary key {_label(f)} is nullable", where
        for a in tree.ancestors(f):
            if a.nullable:
                yield f"primary key {_label(f)} has a nullable ancestor {a.name!r} (id {a.id})", view.at(
                    f"fields[{tree.position[a.id]}].nullable"
                )


@rule(
    "primary-key/leaf",
    severity=Severity.ERROR,
    requirements=("primary-key.leaf-only",),
    summary="Primary key fields are leaves: primitive types without child fields",
)
def key_leaf(view: VersionView):
    tree = _tree(view)
    for f in _key_fields(view):
        kids = tree.children.get(f.id, [])
        if kids or field_role(f.logical_type) is not FieldType.LEAF:
            yield (
                f"primary key {_label(f)} is not a leaf: logical type {f.logical_type!r}, {len(kids)} child fields",
                view.at(f"fields[{tree.position.get(f.id, 0)}]"),
            )


def _container_ancestors(tree: _Tree, f: Field, kinds) -> list[Field]:
    return [a for a in tree.ancestors(f) if a.logical_type.partition(":")[0] in kinds]


@rule(
    "primary-key/not-under-list-or-map",
    severity=Severity.ERROR,
    requirements=("primary-key.not-under-list-or-map",),
    summary="No primary key field lies inside a list or a map",
)
def key_not_under_list(view: VersionView):
    tree = _tree(view)
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
    tree = _tree(view)
    for f in _key_fields(view):
        for a in _container_ancestors(tree, f, ("fixed_size_list",)):
            yield (
                f"primary key {tree.path(f)!r} (id {f.id}) lies inside the fixed-size list {a.name!r}; the seed "
                f"forbids keys within list types, {view.writer} wrote it (see docs/spec-discrepancies.md)",
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
        yield f"primary key positions {positions[:10]} do not run 1, 2, 3, ...", view.at("fields")


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
                f"{_label(f)} has primary key position {f.unenforced_primary_key_position} but not the flag: "
                "pylance counts it as a key column, a reader following the seed does not",
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
        flag_text = _text(f.metadata[PRIMARY_KEY_KEY]) if PRIMARY_KEY_KEY in f.metadata else None
        position = _metadata_position(_text(f.metadata.get(PRIMARY_KEY_POSITION_KEY, b"")) or None)
        flag = (flag_text or "").lower() in _PK_TRUE
        stored = f.unenforced_primary_key or f.unenforced_primary_key_position > 0
        where = view.at(f"fields[{i}].metadata")
        if stored != (flag or bool(position)):
            yield (
                f"{_label(f)}: its metadata {'makes' if not stored else 'does not make'} it a key column, "
                f"the stored flag and position say {'no' if not stored else 'yes'}",
                where,
            )
        elif stored != flag:
            yield _downgraded(
                "primary-key/metadata-agrees",
                view,
                f"{_label(f)} is a key column through its position metadata alone ({PRIMARY_KEY_KEY} is "
                f"{'absent' if flag_text is None else repr(flag_text)}): pylance's reading, not the seed's "
                "(see docs/spec-discrepancies.md)",
                where,
            )
        if position is not None and position != f.unenforced_primary_key_position:
            yield (
                f"{_label(f)}: position metadata says {position}, the stored position is "
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
    previous = _previous(view)
    if previous is None:
        return
    before = [(f.id, f.name) for f in primary_key_fields(previous.manifest.schema)]
    if not before:
        return
    after = [(f.id, f.name) for f in _key_fields(view)]
    if [i for i, _ in before] == [i for i, _ in after]:
        return
    message = (
        f"the primary key was {before} in version {previous.version} and is {after or 'gone'} now"
    )
    operation = _operation(view)
    if isinstance(operation, (Overwrite, Restore)):
        yield _downgraded(
            "primary-key/fixed",
            view,
            f"{message}, changed by the {operation.NAME} operation ({view.writer} allows this; see "
            "docs/spec-discrepancies.md)",
            view.at("fields"),
        )
    else:
        yield message, view.at("fields")
