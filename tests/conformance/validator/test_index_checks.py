"""The index rules' bodies live in conformance/validator/index_checks/ and
are loaded only for a version with a segment of the rule's index type
(index_checks.checks). A rule body calls its check by name on what
``checks`` returns, which the type checker cannot follow: these tests check
the names, the choice between the module and the stand-in, and that the rule
declarations alone load neither numpy nor pyarrow."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import conformance.validator
from conformance.fixtures import default_corpus
from conformance.validator.context import DatasetView, VersionView
from conformance.validator.index_checks import MODULES, checks, has_segments
from conformance.validator.ruleset import all_rules
from reference_impl.indices.types import IndexType
from reference_impl.storage.local import LocalStorage

VALIDATOR = Path(conformance.validator.__file__).parent
RULE_MODULES = sorted((VALIDATOR / "rules").glob("index_*.py"))
CASES = Path(default_corpus()) / "cases"


def _latest(case: str) -> VersionView:
    dataset = DatasetView(LocalStorage(str(CASES / case / "dataset")))
    return dataset.version_view(max(dataset.manifest_paths()))


def _called_checks(path: Path) -> set[str]:
    """The names called on the result of ``checks(...)`` in a rule module."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "checks"
        ):
            names.add(node.attr)
    return names


def test_each_index_rule_module_has_its_module_of_checks():
    assert sorted(path.stem.removeprefix("index_") for path in RULE_MODULES) == sorted(set(MODULES.values()))


@pytest.mark.parametrize("path", RULE_MODULES, ids=lambda path: path.stem)
def test_every_check_a_rule_calls_exists(path):
    called = _called_checks(path)
    module = importlib.import_module(f"conformance.validator.index_checks.{path.stem.removeprefix('index_')}")
    assert called, f"{path.name} calls no check"
    assert sorted(name for name in called if not callable(getattr(module, name, None))) == []


def test_a_version_with_segments_gets_the_module_of_their_type():
    view = _latest("pylance-scalar-indices")
    present = {IndexType.of(index) for index in view.manifest_file.indices or []}
    assert IndexType.BTREE in present and IndexType.VECTOR not in present
    for index_type in MODULES:
        assert has_segments(view, index_type) is (index_type in present)
    assert checks(view, IndexType.BTREE) is importlib.import_module("conformance.validator.index_checks.btree")
    assert list(checks(view, IndexType.VECTOR).rows_once(view)) == []


def test_a_version_without_index_segments_gets_no_index_finding():
    view = _latest("pylance-deletion-bitmap")
    assert not any(has_segments(view, index_type) for index_type in MODULES)
    index_rules = [r for r in all_rules() if r.check.__module__.split(".")[-1] in {p.stem for p in RULE_MODULES}]
    assert len(index_rules) > 40
    assert [r.id for r in index_rules if list(r.check(view) or ())] == []


def test_the_rule_declarations_load_neither_numpy_nor_pyarrow():
    probe = (
        "import sys\n"
        f"from conformance.validator.rules import {', '.join(path.stem for path in RULE_MODULES)}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pyarrow'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
