"""What a driver declares about itself: the driver protocol's version, its
capabilities and the exact versions of the implementation under test.

``docs/drivers.md`` documents the protocol for implementers. A driver says
what it can do through :class:`DriverInfo` (its ``info()``); the suite
checks only what the driver declares and reports every check that needs a
capability the driver lacks as *not applicable*, naming the capability.

It names the kinds of index query a driver answers (:class:`QueryKind`;
the queries themselves are :mod:`conformance.drivers.queries`), by a scan
and through an index, each declared apart.

It also defines the two errors a driver's ``write`` raises to refuse a
write (:class:`WriteConflict`, :class:`WriteNotSupported`; the operations
themselves are :mod:`conformance.drivers.writes`).

Besides the calls it can make, a reader declares what it can represent of
Arrow's types (:attr:`DriverInfo.types`, :mod:`conformance.type_capabilities`).

This module imports only the standard library (and that standard-library
module of the suite), so it runs inside an old
release's own environment too (:mod:`conformance.drivers.release`) and can be
read by a worker written in any language through :meth:`DriverInfo.to_json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..type_capabilities import TypeCapabilities, TypeCapabilitiesError


class WriteConflict(Exception):
    """The implementation refused to commit because of a concurrent commit.

    ``retryable`` says which kind of conflict, when the implementation
    tells: True for a conflict a retry from the newer version may resolve,
    False for an incompatible one, None when it does not say. Each driver
    turns its implementation's conflict signal into this, in one place."""

    def __init__(self, message: str = "", *, retryable: bool | None = None):
        super().__init__(message)
        self.retryable = retryable


class WriteNotSupported(Exception):
    """The driver does not perform this operation (or this form of it)."""


class QueryNotSupported(Exception):
    """The driver does not answer this query (or not this way: through an
    index, or by a scan); the message says which."""


class WriteKind(str, Enum):
    """The kinds of write a driver may perform (``DriverInfo.write_operations``):
    the one vocabulary of write operations. Each kind's operation is a
    dataclass of :mod:`conformance.drivers.writes` (which needs pyarrow; this
    module does not, so that any environment can name the kinds)."""

    CREATE = "create"
    APPEND = "append"
    OVERWRITE = "overwrite"
    DELETE = "delete"
    UPDATE = "update"
    UPSERT = "upsert"
    ADD_COLUMNS = "add-columns"
    DROP_COLUMNS = "drop-columns"
    ALTER_COLUMNS = "alter-columns"
    COMPACT = "compact"
    CREATE_INDEX = "create-index"
    TAG = "tag"
    RESTORE = "restore"
    CONFIG = "config"


class QueryKind(str, Enum):
    """The kinds of index query a driver may answer
    (``DriverInfo.query_kinds``, ``DriverInfo.indexed_query_kinds``): the
    one vocabulary of index queries. Each kind's query is a dataclass of
    :mod:`conformance.drivers.queries` (which needs pyarrow; this module
    does not)."""

    #: ``column = value`` (BTREE, BITMAP).
    EQUALS = "equals"
    #: ``lower <= column < upper`` (BTREE, ZONEMAP).
    RANGE = "range"
    #: ``column IN (values...)`` (BTREE, BITMAP).
    IN = "in"
    #: ``column IS NULL`` (BTREE, BITMAP).
    IS_NULL = "is-null"
    #: A list column holds a label (LABEL_LIST).
    LABEL_CONTAINS = "label-contains"
    #: A text column holds a word (INVERTED).
    FULL_TEXT = "full-text"
    #: The ``k`` nearest vectors by L2 distance, searched exhaustively (IVF_FLAT).
    NEAREST = "nearest"


#: The driver protocol's version. It grows by one whenever a driver written
#: against the previous version would be misread (a capability changes
#: meaning, a required method or field appears); CHANGELOG.md says what
#: changed for implementers.
PROTOCOL_VERSION = 1


class Capability(str, Enum):
    """One thing a driver can do. The suite asks only for what is declared."""

    #: ``versions(uri)`` lists the versions of a dataset.
    LIST_VERSIONS = "list-versions"
    #: ``read_table(uri)`` / ``describe(uri)`` read the latest version.
    READ_LATEST = "read-latest"
    #: ``read_table`` / ``describe`` take any version, not only the latest.
    TIME_TRAVEL = "time-travel"
    #: ``describe`` gives the canonical description (``conformance.describe``).
    DESCRIBE = "describe"
    #: ``read_table(..., with_row_ids=True)`` gives the stable row ids as ``_rowid``.
    ROW_IDS = "row-ids"
    #: ``read_table`` gives the values of blob-encoded columns.
    BLOBS = "blobs"
    #: ``write(uri, op)`` commits write operations (``conformance.drivers.writes``).
    WRITE = "write"
    #: A write operation's ``read_version`` is honoured: the commit is built on that version.
    WRITE_AT_VERSION = "write-at-version"
    #: ``query(uri, query, *, use_index)`` answers index queries
    #: (``conformance.drivers.queries``) of the kinds ``query_kinds`` and
    #: ``indexed_query_kinds`` name.
    QUERY = "query"


#: The member of a driver each capability calls.
CAPABILITY_MEMBERS: dict[Capability, str] = {
    Capability.LIST_VERSIONS: "versions",
    Capability.READ_LATEST: "read_table",
    Capability.TIME_TRAVEL: "read_table",
    Capability.DESCRIBE: "describe",
    Capability.ROW_IDS: "read_table",
    Capability.BLOBS: "read_table",
    Capability.WRITE: "write",
    Capability.WRITE_AT_VERSION: "write",
    Capability.QUERY: "query",
}

#: What a driver without ``info()`` is taken to support when it has every
#: member: list versions, describe and read any version. One without some of
#: them is taken to support what its members allow (:func:`implied_capabilities`).
DEFAULT_CAPABILITIES: frozenset[Capability] = frozenset(
    {Capability.LIST_VERSIONS, Capability.READ_LATEST, Capability.TIME_TRAVEL, Capability.DESCRIBE}
)


def implied_capabilities(driver: Any) -> frozenset[Capability]:
    """The capabilities of :data:`DEFAULT_CAPABILITIES` whose member a driver
    without ``info()`` has: ``versions`` and ``describe`` are optional, as
    they are for a driver that declares itself."""
    return frozenset(
        capability for capability in DEFAULT_CAPABILITIES if hasattr(driver, CAPABILITY_MEMBERS[capability])
    )


class DriverInfoError(ValueError):
    """A driver's self-description that does not fit the protocol; the message
    says which field is wrong."""


@dataclass(frozen=True)
class DriverInfo:
    """A driver's declaration: who it is, which versions are under test and
    what it can do."""

    #: The name it was asked for: ``reference``, ``pylance``, ``pylance@0.20.0``, ``lancedb``, ...
    name: str
    #: The implementation: ``reference``, ``pylance``, ``lancedb``, ``lancedb-node``, ...
    implementation: str
    #: The exact version of the implementation's package (``14.0.2``, ``0.20.0``).
    version: str
    #: The embedded Lance (Rust core) version, when the implementation says.
    lance_version: str | None
    capabilities: frozenset[Capability]
    #: The write operations it performs (``conformance.drivers.writes.WriteKind``
    #: values); empty without :attr:`Capability.WRITE`. The one authority on
    #: them: every command reads this, never a module constant of the driver.
    write_operations: frozenset[str] = frozenset()
    #: The index query kinds (:class:`QueryKind` values) it answers by a scan,
    #: planning through no index (``query(..., use_index=False)``); empty
    #: without :attr:`Capability.QUERY`.
    query_kinds: frozenset[str] = frozenset()
    #: The index query kinds it answers through an index of the dataset when
    #: there is one (``query(..., use_index=True)``, its plan showing the
    #: index). A driver that plans nothing through indices (the reference)
    #: declares none.
    indexed_query_kinds: frozenset[str] = frozenset()
    #: Data storage (file format) versions it writes: ``"2.0"``, ``"2.1"``, ...
    data_storage_versions: tuple[str, ...] = ()
    #: Paths of the describe document it cannot report (skipped in comparisons);
    #: ``.`` for nesting, ``[]`` for every element of a list.
    unreported: frozenset[str] = frozenset()
    protocol_version: int = PROTOCOL_VERSION
    #: What it can represent of Arrow's types (a reader's unsupported types,
    #: time-zone and precision limits): the comparison of its rows honours it.
    types: TypeCapabilities = TypeCapabilities()

    def has(self, capability: Capability) -> bool:
        return capability in self.capabilities

    def missing(self, *needed: Capability) -> list[Capability]:
        """The capabilities of ``needed`` this driver lacks, in the order given."""
        return [capability for capability in needed if capability not in self.capabilities]

    def to_json(self) -> dict[str, Any]:
        """The declaration as JSON (sets sorted, so equal declarations give equal bytes)."""
        return {
            "protocol_version": self.protocol_version,
            "name": self.name,
            "implementation": self.implementation,
            "version": self.version,
            "lance_version": self.lance_version,
            "capabilities": sorted(capability.value for capability in self.capabilities),
            "write_operations": sorted(self.write_operations),
            "query_kinds": sorted(self.query_kinds),
            "indexed_query_kinds": sorted(self.indexed_query_kinds),
            "data_storage_versions": list(self.data_storage_versions),
            "unreported": sorted(self.unreported),
            "types": self.types.to_json(),
        }

    @classmethod
    def from_json(cls, document: Any) -> DriverInfo:
        """The declaration a driver sent as JSON; :class:`DriverInfoError` names
        what does not fit. Unknown capabilities are refused: a driver must not
        be credited with something the suite cannot check."""
        if not isinstance(document, dict):
            raise DriverInfoError(f"driver info: expected a JSON object, got {type(document).__name__}")
        protocol_version = document.get("protocol_version", PROTOCOL_VERSION)
        if not isinstance(protocol_version, int) or isinstance(protocol_version, bool):
            raise DriverInfoError(f"driver info: protocol_version must be an integer, got {protocol_version!r}")
        if protocol_version > PROTOCOL_VERSION:
            raise DriverInfoError(
                f"driver info: protocol version {protocol_version} is newer than this suite's ({PROTOCOL_VERSION})"
            )
        for key in ("name", "implementation", "version"):
            if not isinstance(document.get(key), str) or not document[key]:
                raise DriverInfoError(f"driver info: {key!r} must be a non-empty string")
        lance_version = document.get("lance_version")
        if lance_version is not None and not isinstance(lance_version, str):
            raise DriverInfoError(f"driver info: 'lance_version' must be a string or null, got {lance_version!r}")
        names = {
            key: _strings(document, key)
            for key in ("capabilities", "write_operations", "query_kinds", "indexed_query_kinds")
        }
        known = {capability.value for capability in Capability}
        unknown = sorted(set(names["capabilities"]) - known)
        if unknown:
            raise DriverInfoError(f"driver info: unknown capabilities {unknown}; known: {sorted(known)}")
        known_kinds = {kind.value for kind in QueryKind}
        for key in ("query_kinds", "indexed_query_kinds"):
            unknown = sorted(set(names[key]) - known_kinds)
            if unknown:
                raise DriverInfoError(f"driver info: unknown {key} {unknown}; known: {sorted(known_kinds)}")
        try:
            types = TypeCapabilities.from_json(document.get("types", {}))
        except TypeCapabilitiesError as exc:
            raise DriverInfoError(f"driver info: {exc}") from None
        return cls(
            name=document["name"],
            implementation=document["implementation"],
            version=document["version"],
            lance_version=lance_version,
            capabilities=frozenset(Capability(value) for value in names["capabilities"]),
            write_operations=frozenset(names["write_operations"]),
            query_kinds=frozenset(names["query_kinds"]),
            indexed_query_kinds=frozenset(names["indexed_query_kinds"]),
            data_storage_versions=tuple(_strings(document, "data_storage_versions")),
            unreported=frozenset(_strings(document, "unreported")),
            protocol_version=protocol_version,
            types=types,
        )


def _strings(document: dict, key: str) -> list[str]:
    value = document.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise DriverInfoError(f"driver info: {key!r} must be a list of strings")
    return value


def driver_info(driver: Any, name: str) -> DriverInfo:
    """What ``driver`` declares: its ``info()`` when it has one, else a
    default for a protocol-1 driver (the capabilities its members allow,
    :func:`implied_capabilities`; its ``UNREPORTED``; implementation and
    version unknown; no type limits)."""
    info = getattr(driver, "info", None)
    if callable(info):
        declared = info()
        if not isinstance(declared, DriverInfo):
            raise DriverInfoError(f"driver {name!r}: info() returned {type(declared).__name__}, not DriverInfo")
        return declared
    return DriverInfo(
        name=name,
        implementation=name,
        version="unknown",
        lance_version=None,
        capabilities=implied_capabilities(driver),
        unreported=frozenset(getattr(driver, "UNREPORTED", frozenset())),
    )


__all__ = [
    "CAPABILITY_MEMBERS",
    "DEFAULT_CAPABILITIES",
    "PROTOCOL_VERSION",
    "Capability",
    "DriverInfo",
    "DriverInfoError",
    "QueryKind",
    "QueryNotSupported",
    "WriteKind",
    "driver_info",
    "implied_capabilities",
]
