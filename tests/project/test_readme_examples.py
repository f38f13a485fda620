"""The code examples of the README and of the docs pages its reference
material lives in run as written.

Every fenced ``python`` block of README.md and of :data:`DOC_PAGES` runs in a
fresh namespace, in a temporary working directory. A block that stands for a
user's own code (it calls the user's writer or validator) is marked with
:data:`OWN_CODE_MARK` on the line before its fence; such a block is only
compiled, and every name it takes from this project must exist. The
``lance-conformance validate PATH ...`` shell examples run through
:func:`conformance.cli.main` on a dataset the test writes, and so do the
synopses with their optional parts left out; every other shell command (the
fixture commands rebuild or read the whole corpus) is checked to name a
subcommand and options that exist.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest

from conformance.cli import main as cli_main
from reference_impl.dataset import Dataset

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: The hand-written pages the README links to for its reference material
#: (the generated ones, docs/rules.md and the like, have tests of their own).
DOC_PAGES = tuple(
    ROOT / "docs" / name
    for name in (
        "validating.md",
        "testing-an-implementation.md",
        "property-tests.md",
        "harness.md",
        "reference-implementation.md",
        "layout.md",
    )
)
DOCUMENTS = (README, *DOC_PAGES)

#: The marker, alone on the line before a fence, of an example that stands for
#: the reader's own code (names starting with ``my_`` are theirs).
OWN_CODE_MARK = "<!-- example: stands for your own code -->"
PROJECT_PACKAGES = ("reference_impl", "conformance")


@dataclass(frozen=True)
class Example:
    language: str
    code: str
    #: 1-based line of the opening fence in its document.
    line: int
    stands_for_own_code: bool
    #: The document's path relative to the repository.
    source: str = "README.md"

    @property
    def name(self) -> str:
        return f"{self.source}:{self.line}"


def readme_examples(text: str, source: str = "README.md") -> list[Example]:
    """Every fenced block of ``text`` (the document ``source``), in order."""
    lines = text.splitlines()
    examples: list[Example] = []
    index = 0
    while index < len(lines):
        fence = lines[index].strip()
        if not fence.startswith("```") or fence == "```":
            index += 1
            continue
        start = index
        index += 1
        body: list[str] = []
        while index < len(lines) and lines[index].strip() != "```":
            body.append(lines[index])
            index += 1
        before = next((lines[i].strip() for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        examples.append(Example(fence[3:].strip(), "\n".join(body) + "\n", start + 1, before == OWN_CODE_MARK, source))
        index += 1
    return examples


EXAMPLES = [
    example
    for document in DOCUMENTS
    for example in readme_examples(document.read_text(encoding="utf-8"), str(document.relative_to(ROOT)))
]
RUNNABLE_PYTHON = [e for e in EXAMPLES if e.language == "python" and not e.stands_for_own_code]
OWN_CODE_PYTHON = [e for e in EXAMPLES if e.language == "python" and e.stands_for_own_code]


def run_python_example(example: Example, directory: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Run ``example`` in a fresh namespace with ``directory`` as the working
    directory; returns the namespace it leaves."""
    monkeypatch.chdir(directory)
    namespace: dict = {"__name__": "__readme_example__"}
    exec(compile(example.code, example.name, "exec"), namespace)
    return namespace


def _bound_names(tree: ast.AST) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    return bound


def project_names_missing(tree: ast.AST) -> list[str]:
    """``module.name`` for each name the code imports from this project (or
    reads as an attribute of a project module it imported) that does not exist."""
    modules: dict[str, object] = {}
    missing: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PROJECT_PACKAGES:
            module = importlib.import_module(node.module)
            for alias in node.names:
                if not hasattr(module, alias.name):
                    try:
                        modules[alias.asname or alias.name] = importlib.import_module(f"{node.module}.{alias.name}")
                    except ImportError:
                        missing.append(f"{node.module}.{alias.name}")
                    continue
                value = getattr(module, alias.name)
                if type(value) is type(importlib):
                    modules[alias.asname or alias.name] = value
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PROJECT_PACKAGES:
                    modules[alias.asname or alias.name] = importlib.import_module(alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            if not hasattr(modules[node.value.id], node.attr):
                missing.append(f"{node.value.id}.{node.attr}")
    return missing


def test_the_documents_have_examples_of_both_kinds():
    """The Python examples are found, the marked ones among them, and the
    README has a runnable one of its own."""
    assert RUNNABLE_PYTHON and OWN_CODE_PYTHON
    assert any(example.source == "README.md" for example in RUNNABLE_PYTHON)


@pytest.mark.parametrize("example", RUNNABLE_PYTHON, ids=lambda e: e.name)
def test_python_example_runs_as_written(example, tmp_path, monkeypatch, capsys):
    """The example runs to the end without an error."""
    run_python_example(example, tmp_path, monkeypatch)


@pytest.mark.parametrize("example", OWN_CODE_PYTHON, ids=lambda e: e.name)
def test_own_code_example_uses_only_names_that_exist(example):
    """An example standing for the reader's own code compiles, every name it
    takes from this project exists, and every name it uses is defined by it,
    by an example of the same document before it, or is the reader's own (``my_...``)."""
    tree = ast.parse(compile(example.code, example.name, "exec", ast.PyCF_ONLY_AST))
    assert project_names_missing(tree) == []
    earlier = [e for e in OWN_CODE_PYTHON if e.source == example.source and e.line <= example.line]
    bound = set().union(*(_bound_names(ast.parse(e.code)) for e in earlier))
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    unknown = sorted(used - bound - set(dir(builtins)))
    assert [name for name in unknown if not name.startswith("my_")] == []


def _validate_command_blocks() -> list[Example]:
    """The shell examples made only of ``lance-conformance validate PATH ...``
    commands (not synopses, which show options in brackets)."""
    found = []
    for example in EXAMPLES:
        if example.language != "sh":
            continue
        commands = [shlex.split(line, comments=True) for line in example.code.splitlines()]
        commands = [c for c in commands if c]
        if commands and all(
            c[:3] == ["lance-conformance", "validate", "PATH"] and "[" not in " ".join(c) for c in commands
        ):
            found.append(example)
    return found


VALIDATE_BLOCKS = _validate_command_blocks()


def test_the_validate_examples_are_found():
    assert VALIDATE_BLOCKS


@pytest.mark.parametrize("example", VALIDATE_BLOCKS, ids=lambda e: e.name)
def test_validate_example_runs_as_written(example, tmp_path, monkeypatch, capsys):
    """Each command of the example, on a valid dataset, exits 0 (no finding
    fails the run), in order, sharing the working directory."""
    root = tmp_path / "data"
    Dataset.create(root, pa.table({"id": [1, 2, 3]}))
    monkeypatch.chdir(tmp_path)
    for line in example.code.splitlines():
        argv = shlex.split(line, comments=True)
        if not argv:
            continue
        argv = [str(root) if word == "PATH" else word for word in argv[1:]]
        assert cli_main(argv) == 0, (example.name, line, capsys.readouterr())


def test_a_broken_example_fails(tmp_path, monkeypatch):
    """The runner reports an example that does not run as written."""
    broken = readme_examples("```python\nfrom reference_impl.dataset import Datasett\n```\n")
    with pytest.raises(ImportError):
        run_python_example(broken[0], tmp_path, monkeypatch)
    marked = readme_examples(
        f"{OWN_CODE_MARK}\n```python\nfrom conformance import strategies\nstrategies.no_such\n```\n"
    )
    assert marked[0].stands_for_own_code
    assert project_names_missing(ast.parse(marked[0].code)) == ["strategies.no_such"]


def readme_commands(examples: list[Example]) -> list[tuple[Example, str]]:
    """Every ``lance-conformance ...`` command of the shell examples, a
    synopsis's indented continuation lines joined to its first line."""
    found: list[tuple[Example, str]] = []
    for example in examples:
        if example.language != "sh":
            continue
        for line in example.code.splitlines():
            if line.startswith("lance-conformance "):
                found.append((example, line.split("  #")[0].strip()))
            elif line.startswith(" ") and found and found[-1][0] is example:
                found[-1] = (example, f"{found[-1][1]} {line.strip()}")
    return found


COMMANDS = readme_commands(EXAMPLES)


def _subcommand(command: str) -> list[str]:
    """The subcommand words of ``command``: those before its first option,
    placeholder (``PATH``) or bracket."""
    words = []
    for word in command.split()[1:]:
        if word.startswith(("-", "[")) or word.isupper():
            break
        words.append(word)
    return words


@pytest.mark.parametrize("command", [c for _, c in COMMANDS], ids=lambda c: " ".join(_subcommand(c)))
def test_shell_example_names_a_command_and_options_that_exist(command, capsys):
    """Every subcommand a README shell example or synopsis shows exists, and
    its ``--help`` lists every option the example uses."""
    with pytest.raises(SystemExit) as exit:
        cli_main([*_subcommand(command), "--help"])
    assert exit.value.code == 0
    listed = capsys.readouterr().out
    options = sorted(set(re.findall(r"--[a-z][a-z-]*", command)))
    assert [option for option in options if option not in listed] == []


SYNOPSES = [c for _, c in COMMANDS if "[" in c]


@pytest.mark.parametrize("synopsis", SYNOPSES, ids=lambda c: " ".join(_subcommand(c)))
def test_synopsis_runs_without_its_optional_parts(synopsis, tmp_path, capsys):
    """A synopsis with its bracketed (optional) parts left out runs on a valid
    dataset and exits 0."""
    root = tmp_path / "data"
    Dataset.create(root, pa.table({"id": [1, 2, 3]}))
    required = re.sub(r"\[[^\]]*\]", "", synopsis).split()[1:]
    argv = [str(root) if word == "PATH" else word for word in required]
    assert cli_main(argv) == 0, (synopsis, capsys.readouterr())
