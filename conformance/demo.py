"""``lance-conformance demo``: the suite's main job on the embedded defaults.

It writes a few datasets with pylance (when it is installed), describes every
version of each with the reference reader and with pylance's own view, and
prints whether the two agree. It grows with the project.
"""

from __future__ import annotations

import tempfile
from pathlib import Path


def _write_demo_datasets(root: Path) -> dict[str, Path]:
    import lance
    import pyarrow as pa

    datasets = {}

    def rows(start: int, count: int) -> pa.Table:
        ids = list(range(start, start + count))
        return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"row-{i}" for i in ids]})

    path = root / "appends_and_deletes"
    lance.write_dataset(rows(0, 300), path, max_rows_per_file=100)
    lance.write_dataset(rows(300, 100), path, mode="append")
    lance.dataset(path).delete("id % 7 = 0")
    datasets[path.name] = path

    path = root / "stable_row_ids"
    lance.write_dataset(rows(0, 200), path, enable_stable_row_ids=True, max_rows_per_file=50)
    lance.dataset(path).delete("id < 20")
    lance.dataset(path).optimize.compact_files()
    datasets[path.name] = path

    path = root / "schema_evolution_v1_names"
    lance.write_dataset(rows(0, 50), path, enable_v2_manifest_paths=False, data_storage_version="2.0")
    ds = lance.dataset(path)
    ds.add_columns({"twice": "id * 2"})
    ds.alter_columns({"path": "name", "name": "label"})
    ds.create_scalar_index("id", "BTREE")
    ds.tags.create("first", 1)
    datasets[path.name] = path
    return datasets


def run_demo(out: str | None = None) -> int:
    from .describe import differences, validate_description
    from .drivers import pylance_driver, reference

    try:
        import lance  # noqa: F401
    except ImportError:
        print("pylance is not installed: install the test extra (pip install -e '.[test]') to run the demo")
        return 1

    root = Path(out) if out else Path(tempfile.mkdtemp(prefix="lance-conformance-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"writing demo datasets with pylance {lance.__version__} under {root}")
    failures = 0
    for name, path in _write_demo_datasets(root).items():
        for version in reference.versions(path):
            ours = reference.describe(path, version)
            validate_description(ours)
            theirs = pylance_driver.describe(path, version)
            diffs = differences(ours, theirs, ignore=pylance_driver.UNREPORTED)
            verdict = "agree" if not diffs else f"DIFFER ({len(diffs)}): " + "; ".join(diffs[:3])
            failures += bool(diffs)
            print(
                f"  {name} v{version}: {ours['num_rows']} rows in {len(ours['fragments'])} fragments, "
                f"{ours['naming_scheme']} names - reference and pylance {verdict}"
            )
    print("demo finished: " + ("every description agrees" if not failures else f"{failures} disagreements"))
    return 0 if not failures else 1
