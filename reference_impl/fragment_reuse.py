"""The fragment reuse index (upstream format/index/system/frag_reuse.md): a
system index whose details, kept in the manifest or in a file of its
directory, record how compactions moved rows, so that the coverage of the
other indices is translated as readers translate it
(:func:`covered_fragment_ids`), and the row addresses their entries hold
(:func:`address_moves`, :func:`translate_row_addresses`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from google.protobuf.message import DecodeError
from pyroaring import BitMap64

from .index_metadata import IndexMetadata
from .wire import table_pb2

if TYPE_CHECKING:
    import numpy as np

#: The name of the fragment reuse index, a system index of which a version
#: has at most one.
FRAGMENT_REUSE_INDEX_NAME = "__lance_frag_reuse"

#: The largest external content of a fragment reuse index read here; the
#: page keeps small histories inline and a history this large is refused
#: before it is loaded.
MAX_REUSE_CONTENT_BYTES = 64 << 20


@dataclass(frozen=True)
class FragmentRewrite:
    """One rewrite a fragment reuse index records: the fragments it read
    and the fragments it wrote in their place."""

    sources: frozenset[int]
    destinations: frozenset[int]


def _content(index: IndexMetadata, read: Callable[[str, int, int], bytes]):
    """The ``InlineContent`` of a fragment reuse index, wherever it is kept."""
    details = table_pb2.FragmentReuseIndexDetails()
    try:
        details.ParseFromString(index.details)
        content = details.inline
        if details.WhichOneof("content") == "external":
            external = details.external
            if external.size > MAX_REUSE_CONTENT_BYTES:
                raise ValueError(f"its external content of {external.size} bytes is more than is read here")
            content = table_pb2.FragmentReuseIndexDetails.InlineContent()
            path = f"_indices/{index.uuid}/{external.path}"
            content.ParseFromString(read(path, external.offset, external.size))
    except (DecodeError, RecursionError) as exc:
        raise ValueError(f"the fragment reuse index details do not decode: {exc}") from None
    return content


def fragment_rewrites(index: IndexMetadata, read: Callable[[str, int, int], bytes]) -> list[FragmentRewrite]:
    """The rewrites the fragment reuse index ``index`` records, in the order
    they were committed (by the dataset version of each reuse version).

    ``read(path, offset, size)`` reads the content kept in an external file
    (a path relative to the table root). The page keeps that content in
    ``_indices/<uuid of the reuse index>/details.binpb``, and pylance 14
    resolves the recorded path in that directory, as is done here. Only the legacy groups of index
    version 0 (``InlineContent.versions``) are known to the reference's
    table.proto; transitions of index version 1 are skipped, which the page
    allows a reader to do (it then translates less). Raises ``ValueError``
    for details that do not decode."""
    versions = sorted(_content(index, read).versions, key=lambda version: version.dataset_version)
    return [
        FragmentRewrite(
            sources=frozenset(f.id for f in group.old_fragments),
            destinations=frozenset(f.id for f in group.new_fragments),
        )
        for version in versions
        for group in version.groups
    ]


#: What :func:`translate_row_addresses` gives a row the rewrite dropped (the
#: largest u64; a plain int, so that the coverage functions, which the
#: validator's start-up loads, do not import numpy).
NO_ROW = 0xFFFF_FFFF_FFFF_FFFF


@dataclass(frozen=True)
class AddressMove:
    """How one recorded rewrite moved rows (frag_reuse.md, "Ordered
    Compaction"): the surviving source rows, in source-fragment order and
    ascending offsets, fill the destinations in order."""

    sources: tuple[int, ...]
    #: The surviving source row addresses, in output order.
    surviving: np.ndarray
    #: (fragment id, physical rows) of each destination, in order.
    destinations: tuple[tuple[int, int], ...]

    def translate(self, addresses: np.ndarray) -> np.ndarray:
        """``addresses`` with those of the sources moved to the
        destinations (:data:`NO_ROW` for a row deleted at the rewrite)."""
        import numpy as np  # lazy: only row translation needs numpy

        out = np.array(addresses, dtype=np.uint64, copy=True)
        moved = np.isin((out >> np.uint64(32)).astype(np.int64), list(self.sources))
        wanted = out[moved]
        order = np.argsort(self.surviving, kind="stable")
        ordered = self.surviving[order]
        spot = np.minimum(np.searchsorted(ordered, wanted), max(len(ordered) - 1, 0))
        found = ordered[spot] == wanted if len(ordered) else np.zeros(len(wanted), dtype=bool)
        position = order[spot] if len(ordered) else np.zeros(len(wanted), dtype=np.int64)
        rows = np.array([count for _, count in self.destinations], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(rows)[:-1]]) if len(rows) else np.zeros(0, dtype=np.int64)
        ids = np.array([fragment for fragment, _ in self.destinations], dtype=np.uint64)
        target = np.searchsorted(starts, position, side="right") - 1
        found &= (target >= 0) & (position < rows.sum())
        target = np.clip(target, 0, max(len(rows) - 1, 0))
        translated = np.full(len(wanted), NO_ROW, dtype=np.uint64)
        if len(rows):
            offsets = (position - starts[target]).astype(np.uint64)
            translated[found] = (ids[target[found]] << np.uint64(32)) | offsets[found]
        out[moved] = translated
        return out


def address_moves(index: IndexMetadata, read: Callable[[str, int, int], bytes]) -> list[AddressMove]:
    """The row moves the fragment reuse index ``index`` records, oldest
    first (its legacy groups, as :func:`fragment_rewrites`). Raises
    ``ValueError`` for details that do not decode or a group whose
    surviving rows are not rows of its sources."""
    import numpy as np  # lazy: only row translation needs numpy

    moves = []
    for version in sorted(_content(index, read).versions, key=lambda version: version.dataset_version):
        for group in version.groups:
            sources = tuple(f.id for f in group.old_fragments)
            capacity = sum(f.physical_rows for f in group.old_fragments)
            try:
                surviving = BitMap64.deserialize(group.changed_row_addrs)
            except Exception as exc:  # pyroaring raises several types on bad input
                raise ValueError(f"a group's changed_row_addrs do not decode: {exc}") from None
            if len(surviving) > capacity:
                raise ValueError(f"a group keeps {len(surviving)} rows of sources holding {capacity}")
            addresses = np.asarray(surviving.to_array(), dtype=np.uint64)
            fragment_of = addresses >> np.uint64(32)
            in_order = [addresses[fragment_of == np.uint64(source)] for source in sources]
            stream = np.concatenate(in_order) if in_order else np.zeros(0, dtype=np.uint64)
            if len(stream) != len(addresses):
                raise ValueError("a group keeps rows of fragments that are not its sources")
            moves.append(AddressMove(sources, stream, tuple((f.id, f.physical_rows) for f in group.new_fragments)))
    return moves


def translate_row_addresses(addresses: np.ndarray, moves: list[AddressMove]) -> np.ndarray:
    """``addresses`` as readers see them once every move is applied in turn
    (frag_reuse.md: translation follows the rewrites)."""
    for move in moves:
        addresses = move.translate(addresses)
    return addresses


def translated_fragment_ids(stored: list[int] | None, rewrites: list[FragmentRewrite]) -> list[int] | None:
    """The fragments an index covers once the rewrites recorded since it was
    built are applied (the page's compaction use case: the index's entries
    for rewritten fragments are translated to the fragments written in
    their place). A rewrite all of whose sources the index covers moves its
    coverage to the destinations; one it covers only partly takes those
    sources away and adds nothing, since the destinations then hold rows the
    index never saw (what Lance does). None (no bitmap stored) stays None."""
    if stored is None:
        return None
    covered = set(stored)
    for rewrite in rewrites:
        if not rewrite.sources or not rewrite.sources & covered:
            continue
        whole = rewrite.sources <= covered
        covered -= rewrite.sources
        if whole:
            covered |= rewrite.destinations
    return sorted(covered)


def covered_fragment_ids(
    indices: list[IndexMetadata], read: Callable[[str, int, int], bytes]
) -> dict[str, list[int] | None]:
    """The fragments each index of a version covers as readers see them, by
    uuid: the stored bitmap, translated through the version's fragment reuse
    index when there is one. The reuse index's own bitmap (the fragments its
    rewrites wrote) is translated too, as pylance 14 does: a fragment it
    names that a later rewrite consumed is gone from it. Raises
    ``ValueError`` for a bitmap or fragment reuse details that do not
    decode."""
    reuse = [index for index in indices if index.name == FRAGMENT_REUSE_INDEX_NAME]
    rewrites = [rewrite for index in reuse for rewrite in fragment_rewrites(index, read)]
    return {index.uuid: translated_fragment_ids(index.fragment_ids(), rewrites) for index in indices}
