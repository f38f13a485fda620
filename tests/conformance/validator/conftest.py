"""Valid base datasets for the validator tests, built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.mutations import build_bases

pytest.importorskip("lance")


@pytest.fixture(scope="session")
def base_datasets(tmp_path_factory) -> dict[str, Path]:
    return build_bases(tmp_path_factory.mktemp("validator-bases"))
