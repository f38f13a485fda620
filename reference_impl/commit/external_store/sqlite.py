"""The embedded external manifest store: one SQLite database file the user
names, shared by every process that commits to the datasets it records.

Only this implementation has it (pylance's external store is DynamoDB), so it
is used only when asked for: ``Dataset.create/open(..., manifest_store=
SqliteManifestStore(path))``, or ``--manifest-store sqlite:PATH`` on the
command line.

Put-if-not-exists is the primary key (base_uri, version): an ``INSERT`` that
finds the key taken fails, and exactly one of several processes inserting
the same key succeeds. The database runs in WAL mode (readers never wait for
the writer), every statement is its own short transaction, and a writer that
finds the database locked waits (the busy timeout) rather than failing, so
that several writer processes can share it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from ...errors import ManifestStoreError
from .protocol import StoreEntry

#: How long a statement waits for another process's write lock to go away.
BUSY_TIMEOUT_SECONDS = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS manifests (
    base_uri TEXT NOT NULL,
    version INTEGER NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    committer TEXT NOT NULL,
    PRIMARY KEY (base_uri, version)
) WITHOUT ROWID
"""

#: What this implementation records in the committer column (pylance writes "lancedb").
COMMITTER = "lance-conformance"


def _reopened(path: str, read_only: bool) -> SqliteManifestStore:
    return SqliteManifestStore(path, read_only=read_only)


class SqliteManifestStore:
    """An :class:`~reference_impl.commit.external_store.ExternalManifestStore`
    in the SQLite database at ``path`` (created on first use). A
    ``read_only`` store opens an existing database only and never writes
    to it (the validator's and ``describe``'s view)."""

    def __init__(self, path: str | os.PathLike, *, read_only: bool = False):
        self.path = Path(path).absolute()
        self.read_only = read_only
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"SqliteManifestStore({str(self.path)!r})"

    def __reduce__(self):
        # Pickled (to another process: a Spark executor) as its path: the
        # other process opens its own connections.
        return _reopened, (str(self.path), self.read_only)

    def _connection(self) -> sqlite3.Connection:
        # One connection per thread (and per process: a forked child opens its own).
        connection = getattr(self._local, "connection", None)
        if connection is not None and self._local.pid == os.getpid():
            return connection
        try:
            if self.read_only:
                connection = sqlite3.connect(
                    f"{self.path.as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None
                )
                connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
                connection.execute("SELECT 1 FROM manifests LIMIT 1")
            else:
                connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
                connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise ManifestStoreError(str(self.path), f"cannot open the SQLite manifest store: {exc}") from None
        self._local.connection = connection
        self._local.pid = os.getpid()
        return connection

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def _execute(self, sql: str, parameters: tuple) -> list[tuple]:
        try:
            return self._connection().execute(sql, parameters).fetchall()
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise ManifestStoreError(str(self.path), f"the SQLite manifest store failed: {exc}") from None

    # -- the store's operations ----------------------------------------------------

    def put_if_not_exists(self, base_uri: str, version: int, path: str, size: int) -> bool:
        try:
            self._execute(
                "INSERT INTO manifests (base_uri, version, path, size, committer) VALUES (?, ?, ?, ?, ?)",
                (base_uri, _checked(version, "version"), path, _checked(size, "size"), COMMITTER),
            )
        except sqlite3.IntegrityError:
            return False  # the primary key is taken: another writer holds the version
        return True

    def put(self, base_uri: str, version: int, path: str, size: int) -> None:
        self._execute(
            "INSERT INTO manifests (base_uri, version, path, size, committer) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (base_uri, version) DO UPDATE SET path = excluded.path, size = excluded.size, "
            "committer = excluded.committer",
            (base_uri, _checked(version, "version"), path, _checked(size, "size"), COMMITTER),
        )

    def get(self, base_uri: str, version: int) -> StoreEntry | None:
        rows = self._execute(
            "SELECT version, path, size FROM manifests WHERE base_uri = ? AND version = ?", (base_uri, version)
        )
        return self._entry(rows[0]) if rows else None

    def latest(self, base_uri: str) -> StoreEntry | None:
        rows = self._execute(
            "SELECT version, path, size FROM manifests WHERE base_uri = ? ORDER BY version DESC LIMIT 1", (base_uri,)
        )
        return self._entry(rows[0]) if rows else None

    def _entry(self, row: tuple) -> StoreEntry:
        version, path, size = row
        if not isinstance(version, int) or not isinstance(path, str) or not isinstance(size, int):
            raise ManifestStoreError(
                str(self.path), f"malformed row: version {version!r}, path {path!r}, size {size!r}"
            )
        return StoreEntry(version, path, size)


def _checked(value: int, what: str) -> int:
    # SQLite integers are signed 64-bit; versions and sizes are u64 in the format.
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
        raise ValueError(f"{what} {value!r} cannot be stored")
    return value
