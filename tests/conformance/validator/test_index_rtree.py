"""The RTREE rules on datasets pylance 14 maintains through appends,
optimize_indices (delta and merged segments), deletes, updates and
compaction (with and without deferred remap): no false finding, in a
default run and a deep one. A default run says what its sample left
unchecked, and a deep run finds what lies beyond it; damaged files give
findings, never an internal error; a version without an RTREE segment
does not import the checks. (The mutations of
conformance/mutations/topics/index_rtree.py, one per rule, run in
test_mutations.py.)
"""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from conformance.mutations.bases import rtree_rows
from conformance.mutations.topics.index_rtree import overwrite_entry
from conformance.validator import Severity, validate
from conformance.validator.facts import index_contents
from reference_impl.arrow_schema import schema_from_arrow
from reference_impl.dataset import Dataset
from reference_impl.file_format.writer_v2_1 import V2_2_VERSION, write_v2_1
from reference_impl.indices.rtree import PAGE_FILE, read_rtree

lance = pytest.importorskip("lance")

TOPIC = "index-rtree/"
SERIOUS = (Severity.ERROR, Severity.WARNING)
ROOT = Path(__file__).resolve().parents[3]


def _rtree(page_size: int = 8):
    return lance.indices.IndexConfig(index_type="rtree", parameters={"page_size": page_size})


def _maintained(path, *, defer_index_remap: bool, stable_row_ids: bool = False) -> None:
    """Every maintenance step pylance offers, each its own version; the
    update moves points."""
    dataset = lance.write_dataset(rtree_rows(0, 300), path, max_rows_per_file=150, enable_stable_row_ids=stable_row_ids)
    dataset.delete("id % 13 = 1")
    dataset.create_scalar_index("geom", _rtree(), name="geom_idx")
    dataset.delete("id >= 200 AND id < 215")
    dataset.insert(rtree_rows(300, 100))
    dataset.optimize.optimize_indices(num_indices_to_merge=0)
    moved = rtree_rows(1000, 10).column("geom")
    dataset.merge_insert("id").when_matched_update_all().execute(
        pa.table({"id": pa.array(range(100, 110), pa.int64()), "geom": moved}, schema=rtree_rows(0, 1).schema)
    )
    dataset.insert(rtree_rows(400, 60))
    dataset.optimize.optimize_indices()
    dataset.delete("id >= 0 AND id < 150")
    dataset.optimize.compact_files(target_rows_per_fragment=2000, defer_index_remap=defer_index_remap)
    dataset.insert(rtree_rows(460, 40))
    dataset.optimize.optimize_indices(num_indices_to_merge=0)


def _findings(path, deep: bool):
    return validate(path, all_versions=True, deep=deep).findings


@pytest.mark.parametrize(
    ("defer_index_remap", "stable_row_ids"),
    [(False, False), (True, False), (False, True)],
    ids=str,
)
def test_datasets_pylance_maintains_draw_no_finding(tmp_path, defer_index_remap, stable_row_ids):
    _maintained(tmp_path / "ds", defer_index_remap=defer_index_remap, stable_row_ids=stable_row_ids)
    for deep in (False, True):
        findings = _findings(tmp_path / "ds", deep)
        serious = [f"{f.rule} v{f.version}: {f.message}" for f in findings if f.severity in SERIOUS]
        assert not serious, serious
        # Unchecked: nothing, but the fragments a compaction with deferred
        # remap wrote (the entries hold the addresses compacted away).
        unchecked = {f.message.split(": ", 1)[1] for f in findings if f.rule.startswith(TOPIC)}
        if defer_index_remap:
            assert unchecked and all("remap was deferred" in message for message in unchecked), unchecked
        else:
            assert not unchecked, unchecked


def _move_a_leaf_box_of_fragment(path, fragment_id: int) -> None:
    """A leaf entry of a row of ``fragment_id`` gets an xmin above its point."""
    reference = Dataset.open(path)
    (index,) = reference.indices
    segment = read_rtree(reference, index)
    entry = int(np.flatnonzero(segment.leaf_ids >> np.uint64(32) == fragment_id)[0])
    target = path / reference.index_file_location(index, PAGE_FILE).relpath
    overwrite_entry(target, "xmin", segment.boxes.xmin, entry, struct.pack("<d", float(segment.boxes.xmax[entry]) + 1))


def test_a_default_run_says_what_it_left_unchecked_and_a_deep_run_checks_it(tmp_path, monkeypatch):
    dataset = lance.write_dataset(rtree_rows(0, 450), tmp_path / "ds", max_rows_per_file=150)
    dataset.create_scalar_index("geom", _rtree(), name="geom_idx")
    _move_a_leaf_box_of_fragment(tmp_path / "ds", 2)
    monkeypatch.setattr(index_contents, "SAMPLE_ROWS", 150)

    default = [f for f in _findings(tmp_path / "ds", deep=False) if f.rule.startswith(TOPIC)]
    assert [f.rule for f in default] == ["index-rtree/sampled"], [(f.rule, f.message) for f in default]
    assert "2 covered fragments (1, 2)" in default[0].message, default[0].message

    deep = [f for f in _findings(tmp_path / "ds", deep=True) if f.rule.startswith(TOPIC)]
    assert [f.rule for f in deep] == ["index-rtree/entries-valid"], [(f.rule, f.message) for f in deep]


def test_a_serialized_geometry_column_is_reported_unchecked(tmp_path):
    points = [struct.pack("<BIdd", 1, 1, float(i), float(-i)) if i % 5 else None for i in range(40)]
    field = pa.field("g", pa.binary(), metadata={b"ARROW:extension:name": b"geoarrow.wkb"})
    table = pa.Table.from_arrays(
        [pa.array(range(40), pa.int64()), pa.array(points, pa.binary())],
        schema=pa.schema([pa.field("id", pa.int64()), field]),
    )
    lance.write_dataset(table, tmp_path / "ds").create_scalar_index("g", "RTREE")
    findings = [f for f in _findings(tmp_path / "ds", deep=True) if f.rule.startswith(TOPIC) or f.severity in SERIOUS]
    assert [f.rule for f in findings] == ["index-rtree/sampled"], findings
    assert "geoarrow.wkb" in findings[0].message


def test_damaged_index_files_give_findings_not_internal_errors(tmp_path):
    rng = np.random.default_rng(5)
    for attempt in range(4):
        path = tmp_path / f"damaged{attempt}"
        lance.write_dataset(rtree_rows(0, 200), path, max_rows_per_file=100).create_scalar_index("geom", _rtree())
        for index in Dataset.open(path).indices:
            for listed_file in index.files:
                target = path / "_indices" / index.uuid / listed_file.path
                data = bytearray(target.read_bytes())
                for position in rng.integers(0, len(data), 16):
                    data[int(position)] = int(rng.integers(0, 256))
                target.write_bytes(bytes(data))
        internal = [f.message for f in _findings(path, deep=True) if f.rule == "validator.internal-error"]
        assert not internal, internal


_PROBE = """
import sys
from conformance.validator import validate
validate(sys.argv[1], all_versions=True)
print("conformance.validator.index_checks.rtree" in sys.modules)
"""


@pytest.mark.parametrize("with_rtree", [False, True])
def test_the_checks_are_imported_only_for_a_version_with_an_rtree_segment(tmp_path, with_rtree):
    dataset = lance.write_dataset(rtree_rows(0, 50), tmp_path / "ds")
    if with_rtree:
        dataset.create_scalar_index("geom", "RTREE")
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "ds")], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(with_rtree)


def test_a_page_file_of_another_shape_is_reported(tmp_path):
    """A Lance file, but not the page's: ``bbox`` of strings, and a
    num_pages that 3 entries do not make."""
    path = tmp_path / "ds"
    lance.write_dataset(rtree_rows(0, 60), path).create_scalar_index("geom", _rtree())
    reference = Dataset.open(path)
    (index,) = reference.indices
    table = pa.table({"bbox": ["a", "b", "c"], "id": pa.array([0, 1, 2], pa.uint64())})
    metadata = {"page_size": b"8", "num_items": b"3", "num_pages": b"1"}
    written = write_v2_1(table, schema_from_arrow(table.schema).fields, metadata, version=V2_2_VERSION)
    (path / reference.index_file_location(index, PAGE_FILE).relpath).write_bytes(written.data)
    found = [f for f in _findings(path, deep=True) if f.rule.startswith(TOPIC) or f.rule == "validator.internal-error"]
    assert [f.rule for f in found] == ["index-rtree/files-decode"], found
    assert "bbox is string" in found[0].message
