"""The properties suite: generated tables cross between the driver and the reference.

Each check runs a Hypothesis property over tables from
:func:`conformance.strategies.arrow_tables` (nulls, nesting, sliced
arrays), derandomized so that every run draws the same examples; a
counterexample is shrunk and reported with the failing table.

- ``reference-writes-driver-reads``: a table the reference writes (one
  version, file format 2.0) is read back by the driver with the same rows
  (needs ``read-latest``);
- ``driver-writes-reference-reads``: a table the driver creates at its
  default file version (2.2 for pylance 14 and LanceDB; the reference reads
  2.0 to 2.2) validates without errors and the reference reads the same
  rows (needs ``write`` with ``create``; not applicable when that default is
  a file version the reference does not read, such as the legacy 0.1).

Rows are compared by meaning (:func:`conformance.comparison.compare_tables`):
representation differences (nullability flags, offset widths, a wider type)
do not fail, value differences do. The driver's declared type capabilities
(``DriverInfo.types``) hold: columns of a type it cannot represent are not
compared when it reads, and left out of the tables it is asked to write.

A failure is reported short: the message, the falsifying example and the
``@reproduce_failure`` line (the examples are derandomized, so a rerun finds
it again). Shrinking a counterexample stops after :data:`SHRINK_SECONDS`
(:class:`ShrinkDeadline`), reporting the smallest one found by then.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
from hypothesis import HealthCheck, Phase, given, settings

from reference_impl.dataset import Dataset
from reference_impl.file_format.footer import NEWEST_VERSION, V2_0_VERSION

from ..comparison import compare_tables
from ..comparison.arrow_types import types_held
from ..drivers import is_implementation_failure, writes
from ..drivers.protocol import Capability
from ..drivers.writes import WriteKind
from ..strategies import arrow_tables
from ..type_capabilities import TypeCapabilities
from ..validator import Severity, validate
from .checks import Check, Status, Suite, Verdict
from .run import SuiteRun

#: Examples per property: enough to meet every type the strategy draws in a
#: few seconds per property with the reference.
MAX_EXAMPLES = 40
MAX_ROWS = 20
#: Seconds spent shrinking a counterexample, from its first failure, before
#: the smallest one found so far is reported.
SHRINK_SECONDS = 60.0
#: Characters of each Hypothesis note kept in a failure's report.
MAX_NOTE_CHARS = 2000


class PropertyFailure(AssertionError):
    """A counterexample: what differed for the table Hypothesis drew."""


def _failure(exc: BaseException) -> str:
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message}"


def reference_writes_driver_reads(run: SuiteRun, table: pa.Table) -> None:
    with tempfile.TemporaryDirectory(prefix="lance-suite-properties-") as scratch:
        uri = str(Path(scratch) / "table.lance")
        Dataset.create(uri, table)
        try:
            read = run.driver.read_table(uri)
        except BaseException as exc:  # the implementation's own failure (a Rust panic too) is the finding
            if not is_implementation_failure(exc):
                raise
            raise PropertyFailure(f"the driver could not read it: {_failure(exc)}") from None
        compared = compare_tables(table, read, run.info.types)
        if not compared.equal:
            raise PropertyFailure("; ".join(compared.differences))


def representable(table: pa.Table, capabilities: TypeCapabilities) -> pa.Table:
    """``table`` without the columns holding a type the driver declares it cannot represent."""
    if not capabilities.unsupported:
        return table
    kept = [f.name for f in table.schema if not types_held(f) & capabilities.unsupported]
    return table.select(kept)


def driver_writes_reference_reads(run: SuiteRun, table: pa.Table) -> None:
    table = representable(table, run.info.types)
    with tempfile.TemporaryDirectory(prefix="lance-suite-properties-") as scratch:
        uri = str(Path(scratch) / "table.lance")
        try:
            # No version named: the driver's default, what its users' tables hold.
            run.driver.write(uri, writes.Create(table))  # type: ignore[attr-defined]
        except BaseException as exc:
            if not is_implementation_failure(exc):
                raise
            raise PropertyFailure(f"the driver could not write it: {_failure(exc)}") from None
        errors = sorted({f"{f.rule}: {f.message}" for f in validate(uri).findings if f.severity is Severity.ERROR})
        if errors:
            raise PropertyFailure("the validator reports errors: " + "; ".join(errors[:5]))
        try:
            read = Dataset.open(uri).to_table()
        except Exception as exc:  # the reference refusing what the driver wrote is the finding
            raise PropertyFailure(f"the reference could not read it: {_failure(exc)}") from None
        compared = compare_tables(table, read)
        if not compared.equal:
            raise PropertyFailure("; ".join(compared.differences))


class ShrinkDeadline:
    """Shrinking bounded in time, around a property.

    Hypothesis shrinks a counterexample for up to five minutes and has no
    setting to shorten that (its maintainers keep the shrinker internal:
    HypothesisWorks/hypothesis#3400). Once ``seconds`` have passed since the
    first failure, this wrapper runs the property only on tables it has seen
    fail (they fail again, as Hypothesis expects when it replays the example
    it reports) and takes every other table to pass: the shrinker then finds
    nothing smaller and ends, reporting the smallest failing table so far."""

    def __init__(self, seconds: float = SHRINK_SECONDS):
        self.seconds = seconds
        self.first_failure: float | None = None
        self._failing: set[bytes] = set()
        #: Tables taken to pass without running the property (shrinking cut short).
        self.skipped = 0

    @property
    def expired(self) -> bool:
        return self.first_failure is not None and time.monotonic() - self.first_failure >= self.seconds

    def run(self, prop: Callable[[SuiteRun, pa.Table], None], run: SuiteRun, table: pa.Table) -> None:
        key = _fingerprint(table)
        if self.expired and key not in self._failing:
            self.skipped += 1
            return
        try:
            prop(run, table)
        except BaseException:
            self._failing.add(key)
            if self.first_failure is None:
                self.first_failure = time.monotonic()
            raise


def _fingerprint(table: pa.Table) -> bytes:
    """Equal for the same table drawn twice (the same schema and values in the same chunks)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return hashlib.sha256(sink.getvalue().to_pybytes()).digest()


def _holds(
    run: SuiteRun, prop: Callable[[SuiteRun, pa.Table], None], shrink_seconds: float = SHRINK_SECONDS
) -> Verdict:
    deadline = ShrinkDeadline(shrink_seconds)

    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        # The same examples every run: a conformance result (and the
        # expectations file that records it) must not depend on the seed.
        derandomize=True,
        # The implementer's working directory stays clean; the failing
        # example is printed instead.
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        # The counterexample is the report; which of the project's lines ran is not.
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        # One counterexample, reported with the line that replays it.
        report_multiple_bugs=False,
        print_blob=True,
    )
    @given(arrow_tables(max_rows=MAX_ROWS))
    def check(table: pa.Table) -> None:
        deadline.run(prop, run, table)

    try:
        check()
    except PropertyFailure as exc:
        return Verdict.failed([str(exc), *_notes(exc), *_cut_short(deadline)])
    except Exception as exc:  # Hypothesis's own errors, or the suite's: said in a line, never as a traceback
        return Verdict.failed([f"the property could not run: {_failure(exc)}", *_notes(exc), *_cut_short(deadline)])
    return Verdict.passed()


def _notes(exc: BaseException) -> list[str]:
    """Hypothesis's notes on a failure: the falsifying example (cut to
    :data:`MAX_NOTE_CHARS`: an unshrunk table prints tens of kilobytes) and
    the ``@reproduce_failure`` line that replays it whole."""
    notes = [str(note) for note in getattr(exc, "__notes__", [])]
    return [
        note if len(note) <= MAX_NOTE_CHARS else f"{note[:MAX_NOTE_CHARS]}... ({len(note)} characters)"
        for note in notes
    ]


def _cut_short(deadline: ShrinkDeadline) -> list[str]:
    if not deadline.skipped:
        return []
    return [f"(shrinking stopped after {deadline.seconds:g} s: the example may not be the smallest)"]


def _reference_writes_driver_reads(run: SuiteRun) -> Verdict:
    if not run.has(Capability.READ_LATEST):
        return Verdict.not_applicable(Capability.READ_LATEST.value)
    return _holds(run, reference_writes_driver_reads)


def _driver_writes_reference_reads(run: SuiteRun) -> Verdict:
    if not run.has(Capability.WRITE):
        return Verdict.not_applicable(Capability.WRITE.value)
    if WriteKind.CREATE.value not in run.info.write_operations:
        return Verdict.not_applicable(f"{Capability.WRITE.value}: {WriteKind.CREATE.value}")
    unread = _default_version_the_reference_does_not_read(run)
    if unread is not None:
        return Verdict(
            Status.NOT_APPLICABLE,
            (f"not applicable: the driver writes file version {unread} by default, which the reference does not read",),
        )
    return _holds(run, driver_writes_reference_reads)


def _default_version_the_reference_does_not_read(run: SuiteRun) -> str | None:
    """The data storage version of a one-row table the driver creates at its
    default, when it is outside the versions the reference reads (None when
    it is inside, or when the driver fails: the property then reports that)."""
    with tempfile.TemporaryDirectory(prefix="lance-suite-properties-") as scratch:
        uri = str(Path(scratch) / "table.lance")
        try:
            run.driver.write(uri, writes.Create(pa.table({"id": pa.array([1], pa.int64())})))  # type: ignore[attr-defined]
            data_format = Dataset.open(uri).manifest.data_format
        except Exception:
            return None
        version = data_format.version if data_format is not None else ""
        major, _, minor = version.partition(".")
        if major.isdigit() and minor.isdigit() and V2_0_VERSION <= (int(major), int(minor)) <= NEWEST_VERSION:
            return None
        return version or "(none recorded)"


def checks() -> list[Check]:
    return [
        Check(
            Suite.PROPERTIES,
            "reference-writes-driver-reads",
            _reference_writes_driver_reads,
            "tables the reference writes are read with the same rows by the driver",
        ),
        Check(
            Suite.PROPERTIES,
            "driver-writes-reference-reads",
            _driver_writes_reference_reads,
            "tables the driver writes validate clean and are read with the same rows by the reference",
        ),
    ]
