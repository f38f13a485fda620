"""Rules on legacy (v0.x) data files (table format: data files; file
format: the legacy layout), beside :mod:`.data_files` and built on the same
facts (:mod:`..facts.data_files`, :mod:`..facts.fragment_checks`): how
legacy files are recorded, and the field ids a legacy file lists against
the columns its own schema block stores.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

from reference_impl.fragments import TOMBSTONE_FIELD_ID, is_legacy_version

from ..context import VersionView
from ..facts.data_files import data_file_name, each_legacy
from ..facts.file_versions import format_version_counts
from ..facts.fragment_checks import NewFragments, fragment_rule
from ..facts.text import listed
from ..registry import Severity, rule


def _any_legacy(view: VersionView) -> bool:
    """Whether the version records a legacy data file, from the versions its
    data files record, counted once per version (a legacy record keeps its
    own 0.x there)."""
    return any(is_legacy_version(major, minor) for major, minor in format_version_counts(view))


@rule(
    "data-file/legacy-version-recorded",
    severity=Severity.INFO,
    requirements=("data-file.zero-version-is-legacy", "data-file.same-format-version"),
    summary="Legacy data files are recorded as version 0.0, matching data_format '0.1'",
)
def legacy_version_recorded(view: VersionView):
    if not _any_legacy(view):
        return  # no legacy file: the common case, known without listing the data files again
    recorded = Counter(
        f"{d.file_major_version}.{d.file_minor_version}" for _, _, d in each_legacy(view) if d.file_minor_version != 0
    )
    if recorded:
        data_format = view.manifest.data_format
        as_recorded = ", ".join(f"{n} as {key}" for key, n in sorted(recorded.items()))
        said = f" while data_format.version is '{data_format.version}'" if data_format else ""
        yield (
            f"legacy data files are recorded with a non-zero minor version ({as_recorded}){said}; table.proto marks "
            f"legacy files 0.0 (a tolerated departure of {view.writer}, see docs/spec-discrepancies.md)",
            view.at("fragments"),
        )


@fragment_rule(
    "data-file/legacy-field-ids-sorted",
    severity=Severity.ERROR,
    requirements=("data-file.v1-field-ids-sorted",),
    summary="A legacy data file lists its field ids in ascending order",
)
def _legacy_field_ids_sorted(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file in batch.legacy_files:
        ids = [i for i in data_file.fields if i != TOMBSTONE_FIELD_ID]
        if any(b < a for a, b in pairwise(ids)):
            yield (
                k,
                f"fragment {fragment.id}: legacy data file '{data_file_name(data_file)}' lists field ids out of order: "
                f"{listed(data_file.fields, 12)}",
                detail,
                None,
            )


def _legacy_listing(batch: NewFragments) -> list:
    """(k, fragment, detail, data file, listed ids, ids of the file's own
    schema) for every readable legacy data file whose schema block reads."""
    return [
        (k, fragment, detail, data_file, list(data_file.fields), list(facts.legacy_field_ids))
        for k, fragment, detail, data_file, facts in batch.readable_legacy
        if facts.legacy_field_ids is not None
    ]


@fragment_rule(
    "data-file/legacy-every-field",
    severity=Severity.ERROR,
    requirements=("data-file.v1-every-nested-field",),
    summary="A legacy data file lists one field id per field it stores, nested fields included",
)
def _legacy_every_field(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file, ids, stored in _legacy_listing(batch):
        if len(ids) != len(stored):
            unlisted = [i for i in stored if i not in set(ids)]
            yield (
                k,
                f"fragment {fragment.id}: legacy data file '{data_file_name(data_file)}' lists {len(ids)} field ids "
                "but "
                f"stores {len(stored)} fields (its own schema: {listed(stored, 12)})"
                + (f"; not listed: {listed(unlisted)}" if unlisted else ""),
                detail,
                None,
            )


@fragment_rule(
    "data-file/legacy-ids-follow-columns",
    severity=Severity.ERROR,
    requirements=("data-file.v1-ids-follow-columns",),
    summary="A legacy data file lists its field ids in the order of its columns (the -2 tombstone aside)",
)
def _legacy_ids_follow_columns(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file, ids, stored in _legacy_listing(batch):
        if len(ids) != len(stored):
            continue  # data-file/legacy-every-field reports it
        ordered = [i for i in ids if i != TOMBSTONE_FIELD_ID]
        if any(b < a for a, b in pairwise(ordered)):
            continue  # data-file/legacy-field-ids-sorted reports it
        wrong = [
            (position, have, want)
            for position, (have, want) in enumerate(zip(ids, stored, strict=True))
            if have != want and have != TOMBSTONE_FIELD_ID
        ]
        if wrong:
            yield (
                k,
                f"fragment {fragment.id}: legacy data file '{data_file_name(data_file)}' lists field ids that do not "
                "follow "
                "its columns: " + listed(f"column {p} holds field {w} but {h} is listed" for p, h, w in wrong),
                detail,
                None,
            )


@fragment_rule(
    "data-file/legacy-column-indices",
    severity=Severity.ERROR,
    requirements=("data-file.v1-no-column-indices",),
    summary="A legacy data file has no column_indices",
)
def _legacy_column_indices(view: VersionView, batch: NewFragments):
    for k, fragment, detail, data_file in batch.legacy_files:
        if data_file.column_indices:
            yield (
                k,
                f"fragment {fragment.id}: legacy data file '{data_file_name(data_file)}' has "
                f"{len(data_file.column_indices)} column_indices entries; legacy files have none",
                detail,
                None,
            )
