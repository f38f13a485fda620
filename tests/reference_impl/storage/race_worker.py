"""What each writer process of the put-if-not-exists race runs (kept apart
from the tests so that a forkserver child imports only this and the storage
package)."""

from __future__ import annotations

from reference_impl.errors import CommitConflictError
from reference_impl.storage import S3Storage

RACED_KEY = "_versions/1.manifest"


def put_at_once(options: dict[str, str], bucket: str, start, results, writer: int) -> None:
    """Wait for every writer at ``start`` (a barrier), then create
    ``RACED_KEY`` under ``race/``; puts ("won" | "lost" | "error", detail) on
    ``results``."""
    try:
        storage = S3Storage(bucket, "race", storage_options=options)
        start.wait(timeout=60)
        storage.put_if_not_exists(RACED_KEY, f"writer {writer}".encode())
        results.put(("won", writer))
    except CommitConflictError as exc:
        results.put(("lost", str(exc)))
    except Exception as exc:  # reported to the parent, which fails the test
        results.put(("error", f"{type(exc).__name__}: {exc}"))
