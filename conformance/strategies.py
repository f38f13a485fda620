"""Hypothesis strategies for the Lance table format (public API).

These are the generators the conformance suite explores the format with, and
the ones a third-party implementation can use for its own property tests.
Every strategy yields objects that are valid *by construction* (no rejection
sampling, so they shrink towards small, readable counterexamples) and each
docstring says exactly which guarantee holds.

Examples::

    from hypothesis import given
    from conformance import strategies as lst

    @given(lst.arrow_tables())
    def test_my_writer(table):                 # round trip through your code
        assert my_read(my_write(table)).equals(table)

    @given(lst.manifests())
    def test_my_manifest_codec(manifest):      # a reference Manifest object
        data = encode_manifest_file(manifest)
        assert my_decode_manifest(data).version == manifest.version

    @given(lst.mutations())
    def test_my_validator(bases, tmp_path_factory, m):   # one broken requirement
        root = m.apply_to_copy(bases, tmp_path_factory.mktemp("m"))
        assert m.requirement_id in my_validate(root)

Strategies: :func:`logical_types`, :func:`arrow_schemas`, :func:`schemas`,
:func:`arrow_tables`, :func:`fragments`, :func:`deletion_vectors`,
:func:`row_id_sequences`, :func:`indices`, :func:`manifests`,
:func:`indexed_manifests`, :func:`transactions`, :func:`commit_schedules`,
:func:`dataset_recipes` (whole datasets on disk, written by the reference
writer), :func:`mutations` (a requirement and a registered dataset mutation that
breaks it, :mod:`conformance.mutations`), :func:`manifest_mutations` (the same
idea on generated manifests, for the requirements a manifest alone can break;
:data:`MANIFEST_MUTATORS`), plus :func:`wire_transactions` (anything the
transaction proto can carry, for codec round trips).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, NamedTuple

import pyarrow as pa
from hypothesis import strategies as st
from pyroaring import BitMap

from reference_impl import feature_flags as ff
from reference_impl.fragments import DataFile, DeletionFile, DeletionFileType, ExternalFile, Fragment
from reference_impl.indices import IndexFile, IndexMetadata, encode_fragment_bitmap
from reference_impl.logical_types import logical_type_of, schema_from_arrow
from reference_impl.manifest import BasePath, DataStorageFormat, Manifest, WriterVersion
from reference_impl.row_ids import decode_row_id_sequence, encode_row_id_sequence
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

if TYPE_CHECKING:
    from reference_impl.dataset import Dataset

    from .mutations import Mutation

__all__ = [
    "MANIFEST_MUTATORS",
    "CommitSchedule",
    "DatasetRecipe",
    "DatasetStep",
    "DatasetMutation",
    "ManifestMutation",
    "arrow_data_types",
    "arrow_fields",
    "arrow_schemas",
    "arrow_tables",
    "commit_schedules",
    "dataset_recipes",
    "deletion_vectors",
    "fragments",
    "indexed_manifests",
    "indices",
    "logical_types",
    "manifests",
    "manifest_mutations",
    "mutated_requirements",
    "mutations",
    "row_id_sequences",
    "schemas",
    "sorted_row_ids",
    "transactions",
    "wire_transactions",
]

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1

# ---------------------------------------------------------------------------
# Arrow schemas and Lance schemas
# ---------------------------------------------------------------------------

_NAMES = st.text(alphabet="abcxyz_", min_size=1, max_size=5)
_METADATA = st.none() | st.dictionaries(
    st.text(alphabet="klmn", min_size=1, max_size=3), st.text(alphabet="uvé ", max_size=3), max_size=2
)
_UNITS = ["s", "ms", "us", "ns"]
_PRIMITIVES = [
    pa.bool_(), pa.int8(), pa.uint8(), pa.int16(), pa.uint16(), pa.int32(), pa.uint32(), pa.int64(),
    pa.uint64(), pa.float16(), pa.float32(), pa.float64(), pa.string(), pa.binary(), pa.large_string(),
    pa.large_binary(), pa.date32(), pa.date64(), pa.time32("s"), pa.time32("ms"), pa.time64("us"),
    pa.time64("ns"), *[pa.duration(u) for u in _UNITS],
]
_INDEX_TYPES = [pa.int8(), pa.uint8(), pa.int16(), pa.uint16(), pa.int32(), pa.uint32(), pa.int64(), pa.uint64()]
#: The element of a bfloat16 vector, as Lance stores it.
BF16_ITEM = pa.field(
    "item", pa.binary(2), metadata={"ARROW:extension:name": "lance.bfloat16", "ARROW:extension:metadata": ""}
)

_decimals = st.one_of(
    st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: pa.decimal128(p, s))),
    st.integers(1, 76).flatmap(lambda p: st.integers(0, p).map(lambda s: pa.decimal256(p, s))),
)
_timestamps = st.builds(pa.timestamp, st.sampled_from(_UNITS), st.sampled_from([None, "UTC", "America/New_York", "+01:00"]))
_element_types = st.one_of(
    st.sampled_from(_PRIMITIVES + [pa.null()]), _decimals, _timestamps, st.integers(1, 32).map(pa.binary)
)
_dictionaries = st.builds(
    pa.dictionary,
    st.sampled_from(_INDEX_TYPES),
    st.sampled_from([pa.string(), pa.large_string(), pa.binary(), pa.int32(), pa.float64(), pa.bool_()]),
)
_fixed_size_lists = st.one_of(
    st.builds(pa.list_, st.one_of(_element_types, _dictionaries), st.integers(1, 8)),
    st.integers(1, 8).map(lambda n: pa.list_(BF16_ITEM, n)),
    st.builds(pa.list_, st.builds(pa.list_, _element_types, st.integers(1, 4)), st.integers(1, 4)),
)
_leaf_types = st.one_of(
    st.sampled_from(_PRIMITIVES), _decimals, _timestamps, st.integers(0, 32).map(pa.binary), _dictionaries,
    _fixed_size_lists, st.just(pa.json_()), st.just(pa.uuid()),
)


def _field(name, type_, nullable, metadata):
    return pa.field(name, type_, nullable=nullable, metadata=metadata)


_leaf_fields = st.one_of(
    st.builds(_field, _NAMES, _leaf_types, st.booleans(), _METADATA),
    st.builds(_field, _NAMES, st.just(pa.null()), st.just(True), _METADATA),
)


@st.composite
def _nested(draw, children):
    """A struct, list, large list, map or fixed-size list of structs field
    whose children are drawn from ``children``."""

    def struct_type():
        return pa.struct(draw(st.lists(children, max_size=3, unique_by=lambda f: f.name)))

    kind = draw(st.sampled_from(["struct", "list", "large_list", "map", "fixed_size_list"]))
    if kind == "struct":
        nested_type = struct_type()
    elif kind == "list":
        nested_type = pa.list_(draw(children))
    elif kind == "large_list":
        nested_type = pa.large_list(draw(children))
    elif kind == "map":
        key_type = draw(st.sampled_from([pa.int32(), pa.string(), pa.int64()]))
        key = pa.field("key", key_type, nullable=False, metadata=draw(_METADATA))
        nested_type = pa.map_(key, draw(children).with_name("value"))
    else:
        element = _field(draw(_NAMES), struct_type(), draw(st.booleans()), draw(_METADATA))
        nested_type = pa.list_(element, draw(st.integers(1, 4)))
    return _field(draw(_NAMES), nested_type, draw(st.booleans()), draw(_METADATA))


def canonical(schema: pa.Schema) -> pa.Schema:
    """The schema as any Arrow consumer sees it after an IPC round trip
    (registered extension types materialised, map children named key/value)."""
    return pa.ipc.read_schema(pa.py_buffer(schema.serialize()))


def arrow_fields(max_leaves: int = 10) -> st.SearchStrategy[pa.Field]:
    """Arrow fields of every type family Lance stores losslessly: primitives,
    decimals, timestamps with and without zones, fixed-size binary,
    unordered dictionaries, fixed-size lists (bfloat16 vectors included),
    JSON, UUID, and structs / lists / large lists / maps / fixed-size lists of
    structs nesting them, with random nullability and field metadata."""
    return st.recursive(_leaf_fields, _nested, max_leaves=max_leaves)


def arrow_schemas(max_fields: int = 4) -> st.SearchStrategy[pa.Schema]:
    """Arrow schemas in canonical form (as an IPC round trip leaves them) of
    1..``max_fields`` uniquely named :func:`arrow_fields`, with optional
    schema metadata. Guarantee: ``schema_to_arrow(schema_from_arrow(s)) == s``."""
    return st.builds(
        lambda fields, metadata: canonical(pa.schema(fields, metadata=metadata)),
        st.lists(arrow_fields(), min_size=1, max_size=max_fields, unique_by=lambda f: f.name),
        _METADATA,
    )


def logical_types() -> st.SearchStrategy[str]:
    """Logical type strings of Lance schemas (``int32``, ``decimal:128:9:2``,
    ``timestamp:us:UTC``, ``dict:string:int8:false``, ``struct``, ``list``,
    ...). Guarantee: each is the logical type of an Arrow type, so
    ``parse_logical_type`` accepts it."""
    return st.one_of(
        _leaf_types.map(logical_type_of),
        st.sampled_from(["struct", "list", "large_list", "list.struct", "large_list.struct", "map"]),
    )


def schemas(max_fields: int = 4, first_id: int = 0) -> st.SearchStrategy[Schema]:
    """Lance :class:`~reference_impl.schema.Schema` objects, converted from
    :func:`arrow_schemas`. Guarantee: ids are unique and depth-first from
    ``first_id``, every parent id is -1 or an earlier field's id, every
    logical type is known, and ``schema_from_arrow(schema_to_arrow(s)) == s``
    up to ids."""
    return arrow_schemas(max_fields).map(lambda s: schema_from_arrow(s, first_id=first_id))


# ---------------------------------------------------------------------------
# Arrow tables (Lance file format v2.0)
# ---------------------------------------------------------------------------

_TABLE_LEAF_TYPES = [
    pa.bool_(), pa.int8(), pa.uint16(), pa.int32(), pa.int64(), pa.uint64(), pa.float32(), pa.float64(),
    pa.string(), pa.large_string(), pa.binary(), pa.binary(3), pa.decimal128(9, 2), pa.date32(),
    pa.timestamp("us", tz="UTC"), pa.time64("us"), pa.duration("s"),
]
_FIXED_WIDTH = [t for t in _TABLE_LEAF_TYPES if t not in (pa.string(), pa.large_string(), pa.binary())]


def arrow_data_types(max_leaves: int = 4) -> st.SearchStrategy[pa.DataType]:
    """Arrow data types the Lance v2.0 file format writes: the leaf types of
    ``_TABLE_LEAF_TYPES``, fixed-size-list vectors of the fixed-width ones,
    and lists / large lists / structs nesting them."""
    leaves = st.sampled_from(_TABLE_LEAF_TYPES)
    vectors = st.builds(lambda t, n: pa.list_(t, n), st.sampled_from(_FIXED_WIDTH), st.integers(1, 3))

    def extend(children):
        return st.one_of(
            st.builds(pa.list_, children),
            st.builds(pa.large_list, children),
            st.lists(children, min_size=1, max_size=3).map(lambda ts: pa.struct([(f"f{i}", t) for i, t in enumerate(ts)])),
        )

    return st.recursive(st.one_of(leaves, vectors), extend, max_leaves=max_leaves)


def arrow_values(data_type: pa.DataType, nullable: bool = True) -> st.SearchStrategy:
    """Python values of ``data_type`` (one of :func:`arrow_data_types`).
    Structs are never null: version 2.0 cannot store struct validity."""
    if pa.types.is_struct(data_type):
        fields = [data_type.field(i) for i in range(data_type.num_fields)]
        return st.fixed_dictionaries({f.name: arrow_values(f.type, f.nullable) for f in fields})
    if pa.types.is_fixed_size_list(data_type):
        inner = st.lists(arrow_values(data_type.value_type), min_size=data_type.list_size, max_size=data_type.list_size)
    elif pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        inner = st.lists(arrow_values(data_type.value_type), max_size=3)
    elif pa.types.is_boolean(data_type):
        inner = st.booleans()
    elif pa.types.is_integer(data_type):
        bits = data_type.bit_width
        signed = pa.types.is_signed_integer(data_type)
        inner = st.integers(-(2 ** (bits - 1)) if signed else 0, 2 ** (bits - 1) - 1 if signed else 2**bits - 1)
    elif pa.types.is_floating(data_type):
        inner = st.floats(allow_nan=False, width=data_type.bit_width)
    elif pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        inner = st.text(max_size=4)
    elif pa.types.is_fixed_size_binary(data_type):
        inner = st.binary(min_size=data_type.byte_width, max_size=data_type.byte_width)
    elif pa.types.is_binary(data_type) or pa.types.is_large_binary(data_type):
        inner = st.binary(max_size=4)
    elif pa.types.is_decimal(data_type):
        inner = st.decimals(min_value=-9999999, max_value=9999999, places=2, allow_nan=False, allow_infinity=False)
    elif pa.types.is_date(data_type):
        inner = st.dates()
    else:  # timestamps, times, durations: their integer storage
        inner = st.integers(0, 86_399_999_999)
    return st.one_of(st.none(), inner) if nullable else inner


@st.composite
def _tables(draw, schema: pa.Schema | None, max_rows: int):
    if schema is None:
        types = draw(st.lists(arrow_data_types(), min_size=1, max_size=3))
        schema = pa.schema([pa.field(f"c{i}", t) for i, t in enumerate(types)])
    num_rows = draw(st.integers(0, max_rows))
    columns = {}
    for f in schema:
        nullable = f.nullable and not pa.types.is_struct(f.type)
        values = draw(st.lists(arrow_values(f.type, nullable), min_size=num_rows, max_size=num_rows))
        columns[f.name] = pa.array(values, type=f.type)
    table = pa.Table.from_arrays(list(columns.values()), schema=schema) if columns else pa.table({})
    if num_rows > 2 and draw(st.booleans()):
        table = table.slice(1)  # arrays that start at an offset
    return table


def arrow_tables(schema: pa.Schema | None = None, max_rows: int = 12) -> st.SearchStrategy[pa.Table]:
    """Arrow tables of up to ``max_rows`` rows (sometimes sliced, so arrays
    start at an offset), with nulls and nesting. With ``schema`` the columns
    follow it (its types must be :func:`arrow_data_types`); otherwise 1..3
    columns ``c0, c1, ...`` of random :func:`arrow_data_types`. Guarantee: the
    reference v2.0 writer can write every table, and top-level structs hold no
    nulls (v2.0 cannot store struct validity)."""
    return _tables(schema, max_rows)


# ---------------------------------------------------------------------------
# Row ids and deletions
# ---------------------------------------------------------------------------

_distinct_u64s = st.lists(
    st.one_of(st.integers(0, 300), st.integers(0, 2**20), st.integers(0, U64_MAX)), unique=True, max_size=60
)


@st.composite
def sorted_row_ids(draw):
    """Ascending distinct u64 row ids built from runs and jumps, often
    contiguous (the shape stable row ids take)."""
    value = draw(st.integers(0, 2**40))
    out = []
    for _ in range(draw(st.integers(0, 6))):
        value += draw(st.sampled_from([1, 1, 2, 3, 70_000, 2**33]))
        count = draw(st.integers(1, 30))
        out.extend(range(value, value + count))
        value += count
    return out


def row_id_sequences() -> st.SearchStrategy[list[int]]:
    """Row id sequences: lists of distinct u64 values, either arbitrary (any
    order, any magnitude) or ascending runs with jumps (the shape stable row
    ids take). Guarantee: ``encode_row_id_sequence`` accepts every one."""
    return st.one_of(_distinct_u64s, sorted_row_ids())


def deletion_vectors(physical_rows: int | None = None, *, min_size: int = 0) -> st.SearchStrategy[list[int]]:
    """Deleted row offsets, ascending and distinct. With ``physical_rows``
    every offset is below it (and at most ``physical_rows - 1`` are deleted,
    so a fragment keeps a row); otherwise offsets are any u32, small ones
    favoured. Guarantee: both ``encode_arrow_deletions`` and
    ``encode_bitmap_deletions`` accept it."""
    if physical_rows is None:
        offsets = st.sets(st.one_of(st.integers(0, 200), st.integers(0, U32_MAX)), min_size=min_size, max_size=300)
    else:
        offsets = st.sets(
            st.integers(0, max(physical_rows - 1, 0)), min_size=min_size, max_size=max(physical_rows - 1, min_size)
        )
    return offsets.map(sorted)


# ---------------------------------------------------------------------------
# Fragments, indices, manifests
# ---------------------------------------------------------------------------


@st.composite
def _fragment(draw, fragment_id: int, field_ids: list[int], version: int, first_row_id: int | None, deletions: bool | None):
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


def fragments(field_ids: list[int] | None = None, *, fragment_id: int | None = None, version: int = 2) -> st.SearchStrategy[Fragment]:
    """One :class:`~reference_impl.fragments.Fragment` holding one v2.0 data
    file that stores ``field_ids`` (``[0]`` by default). Guarantee: physical
    rows >= 1; a deletion file, when present, deletes 1..physical_rows-1 rows
    and was read at a version below ``version``; the data file path is
    relative and lies under ``data/``. The data file itself is not written."""
    ids = [0] if field_ids is None else field_ids
    frag_ids = st.integers(0, 1000) if fragment_id is None else st.just(fragment_id)
    return frag_ids.flatmap(lambda fid: _fragment(fid, ids, version, None, None))


@st.composite
def indices(draw, schema: Schema, fragment_ids: list[int], version: int, count: tuple[int, int] = (0, 3)):
    """Index metadata for a table with ``schema`` and ``fragment_ids`` at
    ``version``. Guarantee: names and uuids unique, fields exist in the
    schema, dataset_version <= ``version``, fragment bitmaps hold only the
    given fragment ids."""
    n = draw(st.integers(*count)) if schema.fields else 0
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


@st.composite
def indexed_manifests(
    draw,
    *,
    min_fragments: int = 0,
    min_fields: int = 1,
    min_indices: int = 0,
    stable_row_ids: bool | None = None,
    deletions: bool | None = None,
):
    """``(Manifest, indices)``: a :func:`manifests` manifest and the index
    metadata of its index section (see :func:`indices`)."""
    manifest = draw(
        manifests(min_fragments=min_fragments, min_fields=min_fields, stable_row_ids=stable_row_ids, deletions=deletions)
    )
    fragment_ids = [f.id for f in manifest.fragments]
    found = draw(indices(manifest.schema, fragment_ids, manifest.version, (min_indices, max(min_indices, 3))))
    return manifest, found


@st.composite
def manifests(
    draw,
    *,
    min_fragments: int = 0,
    min_fields: int = 1,
    stable_row_ids: bool | None = None,
    deletions: bool | None = None,
):
    """:class:`~reference_impl.manifest.Manifest` objects valid by
    construction. Guarantee:

    * the schema comes from :func:`schemas` (unique depth-first ids, valid
      parents, known logical types), with at least ``min_fields`` fields;
    * fragment ids are unique and at most ``max_fragment_id`` (which is
      absent when there are no fragments); at least ``min_fragments``;
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
    manifest alone."""
    version = draw(st.integers(2, 20))
    arrow = draw(
        st.lists(arrow_fields(max_leaves=4), min_size=min_fields, max_size=max(min_fields, 3), unique_by=lambda f: f.name)
    )
    schema = schema_from_arrow(canonical(pa.schema(arrow)))
    field_ids = schema.field_ids()
    n = draw(st.integers(min_fragments, max(min_fragments, 4)))
    frag_ids = sorted(draw(st.lists(st.integers(0, 30), min_size=n, max_size=n, unique=True)))
    stable = draw(st.booleans()) if stable_row_ids is None else stable_row_ids
    next_row_id = 0
    frags = []
    for fid in frag_ids:
        frag = draw(_fragment(fid, field_ids, version, next_row_id if stable else None, deletions))
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
        writer_version=WriterVersion("lance-conformance", "0.1.0"),
        data_format=DataStorageFormat("lance", "2.0"),
        reader_feature_flags=flags,
        writer_feature_flags=flags,
        max_fragment_id=(frag_ids[-1] + draw(st.integers(0, 3))) if frag_ids else None,
        next_row_id=next_row_id,
        timestamp=(draw(st.integers(1_600_000_000, 1_900_000_000)), draw(st.integers(0, 999_999_999))),
    )


# ---------------------------------------------------------------------------
# Transactions
# ---------------------------------------------------------------------------

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
    stored = _maybe(st.binary(max_size=8) | st.builds(ExternalFile, _text, _u64, _u64))
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
    full_schemas = st.builds(Schema, st.lists(fields, max_size=3), st.dictionaries(_text, st.binary(max_size=4), max_size=2))
    bare_schemas = st.builds(Schema, st.lists(fields, max_size=3))
    return data_files, frags, full_schemas, bare_schemas, _wire_indices(), _u64, _u32, _i32, _text


def _valid_parts():
    frags = st.integers(0, 100).flatmap(lambda fid: _fragment(fid, [0], 2, None, None))
    full = schemas(max_fields=2)
    data_files = frags.map(lambda f: f.files[0])
    small = st.integers(0, 100)
    idx = st.builds(
        IndexMetadata, uuid=_uuids, name=st.sampled_from(["idx0", "idx1", "vec"]), fields=st.just([0]),
        dataset_version=st.integers(1, 20),
    )
    names = st.text(alphabet="abc_", max_size=6)
    return data_files, frags, full, full.map(lambda s: Schema(s.fields)), idx, small, small, st.integers(0, 100), names


def _operations(parts, names: Iterable[str] | None = None):
    """One of the operation strategies, by operation name (``names``: only
    those)."""
    data_files, frags, full_schemas, bare_schemas, idx, big, u32, i32, text = parts
    base_paths = st.builds(BasePath, id=u32, path=text, is_dataset_root=st.booleans(), name=_maybe(text))
    update_maps = st.builds(UpdateMap, st.lists(st.builds(UpdateMapEntry, text, _maybe(text)), max_size=3), st.booleans())
    merged = st.builds(MergedGeneration, _maybe(_uuids), big)
    frag_list = st.lists(frags, max_size=2)
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
        Overwrite.NAME: st.builds(Overwrite, frag_list, full_schemas, st.dictionaries(text, text, max_size=2), st.lists(base_paths, max_size=2)),
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
        DataReplacement.NAME: st.builds(DataReplacement, st.lists(st.builds(DataReplacementGroup, big, _maybe(data_files)), max_size=2)),
        UpdateMemWalState.NAME: st.builds(UpdateMemWalState, st.lists(merged, max_size=2)),
        Clone.NAME: st.builds(Clone, st.booleans(), _maybe(text), big, text, _maybe(text)),
        UpdateBases.NAME: st.builds(UpdateBases, st.lists(base_paths, max_size=2)),
    }
    selected = sorted(by_name) if names is None else sorted(set(names))
    unknown = [n for n in selected if n not in by_name]
    if unknown or not selected:
        raise ValueError(f"no operations named {unknown or 'in an empty selection'}")
    return st.one_of([by_name[n] for n in selected])


def wire_transactions() -> st.SearchStrategy[Transaction]:
    """Any :class:`~reference_impl.transactions.Transaction` the transaction
    proto can carry, every operation type included, with values over their
    whole wire ranges (u64 ids, negative field ids, odd strings). Guarantee:
    a valid *message* (``from_proto(to_proto(t)) == t``), not a sensible
    commit; use :func:`transactions` for those."""
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
    update_bases), or only of the ``operations`` named, built from valid parts: fragments from :func:`fragments`,
    schemas from :func:`schemas`, small ids and versions, real UUIDs.
    Guarantee: the transaction round-trips through its file and its fields
    are in range; an operation is not checked against a particular table
    (see :func:`commit_schedules` for that)."""
    return st.builds(
        Transaction,
        read_version=st.integers(1, 20),
        uuid=_uuids,
        operation=_operations(_valid_parts(), operations),
        tag=st.text(alphabet="abc", max_size=4),
        properties=st.dictionaries(st.text(alphabet="kv", min_size=1, max_size=3), st.text(max_size=3), max_size=2),
    )


# ---------------------------------------------------------------------------
# Datasets on disk, written by the reference implementation
# ---------------------------------------------------------------------------

#: The kinds of :class:`DatasetStep`, each one commit (compaction: one or two).
STEP_KINDS = ("append", "delete", "add_column", "drop_column", "compact", "restore", "overwrite", "tag", "config")


@dataclass(frozen=True)
class DatasetStep:
    """One operation after the dataset's creation. Choices that depend on
    the dataset as it then is (which fragment, which column, which version)
    are stored as plain integers and resolved modulo what exists when the
    step runs, so that every drawn step applies to every dataset."""

    kind: str
    table: pa.Table | None = None
    picks: tuple[int, ...] = ()


@dataclass
class DatasetRecipe:
    """How to write a valid dataset with the reference implementation:
    create it from ``first``, then apply ``steps`` in order (:meth:`build`).
    Tables appended or overwritten later follow ``first``'s schema and are
    fitted to the columns the dataset has by then (a dropped column is left
    out, an added one is null)."""

    first: pa.Table
    stable_row_ids: bool
    naming: str
    max_rows_per_file: int
    steps: list[DatasetStep]

    def build(self, path) -> "Dataset":
        """Write the dataset at ``path`` (which must not exist) and return
        its latest version."""
        from reference_impl.dataset import Dataset

        dataset = Dataset.create(path, self.first, manifest_naming=self.naming, stable_row_ids=self.stable_row_ids,
                                 max_rows_per_file=self.max_rows_per_file)
        for number, step in enumerate(self.steps):
            dataset = _apply_step(dataset, step, number, self.max_rows_per_file)
        return dataset


def _fit(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with exactly ``schema``'s columns: ones it lacks are null."""
    columns = [
        table.column(field.name) if field.name in table.column_names else pa.nulls(table.num_rows, field.type)
        for field in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def _apply_step(dataset: "Dataset", step: DatasetStep, number: int, max_rows_per_file: int) -> "Dataset":
    schema = dataset.schema.to_arrow()
    if step.kind == "append":
        return dataset.append(_fit(step.table, schema), max_rows_per_file=max_rows_per_file)
    if step.kind == "overwrite":
        return dataset.overwrite(_fit(step.table, schema), max_rows_per_file=max_rows_per_file)
    if step.kind == "delete":
        fragments = [f for f in dataset.fragments if f.physical_rows]
        if not fragments:
            return dataset
        chosen: dict[int, set[int]] = {}
        for fragment_pick, offset_pick in zip(step.picks[::2], step.picks[1::2]):
            fragment = fragments[fragment_pick % len(fragments)]
            chosen.setdefault(fragment.id, set()).add(offset_pick % fragment.physical_rows)
        return dataset.delete({fragment_id: sorted(offsets) for fragment_id, offsets in chosen.items()})
    if step.kind == "add_column":
        (scale,) = step.picks
        field = pa.field(f"added_{number}", pa.int64())
        return dataset.add_columns({field: lambda rows: pa.array([i * scale for i in range(rows.num_rows)], pa.int64())})
    if step.kind == "drop_column":
        names = schema.names
        if len(names) < 2:
            return dataset
        return dataset.drop_columns([names[step.picks[0] % len(names)]])
    if step.kind == "compact":
        target_rows, materialize = step.picks
        return dataset.compact(target_rows_per_fragment=target_rows, materialize_deletions=bool(materialize))
    if step.kind == "restore":
        return dataset.restore(1 + step.picks[0] % dataset.version)
    if step.kind == "tag":
        dataset.create_tag(f"tag-{number}", 1 + step.picks[0] % dataset.version)
        return dataset
    if step.kind == "config":
        key, value = step.picks
        return dataset.update_metadata(config={f"key.{key}": str(value)})
    raise ValueError(f"unknown dataset step {step.kind!r}")


@st.composite
def _dataset_steps(draw, schema: pa.Schema, max_rows: int):
    kind = draw(st.sampled_from(STEP_KINDS))
    if kind in ("append", "overwrite"):
        return DatasetStep(kind, table=draw(arrow_tables(schema, max_rows=max_rows)))
    if kind == "delete":
        picks = draw(st.lists(st.integers(0, 1000), min_size=2, max_size=8).map(lambda p: p[: len(p) // 2 * 2]))
        return DatasetStep(kind, picks=tuple(picks))
    if kind == "add_column":
        return DatasetStep(kind, picks=(draw(st.integers(-3, 3)),))
    if kind == "compact":
        return DatasetStep(kind, picks=(draw(st.integers(1, 2 * max_rows)), draw(st.integers(0, 1))))
    if kind == "config":
        return DatasetStep(kind, picks=(draw(st.integers(0, 3)), draw(st.integers(0, 9))))
    return DatasetStep(kind, picks=(draw(st.integers(0, 1000)),))


@st.composite
def dataset_recipes(draw, max_steps: int = 6, max_rows: int = 8) -> DatasetRecipe:
    """:class:`DatasetRecipe`: a first table from :func:`arrow_tables` (nested
    types and nulls included), stable row ids or not, V1 or V2 manifest
    names, a file size limit, and up to ``max_steps`` steps of every kind in
    :data:`STEP_KINDS`. Guarantee: ``build(path)`` writes a dataset with one
    version per commit that the reference implementation and the
    specification both accept; tests/test_strategies.py holds the validator
    and pylance to it. Shrinks towards fewer steps and smaller tables."""
    first = draw(arrow_tables(max_rows=max_rows))
    return DatasetRecipe(
        first=first,
        stable_row_ids=draw(st.booleans()),
        naming=draw(st.sampled_from(["v2", "v1"])),
        max_rows_per_file=draw(st.integers(1, max_rows)),
        steps=draw(st.lists(_dataset_steps(first.schema, max_rows), max_size=max_steps)),
    )


# ---------------------------------------------------------------------------
# Commit schedules
# ---------------------------------------------------------------------------


@dataclass
class CommitSchedule:
    """Several writers racing to commit on top of ``base``: each writer is a
    ``(read_version, operation)``; ``order`` is the order their commit
    attempts reach the store (a permutation of writer positions)."""

    base: Manifest
    writers: list[tuple[int, object]]
    order: list[int]


@st.composite
def _schedule_operation(draw, base: Manifest, read_version: int):
    ids = [f.id for f in base.fragments]
    fields = base.schema.field_ids()
    kinds = ["append", "reserve", "config"]
    if read_version == base.version and ids:
        kinds += ["delete", "rewrite", "create_index"]
    kind = draw(st.sampled_from(kinds))
    if kind == "append":
        new = draw(st.lists(_fragment(0, fields, base.version, None, False), min_size=1, max_size=2))
        return Append(new)
    if kind == "reserve":
        return ReserveFragments(draw(st.integers(1, 5)))
    if kind == "config":
        key = draw(st.sampled_from(["a", "b", "c"]))
        return UpdateConfig(config_updates=UpdateMap([UpdateMapEntry(key, draw(st.sampled_from(["1", "2"])))], False))
    chosen = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=len(ids), unique=True))
    picked = [copy.deepcopy(f) for f in base.fragments if f.id in chosen]
    if kind == "delete":
        return Delete(updated_fragments=[], deleted_fragment_ids=sorted(chosen), predicate="true")
    if kind == "rewrite":
        merged = Fragment(0, [copy.deepcopy(picked[0].files[0])], sum(f.num_rows for f in picked))
        return Rewrite(groups=[RewriteGroup(picked, [merged])])
    index = IndexMetadata(
        uuid=str(draw(st.uuids())), name=draw(st.sampled_from(["i", "j"])), fields=[draw(st.sampled_from(fields))],
        dataset_version=base.version, fragment_bitmap=encode_fragment_bitmap(chosen),
    )
    return CreateIndex(new_indices=[index])


@st.composite
def commit_schedules(draw, min_writers: int = 2, max_writers: int = 4):
    """:class:`CommitSchedule`: a starting manifest (:func:`manifests`,
    without stable row ids) and ``min_writers..max_writers`` writers. Each
    writer read a version in ``[max(1, v-2), v]`` of the starting version
    ``v``; writers that read ``v`` itself may delete, rewrite or index its
    fragments, the others only append, reserve fragment ids or change
    config. Guarantee: every operation is valid against the version it was
    read from (fragments it names exist there); whether two of them
    conflict is what the schedule is for."""
    base = draw(manifests(stable_row_ids=False))
    n = draw(st.integers(min_writers, max_writers))
    writers = []
    for _ in range(n):
        read_version = draw(st.integers(max(1, base.version - 2), base.version))
        writers.append((read_version, draw(_schedule_operation(base, read_version))))
    order = draw(st.permutations(range(n)))
    return CommitSchedule(base, writers, list(order))


# ---------------------------------------------------------------------------
# Mutations: a valid object plus one requirement it now breaks
# ---------------------------------------------------------------------------


class DatasetMutation(NamedTuple):
    """A requirement of the catalog and a registered mutation
    (:class:`conformance.mutations.Mutation`) that breaks it. The valid
    object is the mutation's base dataset, ``mutation.base``, one of
    :data:`conformance.mutations.BASES`."""

    requirement_id: str
    mutation: "Mutation"

    def apply_to_copy(self, bases: Mapping[str, Path], directory: Path) -> Path:
        """Copy the base (``bases`` maps base names to valid datasets, as
        :func:`conformance.mutations.build_bases` returns) into
        ``directory`` and break it; the broken dataset's root."""
        from .mutations import copy_dataset

        root = copy_dataset(Path(bases[self.mutation.base]), Path(directory) / self.mutation.name)
        self.mutation.apply(root)
        return root


def mutated_requirements() -> set[str]:
    """The requirement ids :func:`mutations` can draw."""
    from .mutations import broken_requirements

    return set(broken_requirements())


def mutations(requirement_ids: Iterable[str] | None = None) -> st.SearchStrategy[DatasetMutation]:
    """:class:`DatasetMutation`: a requirement (one of ``requirement_ids``,
    default every one :func:`mutated_requirements` holds), then one of the
    registered mutations that break it. Guarantee: applied to a copy of its
    base, the mutation makes the validator rule it names report a finding
    citing ``requirement_id`` (tests/validator/test_mutations.py holds every
    registered mutation to that). Shrinks towards the first requirement id in
    sorted order."""
    from .mutations import broken_requirements

    by_requirement = broken_requirements()
    chosen = sorted(set(requirement_ids) if requirement_ids is not None else by_requirement)
    unknown = [r for r in chosen if r not in by_requirement]
    if unknown or not chosen:
        raise ValueError(f"no registered mutation breaks {unknown or 'an empty selection'}")
    return st.sampled_from(chosen).flatmap(
        lambda requirement: st.sampled_from(by_requirement[requirement]).map(
            lambda mutation: DatasetMutation(requirement, mutation)
        )
    )


class ManifestMutation(NamedTuple):
    """``valid`` and ``mutated`` are manifests (with their index sections,
    ``valid_indices`` / ``mutated_indices``); ``mutated`` breaks exactly the
    requirement ``requirement_id`` of the catalog (conformance/requirements)."""

    valid: Manifest
    requirement_id: str
    mutated: Manifest
    valid_indices: list
    mutated_indices: list


@dataclass(frozen=True)
class ManifestMutator:
    """How to break one requirement: ``needs`` are the
    :func:`indexed_manifests` arguments that make the breakage possible;
    ``apply(manifest, indices)`` edits copies in place."""

    needs: dict
    apply: Callable[[Manifest, list], None]


def _dup_fragment_id(m: Manifest, idx: list) -> None:
    m.fragments[1].id = m.fragments[0].id


def _fragment_above_max(m: Manifest, idx: list) -> None:
    m.fragments[-1].id = m.max_fragment_id + 1


def _dup_field_id(m: Manifest, idx: list) -> None:
    m.schema.fields[1].id = m.schema.fields[0].id


def _dangling_parent(m: Manifest, idx: list) -> None:
    m.schema.fields[-1].parent_id = m.schema.max_field_id() + 7


def _unknown_type(m: Manifest, idx: list) -> None:
    m.schema.fields[0].logical_type = "no_such_type"


def _negative_field_id(m: Manifest, idx: list) -> None:
    m.fragments[0].files[0].fields[0] = -1


def _drop_deletion_flag(m: Manifest, idx: list) -> None:
    m.reader_feature_flags &= ~ff.DELETION_FILES
    m.writer_feature_flags &= ~ff.DELETION_FILES


def _drop_row_ids(m: Manifest, idx: list) -> None:
    m.fragments[0].row_id_sequence = None


def _next_row_id_too_low(m: Manifest, idx: list) -> None:
    m.next_row_id = max(decode_row_id_sequence(m.fragments[-1].row_id_sequence))


def _unknown_flag(m: Manifest, idx: list) -> None:
    m.reader_feature_flags |= 1 << 20


def _no_data_file(m: Manifest, idx: list) -> None:
    m.fragments[0].files = []


def _empty_deletion(m: Manifest, idx: list) -> None:
    next(f for f in m.fragments if f.deletion_file).deletion_file.num_deleted_rows = 0


def _too_many_deleted(m: Manifest, idx: list) -> None:
    frag = next(f for f in m.fragments if f.deletion_file)
    frag.deletion_file.num_deleted_rows = frag.physical_rows + 1


def _deletion_read_later(m: Manifest, idx: list) -> None:
    next(f for f in m.fragments if f.deletion_file).deletion_file.read_version = m.version + 1


def _dup_index_name(m: Manifest, idx: list) -> None:
    idx[1].name = idx[0].name
    idx[1].fields = [idx[0].fields[0] + 1000]  # not a delta segment of the same index


def _dup_index_uuid(m: Manifest, idx: list) -> None:
    idx[1].uuid = idx[0].uuid


def _index_missing_field(m: Manifest, idx: list) -> None:
    idx[0].fields = [m.schema.max_field_id() + 1]


def _index_from_future(m: Manifest, idx: list) -> None:
    idx[0].dataset_version = m.version + 1


def _fragment_id_over_u32(m: Manifest, idx: list) -> None:
    m.fragments[-1].id = 2**32 + 5


def _absolute_path(m: Manifest, idx: list) -> None:
    m.fragments[0].files[0].path = "/tmp/elsewhere.lance"


#: requirement id -> :class:`ManifestMutator`; the manifest-level breakages
#: :func:`manifest_mutations` draws from (each also has a dataset mutation in
#: :mod:`conformance.mutations`).
MANIFEST_MUTATORS: dict[str, ManifestMutator] = {
    "fragment.id-unique": ManifestMutator({"min_fragments": 2}, _dup_fragment_id),
    "fragment.max-id-covers-fragments": ManifestMutator({"min_fragments": 1}, _fragment_above_max),
    "fragment.has-data-file": ManifestMutator({"min_fragments": 1}, _no_data_file),
    "fragment.id-fits-u32": ManifestMutator({"min_fragments": 1}, _fragment_id_over_u32),
    "schema.field-ids-unique": ManifestMutator({"min_fields": 2}, _dup_field_id),
    "schema.parent-id-exists": ManifestMutator({}, _dangling_parent),
    "schema.logical-type-known": ManifestMutator({}, _unknown_type),
    "data-file.no-unassigned-field-id": ManifestMutator({"min_fragments": 1}, _negative_field_id),
    "data-file.path-relative": ManifestMutator({"min_fragments": 1}, _absolute_path),
    "feature-flags.deletion-files": ManifestMutator({"min_fragments": 1, "deletions": True, "stable_row_ids": False}, _drop_deletion_flag),
    "feature-flags.stable-row-ids": ManifestMutator({"min_fragments": 1, "stable_row_ids": True}, _drop_row_ids),
    "feature-flags.known-bits": ManifestMutator({}, _unknown_flag),
    "row-id.next-row-id-above-all": ManifestMutator({"min_fragments": 1, "stable_row_ids": True}, _next_row_id_too_low),
    "deletion.absent-when-nothing-deleted": ManifestMutator({"min_fragments": 1, "deletions": True, "stable_row_ids": False}, _empty_deletion),
    "deletion.count-within-physical-rows": ManifestMutator({"min_fragments": 1, "deletions": True, "stable_row_ids": False}, _too_many_deleted),
    "deletion.read-version-earlier": ManifestMutator({"min_fragments": 1, "deletions": True, "stable_row_ids": False}, _deletion_read_later),
    "index.name-unique": ManifestMutator({"min_indices": 2}, _dup_index_name),
    "index.uuid-unique": ManifestMutator({"min_indices": 2}, _dup_index_uuid),
    "index.fields-exist": ManifestMutator({"min_indices": 1}, _index_missing_field),
    "index.dataset-version-not-later": ManifestMutator({"min_indices": 1}, _index_from_future),
}


@st.composite
def manifest_mutations(draw, requirement_ids: list[str] | None = None):
    """:class:`ManifestMutation`: a valid manifest (from :func:`indexed_manifests`,
    drawn with what the mutator needs, so nothing is filtered) and a copy
    edited to break one requirement of :data:`MANIFEST_MUTATORS` (restricted to
    ``requirement_ids`` when given). Guarantee: ``valid`` satisfies every
    manifest-level requirement :func:`manifests` promises, and ``mutated``
    differs from it only by the one edit."""
    requirement = draw(st.sampled_from(sorted(requirement_ids or MANIFEST_MUTATORS)))
    mutator = MANIFEST_MUTATORS[requirement]
    needs = dict(mutator.needs)
    if needs.get("deletions"):
        needs.setdefault("min_fragments", 1)
    manifest, found = draw(indexed_manifests(**needs))
    if needs.get("deletions") and not any(f.deletion_file for f in manifest.fragments):
        # every fragment drew a single row: give the first one a second row
        frag = manifest.fragments[0]
        frag.physical_rows = 2
        frag.deletion_file = DeletionFile(DeletionFileType.ARROW_ARRAY, max(manifest.version - 1, 1), 0, 1)
        if frag.row_id_sequence is not None:  # pragma: no cover - deletions never asked with stable ids
            raise AssertionError("deletion mutators do not combine with stable row ids")
        manifest.reader_feature_flags |= ff.DELETION_FILES
        manifest.writer_feature_flags |= ff.DELETION_FILES
    mutated, mutated_indices = copy.deepcopy(manifest), copy.deepcopy(found)
    mutator.apply(mutated, mutated_indices)
    return ManifestMutation(manifest, requirement, mutated, found, mutated_indices)
