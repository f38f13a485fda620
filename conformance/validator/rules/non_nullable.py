"""Rules on fields marked not nullable (schema format: Field message; table
format: data evolution).

A field that is not nullable holds no nulls. Two things can break that:

* a fragment that stores no column for the field, which readers fill with
  nulls (``schema/non-nullable-stored``, from the manifest alone);
* nulls in the column itself (``schema/non-nullable-values``), which takes
  reading the data.

A field only has to be stored where its parent has values: a nullable struct
missing from a fragment reads as null as a whole, so its non-nullable
children are not missing there. 2.1 and later files do not list struct and
list parents (docs/spec-discrepancies.md), so a parent counts as stored when
any field under it is.

Values are read with the reference reader, which decodes data files of
versions 2.0 to 2.2 (2.1 and later through their structural page layouts:
the levels of each page give the nulls). Legacy (v1) files, files of newer
versions, files larger than
:data:`MAX_CHECKED_BYTES` and files the reader cannot decode are counted and
reported once per version as an info; every file is read at most once per run
for a given set of fields. In a deep run (``validate --deep``) the nulls come
from the decoding of every page (facts/data_pages.py), which reads each file
once for all the rules and has no size limit.
"""

from __future__ import annotations

from collections import Counter

from reference_impl.errors import LanceFormatError
from reference_impl.file_format.footer import LAYOUT_V2, NEWEST_VERSION
from reference_impl.schema import TOP_LEVEL_PARENT, Field

from ..context import VersionView
from ..facts.data_files import at, base_storages, checked_file_storage, data_file_name, file_facts, locate
from ..facts.data_pages import verification
from ..facts.schema_tree import field_label, schema_tree
from ..facts.text import listed
from ..registry import Finding, Severity, rule

# pyarrow, the reference reader and scan are imported inside the functions
# that read values: a version without non-nullable fields (most datasets)
# never needs them, and importing them is most of the validator's start-up.

#: Data files larger than this are not read for nulls.
MAX_CHECKED_BYTES = 64 << 20


def _non_nullable(view: VersionView) -> dict[int, Field]:
    """Rooted fields that are not nullable, by id."""
    tree = schema_tree(view)
    return {i: f for i, f in tree.by_id.items() if not f.nullable and i in tree.rooted}


@rule(
    "schema/non-nullable-stored",
    severity=Severity.ERROR,
    requirements=("schema.non-nullable-has-no-nulls",),
    summary="Every fragment stores each non-nullable field wherever its parent has values "
    "(a missing column reads as nulls)",
)
def non_nullable_stored(view: VersionView):
    required = _non_nullable(view)
    if not required:
        return
    tree = schema_tree(view)
    present_by_layout: dict[frozenset, set[int]] = {}
    missing: dict[int, list[int]] = {}
    for fragment in view.manifest.fragments:
        stored_ids = frozenset(i for d in fragment.files for i in d.fields if i >= 0)
        present = present_by_layout.get(stored_ids)
        if present is None:
            present = set()
            for field_id in stored_ids:
                f = tree.by_id.get(field_id)
                if f is not None and field_id in tree.rooted:
                    present.add(field_id)
                    present.update(a.id for a in tree.ancestors(f))
            present_by_layout[stored_ids] = present
        for field_id, f in required.items():
            if field_id not in present and (f.parent_id == TOP_LEVEL_PARENT or f.parent_id in present):
                missing.setdefault(field_id, []).append(fragment.id)
    for field_id, fragments in sorted(missing.items()):
        yield (
            f"{field_label(required[field_id])} is not nullable, but fragment(s) {listed(fragments)} store no "
            "column for it, so it reads as nulls there",
            view.at("fragments"),
        )


def _count_visible(rows_by_field: dict, deleted: list[int]) -> dict[int, int]:
    """Nulls per field id from the top-level row of each null
    (:func:`reference_impl.file_format.verify.null_rows`), leaving out the
    rows at ``deleted`` offsets, as readers leave them out."""
    import numpy as np  # lazy: only reading values needs it (the note under the imports)

    gone = np.asarray(deleted, dtype=np.int64)
    counts = {}
    for field_id, rows in rows_by_field.items():
        kept = int(np.count_nonzero(~np.isin(rows, gone))) if len(gone) else len(rows)
        if kept:
            counts[field_id] = kept
    return counts


def _read_nulls(located, data_file, requested: list[Field], watched: set[int]) -> dict:
    """The top-level row of each null of each watched field in one data file
    (read through the reference reader; the deleted rows are left out by the
    rule); :class:`LanceFormatError` when the file cannot be read."""
    # lazy: only reading values needs pyarrow and the reader (the note under the imports)
    import pyarrow as pa

    from reference_impl.file_format.reader import LanceFileReader
    from reference_impl.file_format.verify import null_rows

    relpath = located.location.relpath
    children: dict[int, list[Field]] = {}
    for f in requested:
        children.setdefault(f.parent_id, []).append(f)
    found: dict = {}
    try:
        storage = checked_file_storage(located)
        table = LanceFileReader(storage, relpath).read(
            requested, file_field_ids=list(data_file.fields), column_indices=list(data_file.column_indices)
        )
        for node, column in zip(children.get(TOP_LEVEL_PARENT, []), table.columns, strict=True):
            found.update(null_rows(column.combine_chunks(), node, children, watched))
    except LanceFormatError:
        raise
    except (
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        OverflowError,
        MemoryError,
        RecursionError,
        OSError,
        pa.ArrowException,
    ) as exc:
        raise LanceFormatError(str(located.location), f"cannot be read by this validator: {exc}") from None
    return found


NULL_REQUIREMENTS = ("schema.non-nullable-has-no-nulls",)


def _decoded_nulls(view: VersionView, fragment, data_file, located, watched: set[int]) -> dict | None:
    """In a deep run, the nulls the decoding of every page found
    (facts/data_pages.py: the file is decoded once for all the rules); None
    when the fields could not all be decoded."""
    decoded = verification(view, fragment, data_file, located)
    if not decoded.ok or decoded.value.unchecked or any(p.kind.value == "undecodable" for p in decoded.value.problems):
        return None
    return {field_id: rows for field_id, rows in decoded.value.null_rows.items() if field_id in watched}


def _null_findings(view: VersionView, fragment, data_file, ref, required: dict, rows: dict, deleted: list[int]):
    for field_id, nulls in sorted(_count_visible(rows, deleted).items()):
        yield (
            f"fragment {fragment.id}: data file '{data_file_name(data_file)}' holds {nulls} null(s) in "
            f"{field_label(required[field_id])}, which is not nullable",
            at(view, ref),
        )


@rule(
    "schema/non-nullable-values",
    severity=Severity.ERROR,
    requirements=NULL_REQUIREMENTS,
    summary=f"Columns of non-nullable fields hold no nulls (2.0 to 2.2 data files up to {MAX_CHECKED_BYTES >> 20} MiB "
    "are read; others are reported unchecked, as an info)",
)
def non_nullable_values(view: VersionView):
    required = _non_nullable(view)
    if not required:
        return
    from reference_impl.scan import field_with_descendants  # lazy: pulls pyarrow (the note under the imports)

    tree = schema_tree(view)
    schema = view.manifest.schema
    bases = base_storages(view)
    unchecked: Counter = Counter()
    for f_index, fragment in enumerate(view.manifest.fragments):
        for d_index, data_file in enumerate(fragment.files):
            watched = {i for i in data_file.fields if i in required}
            if not watched:
                continue
            located = locate(view, data_file, bases)
            if not located.ok:
                continue  # the data file rules report why
            facts = file_facts(view, located)
            if not facts.ok:
                continue
            info = facts.value.info
            if info.layout != LAYOUT_V2 or not (2, 0) <= (info.major, info.minor) <= NEWEST_VERSION:
                unchecked[f"version {info.version} files" if info.layout == LAYOUT_V2 else "legacy files"] += 1
                continue
            if info.size > MAX_CHECKED_BYTES and not view.dataset.deep:
                unchecked[f"files over {MAX_CHECKED_BYTES >> 20} MiB"] += 1
                continue
            deletions = view.deleted_offsets(fragment)
            if not deletions.ok:
                unchecked["fragments whose deletion file cannot be read"] += 1
                continue
            deleted = deletions.value
            if view.dataset.deep:
                rows = _decoded_nulls(view, fragment, data_file, located, watched)
                if rows is None:
                    unchecked["files the reference reader cannot decode"] += 1
                    continue
                yield from _null_findings(view, fragment, data_file, (f_index, d_index), required, rows, deleted)
                continue
            tops = []
            for field_id in sorted(watched):
                chain = tree.ancestors(required[field_id])
                top = chain[-1] if chain else required[field_id]
                if top not in tops:
                    tops.append(top)
            requested = [
                f
                for top in sorted(tops, key=lambda t: tree.position[t.id])
                for f in field_with_descendants(schema, top)
            ]
            key = (
                "non-nullable-values",
                located.key,
                tuple(data_file.fields),
                tuple(data_file.column_indices),
                tuple((f.id, f.parent_id, f.name, f.logical_type) for f in requested),
                tuple(sorted(watched)),
            )
            loaded = view.dataset.cached(key, _read_nulls, located, data_file, requested, watched)
            if not loaded.ok:
                unchecked["files the reference reader cannot decode"] += 1
                continue
            yield from _null_findings(view, fragment, data_file, (f_index, d_index), required, loaded.value, deleted)
    if unchecked:
        what = ", ".join(f"{n} {reason}" for reason, n in sorted(unchecked.items()))
        yield Finding(
            "schema/non-nullable-values",
            Severity.INFO,
            NULL_REQUIREMENTS,
            f"values of non-nullable fields were not read in {sum(unchecked.values())} data file(s) ({what}); this "
            f"validator reads data files of versions 2.0 to {NEWEST_VERSION[0]}.{NEWEST_VERSION[1]}",
            view.version,
            view.at("fragments"),
        )
