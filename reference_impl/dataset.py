"""A dataset opened at one version: the reader's view of the table format.

:class:`Dataset` ties the spec topics together: it finds the manifest of a
version (naming schemes), decodes it (manifest container), refuses feature
flags it does not know (versioning: feature flags), and resolves where each
data, deletion and row id file lives (layout: base paths).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from . import entropy, feature_flags
from .commit import commit, new_transaction
from .commit.external_store import DynamoDBManifestStore, ExternalManifestStore, resolve_through_store, store_base_uri
from .commit.loop import DEFAULT_MAX_ATTEMPTS
from .deletions import deletion_file_location, read_deletion_file
from .errors import (
    IncompatibleConflictError,
    LanceFormatError,
    NamingSchemeError,
    PathEscapeError,
    UnsupportedFeatureError,
)
from .fragments import DataFile, Fragment
from .index_metadata import INDICES_DIR, IndexMetadata
from .manifest import Manifest
from .manifest_file import ManifestFile, read_manifest_file
from .naming import NamingScheme, committed_manifests, list_versions, resolve_version
from .operations.clone import shallow_clone
from .operations.mem_wal import update_mem_wal_state
from .operations.refs import create_branch, create_tag, delete_tag
from .operations.restore import restore
from .refs import TREE_DIR, list_tags
from .row_ids import fragment_row_ids
from .schema import Schema
from .storage import DatasetUri, Storage, open_storage, parse_dataset_uri
from .transactions import Append, Operation, Overwrite

if TYPE_CHECKING:
    import pyarrow as pa

# Writing, scanning, the operations that rewrite rows (delete, update, compaction,
# schema evolution, field metadata by path) and index writers need pyarrow; they are
# imported inside the methods that use them, so that opening a dataset to read its
# metadata (the validator, describe) does not load pyarrow, most of their start-up.


def dataset_storage(
    uri: str | os.PathLike | Storage, storage_options: Mapping[str, str] | None, *, writable: bool = True
) -> Storage:
    """The storage of the dataset a user named (see :meth:`Dataset.open`);
    for ``s3+ddb``, the storage of its files on S3."""
    if isinstance(uri, Storage):
        return uri
    return open_storage(parse_dataset_uri(uri), storage_options, writable=writable)


def uri_manifest_store(
    uri: str | os.PathLike | DatasetUri | Storage, storage_options: Mapping[str, str] | None
) -> ExternalManifestStore | None:
    """The external manifest store an ``s3+ddb://...?ddbTableName=T`` URI
    names (pylance's DynamoDB table ``T``, reached with the same storage
    options); None for any other URI."""
    if isinstance(uri, Storage):
        return None
    parsed = parse_dataset_uri(uri)
    if parsed.ddb_table_name is None:
        return None
    return DynamoDBManifestStore(parsed.ddb_table_name, storage_options)


@dataclass
class FileLocation:
    """Where a file recorded in the manifest lives: a storage and a path in it."""

    storage: Storage
    relpath: str

    def __str__(self) -> str:
        return self.storage.join(self.relpath)


class Dataset:
    """One version of a Lance dataset, opened for reading."""

    def __init__(
        self,
        storage: Storage,
        manifest_file: ManifestFile,
        naming_scheme: NamingScheme | None,
        manifest_store: ExternalManifestStore | None = None,
    ):
        self.storage = storage
        self.manifest_file = manifest_file
        self.naming_scheme = naming_scheme
        #: The external manifest store versions are committed through and
        #: looked up in (None: the object store's put-if-not-exists alone).
        self.manifest_store = manifest_store
        #: Properties every transaction committed from this handle records
        #: (``Transaction.transaction_properties``; :meth:`with_properties`).
        self.transaction_properties: dict[str, str] = {}

    def with_properties(self, properties: Mapping[str, str]) -> Dataset:
        """This version, as a handle whose commits record ``properties`` in
        their transactions (upstream ``transaction.md``: free-form key/value
        pairs a writer attaches). The dataset a commit returns records none."""
        handle = type(self)(self.storage, self.manifest_file, self.naming_scheme, self.manifest_store)
        handle.transaction_properties = {str(key): str(value) for key, value in properties.items()}
        return handle

    # -- opening ----------------------------------------------------------------

    @classmethod
    def open(
        cls,
        uri: str | os.PathLike | Storage,
        version: int | None = None,
        *,
        check_features: bool = True,
        storage_options: Mapping[str, str] | None = None,
        manifest_store: ExternalManifestStore | None = None,
        synchronize: bool = True,
        with_transaction: bool = True,
        with_fragments: bool = True,
    ) -> Dataset:
        """Open ``uri`` at ``version`` (the latest by default).

        ``uri`` is named as pylance names datasets: a local path, ``file://``,
        ``s3://bucket/path`` or ``s3+ddb://bucket/path?ddbTableName=T``, with
        pylance's ``storage_options`` keys (``aws_endpoint``, ``aws_region``,
        ``allow_http``, credentials, ``dynamodb_endpoint``); or the
        :class:`~reference_impl.storage.Storage` of the dataset's root.

        With ``manifest_store`` (an ``s3+ddb`` URI brings its DynamoDB store
        itself) the version is looked up in that external manifest store (the
        latest version is the store's), a staged manifest it records is
        finalised first, and
        :class:`~reference_impl.errors.ManifestStoreOutOfSyncError` is raised
        when that cannot be done; later commits go through the store. With
        ``synchronize`` False nothing is written (the dataset is opened read
        only): a staged manifest the store records is read where it is.

        Raises :class:`~reference_impl.errors.UnsupportedFeatureError` when the
        manifest sets a reader feature flag this implementation does not know,
        unless ``check_features`` is False (the validator reads such datasets
        to report on them).

        With ``with_transaction`` False the transaction the manifest embeds
        is not decoded (``manifest_file.transaction`` is None): for a reader
        that only describes the version (``describe``). With
        ``with_fragments`` False the fragments are left as parsed messages
        (``manifest_file.fragment_messages``) and ``fragments`` is empty: for
        ``describe``, which describes each fragment from its message.
        """
        storage = dataset_storage(uri, storage_options, writable=synchronize)
        manifest_store = manifest_store or uri_manifest_store(uri, storage_options)
        if manifest_store is None:
            resolved, relpath, scheme = resolve_version(storage, version)
        else:
            resolved, relpath, scheme = resolve_through_store(storage, manifest_store, version, synchronize=synchronize)
        manifest_file = read_manifest_file(
            storage, relpath, with_transaction=with_transaction, with_fragments=with_fragments
        )
        if scheme is not None and manifest_file.manifest.version != resolved:
            # The name is how readers find a version (naming.name-matches-version):
            # a manifest holding another version is not the version asked for.
            # (A root _latest.manifest alone has no named version, and no scheme.)
            raise NamingSchemeError(
                manifest_file.path,
                f"the file name says version {resolved} ({scheme.value} naming scheme) but the manifest "
                f"holds version {manifest_file.manifest.version}",
            )
        dataset = cls(storage, manifest_file, scheme, manifest_store)
        if check_features:
            dataset.check_reader_features()
        return dataset

    def check_reader_features(self) -> None:
        unknown = feature_flags.unknown_flags(self.manifest.reader_feature_flags)
        if unknown:
            raise UnsupportedFeatureError(
                self.manifest_file.path,
                f"reader feature flags 0x{unknown:x} are not known to this reader; it must not read the dataset",
            )

    # -- what the manifest says -------------------------------------------------

    @property
    def uri(self) -> str:
        return str(self.storage.root)

    @property
    def manifest(self) -> Manifest:
        return self.manifest_file.manifest

    @property
    def version(self) -> int:
        return self.manifest.version

    @property
    def schema(self) -> Schema:
        return self.manifest.schema

    @property
    def fragments(self) -> list[Fragment]:
        self._require_decoded_fragments()
        return self.manifest.fragments

    def _require_decoded_fragments(self) -> None:
        # Opened with_fragments=False (for describe), the manifest lists no
        # fragments: reading it as an empty table would be a silent lie.
        if self.manifest_file.fragment_messages is not None:
            raise ValueError(f"{self.manifest_file.path} was opened with_fragments=False: no fragment is decoded")

    @property
    def indices(self) -> list[IndexMetadata]:
        return self.manifest_file.indices or []

    @property
    def uses_stable_row_ids(self) -> bool:
        return bool(self.manifest.reader_feature_flags & feature_flags.STABLE_ROW_IDS)

    def versions(self) -> list[int]:
        """Every committed version of the dataset, ascending."""
        manifests, _ = committed_manifests(self.storage)
        return sorted(manifests) or [self.version]

    def checkout(self, version: int) -> Dataset:
        return Dataset.open(self.storage, version, manifest_store=self.manifest_store)

    def count_rows(self) -> int:
        self._require_decoded_fragments()
        return self.manifest.num_rows

    # -- where files live (layout: base paths) ------------------------------------

    def _base_storage(self, base_id: int | None, what: str) -> tuple[Storage, bool]:
        """Storage of a base and whether it is a dataset root."""
        if base_id is None:
            return self.storage, True
        base = self.manifest.base_path(base_id)
        if base is None:
            raise PathEscapeError(self.manifest_file.path, f"{what} refers to base_id {base_id}, which is not declared")
        return self.storage.for_base(base.path), base.is_dataset_root

    def data_file_location(self, data_file: DataFile) -> FileLocation:
        storage, is_root = self._base_storage(data_file.base_id, f"data file {data_file.path}")
        relpath = f"data/{data_file.path}" if is_root else data_file.path
        return FileLocation(storage, relpath)

    def index_file_location(self, index: IndexMetadata, name: str) -> FileLocation:
        """``_indices/{uuid}/{name}`` under the segment's base (index.md, "Index
        Storage"); a base that is not a dataset root holds ``{uuid}/{name}``."""
        storage, is_root = self._base_storage(index.base_id, f"index {index.name!r} ({index.uuid})")
        directory = f"{INDICES_DIR}/{index.uuid}" if is_root else index.uuid
        return FileLocation(storage, f"{directory}/{name}")

    def deletion_file_location(self, fragment: Fragment) -> FileLocation | None:
        if fragment.deletion_file is None:
            return None
        storage, relpath = deletion_file_location(
            self.storage, fragment.id, fragment.deletion_file, self.manifest.base_paths
        )
        return FileLocation(storage, relpath)

    # -- rows ---------------------------------------------------------------

    def deleted_offsets(self, fragment: Fragment) -> list[int]:
        """Deleted physical row offsets of ``fragment``, ascending."""
        if fragment.deletion_file is None:
            return []
        return read_deletion_file(
            self.storage,
            fragment.id,
            fragment.deletion_file,
            base_paths=self.manifest.base_paths,
            physical_rows=fragment.physical_rows,
        )

    def row_ids(self, fragment: Fragment) -> list[int] | None:
        """The stable row id of each physical row of ``fragment``; None without stable row ids."""
        if not self.uses_stable_row_ids:
            return None
        from .scan import lineage_column  # lazy: a spilled sequence's column is read with pyarrow

        read = partial(lineage_column, self)
        return fragment_row_ids(self.storage, fragment, manifest_path=self.manifest_file.path, read_column=read)

    def root_storage(self) -> Storage:
        """The storage of the dataset root, where ``_refs/`` lives, also when
        this version belongs to a branch (kept under ``tree/{branch}/``;
        upstream branch_tag.md)."""
        branch = self.manifest.branch
        if branch is None:
            return self.storage
        root = self.storage.above([TREE_DIR, *branch.split("/")])
        if root is None:
            raise LanceFormatError(self.uri, f"the manifest names branch {branch!r}, but it is not under tree/{branch}")
        return root

    def tags(self):
        """Tags of the dataset (``_refs/tags`` of the root, whichever branch
        this version is on), by name."""
        return list_tags(self.root_storage())

    # -- reading rows ------------------------------------------------------------

    def to_table(
        self,
        *,
        with_row_id: bool = False,
        with_row_address: bool = False,
        blob_values: bool = False,
        external_roots: tuple[str, ...] = (),
    ) -> pa.Table:
        """Every visible row of this version (deleted rows dropped, missing
        columns as nulls), with ``_rowid`` / ``_rowaddr`` columns on request.
        A blob v2 column holds its descriptors as pylance's ``to_table()``
        gives them, or with ``blob_values`` its values (``large_binary``);
        ``external_roots`` declares where else absolute external blob URIs
        may be read (:mod:`.blobs`)."""
        from .scan import scan  # lazy: needs pyarrow

        return scan(
            self,
            with_row_id=with_row_id,
            with_row_address=with_row_address,
            blob_values=blob_values,
            external_roots=external_roots,
        )

    def take_blobs(
        self, column: str, indices: list[int], *, external_roots: tuple[str, ...] = ()
    ) -> list[bytes | None]:
        """The bytes of blob v2 column ``column`` at visible row ``indices``,
        None for a null blob (pylance's ``take_blobs(column, indices=...)``,
        each file read whole; :func:`.blobs.take_blobs`)."""
        from .blobs import take_blobs  # lazy: needs pyarrow
        from .scan import ROW_ADDRESS, scan  # lazy: needs pyarrow

        scanned = scan(self, with_row_address=True)
        descriptors, addresses = scanned.column(column), scanned.column(ROW_ADDRESS)
        return take_blobs(self, descriptors, addresses, column, indices, external_roots=external_roots)

    # -- writing -------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        uri: str | os.PathLike,
        table: pa.Table,
        *,
        manifest_naming: str = "v2",
        data_storage_version: str = "2.0",
        stable_row_ids: bool = False,
        max_rows_per_file: int | None = None,
        storage_options: Mapping[str, str] | None = None,
        manifest_store: ExternalManifestStore | None = None,
    ) -> Dataset:
        """Create a dataset at ``uri`` holding ``table`` (version 1); ``uri``
        and ``storage_options`` as for :meth:`open`. It is committed through
        ``manifest_store`` when one is given (or the ``s3+ddb`` URI names one)."""
        from .arrow_schema import schema_from_arrow  # lazy: needs pyarrow
        from .fragment_writer import (  # lazy: needs pyarrow
            DEFAULT_MAX_ROWS_PER_FILE,
            check_writable_version,
            write_fragments,
        )

        check_writable_version(data_storage_version)
        storage = dataset_storage(uri, storage_options)
        manifest_store = manifest_store or uri_manifest_store(uri, storage_options)
        existing = list_versions(storage).manifests()
        if manifest_store is not None:
            recorded = manifest_store.latest(store_base_uri(storage))
            if recorded is not None:
                existing[recorded.version] = recorded.path
        if existing:
            raise IncompatibleConflictError(
                str(storage.root), "a dataset already exists here; creating one would replace it", version=max(existing)
            )
        schema = schema_from_arrow(table.schema)
        fragments = write_fragments(
            storage,
            table,
            schema,
            max_rows_per_file=max_rows_per_file or DEFAULT_MAX_ROWS_PER_FILE,
            version=data_storage_version,
        )
        return cls._commit_to(
            storage,
            None,
            NamingScheme(manifest_naming),
            Overwrite(fragments=fragments, schema=schema),
            stable_row_ids=stable_row_ids,
            data_storage_version=data_storage_version,
            manifest_store=manifest_store,
        )

    def append(self, table: pa.Table, *, max_rows_per_file: int | None = None) -> Dataset:
        """Add ``table``'s rows as new fragments."""
        from .fragment_writer import (  # lazy: needs pyarrow
            DEFAULT_MAX_ROWS_PER_FILE,
            dataset_data_version,
            write_fragments,
        )

        fragments = write_fragments(
            self.storage,
            table,
            self.schema,
            max_rows_per_file=max_rows_per_file or DEFAULT_MAX_ROWS_PER_FILE,
            version=dataset_data_version(self.manifest),
        )
        return self.commit(Append(fragments=fragments))

    def overwrite(self, table: pa.Table, *, max_rows_per_file: int | None = None) -> Dataset:
        """Replace every row (and the schema) with ``table``."""
        from .arrow_schema import schema_from_arrow  # lazy: needs pyarrow
        from .fragment_writer import (  # lazy: needs pyarrow
            DEFAULT_MAX_ROWS_PER_FILE,
            dataset_data_version,
            write_fragments,
        )

        schema = schema_from_arrow(table.schema)
        fragments = write_fragments(
            self.storage,
            table,
            schema,
            max_rows_per_file=max_rows_per_file or DEFAULT_MAX_ROWS_PER_FILE,
            version=dataset_data_version(self.manifest),
        )
        return self.commit(Overwrite(fragments=fragments, schema=schema))

    def commit(
        self,
        operation: Operation,
        *,
        tag: str = "",
        restore_source: ManifestFile | None = None,
        on_step: Callable[[str], None] | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    ) -> Dataset:
        """Commit ``operation``, built on this version, and open the version
        committed (``reference_impl.commit.loop``).

        The operation's files must already be written. Versions committed
        since this one was read are resolved in order: compatible ones are
        committed on top of, rebaseable ones merged; a conflict raises
        :class:`~reference_impl.errors.IncompatibleConflictError` or
        :class:`~reference_impl.errors.RetryableConflictError` naming the
        version and its operation, and ``max_attempts`` lost races
        :class:`~reference_impl.errors.CommitAttemptsExhaustedError` (all
        :class:`~reference_impl.errors.CommitConflictError`).
        """
        return self._commit_to(
            self.storage,
            self.manifest_file,
            self.naming_scheme or NamingScheme.V1,
            operation,
            tag=tag,
            restore_source=restore_source,
            on_step=on_step,
            max_attempts=max_attempts,
            manifest_store=self.manifest_store,
            properties=self.transaction_properties,
        )

    @classmethod
    def _commit_to(cls, storage, read, naming, operation: Operation, **options) -> Dataset:
        tag = options.pop("tag", "")
        properties = options.pop("properties", None)
        transaction = new_transaction(read.manifest.version if read else 0, operation, tag=tag, properties=properties)
        nanos = entropy.current().time_ns()
        committed = commit(
            storage,
            transaction,
            read=read,
            naming=naming,
            timestamp=(nanos // 1_000_000_000, nanos % 1_000_000_000),
            **options,
        )
        return cls(storage, committed, naming, options.get("manifest_store"))

    # -- operations (reference_impl/operations/) -----------------------------------

    def delete(self, where) -> Dataset:
        """Delete rows: ``where`` is a pyarrow compute expression over the
        columns, or a mapping ``{fragment_id: [physical offsets]}``."""
        from .operations.delete import delete  # lazy: needs pyarrow

        return delete(self, where)

    def update(self, values, where=None) -> Dataset:
        """Set columns to new values (``{name: expression or scalar}``) on the
        rows ``where`` selects (every row by default): the old rows are
        deleted and the new ones written as new fragments."""
        from .operations.delete import update  # lazy: needs pyarrow

        return update(self, values, where)

    def add_columns(self, columns) -> Dataset:
        """Add columns by data evolution: a new data file per fragment.
        ``columns`` maps each new column (a name, or a ``pa.Field`` fixing its
        type, nullability and metadata) to a pyarrow compute expression over
        the existing columns, or to a function from a fragment's physical rows
        (``pa.Table``) to an array."""
        from .operations.schema_evolution import add_columns  # lazy: needs pyarrow

        return add_columns(self, columns)

    def drop_columns(self, names) -> Dataset:
        """Remove columns (and nested fields, by dotted path) from the schema."""
        from .operations.schema_evolution import drop_columns  # lazy: needs pyarrow

        return drop_columns(self, names)

    def alter_columns(self, *alterations) -> Dataset:
        """Alter columns; each alteration is a mapping with ``path`` (dotted)
        and any of ``name`` (rename), ``nullable`` and ``data_type`` (a cast,
        which writes the column anew)."""
        from .operations.schema_evolution import alter_columns  # lazy: needs pyarrow

        return alter_columns(self, *alterations)

    def update_metadata(
        self, *, config=None, table_metadata=None, schema_metadata=None, field_metadata=None, replace: bool = False
    ) -> Dataset:
        """Change table config, table metadata, schema metadata or field
        metadata (``{field path: {key: value}}``); a value of None removes the key."""
        from .operations.metadata import update_metadata  # lazy: needs pyarrow

        return update_metadata(
            self,
            config=config,
            table_metadata=table_metadata,
            schema_metadata=schema_metadata,
            field_metadata=field_metadata,
            replace=replace,
        )

    def compact(
        self,
        *,
        target_rows_per_fragment: int = 1024 * 1024,
        materialize_deletions: bool = True,
        materialize_deletions_threshold: float = 0.0,
    ) -> Dataset:
        """Rewrite small fragments (and fragments with more than the threshold
        share of rows deleted) into fewer, larger ones: a ReserveFragments
        commit, then a Rewrite."""
        from .operations.compaction import compact  # lazy: needs pyarrow

        return compact(
            self,
            target_rows_per_fragment=target_rows_per_fragment,
            materialize_deletions=materialize_deletions,
            materialize_deletions_threshold=materialize_deletions_threshold,
        )

    def restore(self, version: int) -> Dataset:
        """Commit a new version whose content is that of ``version``."""
        return restore(self, version)

    def create_index(
        self, columns, *, name: str | None = None, index_type: str = "BTREE", replace: bool = True, **options
    ) -> Dataset:
        """Record a new index over ``columns`` (with files for the types the reference writes: ``options``)."""
        from .operations.indices import create_index  # lazy: the index writers need pyarrow

        return create_index(self, columns, name=name, index_type=index_type, replace=replace, **options)

    def drop_index(self, name: str) -> Dataset:
        from .operations.indices import drop_index  # lazy: its module holds the index writers, which need pyarrow

        return drop_index(self, name)

    def update_mem_wal_state(self, merged) -> Dataset:
        """Record MemWAL merge progress: ``merged`` maps region ids (UUID
        strings) to the last generation merged into the table."""
        return update_mem_wal_state(self, merged)

    def create_tag(self, name: str, version: int | None = None) -> None:
        """Tag ``version`` (this one by default) as ``name``."""
        create_tag(self, name, version)

    def delete_tag(self, name: str) -> None:
        delete_tag(self, name)

    def create_branch(self, name: str, version: int | None = None, *, relative_base_path: bool = False) -> Dataset:
        """Start branch ``name`` from ``version`` (this one by default) and
        open it."""
        return create_branch(self, name, version, relative_base_path=relative_base_path, open_dataset=Dataset.open)

    def shallow_clone(
        self,
        target_uri,
        *,
        version: int | None = None,
        tag: str | None = None,
        manifest_naming: str = "v2",
        relative_base_path: bool = False,
    ) -> Dataset:
        """A new dataset at ``target_uri`` whose files stay here, referenced
        through a base path."""
        return shallow_clone(
            self,
            target_uri,
            version=version,
            tag=tag,
            manifest_naming=manifest_naming,
            relative_base_path=relative_base_path,
            open_dataset=Dataset.open,
        )
