"""Files held in memory keep the storage interface's promises: only the names
held are readable, byte ranges are checked, and nothing can be written."""

from __future__ import annotations

import pytest

from reference_impl.errors import CorruptFileError, PathEscapeError
from reference_impl.storage import MemoryStorage, Storage


def _store() -> MemoryStorage:
    return MemoryStorage({"a/x.lance": b"0123456789", "b.bin": b""}, "index 'wal' details")


def test_reads_the_files_it_holds_and_lists_them_as_directories():
    store = _store()
    assert isinstance(store, Storage)
    assert store.read("a/x.lance", 2, 3) == b"234"
    assert store.read("a/x.lance") == b"0123456789"
    assert store.size("b.bin") == 0
    assert store.list_dir("") == ["a", "b.bin"] and store.list_dir("a") == ["x.lance"]
    assert store.is_dir("a") and not store.is_dir("a/x.lance")
    assert store.exists("a/x.lance") and not store.exists("a")


@pytest.mark.parametrize("name", ["c.lance", "../a/x.lance", "a"])
def test_a_name_it_does_not_hold_is_refused_with_the_label(name):
    with pytest.raises(PathEscapeError, match="index 'wal' details"):
        _store().read(name)


@pytest.mark.parametrize(("offset", "length"), [(8, 3), (-1, 2), (0, -1), (11, None)])
def test_a_range_outside_the_file_is_a_corrupt_file(offset, length):
    with pytest.raises(CorruptFileError, match="outside the 10 bytes"):
        _store().read("a/x.lance", offset, length)


def test_every_write_is_refused():
    store = _store()
    for write in (
        lambda: store.put("c", b"1"),
        lambda: store.put_if_not_exists("c", b"1"),
        lambda: store.delete("b.bin"),
    ):
        with pytest.raises(PathEscapeError, match="read only"):
            write()
    assert store.exists("b.bin") and not store.exists("c")
