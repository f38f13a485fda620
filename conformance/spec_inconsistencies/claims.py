"""What the upstream pages say the contested subjects mean, page state by page state.

Each claim is restated in the project's words from the page state named by
its document (``conformance/data/spec_sources.json`` gives repository, path
and commit). Only subjects at least one page disputes, and the claims that
show a page changing its mind, are recorded: the flag table as the validator
uses it is ``conformance/spec_revisions.py``.

Read on 2026-11-29 (``lance-format/lance``):

- ``docs/src/format/table/versioning.md`` at 0897e38a, "Current Feature
  Flags": 512 fragment reuse with stable row ids, 1024 tagged fragment reuse
  transitions, 2048 managed blobs, 4096 and up unknown; at 3dae7f78 (an
  earlier state): bits to 512 defined, 1024 and up unknown.
- ``table/fragment_metadata.md`` at 17076e3d, the note under its title and
  "Snapshot": tree tables set bit 512, ``FLAG_FRAGMENT_METADATA``.
- ``table/blob.md`` at 0897e38a, "Table Capability": ``FLAG_MANAGED_BLOBS``
  is 2048.
- ``table/row_id_lineage.md`` at 117de6ba, "Inline and Spilled Storage": a
  spilled row lineage column needs bit 11, value 2048.
- ``table/liquid_clustering.md`` at 77b5fb03, "Feature Flag":
  ``FLAG_CLUSTERING_METADATA`` is ``1 << 11`` (2048), writer flags only.
- ``table/clustering.md`` at fee6e8a2, "Compatibility":
  ``FLAG_CLUSTERING_METADATA`` is ``1 << 12`` (4096), writer flags only.
- ``protos/transaction.proto`` at 7c800fd0: the Transaction's operation field
  116 is ReserveRowIds; ``protos/transaction/transaction.proto`` at a392056d:
  it is the experimental CompositeOperation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .model import Claim, Meaning, Subject, SubjectKind

# -- meanings -----------------------------------------------------------------

FRAG_REUSE_WITH_STABLE_ROW_IDS = Meaning(
    "frag-reuse-with-stable-row-ids",
    "the table has stable row ids and carries a fragment reuse index "
    "(FLAG_FRAG_REUSE_WITH_STABLE_ROW_IDS; reader and writer flags)",
)
FRAGMENT_METADATA_TREE = Meaning(
    "fragment-metadata-tree",
    "the table keeps its fragments in a fragment metadata tree and leaves the manifest's fragment list empty "
    "(FLAG_FRAGMENT_METADATA; reader and writer flags; experimental)",
)
TAGGED_FRAGMENT_REUSE = Meaning(
    "tagged-fragment-reuse-transitions",
    "the fragment reuse index records tagged transitions (FLAG_FRAGMENT_REUSE_INDEX; reader and writer flags)",
)
MANAGED_BLOBS = Meaning(
    "managed-blobs",
    "blob descriptors may address objects the table owns "
    "(FLAG_MANAGED_BLOBS; reader and writer flags, both or neither, kept once set)",
)
SPILLED_ROW_LINEAGE = Meaning(
    "spilled-row-lineage",
    "some fragment keeps a row id or row version sequence in a hidden column of a data file "
    "(the page names no constant; reader and writer flags)",
)
LIQUID_CLUSTERING = Meaning(
    "liquid-clustering-metadata",
    "the manifest holds liquid clustering state or a fragment a clustering generation "
    "(FLAG_CLUSTERING_METADATA; writer flags only)",
)
CLUSTERING_PROVIDERS = Meaning(
    "clustering-provider-metadata",
    "the manifest holds a clustering provider's configuration or a fragment a provider's marker "
    "(FLAG_CLUSTERING_METADATA; writer flags only)",
)
UNKNOWN = Meaning("unknown", "undefined: a reader or writer that finds it refuses the table as unsupported")
RESERVE_ROW_IDS = Meaning(
    "reserve-row-ids", "the ReserveRowIds operation: a count of stable row ids taken from next_row_id, no data"
)
COMPOSITE_OPERATION = Meaning(
    "composite-operation",
    "the CompositeOperation: a list of actions (AddFragment, TombstoneFieldData, AssertUniqueKeys, "
    "ReserveRowIds, ...) applied as one operation (experimental)",
)
BIT_2048 = Meaning("bit-2048", "the flag bit worth 2048 (1 << 11)")
BIT_4096 = Meaning("bit-4096", "the flag bit worth 4096 (1 << 12)")

# -- claims -------------------------------------------------------------------

_FLAG_TABLE = "Current Feature Flags"
_CLUSTERING_FLAG_NAME = Subject(SubjectKind.NAME, "FLAG_CLUSTERING_METADATA")
_MANAGED_BLOBS_NAME = Subject(SubjectKind.NAME, "FLAG_MANAGED_BLOBS")
_bit = Subject.flag_bit
_OPERATION_116 = Subject(SubjectKind.FIELD_NUMBER, "Transaction.operation 116")

CLAIMS: tuple[Claim, ...] = (
    Claim("versioning-page-2026-11", _FLAG_TABLE, _bit(512), FRAG_REUSE_WITH_STABLE_ROW_IDS),
    Claim("versioning-page-2026-11", _FLAG_TABLE, _bit(1024), TAGGED_FRAGMENT_REUSE),
    Claim("versioning-page-2026-11", _FLAG_TABLE, _bit(2048), MANAGED_BLOBS),
    Claim("versioning-page-2026-11", _FLAG_TABLE, _bit(4096), UNKNOWN),
    Claim("versioning-page-2026-11", _FLAG_TABLE, _MANAGED_BLOBS_NAME, BIT_2048),
    Claim("versioning-page-2026-11-earlier", _FLAG_TABLE, _bit(512), FRAG_REUSE_WITH_STABLE_ROW_IDS),
    Claim("versioning-page-2026-11-earlier", _FLAG_TABLE, _bit(1024), UNKNOWN),
    Claim("versioning-page-2026-11-earlier", _FLAG_TABLE, _bit(2048), UNKNOWN),
    Claim("versioning-page-2026-11-earlier", _FLAG_TABLE, _bit(4096), UNKNOWN),
    Claim("fragment-metadata-page-2026-11-29", "Snapshot", _bit(512), FRAGMENT_METADATA_TREE),
    Claim("blob-page-2026-11", "Table Capability", _bit(2048), MANAGED_BLOBS),
    Claim("blob-page-2026-11", "Table Capability", _MANAGED_BLOBS_NAME, BIT_2048),
    Claim("row-id-lineage-page-2026-11-29", "Inline and Spilled Storage", _bit(2048), SPILLED_ROW_LINEAGE),
    Claim("liquid-clustering-page-2026-11-29", "Feature Flag", _bit(2048), LIQUID_CLUSTERING),
    Claim("liquid-clustering-page-2026-11-29", "Feature Flag", _CLUSTERING_FLAG_NAME, BIT_2048),
    Claim("clustering-page-2026-11-29", "Compatibility", _bit(4096), CLUSTERING_PROVIDERS),
    Claim("clustering-page-2026-11-29", "Compatibility", _CLUSTERING_FLAG_NAME, BIT_4096),
    Claim("transaction-proto-2026-11-29", "message Transaction, oneof operation", _OPERATION_116, RESERVE_ROW_IDS),
    Claim(
        "transaction-v2-proto-2026-11-29", "message Transaction, oneof operation", _OPERATION_116, COMPOSITE_OPERATION
    ),
)

#: Page state -> the later state of the same page that replaces it.
SUPERSEDED: Mapping[str, str] = MappingProxyType({"versioning-page-2026-11-earlier": "versioning-page-2026-11"})

# -- what the suite does meanwhile ----------------------------------------------

_READS_BY_VERSIONING = (
    "The validator reads flags by versioning.md's table (conformance/spec_revisions.py, format revisions "
    "upstream-2026-11 and upstream-2026-11-29)"
)
_INFO = "`validate` adds the info finding `feature-flags/contested-bit` naming every meaning listed here and its page"
_REFERENCE_REFUSES = (
    "The reference implementation knows the seeds' flags only: its reader refuses the bit in the reader flags "
    "and its writer in the writer flags as unknown, whichever page's writer set it"
)

MEANWHILE: Mapping[Subject, str] = MappingProxyType(
    {
        _bit(512): (
            f"{_READS_BY_VERSIONING}: a dataset setting 512 is taken to use a fragment reuse index with stable row "
            f"ids, and {_INFO}. The fragment metadata tree is not modelled: a tree table's empty fragment list "
            f"would be read as an empty table, which is what that page warns of. {_REFERENCE_REFUSES}, as the "
            "fragment metadata page asks of an implementation that does not understand tree tables."
        ),
        _bit(2048): (
            f"{_READS_BY_VERSIONING}, which blob.md agrees with: 2048 is managed blobs, set in both flag words or "
            "neither (`feature-flags/paired-bits`) and kept once set (`feature-flags/paired-bits-persist`). A "
            "table with spilled row lineage sets both words and passes those checks; a liquid clustering table "
            "sets the writer word only and is reported as a half-set managed blobs flag (an error). In every "
            f"case {_INFO}. {_REFERENCE_REFUSES}."
        ),
        _bit(4096): (
            "Every format revision of the project calls 4096 unknown, as versioning.md does: "
            "`feature-flags/known` reports it in the reader flags (an error) and `feature-flags/writer-known` in "
            "the writer flags, where the clustering providers page puts it (a warning); "
            f"{_INFO}. {_REFERENCE_REFUSES}."
        ),
        _CLUSTERING_FLAG_NAME: (
            "No revision of the project defines a clustering flag, so nothing reads the name; the two bits it "
            "stands for are handled as flag bits 2048 and 4096 above."
        ),
        _OPERATION_116: (
            "The reference decodes a field 116 as ReserveRowIds, the operation of the newest transaction page "
            "(its compatibility section is in `decide` and the conflict matrix), unless the message carries "
            "fields a ReserveRowIds lacks (a CompositeOperation's actions): then it keeps the operation as "
            "unknown, which conflicts with every other operation, and `transaction/unknown-operation` warns "
            "(docs/spec-discrepancies.md, Conflict matrix, item 10)."
        ),
    }
)

# -- upstream threads -----------------------------------------------------------


@dataclass(frozen=True)
class Thread:
    """An upstream issue or pull request about how flag bits are allocated."""

    url: str
    title: str
    summary: str


THREADS: tuple[Thread, ...] = (
    Thread(
        "https://github.com/lance-format/lance/pull/9420",
        "lance-format/lance#9420, fix(format): move FLAG_UNKNOWN off the tagged FRI bit (merged)",
        "The same collision in the Rust implementation's constants: two changes each took the next free bit, so "
        "the first-unknown-bit boundary FLAG_UNKNOWN and FLAG_FRAGMENT_REUSE_INDEX were both 1 << 10 (1024). "
        "The pull request calls it latent (the tagged bit was not yet supported, so nothing accepted it by "
        "mistake) and moves the boundary to 1 << 11 behind a compile-time assertion.",
    ),
    Thread(
        "https://github.com/lance-format/lance/pull/7670",
        "lance-format/lance#7670, feat(format): general experimental-feature mechanism (open)",
        "Proposes one reserved bit, FLAG_EXPERIMENTAL at 1 << 6, that refuses a dataset to every library "
        "predating an experiment, with the experimental features themselves named in string lists of the "
        "manifest, so that experiments stop spending permanent bits. Experimental pages such as the fragment "
        "metadata tree would then need no bit of their own; versioning.md at 0897e38a gives 1 << 6 (64) to "
        "unstable data overlay files.",
    ),
)
