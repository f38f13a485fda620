"""Feature flags (versioning: feature flags; Manifest.reader/writer_feature_flags).

A reader must refuse a table whose ``reader_feature_flags`` contain a flag it
does not know; a writer must do the same with ``writer_feature_flags``
(feature-flags.reader-refuses-unknown, feature-flags.writer-refuses-unknown).

This implementation knows the flags of the seeds' format revision (1 to 16,
feature-flags.known-bits) and nothing later: the newer upstream flags (32 to
2048, feature-flags.known-bits-to-2048) each promise a behaviour it does not
implement (overlay files, covering columns, per-file exact versions, fragment
reuse translation, managed blobs, manifest-only transactions), so it refuses
them rather than read or write such a table wrongly.
"""

from __future__ import annotations

DELETION_FILES = 1
STABLE_ROW_IDS = 2
USE_V2_FORMAT_DEPRECATED = 4
TABLE_CONFIG = 8
BASE_PATHS = 16

NAMES = {
    DELETION_FILES: "deletion_files",
    STABLE_ROW_IDS: "stable_row_ids",
    USE_V2_FORMAT_DEPRECATED: "use_v2_format_deprecated",
    TABLE_CONFIG: "table_config",
    BASE_PATHS: "base_paths",
}

KNOWN_FLAGS = DELETION_FILES | STABLE_ROW_IDS | USE_V2_FORMAT_DEPRECATED | TABLE_CONFIG | BASE_PATHS


def unknown_flags(flags: int) -> int:
    """The bits of ``flags`` this implementation does not know."""
    return flags & ~KNOWN_FLAGS


def flag_names(flags: int) -> list[str]:
    names = [name for bit, name in NAMES.items() if flags & bit]
    rest = unknown_flags(flags)
    if rest:
        names.append(f"unknown(0x{rest:x})")
    return names
