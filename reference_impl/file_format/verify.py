"""Whether a data file is well formed, page by page: the executable spec of
deep validation (``validate --deep``).

:func:`verify_data_file` opens one data file with the reference reader
(:class:`~reference_impl.file_format.reader.LanceFileReader`: 2.0 in
``reader.py``, 2.1 and later in :mod:`.v2_1`), decodes every column the
manifest says the file stores, and checks what the structure promises
(upstream ``docs/src/format/file/index.md``, "File Structure", and
``docs/src/format/file/encoding.md``, "Structural Encoding"):

* every page decodes: levels, offsets, dictionary indices, bit widths and
  compressed frames are checked by the decoders, which raise
  :class:`~reference_impl.errors.CorruptFileError` naming ``column N page M``
  (:attr:`ProblemKind.UNDECODABLE`);
* the values carry the logical layer their field promises: each non-null
  value of a JSON field (``arrow.json`` / ``lance.json``) is a well-formed
  JSONB document (upstream ``docs/src/format/table/jsonb.md``, checked by
  :func:`reference_impl.jsonb.check`; :attr:`ProblemKind.MALFORMED_VALUE`,
  naming the field and the row). Blob v2 descriptors are the blob rules'
  (``conformance/validator/rules/blobs.py``);
* the rows of each column's pages add up to the file's rows, the file's rows
  to the fragment's physical rows, and each decoded field has that many
  values (:attr:`ProblemKind.ROW_COUNT`);
* every page, column and global buffer lies in the data region (before the
  column metadata) and no two overlap (:attr:`ProblemKind.BUFFER_LAYOUT`).

What the reader does not implement (a file version above
:data:`~.footer.NEWEST_VERSION`, an encoding or layout it does not know,
legacy v1 files) is not a problem: it comes back as :class:`UncheckedData`
naming the file and the encoding. Nulls of watched (non-nullable) fields
come back too, as the top-level row of each null
(:func:`null_rows`), so that the validator's non-nullable rule needs no
second read. Nothing here raises for what a file's pages hold: every
problem is a plain dataclass in the result (a file whose footer does not
read raises the reader's format error, which the footer rules report).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import jsonb, jsonb_batch
from ..arrow_schema import schema_to_arrow
from ..errors import CorruptFileError, LanceFormatError, UnsupportedFeatureError
from ..schema import TOP_LEVEL_PARENT, Field, Schema
from ..storage import Storage
from .footer import LAYOUT_LEGACY, LAYOUT_V2, V2Metadata, read_footer_version
from .footer import layout_of as footer_layout
from .reader import LanceFileReader
from .verification import FileVerification, PageProblem, ProblemKind, UncheckedData

#: Buffer problems reported per file at most (a shifted table breaks every
#: buffer after it; the first few say what happened).
MAX_BUFFER_PROBLEMS = 5
#: "column 3 page 0" (and "column 3" alone) as the decoders name a place.
_WHERE = re.compile(r"\bcolumn (\d+)(?: page (\d+))?")
#: The fixed-size list prefix of a logical type: from 2.1 on, the pages of a
#: leaf under a fixed-size list of structs count list items, not rows.
_FIXED_SIZE_LIST = "fixed_size_list:"
#: Failures of Arrow or numpy on bytes the decoders let through: a corrupt
#: page all the same, reported with the reader's words.
_DECODER_SLIPS = (ValueError, TypeError, KeyError, IndexError, OverflowError, MemoryError, RecursionError)


def _located(error: LanceFormatError) -> tuple[int | None, int | None]:
    match = _WHERE.search(error.problem)
    if match is None:
        return None, None
    return int(match.group(1)), None if match.group(2) is None else int(match.group(2))


def _unchecked(error: UnsupportedFeatureError) -> UncheckedData:
    column, page = _located(error)
    # The decoders prefix the place; the encoding is what follows it.
    encoding = _WHERE.sub("", error.problem, count=1).lstrip(" :") if column is not None else error.problem
    return UncheckedData(encoding, column, page)


def _undecodable(error: CorruptFileError) -> PageProblem:
    column, page = _located(error)
    return PageProblem(ProblemKind.UNDECODABLE, error.problem, column, page)


# -- nulls ------------------------------------------------------------------------------


def null_rows(array: pa.Array, node: Field, children: dict[int, list[Field]], watched: Collection[int]) -> dict:
    """For each field of ``watched`` in ``node``'s subtree, the top-level row
    (position in ``array``) of each of its nulls, counting only slots where
    every ancestor has a value (a null struct's children, a null list's items
    are not nulls of their own)."""
    found: dict[int, list[np.ndarray]] = {}
    _walk_nulls(array, node, children, set(watched), None, found)
    return {field_id: np.concatenate(parts) for field_id, parts in found.items()}


def _walk_nulls(array, node: Field, children, watched: set[int], rows: np.ndarray | None, found: dict) -> None:
    """``rows`` gives the top-level row of each slot of ``array`` (None: the slots are the rows)."""
    if isinstance(array, pa.ExtensionArray):
        array = array.storage
    if node.id in watched and array.null_count:
        slots = np.flatnonzero(np.asarray(array.is_null()))
        found.setdefault(node.id, []).append(slots if rows is None else rows[slots])
    kids = children.get(node.id, [])
    if not kids:
        return
    data_type = array.type
    if pa.types.is_struct(data_type):
        valid = np.asarray(array.is_valid()) if array.null_count else None
        kept = rows if valid is None else (np.flatnonzero(valid) if rows is None else rows[valid])
        for kid in kids:
            index = data_type.get_field_index(kid.name)
            if index < 0:
                continue
            child = array.field(index)
            if valid is not None:
                child = child.filter(pa.array(valid))
            _walk_nulls(child, kid, children, watched, kept, found)
    elif (pa.types.is_list(data_type) or pa.types.is_large_list(data_type)) and len(kids) == 1:
        # flatten() keeps only the items of lists that have a value; each
        # item belongs to the row of its list.
        lengths = np.asarray(array.value_lengths().fill_null(0), dtype=np.int64)
        owners = np.repeat(np.arange(len(array)) if rows is None else rows, lengths)
        _walk_nulls(array.flatten(), kids[0], children, watched, owners, found)


# -- the logical layer ------------------------------------------------------------------


def _json_problems(array: pa.Array, fields: Sequence[Field]) -> list[PageProblem]:
    """The first malformed JSONB document of each JSON field in the subtree
    of ``fields[0]`` (``array``, as the reader decodes it: documents as
    large binary), naming the field and the top-level row holding it."""
    try:
        logical = schema_to_arrow(Schema([*fields])).field(0).type
    except LanceFormatError:
        return []  # a type the reader could read but not name: nothing JSON in it to check
    if not jsonb.holds_json(logical):
        return []
    problems: list[PageProblem] = []
    for path, documents, rows in _json_leaves(array, logical, fields[0].name, None):
        found = _first_malformed(documents)
        if found is not None:
            slot, error = found
            row = slot if rows is None else int(rows[slot])
            problems.append(
                PageProblem(
                    ProblemKind.MALFORMED_VALUE,
                    f"field {path!r} row {row}: the value is not a well-formed JSONB document: {error.problem}",
                )
            )
    return problems


def _json_leaves(array: pa.Array, logical: pa.DataType, path: str, rows: np.ndarray | None):
    """``(path, documents, rows)`` for each JSON field under ``logical``:
    its documents (the slots whose ancestors all have a value) and the
    top-level row of each (None: the slots are the rows)."""
    if isinstance(array, pa.ExtensionArray):
        array = array.storage
    if jsonb.is_json(logical):
        yield path, array, rows
        return
    if not jsonb.holds_json(logical):
        return
    if pa.types.is_struct(logical):
        valid = np.asarray(array.is_valid()) if array.null_count else None
        kept = rows if valid is None else (np.flatnonzero(valid) if rows is None else rows[valid])
        for index in range(logical.num_fields):
            child = array.field(index)
            if valid is not None:
                child = child.filter(pa.array(valid))
            yield from _json_leaves(child, logical.field(index).type, f"{path}.{logical.field(index).name}", kept)
        return
    if pa.types.is_map(logical):
        items: pa.DataType = pa.struct([logical.key_field, logical.item_field])
    else:  # a list, large list or fixed-size list
        items = logical.value_type
    # flatten() keeps only the items of lists that have a value; each item
    # belongs to the row of its list.
    lengths = np.asarray(pc.list_value_length(array).fill_null(0), dtype=np.int64)
    owners = np.repeat(np.arange(len(array)) if rows is None else rows, lengths)
    yield from _json_leaves(array.flatten(), items, f"{path}[]", owners)


def _first_malformed(documents: pa.Array) -> tuple[int, jsonb.JsonbError] | None:
    """The slot and problem of the first malformed document: every
    document is checked at once (:func:`reference_impl.jsonb_batch.malformed`),
    the first one refused again alone, for the words of its problem."""
    bad = np.flatnonzero(jsonb_batch.malformed(documents))
    if not len(bad):
        return None
    slot = int(bad[0])
    try:
        jsonb.check(documents[slot].as_py())
    except jsonb.JsonbError as exc:
        return slot, exc
    return slot, jsonb.JsonbError("the document breaks the JSONB layout")


# -- the structure ----------------------------------------------------------------------


def _buffer_problems(metadata: V2Metadata) -> list[PageProblem]:
    """Every buffer inside the data region, none sharing bytes with another."""
    data_end = metadata.footer.column_metadata_start
    spans: list[tuple[int, int, str, int | None, int | None]] = []
    for index, column_metadata in enumerate(metadata.columns):
        for number, page in enumerate(column_metadata.pages):
            for slot, (position, size) in enumerate(zip(page.buffer_offsets, page.buffer_sizes, strict=True)):
                spans.append((position, size, f"column {index} page {number} buffer {slot}", index, number))
        pairs = zip(column_metadata.buffer_offsets, column_metadata.buffer_sizes, strict=True)
        for slot, (position, size) in enumerate(pairs):
            spans.append((position, size, f"column {index} buffer {slot}", index, None))
    for slot, (position, size) in enumerate(metadata.global_buffers):
        spans.append((position, size, f"global buffer {slot}", None, None))
    problems: list[PageProblem] = []
    for position, size, name, column, page in spans:
        if size and position + size > data_end:
            problems.append(
                PageProblem(
                    ProblemKind.BUFFER_LAYOUT,
                    f"{name} at [{position}, {position + size}) runs into the column metadata, which starts at "
                    f"{data_end}",
                    column,
                    page,
                )
            )
    # In order of position, each buffer must start where every earlier one has ended.
    reach, reacher = 0, ""
    for position, size, name, column, page in sorted((s for s in spans if s[1]), key=lambda s: (s[0], s[1])):
        if position < reach:
            problems.append(
                PageProblem(
                    ProblemKind.BUFFER_LAYOUT,
                    f"{name} at [{position}, {position + size}) overlaps {reacher}, which runs to {reach}",
                    column,
                    page,
                )
            )
        if position + size > reach:
            reach, reacher = position + size, name
    return problems[:MAX_BUFFER_PROBLEMS]


def _under_fixed_size_list(field: Field, by_id: dict[int, Field]) -> bool:
    node: Field | None = field
    while node is not None:
        if node.logical_type.startswith(_FIXED_SIZE_LIST):
            return True
        node = by_id.get(node.parent_id)
    return False


def _row_problems(
    reader: LanceFileReader, schema_fields: Sequence[Field], plan: dict[int, int], physical_rows: int | None
) -> list[PageProblem]:
    """Rows of each column's pages against the file's rows, and the file's
    rows against its fragment's. In 2.0 only the columns of top-level
    fields and of struct fields under them hold a value per row (a list's
    items have columns of their own); from 2.1 on every leaf column does,
    except under a fixed-size list of structs, whose pages count items."""
    problems: list[PageProblem] = []
    rows = reader.num_rows
    if physical_rows is not None and rows != physical_rows:
        problems.append(
            PageProblem(ProblemKind.FRAGMENT_ROWS, f"the file holds {rows} rows but its fragment has {physical_rows}")
        )
    by_id = {f.id: f for f in schema_fields}
    per_row: set[int] = set()
    structural = reader.metadata.version > (2, 0)
    for field_id, column in plan.items():
        field = by_id.get(field_id)
        if field is None or not 0 <= column < reader.num_columns:
            continue
        if structural:
            if not _under_fixed_size_list(field, by_id):
                per_row.add(column)
            continue
        node: Field | None = field
        while node is not None and node.parent_id != TOP_LEVEL_PARENT:
            node = by_id.get(node.parent_id)
            if node is None or node.logical_type != "struct":
                break
        else:
            per_row.add(column)
    for column in sorted(per_row):
        pages = reader.metadata.columns[column].pages
        total = sum(page.length for page in pages)
        if total != rows:
            lengths = [page.length for page in pages[:8]]
            problems.append(
                PageProblem(
                    ProblemKind.ROW_COUNT,
                    f"the pages of column {column} hold {total} rows (page lengths {lengths}"
                    f"{', ...' if len(pages) > 8 else ''}) but the file holds {rows}",
                    column,
                )
            )
    return problems


# -- the entry point ---------------------------------------------------------------------


def _tops(schema_fields: Sequence[Field], stored: set[int]) -> list[list[Field]]:
    """Each top-level field with a descendant (or itself) the file stores,
    with all its descendants, in schema order."""
    by_top: dict[int, list[Field]] = {}
    top_of: dict[int, int] = {}
    for f in schema_fields:  # depth first: a parent comes before its children
        top = f.id if f.parent_id == TOP_LEVEL_PARENT else top_of.get(f.parent_id)
        if top is None:
            continue
        top_of[f.id] = top
        by_top.setdefault(top, []).append(f)
    return [fields for top, fields in by_top.items() if any(f.id in stored for f in fields)]


def verify_data_file(
    storage: Storage,
    relpath: str,
    schema_fields: Sequence[Field],
    file_field_ids: Sequence[int],
    column_indices: Sequence[int],
    physical_rows: int | None = None,
    watched: Collection[int] = (),
) -> FileVerification:
    """Decode every page of the data file ``relpath`` and check it (module
    docstring). ``schema_fields`` is the version's schema (every field, in
    order); ``file_field_ids`` and ``column_indices`` the data file's
    ``fields`` and ``column_indices`` from the manifest (empty indices: the
    field at position i owns column i); ``physical_rows`` the fragment's.
    ``watched``: field ids whose nulls are wanted (:attr:`FileVerification.null_rows`).
    A file whose footer does not read is reported by the footer rules, not
    here: its error is raised."""
    _, major, minor = read_footer_version(storage, relpath)
    path = storage.path_text(relpath)
    layout = footer_layout(major, minor)
    if layout == LAYOUT_LEGACY:
        return FileVerification(path, unchecked=(UncheckedData(f"legacy (v{major}.{minor}) file layout"),))
    if layout != LAYOUT_V2:
        return FileVerification(path, unchecked=(UncheckedData(f"file format version {major}.{minor}"),))
    try:
        reader = LanceFileReader(storage, relpath)
    except UnsupportedFeatureError as exc:
        return FileVerification(path, unchecked=(_unchecked(exc),))
    except CorruptFileError as exc:
        return FileVerification(path, problems=(_undecodable(exc),))
    ids = list(file_field_ids)
    columns = list(column_indices) if column_indices else list(range(len(ids)))
    if len(columns) != len(ids):
        problem = PageProblem(
            ProblemKind.UNDECODABLE,
            f"the manifest lists {len(ids)} fields but {len(columns)} column indices for this file",
        )
        return FileVerification(path, problems=(problem,))
    plan = {field_id: column for field_id, column in zip(ids, columns, strict=True) if field_id >= 0 and column >= 0}
    problems = _buffer_problems(reader.metadata) + _row_problems(reader, schema_fields, plan, physical_rows)
    unchecked: list[UncheckedData] = []
    found_nulls: dict[int, list[np.ndarray]] = {}
    tops = _tops(schema_fields, set(plan))
    # The columns the fields read below reach; the others are decoded alone.
    read = {plan[f.id] for fields in tops for f in fields if f.id in plan}
    for fields in tops:
        try:
            table = reader.read(fields, file_field_ids=ids, column_indices=columns)
            array = table.column(0).combine_chunks() if table.num_columns else None
        except UnsupportedFeatureError as exc:
            unchecked.append(_unchecked(exc))
            continue
        except CorruptFileError as exc:
            problems.append(_undecodable(exc))
            continue
        except (*_DECODER_SLIPS, pa.ArrowException) as exc:
            problems.append(
                PageProblem(ProblemKind.UNDECODABLE, f"field {fields[0].name!r}: {type(exc).__name__}: {exc}")
            )
            continue
        if array is None:
            continue
        if len(array) != reader.num_rows:
            problems.append(
                PageProblem(
                    ProblemKind.ROW_COUNT,
                    f"field {fields[0].name!r} decodes to {len(array)} values but the file holds "
                    f"{reader.num_rows} rows",
                )
            )
        problems.extend(_json_problems(array, fields))
        wanted = [f.id for f in fields if f.id in watched]
        if wanted:
            children: dict[int, list[Field]] = {}
            for f in fields:
                children.setdefault(f.parent_id, []).append(f)
            for field_id, rows in null_rows(array, fields[0], children, wanted).items():
                found_nulls.setdefault(field_id, []).append(rows)
    problems.extend(_unmapped_columns(reader, read, unchecked))
    nulls = {field_id: np.concatenate(parts) for field_id, parts in found_nulls.items()}
    return FileVerification(path, tuple(problems), tuple(unchecked), nulls)


def _unmapped_columns(reader: LanceFileReader, mapped: set[int], unchecked: list[UncheckedData]) -> list[PageProblem]:
    """Decode the columns no field of the schema reaches (2.1 and later,
    where a column decodes without its field's type: a dropped field's
    column stays in the file). A 2.0 column needs its type to decode, so only the
    columns of listed fields are decoded there."""
    structural = reader.structural
    if structural is None:
        return []
    problems: list[PageProblem] = []
    for column in range(reader.num_columns):
        if column in mapped:
            continue
        try:
            structural.leaf_column(column)
        except UnsupportedFeatureError as exc:
            unchecked.append(_unchecked(exc))
        except CorruptFileError as exc:
            problems.append(_undecodable(exc))
        except (*_DECODER_SLIPS, pa.ArrowException) as exc:
            problems.append(PageProblem(ProblemKind.UNDECODABLE, f"{type(exc).__name__}: {exc}", column))
    return problems


__all__ = [
    "FileVerification",
    "PageProblem",
    "ProblemKind",
    "UncheckedData",
    "null_rows",
    "verify_data_file",
]
