"""Data file benchmarks: one Lance 2.0 file of 10,000,000 rows.

The table has four columns, generated once per run with numpy from a fixed
seed (the same bytes every run):

* ``id``: int64, uniform random, no nulls;
* ``value``: float64, standard normal, 1% nulls;
* ``name``: string of 0 to 23 random lowercase letters, 1% nulls (high
  cardinality, so neither writer dictionary-encodes it);
* ``vector``: fixed_size_list<float32, 8>, standard normal, no nulls.

* write: reference ``write_file`` (encode with ``write_v2_0``, then store
  with put-if-not-exists: temporary file, fsync, link) against pylance's
  ``lance.file.LanceFileWriter(path, version="2.0")`` given the whole table
  as one batch. Each run writes a new file; removing the previous one is not
  timed.
* read: reference ``LanceFileReader(...).read()`` against pylance's
  ``LanceFileReader(path).read_all().to_table()`` (its default batch size), both
  reading the same file, which the operating system has cached.
* read 2.2: the same, on the file pylance writes at 2.2 with its default
  encodings (``LanceFileWriter(path, version="2.2")``; mini block pages of
  bitpacked, FSST-compressed and RLE/bitpacked-level chunks), decoded by the
  reference's 2.1+ reader.

For the 2.2 read the detail column also gives each reader's CPU time (user
and system, all threads of the process, median of the same runs): on a
machine shared with other work a single-threaded reader waits for a core
longer than a multi-threaded one, and CPU time shows the work itself.

Every result is checked, untimed: both readers return the generated table,
and the detail column says whether the two writers' files are byte for byte
identical.
"""

from __future__ import annotations

import functools
import hashlib
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from reference_impl.arrow_schema import schema_from_arrow
from reference_impl.file_format import LanceFileReader, write_file, write_v2_0
from reference_impl.storage import LocalStorage, Storage

from .common import DATA_DIR, Measurement, best_of

ROWS = 10_000_000
SEED = 20_240_601
FILES_DIR = DATA_DIR / "files"
PYLANCE_FILE = "pylance-written.lance"
PYLANCE_2_2_FILE = "pylance-written-2.2.lance"
REFERENCE_FILE = "reference-written.lance"


@functools.lru_cache(maxsize=1)
def generated_table(rows: int = ROWS) -> pa.Table:
    """The benchmark table: deterministic, built once per process."""
    rng = np.random.default_rng(SEED)
    ids = pa.array(rng.integers(-(2**62), 2**62, rows, dtype=np.int64))
    values = pa.array(rng.standard_normal(rows), mask=rng.random(rows) < 0.01)

    lengths = rng.integers(0, 24, rows)
    offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    letters = rng.integers(ord("a"), ord("z") + 1, int(offsets[-1]), dtype=np.uint8)
    name_valid = np.packbits(rng.random(rows) >= 0.01, bitorder="little")
    names = pa.StringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(letters), pa.py_buffer(name_valid))

    vectors = pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(rows * 8, dtype=np.float32)), 8)
    return pa.table({"id": ids, "value": values, "name": names, "vector": vectors})


def _storage() -> Storage:
    FILES_DIR.mkdir(parents=True, exist_ok=True)
    return LocalStorage(FILES_DIR)


def _remove(name: str) -> None:
    (FILES_DIR / name).unlink(missing_ok=True)


def _write_with_reference(table: pa.Table) -> None:
    write_file(_storage(), REFERENCE_FILE, table, schema_from_arrow(table.schema).fields)


def _write_with_pylance(table: pa.Table, name: str = PYLANCE_FILE, version: str = "2.0") -> None:
    from lance.file import LanceFileWriter

    FILES_DIR.mkdir(parents=True, exist_ok=True)
    writer = LanceFileWriter(str(FILES_DIR / name), table.schema, version=version)
    writer.write_batch(table)
    writer.close()


def _digest(name: str) -> str:
    digest = hashlib.sha256()
    with open(FILES_DIR / name, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 24), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_with_reference(name: str) -> pa.Table:
    return LanceFileReader(_storage(), name).read()


def _read_with_pylance(name: str) -> pa.Table:
    from lance.file import LanceFileReader as PylanceFileReader

    return PylanceFileReader(str(FILES_DIR / name)).read_all().to_table()


def bench_write_file(repeats: int = 5) -> Measurement:
    table = generated_table()
    reference_seconds = best_of(repeats, lambda: _write_with_reference(table), lambda: _remove(REFERENCE_FILE))
    pylance_seconds = best_of(repeats, lambda: _write_with_pylance(table), lambda: _remove(PYLANCE_FILE))

    start = time.perf_counter()
    write_v2_0(table, schema_from_arrow(table.schema).fields)
    encode_seconds = time.perf_counter() - start
    identical = _digest(REFERENCE_FILE) == _digest(PYLANCE_FILE)
    size_mb = (FILES_DIR / REFERENCE_FILE).stat().st_size / 1e6
    return Measurement(
        f"write a 2.0 file, {ROWS:,} rows x 4 columns",
        reference_seconds,
        pylance_seconds,
        f"{size_mb:.0f} MB; reference: encode {encode_seconds:.2f} s, the rest is storing it (with fsync); "
        f"files byte-identical: {'yes' if identical else 'NO'}",
    )


def bench_read_file(repeats: int = 5) -> Measurement:
    table = generated_table()
    if not (FILES_DIR / PYLANCE_FILE).exists():
        _write_with_pylance(table)
    for reader in (_read_with_reference, _read_with_pylance):
        if not reader(PYLANCE_FILE).equals(table):
            raise AssertionError(f"{reader.__name__} does not return the rows that were written")
    return Measurement(
        f"read a 2.0 file, {ROWS:,} rows x 4 columns",
        best_of(repeats, lambda: _read_with_reference(PYLANCE_FILE)),
        best_of(repeats, lambda: _read_with_pylance(PYLANCE_FILE)),
        "the file pylance wrote; pylance: read_all() (batch_size 1024), to_table()",
    )


def _wall_and_cpu(repeats: int, action: Callable[[], object]) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system, this process's
    threads) of ``repeats`` runs of ``action``."""
    walls, cpus = [], []
    for _ in range(repeats):
        before, start = os.times(), time.perf_counter()
        action()
        walls.append(time.perf_counter() - start)
        after = os.times()
        cpus.append(after.user + after.system - before.user - before.system)
    return statistics.median(walls), statistics.median(cpus)


def bench_read_file_2_2(repeats: int = 3) -> Measurement:
    table = generated_table()
    if not (FILES_DIR / PYLANCE_2_2_FILE).exists():
        _write_with_pylance(table, PYLANCE_2_2_FILE, "2.2")
    for reader in (_read_with_reference, _read_with_pylance):
        if not reader(PYLANCE_2_2_FILE).equals(table):
            raise AssertionError(f"{reader.__name__} does not return the rows that were written at 2.2")
    size_mb = (FILES_DIR / PYLANCE_2_2_FILE).stat().st_size / 1e6
    reference_wall, reference_cpu = _wall_and_cpu(repeats, lambda: _read_with_reference(PYLANCE_2_2_FILE))
    pylance_wall, pylance_cpu = _wall_and_cpu(repeats, lambda: _read_with_pylance(PYLANCE_2_2_FILE))
    return Measurement(
        f"read a 2.2 file, {ROWS:,} rows x 4 columns",
        reference_wall,
        pylance_wall,
        f"{size_mb:.0f} MB, pylance 2.2 default encodings; pylance: read_all() (batch_size 1024), to_table(); "
        f"CPU time (user + system): reference {reference_cpu:.2f} s, pylance {pylance_cpu:.2f} s "
        f"(ratio {reference_cpu / pylance_cpu:.2f})",
    )


BENCHMARKS = [bench_write_file, bench_read_file, bench_read_file_2_2]
