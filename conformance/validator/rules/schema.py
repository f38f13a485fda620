"""Rules on the schema's field ids and parent links (schema format: field
ids, parent ids).

Every rule here reads only the manifest's field list, and must stay total on
hostile input: ids may repeat, parents may dangle or form cycles. The shared
:class:`~conformance.validator.facts.schema_tree.SchemaTree` works out the
structure once per version with iterative, linear-time walks, so no rule
recurses or loops on a cycle. Logical types and field metadata are checked in
:mod:`conformance.validator.rules.field_types`, the primary key in
:mod:`conformance.validator.rules.primary_key`.
"""

from __future__ import annotations

import bisect

from reference_impl.fragments import Fragment
from reference_impl.schema import TOP_LEVEL_PARENT, Field, FieldType, field_role
from reference_impl.transactions import Clone, Overwrite, Restore
from reference_impl.type_grammar import MAX_NESTING_DEPTH

from ..context import VersionView
from ..facts.findings import tolerated
from ..facts.fragment_checks import per_fragment
from ..facts.schema_tree import SchemaTree, field_label, parsed_type, schema_tree
from ..facts.text import listed
from ..facts.transactions import previous_version, version_operation
from ..registry import Severity, rule

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
            yield (
                f"{field_label(f)} reuses the id of field {first.name!r} (fields[{seen[f.id]}])",
                view.at(f"fields[{i}]"),
            )
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
            yield f"{field_label(f)} has a negative id", view.at(f"fields[{i}].id")


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
        yield (
            f"{field_label(f)} has parent_id {f.parent_id}, which names no field{hint}",
            view.at(f"fields[{i}].parent_id"),
        )


@rule(
    "schema/parent-cycle",
    severity=Severity.ERROR,
    requirements=("schema.parent-id-exists",),
    summary="Following parent ids from any field reaches the top level (no cycles)",
)
def parent_cycle(view: VersionView):
    tree = schema_tree(view)
    stuck = [(i, f) for i, f in enumerate(tree.fields) if tree.by_id.get(f.id) is f and f.id in tree.cyclic]
    if stuck:
        names = listed([field_label(f) for _, f in stuck], sep="; ")
        yield f"parent ids form a cycle: {names} never reach the top level", view.at(f"fields[{stuck[0][0]}].parent_id")


@rule(
    "schema/parent-is-nested",
    severity=Severity.ERROR,
    requirements=("schema.parents-are-nested-types",),
    summary="Only struct, list, map and fixed-size-list-of-struct fields have child fields",
)
def parent_is_nested(view: VersionView):
    tree = schema_tree(view)
    for parent_id, positions in tree.children.items():
        parent = tree.by_id.get(parent_id)
        if parent is None or parsed_type(tree, parent) is None:
            continue  # dangling parents and unparseable types have rules of their own
        if field_role(parent.logical_type) is FieldType.LEAF:
            kids = listed([field_label(tree.fields[p]) for p in positions], sep="; ")
            yield (
                f"{field_label(parent)} has logical type {parent.logical_type!r}, a leaf, but is the parent of {kids}",
                view.at(f"fields[{tree.position[parent_id]}]"),
            )


@rule(
    "schema/depth-first",
    severity=Severity.ERROR,
    requirements=("schema.depth-first-listing",),
    summary="Fields are listed depth-first: each after its parent, each subtree contiguous",
)
def depth_first(view: VersionView):
    tree = schema_tree(view)
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
            problems.append(f"{field_label(f)} (fields[{i}]) comes before its parent (fields[{parent_at}])")
        else:
            problems.append(
                f"{field_label(f)} (fields[{i}]) is separated from its parent's subtree (parent at fields[{parent_at}])"
            )
        if first_at is None:
            first_at = i
        # Carry on as if this field opened a subtree of its own, so that its
        # descendants are not reported a second time.
        open_path, depth_of = [f.id], {f.id: 0}
    if problems:
        yield listed(problems, sep="; "), view.at(f"fields[{first_at}]")


@rule(
    "schema/initial-ids",
    severity=Severity.ERROR,
    requirements=("schema.initial-ids-depth-first",),
    summary="The version that creates a table numbers its fields 0, 1, 2, ... in list order",
)
def initial_ids(view: VersionView):
    if view.version != 1 or view.manifest.version != 1:
        return
    if not isinstance(version_operation(view), Overwrite):
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


def _by_path(tree: SchemaTree) -> dict[str, Field]:
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
    operation = version_operation(view)
    if operation is None or isinstance(operation, (Overwrite, Restore, Clone)) or not getattr(operation, "NAME", None):
        return  # a new table, an older table, or an operation nobody can judge
    previous = previous_version(view)
    if previous is None:
        return
    before, after = schema_tree(previous), schema_tree(view)
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
            yield tolerated(
                "schema/ids-stable",
                view,
                f"field {path!r} changed type ({_type_change(old, new)}) and id ({old.id} to {new.id}); "
                f"the schema format page keeps ids through type changes, {view.writer} gave the cast column a new id "
                "(see docs/spec-discrepancies.md)",
                where,
            )


def _ids_used(view: VersionView) -> set[int]:
    """Field ids the version uses: its schema and its data files (once per
    version, and each fragment's once per run)."""
    return view.memo("schema.ids-used", lambda: _compute_ids_used(view))


def _fragment_ids(fragment: Fragment) -> frozenset[int]:
    return frozenset(i for data_file in fragment.files for i in data_file.fields if i >= 0)


def _compute_ids_used(view: VersionView) -> set[int]:
    return set(view.manifest.schema.field_ids()).union(*per_fragment(view, "schema.field-ids", _fragment_ids))


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
    previous = previous_version(view)
    if previous is None or isinstance(version_operation(view), (Restore, Clone)):
        return  # a restore brings old fields back under their old ids
    ceiling = _ceilings(view.dataset).get(previous.version, -1)
    known = _ids_used(previous)
    reused = [f for f in view.manifest.schema.fields if f.id not in known and 0 <= f.id <= ceiling]
    if reused:
        yield (
            f"new fields {listed([field_label(f) for f in reused], sep='; ')} got ids at or below {ceiling}, an id an "
            "earlier "
            "version already used (allowed: some systems reuse dropped ids)",
            view.at("fields"),
        )
