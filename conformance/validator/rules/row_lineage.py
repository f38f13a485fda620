"""Rules of the row lineage storage of revision upstream-2026-11-29 (row id &
lineage page at 117de6ba, "Inline and Spilled Storage"; the model and the
reader are :mod:`reference_impl.row_lineage`).

The newest page replaces the external byte-range arms of the three sequences
(DataFragment fields 6, 8, 10: reserved, never emitted) with column arms
(fields 12 to 14): an empty marker, the values being a hidden UInt64 column
of one of the fragment's own data files, found by a reserved field id (-3,
-4, -5). These rules check what is stored: that no fragment uses a reserved
arm, that each column arm's column is in exactly one of the fragment's data
files and those are v2 files, that the column holds one non-null value per
physical row, that the spilled lineage flag is set, and that the schema
leaves the hidden columns' names alone.

Bit 2048 is the spilled lineage flag on this page and managed blobs on
versioning.md; the disagreement is reported by the check of pages that
disagree. Here the bit is only required where the page requires it.
"""

from __future__ import annotations

from reference_impl.fragments import ExternalFile
from reference_impl.row_lineage import (
    RESERVED_NAMES,
    carrying_files,
    legacy_files,
    spilled,
)

from ..context import VersionView
from ..facts.flag_words import flag_word_location, missing_flag_words
from ..facts.row_ids import SEQUENCES, SequenceStatus, sequence, sequence_location, storing_fragments
from ..facts.text import listed
from ..registry import Severity, rule

#: The flag bit the page asks a writer of a column arm to set in both flag words.
SPILLED_LINEAGE_FLAG = 2048

#: The names of the external arms, by the Fragment attribute of their sequence.
EXTERNAL_ARMS = {
    "row_id_sequence": "external_row_ids (6)",
    "last_updated_at_version_sequence": "external_last_updated_at_versions (8)",
    "created_at_version_sequence": "external_created_at_versions (10)",
}


@rule(
    "row-id/external-arms-reserved",
    severity=Severity.ERROR,
    requirements=("row-id.external-arms-reserved",),
    summary="No fragment sets the reserved external arms of its row id or version sequences (fields 6, 8, 10)",
)
def external_arms_reserved(view: VersionView):
    for index, fragment in storing_fragments(view):
        for attr, arm in EXTERNAL_ARMS.items():
            if isinstance(getattr(fragment, attr), ExternalFile):
                yield (
                    f"fragment {fragment.id}: its {SEQUENCES[attr]} is kept in an external file through "
                    f"{arm}, an arm the row id page reserves (no writer emits it; large sequences spill to a "
                    "hidden column instead)",
                    sequence_location(view, index, fragment, attr),
                )


@rule(
    "row-id/column-located",
    severity=Severity.ERROR,
    requirements=("row-id.column-in-one-file", "row-id.column-only-in-v2-files"),
    summary="Each spilled sequence's hidden column is listed by exactly one data file of its fragment, all of "
    "them v2 files",
)
def column_located(view: VersionView):
    for index, fragment in storing_fragments(view):
        columns = spilled(fragment)
        if not columns:
            continue
        legacy = legacy_files(fragment)
        if legacy:
            yield (
                f"fragment {fragment.id}: {listed([c.name for c in columns])} spilled to hidden columns, but data "
                f"files {listed(legacy)} of the fragment are legacy (v1) files, which cannot locate a column",
                view.at(f"fragments[{index}].files"),
            )
            continue
        for spec in columns:
            found = carrying_files(fragment, spec)
            if len(found) != 1:
                which = "no data file" if not found else f"{len(found)} data files ({listed(found)})"
                yield (
                    f"fragment {fragment.id}: its {SEQUENCES[spec.attr]} is spilled to the {spec.name} column, but "
                    f"{which} of the fragment list field id {spec.field_id}",
                    sequence_location(view, index, fragment, spec.attr),
                )


@rule(
    "row-id/column-values",
    severity=Severity.ERROR,
    requirements=("row-id.column-values",),
    summary="A hidden lineage column is UInt64 with one non-null value per physical row",
)
def column_values(view: VersionView):
    for index, fragment in storing_fragments(view):
        if legacy_files(fragment):
            continue  # row-id/column-located reports it
        for spec in spilled(fragment):
            if len(carrying_files(fragment, spec)) != 1:
                continue  # row-id/column-located reports it
            decoded = sequence(view, fragment, spec.attr)
            if decoded is not None and decoded.status is SequenceStatus.COLUMN:
                yield (
                    f"fragment {fragment.id}: the {spec.name} column: {decoded.message}",
                    sequence_location(view, index, fragment, spec.attr),
                )


@rule(
    "row-id/column-flag",
    severity=Severity.ERROR,
    requirements=("row-id.column-flag",),
    summary=f"A dataset with spilled sequences sets flag {SPILLED_LINEAGE_FLAG} in the reader and writer flags",
)
def column_flag(view: VersionView):
    spilling = [fragment.id for _, fragment in storing_fragments(view) if spilled(fragment)]
    if not spilling:
        return
    missing = missing_flag_words(view.manifest, SPILLED_LINEAGE_FLAG)
    if missing:
        yield (
            f"fragments {listed(spilling)} spill row lineage to hidden columns, but flag {SPILLED_LINEAGE_FLAG} is "
            f"not set in the {' and '.join(missing)} feature flags: a reader without it would see no sequence",
            view.at(flag_word_location(missing)),
        )


@rule(
    "row-id/column-names-reserved",
    severity=Severity.ERROR,
    requirements=("row-id.column-names-reserved",),
    summary="No top-level schema field takes the name of a hidden lineage column",
)
def column_names_reserved(view: VersionView):
    schema = view.manifest.schema
    if schema is None:
        return
    taken = sorted(field.name for field in schema.top_level() if field.name in RESERVED_NAMES)
    if taken:
        yield (
            f"the schema has top-level fields named {listed(taken)}, names reserved for the hidden row lineage columns",
            view.at("schema"),
        )
