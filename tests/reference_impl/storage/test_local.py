"""Confinement of a local dataset root (layout: dataset directory): every
path is checked, and a symlink below the root leading outside it is refused
wherever it sits on the path, while one leading elsewhere inside is followed."""

from __future__ import annotations

import os

import pytest

from reference_impl.errors import PathEscapeError
from reference_impl.storage.local import LocalStorage


@pytest.fixture
def layout(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "_versions").mkdir(parents=True)
    (root / "data").mkdir()
    outside.mkdir()
    (outside / "secret.lance").write_bytes(b"secret")
    (root / "data" / "a.lance").write_bytes(b"inside")
    return root, outside


def test_a_symlinked_file_leading_outside_is_refused(layout):
    root, outside = layout
    os.symlink(outside / "secret.lance", root / "data" / "b.lance")
    storage = LocalStorage(root)
    with pytest.raises(PathEscapeError):
        storage.read("data/b.lance")
    assert not storage.exists("data/b.lance")


def test_a_symlinked_directory_leading_outside_is_refused(layout):
    root, outside = layout
    os.symlink(outside, root / "escape")
    storage = LocalStorage(root)
    with pytest.raises(PathEscapeError):
        storage.read("escape/secret.lance")
    with pytest.raises(PathEscapeError):
        storage.path("escape/not-there-yet.lance")


def test_a_symlink_leading_elsewhere_inside_is_followed(layout):
    root, _ = layout
    os.symlink(root / "data", root / "alias")
    storage = LocalStorage(root)
    assert storage.read("alias/a.lance") == b"inside"


def test_a_symlink_replacing_a_directory_after_opening_is_refused(layout):
    """Nothing is cached per path: a directory swapped for a symlink leading
    out after the storage was opened is refused on the next access."""
    root, outside = layout
    storage = LocalStorage(root)
    assert storage.read("data/a.lance") == b"inside"
    os.rename(root / "data", root / "data.old")
    os.symlink(outside, root / "data")
    with pytest.raises(PathEscapeError):
        storage.read("data/secret.lance")


def test_paths_not_written_yet_are_inside(layout):
    root, _ = layout
    storage = LocalStorage(root)
    assert storage.path("_versions/new/deeper/1.manifest") == root / "_versions/new/deeper/1.manifest"
