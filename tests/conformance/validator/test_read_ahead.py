"""The read-ahead process (conformance.validator.read_ahead) hands over the
tails an in-process read gives, in the order asked, or nothing for a file it
could not read; it never hands over a wrong one, and it is stopped by its pid
however it is left. (That the validator's reports are the same with it is in
test_parallel_reads.py.)"""

from __future__ import annotations

import os
import signal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.validator.read_ahead import ReadAhead, TailReader

FLAGS = os.O_RDONLY | os.O_NONBLOCK


def _tail(path, tail_bytes: int) -> tuple[int, bytes]:
    """What reading the file in this process gives."""
    data = path.read_bytes()
    return len(data), data[-tail_bytes:] if tail_bytes else b""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.one_of(st.none(), st.integers(0, 100)), min_size=1, max_size=30),
    tail_bytes=st.integers(1, 40),
)
def test_tails_are_those_read_in_process_in_order(tmp_path_factory, sizes, tail_bytes):
    """Property: for files of any size around ``tail_bytes`` (smaller,
    equal, larger, in any order, which switches the child between its
    whole-file read and its seek to the end), and for paths that do not
    exist (None), the reader gives each file's size and last
    ``min(size, tail_bytes)`` bytes exactly as read here, and None for the
    missing ones."""
    directory = tmp_path_factory.mktemp("files")
    paths = []
    for number, size in enumerate(sizes):
        path = directory / f"{number}.lance"
        if size is not None:
            path.write_bytes(bytes((number + offset) % 251 for offset in range(size)))
        paths.append(path)
    reader = TailReader.start([str(path) for path in paths], tail_bytes, FLAGS)
    assert reader is not None
    with reader:
        for path, size in zip(paths, sizes, strict=True):
            expected = None if size is None else _tail(path, tail_bytes)
            assert reader.next_tail(str(path)) == expected
    assert _gone(reader.pid)


def test_a_path_out_of_order_is_left_to_the_caller(tmp_path):
    files = []
    for name in ("a", "b"):
        files.append(tmp_path / name)
        files[-1].write_bytes(name.encode() * 10)
    reader = TailReader.start([str(files[1])], 64, FLAGS)
    assert reader is not None
    with reader:
        assert reader.next_tail(str(files[0])) is None, "a path the child was not given"
        assert reader.next_tail(str(files[1])) == (10, b"b" * 10), "asking for another path consumed nothing"
        assert reader.next_tail(str(files[1])) is None, "each path is handed over once"


def test_files_that_cannot_be_read_are_left_to_the_caller(tmp_path):
    """A named pipe (opened without blocking), a directory and a missing
    file come back as None; the files after them still arrive."""
    pipe, directory, missing, regular = (tmp_path / name for name in ("pipe", "dir", "missing", "regular"))
    os.mkfifo(pipe)
    directory.mkdir()
    regular.write_bytes(b"x" * 100)
    paths = [str(pipe), str(directory), str(missing), str(regular)]
    reader = TailReader.start(paths, 30, FLAGS)
    assert reader is not None
    with reader:
        assert [reader.next_tail(path) for path in paths] == [None, None, None, (100, b"x" * 30)]


def test_a_child_killed_midway_leaves_the_rest_to_the_caller(tmp_path):
    """The child is killed by its pid with most files unread (each file is
    a KiB and the pipe holds about one MiB): every file after that is None
    or exactly its tail, never a wrong one, and some are None."""
    paths = []
    for number in range(3000):
        path = tmp_path / f"{number}.lance"
        path.write_bytes(number.to_bytes(4, "little") * 256)
        paths.append(path)
    reader = TailReader.start([str(path) for path in paths], 2048, FLAGS)
    assert reader is not None
    with reader:
        assert reader.next_tail(str(paths[0])) == _tail(paths[0], 2048)
        os.kill(reader.pid, signal.SIGKILL)
        got = [reader.next_tail(str(path)) for path in paths[1:]]
    assert all(tail is None or tail == _tail(path, 2048) for path, tail in zip(paths[1:], got, strict=True))
    assert got[-1] is None
    assert _gone(reader.pid)


def test_closing_stops_a_running_child(tmp_path):
    paths = []
    for number in range(3000):
        path = tmp_path / f"{number}.lance"
        path.write_bytes(b"\0" * 1024)
        paths.append(str(path))
    reader = TailReader.start(paths, 1024, FLAGS)
    assert reader is not None
    reader.close()
    assert _gone(reader.pid)


def test_nothing_to_read_starts_nothing():
    assert TailReader.start([], 64, FLAGS) is None


@pytest.mark.parametrize("fields", [{"min_files": 0}, {"head": -1}])
def test_a_read_ahead_policy_is_checked(fields):
    with pytest.raises(ValueError, match="read-ahead"):
        ReadAhead(**fields)
