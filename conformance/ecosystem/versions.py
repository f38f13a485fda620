"""The exact versions behind a run: the suite's, Python's, pyarrow's, the
golden corpus's, and each driver's own report of itself (its package and
embedded Lance versions, its capabilities: ``DriverInfo``, docs/drivers.md)."""

from __future__ import annotations

import platform
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import pyarrow

from ..drivers import Driver
from ..drivers.protocol import driver_info
from ..fixtures import corpus_version

#: The suite's distribution name on PyPI.
SUITE_DISTRIBUTION = "lance-conformance"


def _installed(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def environment_versions(corpus: Path | None = None) -> dict[str, str]:
    """The versions of everything but the drivers."""
    versions = {
        SUITE_DISTRIBUTION: _installed(SUITE_DISTRIBUTION) or "unknown (not installed)",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "pyarrow": pyarrow.__version__,
        "platform": f"{sys.platform} {platform.machine()}",
    }
    if corpus is not None:
        version = corpus_version(corpus)
        versions["golden corpus"] = f"{corpus} (version {version})" if version else str(corpus)
    return versions


def driver_report(driver: Driver, name: str) -> Mapping[str, Any]:
    """What ``driver`` reports about itself (``DriverInfo.to_json()``)."""
    return driver_info(driver, name).to_json()
