"""Reader benchmarks (issue: reference reader), and the datasets the
validator and command benchmarks share.

* every version of a 200-version dataset opened in turn in this process
  (the library as a program reading many versions uses it), reference
  ``describe`` against pylance opening each version and counting its rows.

``describe`` as users run it, a fresh command per run, is timed by
:mod:`benchmarks.commands`.
"""

from __future__ import annotations

import shutil

import pyarrow as pa

from conformance.drivers import reference

from .common import DATA_DIR, Measurement, best_of


def _many_fragments(count: int):
    import lance

    path = DATA_DIR / f"fragments-{count}"
    if not (path / "_versions").exists():
        shutil.rmtree(path, ignore_errors=True)
        table = pa.table({"id": pa.array(range(count), pa.int64()), "value": pa.array(range(count), pa.float64())})
        lance.write_dataset(table, path, max_rows_per_file=1, max_rows_per_group=1)
    return path


def _many_versions(count: int):
    import lance

    path = DATA_DIR / f"versions-{count}"
    if not (path / "_versions").exists():
        shutil.rmtree(path, ignore_errors=True)
        lance.write_dataset(pa.table({"id": pa.array([0], pa.int64())}), path)
        for version in range(2, count + 1):
            lance.write_dataset(pa.table({"id": pa.array([version], pa.int64())}), path, mode="append")
    return path


def bench_every_version(versions: int = 200, repeats: int = 3) -> Measurement:
    import lance

    path = _many_versions(versions)

    def with_reference():
        for version in range(1, versions + 1):
            reference.describe(path, version)

    def with_pylance():
        for version in range(1, versions + 1):
            lance.dataset(path, version=version).count_rows()

    return Measurement(
        f"every version of a {versions}-version dataset",
        best_of(repeats, with_reference),
        best_of(repeats, with_pylance),
        "reference: describe each; pylance: open each and count_rows",
    )


BENCHMARKS = [bench_every_version]
