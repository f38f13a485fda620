"""Deterministic rows for the zoo: every value is a pure function of the row
id, so two builds of a feature hold the same rows (file names, UUIDs and
timestamps still differ between builds)."""

from __future__ import annotations

import datetime
import decimal
import json

import pyarrow as pa

#: The columns of :func:`rows`: ``id`` unique and never null, ``value`` null on
#: every 7th row, ``label`` on every 5th, ``category`` one of four words.
BASE_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("label", pa.string()),
        pa.field("category", pa.string()),
    ]
)
WORDS = ("alpha", "beta", "gamma", "delta")


def rows(start: int, count: int) -> pa.Table:
    """Rows ``start .. start + count - 1`` of :data:`BASE_SCHEMA`."""
    ids = range(start, start + count)
    return pa.Table.from_arrays(
        [
            pa.array(ids, pa.int64()),
            pa.array([None if i % 7 == 0 else i * 0.5 for i in ids], pa.float64()),
            pa.array([None if i % 5 == 0 else f"row-{i}" for i in ids], pa.string()),
            pa.array([WORDS[i % 4] for i in ids], pa.string()),
        ],
        schema=BASE_SCHEMA,
    )


def text_rows(start: int, count: int) -> pa.Table:
    """``id`` and ``text``: short sentences over a small vocabulary (for full
    text and n-gram indices), and ``labels``: a list of words (label lists)."""
    ids = range(start, start + count)
    sentences = [f"the {WORDS[i % 4]} {WORDS[(i // 4) % 4]} item number {i}" for i in ids]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "text": pa.array(sentences, pa.string()),
            "labels": pa.array([[WORDS[k % 4] for k in range(i % 3 + 1)] for i in ids], pa.list_(pa.string())),
        }
    )


def vector_rows(start: int, count: int, dimension: int = 8) -> pa.Table:
    """``id`` and ``vector`` (fixed-size list of float32): values from a
    small integer recurrence, spread enough for k-means to split them."""
    ids = range(start, start + count)
    values = [float(((i * 7919 + k * 104729) % 1000) / 100.0) for i in ids for k in range(dimension)]
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(values, pa.float32()), dimension)
    return pa.table({"id": pa.array(ids, pa.int64()), "vector": vectors})


ITEM = pa.struct([("a", pa.int32()), ("b", pa.string())])
ODD_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("point", pa.struct([("x", pa.int32()), ("y", pa.struct([("z", pa.float32())]))])),
        pa.field("items", pa.list_(ITEM)),
        pa.field("attributes", pa.map_(pa.string(), pa.int32())),
        pa.field("embedding", pa.list_(pa.float32(), 4)),
        pa.field("big_text", pa.large_string()),
        pa.field("big_bytes", pa.large_binary()),
        pa.field("category", pa.dictionary(pa.int32(), pa.string())),
        pa.field("amount", pa.decimal128(12, 3)),
        pa.field("wide_amount", pa.decimal256(40, 5)),
        pa.field("moment_utc", pa.timestamp("us", tz="UTC")),
        pa.field("moment_berlin", pa.timestamp("ms", tz="Europe/Berlin")),
        pa.field("moment_naive", pa.timestamp("ns")),
        pa.field("day", pa.date32()),
        pa.field("flag", pa.bool_()),
        pa.field("tiny", pa.int8()),
        pa.field("unsigned", pa.uint64()),
        pa.field("half", pa.float16()),
        pa.field("digest", pa.binary(4)),
    ]
)


def _every(period: int, i: int, value):
    return None if i % period == 0 else value


def odd_rows(start: int, count: int) -> pa.Table:
    """Rows of :data:`ODD_SCHEMA`: nested and odd types, nulls at every level."""
    import numpy as np  # lazy: only the half-float column needs numpy's float16

    ids = range(start, start + count)
    epoch = datetime.datetime(2021, 3, 28, tzinfo=datetime.timezone.utc)
    columns = [
        pa.array(ids, pa.int64()),
        pa.array(
            [_every(11, i, {"x": i % 50, "y": _every(3, i, {"z": _every(2, i, i / 4.0)})}) for i in ids],
            ODD_SCHEMA.field("point").type,
        ),
        pa.array(
            [
                _every(10, i, [None if k == 1 else {"a": i + k, "b": _every(2, k, f"b{k}")} for k in range(i % 3)])
                for i in ids
            ],
            pa.list_(ITEM),
        ),
        pa.array(
            [_every(9, i, [(f"k{k}", _every(2, k, i * k)) for k in range(i % 3)]) for i in ids],
            pa.map_(pa.string(), pa.int32()),
        ),
        pa.array([_every(8, i, [float(i + k) for k in range(4)]) for i in ids], pa.list_(pa.float32(), 4)),
        pa.array([_every(7, i, "text-" * (i % 3) + str(i)) for i in ids], pa.large_string()),
        pa.array([_every(6, i, bytes([i % 256]) * (i % 5)) for i in ids], pa.large_binary()),
        pa.array([_every(5, i, WORDS[i % 4]) for i in ids])
        .dictionary_encode()
        .cast(pa.dictionary(pa.int32(), pa.string())),
        pa.array([_every(4, i, decimal.Decimal(i) / 8) for i in ids], pa.decimal128(12, 3)),
        pa.array(
            [_every(3, i, decimal.Decimal(i) * 10**20 + decimal.Decimal("0.00001")) for i in ids], pa.decimal256(40, 5)
        ),
        pa.array([_every(5, i, epoch + datetime.timedelta(minutes=i)) for i in ids], pa.timestamp("us", tz="UTC")),
        pa.array(
            [_every(6, i, epoch + datetime.timedelta(hours=i)) for i in ids], pa.timestamp("ms", tz="Europe/Berlin")
        ),
        pa.array(
            [_every(7, i, datetime.datetime(2000, 1, 1) + datetime.timedelta(seconds=i)) for i in ids],
            pa.timestamp("ns"),
        ),
        pa.array([_every(4, i, datetime.date(2020, 2, 28) + datetime.timedelta(days=i)) for i in ids], pa.date32()),
        pa.array([_every(3, i, i % 2 == 0) for i in ids], pa.bool_()),
        pa.array([_every(5, i, (i % 256) - 128) for i in ids], pa.int8()),
        pa.array([_every(6, i, (1 << 64) - 1 - i) for i in ids], pa.uint64()),
        pa.array([None if i % 7 == 0 else np.float16(i / 3) for i in ids], pa.float16()),
        pa.array([_every(8, i, (i * 2654435761 % (1 << 32)).to_bytes(4, "little")) for i in ids], pa.binary(4)),
    ]
    return pa.Table.from_arrays(columns, schema=ODD_SCHEMA)


def json_rows(start: int, count: int) -> pa.Table:
    """``id`` and ``doc``: JSON text (``pa.json_(pa.string())``), objects,
    arrays, scalars and nulls."""
    ids = range(start, start + count)
    documents: list[str | None] = []
    for i in ids:
        if i % 6 == 0:
            documents.append(None)
        elif i % 6 == 1:
            documents.append(json.dumps([i, str(i), None]))
        elif i % 6 == 2:
            documents.append(json.dumps(i * 1.5))
        else:
            documents.append(
                json.dumps({"name": f"n{i}", "size": i, "tags": [WORDS[i % 4]], "nested": {"ok": i % 2 == 0}})
            )
    return pa.table({"id": pa.array(ids, pa.int64()), "doc": pa.array(documents, pa.json_(pa.string()))})


def blob_bytes(i: int) -> bytes:
    """The blob of row ``i``: sizes from empty to a few kilobytes."""
    return bytes((i * 31 + k) % 256 for k in range((i * 397) % 5000))
