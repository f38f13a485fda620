"""The benchmark of record: the commands as users run them, each a fresh
process per repeat, beside a fresh pylance process doing the same work.

* ``lance-conformance validate PATH`` beside ``python -c`` opening the
  dataset with pylance, ``validate()`` and ``count_rows()``;
* ``lance-conformance validate --all-versions PATH`` beside a pylance
  process doing that for every version in turn;
* ``lance-conformance describe PATH`` beside a pylance process that opens
  the dataset, counts its rows and prints as JSON the manifest facts the
  describe prints (version, schema, every fragment's metadata).

The datasets are the ones :mod:`benchmarks.reader` builds with pylance:
10,000 one-row fragments in one version, and 211 versions of one-row
appends (version v lists v fragments). Nothing is timed inside one
interpreter: the wall time of each child process, from ``fork`` to exit, is
what a user waits for (start-up and imports included).

The machine may be shared, so the two sides are interleaved: each repeat
runs ours and pylance's one after the other, in alternating order, so both
meet the same load; one untimed run of each first fills the page cache for
both. The median of the repeats is reported.

``python -m benchmarks.commands [FRAGMENTS [VERSIONS]]`` prints the table
(the datasets' sizes: 10,000 and 211 by default);
``LANCE_CONFORMANCE_BENCH_REPEATS`` sets the repeats (default 5). The
children inherit the environment, so ``PYTHONPATH=OTHER_CHECKOUT`` times
another checkout's commands (the first line printed says which one runs;
the children run in the data directory, so the working directory adds no
checkout to their import path).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .common import DATA_DIR, Measurement
from .reader import _many_fragments, _many_versions

REPEATS = int(os.environ.get("LANCE_CONFORMANCE_BENCH_REPEATS", "5"))
#: A wide guard against a hung child, never a measurement.
_TIMEOUT_SECONDS = 1800
#: The columns of this benchmark's table.
COLUMNS = ("lance-conformance", "pylance")

#: pylance opening the latest version (``sys.argv[1]``), validating it as
#: pylance can and counting its rows.
PYLANCE_VALIDATE = "import lance, sys; d = lance.dataset(sys.argv[1]); d.validate(); d.count_rows()"

#: The same for every version, oldest first.
PYLANCE_VALIDATE_ALL = """
import lance, sys
latest = lance.dataset(sys.argv[1])
for v in [v["version"] for v in latest.versions()]:
    d = lance.dataset(sys.argv[1], version=v)
    d.validate()
    d.count_rows()
"""

#: pylance reading what ``describe`` prints: the version, the schema, the
#: row count and every fragment's manifest record, printed as JSON.
PYLANCE_DESCRIBE = """
import json, lance, sys
d = lance.dataset(sys.argv[1])
print(json.dumps({
    "version": d.version,
    "schema": str(d.lance_schema),
    "num_rows": d.count_rows(),
    "fragments": [f.metadata.to_json() for f in d.get_fragments()],
}))
"""


def our_command() -> list[str]:
    """The ``lance-conformance`` console script of this environment (the
    module's own entry point where the script is not installed)."""
    script = Path(sys.executable).with_name("lance-conformance")
    return [str(script)] if script.exists() else [sys.executable, "-m", "conformance.cli"]


@dataclass(frozen=True)
class Command:
    """One row of the table: our command and pylance's, on one dataset."""

    name: str
    ours: list[str]
    pylance: list[str]


def child_environment() -> dict[str, str]:
    """The environment of the timed children: this one, with the entries of
    ``PYTHONPATH`` made absolute (the children run in the data directory, so
    ``PYTHONPATH=.`` names the checkout the benchmark was started from)."""
    environment = dict(os.environ)
    if environment.get("PYTHONPATH"):
        entries = environment["PYTHONPATH"].split(os.pathsep)
        environment["PYTHONPATH"] = os.pathsep.join(os.path.abspath(entry) for entry in entries if entry)
    return environment


def _run(command: list[str], ok: tuple[int, ...]) -> float:
    """Wall seconds of ``command`` as a child process (its output
    discarded); an exit status outside ``ok`` is an error, not a time."""
    start = time.perf_counter()
    done = subprocess.run(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=DATA_DIR,
        env=child_environment(),
        timeout=_TIMEOUT_SECONDS,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in ok:
        raise RuntimeError(f"{command} exited with {done.returncode}: {done.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


#: Exit statuses of a complete validation: 0 (clean), 1 (findings).
_VALIDATED = (0, 1)


def interleaved(command: Command, repeats: int) -> Measurement:
    _run(command.ours, _VALIDATED)  # untimed: the page cache filled for both
    _run(command.pylance, (0,))
    ours: list[float] = []
    theirs: list[float] = []
    for repeat in range(repeats):
        first_ours = repeat % 2 == 0
        if first_ours:
            ours.append(_run(command.ours, _VALIDATED))
        theirs.append(_run(command.pylance, (0,)))
        if not first_ours:
            ours.append(_run(command.ours, _VALIDATED))
    ratios = sorted(o / t for o, t in zip(ours, theirs, strict=True))
    return Measurement(
        command.name,
        statistics.median(ours),
        statistics.median(theirs),
        f"median of {repeats}; ratio per repeat {ratios[0]:.2f}-{ratios[-1]:.2f}",
        columns=COLUMNS,
    )


def _pair(name: str, arguments: list[str], pylance_script: str, path: str) -> Command:
    return Command(name, [*our_command(), *arguments, path], [sys.executable, "-c", pylance_script, path])


def commands(fragments: int = 10_000, versions: int = 211) -> list[Command]:
    """Each command on a dataset of ``fragments`` one-row fragments and on
    one of ``versions`` versions (both built by pylance on first use)."""
    many_fragments = str(_many_fragments(fragments))
    many_versions = str(_many_versions(versions))
    return [
        _pair(f"validate, {fragments:,} fragments", ["validate"], PYLANCE_VALIDATE, many_fragments),
        _pair(f"validate, {versions:,} versions", ["validate"], PYLANCE_VALIDATE, many_versions),
        _pair(
            f"validate --all-versions, {versions:,} versions",
            ["validate", "--all-versions"],
            PYLANCE_VALIDATE_ALL,
            many_versions,
        ),
        _pair(f"describe, {fragments:,} fragments", ["describe"], PYLANCE_DESCRIBE, many_fragments),
        _pair(f"describe, {versions:,} versions", ["describe"], PYLANCE_DESCRIBE, many_versions),
    ]


def code_under_test() -> str:
    """Where the children import ``conformance`` from."""
    done = subprocess.run(
        [sys.executable, "-c", "import conformance; print(conformance.__file__)"],
        capture_output=True,
        text=True,
        cwd=DATA_DIR,  # as the timed children run: no checkout in the working directory
        env=child_environment(),
        check=True,
        timeout=_TIMEOUT_SECONDS,
    )
    return str(Path(done.stdout.strip()).parent.parent)


def _circumstances() -> str:
    return f"commands run from {code_under_test()}; {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"


def bench_commands() -> list[Measurement]:
    print(_circumstances(), flush=True)
    return [interleaved(command, REPEATS) for command in commands()]


BENCHMARKS = [bench_commands]


def main() -> int:
    import lance

    from .common import table_header

    print(f"pylance {lance.__version__}, Python {sys.version.split()[0]}; {_circumstances()}")
    print(table_header(COLUMNS), flush=True)
    sizes = [int(size) for size in sys.argv[1:3]]
    for command in commands(*sizes):
        print(interleaved(command, REPEATS).row(), flush=True)
    print(f"load at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
