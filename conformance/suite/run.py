"""The settings of one suite run and the one driver it loads.

The driver is chosen by ``--lance-driver`` or ``LANCE_CONFORMANCE_DRIVER``;
the expectations are ``--lance-expectations FILE``, else the file shipped
for the driver's implementation (``conformance/data/expectations/<name>.json``,
empty when there is none: :func:`conformance.expectations.shipped_expectations`),
and ``--lance-expectations none`` asks for none. Either way only the entries
that concern the release under test (``DriverInfo.version``) count. The
driver is loaded once per process and closed at the end of the session.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..drivers import Driver, DriverError, close_driver, load_driver
from ..drivers.protocol import Capability, DriverInfo, driver_info
from ..expectations import (
    Expectation,
    Expectations,
    ExpectationsError,
    implementation_and_release,
    load_expectations,
    shipped_expectations,
)
from .checks import Suite

DRIVER_ENV = "LANCE_CONFORMANCE_DRIVER"
#: ``--lance-expectations none``: run without any expectations.
NO_EXPECTATIONS = "none"


class SuiteConfigError(Exception):
    """The options name no usable driver, expectations file or suite."""


def parse_suites(text: str | None) -> frozenset[Suite]:
    """``readers,writers`` -> the suites; every suite when not given."""
    if not text:
        return frozenset(Suite)
    chosen = set()
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        try:
            chosen.add(Suite(name))
        except ValueError:
            known = ", ".join(s.value for s in Suite)
            raise SuiteConfigError(f"--lance-suite: unknown suite {name!r} (known: {known})") from None
    return frozenset(chosen)


def driver_name_from(option: str | None) -> str | None:
    return option or os.environ.get(DRIVER_ENV) or None


def expectations_file(option: str | None) -> Expectations | None:
    """The expectations ``--lance-expectations`` names (None: the shipped ones)."""
    if option is None:
        return None
    if option == NO_EXPECTATIONS:
        return Expectations(implementation="none", entries=())
    try:
        return load_expectations(Path(option))
    except ExpectationsError as exc:
        raise SuiteConfigError(f"--lance-expectations: {exc}") from None


@dataclass
class SuiteRun:
    driver_name: str
    #: The file's expectations, or None for the shipped ones.
    given_expectations: Expectations | None
    suites: frozenset[Suite]
    expectations_source: str = ""
    _driver: Driver | None = field(default=None, repr=False)
    _info: DriverInfo | None = field(default=None, repr=False)
    _expectations: Expectations | None = field(default=None, repr=False)
    #: Results a suite computes once for many checks (the writer script's run).
    shared: dict[str, object] = field(default_factory=dict, repr=False)

    def prepare(self) -> None:
        """Load the driver and the expectations now (raising what they raise)."""
        self._expectations = None
        self.expectations  # noqa: B018 - loads the driver and its expectations

    @property
    def driver(self) -> Driver:
        if self._driver is None:
            try:
                self._driver = load_driver(self.driver_name)
            except DriverError as exc:
                raise SuiteConfigError(str(exc)) from None
        return self._driver

    @property
    def info(self) -> DriverInfo:
        if self._info is None:
            self._info = driver_info(self.driver, self.driver_name)
        return self._info

    def has(self, capability: Capability) -> bool:
        return capability in self.info.capabilities

    @property
    def expectations(self) -> Expectations:
        """The entries that concern the release under test."""
        if self._expectations is None:
            version = None if self.info.version in ("", "unknown") else self.info.version
            if self.given_expectations is None:
                self._expectations = shipped_expectations(self.driver_name, version)
                self.expectations_source = f"shipped for {implementation_and_release(self.driver_name)[0]}"
            else:
                self._expectations = self.given_expectations.for_release(version)
        return self._expectations

    def expectation(self, suite: Suite, case: str) -> Expectation | None:
        return self.expectations.lookup(suite.value, case)

    def close(self) -> None:
        if self._driver is not None:
            close_driver(self._driver)
            self._driver = None
