"""Rules on the MemWAL index (table format: MemWAL index messages).

A MemWAL index is an index entry whose details are a ``MemWalIndexDetails``
message. It is recognised by the type URL of its details, compared without
regard to case as the index conventions require: the part after the last
``/`` must be ``lance.table.MemWalIndexDetails`` (pylance writes
``/lance.table.MemWalIndexDetails`` under the index name ``__lance_mem_wal``).

pylance 14 adds two fields the seed does not define: 11, a string map of
writer defaults, and 12, a flag meaning "maintain every index of the table"
(in which case ``maintained_indexes`` is left empty). Both are kept as
unknown fields; the flag is honoured when checking catch-up entries.
"""

from __future__ import annotations

import uuid as uuid_module
from collections import Counter
from dataclasses import dataclass

from google.protobuf.unknown_fields import UnknownFieldSet

from reference_impl.errors import CorruptFileError
from reference_impl.indices import IndexMetadata
from reference_impl.logical_types import primary_key_fields
from reference_impl.transactions import Update, UpdateMemWalState, read_transaction_file
from reference_impl.wire import table_pb2

from ..context import VersionView
from ..registry import Severity, rule

MEM_WAL_TYPE_NAME = "lance.table.memwalindexdetails"
BTREE_TYPE_NAME = "lance.table.btreeindexdetails"
#: pylance 14's "maintain all indexes" flag (not in seed 000).
PYLANCE_MAINTAIN_ALL_FIELD = 12
LANCE_MAGIC = b"LANC"
_SHOWN = 5


def _type_name(type_url: str | None) -> str:
    return (type_url or "").rsplit("/", 1)[-1].lower()


@dataclass
class _MemWal:
    position: int
    index: IndexMetadata
    details: table_pb2.MemWalIndexDetails
    maintain_all: bool


def _decode(index: IndexMetadata) -> tuple[table_pb2.MemWalIndexDetails, bool]:
    message = table_pb2.MemWalIndexDetails()
    try:
        message.ParseFromString(index.details)
        maintain_all = any(
            u.field_number == PYLANCE_MAINTAIN_ALL_FIELD and u.wire_type == 0 and u.data != 0
            for u in UnknownFieldSet(message)
        )
    except Exception as exc:  # noqa: BLE001 - protobuf raises several types on hostile bytes
        raise CorruptFileError(f"index {index.name!r}", f"details do not decode as MemWalIndexDetails: {exc}") from None
    return message, maintain_all


def _entries(view: VersionView) -> list[tuple[int, IndexMetadata]]:
    return [
        (i, index)
        for i, index in enumerate(view.manifest_file.indices or [])
        if _type_name(index.type_url) == MEM_WAL_TYPE_NAME
    ]


def _mem_wals(view: VersionView):
    """Every MemWAL index of the version whose details decode."""
    for i, index in _entries(view):
        loaded = view.dataset.cached(("mem-wal", view.version, view.manifest_path, i), lambda: _decode(index))
        if loaded.ok:
            yield _MemWal(i, index, *loaded.value)


def _where(view: VersionView, mem_wal: _MemWal, detail: str = "") -> str:
    return view.at(f"indices[{mem_wal.position}].index_details" + (f".{detail}" if detail else ""))


def _short(items) -> str:
    items = list(items)
    return ", ".join(repr(x) for x in items[:_SHOWN]) + (" ..." if len(items) > _SHOWN else "")


@rule(
    "mem-wal/details-decode",
    severity=Severity.ERROR,
    requirements=("mem-wal.snapshot-layout",),
    summary="A MemWAL index's details decode as MemWalIndexDetails",
)
def details_decode(view: VersionView):
    for i, index in _entries(view):
        loaded = view.dataset.cached(("mem-wal", view.version, view.manifest_path, i), lambda: _decode(index))
        if not loaded.ok:
            yield f"MemWAL index {index.name!r}: {loaded.error.problem}", view.at(f"indices[{i}].index_details")


@rule(
    "mem-wal/inline-snapshot",
    severity=Severity.ERROR,
    requirements=("mem-wal.snapshot-layout", "mem-wal.inline-snapshots-when-few"),
    summary="Inline region snapshots are Lance file bytes (they end with the LANC magic)",
)
def inline_snapshot(view: VersionView):
    for mem_wal in _mem_wals(view):
        if not mem_wal.details.HasField("inline_snapshots"):
            continue
        data = mem_wal.details.inline_snapshots
        if len(data) < 8 or not data.endswith(LANCE_MAGIC):
            yield (
                f"MemWAL index {mem_wal.index.name!r}: the {len(data)} bytes of inline_snapshots do not end "
                f"with {LANCE_MAGIC!r}, so they are no Lance file",
                _where(view, mem_wal, "inline_snapshots"),
            )


@rule(
    "mem-wal/spec-ids-unique",
    severity=Severity.ERROR,
    requirements=("mem-wal.spec-ids-unique",),
    summary="Region spec ids are unique within the MemWAL index",
)
def spec_ids_unique(view: VersionView):
    for mem_wal in _mem_wals(view):
        counts = Counter(spec.spec_id for spec in mem_wal.details.region_specs)
        repeated = sorted(i for i, n in counts.items() if n > 1)
        if repeated:
            yield (
                f"MemWAL index {mem_wal.index.name!r}: region spec ids {repeated[:_SHOWN]} are used more than once",
                _where(view, mem_wal, "region_specs"),
            )


@rule(
    "mem-wal/region-field-ids-unique",
    severity=Severity.ERROR,
    requirements=("mem-wal.region-field-ids-unique",),
    summary="Within a region spec, no two region fields share a field_id",
)
def region_field_ids_unique(view: VersionView):
    for mem_wal in _mem_wals(view):
        for s, spec in enumerate(mem_wal.details.region_specs):
            counts = Counter(f.field_id for f in spec.fields)
            repeated = sorted(name for name, n in counts.items() if n > 1)
            if repeated:
                yield (
                    f"MemWAL index {mem_wal.index.name!r}: region spec {spec.spec_id} repeats region field ids "
                    f"{_short(repeated)}",
                    _where(view, mem_wal, f"region_specs[{s}].fields"),
                )


@rule(
    "mem-wal/transform-or-expression",
    severity=Severity.ERROR,
    requirements=("mem-wal.transform-or-expression",),
    summary="A region field sets transform or expression, never both",
)
def transform_or_expression(view: VersionView):
    for mem_wal in _mem_wals(view):
        for s, spec in enumerate(mem_wal.details.region_specs):
            for r, field in enumerate(spec.fields):
                if field.HasField("transform") and field.HasField("expression"):
                    yield (
                        f"MemWAL index {mem_wal.index.name!r}: region field {field.field_id!r} of spec "
                        f"{spec.spec_id} sets both transform {field.transform!r} and an expression",
                        _where(view, mem_wal, f"region_specs[{s}].fields[{r}]"),
                    )


@rule(
    "mem-wal/source-ids-exist",
    severity=Severity.ERROR,
    requirements=("mem-wal.source-ids-exist",),
    summary="Region field source_ids are ids of fields of the table schema",
)
def source_ids_exist(view: VersionView):
    known = set(view.manifest.schema.field_ids())
    for mem_wal in _mem_wals(view):
        for s, spec in enumerate(mem_wal.details.region_specs):
            for r, field in enumerate(spec.fields):
                missing = sorted({i for i in field.source_ids if i not in known})
                if missing:
                    yield (
                        f"MemWAL index {mem_wal.index.name!r}: region field {field.field_id!r} of spec "
                        f"{spec.spec_id} reads field ids {missing[:_SHOWN]}, which the schema does not have",
                        _where(view, mem_wal, f"region_specs[{s}].fields[{r}].source_ids"),
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
    for mem_wal in _mem_wals(view):
        missing = [n for n in mem_wal.details.maintained_indexes if n not in names]
        if missing:
            yield (
                f"MemWAL index {mem_wal.index.name!r} maintains {_short(missing)}, which this version has no "
                "index of that name for",
                _where(view, mem_wal, "maintained_indexes"),
            )


@rule(
    "mem-wal/catchup-names-maintained",
    severity=Severity.ERROR,
    requirements=("mem-wal.catchup-names-maintained-index",),
    summary="Each index catch-up entry names a maintained index",
)
def catchup_names_maintained(view: VersionView):
    names = _index_names(view)
    for mem_wal in _mem_wals(view):
        maintained = names if mem_wal.maintain_all else set(mem_wal.details.maintained_indexes)
        stray = [c.index_name for c in mem_wal.details.index_catchup if c.index_name not in maintained]
        if stray:
            yield (
                f"MemWAL index {mem_wal.index.name!r} tracks catch-up for {_short(stray)}, which it does not "
                "maintain",
                _where(view, mem_wal, "index_catchup"),
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
        if _type_name(index.type_url) == BTREE_TYPE_NAME and set(index.fields) == key
    }
    for mem_wal in _mem_wals(view):
        listed = [n for n in mem_wal.details.maintained_indexes if n in key_indexes]
        if listed:
            yield (
                f"MemWAL index {mem_wal.index.name!r} lists the primary key btree index {_short(listed)}, which "
                "is maintained implicitly",
                _where(view, mem_wal, "maintained_indexes"),
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
    requirements=("mem-wal.region-id-uuid-v4", "manifest.uuid-sixteen-bytes"),
    summary="Regions named by merged generations and catch-up entries have 16-byte version-4 UUIDs",
)
def region_ids(view: VersionView):
    for mem_wal in _mem_wals(view):
        entries = [(f"merged_generations[{g}]", m) for g, m in enumerate(mem_wal.details.merged_generations)]
        for c, catchup in enumerate(mem_wal.details.index_catchup):
            entries += [
                (f"index_catchup[{c}].caught_up_generations[{g}]", m)
                for g, m in enumerate(catchup.caught_up_generations)
            ]
        for detail, message in entries:
            problem = _region_problem(message)
            if problem:
                yield f"MemWAL index {mem_wal.index.name!r}: {detail} {problem}", _where(view, mem_wal, detail)


def _merged(details: table_pb2.MemWalIndexDetails) -> dict[bytes, int]:
    merged: dict[bytes, int] = {}
    for m in details.merged_generations:
        key = bytes(m.region_id.uuid)
        merged[key] = max(merged.get(key, 0), m.generation)
    return merged


def _operation(view: VersionView):
    embedded = view.manifest_file.transaction
    if embedded is not None:
        return embedded.operation
    name = view.manifest.transaction_file
    if not name:
        return None
    loaded = view.dataset.cached(("txn", name), lambda: read_transaction_file(view.dataset.storage, name))
    return loaded.value.operation if loaded.ok else None


@rule(
    "mem-wal/merged-generations-atomic",
    severity=Severity.WARNING,
    requirements=("mem-wal.merged-generations-atomic",),
    summary="Merged generations advance only in versions made by a merge-insert (Update) commit",
)
def merged_generations_atomic(view: VersionView):
    current = list(_mem_wals(view))
    if not current or view.version <= 0:
        return
    previous_view = view.dataset.version_view(view.version - 1)
    if previous_view is None:
        return
    previous = list(_mem_wals(previous_view))
    if not previous:
        return
    operation = _operation(view)
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
            shown = "; ".join(f"region {r}: {a} -> {b}" for r, a, b in advanced[:_SHOWN])
            yield (
                f"MemWAL index {mem_wal.index.name!r}: merged generations advanced in a version made by "
                f"{getattr(operation, 'NAME', None) or 'an unknown operation'}, not a merge-insert: {shown}",
                _where(view, mem_wal, "merged_generations"),
            )
