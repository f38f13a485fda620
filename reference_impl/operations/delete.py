"""Deleting and updating rows (table format: fragments, deletion files;
transaction specification: ``Delete``, ``Update``; move-stable row ids).

Deleting rows never rewrites data: each affected fragment gets a new
deletion file listing the union of its old and new deleted offsets, written
against the version read (older table format page, "Deletion"; table overview page, "Deletion
Files"), or leaves the table when every one of its physical rows is gone.
One ``Delete`` transaction records both kinds of change.

Updating rows is done in the ``REWRITE_ROWS`` mode: the selected rows are
deleted from their fragments as above and written again, with their new
values, as new fragments, all in one ``Update`` transaction. The commit
(:func:`reference_impl.commit.build_manifest`) gives the new fragments their
ids and, when the dataset uses stable row ids, *new* row ids with this
version as their created and last-updated version: the older table format page (move-stable row
ids) says an updated row "is typically assigned a new row id rather than
reusing the old one", so that secondary indices never see stale values under
a reused id. pylance 14 keeps the old id instead (docs/spec-discrepancies.md).

Behaviour decisions
    * A delete or update that selects no row still commits a version, with an
      empty ``Delete`` / ``Update``: that is what upstream Lance and pylance 14
      do, so version numbers stay in step with the peer.
    * Rows are selected on the fragment's rows that are still visible; rows
      deleted earlier stay deleted (the new deletion set is a union), and an
      update never brings a deleted row back.
    * A predicate that evaluates to null selects nothing (SQL semantics).
    * Updated rows are appended, in scan order, after every existing fragment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import acero

from ..arrow_schema import schema_to_arrow
from ..deletions import write_deletion_file
from ..errors import InvalidOperationError
from ..fragment_writer import DEFAULT_MAX_ROWS_PER_FILE, dataset_data_version, write_fragments
from ..fragments import Fragment
from ..row_ids import split_row_address
from ..scan import ROW_ADDRESS, fragment_table
from ..schema import Field, Schema
from ..transactions import Delete, Update, UpdateMode

if TYPE_CHECKING:
    from ..dataset import Dataset

#: ``Delete.predicate`` of a delete given as explicit offsets.
OFFSETS_PREDICATE = "offsets"


# -- public API ----------------------------------------------------------------


def delete(dataset: Dataset, where) -> Dataset:
    """Delete rows and commit one ``Delete`` transaction; returns the new version.

    ``where`` is a pyarrow compute expression evaluated on each fragment's
    rows (a row is deleted when it evaluates to true), or a mapping
    ``{fragment_id: iterable of physical offsets}``.
    """
    if isinstance(where, pc.Expression):
        selected = _offsets_matching(dataset, where)
        predicate = _readable(where)
    elif isinstance(where, Mapping):
        selected = _offsets_given(dataset, where)
        predicate = OFFSETS_PREDICATE
    else:
        raise TypeError(
            f"delete needs a pyarrow compute Expression or a mapping of offsets, not {type(where).__name__}"
        )
    changes = _apply_deletions(dataset, selected)
    return dataset.commit(
        Delete(updated_fragments=changes.updated, deleted_fragment_ids=changes.removed_ids, predicate=predicate)
    )


def update(
    dataset: Dataset,
    values: Mapping[str, object],
    where: pc.Expression | None = None,
    *,
    max_rows_per_file: int | None = None,
) -> Dataset:
    """Set columns of the rows ``where`` selects (every visible row when None)
    and commit one ``Update`` (``REWRITE_ROWS``); returns the new version.

    ``values`` maps a column name, or a dotted path to a struct child
    (``"point.x"``), to a pyarrow compute expression evaluated on the row
    *before* the update, or to a Python value (None for null). Each new
    value is cast to the column's type.
    """
    targets = [_resolve_target(dataset.schema, name) for name in values]
    if not targets:
        raise InvalidOperationError("an update needs at least one column to set")
    _check_disjoint(targets)
    if where is not None and not isinstance(where, pc.Expression):
        raise TypeError(f"update's where must be a pyarrow compute Expression, not {type(where).__name__}")

    selected: dict[int, list[int]] = {}
    old_rows: list[pa.Table] = []
    for fragment in dataset.fragments:
        rows, offsets = _fragment_rows_matching(dataset, fragment, where)
        if offsets:
            selected[fragment.id] = offsets
            old_rows.append(rows)
    old = pa.concat_tables(old_rows) if old_rows else schema_to_arrow(dataset.schema).empty_table()
    new = _with_new_values(old, targets, list(values.values()))

    new_fragments = write_fragments(
        dataset.storage,
        new,
        dataset.schema,
        max_rows_per_file=max_rows_per_file or DEFAULT_MAX_ROWS_PER_FILE,
        version=dataset_data_version(dataset.manifest),
    )
    changes = _apply_deletions(dataset, selected)
    modified = _modified_field_ids(dataset.schema, targets)
    return dataset.commit(
        Update(
            removed_fragment_ids=changes.removed_ids,
            updated_fragments=changes.updated,
            new_fragments=new_fragments,
            fields_modified=modified,
            fields_for_preserving_frag_bitmap=modified,
            update_mode=UpdateMode.REWRITE_ROWS,
        )
    )


# -- selecting rows --------------------------------------------------------------


def _readable(expression: pc.Expression) -> str:
    """The expression as one line of text, for ``Delete.predicate``."""
    return " ".join(str(expression).split())


def _evaluate(table: pa.Table, expressions: list[pc.Expression]) -> list[pa.ChunkedArray]:
    """Each expression evaluated on every row of ``table``, rows in order."""
    plan = acero.Declaration.from_sequence(
        [
            acero.Declaration("table_source", acero.TableSourceNodeOptions(table)),
            acero.Declaration(
                "project", acero.ProjectNodeOptions(expressions, [f"_{i}" for i in range(len(expressions))])
            ),
        ]
    )
    result = plan.to_table(use_threads=False)
    return [result.column(i) for i in range(len(expressions))]


def _fragment_rows_matching(
    dataset: Dataset, fragment: Fragment, where: pc.Expression | None
) -> tuple[pa.Table, list[int]]:
    """The visible rows of ``fragment`` that ``where`` selects (true, not
    null or false), and their physical offsets (table format: fragments;
    deletion files: deleted rows are not visible, so not selected again)."""
    rows = fragment_table(dataset, fragment, with_row_address=True)
    if where is not None:
        (mask,) = _evaluate(rows, [where])
        if not pa.types.is_boolean(mask.type):
            raise TypeError(f"the predicate {_readable(where)} gives {mask.type} values, not booleans")
        rows = rows.filter(pc.fill_null(mask, False))
    offsets = [split_row_address(address)[1] for address in rows.column(ROW_ADDRESS).to_pylist()]
    return rows.drop_columns([ROW_ADDRESS]), offsets


def _offsets_matching(dataset: Dataset, where: pc.Expression) -> dict[int, list[int]]:
    """Fragment id -> offsets of the visible rows ``where`` selects."""
    selected = {}
    for fragment in dataset.fragments:
        _, offsets = _fragment_rows_matching(dataset, fragment, where)
        if offsets:
            selected[fragment.id] = offsets
    return selected


def _offsets_given(dataset: Dataset, offsets: Mapping[int, Iterable[int]]) -> dict[int, list[int]]:
    """Check an explicit ``{fragment_id: offsets}``: every fragment must be in
    this version and every offset below its ``physical_rows``."""
    fragments = {f.id: f for f in dataset.fragments}
    selected = {}
    for fragment_id, values in offsets.items():
        fragment = fragments.get(fragment_id)
        if fragment is None:
            raise InvalidOperationError(f"fragment {fragment_id} is not in version {dataset.version}")
        values = list(values)
        for offset in values:
            if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset < fragment.physical_rows:
                raise InvalidOperationError(
                    f"{offset!r} is not a row offset of fragment {fragment_id} ({fragment.physical_rows} physical rows)"
                )
        if values:
            selected[fragment_id] = values
    return selected


# -- deleting rows ----------------------------------------------------------------


@dataclass
class _Deletions:
    """How a set of deletions changes the fragments of the version read."""

    updated: list[Fragment] = dc_field(default_factory=list)
    removed_ids: list[int] = dc_field(default_factory=list)


def _apply_deletions(dataset: Dataset, selected: Mapping[int, list[int]]) -> _Deletions:
    """Write the new deletion files and describe the changed fragments.

    For each fragment with selected offsets, the new deleted set is the union
    of the old one and the selection. A fragment whose rows are then all
    deleted is removed; one that gains no new deleted row is left as it is;
    any other gets a new deletion file (deletion files: at most one per
    fragment per version, named after the version it was built from).
    """
    changes = _Deletions()
    for fragment in dataset.fragments:
        new = selected.get(fragment.id)
        if not new:
            continue
        old = set(dataset.deleted_offsets(fragment))
        deleted = old | set(new)
        if len(deleted) == len(old):
            continue
        if len(deleted) == fragment.physical_rows:
            changes.removed_ids.append(fragment.id)
            continue
        deletion_file = write_deletion_file(dataset.storage, fragment.id, dataset.version, sorted(deleted))
        changes.updated.append(replace(fragment, deletion_file=deletion_file))
    return changes


# -- new values ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Target:
    """A column (or struct child) an update sets."""

    #: Arrow field names from the top-level column down to the target.
    path: tuple[str, ...]
    #: The schema field of each path element, outermost first.
    fields: tuple[Field, ...]
    arrow_field: pa.Field

    @property
    def name(self) -> str:
        return ".".join(self.path)


def _resolve_target(schema: Schema, name: str) -> _Target:
    """The field ``name`` designates: a top-level column, or a dotted path
    through struct columns (schema format: fields are nested by parent id)."""
    parts = (name,) if any(f.name == name for f in schema.top_level()) else tuple(name.split("."))
    candidates = schema.top_level()
    arrow_type = pa.struct(list(schema_to_arrow(schema)))
    fields: list[Field] = []
    arrow_field = None
    for part in parts:
        if not pa.types.is_struct(arrow_type):
            raise InvalidOperationError(f"cannot update {name!r}: {'.'.join(parts[: len(fields)])} is not a struct")
        field = next((f for f in candidates if f.name == part), None)
        if field is None or arrow_type.get_field_index(part) < 0:
            raise InvalidOperationError(
                f"cannot update {name!r}: there is no column {'.'.join(parts[: len(fields) + 1])!r}"
            )
        fields.append(field)
        arrow_field = arrow_type.field(part)
        arrow_type = arrow_field.type
        candidates = schema.children(field)
    return _Target(parts, tuple(fields), arrow_field)


def _check_disjoint(targets: list[_Target]) -> None:
    """Refuse setting a column and one of its own children in one update."""
    for a in targets:
        for b in targets:
            if a is not b and b.path[: len(a.path)] == a.path:
                raise InvalidOperationError(f"cannot set both {a.name!r} and {b.name!r} in one update")


def _values_for(rows: pa.Table, target: _Target, value) -> pa.Array:
    """The new values of ``target`` for every row of ``rows``, cast to its type."""
    if isinstance(value, pc.Expression):
        (result,) = _evaluate(rows, [value])
        result = result.combine_chunks() if result.num_chunks else pa.array([], result.type)
    else:
        try:
            scalar = pa.scalar(value, type=target.arrow_field.type)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise InvalidOperationError(
                f"{value!r} is not a value of {target.name} ({target.arrow_field.type}): {exc}"
            ) from None
        result = pa.repeat(scalar, rows.num_rows)
    result = result.cast(target.arrow_field.type)
    if not target.arrow_field.nullable and result.null_count:
        raise InvalidOperationError(
            f"{target.name} is not nullable, but the update gives {result.null_count} rows a null"
        )
    return result


def _replace_child(parent: pa.StructArray, path: tuple[str, ...], values: pa.Array) -> pa.StructArray:
    """``parent`` with the child at ``path`` replaced by ``values``. Rows where
    a struct is null stay null."""
    index = parent.type.get_field_index(path[0])
    children = [parent.field(i) for i in range(parent.type.num_fields)]
    children[index] = values if len(path) == 1 else _replace_child(children[index], path[1:], values)
    mask = parent.is_null() if parent.null_count else None
    return pa.StructArray.from_arrays(children, fields=list(parent.type), mask=mask)


def _with_new_values(rows: pa.Table, targets: list[_Target], values: list) -> pa.Table:
    """``rows`` with every target set; every value is computed from the rows
    as they were before the update."""
    new_values = [_values_for(rows, target, value) for target, value in zip(targets, values, strict=True)]
    for target, array in zip(targets, new_values, strict=True):
        column_index = rows.schema.get_field_index(target.path[0])
        if len(target.path) > 1:
            top = rows.column(column_index)
            top = top.combine_chunks() if top.num_chunks else pa.array([], top.type)
            array = _replace_child(top, target.path[1:], array)
        rows = rows.set_column(column_index, rows.schema.field(column_index), array)
    return rows


def _modified_field_ids(schema: Schema, targets: list[_Target]) -> list[int]:
    """Ids of every field whose values change: each target, its descendants
    (their values are replaced with it) and its ancestors (a struct changes
    when one of its children does)."""
    modified: set[int] = set()
    for target in targets:
        modified.update(f.id for f in target.fields)
        pending = [target.fields[-1]]
        while pending:
            children = schema.children(pending.pop())
            modified.update(f.id for f in children)
            pending.extend(children)
    return sorted(modified)
