"""Datasets on an object store speaking the S3 API (layout: dataset directory,
base paths; the commit protocol's put-if-not-exists).

:class:`S3Storage` keeps every promise of the local directory store
(:mod:`reference_impl.storage.base`) with S3 requests made through boto3:

* a key is the root prefix plus a normalised relative path (empty and ``.``
  segments dropped); ``..`` segments, absolute paths and NUL bytes are
  refused with :class:`PathEscapeError` before any request, so nothing
  outside the root prefix is ever read or written;
* a read asks for the object's size with ``HeadObject``, checks the range
  against it, then fetches only that range (``GetObject`` with ``Range``,
  pinned to the same object by ``If-Match`` on its ETag) and reads at most
  the bytes asked for: a hostile length never allocates more than the
  object holds;
* :meth:`S3Storage.put_if_not_exists` is ``PutObject`` with
  ``If-None-Match: *``; the store's refusal (412, or 409 when another
  conditional write of the key is in flight) is the same
  :class:`CommitConflictError` a local name already taken gives;
* listings page through ``ListObjectsV2`` with a ``/`` delimiter;
* a refusal or failure of the store or the network is an
  :class:`UnreadablePathError` naming ``s3://bucket/key``.

The options are pylance's storage option keys (:data:`S3_OPTION_KEYS`), so
a dataset is named the same way for both implementations.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn
from urllib.parse import urlsplit

from botocore.exceptions import BotoCoreError, ClientError

from ..errors import (
    CommitConflictError,
    CorruptFileError,
    InvalidOperationError,
    LanceFormatError,
    PathEscapeError,
    UnreadablePathError,
)
from .base import Storage

#: The storage option keys understood here, as pylance spells them (the
#: DynamoDB endpoint is for the external manifest store, which shares them).
S3_OPTION_KEYS = frozenset(
    {
        "aws_endpoint",
        "aws_region",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "allow_http",
        "dynamodb_endpoint",
        "virtual_hosted_style_request",
    }
)
#: Other spellings pylance accepts for the same options.
_ALIASES = {
    "endpoint": "aws_endpoint",
    "aws_endpoint_url": "aws_endpoint",
    "endpoint_url": "aws_endpoint",
    "region": "aws_region",
    "access_key_id": "aws_access_key_id",
    "secret_access_key": "aws_secret_access_key",
    "session_token": "aws_session_token",
    "token": "aws_session_token",
    "aws_virtual_hosted_style_request": "virtual_hosted_style_request",
}
_TRUE = {"true", "1", "yes", "on"}
#: S3 bucket naming: 3 to 63 lower-case letters, digits, dots and hyphens.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
#: Keys one ListObjectsV2 page returns at most (the API's own maximum).
_PAGE = 1000


@dataclass(frozen=True)
class S3Options:
    """Storage options, checked and with aliases resolved."""

    endpoint: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None
    allow_http: bool = False
    virtual_hosted_style: bool = False

    @classmethod
    def parse(cls, options: Mapping[str, str] | None) -> S3Options:
        """Options from pylance-style keys; an unknown key is refused (a
        misspelt endpoint silently ignored would send requests elsewhere)."""
        values: dict[str, str] = {}
        for raw_key, value in (options or {}).items():
            key = _ALIASES.get(raw_key.lower(), raw_key.lower())
            if key not in S3_OPTION_KEYS:
                known = ", ".join(sorted(S3_OPTION_KEYS))
                raise InvalidOperationError(f"unknown storage option {raw_key!r} (known: {known})")
            values[key] = str(value)
        parsed = cls(
            endpoint=values.get("aws_endpoint"),
            region=values.get("aws_region"),
            access_key_id=values.get("aws_access_key_id"),
            secret_access_key=values.get("aws_secret_access_key"),
            session_token=values.get("aws_session_token"),
            allow_http=values.get("allow_http", "").lower() in _TRUE,
            virtual_hosted_style=values.get("virtual_hosted_style_request", "").lower() in _TRUE,
        )
        if parsed.endpoint is not None and parsed.endpoint.lower().startswith("http://") and not parsed.allow_http:
            # pylance refuses plain HTTP unless asked for; so does the reference.
            raise InvalidOperationError(f"the endpoint {parsed.endpoint} is plain HTTP: set allow_http=true to use it")
        return parsed


_clients: dict[tuple[int, S3Options], Any] = {}
_clients_lock = threading.Lock()


def s3_client(options: S3Options) -> Any:
    """A boto3 S3 client for ``options``, shared within one process (clients
    are thread-safe; a forked child builds its own, as connections must not
    be shared across processes)."""
    key = (os.getpid(), options)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            # Lazy: boto3 takes most of a second to import, and every reader of a
            # local dataset (a worker process starting, say) imports this module.
            import boto3
            from botocore.config import Config  # (comes with boto3)

            config = Config(
                connect_timeout=10,
                read_timeout=60,
                retries={"max_attempts": 3, "mode": "standard"},
                # Readers that fetch many small objects at once (the validator's
                # footer reads: up to 32 threads) each keep a connection.
                max_pool_connections=64,
                s3={"addressing_style": "virtual" if options.virtual_hosted_style else "path"},
                # The requests are built here, always well-formed: checking each
                # one's parameters again costs client time on every request.
                parameter_validation=False,
                # No checksum computed or checked unless the operation requires
                # one (pylance's object store checks none on a read either).
                request_checksum_calculation="when_required",
                response_checksum_validation="when_required",
            )
            client = boto3.session.Session().client(
                "s3",
                endpoint_url=options.endpoint,
                region_name=options.region or os.environ.get("AWS_REGION") or "us-east-1",
                aws_access_key_id=options.access_key_id,
                aws_secret_access_key=options.secret_access_key,
                aws_session_token=options.session_token,
                config=config,
            )
            _clients[key] = client
        return client


def _total_size(content_range: Any, content_length: Any, received: int) -> int | None:
    """The object's size from a ranged GET's ``Content-Range``
    (``bytes FIRST-LAST/SIZE``); without one, the whole object came back and
    its size is the length received. None when the answer says neither."""
    if isinstance(content_range, str):
        _, slash, total = content_range.rpartition("/")
        return int(total) if slash and total.isdigit() else None
    if isinstance(content_length, int) and content_length == received:
        return received
    return None


def split_s3_uri(uri: str) -> tuple[str, str]:
    """``(bucket, key prefix)`` of ``s3://bucket/prefix`` (or ``s3+ddb://``;
    a query string is not part of the location). Raises ``ValueError``
    saying what is wrong with the URI."""
    parts = urlsplit(uri)
    if parts.scheme.lower() not in ("s3", "s3+ddb"):
        raise ValueError(f"{uri!r} is not an s3:// URI")
    bucket = parts.netloc
    if not _BUCKET.match(bucket):
        raise ValueError(f"{bucket!r} is not a valid bucket name (3 to 63 lower-case letters, digits, '.' or '-')")
    return bucket, _normalise(parts.path, uri)


def _normalise(path: str, where: str) -> str:
    """``path`` as a key below a prefix: empty and ``.`` segments dropped;
    ``..`` and NUL bytes refused (a key must never climb out of its root)."""
    if "\x00" in path:
        raise PathEscapeError(where, f"path contains a NUL byte: {path!r}")
    segments = [s for s in path.split("/") if s not in ("", ".")]
    if ".." in segments:
        raise PathEscapeError(where, f"path {path!r} leads outside the root")
    return "/".join(segments)


def _reopened(bucket: str, prefix: str, storage_options: dict, writable: bool) -> S3Storage:
    return S3Storage(bucket, prefix, storage_options=storage_options, writable=writable)


class S3Storage(Storage):
    """The objects under ``s3://bucket/prefix``, through the S3 API. Pickled
    (to another process: a Spark executor) as its location and options: the
    other process makes its own client."""

    root: str
    #: Keys asked for per ListObjectsV2 request (the API's maximum).
    list_page_size = _PAGE

    def __init__(
        self,
        bucket: str,
        prefix: str,
        *,
        storage_options: Mapping[str, str] | None = None,
        writable: bool = True,
    ):
        self.bucket = bucket
        self.prefix = _normalise(prefix, f"s3://{bucket}/{prefix}")
        self.storage_options = dict(storage_options or {})
        self.options = S3Options.parse(self.storage_options)
        self.writable = writable
        self.root = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self._client = s3_client(self.options)

    def __reduce__(self):
        return _reopened, (self.bucket, self.prefix, dict(self.storage_options), self.writable)

    @classmethod
    def at(cls, uri: str, storage_options: Mapping[str, str] | None = None, *, writable: bool = True) -> S3Storage:
        """Storage at an ``s3://`` URI recorded in a dataset (a base path):
        a malformed one is a :class:`LanceFormatError` naming it."""
        try:
            bucket, prefix = split_s3_uri(uri)
        except ValueError as exc:
            raise LanceFormatError(uri, str(exc)) from None
        return cls(bucket, prefix, storage_options=storage_options, writable=writable)

    def __repr__(self) -> str:
        return f"S3Storage({self.root!r})"

    # -- paths -------------------------------------------------------------

    def key(self, relpath: str) -> str:
        """The object key of ``relpath``, refusing anything outside the root."""
        if not isinstance(relpath, str) or relpath == "":
            raise PathEscapeError(self.root, f"invalid relative path {relpath!r}")
        if "\x00" in relpath:
            raise PathEscapeError(self.root, f"path contains a NUL byte: {relpath!r}")
        if relpath.startswith(("/", "\\")) or "://" in relpath or ".." in relpath.split("/"):
            # The local store's words for the same refusal.
            raise PathEscapeError(relpath, f"path leads outside {self.root}")
        relative = _normalise(relpath, self.join(relpath))
        if not relative:
            raise PathEscapeError(self.root, f"invalid relative path {relpath!r}")
        return f"{self.prefix}/{relative}" if self.prefix else relative

    def _uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def join(self, relpath: str) -> str:
        return f"{self.root}/{relpath}"

    def path(self, relpath: str) -> str:
        return self._uri(self.key(relpath))

    def for_base(self, base_path: str) -> Storage:
        """A declared base: an ``s3://`` URI (opened with these options), or a
        relative path under this root's bucket. A local path is refused: a
        dataset on an object store does not reach into the reader's disk."""
        if base_path.lower().startswith(("s3://", "s3+ddb://")):
            return S3Storage.at(base_path, self.storage_options, writable=False)
        if base_path.startswith(("/", "\\")) or "://" in base_path:
            raise PathEscapeError(base_path, f"a base path of {self.root} must be an s3:// URI or relative")
        joined = posixpath.normpath(posixpath.join("/", self.prefix, base_path))
        return S3Storage(self.bucket, joined, storage_options=self.storage_options, writable=False)

    def subtree(self, relpath: str, *, writable: bool | None = None) -> S3Storage:
        return S3Storage(
            self.bucket,
            self.key(relpath),
            storage_options=self.storage_options,
            writable=self.writable if writable is None else writable,
        )

    def above(self, parts: Sequence[str]) -> S3Storage | None:
        segments = self.prefix.split("/") if self.prefix else []
        if not parts or len(parts) > len(segments) or segments[-len(parts) :] != list(parts):
            return None
        return S3Storage(
            self.bucket,
            "/".join(segments[: -len(parts)]),
            storage_options=self.storage_options,
            writable=self.writable,
        )

    # -- requests ---------------------------------------------------------------

    def _fail(self, key: str, action: str, exc: Exception) -> NoReturn:
        """Raise the typed error for a failed request (never a botocore one)."""
        uri = self._uri(key)
        if isinstance(exc, ClientError):
            error = exc.response.get("Error", {})
            code = str(error.get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in ("AccessDenied", "403") or status == 403:
                raise UnreadablePathError(uri, f"cannot {action}: permission denied") from None
            if code == "NoSuchBucket":
                raise UnreadablePathError(uri, f"cannot {action}: the bucket {self.bucket} does not exist") from None
            raise UnreadablePathError(uri, f"cannot {action}: {code or status} {error.get('Message', '')}".rstrip())
        raise UnreadablePathError(uri, f"cannot {action}: {exc}") from None

    @staticmethod
    def _not_found(exc: ClientError) -> bool:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        return code in ("404", "NoSuchKey", "NotFound")

    def _head(self, key: str) -> dict[str, Any] | None:
        """The object's metadata; None when there is no such object."""
        try:
            return self._client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if self._not_found(exc):
                return None
            self._fail(key, "examine", exc)
        except BotoCoreError as exc:
            self._fail(key, "examine", exc)

    def _pages(self, prefix: str, *, delimiter: str | None = "/", max_keys: int | None = None):
        """The ListObjectsV2 pages under ``prefix``, one request each."""
        arguments: dict[str, Any] = {
            "Bucket": self.bucket,
            "Prefix": prefix,
            "MaxKeys": max_keys or self.list_page_size,
        }
        if delimiter:
            arguments["Delimiter"] = delimiter
        while True:
            try:
                page = self._client.list_objects_v2(**arguments)
            except (ClientError, BotoCoreError) as exc:
                self._fail(prefix, "list", exc)
            yield page
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return
            arguments["ContinuationToken"] = token

    # -- reads ----------------------------------------------------------------

    def exists(self, relpath: str) -> bool:
        try:
            key = self.key(relpath)
        except PathEscapeError:
            return False
        return self._head(key) is not None

    def has_entry(self, relpath: str) -> bool:
        return self.exists(relpath) or self.is_dir(relpath)

    def is_dir(self, relpath: str) -> bool:
        try:
            key = self.key(relpath)
        except PathEscapeError:
            return False
        return self._any_under(key + "/")

    def root_is_dir(self) -> bool:
        """Whether any object lies under the root prefix."""
        return self._any_under(f"{self.prefix}/" if self.prefix else "")

    def _any_under(self, prefix: str) -> bool:
        page = next(self._pages(prefix, delimiter=None, max_keys=1))
        return bool(page.get("KeyCount") or page.get("Contents"))

    def size(self, relpath: str) -> int:
        key = self.key(relpath)
        return self._size(key)[0]

    def _size(self, key: str) -> tuple[int, str | None]:
        head = self._head(key)
        if head is None:
            raise LanceFormatError(self._uri(key), "file does not exist")
        size = head.get("ContentLength")
        if not isinstance(size, int) or size < 0:
            raise UnreadablePathError(self._uri(key), f"the store reports no usable size ({size!r})")
        return size, head.get("ETag")

    def read(self, relpath: str, offset: int = 0, length: int | None = None) -> bytes:
        key = self.key(relpath)
        uri = self._uri(key)
        size, etag = self._size(key)
        if length is None:
            length = size - offset
        if offset < 0 or length < 0 or offset + length > size:
            raise CorruptFileError(uri, f"byte range [{offset}, {offset + length}) is outside the file ({size} bytes)")
        if length == 0:
            return b""
        arguments: dict[str, Any] = {
            "Bucket": self.bucket,
            "Key": key,
            "Range": f"bytes={offset}-{offset + length - 1}",
        }
        if etag:
            arguments["IfMatch"] = etag
        try:
            response = self._client.get_object(**arguments)
            body = response["Body"]
            try:
                # Never more than asked for (and one byte to notice excess),
                # whatever the response claims.
                data = body.read(length + 1)
            finally:
                body.close()
        except ClientError as exc:
            if exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 412 or self._not_found(exc):
                raise CorruptFileError(uri, "the object changed while it was read") from None
            self._fail(key, "read", exc)
        except BotoCoreError as exc:
            self._fail(key, "read", exc)
        if len(data) != length:
            raise CorruptFileError(uri, f"short read: wanted {length} bytes at {offset}, got {len(data)}")
        return data

    def read_tail(self, relpath: str, length: int) -> tuple[int, bytes]:
        """One GET of a suffix range (``bytes=-length``): the object's last
        bytes, its size from the response's Content-Range. An empty object
        (no suffix range to satisfy) or a response that does not say the size
        falls back to :meth:`size` and :meth:`read`."""
        key = self.key(relpath)
        uri = self._uri(key)
        if length <= 0:
            return super().read_tail(relpath, length)
        try:
            response = self._client.get_object(Bucket=self.bucket, Key=key, Range=f"bytes=-{length}")
            body = response["Body"]
            try:
                data = body.read(length + 1)  # never more than asked for, and one byte to notice excess
            finally:
                body.close()
        except ClientError as exc:
            if self._not_found(exc):
                raise LanceFormatError(uri, "file does not exist") from None
            if exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 416:
                return super().read_tail(relpath, length)
            self._fail(key, "read", exc)
        except BotoCoreError as exc:
            self._fail(key, "read", exc)
        size = _total_size(response.get("ContentRange"), response.get("ContentLength"), len(data))
        if size is None:
            return super().read_tail(relpath, length)
        if len(data) != min(length, size):
            raise CorruptFileError(uri, f"short read: wanted the last {min(length, size)} bytes, got {len(data)}")
        return size, data

    def list_dir(self, relpath: str) -> list[str]:
        try:
            key = self.key(relpath)
        except PathEscapeError:
            return []
        prefix = key + "/"
        names: set[str] = set()
        for page in self._pages(prefix):
            for common in page.get("CommonPrefixes", ()):
                names.add(common["Prefix"][len(prefix) :].rstrip("/"))
            for item in page.get("Contents", ()):
                names.add(item["Key"][len(prefix) :])
        names.discard("")  # a "directory" placeholder object, not an entry
        return sorted(names)

    # -- writes ---------------------------------------------------------------

    def _writable_key(self, relpath: str) -> str:
        if not self.writable:
            raise PathEscapeError(relpath, f"{self.root} is a read-only base path")
        return self.key(relpath)

    def put_if_not_exists(
        self, relpath: str, data: bytes | Sequence[bytes | memoryview], *, durable: bool = True
    ) -> None:
        # An acknowledged PutObject is durable whatever ``durable`` says.
        key = self._writable_key(relpath)
        body = bytes(data) if isinstance(data, (bytes, bytearray, memoryview)) else b"".join(data)
        try:
            self._client.put_object(Bucket=self.bucket, Key=key, Body=body, IfNoneMatch="*")
        except ClientError as exc:
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            code = exc.response.get("Error", {}).get("Code")
            if status in (409, 412) or code in ("PreconditionFailed", "ConditionalRequestConflict"):
                raise CommitConflictError(self._uri(key), "already exists") from None
            self._fail(key, "write", exc)
        except BotoCoreError as exc:
            self._fail(key, "write", exc)

    def put(self, relpath: str, data: bytes) -> None:
        key = self._writable_key(relpath)
        try:
            self._client.put_object(Bucket=self.bucket, Key=key, Body=bytes(data))
        except (ClientError, BotoCoreError) as exc:
            self._fail(key, "write", exc)

    def delete(self, relpath: str) -> None:
        key = self._writable_key(relpath)
        try:
            self._client.delete_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError) as exc:
            self._fail(key, "delete", exc)
