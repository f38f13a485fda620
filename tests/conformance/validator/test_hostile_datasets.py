"""Whole datasets damaged the way a disk, a careless tool or an attacker
damages them: ``validate`` and ``describe`` still finish with a report or a
clean error, and read nothing outside the dataset.

The checks run in a probe process without root's permission bypass
(tests/hostile_probe.py), so that unreadable files and directories are
unreadable there even when the suite runs as root, as CI does.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from conformance.mutations import copy_dataset
from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage
from tests.hostile_probe import Probe
from tests.hypothesis_budget import examples

#: What a corruption does to one entry of the dataset (file or directory).
KINDS = (
    "truncate",
    "garbage",
    "flip-bytes",
    "delete",
    "named-pipe",
    "socket",
    "symlink-outside",
    "swap-file-and-directory",
    "deep-json",
    "huge-version-copy",
    "no-permission",
)

#: Manifest names for versions no dataset reaches: the largest V2 version
#: (2^64 - 1) and its neighbour, large V1 versions, and a V1 number past u64.
HUGE_MANIFEST_NAMES = (
    "00000000000000000000.manifest",
    "00000000000000000001.manifest",
    "100000000.manifest",
    "18446744073709551615.manifest",
    "99999999999999999999.manifest",
)


@pytest.fixture(scope="module")
def probe():
    running = Probe()
    yield running
    running.close()


def _entries(root: Path) -> list[str]:
    """Every entry under ``root``, relative to it, sorted (symlinks not followed)."""
    found = []
    for directory, subdirectories, files in os.walk(root):
        found.extend(str((Path(directory) / name).relative_to(root)) for name in subdirectories + files)
    return sorted(found)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _bind_socket(path: Path) -> None:
    """Leave a Unix socket file at ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(os.fsencode(path))


def _copy_entry(source: Path, target: Path) -> None:
    """Copy a file, directory, symlink or named pipe as it is."""
    if source.is_symlink():
        target.symlink_to(os.readlink(source))
    elif source.is_dir():
        target.mkdir()
        for child in source.iterdir():
            _copy_entry(child, target / child.name)
    elif stat.S_ISFIFO(source.stat().st_mode):
        os.mkfifo(target)
    elif stat.S_ISSOCK(source.stat().st_mode):
        _bind_socket(target)
    else:
        shutil.copyfile(source, target)


def _deep_json(depth: int, kind: str) -> bytes:
    if kind == "array":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


def _corrupt(data: st.DataObject, root: Path, outside: Path, chmods: list[tuple[Path, int]]) -> str:
    """Apply one drawn corruption to one drawn entry; says what it did.
    Permission changes are only recorded in ``chmods`` (applied last, so
    that later corruptions can still write)."""
    entries = _entries(root)
    if not entries:
        return "nothing left to corrupt"
    kind = data.draw(st.sampled_from(KINDS), label="kind")
    relpath = data.draw(st.sampled_from(entries), label="entry")
    target = root / relpath
    is_file = target.is_file() and not target.is_symlink()
    if kind in ("truncate", "garbage", "flip-bytes") and is_file:
        content = bytearray(target.read_bytes())
        if kind == "truncate":
            content = content[: data.draw(st.integers(0, max(0, len(content) - 1)), label="keep")]
        elif kind == "garbage":
            content = bytearray(data.draw(st.binary(max_size=64), label="garbage"))
        elif content:
            for _ in range(data.draw(st.integers(1, 4), label="flips")):
                at = data.draw(st.integers(0, len(content) - 1), label="at")
                content[at] ^= data.draw(st.integers(1, 255), label="mask")
        target.write_bytes(bytes(content))
    elif kind == "delete":
        _remove(target)
    elif kind == "named-pipe":
        _remove(target)
        os.mkfifo(target)
    elif kind == "socket":
        if len(os.fsencode(target)) >= 100:  # AF_UNIX addresses are short
            return f"socket: the path of {relpath} is too long to bind"
        _remove(target)
        _bind_socket(target)
    elif kind == "symlink-outside":
        # The link leads to a faithful copy: reading through it would go
        # unnoticed by any finding, so the probe watches the outside directory.
        copy = outside / f"copy-{len(list(outside.iterdir()))}"
        _copy_entry(target, copy)
        _remove(target)
        target.symlink_to(copy)
    elif kind == "swap-file-and-directory":
        was_dir = target.is_dir()
        _remove(target)
        if was_dir:
            target.write_bytes(b"not a directory")
        else:
            target.mkdir()
    elif kind == "deep-json":
        # A JSON file when one is left (refs, the version hint), else any file.
        regular = [e for e in entries if (root / e).is_file() and not (root / e).is_symlink()]
        if not regular:
            return "deep-json: no regular file left"
        json_files = [e for e in regular if e.endswith(".json")]
        relpath = data.draw(st.sampled_from(json_files or regular), label="file")
        depth = data.draw(st.sampled_from([100, 1000, 100_000]), label="depth")
        shape = data.draw(st.sampled_from(["array", "object"]), label="shape")
        (root / relpath).write_bytes(_deep_json(depth, shape))
    elif kind == "huge-version-copy":
        manifests = [root / e for e in entries if e.endswith(".manifest") and (root / e).is_file()]
        if not manifests:
            return "huge-version-copy: no manifest left"
        source = data.draw(st.sampled_from(manifests), label="manifest")
        name = data.draw(st.sampled_from(HUGE_MANIFEST_NAMES), label="name")
        if source.name == name:
            return f"huge-version-copy: {name} is there already"
        shutil.copy(source, source.parent / name)
        relpath = f"{source.relative_to(root)} -> {name}"
    elif kind == "no-permission":
        mode = data.draw(st.sampled_from([0o000, 0o200, 0o100, 0o400]), label="mode")
        chmods.append((target, mode))
        return f"chmod {mode:03o} {relpath}"
    else:
        return f"{kind} does not apply to {relpath}"
    return f"{kind} {relpath}"


def _restore_permissions(root: Path) -> None:
    """Make everything under ``root`` removable again (for an ordinary user)."""
    for directory, subdirectories, _ in os.walk(root):
        for name in subdirectories:
            path = Path(directory) / name
            if not path.is_symlink():
                path.chmod(stat.S_IRWXU)
    root.chmod(stat.S_IRWXU)


@settings(max_examples=examples(0.5), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_damaged_datasets_get_a_report_or_a_clean_error(base_datasets, probe, tmp_path_factory, data):
    """Property: for any valid base dataset and any one to three corruptions
    of its files and directories (truncation, garbage, flipped bytes,
    deletion, a named pipe or a socket, a symlink to a copy outside the root, a file
    swapped with a directory, JSON nested deeply, a manifest copied under a
    huge version's name, permissions taken away), every ``validate`` format
    over all versions prints its report, ``describe`` of every version prints
    a valid document or an error naming a path, nothing raises, hangs or
    fails inside a rule, and no file outside the dataset is opened."""
    name = data.draw(st.sampled_from(sorted(base_datasets)), label="base")
    workdir = tmp_path_factory.mktemp("hostile")
    root = copy_dataset(base_datasets[name], workdir / "ds")
    outside = workdir / "outside"
    outside.mkdir()
    versions = sorted(list_versions(LocalStorage(root)).manifests())
    chmods: list[tuple[Path, int]] = []
    try:
        for _ in range(data.draw(st.integers(1, 3), label="corruptions")):
            note(_corrupt(data, root, outside, chmods))
        # Deepest first: an ordinary user cannot reach into a directory it
        # has already locked.
        for path, mode in sorted(chmods, key=lambda pair: len(pair[0].parts), reverse=True):
            if path.exists() and not path.is_symlink():
                path.chmod(mode)
        problems = probe.check(root, versions, outside)
    finally:
        _restore_permissions(root)
    assert not problems, problems
