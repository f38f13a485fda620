"""Zone map and bloom filter segments at one version, beside the rows they
cover (the rules are rules/index_zonemap.py, whose docstring says what is
checked and why).

* :func:`zone_segments`: each segment of one of the two types that the
  reference reads, decoded once per run;
* :func:`zone_sample`: the covered rows :func:`covered_rows` read, located
  by fragment, and :func:`answered_fragments`: the fragments whose zones
  are checked (named by the bitmap, still in the version, not remapped
  through a fragment reuse index: :func:`remapped_fragments`);
* :func:`tiling_problems` and :func:`null_row_problems`: how the zones
  fail to tile their fragments, and how the recorded null rows differ from
  the null rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from reference_impl.errors import LanceFormatError
from reference_impl.index_metadata import IndexMetadata
from reference_impl.indices.bloom_filter import BLOOM_FILTER_FILE, BloomFilterIndex, bloom_filter_of
from reference_impl.indices.types import IndexType
from reference_impl.indices.zonemap import ZONEMAP_FILE, ZoneMap, zone_map_of
from reference_impl.indices.zones import Zones

from ..context import Loaded, VersionView
from .index_contents import CoveredRows, covered_rows, fragment_rewrites_of, segment_file, usable_segments
from .text import listed, plural

# -- the segments and their rows ------------------------------------------------------


@dataclass(frozen=True)
class ZoneSegment:
    """One usable segment of the type a rule checks, decoded, at one version."""

    index: IndexMetadata
    decoded: ZoneMap | BloomFilterIndex

    @property
    def zones(self) -> Zones:
        return self.decoded.zones

    @property
    def label(self) -> str:
        return f"index {self.index.name!r} segment {self.index.uuid}"


def _decoded(view: VersionView, index: IndexMetadata, name: str, decode: Callable) -> Loaded:
    contents = segment_file(view, index, name)
    if not contents.ok:
        return contents
    return view.dataset.cached(("index-decoded", name, contents.value.path), decode, contents.value)


_FILES = {IndexType.ZONEMAP: (ZONEMAP_FILE, zone_map_of), IndexType.BLOOM_FILTER: (BLOOM_FILTER_FILE, bloom_filter_of)}


def zone_segment_loads(view: VersionView, index_type: IndexType) -> Iterator[tuple[IndexMetadata, Loaded]]:
    """Each segment of ``index_type`` the reference reads (index.md, "Index
    Compatibility": a newer ``index_version`` is skipped), with its file."""
    name, decode = _FILES[index_type]
    for _, index in usable_segments(view, index_type):
        if _present(view, index, name):
            yield index, _decoded(view, index, name, decode)


def _present(view: VersionView, index: IndexMetadata, name: str) -> bool:
    """Whether the segment's file exists. A segment without it is one whose
    payload was never written (the reference's metadata-only indices) or
    went missing: the index rules (rules/indices.py) judge which, from the
    files the manifest lists."""
    try:
        location = view.reader.index_file_location(index, name)
        return location.storage.exists(location.relpath)
    except LanceFormatError:
        return False  # a base path that does not resolve: index/* rules report it


def zone_segments(view: VersionView, index_type: IndexType) -> Iterator[ZoneSegment]:
    for index, loaded in zone_segment_loads(view, index_type):
        if loaded.ok:
            yield ZoneSegment(index, loaded.value)


@dataclass(frozen=True)
class ZoneSample:
    """The covered rows of one segment at one version, located by fragment."""

    covered: CoveredRows
    #: Sampled fragment id -> (position of its first row in ``covered``, physical rows).
    fragments: dict[int, tuple[int, int]]

    def zone_rows(self, zones: Zones, zone: int) -> slice | None:
        """Where zone ``zone``'s rows are in ``covered`` (clipped to its
        fragment), or None when its fragment is not sampled."""
        located = self.fragments.get(int(zones.fragment_ids[zone]))
        if located is None:
            return None
        first, rows = located
        start = min(int(zones.starts[zone]), rows)
        return slice(first + start, first + min(int(zones.ends[zone]), rows))


def zone_sample(view: VersionView, segment: ZoneSegment) -> ZoneSample | None:
    loaded = covered_rows(view, segment.index)
    if not loaded.ok:
        return None
    covered = loaded.value
    physical = {fragment.id: fragment.physical_rows for fragment in view.manifest.fragments}
    fragments, first = {}, 0
    for fragment_id in covered.fragment_ids:
        fragments[fragment_id] = (first, physical[fragment_id])
        first += physical[fragment_id]
    return ZoneSample(covered, fragments)


def remapped_fragments(view: VersionView, segment: ZoneSegment) -> set[int]:
    """Fragments of the segment's bitmap that a compaction with deferred
    remap wrote from fragments its zones name: readers translate those
    zones' rows through the fragment reuse index's row maps
    (index/system/frag_reuse.md), which the reference does not decode, so
    their zones are not checked."""
    named = set(segment.zones.fragment_ids.tolist())
    return {
        fragment_id
        for rewrite in fragment_rewrites_of(view)
        if rewrite.sources & named
        for fragment_id in rewrite.destinations
    }


def answered_fragments(view: VersionView, segment: ZoneSegment) -> Iterator[tuple[int, int]]:
    """(fragment id, physical rows) of the fragments whose zones the segment
    answers for and the rules check: named by its bitmap, still in the
    version, and not remapped through a fragment reuse index."""
    covered = set(segment.index.fragment_ids() or []) - remapped_fragments(view, segment)
    for fragment in view.manifest.fragments:
        if fragment.id in covered:
            yield fragment.id, fragment.physical_rows


# -- zones tile their fragments, null rows ---------------------------------------------


def tiling_problems(view: VersionView, segment: ZoneSegment) -> Iterator[str]:
    zones, sample = segment.zones, zone_sample(view, segment)
    for fragment_id, rows in answered_fragments(view, segment):
        positions = zones.of_fragment(fragment_id)
        starts, ends = zones.starts[positions], zones.ends[positions]
        # An end below its start wrapped around 2**64: a hostile length.
        outside = positions[(zones.lengths[positions] == 0) | (ends > np.uint64(rows)) | (ends < starts)]
        if len(outside):
            yield f"zones of fragment {fragment_id} empty or past its {plural(rows, 'row')}: {listed(outside.tolist())}"
        overlapping = positions[1:][starts[1:] < ends[:-1]]
        if len(overlapping):
            yield f"zones of fragment {fragment_id} overlapping the zone before them: {listed(overlapping.tolist())}"
        if sample is None or fragment_id not in sample.fragments:
            continue
        first, _ = sample.fragments[fragment_id]
        depth = np.zeros(rows + 1, dtype=np.int64)
        np.add.at(depth, np.minimum(starts, rows).astype(np.int64), 1)
        np.add.at(depth, np.minimum(ends, rows).astype(np.int64), -1)
        live = ~sample.covered.deleted[first : first + rows]
        uncovered = np.flatnonzero(live & (np.cumsum(depth)[:rows] == 0))
        if len(uncovered):
            yield (
                f"rows of fragment {fragment_id} not deleted that lie in no zone: {plural(len(uncovered), 'row')} "
                f"(offsets {listed(uncovered.tolist())})"
            )


def null_row_problems(view: VersionView, segment: ZoneSegment) -> Iterator[str]:
    null_rows = segment.decoded.null_rows
    sample = zone_sample(view, segment)
    if null_rows is None or sample is None:
        return
    covered, answered = sample.covered, dict(answered_fragments(view, segment))
    for fragment_id, (first, rows) in sample.fragments.items():
        if fragment_id not in answered:
            continue
        base = np.uint64(fragment_id << 32)
        recorded = null_rows[(null_rows >= base) & (null_rows < base + np.uint64(1 << 32))] - base
        beyond = recorded[recorded >= np.uint64(rows)]
        if len(beyond):
            yield f"null rows past the end of fragment {fragment_id} recorded: offsets {listed(beyond.tolist())}"
        marked = np.zeros(rows, dtype=bool)
        marked[recorded[recorded < np.uint64(rows)].astype(np.int64)] = True
        live = ~covered.deleted[first : first + rows]
        is_null = np.asarray(covered.values.slice(first, rows).is_null())
        missing = np.flatnonzero(live & is_null & ~marked)
        if len(missing):
            yield f"null rows of fragment {fragment_id} not recorded: offsets {listed(missing.tolist())}"
        wrong = np.flatnonzero(live & ~is_null & marked)
        if len(wrong):
            yield f"rows of fragment {fragment_id} recorded as null hold values: offsets {listed(wrong.tolist())}"
