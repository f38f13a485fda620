"""Strategies for what a manifest holds: row id sequences, deletion vectors,
fragments, index metadata, and whole manifests."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from conformance import __version__
from reference_impl import feature_flags as ff
from reference_impl.commit import WRITER_LIBRARY
from reference_impl.fragments import DataFile, DeletionFile, DeletionFileType, Fragment
from reference_impl.index_metadata import IndexMetadata, encode_fragment_bitmap
from reference_impl.logical_types import schema_from_arrow
from reference_impl.manifest import DataStorageFormat, Manifest, WriterVersion
from reference_impl.row_ids import encode_row_id_sequence
from reference_impl.schema import Schema

from ._arguments import check_count, check_optional_bool, size_range
from ._types import arrow_fields, canonical

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1

# -- row ids and deletions ------------------------------------------------------------

_distinct_u64s = st.lists(
    st.one_of(st.integers(0, 300), st.integers(0, 2**20), st.integers(0, U64_MAX)), unique=True, max_size=60
)


@st.composite
def _sorted_row_ids(draw):
    value = draw(st.integers(0, 2**40))
    out = []
    for _ in range(draw(st.integers(0, 6))):
        value += draw(st.sampled_from([1, 1, 2, 3, 70_000, 2**33]))
        count = draw(st.integers(1, 30))
        out.extend(range(value, value + count))
        value += count
    return out


def sorted_row_ids() -> st.SearchStrategy[list[int]]:
    """Ascending distinct u64 row ids built from runs and jumps, often
    contiguous (the shape stable row ids take).

    Shrinks towards the empty list."""
    return _sorted_row_ids()


def row_id_sequences() -> st.SearchStrategy[list[int]]:
    """Row id sequences: lists of distinct u64 values, either arbitrary (any
    order, any magnitude) or ascending runs with jumps (the shape stable row
    ids take). Guarantee: ``encode_row_id_sequence`` accepts every one.

    Shrinks towards the empty list."""
    return st.one_of(_distinct_u64s, sorted_row_ids())


def deletion_vectors(
    physical_rows: int | None = None, *, min_size: int = 0, max_size: int | None = None
) -> st.SearchStrategy[list[int]]:
    """Deleted row offsets, ascending and distinct, ``min_size..max_size``
    of them. With ``physical_rows`` every offset is below it (and, unless
    ``min_size`` asks for more, at most ``physical_rows - 1`` are deleted, so
    a fragment keeps a row); otherwise offsets are any u32, small ones
    favoured, and at most 300 by default. Guarantee: both
    ``encode_arrow_deletions`` and ``encode_bitmap_deletions`` accept it.

    Shrinks towards the ``min_size`` smallest offsets."""
    low = check_count("min_size", min_size)
    if physical_rows is None:
        high = 300 if max_size is None else check_count("max_size", max_size)
        values = st.one_of(st.integers(0, 200), st.integers(0, U32_MAX))
    else:
        rows = check_count("physical_rows", physical_rows)
        if low > max(rows, 1):
            raise InvalidArgument(f"min_size={low} offsets cannot be distinct below physical_rows={rows}")
        high = max(rows - 1, low) if max_size is None else check_count("max_size", max_size)
        values = st.integers(0, max(rows - 1, 0))
    if high < low:
        raise InvalidArgument(f"min_size={low} is above max_size={high}")
    return st.sets(values, min_size=low, max_size=high).map(sorted)


# -- fragments and indices ------------------------------------------------------------


@st.composite
def fragment_with(
    draw, fragment_id: int, field_ids: list[int], version: int, first_row_id: int | None, deletions: bool | None
) -> Fragment:
    """A fragment with one v2.0 data file of ``field_ids``: row ids from
    ``first_row_id`` when given; a deletion file when ``deletions`` (None:
    either) and the fragment has rows to spare."""
    physical_rows = draw(st.integers(1, 50))
    file_id = draw(st.integers(0, 2**16))
    data_file = DataFile(
        path=f"{fragment_id}-{file_id:08x}.lance",
        fields=list(field_ids),
        column_indices=list(range(len(field_ids))),
        file_major_version=2,
        file_minor_version=0,
        file_size_bytes=draw(st.integers(0, 1 << 20)),
    )
    deletion = None
    want_deletion = draw(st.booleans()) if deletions is None else deletions
    if want_deletion and physical_rows > 1:
        deletion = DeletionFile(
            file_type=draw(st.sampled_from(list(DeletionFileType))),
            read_version=draw(st.integers(1, max(version - 1, 1))),
            id=draw(st.integers(0, 2**16)),
            num_deleted_rows=draw(st.integers(1, physical_rows - 1)),
        )
    row_ids = None
    if first_row_id is not None:
        row_ids = encode_row_id_sequence(list(range(first_row_id, first_row_id + physical_rows)))
    return Fragment(fragment_id, [data_file], physical_rows, deletion, row_ids)


def fragments(
    field_ids: list[int] | None = None, *, fragment_id: int | None = None, version: int = 2
) -> st.SearchStrategy[Fragment]:
    """One :class:`~reference_impl.fragments.Fragment` holding one v2.0 data
    file that stores ``field_ids`` (``[0]`` by default). Guarantee: physical
    rows >= 1; a deletion file, when present, deletes 1..physical_rows-1 rows
    and was read at a version below ``version``; the data file path is
    relative and lies under ``data/``. The data file itself is not written.

    Shrinks towards fragment ``fragment_id`` (or 0) of few rows without a
    deletion file."""
    ids = [0] if field_ids is None else [check_count("field_ids[]", i) for i in field_ids]
    check_count("version", version, at_least=1)
    frag_ids = st.integers(0, 1000) if fragment_id is None else st.just(check_count("fragment_id", fragment_id))
    return frag_ids.flatmap(lambda fid: fragment_with(fid, ids, version, None, None))


@st.composite
def _indices(draw, schema: Schema, fragment_ids: list[int], version: int, low: int, high: int):
    n = draw(st.integers(low, high)) if schema.fields else 0
    out = []
    uuids = draw(st.lists(st.uuids(), min_size=n, max_size=n, unique=True))
    field_ids = schema.field_ids()
    for i in range(n):
        covered = draw(st.lists(st.sampled_from(fragment_ids), unique=True)) if fragment_ids else []
        out.append(
            IndexMetadata(
                uuid=str(uuids[i]),
                name=f"idx{i}",
                fields=[draw(st.sampled_from(field_ids))],
                dataset_version=draw(st.integers(1, version)),
                fragment_bitmap=encode_fragment_bitmap(covered) if covered else None,
            )
        )
    return out


def indices(
    schema: Schema, fragment_ids: list[int], version: int, *, min_indices: int = 0, max_indices: int | None = None
) -> st.SearchStrategy[list[IndexMetadata]]:
    """Index metadata (``min_indices..max_indices`` entries; none when the
    schema has no fields) for a table with ``schema`` and ``fragment_ids``
    at ``version``. Guarantee: names and uuids unique, fields exist in the
    schema, dataset_version <= ``version``, fragment bitmaps hold only the
    given fragment ids.

    Shrinks towards ``min_indices`` indices named ``idx0, idx1, ...`` on the
    first field at version 1, covering no fragment."""
    if not isinstance(schema, Schema):
        raise InvalidArgument(f"schema={schema!r} must be a reference_impl Schema")
    check_count("version", version, at_least=1)
    low, high = size_range("indices", min_indices, max_indices)
    return _indices(schema, list(fragment_ids), version, low, high)


# -- manifests ------------------------------------------------------------------------


@st.composite
def _manifests(
    draw,
    fragments_range: tuple[int, int],
    fields_range: tuple[int, int],
    stable_row_ids: bool | None,
    deletions: bool | None,
) -> Manifest:
    version = draw(st.integers(2, 20))
    arrow = draw(
        st.lists(
            arrow_fields(max_leaves=4), min_size=fields_range[0], max_size=fields_range[1], unique_by=lambda f: f.name
        )
    )
    schema = schema_from_arrow(canonical(pa.schema(arrow)))
    field_ids = schema.field_ids()
    n = draw(st.integers(*fragments_range))
    frag_ids = sorted(draw(st.lists(st.integers(0, 30), min_size=n, max_size=n, unique=True)))
    stable = draw(st.booleans()) if stable_row_ids is None else stable_row_ids
    next_row_id = 0
    frags = []
    for fid in frag_ids:
        frag = draw(fragment_with(fid, field_ids, version, next_row_id if stable else None, deletions))
        if stable:
            next_row_id += frag.physical_rows + draw(st.integers(0, 3))
        frags.append(frag)
    flags = 0
    if any(f.deletion_file is not None for f in frags):
        flags |= ff.DELETION_FILES
    if stable:
        flags |= ff.STABLE_ROW_IDS
    return Manifest(
        version=version,
        schema=schema,
        fragments=frags,
        writer_version=WriterVersion(WRITER_LIBRARY, __version__),
        data_format=DataStorageFormat("lance", "2.0"),
        reader_feature_flags=flags,
        writer_feature_flags=flags,
        max_fragment_id=(frag_ids[-1] + draw(st.integers(0, 3))) if frag_ids else None,
        next_row_id=next_row_id,
        timestamp=(draw(st.integers(1_600_000_000, 1_900_000_000)), draw(st.integers(0, 999_999_999))),
    )


def _manifest_arguments(min_fragments, max_fragments, min_fields, max_fields, stable_row_ids, deletions):
    fragments_range = size_range("fragments", min_fragments, max_fragments)
    if fragments_range[1] > 31:  # fragment ids are drawn distinct from 0..30
        raise InvalidArgument(f"max_fragments={fragments_range[1]} is above 31")
    fields_range = size_range("fields", min_fields, max_fields, at_least=1)
    return (
        fragments_range,
        fields_range,
        check_optional_bool("stable_row_ids", stable_row_ids),
        check_optional_bool("deletions", deletions),
    )


def manifests(
    *,
    min_fragments: int = 0,
    max_fragments: int | None = None,
    min_fields: int = 1,
    max_fields: int | None = None,
    stable_row_ids: bool | None = None,
    deletions: bool | None = None,
) -> st.SearchStrategy[Manifest]:
    """:class:`~reference_impl.manifest.Manifest` objects valid by
    construction. Guarantee:

    * the schema has ``min_fields..max_fields`` top-level
      :func:`arrow_fields` (unique depth-first ids, valid parents, known
      logical types);
    * ``min_fragments..max_fragments`` fragments; their ids are unique and
      at most ``max_fragment_id`` (which is absent when there are none);
    * every data file stores schema field ids only (no -1), format v2.0;
    * deletion files delete 1..physical_rows-1 rows, read at an earlier
      version; the ``deletion_files`` flag is set exactly when one exists;
    * with stable row ids (``stable_row_ids``: True, False, or None = either)
      the flag is set, every fragment has an inline row id sequence, the
      sequences are disjoint and ``next_row_id`` is above every id;
      otherwise ``next_row_id`` is 0;
    * ``deletions``: True gives every fragment (of 2+ rows) a deletion
      file, False none, None either.

    Data files, deletion files and indices are not written; this is the
    manifest alone.

    Shrinks towards an early version with ``min_fields`` leaf fields and
    ``min_fragments`` fragments of few rows, without deletion files or
    stable row ids unless asked for."""
    arguments = _manifest_arguments(min_fragments, max_fragments, min_fields, max_fields, stable_row_ids, deletions)
    return _manifests(*arguments)


@st.composite
def _indexed_manifests(draw, manifest_arguments, indices_range):
    manifest = draw(_manifests(*manifest_arguments))
    fragment_ids = [f.id for f in manifest.fragments]
    found = draw(_indices(manifest.schema, fragment_ids, manifest.version, *indices_range))
    return manifest, found


def indexed_manifests(
    *,
    min_fragments: int = 0,
    max_fragments: int | None = None,
    min_fields: int = 1,
    max_fields: int | None = None,
    min_indices: int = 0,
    max_indices: int | None = None,
    stable_row_ids: bool | None = None,
    deletions: bool | None = None,
) -> st.SearchStrategy[tuple[Manifest, list[IndexMetadata]]]:
    """``(Manifest, indices)``: a :func:`manifests` manifest and the index
    metadata of its index section (``min_indices..max_indices`` entries, see
    :func:`indices`).

    Shrinks as :func:`manifests` does, with ``min_indices`` indices covering
    no fragment."""
    arguments = _manifest_arguments(min_fragments, max_fragments, min_fields, max_fields, stable_row_ids, deletions)
    return _indexed_manifests(arguments, size_range("indices", min_indices, max_indices))
