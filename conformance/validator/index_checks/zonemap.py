"""The bodies of the zone map and bloom filter rules (``rules/index_zonemap.py``, whose
docstring says what they check and why), loaded only for a version with a
ZONEMAP or BLOOMFILTER segment (:func:`..index_checks.checks`).

Each public function here is one rule's body by the same name: it yields
the rule's ``(message, location)`` pairs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.indices.bloom_filter import BloomFilterIndex, hashes_type, value_hashes
from reference_impl.indices.types import IndexType
from reference_impl.indices.zonemap import ZoneMap, ZoneStatistics, zone_statistics

from ..context import VersionView
from ..facts.index_contents import covered_rows
from ..facts.index_zones import (
    ZoneSegment,
    answered_fragments,
    null_row_problems,
    remapped_fragments,
    tiling_problems,
    zone_sample,
    zone_segment_loads,
    zone_segments,
)
from ..facts.text import listed, plural

# -- zones tile their fragments -------------------------------------------------------


def _tiling_rule(view: VersionView, index_type: IndexType):
    for segment in zone_segments(view, index_type):
        for problem in tiling_problems(view, segment):
            yield f"{segment.label}: {problem}", segment.decoded.path


def zonemap_zones_tile(view: VersionView):
    yield from _tiling_rule(view, IndexType.ZONEMAP)


def bloom_zones_tile(view: VersionView):
    yield from _tiling_rule(view, IndexType.BLOOM_FILTER)


# -- the files decode -------------------------------------------------------------------


def zonemap_file(view: VersionView):
    for index, loaded in zone_segment_loads(view, IndexType.ZONEMAP):
        if not loaded.ok:
            yield f"index {index.name!r} segment {index.uuid}: {loaded.error}", loaded.error.path


def bloom_file(view: VersionView):
    for index, loaded in zone_segment_loads(view, IndexType.BLOOM_FILTER):
        if not loaded.ok:
            yield f"index {index.name!r} segment {index.uuid}: {loaded.error}", loaded.error.path


# -- null rows ----------------------------------------------------------------------------


def _null_rows_rule(view: VersionView, index_type: IndexType):
    for segment in zone_segments(view, index_type):
        for problem in null_row_problems(view, segment):
            yield f"{segment.label}: {problem}", segment.decoded.path


def zonemap_null_rows(view: VersionView):
    yield from _null_rows_rule(view, IndexType.ZONEMAP)


def bloom_null_rows(view: VersionView):
    yield from _null_rows_rule(view, IndexType.BLOOM_FILTER)


# -- zone map statistics ----------------------------------------------------------------


def _total_order_keys(values: np.ndarray) -> np.ndarray:
    """Floats as integers in Arrow's total order (-NaN < -inf < ... < -0.0 <
    0.0 < ... < inf < +NaN)."""
    width = values.dtype.itemsize * 8
    bits = values.view(f"<u{values.dtype.itemsize}").astype(np.uint64)
    sign = np.uint64(1 << (width - 1))
    return np.where(bits & sign, ~bits & np.uint64((1 << width) - 1), bits | sign)


def _compare(left, right, data_type: pa.DataType) -> int:
    """-1, 0 or 1 as ``left`` sorts before, with or after ``right`` (both
    values of the column type, not None) in Arrow's total ordering."""
    if pa.types.is_floating(data_type):
        dtype = np.dtype(data_type.to_pandas_dtype())
        keys = _total_order_keys(np.array([float(left), float(right)], dtype=dtype))
        return int(keys[0] > keys[1]) - int(keys[0] < keys[1])
    first, second = pa.scalar(left, data_type), pa.scalar(right, data_type)
    return int(pc.greater(first, second).as_py()) - int(pc.less(first, second).as_py())


def _narrowed(stored_min, stored_max, actual: ZoneStatistics, data_type: pa.DataType) -> list[str]:
    """How the stored bounds exclude values the zone holds (none: they bound them)."""
    if actual.minimum is None:
        return []
    if stored_min is None or stored_max is None:
        return [f"no bounds recorded, but the zone holds values from {actual.minimum!r} to {actual.maximum!r}"]
    problems = []
    if _compare(stored_min, actual.minimum, data_type) > 0:
        problems.append(f"min {stored_min!r} is above the value {actual.minimum!r} the zone holds")
    if _compare(stored_max, actual.maximum, data_type) < 0:
        problems.append(f"max {stored_max!r} is below the value {actual.maximum!r} the zone holds")
    return problems


@dataclass(frozen=True)
class _ZoneCheck:
    zone: int
    stored_min: object
    stored_max: object
    null_count: int
    nan_count: int
    actual: ZoneStatistics
    #: Whether no row the zone spans is deleted (so its statistics are exact).
    whole: bool


def _zone_checks(view: VersionView, segment: ZoneSegment) -> list[tuple[_ZoneCheck, pa.DataType]]:
    """Each sampled zone's recorded and actual statistics, computed once per
    version for both rules."""
    return view.memo(("index-zone-checks", segment.index.uuid), lambda: list(_find_zone_checks(view, segment)))


def _find_zone_checks(view: VersionView, segment: ZoneSegment) -> Iterator[tuple[_ZoneCheck, pa.DataType]]:
    zone_map = segment.decoded
    assert isinstance(zone_map, ZoneMap)
    sample = zone_sample(view, segment)
    if sample is None:
        return
    covered, zones = sample.covered, zone_map.zones
    answered = dict(answered_fragments(view, segment))
    minimums, maximums = zone_map.minimums.to_pylist(), zone_map.maximums.to_pylist()
    for zone in range(len(zones)):
        rows = sample.zone_rows(zones, zone) if int(zones.fragment_ids[zone]) in answered else None
        if rows is None:
            continue
        deleted = covered.deleted[rows]
        values = covered.values.slice(rows.start, rows.stop - rows.start).filter(pa.array(~deleted))
        check = _ZoneCheck(
            zone,
            minimums[zone],
            maximums[zone],
            int(zone_map.null_counts[zone]),
            int(zone_map.nan_counts[zone]),
            zone_statistics(values),
            not deleted.any() and int(zones.ends[zone]) <= answered[int(zones.fragment_ids[zone])],
        )
        yield check, covered.values.type


def _type_problem(segment: ZoneSegment, view: VersionView) -> str | None:
    zone_map = segment.decoded
    assert isinstance(zone_map, ZoneMap)
    loaded = covered_rows(view, segment.index)
    if not loaded.ok or not len(loaded.value.values):
        return None
    data_type = loaded.value.values.type
    if data_type != zone_map.minimums.type:
        return f"min and max are {zone_map.minimums.type} but the indexed column is {data_type}"
    if pa.types.is_nested(data_type) or pa.types.is_dictionary(data_type) or pa.types.is_null(data_type):
        return f"the indexed column is {data_type}, whose values have no order to bound"
    return None


def zonemap_bounds(view: VersionView):
    for segment in zone_segments(view, IndexType.ZONEMAP):
        mismatch = _type_problem(segment, view)
        if mismatch:
            yield f"{segment.label}: {mismatch}", segment.decoded.path
            continue
        for check, data_type in _zone_checks(view, segment):
            problems = _narrowed(check.stored_min, check.stored_max, check.actual, data_type)
            if check.null_count < check.actual.null_count:
                problems.append(f"null_count {check.null_count} is below the {check.actual.null_count} nulls it holds")
            if check.nan_count < check.actual.nan_count:
                problems.append(f"nan_count {check.nan_count} is below the {check.actual.nan_count} NaNs it holds")
            if problems:
                yield (
                    f"{segment.label}, zone {check.zone}: {'; '.join(problems)}",
                    f"{segment.decoded.path}#zone {check.zone}",
                )


def _loose(check: _ZoneCheck, data_type: pa.DataType) -> list[str]:
    """How the stored statistics are looser than the zone's rows (a bound
    below its least value or above its greatest, a count above its count);
    narrower is index-zonemap/bounds' business."""
    actual, problems = check.actual, []
    if check.stored_min is not None and (
        actual.minimum is None or _compare(check.stored_min, actual.minimum, data_type) < 0
    ):
        problems.append(f"min {check.stored_min!r} where the zone's least value is {actual.minimum!r}")
    nan_marker = isinstance(check.stored_max, float) and check.stored_max != check.stored_max
    if nan_marker:
        # +NaN marks a zone holding NaNs; pylance 14 writes it for NaNs of
        # either sign (zonemap.md: older indices did; "holds NaNs of unknown
        # sign").
        if actual.nan_count == 0:
            problems.append("max is the NaN marker but the zone holds no NaN")
    elif actual.positive_nan:
        problems.append(f"max {check.stored_max!r}, not the +NaN marker, where the zone holds a positive NaN")
    elif check.stored_max is not None and (
        actual.maximum is None or _compare(check.stored_max, actual.maximum, data_type) > 0
    ):
        problems.append(f"max {check.stored_max!r} where the zone's greatest value is {actual.maximum!r}")
    if check.null_count > actual.null_count:
        problems.append(f"null_count {check.null_count} where the zone holds {actual.null_count}")
    if check.nan_count > actual.nan_count:
        problems.append(f"nan_count {check.nan_count} where the zone holds {actual.nan_count}")
    return problems


def zonemap_bounds_exact(view: VersionView):
    for segment in zone_segments(view, IndexType.ZONEMAP):
        if _type_problem(segment, view):
            continue
        for check, data_type in _zone_checks(view, segment):
            problems = _loose(check, data_type) if check.whole else []
            if problems:
                yield (
                    f"{segment.label}, zone {check.zone}: looser than its rows (queries stay right, prune less): "
                    f"{'; '.join(problems)}",
                    f"{segment.decoded.path}#zone {check.zone}",
                )


# -- bloom filters ------------------------------------------------------------------------

#: The two kinds of bloom filter problems, one rule each.
MEMBERS, HAS_NULL = "members", "has-null"


def _bloom_problems(view: VersionView, segment: ZoneSegment) -> list[tuple[str, int, str]]:
    """(kind, zone, detail) of each problem of the segment's sampled zones,
    computed once per version for both rules."""
    return view.memo(("index-bloom-problems", segment.index.uuid), lambda: list(_find_bloom_problems(view, segment)))


def _find_bloom_problems(view: VersionView, segment: ZoneSegment) -> Iterator[tuple[str, int, str]]:
    bloom = segment.decoded
    assert isinstance(bloom, BloomFilterIndex)
    sample = zone_sample(view, segment)
    if sample is None or not len(sample.covered.values) or not hashes_type(sample.covered.values.type):
        return
    covered, zones = sample.covered, bloom.zones
    hashes = value_hashes(covered.values)
    is_null = np.asarray(covered.values.is_null())
    answered = dict(answered_fragments(view, segment))
    for zone in range(len(zones)):
        rows = sample.zone_rows(zones, zone) if int(zones.fragment_ids[zone]) in answered else None
        if rows is None:
            continue
        live = ~covered.deleted[rows]
        members = live & ~is_null[rows]
        absent = np.flatnonzero(members & ~bloom.filters[zone].might_contain(hashes[rows]))
        if len(absent):
            offsets = (absent + int(zones.starts[zone])).tolist()
            yield MEMBERS, zone, f"the values at offsets {listed(offsets)} are not in the zone's filter"
        nulls = int((live & is_null[rows]).sum())
        if nulls and not bloom.has_null[zone]:
            yield HAS_NULL, zone, f"has_null is false but the zone holds {plural(nulls, 'null')}"


def _bloom_rule(view: VersionView, kind: str):
    for segment in zone_segments(view, IndexType.BLOOM_FILTER):
        for found, zone, detail in _bloom_problems(view, segment):
            if found == kind:
                yield f"{segment.label}, zone {zone}: {detail}", f"{segment.decoded.path}#zone {zone}"


def bloom_members(view: VersionView):
    yield from _bloom_rule(view, MEMBERS)


def bloom_has_null(view: VersionView):
    yield from _bloom_rule(view, HAS_NULL)


# -- what a default run left unchecked ------------------------------------------------------


def _sampled_rule(view: VersionView, index_type: IndexType):
    for segment in zone_segments(view, index_type):
        remapped = sorted(remapped_fragments(view, segment) & set(segment.index.fragment_ids() or []))
        if remapped:
            yield (
                f"{segment.label}: covered fragments {listed(remapped)} were written by a compaction whose remap "
                "was deferred: the segment's zones name the fragments compacted into them, whose rows readers "
                "translate through the fragment reuse index; they were not checked",
                segment.decoded.path,
            )
        loaded = covered_rows(view, segment.index)
        values = loaded.value.values if loaded.ok else None
        if index_type is IndexType.BLOOM_FILTER and values is not None and len(values) and not hashes_type(values.type):
            yield (
                f"{segment.label}: the filters were not checked: the reference does not hash values of type "
                f"{values.type}, which pylance 14 builds no bloom filter over",
                segment.decoded.path,
            )
        if loaded.ok and not loaded.value.complete:
            answered = [fragment_id for fragment_id, _ in answered_fragments(view, segment)]
            unchecked = [fragment_id for fragment_id in answered if fragment_id not in loaded.value.fragment_ids]
            yield (
                f"{segment.label}: the contents of {plural(len(unchecked), 'covered fragment')} "
                f"({listed(unchecked)}) were not compared with the data (zones checked against fragment lengths "
                "only); validate --deep checks every covered fragment",
                segment.decoded.path,
            )


def zonemap_sampled(view: VersionView):
    yield from _sampled_rule(view, IndexType.ZONEMAP)


def bloom_sampled(view: VersionView):
    yield from _sampled_rule(view, IndexType.BLOOM_FILTER)
