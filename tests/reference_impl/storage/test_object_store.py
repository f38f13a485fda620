"""S3Storage against a real moto server over HTTP: the promises every storage
keeps (confinement, bounded reads, put-if-not-exists, listing, typed errors)."""

from __future__ import annotations

import multiprocessing
import queue

import pytest

from reference_impl.errors import (
    CommitConflictError,
    CorruptFileError,
    InvalidOperationError,
    LanceFormatError,
    PathEscapeError,
    UnreadablePathError,
)
from reference_impl.storage import S3Storage, Storage
from tests.reference_impl.storage import race_worker
from tests.servers import requested_keys, s3_client

WRITERS = 16


@pytest.mark.requirements("commit.one-winner", "commit.use-conditional-create")
def test_racing_writers_exactly_one_wins(s3_options, s3_bucket):
    """16 processes put the same key with If-None-Match at once: exactly one
    succeeds, the others see the local store's "already exists" conflict,
    and the object holds the winner's bytes."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([race_worker.__name__])
    barrier = context.Barrier(WRITERS)
    results = context.Queue()
    writers = [
        context.Process(target=race_worker.put_at_once, args=(s3_options, s3_bucket, barrier, results, i))
        for i in range(WRITERS)
    ]
    for process in writers:
        process.start()
    outcomes = []
    try:
        for _ in writers:
            outcomes.append(results.get(timeout=120))
    except queue.Empty:
        pytest.fail(f"only {len(outcomes)} of {WRITERS} writers reported")
    finally:
        for process in writers:
            process.join(timeout=60)
            if process.is_alive():
                process.terminate()
                process.join()
    assert [o for o in outcomes if o[0] == "error"] == []
    winners = [o[1] for o in outcomes if o[0] == "won"]
    assert len(winners) == 1
    losses = [o[1] for o in outcomes if o[0] == "lost"]
    assert len(losses) == WRITERS - 1
    assert all(f"s3://{s3_bucket}/race/_versions/1.manifest: already exists" == m for m in losses)
    stored = S3Storage(s3_bucket, "race", storage_options=s3_options).read(race_worker.RACED_KEY)
    assert stored == f"writer {winners[0]}".encode()


def test_put_if_not_exists_never_replaces(s3_options, s3_bucket):
    storage = S3Storage(s3_bucket, "ds", storage_options=s3_options)
    storage.put_if_not_exists("a.bin", [b"first", memoryview(b" chunk")])
    with pytest.raises(CommitConflictError, match="already exists"):
        storage.put_if_not_exists("a.bin", b"second")
    assert storage.read("a.bin") == b"first chunk"


@pytest.mark.parametrize(
    "hostile",
    ["../secret", "a/../../secret", "/secret", "\\secret", "s3://other/secret", "a\x00b", "", ".", "./", "a/.."],
)
def test_hostile_keys_are_refused_before_any_request(s3_options, s3_bucket, hostile):
    """A relative path that leads out of the root prefix (or names nothing)
    raises PathEscapeError; the object beside the root is never read."""
    s3_client(s3_options).put_object(Bucket=s3_bucket, Key="secret", Body=b"outside the root")
    storage = S3Storage(s3_bucket, "ds", storage_options=s3_options)
    with pytest.raises(PathEscapeError):
        storage.read(hostile)
    with pytest.raises(PathEscapeError):
        storage.put(hostile, b"x")
    assert not storage.exists(hostile)
    assert storage.list_dir(hostile) == []


def test_keys_are_normalised(s3_options, s3_bucket):
    storage = S3Storage(s3_bucket, "/ds//", storage_options=s3_options)
    assert storage.root == f"s3://{s3_bucket}/ds"
    storage.put("a//b/./c.txt", b"x")
    assert storage.key("a//b/./c.txt") == "ds/a/b/c.txt"
    assert storage.read("a/b/c.txt") == b"x"
    assert storage.path("./a/b/c.txt") == f"s3://{s3_bucket}/ds/a/b/c.txt"


def test_reads_are_bounded_by_the_stored_size(s3_options, s3_bucket):
    """A range beyond the object (a hostile length field) is a
    CorruptFileError naming the object, decided from HEAD before any GET,
    so nothing near the declared size is allocated."""
    storage = S3Storage(s3_bucket, "ds", storage_options=s3_options)
    storage.put("f.bin", bytes(range(10)))
    assert storage.read("f.bin", 2, 3) == bytes([2, 3, 4])
    assert storage.read("f.bin", 10, 0) == b""
    assert storage.size("f.bin") == 10
    for offset, length in [(0, 1 << 62), (9, 2), (-1, 1), (0, -1), (11, None)]:
        with pytest.raises(CorruptFileError, match=rf"s3://{s3_bucket}/ds/f.bin: byte range"):
            storage.read("f.bin", offset, length)
    with pytest.raises(LanceFormatError, match="does not exist"):
        storage.read("missing.bin")


def test_a_tail_is_one_request_and_says_the_size(s3_options, s3_bucket, moto_server):
    """read_tail gives what size() and read() give (the whole object when it
    is shorter than asked, an empty one included) with one GET of a suffix
    range for a non-empty object; a missing object does not exist."""
    storage = S3Storage(s3_bucket, "ds", storage_options=s3_options)
    storage.put("f.bin", bytes(range(10)))
    storage.put("empty.bin", b"")
    assert storage.read_tail("f.bin", 4) == (10, bytes([6, 7, 8, 9]))
    assert storage.read_tail("f.bin", 64) == (10, bytes(range(10)))
    assert storage.read_tail("empty.bin", 8) == (0, b"")
    before = len(requested_keys(moto_server, s3_bucket))
    storage.read_tail("f.bin", 3)
    assert requested_keys(moto_server, s3_bucket)[before:] == ["ds/f.bin"]
    with pytest.raises(LanceFormatError, match="does not exist"):
        storage.read_tail("missing.bin", 4)


def test_listing_pages_through_the_prefix(s3_options, s3_bucket):
    """Listing a directory follows continuation tokens: with two keys a
    page, five entries (files and "subdirectories") take three pages."""
    storage = S3Storage(s3_bucket, "ds", storage_options=s3_options)
    for name in ["d/a", "d/b", "d/c", "d/sub/x", "d/sub2/y/z", "other/q"]:
        storage.put(name, b"")
    storage.list_page_size = 2
    assert storage.list_dir("d") == ["a", "b", "c", "sub", "sub2"]
    assert storage.is_dir("d/sub2") and not storage.is_dir("d/a")
    assert storage.exists("d/a") and not storage.exists("d/sub")
    assert storage.has_entry("d/sub") and not storage.has_entry("d/nothing")
    assert storage.list_dir("nothing") == []


def test_read_only_storage_refuses_writes(s3_options, s3_bucket):
    storage = S3Storage(s3_bucket, "ds", storage_options=s3_options, writable=False)
    for write in (lambda: storage.put("a", b"x"), lambda: storage.put_if_not_exists("a", b"x")):
        with pytest.raises(PathEscapeError, match="read-only"):
            write()
    assert not storage.exists("a")


def test_bases_and_subtrees_stay_confined(s3_options, s3_bucket):
    storage = S3Storage(s3_bucket, "ds", storage_options=s3_options)
    base = storage.for_base(f"s3://{s3_bucket}/elsewhere/base")
    assert isinstance(base, S3Storage) and base.root == f"s3://{s3_bucket}/elsewhere/base" and not base.writable
    with pytest.raises(PathEscapeError):
        base.read("../../ds/x")
    assert storage.for_base("sibling").root == f"s3://{s3_bucket}/ds/sibling"
    with pytest.raises(PathEscapeError, match="must be an s3:// URI or relative"):
        storage.for_base("/etc")
    with pytest.raises(LanceFormatError, match="not a valid bucket name"):
        storage.for_base("s3://x/ds")
    branch = storage.subtree("tree/b1")
    assert branch.root == f"s3://{s3_bucket}/ds/tree/b1"
    assert branch.above(["tree", "b1"]).root == storage.root
    assert branch.above(["tree", "b2"]) is None


def test_failures_are_typed_errors_naming_the_object(s3_options):
    """A missing bucket and an endpoint nobody listens on raise
    UnreadablePathError naming s3://bucket/key, never a botocore error."""
    missing = S3Storage("no-such-bucket", "ds", storage_options=s3_options)
    with pytest.raises(UnreadablePathError, match=r"s3://no-such-bucket/ds/f.bin: cannot write: the bucket"):
        missing.put("f.bin", b"x")
    with pytest.raises(UnreadablePathError, match=r"s3://no-such-bucket/ds/_versions/: cannot list"):
        missing.list_dir("_versions")
    dead = dict(s3_options, aws_endpoint="http://127.0.0.1:9")  # the discard port: nothing answers
    with pytest.raises(UnreadablePathError, match=r"s3://abc/ds/f.bin: cannot examine"):
        S3Storage("abc", "ds", storage_options=dead).read("f.bin")


def test_options_are_pylances_and_checked(s3_options):
    with pytest.raises(InvalidOperationError, match="unknown storage option 'aws_endpoit'"):
        S3Storage("abc", "ds", storage_options={"aws_endpoit": "http://x"})
    with pytest.raises(InvalidOperationError, match="allow_http=true"):
        S3Storage("abc", "ds", storage_options=dict(s3_options, allow_http="false"))
    storage = S3Storage("abc", "ds", storage_options=dict(s3_options, endpoint=s3_options["aws_endpoint"]))
    assert isinstance(storage, Storage)
