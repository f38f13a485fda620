"""The write vocabulary every writing driver speaks.

A writing driver has ``write(uri, op, *, storage_options=None) -> int``: it
performs one operation of this module on the dataset at ``uri`` through its
implementation's own API and returns the version the operation committed (an
operation that commits no version, :class:`Tag`, returns the version it
tagged). Writer conformance (:mod:`conformance.writer_conformance`) drives
writers with these operations; the worker protocol carries them as JSON
(:meth:`to_json` / :func:`op_from_json`), rows travelling as an Arrow IPC file
whose path the document names.

Each operation is a frozen dataclass naming its :class:`WriteKind`. Every one
has ``read_version``: None builds the commit on the latest version; a number
asks for a commit built on that version (a driver that honours it declares
``Capability.WRITE_AT_VERSION``), which a concurrent history may make conflict.
A driver raises :class:`WriteConflict` when its implementation reports a commit
conflict, and :class:`WriteNotSupported` for an operation it does not perform.

Values are deliberately small: literals (None, bool, int, float, str),
predicates that compare one top-level column with literals (:class:`Compare`,
:class:`IsIn`), Arrow data types by their pyarrow alias (``"int32"``,
``"string"``). Each predicate renders as SQL (:meth:`Compare.to_sql`, the
filter language of pylance and LanceDB) and as a pyarrow compute expression
(:meth:`Compare.to_arrow`, what the reference implementation takes); the two
mean the same, SQL's null semantics included (a comparison with a null selects
nothing).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Union, cast

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

from .protocol import WriteConflict, WriteKind, WriteNotSupported
from .write_predicates import (
    Compare,
    Comparison,
    IsIn,
    Literal,
    Predicate,
    SqlDialect,
    WriteOpError,
    arrow_type,
    check_column,
    check_literal,
    predicate_from_json,
    sql_identifier,
    sql_literal,
)
from .write_results import TOKEN_PROPERTY, WriteOutcome, WriteResult, write_result

# -- operation parts ------------------------------------------------------------------


@dataclass(frozen=True)
class NewColumn:
    """A column added to every row: a copy of ``source`` (a top-level column),
    plus ``offset`` when it is not zero (numeric sources only). SQL
    ``source + offset``; Arrow ``pc.add(source, offset)``."""

    name: str
    source: str
    offset: int | float = 0

    def __post_init__(self) -> None:
        check_column(self.name, "new column")
        check_column(self.source, f"new column {self.name}")
        if isinstance(self.offset, bool) or not isinstance(self.offset, (int, float)):
            raise WriteOpError(f"new column {self.name}: offset must be a number, not {self.offset!r}")

    def to_sql(self, dialect: SqlDialect = SqlDialect.STANDARD) -> str:
        if self.offset == 0:
            return sql_identifier(self.source, dialect)
        return f"{sql_identifier(self.source, dialect)} + {sql_literal(self.offset)}"

    def to_arrow(self) -> pc.Expression:
        if self.offset == 0:
            return pc.field(self.source)
        return pc.add(pc.field(self.source), pc.scalar(self.offset))


@dataclass(frozen=True)
class Alteration:
    """One column alteration: rename, change nullability, cast to a type
    (a pyarrow alias); at least one of them. ``path`` may be dotted."""

    path: str
    rename: str | None = None
    nullable: bool | None = None
    data_type: str | None = None

    def __post_init__(self) -> None:
        check_column(self.path, "alteration")
        if self.rename is None and self.nullable is None and self.data_type is None:
            raise WriteOpError(f"alteration of {self.path} changes nothing")
        if self.data_type is not None:
            arrow_type(self.data_type)

    def arrow_data_type(self) -> pa.DataType | None:
        return None if self.data_type is None else arrow_type(self.data_type)

    def as_change(self, *, rename_key: str = "name") -> dict[str, object]:
        """The alteration as the dict an ``alter_columns`` call takes: the
        reference's and pylance's name a rename ``name``, LanceDB's
        ``rename`` (``rename_key``)."""
        change: dict[str, object] = {"path": self.path}
        if self.rename is not None:
            change[rename_key] = self.rename
        if self.nullable is not None:
            change["nullable"] = self.nullable
        if self.data_type is not None:
            change["data_type"] = self.arrow_data_type()
        return change


# -- operations -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Operation:
    """What every operation has: its kind, the version it is built on
    (``read_version``), the ``token`` naming it, and its JSON document.

    ``token``, when set, names this operation among every write to the
    dataset: a driver whose implementation lets a write record transaction
    properties puts it there under :data:`TOKEN_PROPERTY`, so that whoever
    reads the dataset afterwards (the concurrency harness) finds the versions
    this operation committed from the transaction files themselves, not from
    the implementation's word. A driver that cannot record it ignores it.
    Both are keyword-only, after each operation's own fields."""

    kind: ClassVar[WriteKind]
    read_version: int | None = field(default=None, kw_only=True)
    token: str | None = field(default=None, kw_only=True)

    def to_json(self, *, rows_dir: str | os.PathLike | None = None) -> dict[str, Any]:
        """The JSON document (:func:`op_to_json`)."""
        return op_to_json(self, rows_dir=rows_dir)  # type: ignore[arg-type]

    @classmethod
    def from_json(cls, document: object) -> WriteOp:
        """The operation ``document`` describes, which must be of this class."""
        op = op_from_json(document)
        if not isinstance(op, cls):
            raise WriteOpError(f"the document is a {op.kind.value}, not a {cls.kind.value}")
        return op


@dataclass(frozen=True)
class Create(_Operation):
    """A new dataset holding ``rows`` (version 1). ``data_storage_version``
    (``"2.0"``, ``"2.1"``, ...) None leaves the implementation's default."""

    kind: ClassVar[WriteKind] = WriteKind.CREATE
    rows: pa.Table
    data_storage_version: str | None = None
    max_rows_per_file: int | None = None
    stable_row_ids: bool = False


@dataclass(frozen=True)
class Append(_Operation):
    """Add ``rows`` (the dataset's schema) as new fragments."""

    kind: ClassVar[WriteKind] = WriteKind.APPEND
    rows: pa.Table
    max_rows_per_file: int | None = None


@dataclass(frozen=True)
class Overwrite(_Operation):
    """Replace every row and the schema with ``rows``."""

    kind: ClassVar[WriteKind] = WriteKind.OVERWRITE
    rows: pa.Table
    max_rows_per_file: int | None = None


@dataclass(frozen=True)
class Delete(_Operation):
    """Delete the rows ``where`` selects."""

    kind: ClassVar[WriteKind] = WriteKind.DELETE
    where: Predicate


@dataclass(frozen=True)
class Update(_Operation):
    """Set columns to literals (``values``: pairs of column and value) on the
    rows ``where`` selects (every row when None)."""

    kind: ClassVar[WriteKind] = WriteKind.UPDATE
    values: tuple[tuple[str, Literal], ...]
    where: Predicate | None = None

    def __post_init__(self) -> None:
        values = self.values.items() if isinstance(self.values, Mapping) else self.values
        checked = tuple(
            (check_column(column, "update"), check_literal(value, f"update {column}")) for column, value in values
        )
        if not checked:
            raise WriteOpError("an update sets at least one column")
        object.__setattr__(self, "values", checked)


@dataclass(frozen=True)
class Upsert(_Operation):
    """Merge ``rows`` by the key columns ``on``: a row whose key matches a
    visible row replaces it (every column), the others are inserted."""

    kind: ClassVar[WriteKind] = WriteKind.UPSERT
    rows: pa.Table
    on: tuple[str, ...]

    def __post_init__(self) -> None:
        on = (self.on,) if isinstance(self.on, str) else tuple(self.on)
        if not on:
            raise WriteOpError("an upsert needs at least one key column")
        object.__setattr__(self, "on", tuple(check_column(column, "upsert") for column in on))


@dataclass(frozen=True)
class AddColumns(_Operation):
    kind: ClassVar[WriteKind] = WriteKind.ADD_COLUMNS
    columns: tuple[NewColumn, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        if not self.columns:
            raise WriteOpError("add-columns adds at least one column")


@dataclass(frozen=True)
class DropColumns(_Operation):
    kind: ClassVar[WriteKind] = WriteKind.DROP_COLUMNS
    columns: tuple[str, ...]

    def __post_init__(self) -> None:
        columns = (self.columns,) if isinstance(self.columns, str) else tuple(self.columns)
        if not columns:
            raise WriteOpError("drop-columns drops at least one column")
        object.__setattr__(self, "columns", tuple(check_column(column, "drop") for column in columns))


@dataclass(frozen=True)
class AlterColumns(_Operation):
    kind: ClassVar[WriteKind] = WriteKind.ALTER_COLUMNS
    alterations: tuple[Alteration, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "alterations", tuple(self.alterations))
        if not self.alterations:
            raise WriteOpError("alter-columns alters at least one column")


@dataclass(frozen=True)
class Compact(_Operation):
    """Rewrite small fragments into fewer, larger ones (rows unchanged);
    deleted rows are materialized when ``materialize_deletions``."""

    kind: ClassVar[WriteKind] = WriteKind.COMPACT
    target_rows_per_fragment: int = 1024 * 1024
    materialize_deletions: bool = True


@dataclass(frozen=True)
class CreateIndex(_Operation):
    """A scalar index over ``column`` (``index_type`` as pylance names it:
    ``"BTREE"``, ``"BITMAP"``, ...)."""

    kind: ClassVar[WriteKind] = WriteKind.CREATE_INDEX
    column: str
    index_type: str = "BTREE"
    name: str | None = None


@dataclass(frozen=True)
class Tag(_Operation):
    """Tag ``version`` (the latest when None) as ``name``; commits no version."""

    kind: ClassVar[WriteKind] = WriteKind.TAG
    name: str
    version: int | None = None


@dataclass(frozen=True)
class Restore(_Operation):
    """Commit a new version whose content is that of ``version``."""

    kind: ClassVar[WriteKind] = WriteKind.RESTORE
    version: int


@dataclass(frozen=True)
class Config(_Operation):
    """Set table config keys (``values``: pairs of key and value; a value of
    None removes the key)."""

    kind: ClassVar[WriteKind] = WriteKind.CONFIG
    values: tuple[tuple[str, str | None], ...]

    def __post_init__(self) -> None:
        values = self.values.items() if isinstance(self.values, Mapping) else self.values
        checked = tuple((str(key), None if value is None else str(value)) for key, value in values)
        if not checked:
            raise WriteOpError("a config write changes at least one key")
        object.__setattr__(self, "values", checked)


WriteOp = Union[
    Create,
    Append,
    Overwrite,
    Delete,
    Update,
    Upsert,
    AddColumns,
    DropColumns,
    AlterColumns,
    Compact,
    CreateIndex,
    Tag,
    Restore,
    Config,
]

#: Operation class by kind.
OPERATIONS: dict[WriteKind, type[_Operation]] = {
    cls.kind: cls
    for cls in (
        Create,
        Append,
        Overwrite,
        Delete,
        Update,
        Upsert,
        AddColumns,
        DropColumns,
        AlterColumns,
        Compact,
        CreateIndex,
        Tag,
        Restore,
        Config,
    )
}

#: Operations that commit no new version.
NON_COMMITTING: frozenset[WriteKind] = frozenset({WriteKind.TAG})


# -- JSON -----------------------------------------------------------------------------------


def write_rows(rows: pa.Table, directory: str | os.PathLike | None = None) -> str:
    """Write ``rows`` to a new Arrow IPC file in ``directory`` (the temporary
    directory by default) and return its path."""
    folder = Path(directory) if directory is not None else Path(tempfile.gettempdir())
    path = folder / f"write-rows-{uuid.uuid4().hex}.arrow"
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, rows.schema) as writer:
        writer.write_table(rows)
    return str(path)


def read_rows(path: str) -> pa.Table:
    try:
        with pa.memory_map(path) as source:
            return ipc.open_file(source).read_all()
    except (OSError, pa.ArrowInvalid) as exc:
        raise WriteOpError(f"rows file {path!r} cannot be read: {exc}") from None


#: The JSON Schema of an operation's document, in ``conformance/schemas``.
OPERATION_SCHEMA = "write-operation.schema.json"


def op_to_json(op: WriteOp, *, rows_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """The JSON document of ``op`` (:data:`OPERATION_SCHEMA`); rows go to a new
    Arrow IPC file in ``rows_dir`` (the temporary directory by default), named
    by ``rows``."""
    document: dict[str, Any] = {"kind": op.kind.value, "read_version": op.read_version}
    for name, value in vars(op).items():
        if name == "read_version" or (name == "token" and value is None):
            continue
        if isinstance(value, pa.Table):
            document[name] = write_rows(value, rows_dir)
        elif isinstance(value, (Compare, IsIn)):
            document[name] = value.to_json()
        elif name == "values":
            document[name] = [[key, item] for key, item in value]
        elif name == "columns" and isinstance(op, AddColumns):
            document[name] = [{"name": c.name, "source": c.source, "offset": c.offset} for c in value]
        elif name == "alterations":
            document[name] = [
                {key: item for key, item in vars(alteration).items() if item is not None} for alteration in value
            ]
        elif isinstance(value, tuple):
            document[name] = list(value)
        else:
            document[name] = value
    return document


def op_from_json(document: object) -> WriteOp:
    """The operation a JSON document (:func:`op_to_json`) describes; raises
    :class:`WriteOpError` when it is not well formed."""
    if not isinstance(document, Mapping):
        raise WriteOpError(f"a write operation is an object, not {type(document).__name__}")
    try:
        kind = WriteKind(document.get("kind"))
    except ValueError:
        raise WriteOpError(f"unknown write kind {document.get('kind')!r}") from None
    try:
        return cast(WriteOp, OPERATIONS[kind](**_fields(kind, document)))
    except TypeError as exc:  # a field the kind does not have, or one missing
        raise WriteOpError(f"{kind.value}: {exc}") from None


#: The JSON types of the scalar fields (bool is refused where a number is asked).
_SCALAR_FIELDS: dict[str, tuple[type, ...]] = {
    "read_version": (int, type(None)),
    "version": (int, type(None)),
    "max_rows_per_file": (int, type(None)),
    "target_rows_per_fragment": (int,),
    "stable_row_ids": (bool,),
    "materialize_deletions": (bool,),
    "data_storage_version": (str, type(None)),
    "column": (str,),
    "index_type": (str,),
    "name": (str, type(None)),
    "token": (str, type(None)),
}


def _fields(kind: WriteKind, document: Mapping[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name, value in document.items():
        if name == "kind":
            continue
        if name == "rows":
            if not isinstance(value, str):
                raise WriteOpError(f"{kind.value}: rows must be an Arrow IPC file path")
            fields[name] = read_rows(value)
        elif name == "where":
            fields[name] = None if value is None else predicate_from_json(value)
        elif name == "values":
            fields[name] = tuple(_pair(item, kind) for item in _list(value, kind, name))
        elif name == "columns" and kind is WriteKind.ADD_COLUMNS:
            fields[name] = tuple(NewColumn(**_object(item, kind, name)) for item in _list(value, kind, name))
        elif name == "alterations":
            fields[name] = tuple(Alteration(**_object(item, kind, name)) for item in _list(value, kind, name))
        elif isinstance(value, list):
            fields[name] = tuple(value)
        else:
            allowed = _SCALAR_FIELDS.get(name)
            wrong_bool = isinstance(value, bool) and bool not in (allowed or ())
            if allowed is not None and (wrong_bool or not isinstance(value, allowed)):
                raise WriteOpError(f"{kind.value}: {name} must be {' or '.join(t.__name__ for t in allowed)}")
            fields[name] = value
    return fields


def _list(value: object, kind: WriteKind, name: str) -> list:
    if not isinstance(value, list):
        raise WriteOpError(f"{kind.value}: {name} must be a list")
    return value


def _pair(item: object, kind: WriteKind) -> tuple[str, Any]:
    if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str):
        raise WriteOpError(f"{kind.value}: each value is a [name, value] pair, not {item!r}")
    return item[0], item[1]


def _object(item: object, kind: WriteKind, name: str) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise WriteOpError(f"{kind.value}: each of {name} is an object")
    return dict(item)


__all__ = [
    "NON_COMMITTING",
    "OPERATIONS",
    "OPERATION_SCHEMA",
    "AddColumns",
    "AlterColumns",
    "Alteration",
    "Append",
    "Compact",
    "Compare",
    "Comparison",
    "Config",
    "Create",
    "CreateIndex",
    "Delete",
    "DropColumns",
    "IsIn",
    "Literal",
    "NewColumn",
    "Overwrite",
    "Predicate",
    "Restore",
    "Tag",
    "Update",
    "Upsert",
    "WriteConflict",
    "WriteKind",
    "WriteNotSupported",
    "WriteOp",
    "WriteOpError",
    "WriteOutcome",
    "WriteResult",
    "TOKEN_PROPERTY",
    "write_result",
    "arrow_type",
    "read_rows",
    "SqlDialect",
    "sql_identifier",
    "sql_literal",
    "write_rows",
    "op_from_json",
    "op_to_json",
    "predicate_from_json",
]
