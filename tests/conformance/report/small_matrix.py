"""A small real ecosystem matrix for the page's tests: three golden cases
read by the reference and by pylance (one passes everywhere, one is a known
pylance deviation, one has its expected row count changed, so both readers
fail it with a real message), plus the stored conflict matrix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.ecosystem.model import EcosystemMatrix
from conformance.ecosystem.run import run_ecosystem
from conformance.fixtures import default_corpus

#: The case whose expected description is changed so that every reader fails it.
BROKEN_CASE = "ref-tags"
CASES = (BROKEN_CASE, "crafted-external-row-ids", "pylance-types")


def small_corpus(root: Path) -> Path:
    for name in CASES:
        shutil.copytree(default_corpus() / "cases" / name, root / "cases" / name)
    describe = root / "cases" / BROKEN_CASE / "expected" / "v2.describe.json"
    document = json.loads(describe.read_text(encoding="utf-8"))
    document["num_rows"] += 1
    describe.write_text(json.dumps(document), encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def ecosystem_matrix(tmp_path_factory) -> EcosystemMatrix:
    pytest.importorskip("lance")
    corpus = small_corpus(tmp_path_factory.mktemp("corpus"))
    return run_ecosystem(["reference", "pylance"], corpus)
