"""Rules on the data pages of data files (file format: file structure and
encodings; ``validate --deep``).

The deep rules decode every page of every data file with the reference
reader (:mod:`conformance.validator.facts.data_pages`, once per file and
run) and report what the structure does not keep: a page that does not
decode, rows that do not add up, buffers outside the data region or
overlapping. They run only in a deep validation (:attr:`Rule.deep
<conformance.validator.registry.Rule.deep>`). Nulls in non-nullable fields
stay with ``schema/non-nullable-values``, which in a deep run takes them from
the same decoding.

``data-page/unchecked`` runs in every validation: data the reference reader
cannot decode is named (file and encoding) rather than passed in silence;
without ``--deep`` it names the files whose version is beyond what the
reader implements, from their footers alone.
"""

from __future__ import annotations

from collections import defaultdict

from reference_impl.file_format.footer import LAYOUT_LEGACY, LAYOUT_V2, NEWEST_VERSION
from reference_impl.file_format.verification import ProblemKind

from ..context import VersionView
from ..facts.data_files import data_file_name
from ..facts.data_pages import decodable, verified
from ..facts.fragment_checks import NewFragments, fragment_check, fragment_results, fragment_rule
from ..facts.text import listed
from ..registry import Severity, rule

#: Problems of one file reported by a rule at most; the rest are counted.
MAX_PER_FILE = 3


def _problems(view: VersionView, batch: NewFragments, kinds: tuple[ProblemKind, ...]):
    """``(k, message, detail, None)`` for the problems of these kinds in the
    batch's data files."""
    for k, fragment, detail, data_file, loaded in verified(view, batch):
        if not loaded.ok:
            continue  # the footer did not read: data-file/readable reports it
        problems = [p for p in loaded.value.problems if p.kind in kinds]
        if not problems:
            continue
        name = data_file_name(data_file)
        for problem in problems[:MAX_PER_FILE]:
            yield k, f"fragment {fragment.id}: data file '{name}': {problem.message}", detail, None
        if len(problems) > MAX_PER_FILE:
            more = len(problems) - MAX_PER_FILE
            yield k, f"fragment {fragment.id}: data file '{name}': {more} more problem(s) of this kind", detail, None


@fragment_rule(
    "data-page/decodes",
    severity=Severity.ERROR,
    requirements=("data-file.pages-decode",),
    summary="Every page of every data file decodes: levels, offsets, dictionary indices, bit widths and "
    "compressed frames stay inside what the page holds (--deep)",
    deep=True,
)
def _decodes(view: VersionView, batch: NewFragments):
    # A value that breaks its field's logical layer (a malformed JSONB
    # document) is a page that does not decode as its field says.
    yield from _problems(view, batch, (ProblemKind.UNDECODABLE, ProblemKind.MALFORMED_VALUE))


@fragment_rule(
    "data-page/rows",
    severity=Severity.ERROR,
    requirements=("data-file.page-rows-add-up",),
    summary="The pages of each column add up to the data file's rows, and each field decodes to that many "
    "values (--deep)",
    deep=True,
)
def _rows(view: VersionView, batch: NewFragments):
    # A file that disagrees with its fragment's physical rows is
    # fragment/physical-rows' finding, from the footer alone.
    yield from _problems(view, batch, (ProblemKind.ROW_COUNT,))


@fragment_rule(
    "data-page/buffers",
    severity=Severity.ERROR,
    requirements=("data-file.buffers-in-data-region",),
    summary="Every page, column and global buffer lies before the column metadata, and no two buffers share "
    "bytes (--deep)",
    deep=True,
)
def _buffers(view: VersionView, batch: NewFragments):
    yield from _problems(view, batch, (ProblemKind.BUFFER_LAYOUT,))


# -- what went unchecked -----------------------------------------------------------------


UNCHECKED_REQUIREMENTS = ("data-file.newer-version-may-be-unreadable",)


@rule(
    "data-page/unchecked",
    severity=Severity.INFO,
    requirements=UNCHECKED_REQUIREMENTS,
    summary="Data the reference reader cannot decode is named, file and encoding: with --deep every file it "
    f"could not decode, without it files of versions above {NEWEST_VERSION[0]}.{NEWEST_VERSION[1]}",
)
def unchecked(view: VersionView):
    by_encoding: dict[str, list[str]] = defaultdict(list)
    for _, found in fragment_results(view, "data-page/unchecked"):
        for message, encoding, _ in found:
            by_encoding[encoding].append(message)
    if not by_encoding:
        return
    parts = [
        f"{len(names)} with {encoding} (e.g. {listed(names, 3)})" for encoding, names in sorted(by_encoding.items())
    ]
    reader = f"2.0 to {NEWEST_VERSION[0]}.{NEWEST_VERSION[1]}"
    yield (
        f"the data of {sum(len(names) for names in by_encoding.values())} data file(s) went unchecked, as the "
        f"reference reader (file versions {reader}) cannot decode it: {'; '.join(parts)}",
        view.at("fragments"),
    )


@fragment_check("data-page/unchecked")
def _unchecked_files(view: VersionView, batch: NewFragments):
    """Per data file that went unchecked: its name (as the message shows it)
    and the encoding, in the detail slot (the rule groups by it)."""
    if view.dataset.deep:
        for k, _, _, data_file, loaded in verified(view, batch):
            if loaded.ok:
                for gap in loaded.value.unchecked[:1]:  # one encoding names the gap; files are counted
                    yield k, data_file_name(data_file), gap.encoding, None
        return
    for k, _, _, data_file, facts in batch.readable:
        info = facts.info
        if decodable(facts) or info.layout == LAYOUT_LEGACY:
            continue
        what = f"file format version {info.major}.{info.minor}" if info.layout == LAYOUT_V2 else "an unknown layout"
        yield k, data_file_name(data_file), what, None
