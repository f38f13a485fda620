"""What the validator knows about a version's field list (schema format:
field ids, parent ids, logical types).

The rules on the schema, the primary key and non-nullable columns must stay
total on hostile input: ids may repeat, parents may dangle or form cycles,
logical type strings may be arbitrarily long or nested. :class:`SchemaTree`
works out the structure once per version with iterative, linear-time walks,
so no rule recurses or loops on a cycle, and :func:`parse_type` parses a
logical type without ever raising.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field

from reference_impl.schema import TOP_LEVEL_PARENT, Field, Schema
from reference_impl.type_grammar import MAX_NESTING_DEPTH, ParsedType, parse_logical_type

from ..context import VersionView


@dataclass
class SchemaTree:
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


def _build_tree(schema: Schema) -> SchemaTree:
    tree = SchemaTree(list(schema.fields))
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


def schema_tree(view: VersionView) -> SchemaTree:
    """The field list of ``view``'s schema taken apart, once per version and run."""
    key = ("schema-tree", view.version, view.manifest_path)
    # memo, not cached: taking the field list apart raises nothing.
    return view.dataset.memo(key, _build_tree, view.manifest.schema)


#: No real logical type comes near this length; longer strings are refused
#: unparsed, which bounds the work hostile input can cause.
MAX_LOGICAL_TYPE_LENGTH = 4096


def parse_type(text: str, *, strict: bool = False) -> tuple[ParsedType | None, str | None]:
    """Parse a logical type, never raising: (parsed, None) or (None, problem)."""
    if len(text) > MAX_LOGICAL_TYPE_LENGTH:
        return None, f"a logical type of {len(text)} characters is implausibly long"
    try:
        return parse_logical_type(text, strict=strict), None
    except ValueError as exc:
        return None, str(exc)
    except RecursionError:
        return None, "nested too deeply to parse"


def parsed_type(tree: SchemaTree, f: Field) -> ParsedType | None:
    """``f``'s logical type parsed (None when it does not parse), once per tree."""
    if f.id not in tree.parsed:
        tree.parsed[f.id] = parse_type(f.logical_type)[0]
    return tree.parsed[f.id]


def field_label(f: Field) -> str:
    """How a message names a field."""
    return f"field {f.name!r} (id {f.id})"


def metadata_text(value: bytes) -> str | None:
    """A metadata value as UTF-8 text; None when it is not UTF-8."""
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return None
