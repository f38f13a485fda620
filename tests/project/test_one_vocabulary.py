"""What a write operation is, is said once: ``WriteKind`` in
``conformance/drivers/protocol.py`` (with its operations in
``conformance/drivers/writes.py``). A second list of operation names anywhere
in the package (a tuple of kinds, an enum of step types, a dict keyed by
names) fails here, so that the harness, the strategies, the conflict matrix
and writer conformance keep speaking the one vocabulary.

A collection counts as a list of operation names when it holds at least
three strings naming write kinds (spelt with ``-`` or ``_``, singular or
plural), two of them kinds that are not also names of transaction
operations: ``append``, ``delete`` or ``update`` alone are also the
``Transaction.operation`` names of the upstream protos, which the conflict
matrix and the attribution of versions rightly list.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from conformance.drivers.writes import OPERATION_SCHEMA, WriteKind

ROOT = Path(__file__).resolve().parents[2]
VOCABULARY = ROOT / "conformance" / "drivers" / "protocol.py"
#: Modules whose lists of such words are not operations, and why.
NOT_OPERATIONS = {
    ROOT / "conformance" / "peers" / "old_pylance_writer.py": "the pylance methods an old release must have",
}
#: ``Transaction.operation`` oneof names of the upstream transaction.proto, normalised.
TRANSACTION_OPERATIONS = {
    "append",
    "delete",
    "overwrite",
    "create-index",
    "rewrite",
    "merge",
    "restore",
    "reserve-fragments",
    "update",
    "project",
    "update-config",
    "data-replacement",
    "update-mem-wal-state",
    "clone",
    "update-bases",
}


def _normalised(name: str) -> str:
    name = name.lower().replace("_", "-")
    return name[:-1] if name.endswith("columns") else name


KINDS = {_normalised(kind.value) for kind in WriteKind}
WRITE_ONLY = KINDS - TRANSACTION_OPERATIONS


def _names_in(node: ast.AST) -> list[str]:
    """The string constants a collection literal (or an enum body) holds."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = node.elts
    elif isinstance(node, ast.Dict):
        items = [key for key in node.keys if key is not None]
    elif isinstance(node, ast.ClassDef):
        items = [n.value for n in node.body if isinstance(n, ast.Assign)]
    else:
        return []
    return [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]


def _second_lists(path: Path) -> list[str]:
    found = []
    tree = ast.parse(path.read_text())
    exported = {  # ``__all__`` lists a module's names (classes called Append, Delete, ...), not operations
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets)
    }
    for node in ast.walk(tree):
        if id(node) in exported:
            continue
        names = {_normalised(name) for name in _names_in(node)}
        if len(names & KINDS) >= 3 and len(names & WRITE_ONLY) >= 2:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {sorted(names & KINDS)}")
    return found


def test_no_module_lists_operation_names_again():
    modules = [p for p in sorted((ROOT / "conformance").rglob("*.py")) if p != VOCABULARY and p not in NOT_OPERATIONS]
    assert [line for path in modules for line in _second_lists(path)] == []


def test_the_check_finds_a_second_list():
    """The check can fail: a workload table keyed by its own names is one."""
    source = 'KINDS = ("append", "delete", "add_column", "compact", "upsert_race")\n'
    tree = ast.parse(source)
    names = {_normalised(n) for n in _names_in(tree.body[0].value)}  # type: ignore[attr-defined]
    assert len(names & KINDS) >= 3 and len(names & WRITE_ONLY) >= 2
    enum_source = "class Step:\n    A = 'append'\n    B = 'drop_column'\n    C = 'tag'\n"
    names = {_normalised(n) for n in _names_in(ast.parse(enum_source).body[0])}
    assert len(names & KINDS) >= 3 and len(names & WRITE_ONLY) >= 2


def test_the_operation_schema_names_exactly_the_vocabulary_kinds():
    """The worker protocol's JSON Schema lists the kinds for other languages;
    it must say what WriteKind says."""
    schema = json.loads((ROOT / "conformance" / "schemas" / OPERATION_SCHEMA).read_text())
    assert set(schema["properties"]["kind"]["enum"]) == {kind.value for kind in WriteKind}
