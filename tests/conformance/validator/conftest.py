"""Valid base datasets for the validator tests, built once per session, and
a pylance scanner in a child process per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.mutations import build_bases
from tests.pylance_scanner import PylanceScanner

pytest.importorskip("lance")


@pytest.fixture(scope="session")
def base_datasets(tmp_path_factory) -> dict[str, Path]:
    return build_bases(tmp_path_factory.mktemp("validator-bases"))


@pytest.fixture(scope="module")
def scanner():
    """A pylance child process for the module's scans, stopped by its pid at the end."""
    child = PylanceScanner()
    try:
        yield child
    finally:
        child.stop()
