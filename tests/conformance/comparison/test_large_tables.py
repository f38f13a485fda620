"""Large tables are compared whole: a million rows of leaves, strings, lists
and structs, with representation differences and a few changed values, take
about a second here, where merely converting both tables to Python lists
takes several."""

import time

import numpy as np
import pyarrow as pa

from conformance.comparison import MAX_ROWS_SHOWN, compare_tables

ROWS = 1_000_000
# Generous for a shared two-core machine, where the comparison takes about two seconds.
SECONDS = 20


def test_a_million_rows_with_representation_and_value_differences_compare_in_seconds():
    rng = np.random.default_rng(15)
    ints = pa.array(rng.integers(-1000, 1000, ROWS, dtype=np.int32))
    floats = rng.random(ROWS)
    floats[::7] = np.nan
    strings = pa.array(np.char.add("s", (np.arange(ROWS) % 997).astype(str)).astype(object))
    list_values = rng.integers(0, 9, 3 * ROWS).astype(np.int16)
    offsets = pa.array(np.arange(0, 3 * ROWS + 1, 3, dtype=np.int32))
    expected = pa.table(
        {
            "i": ints,
            "f": pa.array(floats),
            "s": strings,
            "l": pa.ListArray.from_arrays(offsets, pa.array(list_values)),
            "st": pa.StructArray.from_arrays([ints, strings], names=["x", "y"]),
        }
    )
    changed_floats = floats.copy()
    changed_floats[[10, 500_000, 999_998]] += 1  # none of them a NaN (every 7th)
    changed_list_values = list_values.copy()
    changed_list_values[3 * 123_456 + 2] += 1
    actual = pa.table(
        {
            "i": ints.cast(pa.int64()),
            "f": pa.array(changed_floats),
            "s": strings.cast(pa.large_string()).dictionary_encode(),
            "l": pa.LargeListArray.from_arrays(
                pa.array(np.arange(0, 3 * ROWS + 1, 3, dtype=np.int64)), pa.array(changed_list_values)
            ),
            "st": pa.StructArray.from_arrays([ints, strings.cast(pa.large_string())], names=["x", "y"]),
        }
    )
    started = time.perf_counter()
    result = compare_tables(expected, actual)
    elapsed = time.perf_counter() - started
    assert [message.split(":")[0] for message in result.differences] == [
        "column 'f' row 10",
        "column 'f' row 500000",
        "column 'f' row 999998",
        "column 'l' row 123456",
    ]
    assert len(result.differences) <= 2 * (MAX_ROWS_SHOWN + 1)
    assert {(o.column, o.kind) for o in result.observations} == {
        ("i", "wider-type"),
        ("s", "dictionary"),
        ("s", "offset-width"),
        ("l", "offset-width"),
        ("st.y", "offset-width"),
    }
    assert elapsed < SECONDS, f"{ROWS} rows took {elapsed:.1f} s"
