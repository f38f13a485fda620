"""Rules on the MemWAL index (table format: MemWAL index messages).

A MemWAL index is an index entry whose details are a ``MemWalIndexDetails``
message. It is recognised by the type URL of its details, compared without
regard to case as the index conventions require: the part after the last
``/`` must be ``lance.table.MemWalIndexDetails`` (pylance writes
``/lance.table.MemWalIndexDetails`` under the index name ``__lance_mem_wal``).
The index is found and decoded in :mod:`conformance.validator.facts.mem_wal_index`,
which the sharding rules (:mod:`.mem_wal_sharding`) share.

pylance 14 adds two fields the seeds' table.proto does not define: 11, a
string map of writer defaults (``writer_config_defaults`` in the newest
table.proto), and 12, a flag meaning "maintain every index of the table"
(in which case ``maintained_indexes`` is left empty). Both are kept as
unknown fields; the flag is honoured when checking catch-up entries.

The newest MemWAL page (read 2026-11-29) renames regions to shards
(``MergedGeneration`` to ``CompactedSsTable``, ``merged_generations`` to
``compacted_sstables``) with the same field numbers, so the rules below read
both models' details alike and cite both models' requirements.

Region snapshots (``inline_snapshots``) are the bytes of a Lance file with one
row per region and one column per ``RegionManifest`` field (table.proto). They
are read from memory with the reference reader
(:class:`reference_impl.file_format.LanceFileReader`, through
:class:`reference_impl.storage.MemoryStorage`), which decodes files of
versions 2.0 to 2.2; a snapshot in a later file version (or in an encoding
the reader lacks) is reported as not checked. pylance 14 keeps its shard manifests
under ``_mem_wal/`` (checked by :mod:`.mem_wal_shards`) and writes no inline
snapshots, so these rules only meet snapshots other writers made.

One cohesive concept, the MemWAL index, in one module (about 600 lines): its
rules share the decoded index details and region snapshots.
"""

from __future__ import annotations

import uuid as uuid_module
from collections import Counter
from dataclasses import dataclass
from dataclasses import field as dc_field
from enum import Enum

from reference_impl.errors import CorruptFileError, LanceFormatError, UnsupportedFeatureError
from reference_impl.schema import primary_key_fields
from reference_impl.storage import MemoryStorage
from reference_impl.transactions import Update, UpdateMemWalState
from reference_impl.wire import table_pb2

from ..context import VersionView
from ..facts.data_files import is_absolute
from ..facts.mem_wal_index import (
    MemWalIndex,
    details_location,
    loaded_details,
    mem_wal_entries,
    mem_wal_indexes,
    type_name,
)
from ..facts.text import listed, printable
from ..facts.transactions import version_operation
from ..registry import Finding, Severity, rule

BTREE_TYPE_NAME = "lance.table.btreeindexdetails"
LANCE_MAGIC = b"LANC"
#: Snapshots larger than this, or with more regions, are not decoded.
MAX_SNAPSHOT_BYTES = 64 << 20
MAX_SNAPSHOT_REGIONS = 1 << 20


@rule(
    "mem-wal/details-decode",
    severity=Severity.ERROR,
    # The details message is the same under both models; the snapshots it points at changed.
    requirements=("mem-wal.snapshot-layout", "mem-wal.shard-snapshot-layout"),
    summary="A MemWAL index's details decode as MemWalIndexDetails",
)
def details_decode(view: VersionView):
    for i, index in mem_wal_entries(view):
        loaded = loaded_details(view, i, index)
        if not loaded.ok:
            yield f"MemWAL index {index.name!r}: {loaded.error.problem}", view.at(f"indices[{i}].index_details")


#: The name an inline snapshot is read under.
_INLINE_NAME = "inline_snapshots.lance"


@dataclass
class _Region:
    """One row of a region snapshot; None where the column is absent or the
    value has the wrong type."""

    region_id: bytes | None
    spec_id: int | None
    current_generation: int | None
    #: (generation, path) of each flushed generation.
    flushed: list = dc_field(default_factory=list)

    @property
    def label(self) -> str:
        if self.region_id is not None and len(self.region_id) == 16:
            return str(uuid_module.UUID(bytes=self.region_id))
        return self.region_id.hex() if self.region_id is not None else "(no region_id)"


class SnapshotStatus(str, Enum):
    """What decoding a MemWAL index's ``inline_snapshots`` found."""

    OK = "ok"
    #: The reference reader refuses the bytes.
    CORRUPT = "corrupt"
    #: Too large, or a file or type this validator does not read.
    UNCHECKED = "unchecked"


@dataclass
class _Snapshots:
    """The decoded ``inline_snapshots`` of one MemWAL index."""

    status: SnapshotStatus
    message: str = ""
    regions: list[_Region] = dc_field(default_factory=list)


def _integer(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _read_snapshots(data: bytes, label: str) -> _Snapshots:
    # lazy: only a MemWAL index with inline snapshots needs the
    # reference reader and pyarrow, most of the validator's start-up.
    import pyarrow as pa

    from reference_impl.file_format.reader import LanceFileReader

    if len(data) > MAX_SNAPSHOT_BYTES:
        return _Snapshots(SnapshotStatus.UNCHECKED, f"{len(data)} bytes is more than this validator decodes")
    try:
        reader = LanceFileReader(MemoryStorage({_INLINE_NAME: data}, label), _INLINE_NAME)
        if reader.num_rows > MAX_SNAPSHOT_REGIONS:
            return _Snapshots(
                SnapshotStatus.UNCHECKED, f"{reader.num_rows} regions is more than this validator decodes"
            )
        table = reader.read()
        columns = {name: table.column(name).to_pylist() for name in set(table.column_names)}
    except UnsupportedFeatureError as exc:
        return _Snapshots(SnapshotStatus.UNCHECKED, exc.problem)
    except CorruptFileError as exc:
        return _Snapshots(SnapshotStatus.CORRUPT, exc.problem)
    except (
        LanceFormatError,
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        OverflowError,
        MemoryError,
        RecursionError,
        pa.ArrowException,
    ) as exc:
        return _Snapshots(SnapshotStatus.UNCHECKED, f"cannot be read by this validator: {exc}")
    rows = table.num_rows
    blank = [None] * rows
    regions = []
    # A shard snapshot (the newest MemWAL page) names its rows shard_id (a
    # UUID string) and shard_spec_id, and carries no generations.
    shard_ids = [_shard_uuid(value) for value in columns["shard_id"]] if "shard_id" in columns else blank
    for region_id, spec_id, current, flushed in zip(
        columns.get("region_id", shard_ids),
        columns.get("region_spec_id", columns.get("shard_spec_id", blank)),
        columns.get("current_generation", blank),
        columns.get("flushed_generations", blank),
        strict=True,  # columns of one table, and the blank has its length
    ):
        entries = []
        for entry in flushed if isinstance(flushed, list) else []:
            if isinstance(entry, dict):
                path = entry.get("path")
                entries.append((_integer(entry.get("generation")), path if isinstance(path, str) else None))
        regions.append(
            _Region(
                region_id if isinstance(region_id, bytes) else None,
                _integer(spec_id),
                _integer(current),
                entries,
            )
        )
    return _Snapshots(SnapshotStatus.OK, regions=regions)


def _shard_uuid(value) -> bytes | None:
    """The 16 bytes of a shard snapshot's ``shard_id`` UUID string; None
    when it is no UUID."""
    try:
        return uuid_module.UUID(value).bytes if isinstance(value, str) else None
    except ValueError:
        return None


def _snapshots(view: VersionView, mem_wal: MemWalIndex) -> _Snapshots | None:
    """The index's region snapshots, decoded once per run; None without any."""
    if not mem_wal.details.HasField("inline_snapshots"):
        return None
    data = bytes(mem_wal.details.inline_snapshots)
    if len(data) < 8 or not data.endswith(LANCE_MAGIC):
        return None  # mem-wal/inline-snapshot reports it
    label = f"{view.manifest_path}#MemWAL index {mem_wal.index.name!r} inline_snapshots"
    key = ("mem-wal:snapshots", view.version, view.manifest_path, mem_wal.position)
    # memo, not cached: _read_snapshots reports problems in its result.
    return view.dataset.memo(key, _read_snapshots, data, label)


def _regions(view: VersionView):
    """(MemWAL index, its decoded regions) for every readable snapshot."""
    for mem_wal in mem_wal_indexes(view):
        snapshots = _snapshots(view, mem_wal)
        if snapshots is not None and snapshots.status is SnapshotStatus.OK:
            yield mem_wal, snapshots.regions


# Not mem-wal.inline-snapshots-when-few: embedding snapshots is a permission,
# which no finding of this rule reports (tests/conformance/validator/test_history_rules.py
# checks that well-formed inline snapshots pass).
INLINE_REQUIREMENTS = ("mem-wal.snapshot-layout", "mem-wal.shard-snapshot-layout")


@rule(
    "mem-wal/inline-snapshot",
    severity=Severity.ERROR,
    requirements=INLINE_REQUIREMENTS,
    summary="Inline region snapshots are Lance file bytes: they end with the LANC magic and the file decodes "
    "(snapshots this validator cannot read: info)",
)
def inline_snapshot(view: VersionView):
    for mem_wal in mem_wal_indexes(view):
        if not mem_wal.details.HasField("inline_snapshots"):
            continue
        snapshots = _snapshots(view, mem_wal)
        if snapshots is None:  # the field is set (above): too short, or no magic at the end
            data = mem_wal.details.inline_snapshots
            yield (
                f"MemWAL index {mem_wal.index.name!r}: the {len(data)} bytes of inline_snapshots do not end "
                f"with {LANCE_MAGIC!r}, so they are no Lance file",
                details_location(view, mem_wal, "inline_snapshots"),
            )
            continue
        if snapshots.status is SnapshotStatus.CORRUPT:
            yield (
                f"MemWAL index {mem_wal.index.name!r}: inline_snapshots is no valid Lance file: {snapshots.message}",
                details_location(view, mem_wal, "inline_snapshots"),
            )
        elif snapshots.status is SnapshotStatus.UNCHECKED:
            yield Finding(
                "mem-wal/inline-snapshot",
                Severity.INFO,
                INLINE_REQUIREMENTS,
                f"MemWAL index {mem_wal.index.name!r}: the region snapshots were not checked: {snapshots.message}",
                view.version,
                details_location(view, mem_wal, "inline_snapshots"),
            )


@rule(
    "mem-wal/flushed-below-current-generation",
    severity=Severity.ERROR,
    requirements=("mem-wal.flushed-below-current-generation",),
    summary="In a region snapshot every flushed generation is below the region's current_generation",
)
def flushed_below_current_generation(view: VersionView):
    for mem_wal, regions in _regions(view):
        for region in regions:
            if region.current_generation is None:
                continue
            late = sorted({g for g, _ in region.flushed if g is not None and g >= region.current_generation})
            if late:
                yield (
                    f"MemWAL index {mem_wal.index.name!r}: region {region.label} has current_generation "
                    f"{region.current_generation} (the next to create) but lists flushed generation(s) "
                    f"{listed(map(repr, late))}",
                    details_location(view, mem_wal, "inline_snapshots"),
                )


def _path_problem(path: str | None) -> str | None:
    if path is None:
        return None  # no path column, or not a string: nothing to judge
    if not path:
        return "is empty"
    if "\x00" in path:
        return "contains a NUL byte"
    if is_absolute(path):
        return "is absolute"
    if ".." in path.replace("\\", "/").split("/"):
        return "leaves the region directory through '..'"
    return None


@rule(
    "mem-wal/flushed-generation-path-relative",
    severity=Severity.ERROR,
    requirements=("mem-wal.flushed-generation-path-relative",),
    summary="A flushed generation's path is a directory name relative to its region's directory",
)
def flushed_generation_path_relative(view: VersionView):
    for mem_wal, regions in _regions(view):
        for region in regions:
            for generation, path in region.flushed:
                problem = _path_problem(path)
                if problem:
                    yield (
                        f"MemWAL index {mem_wal.index.name!r}: region {region.label}: the path "
                        f"'{printable(path)}' of flushed generation {generation} {problem}; it must name a directory "
                        "relative to the region's directory",
                        details_location(view, mem_wal, "inline_snapshots"),
                    )


@rule(
    "mem-wal/region-spec-id-immutable",
    severity=Severity.ERROR,
    requirements=("mem-wal.region-spec-id-immutable", "mem-wal.shard-spec-id-immutable"),
    summary="A region (a shard) keeps the spec id it was created with from one version's snapshot to the next",
)
def region_spec_id_immutable(view: VersionView):
    current = list(_regions(view))
    previous_view = view.dataset.version_view(view.version - 1) if current and view.version > 0 else None
    if previous_view is None:
        return
    before: dict[tuple[str, bytes], int] = {}
    for mem_wal, regions in _regions(previous_view):
        for region in regions:
            if region.region_id is not None and region.spec_id is not None:
                before.setdefault((mem_wal.index.name, region.region_id), region.spec_id)
    for mem_wal, regions in current:
        changed = [
            f"{region.label}: {before[(mem_wal.index.name, region.region_id)]} -> {region.spec_id}"
            for region in regions
            if region.region_id is not None
            and region.spec_id is not None
            and before.get((mem_wal.index.name, region.region_id), region.spec_id) != region.spec_id
        ]
        if changed:
            yield (
                f"MemWAL index {mem_wal.index.name!r}: region spec ids changed since version {previous_view.version} "
                f"({listed(changed, sep='; ')}); a region keeps the "
                "spec it was created with",
                details_location(view, mem_wal, "inline_snapshots"),
            )


@rule(
    "mem-wal/spec-ids-unique",
    severity=Severity.ERROR,
    requirements=("mem-wal.spec-ids-unique",),
    summary="Region spec ids are unique within the MemWAL index",
)
def spec_ids_unique(view: VersionView):
    for mem_wal in mem_wal_indexes(view):
        counts = Counter(spec.spec_id for spec in mem_wal.details.region_specs)
        repeated = sorted(i for i, n in counts.items() if n > 1)
        if repeated:
            yield (
                f"MemWAL index {mem_wal.index.name!r}: region spec ids {listed(repeated)} are used more than once",
                details_location(view, mem_wal, "region_specs"),
            )


@rule(
    "mem-wal/region-field-ids-unique",
    severity=Severity.ERROR,
    requirements=("mem-wal.region-field-ids-unique",),
    summary="Within a region spec, no two region fields share a field_id",
)
def region_field_ids_unique(view: VersionView):
    for mem_wal in mem_wal_indexes(view):
        for s, spec in enumerate(mem_wal.details.region_specs):
            counts = Counter(f.field_id for f in spec.fields)
            repeated = sorted(name for name, n in counts.items() if n > 1)
            if repeated:
                yield (
                    f"MemWAL index {mem_wal.index.name!r}: region spec {spec.spec_id} repeats region field ids "
                    f"{listed(map(repr, repeated))}",
                    details_location(view, mem_wal, f"region_specs[{s}].fields"),
                )


@rule(
    "mem-wal/transform-or-expression",
    severity=Severity.ERROR,
    requirements=("mem-wal.transform-or-expression",),
    summary="A region field sets transform or expression, never both",
)
def transform_or_expression(view: VersionView):
    for mem_wal in mem_wal_indexes(view):
        for s, spec in enumerate(mem_wal.details.region_specs):
            for r, field in enumerate(spec.fields):
                if field.HasField("transform") and field.HasField("expression"):
                    yield (
                        f"MemWAL index {mem_wal.index.name!r}: region field {field.field_id!r} of spec "
                        f"{spec.spec_id} sets both transform {field.transform!r} and an expression",
                        details_location(view, mem_wal, f"region_specs[{s}].fields[{r}]"),
                    )


@rule(
    "mem-wal/source-ids-exist",
    severity=Severity.ERROR,
    requirements=("mem-wal.source-ids-exist",),
    summary="Region field source_ids are ids of fields of the table schema",
)
def source_ids_exist(view: VersionView):
    known = set(view.manifest.schema.field_ids())
    for mem_wal in mem_wal_indexes(view):
        for s, spec in enumerate(mem_wal.details.region_specs):
            for r, field in enumerate(spec.fields):
                missing = sorted({i for i in field.source_ids if i not in known})
                if missing:
                    yield (
                        f"MemWAL index {mem_wal.index.name!r}: region field {field.field_id!r} of spec "
                        f"{spec.spec_id} reads field ids {listed(missing)}, which the schema does not have",
                        details_location(view, mem_wal, f"region_specs[{s}].fields[{r}].source_ids"),
                    )


def _index_names(view: VersionView) -> set[str]:
    return {index.name for index in view.manifest_file.indices or []}


@rule(
    "mem-wal/maintained-indexes-exist",
    severity=Severity.ERROR,
    requirements=("mem-wal.maintained-indexes-exist",),
    summary="Every maintained index name is the name of an index of the table",
)
def maintained_indexes_exist(view: VersionView):
    names = _index_names(view)
    for mem_wal in mem_wal_indexes(view):
        missing = [n for n in mem_wal.details.maintained_indexes if n not in names]
        if missing:
            yield (
                f"MemWAL index {mem_wal.index.name!r} maintains {listed(map(repr, missing))}, which this version has "
                "no "
                "index of that name for",
                details_location(view, mem_wal, "maintained_indexes"),
            )


@rule(
    "mem-wal/catchup-names-maintained",
    severity=Severity.ERROR,
    requirements=("mem-wal.catchup-names-maintained-index",),
    summary="Each index catch-up entry names a maintained index",
)
def catchup_names_maintained(view: VersionView):
    names = _index_names(view)
    for mem_wal in mem_wal_indexes(view):
        maintained = names if mem_wal.maintain_all else set(mem_wal.details.maintained_indexes)
        stray = [c.index_name for c in mem_wal.details.index_catchup if c.index_name not in maintained]
        if stray:
            yield (
                f"MemWAL index {mem_wal.index.name!r} tracks catch-up for {listed(map(repr, stray))}, which it does "
                "not "
                "maintain",
                details_location(view, mem_wal, "index_catchup"),
            )


@rule(
    "mem-wal/primary-key-index-listed",
    severity=Severity.WARNING,
    requirements=("mem-wal.primary-key-index-implicit",),
    summary="The primary key's btree index is not listed among the maintained indexes",
)
def primary_key_index_listed(view: VersionView):
    key = {f.id for f in primary_key_fields(view.manifest.schema)}
    if not key:
        return
    key_indexes = {
        index.name
        for index in view.manifest_file.indices or []
        if type_name(index.type_url) == BTREE_TYPE_NAME and set(index.fields) == key
    }
    for mem_wal in mem_wal_indexes(view):
        key_listed = [n for n in mem_wal.details.maintained_indexes if n in key_indexes]
        if key_listed:
            yield (
                f"MemWAL index {mem_wal.index.name!r} lists the primary key btree index "
                f"{listed(map(repr, key_listed))}, which "
                "is maintained implicitly",
                details_location(view, mem_wal, "maintained_indexes"),
            )


def _region_problem(message: table_pb2.MergedGeneration) -> str | None:
    if not message.HasField("region_id"):
        return "has no region_id"
    raw = bytes(message.region_id.uuid)
    if len(raw) != 16:
        return f"has a region_id of {len(raw)} bytes, not 16"
    parsed = uuid_module.UUID(bytes=raw)
    if parsed.version != 4 or parsed.variant != uuid_module.RFC_4122:
        return f"has region_id {parsed}, which is not a version-4 UUID"
    return None


@rule(
    "mem-wal/region-ids",
    severity=Severity.ERROR,
    requirements=("mem-wal.region-id-uuid-v4", "mem-wal.shard-id-uuid-v4", "manifest.uuid-sixteen-bytes"),
    summary="Regions named by merged generations and catch-up entries have 16-byte version-4 UUIDs",
)
def region_ids(view: VersionView):
    for mem_wal in mem_wal_indexes(view):
        entries = [(f"merged_generations[{g}]", m) for g, m in enumerate(mem_wal.details.merged_generations)]
        for c, catchup in enumerate(mem_wal.details.index_catchup):
            entries += [
                (f"index_catchup[{c}].caught_up_generations[{g}]", m)
                for g, m in enumerate(catchup.caught_up_generations)
            ]
        for detail, message in entries:
            problem = _region_problem(message)
            if problem:
                yield (
                    f"MemWAL index {mem_wal.index.name!r}: {detail} {problem}",
                    details_location(view, mem_wal, detail),
                )


def _merged(details: table_pb2.MemWalIndexDetails) -> dict[bytes, int]:
    merged: dict[bytes, int] = {}
    for m in details.merged_generations:
        key = bytes(m.region_id.uuid)
        merged[key] = max(merged.get(key, 0), m.generation)
    return merged


@rule(
    "mem-wal/merged-generations-atomic",
    severity=Severity.WARNING,
    requirements=("mem-wal.merged-generations-atomic", "mem-wal.compacted-sstables-atomic"),
    summary="Merged generations advance only in versions made by a merge-insert (Update) commit",
)
def merged_generations_atomic(view: VersionView):
    current = list(mem_wal_indexes(view))
    if not current or view.version <= 0:
        return
    previous_view = view.dataset.version_view(view.version - 1)
    if previous_view is None:
        return
    previous = list(mem_wal_indexes(previous_view))
    if not previous:
        return
    operation = version_operation(view)
    if operation is None or isinstance(operation, (Update, UpdateMemWalState)):
        return
    before = _merged(previous[0].details)
    for mem_wal in current:
        advanced = [
            (str(uuid_module.UUID(bytes=region)) if len(region) == 16 else region.hex(), before.get(region, 0), g)
            for region, g in _merged(mem_wal.details).items()
            if g > before.get(region, 0)
        ]
        if advanced:
            shown = listed([f"region {r}: {a} -> {b}" for r, a, b in advanced], sep="; ")
            yield (
                f"MemWAL index {mem_wal.index.name!r}: merged generations advanced in a version made by "
                f"{getattr(operation, 'NAME', None) or 'an unknown operation'}, not a merge-insert: {shown}",
                details_location(view, mem_wal, "merged_generations"),
            )
