"""What a zoo feature is: a name, a builder writing one small dataset with
pylance or LanceDB, and what to say when the installed release lacks it."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


class FeatureUnavailable(Exception):
    """The installed pylance or LanceDB does not offer the feature a builder
    exercises; the message says what is missing. The zoo records it as a
    skipped feature, never as a silent absence."""


class ZooBuildError(AssertionError):
    """A builder ran but the dataset does not show the feature it is named
    after (pylance changed behaviour): the zoo would silently weaken."""


def require(condition: bool, message: str) -> None:
    """Raise :class:`ZooBuildError` unless ``condition`` (not ``assert``:
    the checks must hold under ``python -O`` too)."""
    if not condition:
        raise ZooBuildError(message)


class Writer(enum.Enum):
    """The library a builder writes with."""

    PYLANCE = "pylance"
    LANCEDB = "lancedb"


@dataclass(frozen=True)
class Feature:
    """One zoo feature. ``build(path)`` writes one dataset at ``path`` (a
    directory that does not exist yet; a builder may also write siblings named
    ``<path>-*``, such as a clone's source) and raises
    :class:`FeatureUnavailable` when the release lacks the feature.
    ``cheap`` features build in well under a second each and make up the
    default test run's subset."""

    name: str
    summary: str
    build: Callable[[Path], None]
    writer: Writer = Writer.PYLANCE
    cheap: bool = False
