"""The datasets of the deep validation benchmark (:mod:`benchmarks.deep`):
10,000,000 rows written by pylance at data storage version 2.2, in ten
data files of 1,000,000 rows (pylance's default file size).

The table is generated with numpy from a fixed seed (the same rows every
run) and has a column for each kind of data a deep validation decodes:

* ``id``: int64, 0 to rows - 1 (bitpacked);
* ``value``: float64, standard normal, 1% nulls;
* ``category``: string, one of 40 words (low cardinality: dictionary
  encoded);
* ``name``: string of 0 to 23 random lowercase letters, 1% nulls (high
  cardinality: FSST);
* ``quantity``: int32 in 0 .. 999, 5% nulls;
* ``tags``: list<int32> of 0 to 4 items, 5% null lists;
* ``vector``: fixed_size_list<float32, 8>, standard normal;
* ``point``: struct<x: float32, label: string (one of 40 words)>, 2% null
  structs.

Two datasets: one with pylance's default compression, one with
``lance-encoding:compression=zstd`` in the metadata of every field. Both
are written on first use under the benchmark data directory (gitignored)
and kept there; a dataset whose last version is missing is written again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa

from .common import DATA_DIR

ROWS = 10_000_000
SEED = 20_261_129
WORDS = [f"word-{index:02d}" for index in range(40)]
ZSTD = {"lance-encoding:compression": "zstd"}


def _strings(rng: np.random.Generator, rows: int, null_fraction: float) -> pa.Array:
    """Strings of 0 to 23 random lowercase letters."""
    lengths = rng.integers(0, 24, rows)
    offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    letters = rng.integers(ord("a"), ord("z") + 1, int(offsets[-1]), dtype=np.uint8)
    valid = np.packbits(rng.random(rows) >= null_fraction, bitorder="little")
    return pa.StringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(letters), pa.py_buffer(valid))


def _words(rng: np.random.Generator, rows: int) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, len(WORDS), rows, dtype=np.int32)), WORDS).cast(
        pa.string()
    )


def generated_table(rows: int = ROWS) -> pa.Table:
    """The benchmark's rows: deterministic for a given ``rows``."""
    rng = np.random.default_rng(SEED)
    tag_lengths = rng.integers(0, 5, rows)
    tag_offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(tag_lengths, out=tag_offsets[1:])
    tags = pa.ListArray.from_arrays(
        pa.array(tag_offsets),
        pa.array(rng.integers(0, 10_000, int(tag_offsets[-1]), dtype=np.int32)),
        mask=pa.array(rng.random(rows) < 0.05),
    )
    point = pa.StructArray.from_arrays(
        [pa.array(rng.standard_normal(rows, dtype=np.float32)), _words(rng, rows)],
        names=["x", "label"],
        mask=pa.array(rng.random(rows) < 0.02),
    )
    return pa.table(
        {
            "id": pa.array(np.arange(rows, dtype=np.int64)),
            "value": pa.array(rng.standard_normal(rows), mask=rng.random(rows) < 0.01),
            "category": _words(rng, rows),
            "name": _strings(rng, rows, 0.01),
            "quantity": pa.array(rng.integers(0, 1000, rows, dtype=np.int32), mask=rng.random(rows) < 0.05),
            "tags": tags,
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(rows * 8, dtype=np.float32)), 8),
            "point": point,
        }
    )


def _with_zstd(schema: pa.Schema) -> pa.Schema:
    """``schema`` with general compression zstd asked for on every field."""

    def field(f: pa.Field) -> pa.Field:
        if pa.types.is_struct(f.type):
            f = f.with_type(pa.struct([field(child) for child in f.type]))
        elif pa.types.is_list(f.type):
            f = f.with_type(pa.list_(field(f.type.value_field)))
        return f.with_metadata(ZSTD)

    return pa.schema([field(f) for f in schema])


def dataset(rows: int = ROWS, zstd: bool = False) -> Path:
    """The dataset's path, written by pylance (2.2) on first use."""
    import lance

    path = DATA_DIR / f"deep-2.2{'-zstd' if zstd else ''}-{rows}"
    if (path / "_versions").exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    table = generated_table(rows)
    if zstd:
        table = table.cast(_with_zstd(table.schema))
    lance.write_dataset(table, path, data_storage_version="2.2")
    return path
