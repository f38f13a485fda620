"""Valid base datasets for the validator tests, built once per run, and
a pylance scanner in a child process per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.mutations import build_bases
from tests.pylance_scanner import PylanceScanner
from tests.shared_build import built_once

pytest.importorskip("lance")


@pytest.fixture(scope="session")
def base_datasets(tmp_path_factory) -> dict[str, Path]:
    return built_once(tmp_path_factory, "validator-bases", build_bases)


@pytest.fixture(scope="module")
def scanner():
    """A pylance child process for the module's scans, stopped by its pid at the end."""
    child = PylanceScanner()
    try:
        yield child
    finally:
        child.stop()
