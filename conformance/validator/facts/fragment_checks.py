"""Checks of one fragment at a time, run once per distinct fragment in a
validation run (issue 17, incremental history).

A long history lists most fragments unchanged in version after version: an
append adds one fragment and keeps the others, and their manifests hold the
same fragment bytes (decoded once, as one object, by
:meth:`~conformance.validator.context.DatasetView.manifest_file`). A rule
whose findings about a fragment depend only on that fragment, its data files
(where each resolves, what its footer says) and the version's declared base
paths registers a :func:`fragment_check` for its rule id (or is declared with
:func:`fragment_rule`, when its findings are just the check's). The checks of a
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

from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cached_property
from typing import TypeVar

from reference_impl.file_format.footer import LAYOUT_LEGACY
from reference_impl.fragments import DataFile, Fragment

from ..context import Loaded, VersionView
from ..registry import Severity, rule
from .data_files import FileFacts, FileStatus, Located, base_storages, file_facts_each, locate_many, prefetch_footers

#: A finding of a check: message, location below the fragment, symptom.
FragmentFinding = tuple[str, str, "str | None"]
#: A check yields ``(k, message, detail, symptom)``, ``k`` the fragment's
#: position in :attr:`NewFragments.fragments`.
FragmentCheck = Callable[[VersionView, "NewFragments"], Iterable[tuple[int, str, str, "str | None"]]]

_CHECKS: dict[str, FragmentCheck] = {}

T = TypeVar("T")


class _Raised:
    """A check that raised on a fragment: its rule gives what the check
    yielded on that fragment before the error, then raises the same error,
    as it did walking the version."""

    def __init__(self, error: Exception, partial: tuple[FragmentFinding, ...]):
        self.error = error
        self.partial = partial


#: The results of a fragment on which no check found anything (shared, never changed).
_NOTHING: dict = {}


def fragment_check(rule_id: str) -> Callable[[FragmentCheck], FragmentCheck]:
    """Register the decorated function as the per-fragment check of ``rule_id``
    (whose rule yields :func:`fragment_findings`)."""

    def register(check: FragmentCheck) -> FragmentCheck:
        if rule_id in _CHECKS:
            raise ValueError(f"a fragment check for {rule_id} is registered twice")
        _CHECKS[rule_id] = check
        return check

    return register


def fragment_rule(
    rule_id: str,
    *,
    severity: Severity,
    requirements: tuple[str, ...],
    summary: str,
    symptoms: Mapping[str, str] | None = None,
    deep: bool = False,
) -> Callable[[FragmentCheck], FragmentCheck]:
    """Register the decorated function as the per-fragment check of
    ``rule_id``, and a rule of that id (declared as :func:`..registry.rule`
    declares one) whose findings are what the check yields, fragment by
    fragment, in each version (:func:`fragment_findings`)."""

    def findings(view: VersionView) -> Iterator[tuple[str, str, str | None]]:
        yield from fragment_findings(view, rule_id)

    def register(check: FragmentCheck) -> FragmentCheck:
        # The rule belongs to the module that declares it: the topic index of
        # ``validate --rules`` names rule modules by their rules' functions.
        findings.__module__ = check.__module__
        findings.__name__ = findings.__qualname__ = check.__name__.lstrip("_")
        rule(rule_id, severity=severity, requirements=requirements, summary=summary, symptoms=symptoms, deep=deep)(
            findings
        )
        return fragment_check(rule_id)(check)

    return register


class NewFragments:
    """Fragments no earlier version of the run listed, as the checks see
    them: every data file, where each resolves and the footer facts of those
    that read, listed once for all the checks. ``k`` in each entry is the
    fragment's position in :attr:`fragments`."""

    def __init__(self, view: VersionView, fragments: list[Fragment]):
        self.view = view
        self.fragments = fragments
        self._footers_prefetched = False
        self._memos: dict = {}

    def memo(self, key, compute: Callable[[], T]) -> T:
        """``compute()`` once for this batch, for what several checks share
        that this class does not list itself (the decoded pages of a deep
        validation: facts/data_pages.py)."""
        if key not in self._memos:
            self._memos[key] = compute()
        return self._memos[key]

    @cached_property
    def files(self) -> list[tuple[int, Fragment, str, DataFile]]:
        """``(k, fragment, detail, data file)``; the detail locates the file below the fragment."""
        return [
            (k, fragment, f".files[{d_index}]", data_file)
            for k, fragment in enumerate(self.fragments)
            for d_index, data_file in enumerate(fragment.files)
        ]

    @cached_property
    def located(self) -> list[tuple[int, Fragment, str, DataFile, Located]]:
        """:attr:`files` with where each resolved (:func:`.data_files.locate`);
        on an object store each existence check is a request, made concurrently."""
        files = self.files
        found = locate_many(self.view, [entry[3] for entry in files], base_storages(self.view))
        return [
            (k, fragment, detail, data_file, located)
            for (k, fragment, detail, data_file), located in zip(files, found, strict=True)
        ]

    @cached_property
    def unresolved(self) -> list[tuple[int, Fragment, str, DataFile, Located]]:
        """:attr:`located` for the files that did not resolve to a file that
        is there (most batches have none): listed once for the checks that
        report why, instead of each walking every file."""
        ok = FileStatus.OK
        return [entry for entry in self.located if entry[4].status is not ok]

    @cached_property
    def legacy_files(self) -> list[tuple[int, Fragment, str, DataFile]]:
        """:attr:`files` whose record marks them legacy (``is_legacy``; most
        batches have none), listed once for the rules on legacy records."""
        return [entry for entry in self.files if entry[3].is_legacy]

    def prefetch_footers(self) -> None:
        """Read the footers of the files that exist concurrently, with the
        run's I/O threads, for :func:`.data_files.file_facts` to find cached
        (once per batch: the first check that reads footers asks for it)."""
        if not self._footers_prefetched:
            prefetch_footers(self.view, [entry[4] for entry in self.located])
            self._footers_prefetched = True

    @cached_property
    def footers(self) -> list[tuple[int, Fragment, str, DataFile, Loaded[FileFacts]]]:
        """:attr:`located` for the files that exist, with what reading each
        one's footer gave (the footers read concurrently first:
        :meth:`prefetch_footers`); asked of the cache once per file for
        every check (data-file/readable reports the failures)."""
        self.prefetch_footers()
        ok = FileStatus.OK
        present = [entry for entry in self.located if entry[4].status is ok]
        facts = file_facts_each(self.view, [entry[4] for entry in present])
        return [
            (k, fragment, detail, data_file, loaded)
            for (k, fragment, detail, data_file, _), loaded in zip(present, facts, strict=True)
        ]

    @cached_property
    def readable(self) -> list[tuple[int, Fragment, str, DataFile, FileFacts]]:
        """:attr:`files` with the footer facts of each file that exists and reads."""
        return [
            (k, fragment, detail, data_file, facts.value)
            for k, fragment, detail, data_file, facts in self.footers
            if facts.ok
        ]

    @cached_property
    def readable_legacy(self) -> list[tuple[int, Fragment, str, DataFile, FileFacts]]:
        """:attr:`readable` for the files whose footer says legacy (most
        batches have none), listed once for the rules on legacy files."""
        return [entry for entry in self.readable if entry[4].info.layout == LAYOUT_LEGACY]


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
            if found.partial:
                yield f_index, found.partial
            raise found.error
        yield f_index, found


def check_fragments(view: VersionView, fragments: list[Fragment]) -> list[dict[str, tuple | _Raised]]:
    """The registered checks of the run's selected rules on ``fragments``
    (none of them seen before in the run), one walk per check as a rule
    walks a version: for each fragment, what each check found on it (or the
    error it raised), by rule id. The work done once per distinct fragment;
    a check whose rule does not run is not run (its reads are not made)."""
    results: list[dict[str, tuple | _Raised]] = [{} for _ in fragments]
    batch = NewFragments(view, fragments)
    selected = view.dataset.selected_rules
    for rule_id, check in _CHECKS.items():
        if selected is not None and rule_id not in selected:
            continue
        try:
            found = list(check(view, batch))
        except Exception:  # which fragment raised, and after what: see below
            _check_one_by_one(view, rule_id, check, fragments, results)
            continue
        for k, message, detail, symptom in found:
            entry = results[k].get(rule_id)
            results[k][rule_id] = (*(entry or ()), (message, detail, symptom))  # type: ignore[misc]
    return results


def _check_one_by_one(
    view: VersionView, rule_id: str, check: FragmentCheck, fragments: list[Fragment], results: list[dict]
) -> None:
    """Run ``check`` on each fragment apart, to learn on which it raises and
    what it yielded there first (re-raised in the rule, where the engine
    reports it)."""
    for k, fragment in enumerate(fragments):
        items: list[FragmentFinding] = []
        try:
            for _, message, detail, symptom in check(view, NewFragments(view, [fragment])):
                items.append((message, detail, symptom))
        except Exception as exc:
            results[k][rule_id] = _Raised(exc, tuple(items))
            continue
        if items:
            results[k][rule_id] = tuple(items)


def _flagged(view: VersionView) -> dict[str, list[tuple[int, tuple | _Raised]]]:
    return view.memo("fragment_checks.flagged", lambda: _compute_flagged(view))


class _Known:
    """What the checks found on each distinct fragment of a run, by the
    fragment's identity (unique for the run: the view keeps every fragment
    it decoded, :meth:`~conformance.validator.context.DatasetView.manifest_file`)."""

    def __init__(self) -> None:
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
    ids, listed = _identities(view)
    unseen = listed - known.results.keys()
    if unseen:
        if len(unseen) == len(ids):
            # Every fragment new and listed once (the first version a run
            # reads): all of them, in order, without a lookup per fragment.
            new, new_ids = list(fragments), ids
        else:
            new, taken = [], set()
            for fragment in fragments:
                key = id(fragment)
                if key in unseen and key not in taken:  # a fragment listed twice is checked once
                    taken.add(key)
                    new.append(fragment)
            new_ids = list(map(id, new))
        results = check_fragments(view, new)
        known.results.update(zip(new_ids, [found or _NOTHING for found in results], strict=True))
        known.flagged.update(key for key, found in zip(new_ids, results, strict=True) if found)
    hits = listed & known.flagged
    flagged: dict[str, list[tuple[int, tuple | _Raised]]] = {}
    if not hits:
        return flagged
    for f_index, key in enumerate(ids):
        if key in hits:
            for rule_id, found in known.results[key].items():
                flagged.setdefault(rule_id, []).append((f_index, found))
    return flagged


def _identities(view: VersionView) -> tuple[list[int], set[int]]:
    """The identities of the version's fragments, in order and as a set,
    computed once per version for every per-fragment lookup."""

    def compute() -> tuple[list[int], set[int]]:
        ids = list(map(id, view.manifest.fragments))
        return ids, set(ids)

    return view.memo("fragment_checks.identities", compute)


def per_fragment(view: VersionView, key: str, compute: Callable[[Fragment], T]) -> list[T]:
    """``[compute(fragment) for fragment in the version's fragments]``, with
    ``compute`` (a function of the fragment alone) run once per distinct
    fragment in the run."""
    fragments = view.manifest.fragments
    if len(view.dataset.selected_versions) <= 1:
        # One version: nothing to share; keeping the values would cost more than it saves.
        return list(map(compute, fragments))
    # By identity, unique for the run as in _Known.
    values: dict[int, T] = view.dataset.memo(("per_fragment", key), dict)
    ids, listed = _identities(view)
    if not values.keys() >= listed:
        for fragment in fragments:
            if id(fragment) not in values:
                values[id(fragment)] = compute(fragment)
    return list(map(values.__getitem__, ids))
