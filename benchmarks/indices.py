"""Deep validation of indices (issue 30): ``lance-conformance validate
--deep --rules <the index topics>`` on a 1,000,000-row table with a BTREE,
a BITMAP, a ZONEMAP and an IVF_PQ index, beside pylance building those four
indices on the same rows, in one run.

The table is the deep benchmark's rows (:mod:`benchmarks.deep_data`, a fixed
seed) cut to the indexed columns: ``id`` (BTREE), ``category`` (BITMAP, 40
values), ``value`` (ZONEMAP, 1% nulls) and ``vector`` (IVF_PQ, 8 float32
dimensions; :data:`IVF_PQ_PARAMETERS`). pylance writes two copies on first
use under the benchmark data directory and keeps them: one that pylance
indexes once and the validator reads, and one that pylance indexes anew on
every timed run (``replace=True``: each run commits a new version whose
segments replace the last run's, so every run builds the same four
indices from the same rows).

The rules run are those of every rule id topic named ``index`` or
``index-*`` (:data:`conformance.validator.rules.TOPIC_MODULES`), so rules
added by later topics are picked up with no change here; the first line
printed says how many there are and how many are deep. Until the rules that
read index contents exist, the validator checks little and the ratio says
little: the printed rule count is the measure of that.

Each side is a fresh process per repeat, timed from start to exit, the two
sides interleaved as in :mod:`benchmarks.deep` (wall and CPU time, one
untimed run of each first).

``python -m benchmarks.indices [--rows N]`` prints the table;
``LANCE_CONFORMANCE_BENCH_REPEATS`` sets the repeats (default 3).
``PYTHONPATH`` names the checkout whose code the children run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .commands import code_under_test, our_command
from .common import DATA_DIR, Measurement, table_header
from .deep import REPEATS, Pair, interleaved
from .deep_data import generated_table

ROWS = 1_000_000
COLUMNS = ["id", "value", "category", "vector"]
#: Partitions of about 4,000 vectors each; four sub-vectors of two dimensions.
IVF_PQ_PARAMETERS = {"num_partitions": 256, "num_sub_vectors": 4}

#: pylance building the four indices on the dataset ``sys.argv[1]``, each
#: replacing the one of the same name a previous run built.
PYLANCE_BUILD_INDICES = f"""
import sys
import lance
dataset = lance.dataset(sys.argv[1])
dataset.create_scalar_index("id", "BTREE", name="id_btree", replace=True)
dataset.create_scalar_index("category", "BITMAP", name="category_bitmap", replace=True)
dataset.create_scalar_index("value", "ZONEMAP", name="value_zonemap", replace=True)
dataset.create_index(
    "vector", "IVF_PQ", name="vector_ivf_pq", replace=True, **{IVF_PQ_PARAMETERS!r}
)
"""


def index_topics() -> list[str]:
    """The rule id topics of the index rules: ``index`` and every ``index-*``."""
    from conformance.validator.rules import TOPIC_MODULES  # lazy: the code under test, imported when asked

    return sorted(topic for topic in TOPIC_MODULES if topic == "index" or topic.startswith("index-"))


def index_rules() -> tuple[int, int]:
    """How many rules the index topics select, and how many of them are deep."""
    from conformance.validator.ruleset import iter_rules  # lazy: the code under test, imported when asked

    selected = list(iter_rules(index_topics()))
    return len(selected), sum(1 for rule in selected if rule.deep)


def _write(path: Path, rows: int) -> None:
    import lance  # lazy: the benchmarks need pylance; importing this module does not

    if (path / "_versions").is_dir():
        return
    shutil.rmtree(path, ignore_errors=True)
    lance.write_dataset(generated_table(rows).select(COLUMNS), str(path))


def datasets(rows: int) -> tuple[Path, Path]:
    """``(indexed, rebuilt)``: the dataset the validator reads (indexed once
    by pylance) and the one pylance indexes on every run."""
    indexed, rebuilt = DATA_DIR / f"indices-{rows}-indexed", DATA_DIR / f"indices-{rows}-rebuilt"
    for path in (indexed, rebuilt):
        _write(path, rows)
    import lance  # lazy: the benchmarks need pylance; importing this module does not

    # Built by the command the benchmark times, so both datasets hold the same indices.
    if len(lance.dataset(str(indexed)).describe_indices()) < 4:
        subprocess.run([sys.executable, "-c", PYLANCE_BUILD_INDICES, str(indexed)], check=True, timeout=3600)
    return indexed, rebuilt


def index_pair(rows: int) -> Pair:
    indexed, rebuilt = datasets(rows)
    validate = [*our_command(), "validate", "--deep", "--rules", *index_topics(), "--", str(indexed)]
    build = [sys.executable, "-c", PYLANCE_BUILD_INDICES, str(rebuilt)]
    return Pair(
        f"index rules --deep / pylance building BTREE, BITMAP, ZONEMAP, IVF_PQ; {rows:,} rows",
        validate,
        build,
        ("lance-conformance validate", "pylance create indices"),
    )


def bench_indices() -> list[Measurement]:
    """``python -m benchmarks bench_indices``: the default rows."""
    return [interleaved(index_pair(ROWS), REPEATS)]


BENCHMARKS = [bench_indices]


def main(argv: list[str]) -> int:
    import lance  # lazy: the benchmarks need pylance; importing this module does not

    parser = argparse.ArgumentParser(prog="python -m benchmarks.indices", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=ROWS)
    args = parser.parse_args(argv)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    rules, deep = index_rules()
    print(
        f"pylance {lance.__version__}, Python {sys.version.split()[0]}; code from {code_under_test()}; "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; topics {', '.join(index_topics())}: "
        f"{rules} rules, {deep} of them deep",
        flush=True,
    )
    measured = interleaved(index_pair(args.rows), REPEATS)
    print(f"\n{table_header(measured.columns)}")
    print(measured.row(), flush=True)
    print(f"\nload at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
