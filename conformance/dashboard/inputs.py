"""Finding and reading the results under a directory: every ``*.json`` file,
at any depth, recognised by its format marker (:mod:`.adapters`), checked
against its schema and normalised into :class:`~.model.Result` rows.

A file that is not JSON, that no adapter recognises, that fails its schema,
or that cannot be normalised (no run date) becomes a :class:`~.model.Problem`
naming the file and what is wrong; reading goes on with the others.

Two kinds of directory are not searched file by file: a Lance dataset
(``*.lance``, which a harness run keeps beside its report), and a harness
run's directory (its ``history.jsonl`` beside ``report.json``), whose other
JSON files (``run.json``, ``writer.json``) are the report's companions, read
by its adapter, not results of their own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from ..describe import schema_validator
from .adapters import HARNESS, HARNESS_HISTORY, MATRIX, PYTEST, WRITER_CHECK, Adapter, InputError
from .compat import COMPAT
from .model import Problem, Result

#: Every kind of input, tried in this order (the first whose marker a document carries reads it).
ADAPTERS: tuple[Adapter, ...] = (MATRIX, WRITER_CHECK, HARNESS, PYTEST, COMPAT)
#: The one file of a harness run's directory that is read.
HARNESS_REPORT = "report.json"


@dataclass
class Inputs:
    """What a results directory gave: the results, the files read and the problems."""

    results: list[Result] = field(default_factory=list)
    #: Each file that gave results, relative to the directory (the site copies them).
    sources: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def result_files(root: Path, skip: Sequence[Path] = ()) -> Iterator[Path]:
    """The ``*.json`` files under ``root`` worth reading, in a stable order;
    ``skip``: directories left out (the site itself, when built inside ``root``)."""
    skipped = {path.resolve() for path in skip}
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(
            name
            for name in subdirectories
            if not name.endswith(".lance") and (Path(directory) / name).resolve() not in skipped
        )
        if HARNESS_HISTORY in files:
            if HARNESS_REPORT in files:
                yield Path(directory) / HARNESS_REPORT
            continue
        for name in sorted(files):
            if name.endswith(".json"):
                yield Path(directory) / name


def _schema_problem(adapter: Adapter, document: Mapping[str, Any]) -> str | None:
    error = jsonschema.exceptions.best_match(schema_validator(adapter.schema).iter_errors(document))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "the document"
    return f"a {adapter.kind} document that does not fit {adapter.schema}: at {where}: {error.message}"


def read_file(path: Path, source: str, adapters: Sequence[Adapter] = ADAPTERS) -> list[Result]:
    """The results of one file; :class:`InputError` saying why there are none."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise InputError(f"not a results document (a JSON {type(document).__name__}, not an object)")
    adapter = next((adapter for adapter in adapters if adapter.recognises(document)), None)
    if adapter is None:
        kinds = ", ".join(adapter.kind for adapter in adapters)
        raise InputError(f"not a results document of a known kind ({kinds}): no format marker recognised")
    problem = _schema_problem(adapter, document)
    if problem is not None:
        raise InputError(problem)
    try:
        return adapter.results(document, path, source)
    except ValueError as exc:  # InputError, and an unknown status from model.tally
        raise InputError(f"a {adapter.kind} document that cannot be read: {exc}") from None


def read_results(root: Path, skip: Sequence[Path] = ()) -> Inputs:
    """Every result under ``root`` (but under ``skip``), and a problem per file that gave none."""
    inputs = Inputs()
    for path in result_files(root, skip):
        source = path.relative_to(root).as_posix()
        try:
            found = read_file(path, source)
        except InputError as exc:
            inputs.problems.append(Problem(source, str(exc)))
            continue
        inputs.results += found
        inputs.sources.append(source)
    return inputs
