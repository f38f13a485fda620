"""Checks of one fragment at a time, run once per distinct fragment in a
validation run (issue 17, incremental history).

A long history lists most fragments unchanged in version after version: an
append adds one fragment and keeps the others, and their manifests hold the
same fragment bytes (decoded once, as one object, by
:meth:`~conformance.validator.context.DatasetView.manifest_file`). A rule
whose findings about a fragment depend only on that fragment, its data files
(where each resolves, what its footer says) and the version's declared base
paths registers a :func:`fragment_check` for its rule id. The checks of a
fragment run when a version first lists it; every later version that lists the
same fragment (with the same base paths) takes their results from the cache
and gives them its own locations. ``validate --all-versions`` therefore
checks, reads and locates in proportion to the fragments that changed, not to
the table's size times its number of versions.

A check yields ``(message, detail, symptom)``: ``detail`` is the location
below the fragment (``""`` for the fragment itself, ``".files[1]"`` for a
data file), which becomes ``{manifest}#fragments[{index}]{detail}`` in each
version. The report is the one the rules gave walking every fragment of every
version: same findings, and the engine orders them
(``tests/conformance/validator/test_incremental_history.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from reference_impl.fragments import DataFile, Fragment

from ..context import VersionView
from .data_files import FileFacts, Located, base_storages, file_facts, locate, prefetch_footers

#: What a check yields per finding: message, location below the fragment, symptom.
FragmentFinding = tuple[str, str, "str | None"]
FragmentCheck = Callable[[VersionView, Fragment], Iterable[FragmentFinding]]

_CHECKS: dict[str, FragmentCheck] = {}

T = TypeVar("T")


class _Raised:
    """A check that raised on a fragment: its rule raises the same error
    when it reaches that fragment, as it did walking the version."""

    def __init__(self, error: Exception):
        self.error = error


def fragment_check(rule_id: str) -> Callable[[FragmentCheck], FragmentCheck]:
    """Register the decorated function as the per-fragment check of ``rule_id``
    (whose rule yields :func:`fragment_findings`)."""

    def register(check: FragmentCheck) -> FragmentCheck:
        if rule_id in _CHECKS:
            raise ValueError(f"a fragment check for {rule_id} is registered twice")
        _CHECKS[rule_id] = check
        return check

    return register


def fragment_files(fragment: Fragment) -> Iterator[tuple[str, DataFile]]:
    """``(detail, data file)`` for each data file of ``fragment``; the detail
    locates it below the fragment."""
    for d_index, data_file in enumerate(fragment.files):
        yield f".files[{d_index}]", data_file


def located_files(view: VersionView, fragment: Fragment) -> Iterator[tuple[str, DataFile, Located]]:
    """:func:`fragment_files` with where each file resolved (:func:`.data_files.locate`)."""
    bases = base_storages(view)
    for detail, data_file in fragment_files(fragment):
        yield detail, data_file, locate(view, data_file, bases)


def readable_files(view: VersionView, fragment: Fragment) -> Iterator[tuple[str, DataFile, FileFacts]]:
    """:func:`fragment_files` with the footer facts of each file that exists and reads."""
    for detail, data_file, located in located_files(view, fragment):
        if located.ok:
            facts = file_facts(view, located)
            if facts.ok:
                yield detail, data_file, facts.value


def fragment_findings(view: VersionView, rule_id: str) -> Iterator[tuple[str, str, str | None]]:
    """``(message, location, symptom)`` for every finding of ``rule_id``'s
    check on the version's fragments, in fragment order."""
    for f_index, found in fragment_results(view, rule_id):
        for message, detail, symptom in found:
            yield message, view.at(f"fragments[{f_index}]{detail}"), symptom


def fragment_results(view: VersionView, rule_id: str) -> Iterator[tuple[int, tuple[FragmentFinding, ...]]]:
    """``(fragment index, what the check yielded)`` for the version's
    fragments on which ``rule_id``'s check yielded something, in fragment
    order (for a rule that sums them up for the whole version); the error a
    check raised on a fragment is raised when that fragment is reached."""
    for f_index, found in _flagged(view).get(rule_id, ()):
        if isinstance(found, _Raised):
            raise found.error
        yield f_index, found


def check_fragment(view: VersionView, fragment: Fragment) -> dict[str, tuple | _Raised]:
    """Every registered check on ``fragment``, by rule id (only those that
    found something or raised): the work done once per distinct fragment."""
    results: dict[str, tuple | _Raised] = {}
    for rule_id, check in _CHECKS.items():
        try:
            found = tuple(check(view, fragment))
        except Exception as exc:  # re-raised in the rule, where the engine reports it
            results[rule_id] = _Raised(exc)
            continue
        if found:
            results[rule_id] = found
    return results


def _flagged(view: VersionView) -> dict[str, list[tuple[int, tuple | _Raised]]]:
    return view.memo("fragment_checks.flagged", lambda: _compute_flagged(view))


class _Known:
    """What the checks found on each distinct fragment of a run, by the
    fragment's identity; holding the fragments keeps their ids unique."""

    def __init__(self) -> None:
        self.fragments: dict[int, Fragment] = {}
        self.results: dict[int, dict[str, tuple | _Raised]] = {}
        #: The fragments on which a check found something (most have nothing).
        self.flagged: set[int] = set()


def _compute_flagged(view: VersionView) -> dict[str, list[tuple[int, tuple | _Raised]]]:
    """``{rule id: [(fragment index, its findings)]}`` for the fragments of
    this version on which a check found something."""
    # Where a data file resolves depends on the version's declared base paths:
    # a fragment's results are kept per set of them.
    context = tuple(repr(base) for base in view.manifest.base_paths)
    known: _Known = view.dataset.memo(("fragment_checks", context), _Known)
    fragments = view.manifest.fragments
    # By identity: equal fragment bytes decode to one object for the whole
    # run. The set operations run in C, so a version whose fragments were all
    # checked before costs little more than reading its manifest.
    ids = list(map(id, fragments))
    listed = set(ids)
    unseen = listed - known.results.keys()
    if unseen:
        new = [fragment for fragment in fragments if id(fragment) in unseen]
        _prefetch(view, new)
        for fragment in new:
            key = id(fragment)
            if key in known.results:
                continue  # listed twice in this version
            known.fragments[key] = fragment
            results = known.results[key] = check_fragment(view, fragment)
            if results:
                known.flagged.add(key)
    hits = listed & known.flagged
    flagged: dict[str, list[tuple[int, tuple | _Raised]]] = {}
    if not hits:
        return flagged
    for f_index, key in enumerate(ids):
        if key in hits:
            for rule_id, found in known.results[key].items():
                flagged.setdefault(rule_id, []).append((f_index, found))
    return flagged


def per_fragment(view: VersionView, key: str, compute: Callable[[Fragment], T]) -> list[T]:
    """``[compute(fragment) for fragment in the version's fragments]``, with
    ``compute`` (a function of the fragment alone) run once per distinct
    fragment in the run."""
    known: _Known = view.dataset.memo(("per_fragment", key), _Known)
    fragments = view.manifest.fragments
    ids = list(map(id, fragments))
    values = known.results
    if not values.keys() >= set(ids):
        for fragment in fragments:
            if id(fragment) not in values:
                known.fragments[id(fragment)] = fragment
                values[id(fragment)] = compute(fragment)  # type: ignore[assignment]
    return list(map(values.__getitem__, ids))  # type: ignore[arg-type]


def _prefetch(view: VersionView, fragments: list[Fragment]) -> None:
    """Locate the data files of ``fragments`` and read their footers with the
    run's I/O threads, before the checks ask for them one by one."""
    if view.dataset.io_threads <= 1:
        return
    bases = base_storages(view)
    files = [data_file for fragment in fragments for data_file in fragment.files]
    try:
        found = view.dataset.map_remote(lambda data_file: locate(view, data_file, bases), files)
    except Exception:  # each check locates its files again and meets the error itself
        return
    prefetch_footers(view, found)
