"""Format revisions: named states of the Lance table format, oldest first.

A revision is a state of the format as its documents describe it, not a
source commit. Each one carries its table of reader/writer feature flags
(``Manifest.reader_feature_flags`` / ``writer_feature_flags``): which bits it
defines, what each means, where it must be set, and the rules that pair a
reader bit with its writer bit. The requirements catalog records, for every
requirement, the revision that introduced it (``introduced_in``), and
``lance-conformance validate --spec-revision NAME`` checks a dataset against
one revision (requirement ``feature-flags.known-bits`` and its successor
``feature-flags.known-bits-to-2048``).

A later revision's flag table only adds: it keeps every bit an earlier one
defines, with the same meaning (tests/conformance/test_spec_revisions.py).
Requirements are versioned in the catalog (conformance/requirements.py): one
is in force from the revision that introduced it until the revision whose
requirement supersedes it, so a later page that contradicts an earlier one
(upstream-2026-11-29 keeps an updated row's id, where the seeds gave it a new
one) is checked under its own revision while the earlier statement is still
checked under the earlier ones. A dataset valid under the seeds therefore
stays valid under every later revision except where a later page contradicts
the seeds (tests/conformance/validator/test_feature_flag_revisions.py).

Sources: the upstream page ``docs/src/format/table/versioning.md``, section
"Current Feature Flags", in two states: the one the project was built on
(``lancedb/lance`` at 731871fa, November 2025: bits 1 to 16, 32 and up
unknown) and the newest one (``lance-format/lance`` at 0897e38a, read in
November 2026: bits 1 to 2048, 4096 and up unknown). The table.proto of the
seeds names only bits 1, 2, 4 and 8 but already declares ``base_paths``; the
upstream page of the same period fills in bit 16 for it
(docs/spec-discrepancies.md, "Format revisions").
"""

from __future__ import annotations

import argparse
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType


class FlagUse(str, enum.Enum):
    """Which of the two flag fields a writer sets the bit in when the feature
    is in use (the "Reader Required" / "Writer Required" columns)."""

    READER_AND_WRITER = "reader and writer"
    WRITER_ONLY = "writer only"
    #: Deprecated: set by nobody, needed by nobody.
    NEITHER = "neither"


class Pairing(str, enum.Enum):
    """How the reader bit and the writer bit of one flag relate."""

    #: Each field is checked on its own.
    INDEPENDENT = "independent"
    #: The reader bit and the writer bit are both set or both clear.
    BOTH_OR_NEITHER = "both or neither"


@dataclass(frozen=True)
class Source:
    """Where a revision's flag table is written down."""

    repository: str
    path: str
    section: str
    #: The stored state of the page that was read (None where docs/spec-sources.md gives it).
    commit: str | None = None

    def __str__(self) -> str:
        at = f" at {self.commit[:8]}" if self.commit else ""
        return f"{self.repository}:{self.path}{at}, {self.section}"


@dataclass(frozen=True)
class FeatureFlag:
    bit: int
    #: Upstream's name without its ``FLAG_`` prefix, lower case.
    name: str
    meaning: str
    use: FlagUse
    #: The catalog requirement that defines the flag.
    requirement: str
    pairing: Pairing = Pairing.INDEPENDENT
    #: Once set, later versions keep the bit (restores included).
    persists: bool = False


@dataclass(frozen=True)
class SpecRevision:
    name: str
    summary: str
    sources: tuple[Source, ...]
    flags: tuple[FeatureFlag, ...]
    #: The catalog requirement listing the defined bits of this revision.
    known_bits_requirement: str

    @cached_property
    def defined_mask(self) -> int:
        mask = 0
        for flag in self.flags:
            mask |= flag.bit
        return mask

    def flag(self, bit: int) -> FeatureFlag | None:
        return next((flag for flag in self.flags if flag.bit == bit), None)

    def undefined_bits(self, flags: int) -> list[int]:
        """The single bits of ``flags`` (a u64) this revision does not define."""
        rest = flags & ~self.defined_mask & (2**64 - 1)
        return [1 << position for position in range(64) if rest >> position & 1]

    def __str__(self) -> str:
        return self.name


class UnknownRevisionError(ValueError):
    """A revision name the project does not know."""

    def __init__(self, name: str):
        super().__init__(f"unknown format revision {name!r}; known revisions: {', '.join(REVISIONS_BY_NAME)}")
        self.name = name


_VERSIONING = "docs/src/format/table/versioning.md"
_FLAG_TABLE = "Current Feature Flags"

_SEED_FLAGS = (
    FeatureFlag(
        1,
        "deletion_files",
        "fragments may carry deletion files",
        FlagUse.READER_AND_WRITER,
        "feature-flags.deletion-files",
    ),
    FeatureFlag(
        2,
        "stable_row_ids",
        "row ids are stable and stored with the fragments",
        FlagUse.READER_AND_WRITER,
        "feature-flags.stable-row-ids",
    ),
    FeatureFlag(
        4,
        "use_v2_format_deprecated",
        "deprecated marker of v2 data files; unused",
        FlagUse.NEITHER,
        "feature-flags.v2-format-deprecated",
    ),
    FeatureFlag(
        8, "table_config", "the manifest carries table config", FlagUse.WRITER_ONLY, "feature-flags.table-config"
    ),
    FeatureFlag(
        16,
        "base_paths",
        "the table reads files from more than one base path",
        FlagUse.READER_AND_WRITER,
        "feature-flags.base-paths",
    ),
)

_NEWER_FLAGS = (
    FeatureFlag(
        32,
        "disable_transaction_file",
        "transactions live in the manifest, not in transaction files",
        FlagUse.WRITER_ONLY,
        "feature-flags.disable-transaction-file",
    ),
    FeatureFlag(
        64,
        "unstable_data_overlay_files",
        "fragments may carry data overlay files (unstable)",
        FlagUse.READER_AND_WRITER,
        "feature-flags.data-overlay-files",
    ),
    FeatureFlag(
        128,
        "covered_index_metadata",
        "some index carries covering columns besides its keys",
        FlagUse.READER_AND_WRITER,
        "feature-flags.covered-index-metadata",
    ),
    FeatureFlag(
        256,
        "mixed_data_file_versions",
        "data files of one snapshot may have different exact versions",
        FlagUse.READER_AND_WRITER,
        "feature-flags.mixed-data-file-versions",
        pairing=Pairing.BOTH_OR_NEITHER,
        persists=True,
    ),
    FeatureFlag(
        512,
        "frag_reuse_with_stable_row_ids",
        "stable row ids together with a fragment reuse index",
        FlagUse.READER_AND_WRITER,
        "feature-flags.frag-reuse-with-stable-row-ids",
    ),
    FeatureFlag(
        1024,
        "fragment_reuse_index",
        "the fragment reuse index records tagged transitions",
        FlagUse.READER_AND_WRITER,
        "feature-flags.fragment-reuse-index-versions",
    ),
    FeatureFlag(
        2048,
        "managed_blobs",
        "blob descriptors may address objects the table owns",
        FlagUse.READER_AND_WRITER,
        "feature-flags.managed-blobs",
        pairing=Pairing.BOTH_OR_NEITHER,
        persists=True,
    ),
)

#: Every revision the project knows, oldest first.
REVISIONS: tuple[SpecRevision, ...] = (
    SpecRevision(
        "seeds",
        "the format as the seeds describe it, with the upstream pages of the same period filling in: "
        "flags 1 to 16 defined, 32 and up unknown",
        (
            Source(
                "lance-format/lance",
                "protos/table.proto",
                "Manifest.reader_feature_flags (docs/spec-sources.md, table-proto)",
            ),
            Source("lancedb/lance", _VERSIONING, _FLAG_TABLE, "731871fabd8096c38354c4d3efb77baab0c27005"),
        ),
        _SEED_FLAGS,
        "feature-flags.known-bits",
    ),
    SpecRevision(
        "upstream-2026-11",
        "the newest upstream versioning page (read 2026-11): flags 1 to 2048 defined, 4096 and up unknown",
        (Source("lance-format/lance", _VERSIONING, _FLAG_TABLE, "0897e38aae7a70796094a85eeb99d7ff07698f98"),),
        _SEED_FLAGS + _NEWER_FLAGS,
        "feature-flags.known-bits-to-2048",
    ),
    SpecRevision(
        "upstream-2026-11-29",
        "the upstream table pages as read on 2026-11-29: updates keep a row's id and its created-at version, "
        "row lineage sequences spill to hidden columns (the external arms reserved), ReserveRowIds, the MemWAL "
        "shard model, experimental pages recorded; the same flag table as upstream-2026-11",
        (
            Source("lance-format/lance", _VERSIONING, _FLAG_TABLE, "0897e38aae7a70796094a85eeb99d7ff07698f98"),
            Source(
                "lance-format/lance",
                "docs/src/format/table/row_id_lineage.md",
                "Row ID Behavior on Updates; Inline and Spilled Storage",
                "117de6bad228e000e4829d6ef6cdfdf5a353c665",
            ),
        ),
        _SEED_FLAGS + _NEWER_FLAGS,
        "feature-flags.known-bits-to-2048",
    ),
)

REVISIONS_BY_NAME: Mapping[str, SpecRevision] = MappingProxyType({r.name: r for r in REVISIONS})
NEWEST: SpecRevision = REVISIONS[-1]
OLDEST: SpecRevision = REVISIONS[0]

#: A flag bit no known revision defines, far above the defined ones so that
#: the next revisions will not claim it: what negative fixtures and mutations
#: set to test that readers refuse an unknown flag.
UNDEFINED_FLAG = 1 << 40


def revision(name: str) -> SpecRevision:
    """The revision called ``name``; :class:`UnknownRevisionError` otherwise."""
    try:
        return REVISIONS_BY_NAME[name]
    except KeyError:
        raise UnknownRevisionError(name) from None


def position(item: SpecRevision) -> int:
    """0 for the oldest revision, increasing."""
    return REVISIONS.index(item)


def is_at_or_before(earlier: SpecRevision, later: SpecRevision) -> bool:
    return position(earlier) <= position(later)


def first_defining(bit: int, *, after: SpecRevision | None = None) -> SpecRevision | None:
    """The oldest revision (later than ``after`` when given) that defines ``bit``."""
    start = position(after) + 1 if after is not None else 0
    return next((item for item in REVISIONS[start:] if item.flag(bit) is not None), None)


def argparse_type(name: str) -> SpecRevision:
    """``type=`` for an argparse option: a clean usage error naming the known revisions."""
    try:
        return revision(name)
    except UnknownRevisionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
