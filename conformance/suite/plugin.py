"""The pytest plugin (entry point ``pytest11``: ``lance_conformance``).

It adds the ``--lance-*`` options to every pytest run and otherwise stays
out of the way: a suite module of this package (``readers.py``,
``properties.py``, ...) is collected only when pytest is pointed at the
package (``--pyargs conformance.suite``), and the driver is loaded only when
one is named. A driver module runs in a worker process (``worker:MODULE``,
:func:`conformance.drivers.isolated_driver_name`), so a crash of native code
fails a check, not the pytest run; ``--lance-in-process`` (or the ini option
``lance_in_process = true``) loads it into pytest's own process. Each suite
module is collected as a file of checks, each check an item whose verdict
becomes a pytest outcome (:mod:`.checks`). ``--lance-json FILE`` also writes
the run's results as one JSON document for the dashboard (:mod:`.json_report`;
``--lance-run-date DAY`` files it under a day).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..drivers import isolated_driver_name
from ..expectations import ExpectationsError
from ..fixtures import corpus_root
from ..run_stamp import RUN_DATE_HELP, run_date_argument, stamp
from .checks import Check, Status, Suite, Verdict, with_expectation
from .json_report import STATUS_PROPERTY, SUITE_PROPERTY, SuiteRunReport, write_report
from .run import (
    DRIVER_ENV,
    NO_EXPECTATIONS,
    SuiteConfigError,
    SuiteRun,
    driver_name_from,
    expectations_file,
    parse_suites,
)

#: The directory of this package: the suite modules live here.
SUITE_DIR = Path(__file__).resolve().parent
RUN_KEY = pytest.StashKey[SuiteRun]()
#: The name the ``--lance-json`` writer is registered under.
JSON_PLUGIN = "lance-conformance-json"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lance-conformance", "Lance conformance suite (pytest --pyargs conformance.suite)")
    group.addoption(
        "--lance-driver",
        metavar="NAME|MODULE|CMD",
        help="the implementation under test: a shipped driver name, a driver module, or a worker "
        f"(default: ${DRIVER_ENV})",
    )
    group.addoption(
        "--lance-in-process",
        action="store_true",
        default=None,
        help="load a driver module into this process instead of running it in a worker process "
        "(default: the ini option lance_in_process, else false)",
    )
    parser.addini(
        "lance_in_process",
        type="bool",
        default=False,
        help="load a driver module named by --lance-driver into pytest's process instead of a worker",
    )
    group.addoption(
        "--lance-expectations",
        metavar="FILE",
        help="the implementation's expected failures (JSON; default: the file shipped for the driver, if any; "
        f"{NO_EXPECTATIONS!r} for none)",
    )
    group.addoption(
        "--lance-suite",
        metavar="SUITES",
        help=f"comma-separated parts to run (default: all): {', '.join(s.value for s in Suite)}",
    )
    group.addoption(
        "--lance-json",
        metavar="FILE",
        help="also write the results as JSON (one entry per check with its status; "
        "conformance/schemas/suite-run-report.schema.json), for lance-conformance dashboard",
    )
    group.addoption("--lance-run-date", metavar="DAY", type=run_date_argument, help=RUN_DATE_HELP)


def pytest_configure(config: pytest.Config) -> None:
    name = driver_name_from(config.getoption("lance_driver"))
    if name is None:
        return
    in_process = config.getoption("lance_in_process")
    if in_process is None:
        in_process = config.getini("lance_in_process")
    name = isolated_driver_name(name, in_process=bool(in_process))
    option = config.getoption("lance_expectations")
    try:
        expectations = expectations_file(option)
        suites = parse_suites(config.getoption("lance_suite"))
    except SuiteConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[RUN_KEY] = SuiteRun(name, expectations, suites, option or "")
    # The file is written by the process that gathers every report (not by an xdist worker).
    if config.getoption("lance_json") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(JsonReportWriter(config, config.getoption("lance_json")), JSON_PLUGIN)


def pytest_sessionstart(session: pytest.Session) -> None:
    run = session.config.stash.get(RUN_KEY, None)
    if run is None:
        return
    try:
        # A name that names no driver, or shipped expectations that do not
        # load, is a usage error, said once.
        run.prepare()
    except (SuiteConfigError, ExpectationsError) as exc:
        raise pytest.UsageError(str(exc)) from None


class JsonReportWriter:
    """Registered when ``--lance-json`` is given: gathers each check's report
    and writes the document when the session finishes (:mod:`.json_report`)."""

    def __init__(self, config: pytest.Config, path: str):
        self.config = config
        self.path = path
        self.gathered = SuiteRunReport()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.gathered.record(report)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        run = self.config.stash.get(RUN_KEY, None)
        if run is None:
            return
        document = self.gathered.to_json(
            driver=run.info.to_json(),
            suites=run.suites,
            expectations=run.expectations_source or f"shipped expectations of {run.info.implementation}",
            run=stamp(self.config.getoption("lance_run_date")),
        )
        write_report(self.path, document)


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is not None:
        run.close()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    run = config.stash.get(RUN_KEY, None)
    if run is None:
        return None
    info = run.info
    corpus = corpus_root()
    lance = f", lance {info.lance_version}" if info.lance_version else ""
    capabilities = ", ".join(sorted(c.value for c in info.capabilities))
    return [
        f"lance driver: {run.driver_name} ({info.implementation} {info.version}{lance})",
        f"lance capabilities: {capabilities or 'none'}",
        f"lance expectations: {run.expectations_source} ({len(run.expectations.entries)} entries)",
        f"lance suites: {', '.join(sorted(s.value for s in run.suites))}",
        f"lance corpus: {corpus}",
    ]


def _suite_of(file_path: Path) -> Suite | None:
    if file_path.suffix != ".py" or file_path.resolve().parent != SUITE_DIR:
        return None
    try:
        return Suite(file_path.stem)
    except ValueError:
        return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    suite = _suite_of(file_path)
    if suite is None:
        return None
    run = parent.config.stash.get(RUN_KEY, None)
    if run is not None and suite not in run.suites:
        return None
    return SuiteModule.from_parent(parent, path=file_path, suite=suite)


class SuiteUsageError(Exception):
    """The suite was collected without a driver."""


class CheckFailed(Exception):
    def __init__(self, verdict: Verdict):
        super().__init__("\n".join(verdict.messages))
        self.verdict = verdict


class SuiteModule(pytest.File):
    """One suite module: its checks are the items."""

    def __init__(self, *, suite: Suite, **kwargs):
        super().__init__(**kwargs)
        self.suite = suite

    def collect(self) -> Iterator[CheckItem]:
        if self.config.stash.get(RUN_KEY, None) is None:
            raise SuiteUsageError(
                f"conformance.suite needs the implementation to check: --lance-driver NAME|MODULE|CMD or ${DRIVER_ENV}"
            )
        module = importlib.import_module(f"{__package__}.{self.suite.value}")
        for check in module.checks():
            yield CheckItem.from_parent(self, name=check.name, check=check)

    def repr_failure(self, excinfo):  # a collector's takes no style
        if isinstance(excinfo.value, SuiteUsageError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class CheckItem(pytest.Item):
    """One check: a golden case, a writer step, a conflict cell, a property."""

    def __init__(self, *, check: Check, **kwargs):
        super().__init__(**kwargs)
        self.check = check

    def runtest(self) -> None:
        run = self.config.stash[RUN_KEY]
        self.user_properties.append((SUITE_PROPERTY, self.check.suite.value))
        verdict = with_expectation(self.check.run(run), run.expectation(self.check.suite, self.check.name))
        self.user_properties.append((STATUS_PROPERTY, verdict.status.value))
        # Observations do not fail; they travel in the reports (JUnit properties).
        self.user_properties += [("lance_observation", observation) for observation in verdict.observations]
        message = "\n".join(verdict.messages)
        if verdict.status is Status.PASS:
            return
        if verdict.status is Status.NOT_APPLICABLE:
            # Reported at the check (its suite module), not at this line.
            raise pytest.skip.Exception(message, _use_item_location=True)
        if verdict.status is Status.EXPECTED_FAILURE:
            pytest.xfail(message)
        raise CheckFailed(verdict)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CheckFailed):
            verdict = excinfo.value.verdict
            return f"{self.check.suite.value} {self.check.name}: {verdict.status.value}\n" + "\n".join(
                f"  {message}" for message in verdict.messages
            )
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, 0, f"{self.check.suite.value}: {self.check.summary or self.check.name}"
