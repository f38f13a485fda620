"""Rules on data files (table format: data files, data evolution; file format:
footer and trailer).

Where each file is and what its footer says come from
:mod:`conformance.validator.facts.data_files`, which resolves and reads each
file once per validation run. A file whose base is undeclared or missing is
left to the base path rules, one whose path escapes to ``data-file/path``, a
missing one to ``data-file/exists`` and an unreadable one to
``data-file/readable``: the other rules skip it, so that one defect is
reported once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from itertools import chain

from reference_impl.file_format import FileInfo
from reference_impl.file_format.footer import LAYOUT_LEGACY, LAYOUT_V2
from reference_impl.fragments import NO_COLUMN, TOMBSTONE_FIELD_ID, UNASSIGNED_FIELD_ID, DataFile, Fragment
from reference_impl.row_lineage import LINEAGE_FIELD_IDS

from ...requirements import requirement
from ..context import VersionView
from ..facts.data_files import (
    FileStatus,
    data_file_name,
    each_data_file,
)
from ..facts.file_versions import format_version_counts
from ..facts.fragment_checks import (
    NewFragments,
    fragment_check,
    fragment_results,
    fragment_rule,
    per_fragment,
)
from ..facts.text import listed, plural
from ..registry import Severity, rule

#: ``{24 binary digits}{26 hex digits}.lance`` (upstream layout.md, data files).
UUID_BASED_NAME = re.compile(r"^[01]{24}[0-9a-f]{26}\.lance$")

# The rules that look at one data file (or one fragment) at a time register
# a per-fragment check (facts/fragment_checks.py) and yield its findings: a
# fragment that many versions list unchanged is checked once per run.


# -- rules: where the file is ---------------------------------------------------------


@fragment_rule(
    "data-file/path",
    severity=Severity.ERROR,
    requirements=("data-file.path-relative", "data-file.path-stays-inside"),
    summary="A data file's path is relative and stays inside the data directory of its root or base",
)
def _path(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file, located in batch.unresolved:
        if located.status is FileStatus.ESCAPES:
            yield k, f"fragment {fragment.id}: data file '{data_file_name(data_file)}': {located.problem}", detail, None


@fragment_rule(
    "data-file/exists",
    severity=Severity.ERROR,
    requirements=("data-file.exists",),
    summary="Every data file the manifest lists exists where its path resolves",
)
def _exists(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file, located in batch.unresolved:
        if located.status in (FileStatus.MISSING, FileStatus.NOT_A_FILE):
            yield k, f"fragment {fragment.id}: data file '{data_file_name(data_file)}': {located.problem}", detail, None


@fragment_rule(
    "data-file/extension",
    severity=Severity.ERROR,
    requirements=("data-file.in-data-dir",),
    summary="Data file names end with .lance",
)
def _extension(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file in batch.files:
        if isinstance(data_file.path, str) and data_file.path and not data_file.path.endswith(".lance"):
            yield (
                k,
                f"fragment {fragment.id}: data file '{data_file_name(data_file)}' does not have the .lance extension",
                detail,
                None,
            )


@rule(
    "data-file/uuid-based-name",
    severity=Severity.INFO,
    requirements=("data-file.uuid-based-name",),
    summary="Data file names follow the current UUID-based pattern (24 binary and 26 hex digits)",
)
def uuid_based_name(view: VersionView):
    others = [name for _, names in fragment_results(view, "data-file/uuid-based-name") for name, _, _ in names]
    if others:
        yield (
            f"data file names that do not follow the {{24 binary}}{{26 hex}}.lance pattern (older writers used "
            f"plain UUIDs): {len(others)}, e.g. {listed(others, 3)}",
            view.at("fragments"),
        )


@fragment_check("data-file/uuid-based-name")
def _other_names(view: VersionView, batch: NewFragments):
    """The fragment's data file names off the pattern (as the message shows
    each), counted by the rule for the whole version."""
    match = UUID_BASED_NAME.match
    for k, _, _, data_file in batch.files:
        path = data_file.path
        # Most paths are a bare name: split only one that has a directory.
        if isinstance(path, str) and not match(path.rsplit("/", 1)[-1] if "/" in path else path):
            yield k, data_file_name(data_file), "", None


# -- rules: what the file is ----------------------------------------------------------


@fragment_rule(
    "data-file/readable",
    severity=Severity.ERROR,
    requirements=("data-file.lance-trailer",),
    summary="Every data file is a Lance file: its trailer and footer read",
)
def _readable_files(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file, facts in batch.footers:
        if not facts.ok:
            yield (
                k,
                f"fragment {fragment.id}: data file '{data_file_name(data_file)}': {facts.error.problem}",
                detail,
                None,
            )


#: Symptom of data-file/size: a legacy file recorded as smaller than it is.
LEGACY_SIZE_UNDERSTATED = "legacy-file-understated"


@fragment_rule(
    "data-file/size",
    severity=Severity.ERROR,
    requirements=("data-file.size-matches",),
    summary="A non-zero file_size_bytes equals the data file's real size",
    symptoms={LEGACY_SIZE_UNDERSTATED: "a legacy (v0.x) data file is recorded as smaller than it is"},
)
def _size(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file, facts in batch.readable:
        if data_file.file_size_bytes and data_file.file_size_bytes != facts.info.size:
            legacy = facts.info.layout == LAYOUT_LEGACY
            understated = legacy and data_file.file_size_bytes < facts.info.size
            yield (
                k,
                f"fragment {fragment.id}: {'legacy ' if legacy else ''}data file '{data_file_name(data_file)}' has "
                f"file_size_bytes {data_file.file_size_bytes} but is {facts.info.size} bytes",
                detail,
                LEGACY_SIZE_UNDERSTATED if understated else None,
            )


def _recorded_matches(data_file: DataFile, info: FileInfo) -> bool:
    major, minor = data_file.file_major_version, data_file.file_minor_version
    if info.layout == LAYOUT_LEGACY:
        # 0.0 is table.proto's marker for any legacy file; pylance records the
        # trailer's own 0.2 (docs/spec-discrepancies.md).
        return major == 0 and minor in (0, info.footer_minor)
    # Attribute by attribute, without building two tuples: asked of every data file.
    return major == info.major and minor == info.minor


#: Symptom of data-file/version-matches-file: a file is recorded with the
#: version number of its own trailer (0.3) where the table format records the
#: version that number stands for (2.0).
TRAILER_NUMBER_RECORDED = "trailer-number-recorded"


@fragment_rule(
    "data-file/version-matches-file",
    severity=Severity.ERROR,
    requirements=("data-file.version-matches-file", "data-file.zero-version-is-legacy"),
    summary="file_major_version/file_minor_version agree with the version in the file's trailer",
    symptoms={
        TRAILER_NUMBER_RECORDED: "a 2.0 file is recorded as 0.3, the number in its trailer, instead of 2.0",
    },
)
def _version_matches_file(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file, facts in batch.readable:
        info = facts.info
        if _recorded_matches(data_file, info):
            continue
        recorded = f"{data_file.file_major_version}.{data_file.file_minor_version}"
        trailer = f"{info.footer_major}.{info.footer_minor}"
        if (data_file.file_major_version, data_file.file_minor_version) == (info.footer_major, info.footer_minor):
            # Only possible where the trailer number and the table format's
            # number differ: a 2.0 file, whose trailer says 0.3.
            yield (
                k,
                f"fragment {fragment.id}: data file '{data_file_name(data_file)}' is recorded as version {recorded}, "
                "the "
                f"number in its trailer; the table format records a file with that trailer as version {info.version}",
                detail,
                TRAILER_NUMBER_RECORDED,
            )
            continue
        meaning = "a legacy file" if info.layout == LAYOUT_LEGACY else f"version {info.version}"
        yield (
            k,
            f"fragment {fragment.id}: data file '{data_file_name(data_file)}' is recorded as version {recorded}, but "
            "its "
            f"trailer says {trailer} ({meaning})",
            detail,
            None,
        )


def _field_ids(fragment: Fragment) -> Collection[int]:
    # Runs for every fragment. The ids are only iterated (never changed): a
    # fragment of one data file (most of them) gives that file's own list,
    # without building a set.
    files = fragment.files
    if len(files) == 1:
        return files[0].fields
    return frozenset(i for d in files for i in d.fields)


def _version_key(major: int, minor: int) -> str:
    return "legacy (0.x)" if major == 0 else f"{major}.{minor}"


def _format_key(version: str) -> str:
    return "legacy (0.x)" if version.startswith("0.") or version == "legacy" else version


@rule(
    "data-file/same-format-version",
    severity=Severity.ERROR,
    requirements=("data-file.same-format-version",),
    summary="All data files of a version share one file version, the one data_format names",
)
def same_format_version(view: VersionView):
    # By the version each record means: a 2.0 file recorded as 0.3 is a 2.0
    # file (data-file/version-matches-file reports the record itself).
    counts: Counter = Counter()
    for (major, minor), n in format_version_counts(view).items():
        counts[_version_key(major, minor)] += n
    if len(counts) > 1:
        versions = ", ".join(f"{key}: {plural(n, 'file')}" for key, n in sorted(counts.items()))
        yield f"data files of several file versions in one version ({versions})", view.at("fragments")
        return
    data_format = view.manifest.data_format
    if counts and data_format is not None and data_format.version:
        (key,) = counts
        if _format_key(data_format.version) != key:
            yield (
                f"data_format.version is '{data_format.version}' but the data files are version {key}",
                view.at("data_format"),
            )


# -- rules: field ids ---------------------------------------------------------------


#: Before and from revision upstream-2026-11-29, which adds the reserved ids
#: of the hidden row lineage columns (-3, -4, -5) to the -2 tombstone.
_NEGATIVE_IDS = ("data-file.no-other-negative-ids", "data-file.negative-ids-tombstone-or-lineage")


def _allowed_negative_ids(view: VersionView) -> frozenset[int]:
    if requirement(_NEGATIVE_IDS[1]).in_force_under(view.dataset.spec_revision):
        return frozenset({TOMBSTONE_FIELD_ID}) | LINEAGE_FIELD_IDS
    return frozenset({TOMBSTONE_FIELD_ID})


@fragment_rule(
    "data-file/field-id-values",
    severity=Severity.ERROR,
    requirements=("data-file.no-unassigned-field-id", *_NEGATIVE_IDS),
    summary="Data file field ids are non-negative, the -2 tombstone or (from upstream-2026-11-29) a row lineage "
    "column's -3 to -5; -1 is never stored",
)
def _field_id_values(view: VersionView, batch: NewFragments):
    allowed = _allowed_negative_ids(view)
    for k, fragment, detail, data_file in batch.files:
        if not data_file.fields or min(data_file.fields) >= 0:
            continue  # no negative id, nothing to report: the common case, tested cheaply
        unassigned = sum(1 for i in data_file.fields if i == UNASSIGNED_FIELD_ID)
        negative = sorted({i for i in data_file.fields if i < 0 and i != UNASSIGNED_FIELD_ID and i not in allowed})
        if unassigned:
            yield (
                k,
                f"fragment {fragment.id}: data file '{data_file_name(data_file)}' stores the unassigned field id -1"
                + ("" if unassigned == 1 else f" ({unassigned} times)"),
                detail,
                None,
            )
        if negative:
            yield (
                k,
                f"fragment {fragment.id}: data file '{data_file_name(data_file)}' stores negative field ids "
                f"{listed(negative)} (format revision {view.dataset.spec_revision} allows only "
                f"{listed(sorted(allowed, reverse=True))})",
                detail,
                None,
            )


@fragment_rule(
    "data-file/distinct-field-ids",
    severity=Severity.WARNING,
    requirements=("data-file.distinct-field-ids",),
    summary="Within a fragment no field id (other than the -2 tombstone) is stored twice",
)
def _distinct_field_ids(view: VersionView, batch: NewFragments):
    for k, fragment in enumerate(batch.fragments):
        files = fragment.files
        if len(files) == 1 and len(set(files[0].fields)) == len(files[0].fields):
            continue  # one data file whose ids are all distinct: the common case, tested cheaply
        ids = [i for data_file in files for i in data_file.fields if i >= 0]
        if len(set(ids)) == len(ids):
            continue  # nothing repeated, without a Counter per fragment
        counts = Counter(ids)
        repeated = sorted(i for i, n in counts.items() if n > 1)
        if repeated:
            yield (
                k,
                f"fragment {fragment.id}: field ids {listed(repeated)} are stored more than once among its data "
                "files; a reader cannot tell which copy holds the column",
                "",
                None,
            )


@rule(
    "data-file/unknown-field-ids",
    severity=Severity.INFO,
    # Not data-file.tombstone-allowed: the tombstone is what this rule does
    # not report (tests/conformance/validator/test_layout_rules.py checks it is accepted).
    requirements=_NEGATIVE_IDS,
    summary="Data file field ids name schema fields (stale ids of dropped or replaced fields are tolerated)",
)
def unknown_field_ids(view: VersionView):
    schema_ids = {f.id for f in view.manifest.schema.fields} if view.manifest.schema else set()
    if schema_ids.issuperset(chain.from_iterable(per_fragment(view, "data_files.field-ids", _field_ids))):
        return  # every id is a schema field's: the common case, from each fragment's ids listed once per run
    stale: set[int] = set()
    files = 0
    for _, _, data_file in each_data_file(view):
        if schema_ids.issuperset(data_file.fields):
            continue  # every id is a schema field's: the common case, tested in one call
        unknown = {i for i in data_file.fields if i >= 0 and i not in schema_ids}
        if unknown:
            stale |= unknown
            files += 1
    if stale:
        yield (
            f"field ids {listed(sorted(stale))}, stored in {plural(files, 'data file')}, are not in the schema and "
            f"not the -2 tombstone ({view.writer} left the ids of dropped or replaced fields; readers ignore them, "
            "see docs/spec-discrepancies.md)",
            view.at("fragments"),
        )


# -- rules: column indices -------------------------------------------------------------


@fragment_rule(
    "data-file/column-indices-per-field",
    severity=Severity.ERROR,
    requirements=("data-file.column-indices-per-field",),
    summary="A v2.x data file has one column_indices entry per field id",
)
def _column_indices_per_field(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file in batch.files:
        if len(data_file.column_indices) != len(data_file.fields) and not data_file.is_legacy:
            yield (
                k,
                f"fragment {fragment.id}: data file '{data_file_name(data_file)}' lists {len(data_file.fields)} field "
                "ids "
                f"but {len(data_file.column_indices)} column_indices",
                detail,
                None,
            )


@fragment_rule(
    "data-file/column-indices-distinct",
    severity=Severity.ERROR,
    requirements=("data-file.column-indices-distinct",),
    summary="column_indices repeats no value other than -1",
)
def _column_indices_distinct(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file in batch.files:
        if len(set(data_file.column_indices)) == len(data_file.column_indices):
            continue  # all distinct, -1 included: the common case, tested cheaply
        indices = [c for c in data_file.column_indices if c != NO_COLUMN]
        if len(set(indices)) == len(indices):
            continue  # only -1 repeats
        counts = Counter(indices)
        repeated = sorted(c for c, n in counts.items() if n > 1)
        if repeated:
            yield (
                k,
                f"fragment {fragment.id}: data file '{data_file_name(data_file)}' repeats column indices "
                f"{listed(repeated)}",
                detail,
                None,
            )


@fragment_rule(
    "data-file/column-indices-in-file",
    severity=Severity.ERROR,
    requirements=("data-file.column-indices-values",),
    summary="Each column_indices entry is -1 or a top-level column the file has",
)
def _column_indices_in_file(view: VersionView, batch: NewFragments):
    flagged = set()
    for k, fragment, detail, data_file in batch.files:
        # Only a value below -1 is reported; min() tells cheaply when there is none.
        if not data_file.column_indices or min(data_file.column_indices) >= NO_COLUMN or data_file.is_legacy:
            continue
        negative = sorted({c for c in data_file.column_indices if c < 0 and c != NO_COLUMN})
        if negative:
            flagged.add((k, detail))
            yield (
                k,
                f"fragment {fragment.id}: data file '{data_file_name(data_file)}' has negative column indices "
                f"{listed(negative)} (only -1 means 'no column')",
                detail,
                None,
            )
    for k, fragment, detail, data_file, facts in batch.readable:
        info, indices = facts.info, data_file.column_indices
        if not indices or info.num_columns is None or max(indices) < info.num_columns:
            continue  # nothing beyond the file's columns (the common case, tested first)
        if data_file.is_legacy or (k, detail) in flagged or info.layout != LAYOUT_V2:
            continue
        beyond = sorted({c for c in data_file.column_indices if c >= info.num_columns})
        if beyond:
            yield (
                k,
                f"fragment {fragment.id}: data file '{data_file_name(data_file)}' has {info.num_columns} columns but "
                f"column_indices name columns {listed(beyond)}",
                detail,
                None,
            )
