"""The zone map and bloom filter rules on datasets pylance 14 maintains
through appends, optimize_indices (delta and merged segments), deletes,
updates and compaction (with and without deferred remap): no false finding,
in a default run and a deep one. A default run says what its sample left
unchecked, and a deep run finds what lies beyond it. (The mutations of
conformance/mutations/topics/index_zonemap.py, one per rule, run in
test_mutations.py.)
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from conformance.validator import Severity, validate
from conformance.validator.facts import index_contents
from reference_impl.arrow_schema import schema_from_arrow
from reference_impl.dataset import Dataset
from reference_impl.file_format.writer_v2_1 import V2_2_VERSION, write_v2_1
from reference_impl.indices.zonemap import ZONEMAP_FILE, zone_map_table

lance = pytest.importorskip("lance")
IndexConfig = lance.indices.IndexConfig

TOPICS = ("index-zonemap/", "index-bloom-filter/")
SERIOUS = (Severity.ERROR, Severity.WARNING)


def _rows(start: int, count: int) -> pa.Table:
    ids = np.arange(start, start + count)
    floats = ids / 8.0
    floats[ids % 97 == 5] = np.nan
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "x": pa.array([None if n % 7 == 0 else int(n) for n in ids], pa.int64()),
            "f": pa.array(floats),
            "s": pa.array([None if n % 5 == 0 else f"s{n % 300}" for n in ids]),
        }
    )


def _indices(dataset) -> None:
    zones = IndexConfig(index_type="zonemap", parameters={"rows_per_zone": 64})
    bloom = IndexConfig(index_type="bloomfilter", parameters={"number_of_items": 64, "probability": 0.01})
    dataset.create_scalar_index("x", zones, name="x_zm")
    dataset.create_scalar_index("f", zones, name="f_zm")
    dataset.create_scalar_index("s", bloom, name="s_bf")


def _maintained(path, *, defer_index_remap: bool, stable_row_ids: bool = False) -> None:
    """Every maintenance step pylance offers, each its own version."""
    dataset = lance.write_dataset(_rows(0, 900), path, max_rows_per_file=300, enable_stable_row_ids=stable_row_ids)
    dataset.delete("id % 9 = 1")
    _indices(dataset)
    dataset.delete("id >= 400 AND id < 430")
    dataset.insert(_rows(900, 200))
    dataset.optimize.optimize_indices(num_indices_to_merge=0)
    dataset.update({"x": "x + 100000"}, where="id >= 950 AND id < 960")
    dataset.insert(_rows(1100, 150))
    dataset.optimize.optimize_indices()
    dataset.delete("id >= 0 AND id < 300")
    dataset.optimize.compact_files(target_rows_per_fragment=2000, defer_index_remap=defer_index_remap)
    dataset.insert(_rows(1250, 100))
    dataset.optimize.optimize_indices(num_indices_to_merge=0)


def _findings(path, deep: bool):
    return validate(path, all_versions=True, deep=deep).findings


@pytest.mark.parametrize(
    ("defer_index_remap", "stable_row_ids"),
    # Stable row ids change no zone (zones hold row addresses): a variant for the nightly run.
    [(False, False), (True, False), pytest.param(False, True, marks=pytest.mark.slow)],
    ids=str,
)
def test_datasets_pylance_maintains_draw_no_finding(tmp_path, defer_index_remap, stable_row_ids):
    _maintained(tmp_path / "ds", defer_index_remap=defer_index_remap, stable_row_ids=stable_row_ids)
    for deep in (False, True):
        findings = _findings(tmp_path / "ds", deep)
        serious = [f"{f.rule} v{f.version}: {f.message}" for f in findings if f.severity in SERIOUS]
        assert not serious, serious
        # What the rules left unchecked: nothing, but the fragments a
        # compaction with deferred remap wrote (their zones name the
        # fragments compacted into them).
        unchecked = {f.message.split(": ", 1)[1] for f in findings if f.rule.startswith(TOPICS)}
        if defer_index_remap:
            assert unchecked and all("remap was deferred" in message for message in unchecked), unchecked
        else:
            assert not unchecked, unchecked


def _narrow_the_last_zone(path) -> None:
    """Rewrite the zone map on ``x`` with the last zone's minimum raised
    above a value it holds (the file is written anew, so its size may
    change: only this topic's rules are looked at)."""
    reference = Dataset.open(path)
    (index,) = [index for index in reference.indices if index.name == "x_zm"]
    table = zone_map_table(reference, ["x"], pa.int64(), 64)
    minimums = table.column("min").to_pylist()
    minimums[-1] += 1
    table = table.set_column(0, "min", pa.array(minimums, pa.int64()))
    written = write_v2_1(table, schema_from_arrow(table.schema).fields, {"rows_per_zone": b"64"}, version=V2_2_VERSION)
    location = reference.index_file_location(index, ZONEMAP_FILE)
    (path / location.relpath).write_bytes(written.data)


def test_a_default_run_says_what_it_left_unchecked_and_a_deep_run_checks_it(tmp_path, monkeypatch):
    dataset = lance.write_dataset(_rows(0, 900), tmp_path / "ds", max_rows_per_file=300)
    _indices(dataset)
    _narrow_the_last_zone(tmp_path / "ds")
    monkeypatch.setattr(index_contents, "SAMPLE_ROWS", 300)

    default = [f for f in _findings(tmp_path / "ds", deep=False) if f.rule.startswith(TOPICS)]
    assert {f.rule for f in default} == {"index-zonemap/sampled", "index-bloom-filter/sampled"}
    assert all("2 covered fragments (1, 2)" in f.message for f in default), [f.message for f in default]

    deep = [f for f in _findings(tmp_path / "ds", deep=True) if f.rule.startswith(TOPICS)]
    # Once per version listing the index (versions 2 to 4).
    assert [(f.rule, f.version) for f in deep] == [("index-zonemap/bounds", version) for version in (2, 3, 4)]
    assert all("zone 14: min" in f.message for f in deep), [f.message for f in deep]


def test_a_zone_map_the_reference_writes_draws_no_finding(tmp_path):
    lance.write_dataset(_rows(0, 900), tmp_path / "ds", max_rows_per_file=300)
    lance.dataset(tmp_path / "ds").delete("id % 9 = 1")
    reference = Dataset.open(tmp_path / "ds")
    for column in ("x", "f", "s"):
        reference = reference.create_index(column, index_type="ZONEMAP")
    findings = _findings(tmp_path / "ds", deep=True)
    assert not [f"{f.rule}: {f.message}" for f in findings if f.severity in SERIOUS]
    assert not [f for f in findings if f.rule.startswith(TOPICS)]


def _replace_index_file(path, index_name: str, file_name: str, table: pa.Table, metadata: dict) -> None:
    reference = Dataset.open(path)
    (index,) = [index for index in reference.indices if index.name == index_name]
    written = write_v2_1(table, schema_from_arrow(table.schema).fields, metadata, version=V2_2_VERSION)
    (path / reference.index_file_location(index, file_name).relpath).write_bytes(written.data)


def test_hostile_index_files_give_findings_not_internal_errors(tmp_path):
    """Files that are Lance files but not the index's (wrong types, a filter
    of 33 bytes, a zone length that wraps around 2**64), and files with
    bytes overwritten at random: the run finishes, the index rules report,
    no rule fails."""
    path = tmp_path / "ds"
    _indices(lance.write_dataset(_rows(0, 300), path, max_rows_per_file=150))
    u64 = pa.uint64()
    zones = {"fragment_id": pa.array([0, 1], u64), "zone_start": pa.array([0, 0], u64)}
    _replace_index_file(
        path,
        "x_zm",
        ZONEMAP_FILE,
        pa.table(
            {
                "min": pa.array([0, 150], pa.int64()),
                "max": pa.array([149, 299], pa.int64()),
                "null_count": pa.array([22, 21], pa.uint32()),
                "nan_count": pa.array([0, 0], pa.uint32()),
                **zones,
                "zone_length": pa.array([150, 2**64 - 1], u64),
            }
        ),
        {"rows_per_zone": b"150"},
    )
    _replace_index_file(
        path,
        "s_bf",
        "bloomfilter.lance",
        pa.table(
            {
                **zones,
                "zone_length": pa.array([150, 150], u64),
                "has_null": [True, True],
                "bloom_filter_data": [b"\0" * 33, b"\0" * 32],
            }
        ),
        {},
    )
    _replace_index_file(path, "f_zm", ZONEMAP_FILE, pa.table({"min": ["a"], "max": ["b"]}), {})
    found = {f.rule for f in _findings(path, deep=True)}
    assert {"index-zonemap/zones-tile", "index-bloom-filter/file", "index-zonemap/file"} <= found, found
    assert "validator.internal-error" not in found

    rng = np.random.default_rng(11)
    for attempt in range(4):
        damaged = tmp_path / f"damaged{attempt}"
        dataset = lance.write_dataset(_rows(0, 300), damaged, max_rows_per_file=150)
        _indices(dataset)
        for index in Dataset.open(damaged).indices:
            for listed_file in index.files:
                target = damaged / "_indices" / index.uuid / listed_file.path
                data = bytearray(target.read_bytes())
                for position in rng.integers(0, len(data), 16):
                    data[int(position)] = int(rng.integers(0, 256))
                target.write_bytes(bytes(data))
        internal = [f.message for f in _findings(damaged, deep=True) if f.rule == "validator.internal-error"]
        assert not internal, internal
