"""Rules on the contents of zone map and bloom filter index segments
(upstream format/index/scalar/zonemap.md; the bloom filter has no page:
protos/index.proto and what pylance 14 writes, reference_impl/indices/
bloom_filter.py), checked against the rows of the fragments each segment
covers (facts/index_contents.py).

Both indices cut each covered fragment into zones. Following index.md
("Basic Concepts"; "Handling deleted and invalidated rows"):

* a segment must answer for every row of a covered fragment that is not
  deleted, so every such row lies in exactly one zone; rows deleted before
  the index was built may lie outside every zone or inside one (pylance 14
  counts them in ``zone_length``, a span of offsets);
* rows deleted later are still in the statistics, so the statistics of a
  zone must hold for its rows not deleted at this version, and may say more;
* zones of fragments the version no longer has, or the segment's bitmap no
  longer names, are not answered for (readers drop their rows) and are not
  checked.

A zone map's ``min``/``max``/``null_count``/``nan_count`` that exclude a
value the zone holds are wrong answers waiting to happen (a narrowed bound,
error); bounds that are looser than the zone's values are what an inexact
filter may hold (zonemap.md: zone maps "may include false positives") and
are reported (warning) only where no row of the zone is deleted, so that
the exact statistics are known. A bloom filter must hold every value of its
zone (a filter never gives a false negative). The recorded null rows serve
IS NULL exactly (zonemap.md, "Accelerated Queries"): they must be the null
rows, no more and no fewer.

A default run checks the fragments :func:`covered_rows` samples and says
what went unchecked (``index-zonemap/sampled``, ``index-bloom-filter/sampled``);
``--deep`` checks every covered fragment.

The rule bodies are :mod:`..index_checks.zonemap`, loaded only for a version
with a ZONEMAP or BLOOMFILTER segment.
"""

from __future__ import annotations

from reference_impl.indices.types import IndexType

from ..context import VersionView
from ..index_checks import checks
from ..registry import Severity, rule

ZONEMAP_FILE_REQUIREMENTS = ("index.zonemap-file-schema",)
BLOOM_FILE_REQUIREMENTS = ("index.bloom-filter-file-schema",)


@rule(
    "index-zonemap/zones-tile",
    severity=Severity.ERROR,
    requirements=("index.zonemap-zones-tile",),
    summary="A zone map's zones lie within their fragments, do not overlap, and hold every row of a covered "
    "fragment that is not deleted",
)
def zonemap_zones_tile(view: VersionView):
    return checks(view, IndexType.ZONEMAP).zonemap_zones_tile(view)


@rule(
    "index-bloom-filter/zones-tile",
    severity=Severity.ERROR,
    requirements=("index.bloom-filter-zones-tile",),
    summary="A bloom filter index's zones lie within their fragments, do not overlap, and hold every row of a "
    "covered fragment that is not deleted",
)
def bloom_zones_tile(view: VersionView):
    return checks(view, IndexType.BLOOM_FILTER).bloom_zones_tile(view)


@rule(
    "index-zonemap/file",
    severity=Severity.ERROR,
    requirements=ZONEMAP_FILE_REQUIREMENTS,
    summary="zonemap.lance holds the columns, types and schema metadata zonemap.md gives",
)
def zonemap_file(view: VersionView):
    return checks(view, IndexType.ZONEMAP).zonemap_file(view)


@rule(
    "index-bloom-filter/file",
    severity=Severity.ERROR,
    requirements=BLOOM_FILE_REQUIREMENTS,
    summary="bloomfilter.lance holds the columns, types, filters and schema metadata pylance 14 writes",
)
def bloom_file(view: VersionView):
    return checks(view, IndexType.BLOOM_FILTER).bloom_file(view)


@rule(
    "index-zonemap/null-rows",
    severity=Severity.ERROR,
    requirements=("index.zonemap-null-rows",),
    summary="The null rows a zone map records (the null_bitmap buffer) are the null rows of its covered fragments",
)
def zonemap_null_rows(view: VersionView):
    return checks(view, IndexType.ZONEMAP).zonemap_null_rows(view)


@rule(
    "index-bloom-filter/null-rows",
    severity=Severity.ERROR,
    requirements=("index.bloom-filter-null-rows",),
    summary="The null rows a bloom filter index records (the null_bitmap buffer) are the null rows of its "
    "covered fragments",
)
def bloom_null_rows(view: VersionView):
    return checks(view, IndexType.BLOOM_FILTER).bloom_null_rows(view)


@rule(
    "index-zonemap/bounds",
    severity=Severity.ERROR,
    requirements=("index.zonemap-bounds",),
    summary="A zone's min and max bound the non-null, non-NaN values of its rows not deleted, and its null and "
    "NaN counts are at least theirs",
)
def zonemap_bounds(view: VersionView):
    return checks(view, IndexType.ZONEMAP).zonemap_bounds(view)


@rule(
    "index-zonemap/bounds-exact",
    severity=Severity.WARNING,
    requirements=("index.zonemap-bounds",),
    summary="A zone none of whose rows is deleted records its exact min, max, null and NaN counts",
)
def zonemap_bounds_exact(view: VersionView):
    return checks(view, IndexType.ZONEMAP).zonemap_bounds_exact(view)


@rule(
    "index-bloom-filter/members",
    severity=Severity.ERROR,
    requirements=("index.bloom-filter-members",),
    summary="Every non-null value of a zone's rows not deleted is in the zone's bloom filter",
)
def bloom_members(view: VersionView):
    return checks(view, IndexType.BLOOM_FILTER).bloom_members(view)


@rule(
    "index-bloom-filter/has-null",
    severity=Severity.ERROR,
    requirements=("index.bloom-filter-has-null",),
    summary="has_null is true for every zone whose rows not deleted include a null",
)
def bloom_has_null(view: VersionView):
    return checks(view, IndexType.BLOOM_FILTER).bloom_has_null(view)


@rule(
    "index-zonemap/sampled",
    severity=Severity.INFO,
    requirements=("index.zonemap-bounds",),
    summary="A default run compares a bounded sample of a zone map's covered rows with the data and says so",
)
def zonemap_sampled(view: VersionView):
    return checks(view, IndexType.ZONEMAP).zonemap_sampled(view)


@rule(
    "index-bloom-filter/sampled",
    severity=Severity.INFO,
    requirements=("index.bloom-filter-members",),
    summary="A default run compares a bounded sample of a bloom filter index's covered rows with the data and says so",
)
def bloom_sampled(view: VersionView):
    return checks(view, IndexType.BLOOM_FILTER).bloom_sampled(view)
