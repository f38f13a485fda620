"""How a user names a dataset: a local path, ``file://``, ``s3://bucket/path``
or ``s3+ddb://bucket/path?ddbTableName=T``, as pylance takes them, with the
same storage option keys (:data:`~reference_impl.storage.object_store.S3_OPTION_KEYS`).

``s3+ddb`` names a dataset on S3 whose commits go through an external
manifest store in DynamoDB (table format: external manifest store); the
storage of its files is the same as for ``s3://``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from ..errors import InvalidOperationError, LanceFormatError
from .base import Storage
from .local import LocalStorage, local_path
from .object_store import S3Storage, split_s3_uri

#: The query parameter of an ``s3+ddb`` URI naming the DynamoDB table (pylance's).
DDB_TABLE_PARAMETER = "ddbTableName"


@dataclass(frozen=True)
class DatasetUri:
    """What a user typed to name a dataset, parsed."""

    #: ``"file"``, ``"s3"`` or ``"s3+ddb"``.
    scheme: str
    #: The bucket of an object store URI; None for a local path.
    bucket: str | None
    #: The key prefix in the bucket (no leading or trailing ``/``), or the local path.
    path: str
    #: The DynamoDB table of an ``s3+ddb`` URI (``?ddbTableName=T``).
    ddb_table_name: str | None = None

    @property
    def is_object_store(self) -> bool:
        return self.bucket is not None

    def __str__(self) -> str:
        if self.bucket is None:
            return self.path
        location = f"{self.scheme}://{self.bucket}/{self.path}" if self.path else f"{self.scheme}://{self.bucket}"
        if self.ddb_table_name is not None:
            location += f"?{DDB_TABLE_PARAMETER}={self.ddb_table_name}"
        return location


def absolute_uri(uri: str | os.PathLike) -> str:
    """``uri`` as another process with another working directory opens it:
    a URI as given, a local path made absolute."""
    text = os.fspath(uri)
    return text if "://" in text else os.path.abspath(text)


def parse_dataset_uri(uri: str | os.PathLike | DatasetUri) -> DatasetUri:
    """Parse ``uri``; a malformed one raises
    :class:`~reference_impl.errors.InvalidOperationError` saying why."""
    if isinstance(uri, DatasetUri):
        return uri
    text = os.fspath(uri)
    scheme = urlsplit(text).scheme.lower() if "://" in text else ""
    if scheme in ("", "file"):
        try:
            return DatasetUri("file", None, str(local_path(text)))
        except ValueError as exc:
            raise InvalidOperationError(f"{text!r}: {exc}") from None
    if scheme not in ("s3", "s3+ddb"):
        raise InvalidOperationError(f"{text!r}: unsupported scheme {scheme!r} (local paths, file://, s3://, s3+ddb://)")
    try:
        bucket, prefix = split_s3_uri(text)
    except (ValueError, LanceFormatError) as exc:
        raise InvalidOperationError(f"{text!r}: {exc}") from None
    query = parse_qs(urlsplit(text).query)
    table = query.pop(DDB_TABLE_PARAMETER, None)
    if query:
        raise InvalidOperationError(f"{text!r}: unknown query parameters {sorted(query)}")
    if scheme == "s3" and table is not None:
        raise InvalidOperationError(f"{text!r}: {DDB_TABLE_PARAMETER} belongs to s3+ddb:// URIs")
    if scheme == "s3+ddb" and (table is None or len(table) != 1 or not table[0]):
        raise InvalidOperationError(f"{text!r}: an s3+ddb:// URI names its table once: ?{DDB_TABLE_PARAMETER}=TABLE")
    return DatasetUri(scheme, bucket, prefix, table[0] if table else None)


def open_storage(
    uri: DatasetUri, storage_options: Mapping[str, str] | None = None, *, writable: bool = True
) -> Storage:
    """The storage of the files of the dataset at ``uri`` (for ``s3+ddb``, its
    files on S3; the manifest store is the caller's)."""
    if uri.bucket is None:
        return LocalStorage(uri.path, writable=writable, storage_options=storage_options)
    return S3Storage(uri.bucket, uri.path, storage_options=storage_options, writable=writable)
