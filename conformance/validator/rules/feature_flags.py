"""Rules on feature flags (versioning: feature flags)."""

from __future__ import annotations

from reference_impl import feature_flags as flags

from ..context import VersionView
from ..registry import Severity, rule


@rule(
    "feature-flags/known",
    severity=Severity.ERROR,
    requirements=("feature-flags.known-bits",),
    summary="Reader feature flags hold only known bits (a reader must refuse others)",
)
def known(view: VersionView):
    unknown = flags.unknown_flags(view.manifest.reader_feature_flags)
    if unknown:
        yield f"reader feature flags 0x{unknown:x} are unknown: spec readers must refuse this version", view.at(
            "reader_feature_flags"
        )


@rule(
    "feature-flags/writer-known",
    severity=Severity.WARNING,
    requirements=("feature-flags.known-bits",),
    summary="Writer feature flags hold only known bits (a writer must refuse others)",
)
def writer_known(view: VersionView):
    unknown = flags.unknown_flags(view.manifest.writer_feature_flags)
    if unknown:
        yield f"writer feature flags 0x{unknown:x} are unknown: spec writers must not write this dataset", view.at(
            "writer_feature_flags"
        )


def _requires(view: VersionView, bit: int, *, reader: bool, writer: bool, reason: str):
    manifest = view.manifest
    missing = []
    if reader and not manifest.reader_feature_flags & bit:
        missing.append("reader")
    if writer and not manifest.writer_feature_flags & bit:
        missing.append("writer")
    if missing:
        yield f"{reason}, but flag {bit} ({flags.NAMES[bit]}) is not set in the {' and '.join(missing)} flags", view.at(
            "reader_feature_flags" if "reader" in missing else "writer_feature_flags"
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
        yield from _requires(view, flags.DELETION_FILES, reader=True, writer=True,
                             reason=f"fragments {holders[:5]} have deletion files")


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
        yield from _requires(view, flags.STABLE_ROW_IDS, reader=True, writer=True,
                             reason=f"fragments {with_ids[:5]} store row id sequences")
    if enabled:
        without = [f.id for f in manifest.fragments if f.row_id_sequence is None]
        if without:
            yield f"stable row ids are on but fragments {without[:5]} store no row id sequence", view.at("fragments")


@rule(
    "feature-flags/base-paths",
    severity=Severity.ERROR,
    requirements=("feature-flags.base-paths",),
    summary="Base paths declared: flag 16 is set for readers and writers",
)
def base_paths(view: VersionView):
    if view.manifest.base_paths:
        yield from _requires(view, flags.BASE_PATHS, reader=True, writer=True, reason="the manifest declares base paths")


@rule(
    "feature-flags/table-config",
    severity=Severity.ERROR,
    requirements=("feature-flags.table-config",),
    summary="Table config present: flag 8 is set for writers",
)
def table_config(view: VersionView):
    if view.manifest.config:
        yield from _requires(view, flags.TABLE_CONFIG, reader=False, writer=True, reason="the manifest has table config")


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
