"""The script a writer is run through: one step per operation.

Each :class:`Step` makes one write operation (:mod:`conformance.drivers.writes`),
names the requirement ids it exercises, the steps that shape the table it
meets (``needs``), and the facts of the canonical description it must leave
(an index, a tag, a config key, a nullability flag). The rows each version
must hold come from :mod:`.model`, so the script never spells them out.

Every step starts from a table of its own: the run creates it and replays
the steps it needs through the reference driver, in order, before the
writer under test performs the step. So one failing step (an add-columns)
never hides the coverage of another (a rename, a drop), and each step still
meets a table shaped as the operation deserves (an update where a deletion
file already is, a compaction over deletions, a restore across a schema
change, a tag of the version compaction committed).

The table starts with ``id`` (int64, unique), ``name`` (string, nulls) and
``score`` (float64). Step ids are stable: expectations files name them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from ..describe import Description
from ..drivers import writes
from ..drivers.writes import WriteKind, WriteOp

#: The data storage version the script's tables are created with: the one
#: every shipped reader can read (the reference reads up to 2.2 now, older
#: pylance releases and the reference writer not every newer version), so
#: that rows are compared by every reader.
DEFAULT_DATA_STORAGE_VERSION = "2.0"

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string()), pa.field("score", pa.float64())])


def rows(ids: range | list[int], *, name: str = "row", schema: pa.Schema = SCHEMA) -> pa.Table:
    """Rows of the script's schema: names ``name-<id>`` (every seventh null),
    scores ``id / 2``."""
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([None if i % 7 == 6 else f"{name}-{i}" for i in ids], pa.string()),
            "score": pa.array([i / 2 for i in ids], pa.float64()),
        },
        schema=schema,
    )


@dataclass
class ScriptContext:
    """What the steps run so far on this step's table committed."""

    #: The data storage version the table is created with (None: the writer's default).
    data_storage_version: str | None
    #: The version each step that ran committed (a tag: the version it tagged).
    versions: dict[str, int] = field(default_factory=dict)

    def version_of(self, step_id: str) -> int:
        return self.versions[step_id]


#: A check of a description a step leaves: the problems found (empty: none).
DescriptionCheck = Callable[[Description, ScriptContext], list[str]]


@dataclass(frozen=True)
class Step:
    id: str
    kind: WriteKind
    description: str
    make: Callable[[ScriptContext], WriteOp]
    requirements: tuple[str, ...] = ()
    #: The steps that shape the table this one meets (each with the steps it
    #: needs in turn: :func:`preparation`): the run replays them through the
    #: reference driver on a table of this step's own (one it cannot prepare
    #: is why this step is skipped).
    needs: tuple[str, ...] = ()
    #: Facts of the latest description the step must leave.
    checks: tuple[DescriptionCheck, ...] = ()


# -- description checks ------------------------------------------------------------------


def _field(document: Description, name: str) -> Mapping | None:
    return next((f for f in document["schema"] if f["name"] == name and f["parent_id"] == -1), None)


def has_index(name: str, column: str) -> DescriptionCheck:
    def check(document: Description, context: ScriptContext) -> list[str]:
        target = _field(document, column)
        for index in document["indices"]:
            if index["name"] == name:
                if target is not None and list(index["fields"]) != [target["id"]]:
                    return [f"index {name!r} covers fields {index['fields']}, not {column!r} (id {target['id']})"]
                return []
        return [f"no index named {name!r} (indices: {[i['name'] for i in document['indices']]})"]

    return check


def has_tag(name: str, step_id: str) -> DescriptionCheck:
    def check(document: Description, context: ScriptContext) -> list[str]:
        want = context.version_of(step_id)
        for tag in document["tags"]:
            if tag["name"] == name:
                return [] if tag["version"] == want else [f"tag {name!r} names version {tag['version']}, not {want}"]
        return [f"no tag named {name!r} (tags: {[t['name'] for t in document['tags']]})"]

    return check


def has_config(key: str, value: str) -> DescriptionCheck:
    def check(document: Description, context: ScriptContext) -> list[str]:
        got = document["config"].get(key)
        return [] if got == value else [f"config {key!r} is {got!r}, not {value!r}"]

    return check


def field_nullable(name: str, nullable: bool) -> DescriptionCheck:
    def check(document: Description, context: ScriptContext) -> list[str]:
        target = _field(document, name)
        if target is None:
            return [f"the schema has no top-level field {name!r}"]
        return [] if target["nullable"] is nullable else [f"field {name!r} nullable is {target['nullable']}"]

    return check


def data_storage_version(context_version: Callable[[ScriptContext], str | None]) -> DescriptionCheck:
    def check(document: Description, context: ScriptContext) -> list[str]:
        want = context_version(context)
        data_format = document["data_format"]
        got = data_format["version"] if data_format else None
        return [] if want is None or got == want else [f"data storage version {got!r}, not {want!r} as asked"]

    return check


# -- the script -----------------------------------------------------------------------------


def _create(context: ScriptContext) -> WriteOp:
    return writes.Create(rows(range(10)), data_storage_version=context.data_storage_version, max_rows_per_file=5)


SCRIPT: tuple[Step, ...] = (
    Step(
        "create",
        WriteKind.CREATE,
        "create the table: 10 rows in two data files of 5",
        _create,
        ("transaction.overwrite-replaces-table", "fragment.has-data-file", "history.no-skipped-versions"),
        checks=(data_storage_version(lambda context: context.data_storage_version),),
    ),
    Step(
        "append",
        WriteKind.APPEND,
        "append 5 rows",
        lambda context: writes.Append(rows(range(10, 15))),
        (
            "transaction.append-keeps-existing",
            "transaction.append-ids-assigned-at-commit",
            "fragment.new-ids-above-max",
        ),
        needs=("create",),
    ),
    Step(
        "delete",
        WriteKind.DELETE,
        "delete the rows with id < 3 (part of the first fragment)",
        lambda context: writes.Delete(writes.Compare("id", writes.Comparison.LT, 3)),
        ("transaction.delete-only-deletes", "deletion.readers-filter", "deletion.count-matches-metadata"),
        needs=("create",),
    ),
    Step(
        "delete-in",
        WriteKind.DELETE,
        "delete the rows with id IN (7, 12), in two fragments",
        lambda context: writes.Delete(writes.IsIn("id", (7, 12))),
        ("transaction.delete-only-deletes", "deletion.at-most-one", "deletion.count-matches-metadata"),
        needs=("append",),
    ),
    Step(
        "update",
        WriteKind.UPDATE,
        "set name = 'updated' where id >= 13",
        lambda context: writes.Update((("name", "updated"),), where=writes.Compare("id", writes.Comparison.GE, 13)),
        ("transaction.update-keeps-row-count", "transaction.update-modes", "deletion.readers-filter"),
        needs=("delete-in",),
    ),
    Step(
        "upsert",
        WriteKind.UPSERT,
        "upsert on id: row 4 replaced, rows 20 and 21 inserted",
        lambda context: writes.Upsert(rows([4, 20, 21], name="upserted"), on=("id",)),
        ("transaction.update-keeps-row-count", "deletion.readers-filter"),
        needs=("delete",),
    ),
    Step(
        "add-columns",
        WriteKind.ADD_COLUMNS,
        "add column next_id = id + 1",
        lambda context: writes.AddColumns((writes.NewColumn("next_id", "id", 1),)),
        ("transaction.merge-covers-every-fragment", "schema.new-ids-incremental", "fragment.files-share-rows"),
        needs=("append", "delete"),
    ),
    Step(
        "alter-columns",
        WriteKind.ALTER_COLUMNS,
        "rename next_id to following_id",
        lambda context: writes.AlterColumns((writes.Alteration("next_id", rename="following_id"),)),
        ("transaction.project-metadata-only", "schema.ids-stable"),
        needs=("add-columns",),
    ),
    Step(
        "alter-columns-cast",
        WriteKind.ALTER_COLUMNS,
        "cast score from float64 to float32",
        lambda context: writes.AlterColumns((writes.Alteration("score", data_type="float"),)),
        ("schema.type-may-change", "schema.references-by-id"),
        needs=("create",),
    ),
    Step(
        "drop-columns",
        WriteKind.DROP_COLUMNS,
        "drop following_id",
        lambda context: writes.DropColumns(("following_id",)),
        ("transaction.project-metadata-only", "fragment.columns-may-be-missing"),
        needs=("alter-columns",),
    ),
    Step(
        "create-index",
        WriteKind.CREATE_INDEX,
        "create a BTREE index id_idx on id",
        lambda context: writes.CreateIndex("id", "BTREE", name="id_idx"),
        ("transaction.create-index-only-indices", "index.fields-exist", "index.dataset-version-not-later"),
        needs=("append",),
        checks=(has_index("id_idx", "id"),),
    ),
    Step(
        "config",
        WriteKind.CONFIG,
        "set config key conformance.step = config",
        lambda context: writes.Config((("conformance.step", "config"),)),
        ("transaction.update-config-no-data", "config.library-prefixes"),
        needs=("create",),
        checks=(has_config("conformance.step", "config"),),
    ),
    Step(
        "compact",
        WriteKind.COMPACT,
        "compact into fragments of up to 1000 rows, deletions materialized",
        lambda context: writes.Compact(target_rows_per_fragment=1000),
        (
            "transaction.rewrite-keeps-content",
            "transaction.rewrite-ids-reserved",
            "transaction.reserve-fragments-raises-max",
            "deletion.materialization-allowed",
        ),
        needs=("delete", "delete-in"),
    ),
    Step(
        "tag",
        WriteKind.TAG,
        "tag the version compaction committed as after-compaction",
        lambda context: writes.Tag("after-compaction", context.version_of("compact")),
        ("refs.tag-file-location", "refs.tag-file-content", "refs.tag-target-exists"),
        needs=("compact",),
        checks=(has_tag("after-compaction", "compact"),),
    ),
    Step(
        "restore",
        WriteKind.RESTORE,
        "restore the version the append committed (its schema and rows)",
        lambda context: writes.Restore(context.version_of("append")),
        ("transaction.restore-earlier-state",),
        needs=("add-columns",),
    ),
    Step(
        "overwrite",
        WriteKind.OVERWRITE,
        "overwrite with 3 rows of another schema (key int32, label string not null)",
        lambda context: writes.Overwrite(
            pa.table(
                {"key": pa.array([1, 2, 3], pa.int32()), "label": pa.array(["x", "y", "z"])},
                schema=pa.schema([pa.field("key", pa.int32()), pa.field("label", pa.string(), nullable=False)]),
            )
        ),
        ("transaction.overwrite-replaces-table", "schema.non-nullable-has-no-nulls"),
        needs=("create",),
        checks=(field_nullable("label", False),),
    ),
)


def step_ids() -> list[str]:
    return [step.id for step in SCRIPT]


def preparation(step: Step, steps: Mapping[str, Step]) -> list[str]:
    """The ids of the steps that build ``step``'s table, in the order they
    run: each need after the steps it needs in turn, each once. A need that
    ``steps`` does not hold is kept (preparing it fails, naming it)."""
    order: list[str] = []

    def visit(step_id: str) -> None:
        if step_id in order:
            return
        needed = steps.get(step_id)
        for need in needed.needs if needed is not None else ():
            visit(need)
        order.append(step_id)

    for need in step.needs:
        visit(need)
    return order
