"""Schema evolution: adding, dropping and altering columns.

Spec sections: the schema format page "Field IDs" (initial and new field assignment, ids
immutable and possibly sparse) and "Schema Evolution" (add, drop, rename,
type evolution); table overview page "Schema & Fields" and "Data Evolution" (new columns
are new data files appended to every fragment, "with values computed for all
existing rows in the fragment"; a rewritten column's old id becomes the ``-2``
tombstone in the old data file).

What each operation commits:

* :func:`add_columns` -- a ``Merge``: every fragment gains one data file (file
  format 2.0) holding the new columns for each of its *physical* rows, deleted
  ones included, so that the new file lines up row for row with the old ones.
* :func:`drop_columns` -- a ``Project``: the schema without the fields. No
  file is touched; data files left without any field of the schema leave the
  fragment (``commit._apply_project``), others keep listing the dropped ids, as
  pylance does.
* :func:`alter_columns` -- a ``Project`` for renames and nullability changes
  (field ids unchanged); a ``Merge`` when a column's type changes: the cast
  column is written to a new data file per fragment under a new field id, and
  the old id becomes ``-2`` in the old data file (pylance leaves the old id
  there; docs/spec-discrepancies.md, "Observed in pylance" item 4).

With stable row ids, a ``Merge`` marks every row of every fragment as last
updated at the new version (pylance 14 does the same; the commit stamps it,
see :func:`reference_impl.commit.build_manifest`); ``Project`` changes no
row version.

``preserves_nullability`` (transaction.proto ``Merge``/``Project``) is set as
pylance sets it: true unless the new schema has a non-nullable field that was
not already non-nullable under the same id, i.e. unless data written against
the old schema might break the new one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import acero

from ..arrow_schema import add_fields, schema_from_arrow, schema_to_arrow
from ..errors import InvalidOperationError, UnsupportedFeatureError
from ..fragment_writer import check_writable_version, dataset_data_version, write_data_file
from ..fragments import TOMBSTONE_FIELD_ID, Fragment
from ..scan import field_with_descendants, fragment_table
from ..schema import TOP_LEVEL_PARENT, Field, Schema, next_field_id, primary_key_problems
from ..transactions import Merge, Project
from ..type_grammar import EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY

if TYPE_CHECKING:
    from ..dataset import Dataset


# -- field paths ----------------------------------------------------------------------


def resolve_path(schema: Schema, path: object) -> Field:
    """The field a dotted path (``"point.x"``) names: a top-level field by
    name, then a child of it by name, and so on. Names containing ``.`` cannot
    be addressed. Raises :class:`KeyError` naming the path when no field
    matches, or when ``path`` is not a non-empty string (it comes straight
    from the caller, an alteration's ``path`` say, so it may be anything)."""
    if not isinstance(path, str) or not path:
        raise KeyError(f"{path!r} is not a field path")
    top, *below = path.split(".")
    field = _child_named(schema, TOP_LEVEL_PARENT, top, path)
    for name in below:
        field = _child_named(schema, field.id, name, path)
    return field


def _child_named(schema: Schema, parent_id: int, name: str, path: str) -> Field:
    field = next((f for f in schema.fields if f.parent_id == parent_id and f.name == name), None)
    if field is None:
        raise KeyError(f"no field {path!r} in the schema")
    return field


def subtree_ids(schema: Schema, field: Field) -> set[int]:
    """Ids of ``field`` and of every field below it."""
    return {f.id for f in field_with_descendants(schema, field)}


def data_file_field_ids(dataset: Dataset) -> set[int]:
    """Every field id the data files of this version list, tombstones excluded.

    pylance hands out new ids above these as well as above the schema's, so
    that an id whose data is still on disk is never given to another field
    (docs/spec-discrepancies.md, "Schema and logical types" item 11).
    """
    return {i for f in dataset.fragments for d in f.files for i in d.fields if i != TOMBSTONE_FIELD_ID}


# -- checks shared by every operation ----------------------------------------------------


def preserves_nullability(old: Schema, new: Schema) -> bool:
    """Whether data written against ``old`` still fits ``new``: every
    non-nullable field of ``new`` was already non-nullable, under the same id,
    in ``old`` (transaction.proto ``preserves_nullability``)."""
    required_before = {f.id for f in old.fields if not f.nullable}
    return all(f.nullable or f.id in required_before for f in new.fields)


def check_primary_key_kept_valid(old: Schema, new: Schema) -> None:
    """Refuse a schema change that breaks a primary key rule of the table overview page
    ("Unenforced Primary Key": key fields and their ancestors not nullable,
    leaves only) that ``old`` did not already break."""
    introduced = set(primary_key_problems(new)) - set(primary_key_problems(old))
    if introduced:
        raise InvalidOperationError("the change breaks the primary key: " + "; ".join(sorted(introduced)))


def check_writable(dataset: Dataset) -> None:
    """Data evolution writes data files of the dataset's version; table.proto (``DataStorageFormat``)
    wants every file of a dataset in its file format version."""
    check_writable_version(dataset_data_version(dataset.manifest))


# -- reading and writing fragments --------------------------------------------------------


def physical_rows(dataset: Dataset, fragment: Fragment) -> pa.Table:
    """Every physical row of ``fragment``, deleted ones included, every column
    of the schema (table overview page "Data Evolution": values for all existing rows)."""
    return fragment_table(dataset, fragment, include_deleted=True)


def with_new_data_file(dataset: Dataset, fragment: Fragment, table: pa.Table, fields: list[Field]) -> Fragment:
    """``fragment`` with one more data file holding ``table``, whose columns
    are the top-level ``fields`` (descendants follow their parent)."""
    arrow_schema = schema_to_arrow(Schema(fields))
    data_file = write_data_file(
        dataset.storage, table.cast(arrow_schema), fields, version=dataset_data_version(dataset.manifest)
    )
    return dataclasses.replace(fragment, files=[*fragment.files, data_file])


# -- add_columns -------------------------------------------------------------------------------


def add_columns(dataset: Dataset, columns: Mapping) -> Dataset:
    """Add columns computed from the existing ones (schema format page "Add Column";
    the table overview page "Data Evolution").

    ``columns`` maps each new column to its values. A key is a name (the
    column is nullable and takes the type of the values) or a
    :class:`pyarrow.Field` (name, type, nullability and metadata taken from
    it; values are cast to the type). A value is a pyarrow compute
    :class:`~pyarrow.compute.Expression` over the existing columns, or a
    function from a fragment's physical rows (a :class:`pyarrow.Table` with
    every column, deleted rows included) to an array of as many values.

    New fields are numbered after the largest id of the schema and of the
    data files (:func:`data_file_field_ids`), depth first, and appended to
    the top level. Every fragment gains one 2.0 data file with the new
    columns; one ``Merge`` is committed.
    """
    check_writable(dataset)
    if not isinstance(columns, Mapping) or not columns:
        raise InvalidOperationError("columns must be a non-empty mapping of new columns to their values")
    requested = [(_requested_field(key), _check_producer(key, value)) for key, value in columns.items()]

    values = {f.id: _evaluate_all(physical_rows(dataset, f), requested) for f in dataset.fragments}
    sample = next(iter(values.values()), None) or _evaluate_all(
        schema_to_arrow(dataset.schema).empty_table(), requested
    )
    arrow_fields = [_final_field(field, values, index, sample) for index, (field, _) in enumerate(requested)]

    schema = add_fields(dataset.schema, arrow_fields, used_field_ids=data_file_field_ids(dataset))
    old_ids = set(dataset.schema.field_ids())
    new_fields = [f for f in schema.fields if f.id not in old_ids]
    fragments = [
        with_new_data_file(dataset, fragment, pa.table(values[fragment.id], schema=pa.schema(arrow_fields)), new_fields)
        for fragment in dataset.fragments
    ]
    merge = Merge(
        fragments=fragments,
        schema=schema,
        preserves_nullability=preserves_nullability(dataset.schema, schema),
    )
    return dataset.commit(merge)


def _requested_field(key) -> pa.Field | str:
    if isinstance(key, pa.Field):
        return key
    if isinstance(key, str) and key:
        return key
    raise TypeError(f"a new column is named by a non-empty string or a pyarrow.Field, not {key!r}")


def _check_producer(key, value):
    if isinstance(value, pc.Expression) or callable(value):
        return value
    raise TypeError(f"column {key!r}: expected a pyarrow compute Expression or a function, got {type(value).__name__}")


def _evaluate_all(table: pa.Table, requested) -> list[pa.Array]:
    """The values of every requested column over ``table``'s rows, cast to
    the requested type when a :class:`pyarrow.Field` gives one."""
    arrays = []
    for field, producer in requested:
        array = _evaluate(producer, table)
        if len(array) != table.num_rows:
            raise InvalidOperationError(f"column {_name(field)!r}: got {len(array)} values for {table.num_rows} rows")
        if isinstance(field, pa.Field):
            array = array.cast(field.type)
            if not field.nullable and array.null_count:
                raise InvalidOperationError(
                    f"column {field.name!r} is not nullable but {array.null_count} values are null"
                )
        arrays.append(array)
    return arrays


def _evaluate(producer, table: pa.Table) -> pa.Array:
    """Apply an expression (projected in row order) or a function to ``table``."""
    if isinstance(producer, pc.Expression):
        plan = acero.Declaration.from_sequence(
            [
                acero.Declaration("table_source", acero.TableSourceNodeOptions(table)),
                acero.Declaration("project", acero.ProjectNodeOptions([producer], ["value"])),
            ]
        )
        result = plan.to_table(use_threads=False).column(0)
    else:
        result = producer(table)
    if isinstance(result, pa.ChunkedArray):
        return result.combine_chunks()
    return result if isinstance(result, pa.Array) else pa.array(result)


def _final_field(field: pa.Field | str, values: dict, index: int, sample: list[pa.Array]) -> pa.Field:
    """The Arrow field of a new column: as given, or named ``field`` with the
    type of its values (the first fragment whose values are not all of the
    ``null`` type decides) and nullable."""
    if isinstance(field, pa.Field):
        return field
    types = [arrays[index].type for arrays in values.values()] or [sample[index].type]
    chosen = next((t for t in types if t != pa.null()), types[0])
    for arrays in values.values():
        arrays[index] = arrays[index].cast(chosen)
    return pa.field(field, chosen, nullable=True)


def _name(field: pa.Field | str) -> str:
    return field.name if isinstance(field, pa.Field) else field


# -- drop_columns ------------------------------------------------------------------------------


def drop_columns(dataset: Dataset, names) -> Dataset:
    """Remove fields from the schema (schema format page "Drop Column") by committing a
    ``Project``.

    ``names`` is a path or a list of paths (dotted for fields inside structs).
    Dropping a field drops everything below it; a struct left without any
    child is dropped too, as pylance does. Only children of structs can be
    dropped on their own (a list's or a map's inner fields cannot). Dropping
    every column is refused. The data stays on disk; data files that no
    longer hold any field of the schema leave their fragments.
    """
    paths = [names] if isinstance(names, str) else list(names)
    if not paths:
        raise InvalidOperationError("no column to drop")
    schema = dataset.schema
    removed: set[int] = set()
    for path in paths:
        field = resolve_path(schema, path)
        parent = schema.field_by_id(field.parent_id)
        if parent is not None and parent.logical_type != "struct":
            raise InvalidOperationError(
                f"{path!r} is inside the {parent.logical_type!r} field {parent.name!r}; drop that field"
            )
        removed |= subtree_ids(schema, field)
    removed |= _emptied_structs(schema, removed)
    kept = [f for f in schema.fields if f.id not in removed]
    if not any(f.parent_id == TOP_LEVEL_PARENT for f in kept):
        raise InvalidOperationError("cannot drop every column of a dataset")
    new_schema = Schema(kept)
    check_primary_key_kept_valid(schema, new_schema)
    return dataset.commit(Project(schema=new_schema, preserves_nullability=preserves_nullability(schema, new_schema)))


def _emptied_structs(schema: Schema, removed: set[int]) -> set[int]:
    """Struct fields all of whose children are in ``removed`` (repeatedly,
    so that emptying a struct can empty its parent)."""
    emptied: set[int] = set()
    changed = True
    while changed:
        changed = False
        gone = removed | emptied
        for f in schema.fields:
            children = [c.id for c in schema.children(f)]
            if f.id not in gone and f.logical_type == "struct" and children and set(children) <= gone:
                emptied.add(f.id)
                changed = True
    return emptied


# -- alter_columns -----------------------------------------------------------------------------

_ALTERATION_KEYS = {"path", "name", "nullable", "data_type"}


def alter_columns(dataset: Dataset, *alterations: Mapping) -> Dataset:
    """Rename fields, change their nullability, or cast top-level columns.

    Each alteration is a mapping with ``path`` (dotted) and any of ``name``,
    ``nullable`` and ``data_type``. Paths are resolved against the schema as
    it is before the call; a field can be altered once per call.

    * ``name`` (schema format page "Rename Column": the id remains the same) must not be
      taken by a sibling.
    * ``nullable``: making a field non-nullable is refused when a visible row
      holds a null in it (pylance refuses it too).
    * ``data_type`` (schema format page "Type Evolution"; table overview page "Data Evolution"):
      only top-level columns, within a type family as pylance allows
      (:func:`castable`), and the cast must not lose values. The column gets
      a new field id (its children too) and its metadata minus extension keys;
      every fragment gains a data file with the cast values, and the old
      id becomes ``-2`` in the old data file. Casting a field inside a struct
      is refused: its new data file would have to repeat the struct's id.

    Without a cast the change is a ``Project``; with one, a ``Merge``.
    """
    if not alterations:
        raise InvalidOperationError("no alteration given")
    old = dataset.schema
    fields = {f.id: dataclasses.replace(f) for f in old.fields}
    casts: list[tuple[Field, pa.DataType]] = []
    seen: set[int] = set()
    for alteration in alterations:
        field = _altered_field(old, alteration, seen)
        if "name" in alteration:
            fields[field.id].name = _new_name(alteration["name"])
        if "nullable" in alteration:
            fields[field.id].nullable = _new_nullability(dataset, field, alteration)
        if alteration.get("data_type") is not None:
            target = _cast_target(old, field, alteration["data_type"])
            if target is not None:
                casts.append((field, target))
    new = Schema([fields[f.id] for f in old.fields], dict(old.metadata))
    _check_sibling_names(new)
    check_primary_key_kept_valid(old, new)
    if not casts:
        return dataset.commit(Project(schema=Schema(new.fields), preserves_nullability=preserves_nullability(old, new)))
    return _commit_casts(dataset, new, casts)


def _altered_field(schema: Schema, alteration: Mapping, seen: set[int]) -> Field:
    if not isinstance(alteration, Mapping):
        raise TypeError(f"an alteration is a mapping, not {type(alteration).__name__}")
    unknown = set(alteration) - _ALTERATION_KEYS
    if unknown:
        raise InvalidOperationError(f"unknown alteration keys {sorted(unknown)}; allowed: {sorted(_ALTERATION_KEYS)}")
    if not set(alteration) & {"name", "nullable", "data_type"}:
        raise InvalidOperationError(f"alteration of {alteration.get('path')!r} changes nothing")
    field = resolve_path(schema, alteration.get("path"))
    if field.id in seen:
        raise InvalidOperationError(f"{alteration['path']!r} is altered twice; give one alteration per field")
    seen.add(field.id)
    return field


def _new_name(name) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidOperationError(f"{name!r} is not a field name")
    return name


def _check_sibling_names(schema: Schema) -> None:
    """The schema format page: fields are addressed by name among their siblings, so two
    siblings cannot share one."""
    seen: set[tuple[int, str]] = set()
    for f in schema.fields:
        if (f.parent_id, f.name) in seen:
            raise InvalidOperationError(f"two fields named {f.name!r} would share a parent")
        seen.add((f.parent_id, f.name))


def _new_nullability(dataset: Dataset, field: Field, alteration: Mapping) -> bool:
    nullable = alteration["nullable"]
    if not isinstance(nullable, bool):
        raise TypeError(f"nullable must be True or False, not {nullable!r}")
    if not nullable and field.nullable:
        nulls = _visible_nulls(dataset, alteration["path"])
        if nulls:
            raise InvalidOperationError(f"{alteration['path']!r} holds {nulls} nulls and cannot be made non-nullable")
    return nullable


def _visible_nulls(dataset: Dataset, path: str) -> int:
    """How many values of the field at ``path`` are null in visible rows,
    not counting values under a null parent (they are absent, not null)."""
    names = path.split(".")
    column = dataset.to_table().column(names[0])
    total = 0
    for chunk in column.chunks:
        total += _nulls_below(chunk, names[1:])
    return total


def _nulls_below(array: pa.Array, names: list[str]) -> int:
    if not names:
        return array.null_count
    present = array.filter(array.is_valid())
    if pa.types.is_struct(present.type):
        return _nulls_below(present.field(names[0]), names[1:])
    return _nulls_below(present.flatten(), names[1:])  # list-like: the element values


def castable(source: pa.DataType, target: pa.DataType) -> bool:
    """pylance's rule for type changes: within one family (integers,
    floating point, temporal, boolean, strings, binaries, decimals) or
    between list kinds whose elements are castable."""
    t = pa.types
    families = (
        t.is_integer,
        t.is_floating,
        t.is_temporal,
        t.is_boolean,
        lambda x: t.is_string(x) or t.is_large_string(x),
        lambda x: t.is_binary(x) or t.is_large_binary(x),
        t.is_decimal,
    )
    if any(family(source) and family(target) for family in families):
        return True
    lists = (t.is_list, t.is_large_list, t.is_fixed_size_list)
    if any(k(source) for k in lists) and any(k(target) for k in lists):
        return castable(source.value_type, target.value_type)
    return False


def _cast_target(schema: Schema, field: Field, data_type) -> pa.DataType | None:
    """The type to cast ``field`` to, or None when it already has it."""
    if not isinstance(data_type, pa.DataType):
        raise TypeError(f"data_type must be a pyarrow DataType, not {data_type!r}")
    if field.parent_id != TOP_LEVEL_PARENT:
        raise UnsupportedFeatureError(
            field.name,
            "only top-level columns can change type: a nested field's new data file would repeat its parent's id",
        )
    current = schema_to_arrow(Schema(field_with_descendants(schema, field))).field(0).type
    if current == data_type:
        return None
    if not castable(current, data_type):
        raise InvalidOperationError(f"cannot cast {field.name!r} from {current} to {data_type}")
    return data_type


def _commit_casts(dataset: Dataset, schema: Schema, casts: list[tuple[Field, pa.DataType]]) -> Dataset:
    """Give each cast column a new field subtree, write its cast values into
    a new data file per fragment, tombstone the old ids and commit a Merge."""
    check_writable(dataset)
    used = data_file_field_ids(dataset)
    replaced: set[int] = set()
    new_tops: list[Field] = []
    for old_field, target in casts:
        subtree = _recast_subtree(_as_altered(schema, old_field), target, next_field_id(schema, used))
        replaced |= subtree_ids(schema, old_field)
        schema = _replace_subtree(schema, old_field, subtree)
        new_tops.append(subtree[0])

    cast_fields = [f for top in new_tops for f in field_with_descendants(schema, top)]
    targets = pa.schema([schema_to_arrow(schema).field(top.name) for top in new_tops])
    fragments = []
    for fragment in dataset.fragments:
        rows = physical_rows(dataset, fragment)
        columns = [rows.column(old.name).cast(target) for old, target in casts]
        cast_table = pa.Table.from_arrays(columns, schema=targets)
        fragment = with_new_data_file(dataset, _tombstoned(fragment, replaced), cast_table, cast_fields)
        fragments.append(_without_empty_files(fragment, set(schema.field_ids())))
    merge = Merge(
        fragments=fragments,
        schema=schema,
        preserves_nullability=preserves_nullability(dataset.schema, schema),
    )
    return dataset.commit(merge)


def _as_altered(schema: Schema, field: Field) -> Field:
    """``field`` as the altered ``schema`` has it (renamed, say): the field
    with its id, which alterations keep."""
    altered = schema.field_by_id(field.id)
    if altered is None:  # casts name fields of the schema ``schema`` was altered from
        raise KeyError(f"field {field.name!r} (id {field.id}) is not in the altered schema")
    return altered


def _recast_subtree(field: Field, target: pa.DataType, first_id: int) -> list[Field]:
    """The fields of ``field`` cast to ``target``, numbered from ``first_id``
    depth first: same name, nullability and primary key flags; metadata kept
    except the extension keys, which described the old type."""
    metadata = {k: v for k, v in field.metadata.items() if k not in (EXTENSION_NAME_KEY, EXTENSION_METADATA_KEY)}
    arrow_field = pa.field(field.name, target, nullable=field.nullable, metadata=metadata or None)
    fields = schema_from_arrow(pa.schema([arrow_field]), first_id=first_id).fields
    fields[0] = dataclasses.replace(
        fields[0],
        unenforced_primary_key=field.unenforced_primary_key,
        unenforced_primary_key_position=field.unenforced_primary_key_position,
    )
    return fields


def _replace_subtree(schema: Schema, old: Field, subtree: list[Field]) -> Schema:
    """``schema`` with the field of ``old``'s id and its descendants replaced,
    in place, by ``subtree``."""
    old_ids = subtree_ids(schema, old)
    fields: list[Field] = []
    for f in schema.fields:
        if f.id == old.id:
            fields.extend(subtree)
        elif f.id not in old_ids:
            fields.append(f)
    return Schema(fields, dict(schema.metadata))


def _tombstoned(fragment: Fragment, ids: set[int]) -> Fragment:
    """``fragment`` whose data files list ``-2`` in place of ``ids`` (table overview page
    "Data Evolution"); column indices are unchanged, so every other id still
    names its column."""
    files = [
        dataclasses.replace(d, fields=[TOMBSTONE_FIELD_ID if i in ids else i for i in d.fields]) for d in fragment.files
    ]
    return dataclasses.replace(fragment, files=files)


def _without_empty_files(fragment: Fragment, schema_ids: set[int]) -> Fragment:
    """Drop data files that hold no field of the schema any more (only
    tombstones or dropped ids), as pylance does after a cast."""
    files = [d for d in fragment.files if any(i in schema_ids for i in d.fields)]
    return dataclasses.replace(fragment, files=files)


__all__ = [
    "add_columns",
    "alter_columns",
    "castable",
    "data_file_field_ids",
    "drop_columns",
    "physical_rows",
    "preserves_nullability",
    "resolve_path",
]
