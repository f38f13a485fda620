"""What each write operation leaves in the table: the expected rows.

:func:`apply` performs an operation of :mod:`conformance.drivers.writes` on an
Arrow table held in memory, with the meaning the vocabulary gives it (SQL
semantics: a predicate that is null selects nothing). Writer conformance
compares every version a writer commits with the table this model computes,
so the model is deliberately plain: whole-table Arrow compute, no Lance at
all. Row order is not part of a version's content here (compaction and
updates move rows); comparisons sort.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from ..drivers import writes


class ModelError(ValueError):
    """An operation the model cannot apply to the table it holds (a column
    that is not there, a value of the wrong type): a fault of the script."""


def selected(table: pa.Table, where: writes.Predicate | None) -> pa.Array:
    """A boolean mask (never null) of the rows ``where`` selects."""
    if where is None:
        return pa.array([True] * table.num_rows, pa.bool_())
    if where.column not in table.column_names:
        raise ModelError(f"the predicate names {where.column!r}, which the table does not have")
    return pc.fill_null(_evaluate_expression(table, where.to_arrow()), False)


def apply(table: pa.Table | None, op: writes.WriteOp, history: Mapping[int, pa.Table]) -> pa.Table:
    """The content after ``op`` of a table holding ``table`` (None before it is
    created); ``history`` holds each earlier version's content (for restore)."""
    if isinstance(op, writes.Create):
        if table is not None:
            raise ModelError("create on an existing table")
        return op.rows
    if table is None:
        raise ModelError(f"{op.kind.value} before the table is created")
    if isinstance(op, writes.Append):
        return pa.concat_tables([table, op.rows.cast(table.schema)])
    if isinstance(op, writes.Overwrite):
        return op.rows
    if isinstance(op, writes.Delete):
        return table.filter(pc.invert(selected(table, op.where)))
    if isinstance(op, writes.Update):
        return _update(table, op)
    if isinstance(op, writes.Upsert):
        return _upsert(table, op)
    if isinstance(op, writes.AddColumns):
        for column in op.columns:
            table = table.append_column(column.name, _evaluate_expression(table, column.to_arrow()))
        return table
    if isinstance(op, writes.DropColumns):
        missing = [name for name in op.columns if name not in table.column_names]
        if missing:
            raise ModelError(f"drop of columns the table does not have: {missing}")
        return table.drop_columns(list(op.columns))
    if isinstance(op, writes.AlterColumns):
        for alteration in op.alterations:
            table = _alter(table, alteration)
        return table
    if isinstance(op, writes.Restore):
        if op.version not in history:
            raise ModelError(f"restore of version {op.version}, which the history does not hold")
        return history[op.version]
    # compact, create-index, tag, config: the rows stay as they are.
    return table


def _evaluate_expression(table: pa.Table, expression: pc.Expression) -> pa.Array:
    return ds.dataset(table).to_table(columns={"_value": expression}).column("_value").combine_chunks()


def _update(table: pa.Table, op: writes.Update) -> pa.Table:
    mask = selected(table, op.where)
    for column, value in op.values:
        if column not in table.column_names:
            raise ModelError(f"update of {column!r}, which the table does not have")
        index = table.column_names.index(column)
        field = table.schema.field(index)
        new = pa.array([value] * table.num_rows, field.type)
        table = table.set_column(index, field, pc.if_else(mask, new, table.column(index).combine_chunks()))
    return table


def _upsert(table: pa.Table, op: writes.Upsert) -> pa.Table:
    rows = op.rows.cast(table.schema)
    keys = {tuple(row[name] for name in op.on) for row in rows.select(list(op.on)).to_pylist()}
    kept = [tuple(row[name] for name in op.on) not in keys for row in table.select(list(op.on)).to_pylist()]
    return pa.concat_tables([table.filter(pa.array(kept, pa.bool_())), rows])


def _alter(table: pa.Table, alteration: writes.Alteration) -> pa.Table:
    if alteration.path not in table.column_names:
        raise ModelError(f"alteration of {alteration.path!r}, which the table does not have (top-level only)")
    index = table.column_names.index(alteration.path)
    field = table.schema.field(index)
    column = table.column(index)
    target = alteration.arrow_data_type()
    if target is not None:
        column = column.cast(target)
        field = field.with_type(target)
    if alteration.rename is not None:
        field = field.with_name(alteration.rename)
    if alteration.nullable is not None:
        field = field.with_nullable(alteration.nullable)
    return table.set_column(index, field, column)
