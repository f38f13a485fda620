"""The typed shapes of the canonical description (``conformance.describe``)
are the JSON Schema's document, key for key and in the schema's order, and
the drivers build exactly those shapes: the order matters because the golden
fixtures' describe files are written in it."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from conformance import describe
from conformance.describe import Description, load_schema
from conformance.drivers import pylance_driver, reference
from conformance.mutations.edit import copy_dataset, edit_manifest
from reference_impl.manifest import BasePath

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "fixtures" / "cases"

#: The schema's definition of each shape (top level, ``$defs`` and the two
#: objects the schema spells out inline).
_SHAPES = {
    "Description": lambda schema: schema,
    "FieldDescription": lambda schema: schema["$defs"]["field"],
    "DataFileDescription": lambda schema: schema["$defs"]["data_file"],
    "FragmentDescription": lambda schema: schema["$defs"]["fragment"],
    "IndexDescription": lambda schema: schema["$defs"]["index"],
    "BasePathDescription": lambda schema: schema["$defs"]["base_path"],
    "TagDescription": lambda schema: schema["$defs"]["tag"],
    "DataFormatDescription": lambda schema: schema["properties"]["data_format"],
    "WriterVersionDescription": lambda schema: schema["properties"]["writer_version"],
}


def _typed_dict(annotation) -> type | None:
    """The TypedDict an annotation holds (``list[X]``, ``X | None``), if any."""
    if typing.is_typeddict(annotation):
        return annotation
    for argument in typing.get_args(annotation):
        found = _typed_dict(argument)
        if found is not None:
            return found
    return None


def shape_problems(document, shape: type, path: str = "") -> list[str]:
    """Where ``document`` (and every object inside it) has other keys than
    ``shape`` declares, or the same keys in another order."""
    if document is None:
        return []
    if isinstance(document, list):
        return [problem for i, item in enumerate(document) for problem in shape_problems(item, shape, f"{path}[{i}]")]
    hints = typing.get_type_hints(shape)
    if list(document) != list(hints):
        return [f"{path or '.'}: keys {list(document)} != {list(hints)}"]
    problems = []
    for key, annotation in hints.items():
        inner = _typed_dict(annotation)
        if inner is not None:
            problems += shape_problems(document[key], inner, f"{path}.{key}")
    return problems


@pytest.mark.parametrize("name", sorted(_SHAPES))
def test_each_shape_declares_the_schemas_properties_in_order(name):
    definition = _SHAPES[name](load_schema("describe.schema.json"))
    assert list(typing.get_type_hints(getattr(describe, name))) == list(definition["properties"])


def test_the_golden_describe_files_are_written_in_the_shapes_order():
    files = sorted(CASES.glob("*/expected/v*.describe.json"))
    assert len(files) > 50
    problems = []
    for path in files:
        document = json.loads(path.read_text(encoding="utf-8"))
        problems += [f"{path.relative_to(ROOT)}: {p}" for p in shape_problems(document, Description)]
    assert not problems, "\n".join(problems)


def test_a_shape_problem_is_found():
    """The order check can fail: a swapped pair of keys deep inside is named."""
    document = json.loads((CASES / "pylance-index-tags-restore" / "expected" / "v4.describe.json").read_text())
    tag = document["tags"][0]
    document["tags"][0] = {"version": tag["version"], "name": tag["name"], "branch": tag["branch"]}
    assert [p.split(":")[0] for p in shape_problems(document, Description)] == [".tags[0]"]


@pytest.mark.parametrize("case", ["pylance-index-tags-restore", "ref-branch", "pylance-stable-row-ids"])
def test_both_drivers_build_the_shapes(case):
    dataset = CASES / case / "dataset"
    for driver in (reference, pylance_driver):
        for version in driver.versions(str(dataset)):
            assert shape_problems(driver.describe(str(dataset), version), Description) == [], (driver, version)


def test_base_paths_are_described_by_id_whatever_order_the_manifest_keeps(tmp_path):
    """The manifest's base paths are a set keyed by id: storing them in
    another order changes nothing in the description."""
    root = copy_dataset(CASES / "pylance-stable-row-ids" / "dataset", tmp_path / "bases")
    bases = [BasePath(id=7, path="/elsewhere/a", is_dataset_root=False, name="a"), BasePath(id=3, path="/elsewhere/b")]

    def store(order):
        def edit(manifest_file):
            manifest_file.manifest.base_paths = list(order)

        edit_manifest(root, edit)
        return reference.describe(str(root))

    forward, backward = store(bases), store(reversed(bases))
    assert [base["id"] for base in forward["base_paths"]] == [3, 7]
    assert forward == backward
