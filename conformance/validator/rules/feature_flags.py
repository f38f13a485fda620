"""Rules on feature flags (versioning: feature flags).

Which bits are defined depends on the format revision the run checks
(``DatasetView.spec_revision``; feature-flags.known-bits for the seeds'
revision, feature-flags.known-bits-to-2048 for the newest): a bit the revision
does not define is reported as unknown to it, naming the later revision that
defines it when there is one. A bit the upstream pages give different meanings
(docs/spec-inconsistencies.md, :mod:`conformance.spec_inconsistencies`) is
reported as contested, naming each meaning and its page
(feature-flags.one-meaning-per-bit).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from reference_impl import feature_flags as flags

from ...spec_inconsistencies import Claim, Inconsistency, contested_bit
from ...spec_revisions import REVISIONS, Pairing, SpecRevision, first_defining
from ...spec_sources import document
from ..context import VersionView
from ..facts.flag_words import flag_word_location, missing_flag_words
from ..facts.text import listed
from ..registry import Severity, rule

_KNOWN_BITS = ("feature-flags.known-bits", "feature-flags.known-bits-to-2048")


def _unknown_to(revision: SpecRevision, value: int) -> str | None:
    """What ``revision`` makes of the bits of ``value`` it does not define, or
    None when it defines them all."""
    undefined = revision.undefined_bits(value)
    if not undefined:
        return None
    later: dict[SpecRevision, list[int]] = {}
    nowhere: list[int] = []
    for bit in undefined:
        definer = first_defining(bit, after=revision)
        if definer is None:
            nowhere.append(bit)
        else:
            later.setdefault(definer, []).append(bit)
    parts = [
        f"{_bits(bits, definer)} defined by the later revision {definer.name}"
        for definer, bits in sorted(later.items(), key=lambda item: REVISIONS.index(item[0]))
    ]
    if nowhere:
        parts.append(f"{_bits(nowhere)} defined by no revision this project knows")
    return f"unknown to format revision {revision.name}: " + "; ".join(parts)


def _bits(bits: list[int], definer: SpecRevision | None = None) -> str:
    def one(bit: int) -> str:
        flag = definer.flag(bit) if definer else None
        return f"{bit} ({flag.name})" if flag else str(bit)

    return ("bit " if len(bits) == 1 else "bits ") + ", ".join(one(bit) for bit in bits)


@rule(
    "feature-flags/known",
    severity=Severity.ERROR,
    requirements=_KNOWN_BITS,
    summary="Reader feature flags hold only bits the checked format revision defines (a reader must refuse others)",
)
def known(view: VersionView):
    unknown = _unknown_to(view.dataset.spec_revision, view.manifest.reader_feature_flags)
    if unknown:
        yield (
            f"reader feature flags: {unknown}; readers of that revision must refuse this version",
            view.at("reader_feature_flags"),
        )


@rule(
    "feature-flags/writer-known",
    severity=Severity.WARNING,
    requirements=_KNOWN_BITS,
    summary="Writer feature flags hold only bits the checked format revision defines (a writer must refuse others)",
)
def writer_known(view: VersionView):
    unknown = _unknown_to(view.dataset.spec_revision, view.manifest.writer_feature_flags)
    if unknown:
        yield (
            f"writer feature flags: {unknown}; writers of that revision must not write this dataset",
            view.at("writer_feature_flags"),
        )


@rule(
    "feature-flags/paired-bits",
    severity=Severity.ERROR,
    requirements=("feature-flags.paired-bits-agree",),
    summary="Flags paired by the format revision (256, 2048) are set in both reader and writer flags or in neither",
)
def paired_bits(view: VersionView):
    manifest = view.manifest
    for flag in view.dataset.spec_revision.flags:
        if flag.pairing is not Pairing.BOTH_OR_NEITHER:
            continue
        reader = bool(manifest.reader_feature_flags & flag.bit)
        writer = bool(manifest.writer_feature_flags & flag.bit)
        if reader != writer:
            having, lacking = ("reader", "writer") if reader else ("writer", "reader")
            yield (
                f"flag {flag.bit} ({flag.name}) is set in the {having} flags but not in the {lacking} flags; "
                f"format revision {view.dataset.spec_revision.name} requires both or neither",
                view.at(f"{lacking}_feature_flags"),
            )


@rule(
    "feature-flags/paired-bits-persist",
    severity=Severity.ERROR,
    requirements=("feature-flags.paired-bits-persist",),
    summary="A flag that must stay set (256, 2048) is not cleared by a later version, restores included",
)
def paired_bits_persist(view: VersionView):
    if view.version <= 1:
        return
    previous = view.dataset.manifest_file(view.version - 1)
    if not previous.ok:
        return  # cleaned up or unreadable: the history and manifest rules say which
    before, now = previous.value.manifest, view.manifest
    for flag in view.dataset.spec_revision.flags:
        if not flag.persists:
            continue
        was_set = (before.reader_feature_flags | before.writer_feature_flags) & flag.bit
        cleared = [
            name
            for name, value in (("reader", now.reader_feature_flags), ("writer", now.writer_feature_flags))
            if not value & flag.bit
        ]
        if was_set and cleared:
            yield (
                f"version {view.version - 1} sets flag {flag.bit} ({flag.name}) but this version clears it in "
                f"the {' and '.join(cleared)} flags; once set it stays set",
                view.at(f"{cleared[0]}_feature_flags"),
            )


def _requires(view: VersionView, bit: int, *, reader: bool, writer: bool, reason: str):
    missing = missing_flag_words(view.manifest, bit, reader=reader, writer=writer)
    if missing:
        yield (
            f"{reason}, but flag {bit} ({flags.NAMES[bit]}) is not set in the {' and '.join(missing)} flags",
            view.at(flag_word_location(missing)),
        )


@rule(
    "feature-flags/deletion-files",
    severity=Severity.ERROR,
    requirements=("feature-flags.deletion-files",),
    summary="Deletion files present: flag 1 is set for readers and writers",
)
def deletion_files(view: VersionView):
    holders = [f.id for f in view.manifest.fragments if f.deletion_file is not None]
    if holders:
        yield from _requires(
            view,
            flags.DELETION_FILES,
            reader=True,
            writer=True,
            reason=f"fragments {listed(holders)} have deletion files",
        )


@rule(
    "feature-flags/stable-row-ids",
    severity=Severity.ERROR,
    requirements=("feature-flags.stable-row-ids", "row-id.sequence-when-enabled"),
    summary="Row id sequences present if and only if flag 2 is set",
)
def stable_row_ids(view: VersionView):
    manifest = view.manifest
    with_ids = [f.id for f in manifest.fragments if f.row_id_sequence is not None]
    enabled = bool(manifest.reader_feature_flags & flags.STABLE_ROW_IDS)
    if with_ids:
        yield from _requires(
            view,
            flags.STABLE_ROW_IDS,
            reader=True,
            writer=True,
            reason=f"fragments {listed(with_ids)} store row id sequences",
        )
    if enabled:
        without = [f.id for f in manifest.fragments if f.row_id_sequence is None]
        if without:
            yield (
                f"stable row ids are on but fragments {listed(without)} store no row id sequence",
                view.at("fragments"),
            )


@rule(
    "feature-flags/base-paths",
    severity=Severity.ERROR,
    requirements=("feature-flags.base-paths",),
    summary="Base paths declared: flag 16 is set for readers and writers",
)
def base_paths(view: VersionView):
    if view.manifest.base_paths:
        yield from _requires(
            view, flags.BASE_PATHS, reader=True, writer=True, reason="the manifest declares base paths"
        )


@rule(
    "feature-flags/table-config",
    severity=Severity.ERROR,
    requirements=("feature-flags.table-config",),
    summary="Table config present: flag 8 is set for writers",
)
def table_config(view: VersionView):
    if view.manifest.config:
        yield from _requires(
            view, flags.TABLE_CONFIG, reader=False, writer=True, reason="the manifest has table config"
        )


@rule(
    "feature-flags/deprecated-v2-flag",
    severity=Severity.INFO,
    requirements=("feature-flags.v2-format-deprecated",),
    summary="The deprecated flag 4 is not set",
)
def deprecated_v2(view: VersionView):
    manifest = view.manifest
    if (manifest.reader_feature_flags | manifest.writer_feature_flags) & flags.USE_V2_FORMAT_DEPRECATED:
        yield "the deprecated flag 4 (v2 data files) is set", view.at("reader_feature_flags")


@rule(
    "feature-flags/without-content",
    severity=Severity.WARNING,
    requirements=("feature-flags.deletion-files", "feature-flags.base-paths"),
    summary="Flags 1 and 16 are not set when nothing needs them",
)
def without_content(view: VersionView):
    manifest = view.manifest
    both = manifest.reader_feature_flags | manifest.writer_feature_flags
    if both & flags.DELETION_FILES and not any(f.deletion_file for f in manifest.fragments):
        yield "flag 1 (deletion files) is set but no fragment has a deletion file", view.at("reader_feature_flags")
    if both & flags.BASE_PATHS and not manifest.base_paths:
        yield "flag 16 (base paths) is set but no base path is declared", view.at("reader_feature_flags")


@rule(
    "feature-flags/contested-bit",
    severity=Severity.INFO,
    requirements=("feature-flags.one-meaning-per-bit",),
    summary="A flag bit the upstream pages give different meanings is set: the finding names each meaning and page",
)
def contested_bits(view: VersionView):
    # Info, not a warning: the dataset is not shown wrong (its writer had to set the bit for the feature it
    # uses, and the manifest cannot say which page it followed), and a warning would fail `--fail-on warning`
    # on every valid table using such a feature. The finding tells the reader of the report which meanings
    # are in play and which one this validator applied.
    manifest = view.manifest
    words = {"reader": manifest.reader_feature_flags, "writer": manifest.writer_feature_flags}
    both = manifest.reader_feature_flags | manifest.writer_feature_flags
    for bit in (1 << position for position in range(64) if both >> position & 1):
        contested = contested_bit(bit)
        if contested is None:
            continue
        setting = [name for name, value in words.items() if value & bit]
        yield (
            f"flag {bit} is set in the {' and '.join(setting)} flags, and the upstream pages disagree on what it "
            f"means: {_meanings(contested)}; {_applied(view.dataset.spec_revision, bit)}",
            view.at(f"{setting[0]}_feature_flags"),
        )


def _meanings(contested: Inconsistency) -> str:
    def cited(claim: Claim) -> str:
        page = document(claim.document)
        return f"{PurePosixPath(page.path).name}@{page.commit[:8]}, {claim.section}"

    return "; ".join(
        f"{meaning.text} [{'; '.join(cited(claim) for claim in claims)}]" for meaning, claims in contested.meanings
    )


def _applied(revision: SpecRevision, bit: int) -> str:
    flag = revision.flag(bit)
    if flag is None:
        return f"format revision {revision.name}, which this run checks, does not define it (feature-flags/known)"
    return f"this run reads it as {flag.name}, as format revision {revision.name} does"
