"""The DynamoDB external manifest store, laid out as pylance lays out its own
(``s3+ddb://bucket/path?ddbTableName=T``), so that the reference and pylance
commit to one dataset through one table.

The table: hash key ``base_uri`` (S, the dataset's object key prefix without
the bucket), range key ``version`` (N); each item also carries ``path`` (S,
the manifest's object key), ``size`` (N, bytes) and ``committer`` (S, who
wrote the item). A commit is a conditional ``PutItem`` that fails when the key
exists; every read is strongly consistent; the latest version is a
descending query limited to one item. (Observed with pylance 14 against moto;
``rust/lance-table/src/io/commit/dynamodb.rs`` upstream.)

Options are pylance's storage option keys: ``aws_region``,
``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token`` and
``dynamodb_endpoint`` (a local server such as moto's; otherwise AWS's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import ManifestStoreError
from .protocol import StoreEntry

#: What this implementation records in the committer attribute (pylance writes "lancedb").
COMMITTER = "lance-conformance"

_CONDITION_FAILED = "ConditionalCheckFailedException"


class DynamoDBManifestStore:
    """An :class:`~reference_impl.commit.external_store.ExternalManifestStore`
    in the DynamoDB table ``table_name`` (which must exist, keyed as above)."""

    def __init__(self, table_name: str, options: Mapping[str, str] | None = None):
        if not table_name:
            raise ValueError("a DynamoDB manifest store needs a table name (ddbTableName)")
        self.table_name = table_name
        self._options = dict(options or {})
        self._client: Any = None

    def __repr__(self) -> str:
        return f"DynamoDBManifestStore({self.table_name!r})"

    @property
    def name(self) -> str:
        return f"dynamodb table {self.table_name}"

    def _dynamodb(self) -> Any:
        if self._client is None:
            # Lazy: only a DynamoDB store needs boto3, and it is slow to import.
            import boto3
            from botocore.config import Config  # (comes with boto3)

            options = self._options
            self._client = boto3.client(
                "dynamodb",
                endpoint_url=options.get("dynamodb_endpoint") or None,
                region_name=options.get("aws_region") or options.get("region") or "us-east-1",
                aws_access_key_id=options.get("aws_access_key_id"),
                aws_secret_access_key=options.get("aws_secret_access_key"),
                aws_session_token=options.get("aws_session_token"),
                config=Config(retries={"max_attempts": 5, "mode": "standard"}, connect_timeout=10, read_timeout=30),
            )
        return self._client

    def _call(self, operation: str, **request: Any) -> dict:
        # Lazy, as in _dynamodb (botocore comes with boto3).
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(self._dynamodb(), operation)(TableName=self.table_name, **request)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == _CONDITION_FAILED:
                raise _ConditionFailed() from None
            raise ManifestStoreError(self.name, f"{operation} failed: {exc}") from None
        except BotoCoreError as exc:
            raise ManifestStoreError(self.name, f"{operation} failed: {exc}") from None

    # -- the store's operations ----------------------------------------------------

    def _item(self, base_uri: str, version: int, path: str, size: int) -> dict:
        return {
            "base_uri": {"S": base_uri},
            "version": {"N": str(int(version))},
            "path": {"S": path},
            "size": {"N": str(int(size))},
            "committer": {"S": COMMITTER},
        }

    def put_if_not_exists(self, base_uri: str, version: int, path: str, size: int) -> bool:
        try:
            self._call(
                "put_item",
                Item=self._item(base_uri, version, path, size),
                ConditionExpression="attribute_not_exists(base_uri) AND attribute_not_exists(version)",
            )
        except _ConditionFailed:
            return False
        return True

    def put(self, base_uri: str, version: int, path: str, size: int) -> None:
        self._call("put_item", Item=self._item(base_uri, version, path, size))

    def get(self, base_uri: str, version: int) -> StoreEntry | None:
        response = self._call(
            "get_item",
            Key={"base_uri": {"S": base_uri}, "version": {"N": str(int(version))}},
            ConsistentRead=True,
        )
        item = response.get("Item")
        return self._entry(item) if item else None

    def latest(self, base_uri: str) -> StoreEntry | None:
        response = self._call(
            "query",
            KeyConditionExpression="base_uri = :base_uri",
            ExpressionAttributeValues={":base_uri": {"S": base_uri}},
            ScanIndexForward=False,
            Limit=1,
            ConsistentRead=True,
        )
        items = response.get("Items") or []
        return self._entry(items[0]) if items else None

    def _entry(self, item: Mapping[str, Mapping[str, str]]) -> StoreEntry:
        try:
            version = int(item["version"]["N"])
            path = item["path"]["S"]
            # pylance's items carry a size; an item without one reads as unknown (-1).
            size = int(item["size"]["N"]) if "size" in item else -1
        except (KeyError, TypeError, ValueError):
            raise ManifestStoreError(self.name, f"malformed item: {dict(item)!r}") from None
        if version < 0 or not isinstance(path, str):
            raise ManifestStoreError(self.name, f"malformed item: {dict(item)!r}")
        return StoreEntry(version, path, size)


class _ConditionFailed(Exception):
    """The conditional put found the key taken."""
