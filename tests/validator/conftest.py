"""Valid base datasets for the validator tests, built once per session."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")


def _rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"row {i}" if i % 4 else None for i in ids],
            "point": [{"x": float(i), "y": -float(i)} for i in ids],
        }
    )


def build_plain(path: Path) -> None:
    """pylance 14, V2 names, several versions: appends, a sparse and a dense
    delete, a scalar index, a tag and table config."""
    lance.write_dataset(_rows(0, 3000), path, max_rows_per_file=1000)
    lance.write_dataset(_rows(3000, 500), path, mode="append")
    dataset = lance.dataset(path)
    dataset.delete("id < 3")
    dataset.delete("id >= 1000 AND id < 1800")
    dataset.create_scalar_index("id", "BTREE")
    dataset.tags.create("stable", 2)
    dataset.update_config({"owner.team": "conformance"})


def build_stable_row_ids(path: Path) -> None:
    """pylance 14 with stable row ids and V1 names."""
    lance.write_dataset(_rows(0, 100), path, enable_stable_row_ids=True, max_rows_per_file=40,
                        enable_v2_manifest_paths=False)
    lance.write_dataset(_rows(100, 30), path, mode="append")
    lance.dataset(path).delete("id % 10 = 0")


BASES = {"plain": build_plain, "stable_row_ids": build_stable_row_ids}


@pytest.fixture(scope="session")
def base_datasets(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("validator-bases")
    built = {}
    for name, build in BASES.items():
        build(root / name)
        built[name] = root / name
    return built
