"""Strategies for transactions (valid ones, and anything the transaction
proto can carry) and for commit schedules (several writers racing from one
base version)."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import strategies as st
from pyroaring import BitMap

from reference_impl.fragments import DataFile, DeletionFile, DeletionFileType, ExternalFile, Fragment, LineageColumn
from reference_impl.index_metadata import IndexFile, IndexMetadata
from reference_impl.manifest import BasePath
from reference_impl.newer_operations import DataOverlay, DataOverlayFile, DataOverlayGroup, ReserveRowIds
from reference_impl.schema import Field, FieldType, Schema
from reference_impl.transactions import (
    Append,
    BloomFilter,
    Clone,
    CreateIndex,
    DataReplacement,
    DataReplacementGroup,
    Delete,
    ExactKeySetFilter,
    KeyExistenceFilter,
    Merge,
    MergedGeneration,
    Overwrite,
    Project,
    ReserveFragments,
    Restore,
    Rewrite,
    RewriteGroup,
    RewrittenIndex,
    Transaction,
    Update,
    UpdateBases,
    UpdateConfig,
    UpdateMap,
    UpdateMapEntry,
    UpdateMemWalState,
    UpdateMode,
)

from ._arguments import selection
from ._manifests import U32_MAX, U64_MAX, fragment_with
from ._types import schemas

# -- transactions ---------------------------------------------------------------------

_u32 = st.integers(0, U32_MAX)
_u64 = st.integers(0, U64_MAX)
_i32 = st.integers(-(2**31), 2**31 - 1)
_text = st.text(max_size=8)
_uuids = st.uuids().map(str)


def _maybe(s):
    return st.none() | s


@st.composite
def _wire_indices(draw):
    type_url = draw(_maybe(_text))
    return IndexMetadata(
        uuid=draw(_uuids),
        name=draw(_text),
        fields=draw(st.lists(_i32, max_size=3)),
        dataset_version=draw(_u64),
        fragment_bitmap=draw(_maybe(st.sets(_u32, min_size=1, max_size=5).map(lambda s: BitMap(s).serialize()))),
        type_url=type_url,
        details=draw(st.binary(max_size=6)) if type_url is not None else b"",
        index_version=draw(_maybe(_i32)),
        created_at=draw(_maybe(_u64)),
        base_id=draw(_maybe(_u32)),
        files=draw(st.lists(st.builds(IndexFile, _text, _u64), max_size=2)),
    )


@st.composite
def _rewritten_indices(draw):
    type_url = draw(_maybe(_text))
    return RewrittenIndex(
        old_id=draw(_maybe(_uuids)),
        new_id=draw(_maybe(_uuids)),
        new_index_details_type_url=type_url,
        new_index_details=draw(st.binary(max_size=6)) if type_url is not None else b"",
        new_index_version=draw(_u32),
        new_index_files=draw(st.lists(st.builds(IndexFile, _text, _u64), max_size=2)),
    )


def _wire_parts():
    data_files = st.builds(
        DataFile,
        path=_text,
        fields=st.lists(_i32, max_size=3),
        column_indices=st.lists(_i32, max_size=3),
        file_major_version=_u32,
        file_minor_version=_u32,
        file_size_bytes=_u64,
        base_id=_maybe(_u32),
    )
    deletion_files = st.builds(
        DeletionFile,
        file_type=st.sampled_from(list(DeletionFileType)),
        read_version=_u64,
        id=_u64,
        num_deleted_rows=_u64,
        base_id=_maybe(_u32),
    )
    stored = _maybe(st.binary(max_size=8) | st.builds(ExternalFile, _text, _u64, _u64) | st.just(LineageColumn()))
    frags = st.builds(
        Fragment,
        id=_u64,
        files=st.lists(data_files, max_size=2),
        physical_rows=_u64,
        deletion_file=_maybe(deletion_files),
        row_id_sequence=stored,
        last_updated_at_version_sequence=stored,
        created_at_version_sequence=stored,
    )
    fields = st.builds(
        Field,
        id=_i32,
        name=_text,
        logical_type=st.sampled_from(["int64", "string", "struct", "list"]),
        parent_id=_i32,
        nullable=st.booleans(),
        type=st.sampled_from(list(FieldType)),
        metadata=st.dictionaries(_text, st.binary(max_size=4), max_size=2),
        unenforced_primary_key=st.booleans(),
        unenforced_primary_key_position=_u32,
        encoding=st.integers(0, 4),
        dictionary=_maybe(st.tuples(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1))),
        extension_name=_text,
    )
    full_schemas = st.builds(
        Schema, st.lists(fields, max_size=3), st.dictionaries(_text, st.binary(max_size=4), max_size=2)
    )
    bare_schemas = st.builds(Schema, st.lists(fields, max_size=3))
    return data_files, frags, full_schemas, bare_schemas, _wire_indices(), _u64, _u32, _i32, _text


def _valid_parts():
    frags = st.integers(0, 100).flatmap(lambda fid: fragment_with(fid, [0], 2, None, None))
    full = schemas(max_fields=2)
    data_files = frags.map(lambda f: f.files[0])
    small = st.integers(0, 100)
    idx = st.builds(
        IndexMetadata,
        uuid=_uuids,
        name=st.sampled_from(["idx0", "idx1", "vec"]),
        fields=st.just([0]),
        dataset_version=st.integers(1, 20),
    )
    names = st.text(alphabet="abc_", max_size=6)
    return data_files, frags, full, full.map(lambda s: Schema(s.fields)), idx, small, small, st.integers(0, 100), names


def _operations(parts, names: Iterable[str] | None = None):
    """One of the operation strategies, by operation name (``names``: only
    those)."""
    data_files, frags, full_schemas, bare_schemas, idx, big, u32, i32, text = parts
    base_paths = st.builds(BasePath, id=u32, path=text, is_dataset_root=st.booleans(), name=_maybe(text))
    update_maps = st.builds(
        UpdateMap, st.lists(st.builds(UpdateMapEntry, text, _maybe(text)), max_size=3), st.booleans()
    )
    merged = st.builds(MergedGeneration, _maybe(_uuids), big)
    frag_list = st.lists(frags, max_size=2)
    # An overlay's coverage is one oneof: a shared bitmap, per-field bitmaps, or neither.
    coverage = st.one_of(
        st.tuples(st.binary(max_size=6), st.none()),
        st.tuples(st.none(), st.lists(st.binary(max_size=4), max_size=2)),
        st.tuples(st.none(), st.none()),
    )
    overlays = st.lists(
        st.builds(
            lambda data_file, cover, version: DataOverlayFile(data_file, cover[0], cover[1], version),
            _maybe(data_files),
            coverage,
            big,
        ),
        max_size=2,
    )
    filters = st.builds(
        KeyExistenceFilter,
        st.lists(i32, max_size=3),
        st.none()
        | st.builds(ExactKeySetFilter, st.lists(big, max_size=3))
        | st.builds(BloomFilter, st.binary(max_size=6), u32, big, st.floats(allow_nan=False)),
    )
    by_name = {
        Append.NAME: st.builds(Append, frag_list),
        Delete.NAME: st.builds(Delete, frag_list, st.lists(big, max_size=3), text),
        Overwrite.NAME: st.builds(
            Overwrite,
            frag_list,
            full_schemas,
            st.dictionaries(text, text, max_size=2),
            st.lists(base_paths, max_size=2),
        ),
        CreateIndex.NAME: st.builds(CreateIndex, st.lists(idx, max_size=2), st.lists(idx, max_size=2)),
        Rewrite.NAME: st.builds(
            Rewrite,
            frag_list,
            frag_list,
            st.lists(st.builds(RewriteGroup, frag_list, frag_list), max_size=2),
            st.lists(_rewritten_indices(), max_size=2),
        ),
        Merge.NAME: st.builds(Merge, frag_list, full_schemas, st.booleans()),
        Project.NAME: st.builds(Project, bare_schemas, st.booleans()),
        Restore.NAME: st.builds(Restore, big),
        ReserveFragments.NAME: st.builds(ReserveFragments, u32),
        Update.NAME: st.builds(
            Update,
            st.lists(big, max_size=3),
            frag_list,
            frag_list,
            st.lists(u32, max_size=3),
            st.lists(merged, max_size=2),
            st.lists(u32, max_size=3),
            st.sampled_from(list(UpdateMode)) | st.integers(2, 9),
            _maybe(filters),
            st.dictionaries(big, st.lists(u32, max_size=3), max_size=2),
            st.dictionaries(big, st.binary(max_size=4), max_size=2),
        ),
        UpdateConfig.NAME: st.builds(
            UpdateConfig,
            _maybe(update_maps),
            _maybe(update_maps),
            _maybe(update_maps),
            st.dictionaries(i32, update_maps, max_size=2),
            st.dictionaries(text, text, max_size=2),
            st.lists(text, max_size=2),
            st.dictionaries(text, text, max_size=2),
            st.dictionaries(u32, st.dictionaries(text, text, max_size=2), max_size=2),
        ),
        DataReplacement.NAME: st.builds(
            DataReplacement, st.lists(st.builds(DataReplacementGroup, big, _maybe(data_files)), max_size=2)
        ),
        UpdateMemWalState.NAME: st.builds(UpdateMemWalState, st.lists(merged, max_size=2)),
        Clone.NAME: st.builds(Clone, st.booleans(), _maybe(text), big, text, _maybe(text)),
        UpdateBases.NAME: st.builds(UpdateBases, st.lists(base_paths, max_size=2)),
        DataOverlay.NAME: st.builds(DataOverlay, st.lists(st.builds(DataOverlayGroup, big, overlays), max_size=2)),
        ReserveRowIds.NAME: st.builds(ReserveRowIds, big),
    }
    return st.one_of([by_name[n] for n in selection("operations", names, by_name)])


def wire_transactions() -> st.SearchStrategy[Transaction]:
    """Any :class:`~reference_impl.transactions.Transaction` the transaction
    proto can carry, every operation type included, with values over their
    whole wire ranges (u64 ids, negative field ids, odd strings). Guarantee:
    a valid *message* (``from_proto(to_proto(t)) == t``), not a sensible
    commit; use :func:`transactions` for those.

    Shrinks towards an ``append`` of no fragments read at version 0, with
    an empty tag and no properties."""
    return st.builds(
        Transaction,
        read_version=_u64,
        uuid=_uuids,
        operation=_operations(_wire_parts()),
        tag=_text,
        properties=st.dictionaries(_text, _text, max_size=2),
    )


def transactions(operations: Iterable[str] | None = None) -> st.SearchStrategy[Transaction]:
    """Transactions of every operation type (append, delete, overwrite,
    create_index, rewrite, merge, project, restore, reserve_fragments,
    update, update_config, data_replacement, update_mem_wal_state, clone,
    update_bases, data_overlay, reserve_row_ids), or only of the ``operations`` named (an unknown name is an
    ``InvalidArgument``), built from valid parts: fragments from
    :func:`fragments`, schemas from :func:`schemas`, small ids and versions,
    real UUIDs. Guarantee: the transaction round-trips through its file and
    its fields are in range; an operation is not checked against a
    particular table (:func:`commit_schedules` draws writers racing on one).

    Shrinks towards the operations first in sorted order (an ``append`` of
    no fragments, by default) read at version 1, with an empty tag and no
    properties."""
    return st.builds(
        Transaction,
        read_version=st.integers(1, 20),
        uuid=_uuids,
        operation=_operations(_valid_parts(), operations),
        tag=st.text(alphabet="abc", max_size=4),
        properties=st.dictionaries(st.text(alphabet="kv", min_size=1, max_size=3), st.text(max_size=3), max_size=2),
    )
