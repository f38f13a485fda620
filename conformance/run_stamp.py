"""When a run happened and which suite ran it: the stamp a results document
carries so that the dashboard (:mod:`conformance.dashboard`) can place it in
time, defined once for every command that writes one.

* ``generated``: when the run ended (ISO 8601, UTC), always the clock's;
* ``run_date``: the day the run is filed under (``YYYY-MM-DD``): the UTC day
  of ``generated``, unless the command was given ``--run-date DAY``. A nightly
  job that starts before midnight and ends after it, or a run of an older
  build made today, is filed under the day it belongs to; the true time
  stays in ``generated`` beside it, so a filed date never hides when the run
  really ran;
* ``suite_version``: the version of lance-conformance that judged the run.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from . import __version__

#: The name of the option every results-writing command takes.
RUN_DATE_OPTION = "--run-date"
RUN_DATE_HELP = (
    "the day the run is filed under in the results (YYYY-MM-DD; default: the UTC day it ends); "
    "the true end time is recorded beside it"
)


class RunDateError(ValueError):
    """A run date that is not a calendar day written ``YYYY-MM-DD``."""


def parse_run_date(text: str) -> str:
    """``text`` when it is a calendar day ``YYYY-MM-DD``; :class:`RunDateError` otherwise."""
    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        raise RunDateError(f"run date {text!r} is not a day written YYYY-MM-DD") from None
    if day.isoformat() != text:  # fromisoformat also takes 20261128 and the like
        raise RunDateError(f"run date {text!r} is not a day written YYYY-MM-DD")
    return text


def run_date_argument(text: str) -> str:
    """:func:`parse_run_date` as an argparse ``type`` (a bad day is a usage error)."""
    # lazy: argparse is only needed by a command line parsing the option
    import argparse

    try:
        return parse_run_date(text)
    except RunDateError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def now_utc() -> str:
    """This instant, as a run records it (ISO 8601, UTC, to the second)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RunStamp:
    generated: str
    run_date: str
    suite_version: str = __version__

    def to_json(self) -> dict[str, str]:
        return {"generated": self.generated, "run_date": self.run_date, "suite_version": self.suite_version}


def stamp(run_date: str | None = None, generated: str | None = None) -> RunStamp:
    """The stamp of a run ending now (or at ``generated``), filed under
    ``run_date`` when given, else under the day it ends."""
    ended = generated or now_utc()
    return RunStamp(ended, parse_run_date(run_date) if run_date is not None else ended[:10])
