"""Strategies for whole datasets on disk: a :class:`DatasetRecipe` is a first
table and a run of steps (one dataclass per kind of step) that the reference
implementation writes as one version per commit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, Union, get_args

import pyarrow as pa
from hypothesis import strategies as st

from reference_impl.arrow_schema import schema_to_arrow

from ._arguments import size_range
from ._tables import arrow_tables

if TYPE_CHECKING:
    from reference_impl.dataset import Dataset

# Choices that depend on the dataset as it is when a step runs (which
# fragment, which column, which version) are stored as plain integers
# ("picks") and resolved modulo what exists then, so that every drawn step
# applies to every dataset.


@dataclass(frozen=True)
class AppendStep:
    """Append ``table`` (fitted to the dataset's columns at that point)."""

    KIND: ClassVar[str] = "append"
    table: pa.Table


@dataclass(frozen=True)
class OverwriteStep:
    """Overwrite the dataset with ``table`` (fitted to its columns)."""

    KIND: ClassVar[str] = "overwrite"
    table: pa.Table


@dataclass(frozen=True)
class DeleteStep:
    """Delete rows: each ``(fragment_pick, offset_pick)`` names a fragment
    with rows and a row offset in it; one commit for all of them."""

    KIND: ClassVar[str] = "delete"
    rows: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class AddColumnStep:
    """Add an int64 column ``added_<step number>`` holding ``i * scale``."""

    KIND: ClassVar[str] = "add_column"
    scale: int


@dataclass(frozen=True)
class DropColumnStep:
    """Drop the picked top-level column (nothing when only one is left)."""

    KIND: ClassVar[str] = "drop_column"
    column_pick: int


@dataclass(frozen=True)
class CompactStep:
    """Compact towards ``target_rows_per_fragment`` (one or two commits)."""

    KIND: ClassVar[str] = "compact"
    target_rows_per_fragment: int
    materialize_deletions: bool


@dataclass(frozen=True)
class RestoreStep:
    """Restore the picked earlier version."""

    KIND: ClassVar[str] = "restore"
    version_pick: int


@dataclass(frozen=True)
class TagStep:
    """Tag the picked version ``tag-<step number>`` (no new version)."""

    KIND: ClassVar[str] = "tag"
    version_pick: int


@dataclass(frozen=True)
class ConfigStep:
    """Set the config key ``key.<key>`` to ``str(value)``."""

    KIND: ClassVar[str] = "config"
    key: int
    value: int


#: One operation after a dataset's creation.
DatasetStep = Union[
    AppendStep,
    DeleteStep,
    AddColumnStep,
    DropColumnStep,
    CompactStep,
    RestoreStep,
    OverwriteStep,
    TagStep,
    ConfigStep,
]
#: Every kind of :data:`DatasetStep`, each one commit (compaction: one or two;
#: a tag: none), in the order :func:`dataset_recipes` shrinks through them.
STEP_KINDS: tuple[type, ...] = get_args(DatasetStep)


@dataclass
class DatasetRecipe:
    """How to write a valid dataset with the reference implementation:
    create it from ``first``, then apply ``steps`` in order (:meth:`build`).
    Tables appended or overwritten later follow ``first``'s schema and are
    fitted to the columns the dataset has by then (a dropped column is left
    out, an added one is null). ``naming`` is the manifest naming scheme,
    ``"v2"`` or ``"v1"``."""

    first: pa.Table
    stable_row_ids: bool
    naming: Literal["v2", "v1"]
    max_rows_per_file: int
    steps: list[DatasetStep]

    def build(self, path) -> Dataset:
        """Write the dataset at ``path`` (which must not exist) and return
        its latest version."""
        # Deliberately lazy: a caller drawing only in-memory objects need
        # not load the whole reference writer.
        from reference_impl.dataset import Dataset

        dataset = Dataset.create(
            path,
            self.first,
            manifest_naming=self.naming,
            stable_row_ids=self.stable_row_ids,
            max_rows_per_file=self.max_rows_per_file,
        )
        for number, step in enumerate(self.steps):
            dataset = _apply_step(dataset, step, number, self.max_rows_per_file)
        return dataset


def _fit(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with exactly ``schema``'s columns: ones it lacks are null."""
    columns = [
        table.column(field.name) if field.name in table.column_names else pa.nulls(table.num_rows, field.type)
        for field in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def _apply_step(dataset: Dataset, step: DatasetStep, number: int, max_rows_per_file: int) -> Dataset:
    schema = schema_to_arrow(dataset.schema)
    match step:
        case AppendStep(table=table):
            return dataset.append(_fit(table, schema), max_rows_per_file=max_rows_per_file)
        case OverwriteStep(table=table):
            return dataset.overwrite(_fit(table, schema), max_rows_per_file=max_rows_per_file)
        case DeleteStep(rows=rows):
            fragments = [f for f in dataset.fragments if f.physical_rows]
            if not fragments:
                return dataset
            chosen: dict[int, set[int]] = {}
            for fragment_pick, offset_pick in rows:
                fragment = fragments[fragment_pick % len(fragments)]
                chosen.setdefault(fragment.id, set()).add(offset_pick % fragment.physical_rows)
            return dataset.delete({fragment_id: sorted(offsets) for fragment_id, offsets in chosen.items()})
        case AddColumnStep(scale=scale):
            field = pa.field(f"added_{number}", pa.int64())
            return dataset.add_columns(
                {field: lambda rows: pa.array([i * scale for i in range(rows.num_rows)], pa.int64())}
            )
        case DropColumnStep(column_pick=pick):
            names = schema.names
            if len(names) < 2:
                return dataset
            return dataset.drop_columns([names[pick % len(names)]])
        case CompactStep(target_rows_per_fragment=target_rows, materialize_deletions=materialize):
            return dataset.compact(target_rows_per_fragment=target_rows, materialize_deletions=materialize)
        case RestoreStep(version_pick=pick):
            return dataset.restore(1 + pick % dataset.version)
        case TagStep(version_pick=pick):
            dataset.create_tag(f"tag-{number}", 1 + pick % dataset.version)
            return dataset
        case ConfigStep(key=key, value=value):
            return dataset.update_metadata(config={f"key.{key}": str(value)})
    raise TypeError(f"not a dataset step: {step!r}")


def _dataset_steps(schema: pa.Schema, max_rows: int) -> st.SearchStrategy[DatasetStep]:
    tables = arrow_tables(schema, max_rows=max_rows)
    picks = st.integers(0, 1000)
    by_kind: dict[type, st.SearchStrategy[DatasetStep]] = {
        AppendStep: st.builds(AppendStep, tables),
        DeleteStep: st.builds(DeleteStep, st.lists(st.tuples(picks, picks), min_size=1, max_size=4).map(tuple)),
        AddColumnStep: st.builds(AddColumnStep, st.integers(-3, 3)),
        DropColumnStep: st.builds(DropColumnStep, picks),
        CompactStep: st.builds(CompactStep, st.integers(1, 2 * max_rows), st.booleans()),
        RestoreStep: st.builds(RestoreStep, picks),
        OverwriteStep: st.builds(OverwriteStep, tables),
        TagStep: st.builds(TagStep, picks),
        ConfigStep: st.builds(ConfigStep, st.integers(0, 3), st.integers(0, 9)),
    }
    return st.one_of([by_kind[kind] for kind in STEP_KINDS])


@st.composite
def _dataset_recipes(draw, steps_range: tuple[int, int], rows_range: tuple[int, int]) -> DatasetRecipe:
    min_rows, max_rows = rows_range
    first = draw(arrow_tables(min_rows=min_rows, max_rows=max_rows))
    return DatasetRecipe(
        first=first,
        stable_row_ids=draw(st.booleans()),
        naming=draw(st.sampled_from(["v2", "v1"])),
        max_rows_per_file=draw(st.integers(1, max(max_rows, 1))),
        steps=draw(st.lists(_dataset_steps(first.schema, max_rows), min_size=steps_range[0], max_size=steps_range[1])),
    )


def dataset_recipes(
    *, min_steps: int = 0, max_steps: int | None = None, min_rows: int = 0, max_rows: int | None = None
) -> st.SearchStrategy[DatasetRecipe]:
    """:class:`DatasetRecipe`: a first table of ``min_rows..max_rows`` rows
    from :func:`arrow_tables` (nested types and nulls included), stable row
    ids or not, V1 or V2 manifest names, a file size limit, and
    ``min_steps..max_steps`` steps of every kind in :data:`STEP_KINDS`
    (tables appended or overwritten later have at most ``max_rows`` rows).
    Guarantee: ``build(path)`` writes a dataset with one version per commit
    that the reference implementation and the specification both accept;
    tests/conformance/strategies/test_strategies.py holds the validator and pylance to it.

    Shrinks towards ``min_steps`` steps (appends first), a first table of
    ``min_rows`` rows of one ``bool`` column, V2 names without stable row
    ids, and one row per file."""
    return _dataset_recipes(size_range("steps", min_steps, max_steps), size_range("rows", min_rows, max_rows))
