"""What decoding a data file's pages shows (``validate --deep``; file format:
file structure and encodings).

Each data file is decoded by
:func:`reference_impl.file_format.verify.verify_data_file` once per run: the
load is cached under a key naming the file and what the manifest says it
stores (cache key ``("data-pages", location, ...)``), so every version and
every fragment that lists the file unchanged shares one decoding. The loads
of a batch of new fragments go through
:meth:`~conformance.validator.context.DatasetView.prefetch`, like the footer
reads, and so to Spark executors in a ``--spark`` run; what comes back is the
:class:`~reference_impl.file_format.verification.FileVerification` (problems and
the rows of nulls of non-nullable fields), never the values.

The rules on pages (rules/data_pages.py) and the non-nullable rule
(rules/non_nullable.py, in a deep run) read the decodings from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference_impl.file_format.footer import LAYOUT_V2, NEWEST_VERSION
from reference_impl.fragments import DataFile, Fragment
from reference_impl.schema import Field

from ..context import Loaded, VersionView
from .data_files import FileFacts, Located, checked_file_storage
from .schema_tree import schema_tree

if TYPE_CHECKING:
    from reference_impl.file_format.verification import FileVerification

    from .fragment_checks import NewFragments

#: A readable file and what decoding it gave: ``(k, fragment, detail, data
#: file, verification)``, ``k`` and ``detail`` as in :class:`.fragment_checks.NewFragments`.
Verified = tuple[int, Fragment, str, DataFile, "Loaded[FileVerification]"]


def non_nullable_ids(view: VersionView) -> frozenset[int]:
    """Ids of the rooted fields that are not nullable."""

    def compute() -> frozenset[int]:
        tree = schema_tree(view)
        return frozenset(i for i, f in tree.by_id.items() if not f.nullable and i in tree.rooted)

    return view.memo("data_pages.non_nullable", compute)


def _stored_fields(view: VersionView, data_file: DataFile) -> tuple[Field, ...]:
    """The fields of the top-level fields under which the file stores
    something, with all their descendants: what decoding it reads (the key
    of the decoding names them, so a schema change elsewhere keeps it)."""
    stored = {i for i in data_file.fields if i >= 0}
    tree = schema_tree(view)
    wanted: set[int] = set()
    for field_id in stored:
        node = tree.by_id.get(field_id)
        if node is None:
            continue
        chain = tree.ancestors(node)
        wanted.add((chain[-1] if chain else node).id)
    fields = []
    for f in view.manifest.schema.fields:  # depth first: a parent before its children
        if f.id in wanted or f.parent_id in wanted:
            wanted.add(f.id)
            fields.append(f)
    return tuple(fields)


def _verify(located: Located, fields, file_field_ids, column_indices, physical_rows, watched) -> FileVerification:
    # lazy: the reader pulls pyarrow and numpy, which a shallow run never needs
    from reference_impl.file_format.verify import verify_data_file

    storage = checked_file_storage(located)
    return verify_data_file(storage, located.relpath, fields, file_field_ids, column_indices, physical_rows, watched)


def _job(view: VersionView, fragment: Fragment, data_file: DataFile, located: Located) -> tuple:
    """``(key, action, *args)`` of the decoding of one data file."""
    fields = _stored_fields(view, data_file)
    watched = tuple(sorted(i for i in data_file.fields if i in non_nullable_ids(view)))
    file_field_ids = tuple(data_file.fields)
    column_indices = tuple(data_file.column_indices)
    key = (
        "data-pages",
        located.key,
        file_field_ids,
        column_indices,
        fragment.physical_rows,
        tuple((f.id, f.parent_id, f.name, f.logical_type, f.nullable) for f in fields),
        watched,
    )
    return (key, _verify, located, fields, file_field_ids, column_indices, fragment.physical_rows, watched)


def decodable(facts: FileFacts) -> bool:
    """Whether the reference reader may decode the file: a v2.x file of a
    version it implements (others are reported unchecked from the footer)."""
    info = facts.info
    return info.layout == LAYOUT_V2 and (2, 0) <= (info.major, info.minor) <= NEWEST_VERSION


def verification(
    view: VersionView, fragment: Fragment, data_file: DataFile, located: Located
) -> Loaded[FileVerification]:
    """The decoding of one data file that :func:`.data_files.locate` found
    and whose footer reads (once per run)."""
    key, action, *args = _job(view, fragment, data_file, located)
    return view.dataset.cached(key, action, *args)


def verified(view: VersionView, batch: NewFragments) -> list[Verified]:
    """Every data file of the batch whose footer reads, decoded (the
    decodings prefetched together first: on executors in a Spark run)."""

    def compute() -> list[Verified]:
        readable = {(k, detail): facts for k, _, detail, _, facts in batch.readable}
        entries = [
            (k, fragment, detail, data_file, located)
            for k, fragment, detail, data_file, located in batch.located
            if (k, detail) in readable
        ]
        view.dataset.prefetch(
            _job(view, fragment, data_file, located) for _, fragment, _, data_file, located in entries
        )
        return [
            (k, fragment, detail, data_file, verification(view, fragment, data_file, located))
            for k, fragment, detail, data_file, located in entries
        ]

    return batch.memo("data_pages.verified", compute)
