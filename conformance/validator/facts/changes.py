"""How a version differs from the one before it, as the transaction rules
compare them (transaction specification: transaction types).

Fragments are compared through dicts and multisets keyed by id or by their
shape (physical rows, data file paths), so every comparison is bounded by the
size of the two versions. The functions that yield messages yield plain
text; the rule that calls them adds the finding location.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from reference_impl.fragments import TOMBSTONE_FIELD_ID, DataFile, Fragment

from .text import listed
from .transactions import VersionState


def same_fields(a, b) -> bool:
    """Field lists equal in everything but ``type``: the role is implied by the
    logical type, and pylance rewrites every role as PARENT when it commits on
    top of a dataset that records the schema format page's roles (docs/spec-discrepancies.md)."""
    return len(a) == len(b) and all(replace(x, type=y.type) == y for x, y in zip(a, b, strict=True))


def same_schema(a, b) -> bool:
    """Schemas equal in metadata and in fields (see :func:`same_fields`)."""
    return a.metadata == b.metadata and same_fields(a.fields, b.fields)


def fragment_paths(fragment: Fragment) -> tuple[str, ...]:
    """The paths of a fragment's data files, in order."""
    # tuple() of a list: faster than of a generator, and this runs per fragment.
    return tuple([d.path for d in fragment.files])


def all_tombstoned(data_file: DataFile) -> bool:
    """Whether every field of a data file is the tombstone (-2): the file
    holds nothing a reader reads (table format overview, "Data Evolution":
    a tombstoned column "should be ignored")."""
    return bool(data_file.fields) and all(i == TOMBSTONE_FIELD_ID for i in data_file.fields)


def live_paths(fragment: Fragment) -> tuple[str, ...]:
    """:func:`fragment_paths` without the data files that are all tombstone.
    pylance 14 leaves such a file out of every manifest it writes, the one
    its own transaction records it in included (docs/spec-discrepancies.md);
    dropping it loses nothing."""
    return tuple([d.path for d in fragment.files if not all_tombstoned(d)])


def same_live_fragment(a: Fragment, b: Fragment) -> bool:
    """Fragments equal once their all-tombstone data files are left out
    (see :func:`live_paths`)."""
    if a is b or a == b:  # one object when unchanged (decoded once per run)
        return True
    return replace(a, files=[d for d in a.files if not all_tombstoned(d)]) == replace(
        b, files=[d for d in b.files if not all_tombstoned(d)]
    )


def fragment_shape(fragment: Fragment) -> tuple[int, tuple[str, ...]]:
    """What identifies a new fragment whose id was assigned at commit."""
    return fragment.physical_rows, tuple([d.path for d in fragment.files])


def _same_shape(a: Fragment, b: Fragment) -> bool:
    """``fragment_shape(a) == fragment_shape(b)``. The validator decodes a
    fragment a transaction lists again once (the context's fragment
    decoder), so the data files are most often one list, whose paths need
    no comparing."""
    return a.physical_rows == b.physical_rows and (
        a.files is b.files or [d.path for d in a.files] == [d.path for d in b.files]
    )


def differing_keys(a: dict, b: dict) -> list:
    """The keys whose values differ between two dicts (or that only one has)."""
    return [k for k in set(a) | set(b) if a.get(k) != b.get(k)]


def _describe_shapes(shapes: Counter) -> str:
    parts = [
        f"{rows} rows in [{listed([repr(p) for p in paths], 3)}]" + (f" (x{n})" if n > 1 else "")
        for (rows, paths), n in shapes.items()
    ]
    return listed(parts, sep="; ") if parts else "none"


def compare_new_fragments(recorded: list[Fragment], added: list[Fragment], what: str) -> str | None:
    """A message when the fragments a version added are not the ones recorded
    (compared by physical rows and data file paths; ids are placeholders)."""
    # An Overwrite of a large table lists every fragment. Equal lists (the
    # usual case: the same fragments in the same order) are equal multisets,
    # and comparing them pair by pair spares building and hashing two
    # Counters of shapes.
    if len(recorded) == len(added) and all(map(_same_shape, recorded, added)):
        return None
    recorded_shapes, added_shapes = [fragment_shape(f) for f in recorded], [fragment_shape(f) for f in added]
    want, got = Counter(recorded_shapes), Counter(added_shapes)
    if want == got:
        return None
    missing, extra = want - got, got - want
    return (
        f"the transaction {what} {len(recorded)} fragment(s) but the version added {len(added)}"
        f" (ids {listed((f.id for f in added), sort=True) or 'none'}); recorded but not added: "
        f"{_describe_shapes(missing)}; added but not recorded: {_describe_shapes(extra)}"
    )


def untouched(previous: VersionState, current: VersionState, touched: set[int]):
    """Messages for fragments of ``previous`` outside ``touched`` that are
    missing from ``current`` or changed in it (an all-tombstone data file
    left out is no change, see :func:`live_paths`)."""
    kept = set(previous.fragments) - touched
    missing = kept - set(current.fragments)
    changed = [i for i in kept - missing if not same_live_fragment(current.fragments[i], previous.fragments[i])]
    if missing:
        yield (
            f"fragment(s) {listed(missing, sort=True)} of version {previous.version} are gone, though the "
            "operation does not touch them"
        )
    if changed:
        yield (
            f"fragment(s) {listed(changed, sort=True)} changed from version {previous.version}, though the "
            "operation does not touch them"
        )


def same_fragments(previous: VersionState, current: VersionState):
    """Messages when ``current`` does not hold exactly the fragments of ``previous``."""
    yield from untouched(previous, current, set())
    added = set(current.fragments) - set(previous.fragments)
    if added:
        yield f"fragment(s) {listed(added, sort=True)} were added, though the operation adds none"


def named_fragments(
    view,
    where: str,
    previous: VersionState,
    current: VersionState,
    removed: set[int],
    changed: set[int],
    what: str,
    verb: str,
):
    """(message, location) when a Delete or an Update names fragments the
    version it read lacks, keeps a fragment it removes, or loses one it
    ``verb`` (changes without removing)."""
    before, after = set(previous.fragments), set(current.fragments)
    unknown = (removed | changed) - before
    if unknown:
        yield (
            f"the {what} names fragment(s) {listed(unknown, sort=True)}, which version {previous.version} "
            "does not have",
            where,
        )
    still_there = removed & after
    if still_there:
        yield (
            f"fragment(s) {listed(still_there, sort=True)} the {what} removes are still in the version",
            view.at("fragments"),
        )
    lost = ((changed - removed) & before) - after
    if lost:
        yield (
            f"fragment(s) {listed(lost, sort=True)} the {what} {verb} are missing from the version",
            view.at("fragments"),
        )


def same_rows_per_fragment(previous: VersionState, current: VersionState, what: str):
    """A message when ``current`` does not keep every fragment of
    ``previous`` with its physical rows."""
    before = {i: f.physical_rows for i, f in previous.fragments.items()}
    after = {i: f.physical_rows for i, f in current.fragments.items()}
    if before != after:
        gone, new = set(before) - set(after), set(after) - set(before)
        resized = [i for i in set(before) & set(after) if before[i] != after[i]]
        details = []
        if gone:
            details.append(f"removed {listed(gone, sort=True)}")
        if new:
            details.append(f"added {listed(new, sort=True)}")
        if resized:
            details.append(f"physical rows changed in {listed(resized, sort=True)}")
        yield f"{what} keeps every fragment and its rows, but from version {previous.version}: " + ", ".join(details)
