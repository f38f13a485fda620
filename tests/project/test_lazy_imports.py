"""conformance/ imports at the top of its modules; an import inside a function
is deliberately lazy and says why in a comment (CONTRIBUTING's style rules:
``# lazy: <reason>``), e.g. an optional package (pylance, lancedb, pyspark,
Ray, Daft), a heavy one a light path must not pay for (pyarrow under the
command line's start-up), or an import cycle it breaks.

The comment is on the import's own line, or in the comment block just above a
run of imports (consecutive import statements, blank lines between them allowed:
isort separates the standard library, third-party and project sections). It
contains the word "lazy" (or "lazily"), so that a comment about something
else above an import does not pass for a reason.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "conformance"

#: What a reason says: "lazy", "lazily", "Lazy:".
REASON = re.compile(r"\blaz(y|ily)\b", re.IGNORECASE)


@dataclass(frozen=True)
class UnexplainedImport:
    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


def _comments(source: str) -> tuple[dict[int, str], set[int]]:
    """The comment on each line (by line number), and the lines that hold
    nothing but a comment."""
    comments: dict[int, str] = {}
    code_lines: set[int] = set()
    ignored = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string
        elif token.type not in ignored:
            code_lines.update(range(token.start[0], token.end[0] + 1))
    return comments, {line for line in comments if line not in code_lines}


def _is_import(node: ast.stmt) -> bool:
    return isinstance(node, (ast.Import, ast.ImportFrom))


def _statement_lists(function: ast.AST):
    """Every list of statements inside ``function`` (its body, branches,
    handlers, nested functions' bodies)."""
    for node in ast.walk(function):
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                yield statements
        for handler in getattr(node, "handlers", ()):
            yield handler.body
        for case in getattr(node, "cases", ()):
            yield case.body


def unexplained_imports(path: Path, relative_to: Path = ROOT) -> list[UnexplainedImport]:
    """The imports inside functions of ``path`` without a reason: no comment
    naming laziness on their own lines, nor on the line above their run."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    comments, comment_lines = _comments(source)
    lines = source.splitlines()
    name = str(path.relative_to(relative_to)) if path.is_relative_to(relative_to) else path.name

    def says_why(line: int) -> bool:
        return bool(REASON.search(comments.get(line, "")))

    found: dict[int, UnexplainedImport] = {}
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for statements in _statement_lists(function):
            run_explained = False
            previous: ast.stmt | None = None
            for statement in statements:
                if not _is_import(statement):
                    previous = None
                    continue
                if previous is None:  # the first import of a run: the comment block just above it
                    block = []
                    above = statement.lineno - 1
                    while above in comment_lines:
                        block.append(above)
                        above -= 1
                    run_explained = any(says_why(line) for line in block)
                own = any(says_why(line) for line in range(statement.lineno, (statement.end_lineno or 0) + 1))
                if not (own or run_explained):
                    found[statement.lineno] = UnexplainedImport(
                        name, statement.lineno, lines[statement.lineno - 1].strip()
                    )
                previous = statement
    return [found[line] for line in sorted(found)]


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_inside_functions_say_why(path):
    """Every import inside a function of conformance/ says why it is lazy."""
    found = unexplained_imports(path)
    assert not found, "imports inside functions without a reason (# lazy: ...):\n" + "\n".join(map(str, found))


def test_the_check_tells_reasons_from_their_absence(tmp_path):
    """The check finds a bare import, an import under an unrelated comment
    and one after a statement that ends its run; it accepts a reason on the
    import's line and one above a run (isort's blank lines within it)."""
    module = tmp_path / "module.py"
    module.write_text(
        "import os\n"
        "\n"
        "\n"
        "def bare():\n"
        "    import json\n"
        "\n"
        "\n"
        "def inline():\n"
        "    import csv  # lazy: only the CSV export needs it\n"
        "\n"
        "\n"
        "def above_a_run():\n"
        '    """Doc."""\n'
        "    # lazy: pyarrow is heavy; the command line starts without it\n"
        "    import pyarrow as pa\n"
        "\n"
        "    from conformance import writes\n"
        "    value = 1\n"
        "    import decimal\n"
        "\n"
        "\n"
        "def unrelated_comment():\n"
        "    # the rows of the second version\n"
        "    import lance\n"
        "\n"
        "\n"
        "def text_is_no_comment():\n"
        '    import zlib; note = "# lazy: not a comment"\n'
        "\n"
        "\n"
        "def block_above():\n"
        "    # lazy: the reader pulls pyarrow,\n"
        "    # which the validator starts without.\n"
        "    import pyarrow\n"
        "\n"
        "\n"
        "def nested():\n"
        "    def inner():\n"
        "        if True:\n"
        "            import gzip\n"
        "    return inner\n"
    )
    assert [(found.line, found.text) for found in unexplained_imports(module)] == [
        (5, "import json"),
        (19, "import decimal"),
        (24, "import lance"),
        (28, 'import zlib; note = "# lazy: not a comment"'),
        (40, "import gzip"),
    ]
