"""Rules on the sharding specs of the MemWAL index, as the newest MemWAL page
describes them (``mem_wal.md`` read 2026-11-29, section "Sharding"; the shard
model renamed the region model's ``RegionSpec``/``RegionField`` to
``ShardingSpec``/``ShardingField`` with the same field numbers, so the
details decode as before).

A spec has a positive id (0 marks a shard made by hand, outside any spec) and
at least one field; a field's built-in transform is ``unsharded`` (no source
column), ``bucket`` (one source column, ``num_buckets`` from 1 to 1024) or
``identity`` (one source column). The page names the transforms that must not
be used (``year``, ``month``, ...); any other name is no supported transform
either.
"""

from __future__ import annotations

from ..context import VersionView
from ..facts.mem_wal_index import details_location, mem_wal_indexes
from ..facts.text import printable
from ..registry import Severity, rule

#: The built-in transforms and how many source columns each takes.
TRANSFORM_SOURCES = {"unsharded": 0, "bucket": 1, "identity": 1}
#: Transform names the page forbids by name.
FORBIDDEN_TRANSFORMS = frozenset({"year", "month", "day", "hour", "multi_bucket", "truncate"})
MAX_BUCKETS = 1024


@rule(
    "mem-wal/sharding-spec-ids-positive",
    severity=Severity.ERROR,
    requirements=("mem-wal.sharding-spec-id-positive",),
    summary="Every sharding spec has a positive spec_id and at least one field",
)
def sharding_spec_ids_positive(view: VersionView):
    for mem_wal in mem_wal_indexes(view):
        for s, spec in enumerate(mem_wal.details.region_specs):
            if spec.spec_id == 0:
                yield (
                    f"MemWAL index {mem_wal.index.name!r}: sharding spec {s} has spec_id 0, which marks a shard "
                    "created by hand, outside any spec",
                    details_location(view, mem_wal, f"region_specs[{s}].spec_id"),
                )
            if not spec.fields:
                yield (
                    f"MemWAL index {mem_wal.index.name!r}: sharding spec {spec.spec_id} has no sharding field",
                    details_location(view, mem_wal, f"region_specs[{s}].fields"),
                )


def _fields(view: VersionView):
    """(MemWAL index, spec, field, location) of every sharding field with a transform."""
    for mem_wal in mem_wal_indexes(view):
        for s, spec in enumerate(mem_wal.details.region_specs):
            for f, field in enumerate(spec.fields):
                if field.HasField("transform"):
                    yield mem_wal, spec, field, details_location(view, mem_wal, f"region_specs[{s}].fields[{f}]")


@rule(
    "mem-wal/sharding-transforms",
    severity=Severity.ERROR,
    requirements=("mem-wal.sharding-transforms-supported",),
    summary="A sharding field's transform is unsharded, bucket or identity",
)
def sharding_transforms(view: VersionView):
    for mem_wal, spec, field, where in _fields(view):
        if field.transform not in TRANSFORM_SOURCES:
            why = "one the page forbids" if field.transform in FORBIDDEN_TRANSFORMS else "not a supported transform"
            yield (
                f"MemWAL index {mem_wal.index.name!r}: sharding field {printable(field.field_id)!r} of spec "
                f"{spec.spec_id} uses transform '{printable(field.transform)}', {why} (unsharded, bucket, identity)",
                where,
            )


def _bucket_count_problem(parameters) -> str | None:
    text = parameters.get("num_buckets")
    if text is None:
        return "has no num_buckets parameter"
    try:
        count = int(text)
    except ValueError:
        return f"has num_buckets '{printable(text)}', not a whole number"
    if not 1 <= count <= MAX_BUCKETS:
        return f"has num_buckets {count}, outside 1 to {MAX_BUCKETS}"
    return None


@rule(
    "mem-wal/sharding-transform-arguments",
    severity=Severity.ERROR,
    requirements=("mem-wal.sharding-transform-arguments",),
    summary="unsharded takes no source column, bucket and identity one each, and bucket a num_buckets from 1 to 1024",
)
def sharding_transform_arguments(view: VersionView):
    for mem_wal, spec, field, where in _fields(view):
        expected = TRANSFORM_SOURCES.get(field.transform)
        if expected is None:
            continue  # mem-wal/sharding-transforms reports it
        name = (
            f"MemWAL index {mem_wal.index.name!r}: sharding field {printable(field.field_id)!r} of spec {spec.spec_id}"
        )
        if len(field.source_ids) != expected:
            yield (
                f"{name} ({field.transform}) reads {len(field.source_ids)} source column(s); the transform takes "
                f"{expected}",
                where,
            )
        if field.transform == "bucket":
            problem = _bucket_count_problem(field.parameters)
            if problem:
                yield f"{name} (bucket) {problem}", where
