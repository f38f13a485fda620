"""The RTREE reader against pylance 14's own index files.

Every segment pylance writes through create, append + optimize_indices
(delta and merged segments), delete, update and compaction is read; the
reference's traversal of it (rtree.md, "Query Traversal") must give the
candidates pylance answers an intersection query with, its null rows the
rows pylance answers IS NULL with, and the boxes it computes for each
native GeoArrow encoding the boxes pylance stored.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from conformance.mutations.bases import build_rtree, rtree_rows
from reference_impl.dataset import Dataset
from reference_impl.indices.files import IndexFileContents, IndexFormatError
from reference_impl.indices.row_addr_map import encode_row_addr_map
from reference_impl.indices.rtree import (
    Quantisation,
    UnsupportedGeometry,
    geometry_boxes,
    hilbert_values,
    intersecting,
    leaf_hilbert_values,
    page_offsets,
    read_rtree,
    rtree_of,
    tree_levels,
)
from reference_impl.indices.types import IndexType, compatibility
from reference_impl.scan import fragment_table

lance = pytest.importorskip("lance")

QUERY_BOXES = [(-20.0, -10.0, 15.0, 25.0), (0.0, 0.0, 1.0, 1.0), (-60.0, -60.0, 60.0, 60.0), (30.0, -40.0, 70.0, 0.0)]


def _rtree(page_size: int):
    return lance.indices.IndexConfig(index_type="rtree", parameters={"page_size": page_size})


def _polygon(box) -> str:
    xmin, ymin, xmax, ymax = box
    return f"POLYGON(({xmin} {ymin}, {xmax} {ymin}, {xmax} {ymax}, {xmin} {ymax}, {xmin} {ymin}))"


def _maintained(path, stable_row_ids: bool):
    """Each step its own version: yields the dataset after each."""
    dataset = lance.write_dataset(rtree_rows(0, 300), path, max_rows_per_file=150, enable_stable_row_ids=stable_row_ids)
    dataset.delete("id % 13 = 1")
    dataset.create_scalar_index("geom", _rtree(8), name="geom_idx")
    yield dataset
    dataset = lance.write_dataset(rtree_rows(300, 100), path, mode="append")
    dataset.optimize.optimize_indices(num_indices_to_merge=0)
    yield dataset
    dataset.delete("id >= 20 AND id < 40")
    yield dataset
    dataset.update({"id": "id + 10000"}, where="id >= 100 AND id < 110")
    yield dataset
    dataset = lance.write_dataset(rtree_rows(400, 60), path, mode="append")
    dataset.optimize.optimize_indices()
    yield dataset
    dataset.optimize.compact_files(target_rows_per_fragment=1000)
    yield dataset


def _candidates(reference: Dataset, box) -> set[int]:
    """What the reference's traversal of every usable RTREE segment yields
    for ``box``, limited to rows the version has (readers drop the others)."""
    found: set[int] = set()
    for index in reference.indices:
        if compatibility(index).index_type is IndexType.RTREE:
            found |= set(intersecting(read_rtree(reference, index), box).tolist())
    return found


def _covered(reference: Dataset) -> set[int]:
    return {f for index in reference.indices for f in index.fragment_ids() or []}


@pytest.mark.parametrize("stable_row_ids", [False, True], ids=["addresses", "stable-row-ids"])
def test_the_reference_traverses_pylance_segments_as_pylance_answers(tmp_path, stable_row_ids):
    """For rows of indexed fragments, the reference's candidates for a box
    are exactly the rows pylance answers ST_Intersects with (the geometries
    are points: a point's box intersects as the point does), and the
    recorded null rows are pylance's IS NULL rows."""
    path = tmp_path / "ds"
    key = "_rowid" if stable_row_ids else "_rowaddr"
    versions = 0
    for dataset in _maintained(path, stable_row_ids):
        versions += 1
        reference = Dataset.open(path)
        covered = _covered(reference)
        table = dataset.to_table(columns=["id"], with_row_id=True, with_row_address=True)
        live = dict(zip(table.column(key).to_pylist(), table.column("_rowaddr").to_pylist(), strict=True))
        for box in QUERY_BOXES:
            where = f"st_intersects(geom, st_geomfromtext('{_polygon(box)}'))"
            answered = _indexed_keys(
                dataset.to_table(columns=["id"], filter=where, with_row_id=True, with_row_address=True), key, covered
            )
            mine = {row for row in _candidates(reference, box) if row in live and live[row] >> 32 in covered}
            assert mine == answered, (versions, box)
        nulls = _indexed_keys(
            dataset.to_table(columns=["id"], filter="geom IS NULL", with_row_id=True, with_row_address=True),
            key,
            covered,
        )
        recorded = {
            int(row)
            for index in reference.indices
            if compatibility(index).index_type is IndexType.RTREE
            for row in read_rtree(reference, index).null_rows
        }
        assert {row for row in recorded if row in live and live[row] >> 32 in covered} == nulls
    assert versions == 6


def _indexed_keys(table: pa.Table, key: str, covered: set[int]) -> set[int]:
    """The keys of the rows of ``table`` in indexed fragments."""
    pairs = zip(table.column(key).to_pylist(), table.column("_rowaddr").to_pylist(), strict=True)
    return {row for row, address in pairs if address >> 32 in covered}


def test_pylance_plans_the_intersection_through_the_index(tmp_path):
    dataset = lance.write_dataset(rtree_rows(0, 200), tmp_path / "ds")
    dataset.create_scalar_index("geom", _rtree(8), name="geom_idx")
    plan = dataset.scanner(filter=f"st_intersects(geom, st_geomfromtext('{_polygon(QUERY_BOXES[0])}'))").explain_plan()
    assert "ScalarIndexQuery" in plan and "geom_idx" in plan, plan


def test_page_offsets_follow_the_page():
    """272 leaf entries at 16 a page: 17 leaf pages, then 2 branch pages
    over them (17 entries do not fit one page), then the root over those 2."""
    assert tree_levels(272, 16) == [list(range(0, 272, 16)), [272, 288], [289]]
    assert page_offsets(272, 16)[-3:] == [272, 288, 289]
    assert tree_levels(16, 16) == [[0]]  # one page: the root is a leaf
    assert tree_levels(0, 16) == []
    # page size 2: 9 leaf pages, then levels of 5, 3, 2 branch pages, each
    # starting after the entries of the level below, and the root
    leaves = list(range(0, 17, 2))
    assert page_offsets(17, 2) == [*leaves, 17, 19, 21, 23, 25, 26, 28, 30, 31, 33, 34]


def test_the_segment_pylance_writes_is_a_packed_tree(tmp_path):
    dataset = lance.write_dataset(rtree_rows(0, 400), tmp_path / "ds")
    dataset.create_scalar_index("geom", _rtree(8), name="geom_idx")
    reference = Dataset.open(tmp_path / "ds")
    (index,) = reference.indices
    segment = read_rtree(reference, index)
    assert [len(level) for level in segment.levels] == [45, 6, 1]  # 355 points at 8 a page
    nulls = len(range(0, 400, 9))
    assert (segment.num_items, len(segment.null_rows)) == (400 - nulls, nulls)
    assert segment.ids[segment.num_items :].tolist() == list(range(segment.num_pages - 1))


# -- the boxes of geometries -------------------------------------------------------------

_XY = pa.struct([pa.field("x", pa.float64(), nullable=False), pa.field("y", pa.float64(), nullable=False)])
_VERTICES = pa.list_(pa.field("vertices", _XY, nullable=False))
_BOX = pa.struct([pa.field(name, pa.float64(), nullable=False) for name in ("xmin", "ymin", "xmax", "ymax")])


def _p(x, y):
    return {"x": x, "y": y}


GEOMETRIES = {
    "geoarrow.linestring": (_VERTICES, [[_p(0.0, 0.0), _p(2.0, 1.0)], None, [], [_p(-1.0, 5.0), _p(3.0, -2.0)]]),
    "geoarrow.polygon": (
        pa.list_(pa.field("rings", _VERTICES, nullable=False)),
        [
            [[_p(0.0, 0.0), _p(2.0, 1.0), _p(0.0, 3.0), _p(0.0, 0.0)]],
            None,
            [],
            [[_p(5.0, 5.0), _p(6.0, 7.0), _p(5.0, 5.0)]],
        ],
    ),
    "geoarrow.multipoint": (_VERTICES, [[_p(0.0, 0.0), _p(2.0, 1.0)], None, [], [_p(9.0, -9.0)]]),
    "geoarrow.box": (
        _BOX,
        [
            {"xmin": 0.0, "ymin": 0.0, "xmax": 1.0, "ymax": 2.0},
            None,
            {"xmin": 3.0, "ymin": 0.0, "xmax": 1.0, "ymax": 2.0},  # inverted: no box
            {"xmin": -3.0, "ymin": -4.0, "xmax": 1.0, "ymax": 2.0},
        ],
    ),
    "geoarrow.point": (_XY, [_p(1.0, 2.0), None, _p(float("nan"), float("nan")), _p(-1.5, 0.25)]),
}


@pytest.mark.parametrize("extension", sorted(GEOMETRIES))
def test_geometry_boxes_are_the_boxes_pylance_stores(tmp_path, extension):
    """Row 0 and 3 have boxes, row 1 is null, row 2 is empty (no coordinate,
    an inverted box, NaN): pylance indexes the boxes, records the null, and
    puts the empty row in neither file."""
    data_type, values = GEOMETRIES[extension]
    field = pa.field("g", data_type, metadata={b"ARROW:extension:name": extension.encode()})
    table = pa.Table.from_arrays(
        [pa.array(range(4), pa.int64()), pa.array(values, data_type)],
        schema=pa.schema([pa.field("id", pa.int64()), field]),
    )
    lance.write_dataset(table, tmp_path / "ds").create_scalar_index("g", "RTREE")
    reference = Dataset.open(tmp_path / "ds")
    segment = read_rtree(reference, reference.indices[0])
    read = fragment_table(reference, reference.fragments[0], columns=["g"]).column("g").combine_chunks()
    mine = geometry_boxes(read)
    assert mine.null.tolist() == [False, True, False, False]
    assert mine.empty.tolist() == [False, False, True, False]
    assert sorted(segment.leaf_ids.tolist()) == [0, 3]
    assert segment.null_rows.tolist() == [1]
    for entry, row in enumerate(segment.leaf_ids.tolist()):
        stored = segment.boxes.describe(entry)
        assert stored == mine.boxes.describe(row), (extension, row)


def test_serialized_geometries_are_refused():
    with pytest.raises(UnsupportedGeometry):
        geometry_boxes(pa.array([b"\x01\x01\x00\x00\x00"], pa.binary()))


# -- files that do not hold what the page says -------------------------------------------


def _contents(table: pa.Table, metadata: dict[str, bytes]) -> IndexFileContents:
    return IndexFileContents("page_data.lance", table, metadata, ())


def _pages(count: int) -> pa.Table:
    corners = {name: pa.array(np.arange(count, dtype=np.float64)) for name in ("xmin", "ymin", "xmax", "ymax")}
    return pa.table(
        {
            "bbox": pa.StructArray.from_arrays(list(corners.values()), list(corners)),
            "id": pa.array(range(count), pa.uint64()),
        }
    )


_NULLS = IndexFileContents("nulls.lance", pa.table({"nulls": pa.array([encode_row_addr_map([])], pa.binary())}), {}, ())


@pytest.mark.parametrize(
    ("table", "metadata", "problem"),
    [
        (_pages(3), {"page_size": b"8", "num_items": b"4", "num_pages": b"1"}, "num_items is 4"),
        (_pages(3), {"page_size": b"8", "num_items": b"3", "num_pages": b"2"}, "num_pages is 2"),
        (_pages(3), {"page_size": b"1", "num_items": b"3", "num_pages": b"3"}, "page_size 1"),
        (_pages(3), {"page_size": b"8", "num_items": b"-3", "num_pages": b"1"}, "not a non-negative integer"),
        (_pages(3), {"page_size": b"8", "num_items": b"3", "num_pages": b"1", "bbox": b"[1, 2]"}, "not a JSON box"),
        (_pages(3).drop_columns(["id"]), {}, "has no column 'id'"),
        (_pages(3).set_column(1, "id", pa.array([1, 2, 3], pa.int64())), {}, "not UInt64"),
        (_pages(3).set_column(0, "bbox", pa.array([1.0, 2.0, 3.0])), {}, "not struct"),
    ],
)
def test_files_that_break_the_page_are_refused(table, metadata, problem):
    with pytest.raises(IndexFormatError, match=problem):
        rtree_of(_contents(table, metadata), _NULLS, 0)


def test_a_nulls_file_of_two_values_is_refused():
    nulls = IndexFileContents("nulls.lance", pa.table({"nulls": pa.array([b"", b""], pa.binary())}), {}, ())
    with pytest.raises(IndexFormatError, match="not one value"):
        rtree_of(_contents(_pages(1), {"num_items": b"1", "num_pages": b"1"}), nulls, 0)


def test_a_segment_of_null_geometries_has_no_page(tmp_path):
    """No leaf entry: no page at all (num_pages 0, an empty page file) and a
    bbox of JSON nulls, read as the empty box; every row recorded as null."""
    table = rtree_rows(0, 9)
    geom = table.schema.field("geom")
    table = table.set_column(1, geom, pa.nulls(9, geom.type))
    lance.write_dataset(table, tmp_path / "ds").create_scalar_index("geom", "RTREE")
    reference = Dataset.open(tmp_path / "ds")
    segment = read_rtree(reference, reference.indices[0])
    assert (segment.num_items, segment.num_pages, len(segment.ids)) == (0, 0, 0)
    assert segment.global_box == (float("inf"), float("inf"), float("-inf"), float("-inf"))
    assert segment.null_rows.tolist() == list(range(9))
    assert intersecting(segment, (-1e9, -1e9, 1e9, 1e9)).tolist() == []


def test_interleaved_coordinates_give_the_same_boxes_as_separated_ones():
    """A line string of interleaved ``[x, y]`` coordinates (the second
    GeoArrow coordinate layout) and its separated twin."""
    interleaved = pa.list_(pa.field("vertices", pa.list_(pa.field("xy", pa.float64(), nullable=False), 2)))
    lines = [[[0.0, 1.0], [4.0, -2.0]], None, [], [[7.5, 7.5]]]
    separated = [None if line is None else [{"x": x, "y": y} for x, y in line] for line in lines]
    first = geometry_boxes(pa.array(lines, interleaved))
    second = geometry_boxes(pa.array(separated, _VERTICES))
    assert [first.boxes.describe(row) for row in (0, 3)] == ["[0.0, -2.0, 4.0, 1.0]", "[7.5, 7.5, 7.5, 7.5]"]
    assert [second.boxes.describe(row) for row in (0, 3)] == [first.boxes.describe(row) for row in (0, 3)]
    assert first.null.tolist() == second.null.tolist() == [False, True, False, False]
    assert first.empty.tolist() == second.empty.tolist() == [False, False, True, False]


# -- Hilbert order ---------------------------------------------------------------------------


def _page_hilbert(x: int, y: int, bits: int = 16) -> int:
    """rtree.md's pseudocode, one cell at a time, as the page writes it."""
    value, mask = 0, (1 << bits) - 1
    for bit in range(bits - 1, -1, -1):
        rx, ry = (x >> bit) & 1, (y >> bit) & 1
        value |= ((3 * rx) ^ ry) << (2 * bit)
        if ry == 0:
            if rx == 1:
                x, y = ~x & mask, ~y & mask
            x, y = y, x
    return value


def test_hilbert_values_follow_the_pages_pseudocode():
    cells = np.random.default_rng(3).integers(0, 1 << 16, (500, 2))
    cells = np.vstack([cells, [[0, 0], [0, 65535], [65535, 65535], [65535, 0], [1, 0], [0, 1]]])
    mine = hilbert_values(cells[:, 0], cells[:, 1])
    assert mine.tolist() == [_page_hilbert(int(x), int(y)) for x, y in cells]
    # the curve's four quadrants in order: (0, 0), (0, 1), (1, 1), (1, 0)
    quadrants = hilbert_values(np.array([0, 0, 1, 1]) << 15, np.array([0, 1, 1, 0]) << 15) >> np.uint64(30)
    assert quadrants.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("stable_row_ids", [False, True], ids=["addresses", "stable-row-ids"])
def test_pylance_sorts_leaves_by_the_curve_over_truncated_cells(tmp_path, stable_row_ids):
    """Every segment of a maintained dataset is in Hilbert order with the
    centres truncated to their cells (pylance 14); the rtree base is not
    when they are rounded as the page says (docs/spec-discrepancies.md)."""
    for _ in _maintained(tmp_path / "ds", stable_row_ids):
        reference = Dataset.open(tmp_path / "ds")
        for index in reference.indices:
            if compatibility(index).index_type is IndexType.RTREE:
                values = leaf_hilbert_values(read_rtree(reference, index), Quantisation.FLOOR).astype(np.int64)
                assert (np.diff(values) >= 0).all()
    build_rtree(tmp_path / "base")
    base = Dataset.open(tmp_path / "base")
    rounded = leaf_hilbert_values(read_rtree(base, base.indices[0]), Quantisation.ROUND).astype(np.int64)
    assert not (np.diff(rounded) >= 0).all()
