"""The reader and ``describe`` on hostile files: special files where files
belong, JSON nested without end, manifests named for versions they do not
hold, unreadable paths, and errors that must name the file they concern.
Each ends promptly in one of the documented errors (reference_impl/errors.py)
naming the path, never in a hang or a traceback."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from conformance.cli import main
from reference_impl.dataset import Dataset
from reference_impl.errors import CorruptFileError, NamingSchemeError, UnreadablePathError
from reference_impl.json_file import decode_json, nesting_depth
from reference_impl.naming import LATEST_HINT, VERSIONS_DIR, list_versions, read_hint
from reference_impl.storage import LocalStorage
from tests.hostile_probe import deadline, without_permission_bypass

#: Seconds any one of these reads may take (they take milliseconds).
PROMPTLY = 10


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """Two versions with stable row ids, a deletion and a tag."""
    path = tmp_path_factory.mktemp("hostile-files") / "ds"
    table = pa.table({"id": pa.array(range(10), pa.int64())})
    dataset = Dataset.create(path, table, stable_row_ids=True)
    dataset = dataset.delete(pc.field("id") == 3)
    dataset.create_tag("stable", 1)
    return path


@pytest.fixture
def dataset(source, tmp_path) -> Path:
    copy = tmp_path / "ds"
    shutil.copytree(source, copy)
    return copy


def _latest_manifest(root: Path) -> Path:
    manifests = list_versions(LocalStorage(root)).manifests()
    return root / manifests[max(manifests)]


def _describe(*args: str) -> tuple[int, str, str]:
    """``lance-conformance describe`` in-process: an exception escaping it
    fails the test as the traceback a user would see."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), deadline(PROMPTLY):
        code = main(["describe", *args])
    return code, out.getvalue(), err.getvalue()


def _replace_with_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


# -- special files ---------------------------------------------------------------


def test_a_named_pipe_in_place_of_the_manifest_is_refused_without_opening_it(dataset):
    manifest = _latest_manifest(dataset)
    _replace_with_fifo(manifest)
    with deadline(PROMPTLY), pytest.raises(UnreadablePathError) as caught:
        Dataset.open(dataset)
    assert caught.value.path == str(manifest)
    assert "named pipe" in caught.value.problem


@pytest.mark.parametrize("which", ["data", "deletion", "transaction", "tag", "hint"])
def test_a_named_pipe_in_place_of_any_file_is_refused_promptly(dataset, which):
    opened = Dataset.open(dataset)
    fragment = opened.fragments[0]
    storage = LocalStorage(dataset)
    targets = {
        "data": f"data/{fragment.files[0].path}",
        "deletion": opened.deletion_file_location(fragment).relpath,
        "transaction": f"_transactions/{opened.manifest.transaction_file}",
        "tag": "_refs/tags/stable.json",
        "hint": f"{VERSIONS_DIR}/{LATEST_HINT}",
    }
    _replace_with_fifo(dataset / targets[which])
    with deadline(PROMPTLY):
        if which == "hint":
            assert read_hint(storage) is None  # a hint that cannot be read is no hint
            return
        with pytest.raises(UnreadablePathError) as caught:
            storage.read(targets[which])
    assert caught.value.path == str(dataset / targets[which])
    assert str(dataset / targets[which]) in str(caught.value)


def test_a_socket_in_place_of_a_tag_is_refused():
    import socket

    # A short root: AF_UNIX addresses hold about a hundred bytes.
    with tempfile.TemporaryDirectory(dir="/tmp") as directory:
        tags = Path(directory) / "_refs" / "tags"
        tags.mkdir(parents=True)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
            server.bind(str(tags / "t.json"))
            with pytest.raises(UnreadablePathError, match="is a socket, not a regular file"):
                LocalStorage(directory).read("_refs/tags/t.json")


def test_describe_refuses_a_named_pipe_with_a_clean_error(dataset):
    opened = Dataset.open(dataset)
    deletion = opened.deletion_file_location(opened.fragments[0]).relpath
    _replace_with_fifo(dataset / deletion)
    code, _, err = _describe(str(dataset))
    assert code == 1
    assert f"UnreadablePathError: {dataset / deletion}: is a named pipe" in err


def test_a_directory_in_place_of_a_file_is_not_a_file(dataset):
    manifest = _latest_manifest(dataset)
    manifest.unlink()
    manifest.mkdir()
    with pytest.raises(UnreadablePathError, match="is a directory, not a regular file"):
        LocalStorage(dataset).read(str(manifest.relative_to(dataset)))


# -- deeply nested JSON --------------------------------------------------------------


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_describe_reports_a_tag_nested_too_deep_without_a_traceback(dataset, depth):
    (dataset / "_refs" / "tags" / "stable.json").write_text('{"a":' * depth + "1" + "}" * depth)
    code, _, err = _describe(str(dataset))
    assert code == 1
    assert f"{dataset / '_refs' / 'tags' / 'stable.json'}: JSON nests {depth} levels deep" in err


def test_nesting_is_measured_without_counting_brackets_inside_strings():
    assert nesting_depth('{"version": 3}') == 1
    assert nesting_depth('{"a": "[[[{{{", "b": [1, [2]]}') == 3
    assert nesting_depth('"\\"[["') == 0
    assert decode_json(b'{"metadata": {"k": "[{"}}', "f.json") == {"metadata": {"k": "[{"}}
    with pytest.raises(CorruptFileError, match="nests 65 levels"):
        decode_json(b"[" * 65 + b"]" * 65, "f.json")


def test_a_hint_nested_too_deep_is_no_hint(dataset):
    (dataset / VERSIONS_DIR / LATEST_HINT).write_text("[" * 100_000 + "]" * 100_000)
    assert read_hint(LocalStorage(dataset)) is None


# -- manifest names and versions -----------------------------------------------------


@pytest.mark.parametrize("name", ["00000000000000000000.manifest", "00000000000000000001.manifest"])
def test_describe_names_the_file_and_both_versions_when_a_name_and_its_manifest_disagree(dataset, name):
    """A V2 name for version 2^64 - 1 (or 2^64 - 2) over a manifest of
    version 2: the name makes it the latest, and the reader says what
    disagrees instead of describing version 2 as the latest."""
    shutil.copy(_latest_manifest(dataset), dataset / VERSIONS_DIR / name)
    named = 2**64 - 1 - int(name.split(".")[0])
    code, out, err = _describe(str(dataset))
    assert code == 1 and out == ""
    assert f"NamingSchemeError: {dataset / VERSIONS_DIR / name}: the file name says version {named}" in err
    assert "the manifest holds version 2" in err
    # Versions whose names are right still open.
    assert _describe(str(dataset), "--version", "1")[0] == 0


def test_opening_a_version_checks_its_manifest_holds_that_version(dataset):
    storage = LocalStorage(dataset)
    manifests = list_versions(storage).manifests()
    first, second = dataset / manifests[1], dataset / manifests[2]
    first.write_bytes(second.read_bytes())
    with pytest.raises(NamingSchemeError, match="says version 1 .* holds version 2"):
        Dataset.open(dataset, 1)


# -- errors name a file ----------------------------------------------------------------


def test_a_broken_inline_row_id_sequence_is_reported_against_its_manifest(dataset):
    from conformance.mutations.edit import edit_manifest

    def garble(manifest_file):
        manifest_file.manifest.fragments[0].row_id_sequence = b"\xff\xff\xff"

    edit_manifest(dataset, garble)
    opened = Dataset.open(dataset)
    with pytest.raises(CorruptFileError) as caught:
        opened.row_ids(opened.fragments[0])
    assert caught.value.path.startswith(str(_latest_manifest(dataset)))
    assert "inline row id sequence of fragment 0" in str(caught.value)


# -- unreadable paths (run without root's permission bypass) ----------------------------


def _run_unprivileged(*args: str) -> subprocess.CompletedProcess:
    command = without_permission_bypass([sys.executable, "-m", "conformance.cli", *args])
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])


@pytest.mark.parametrize("locked", ["_deletions", "_versions", "_refs/tags", "data", "_refs/tags/stable.json"])
def test_describe_reports_an_unreadable_path_cleanly(dataset, locked):
    (dataset / locked).chmod(0)
    try:
        result = _run_unprivileged("describe", str(dataset))
    finally:
        (dataset / locked).chmod(0o755)
    assert "Traceback" not in result.stderr, result.stderr
    if locked == "data":
        assert result.returncode == 0  # describing reads no data file
        return
    assert result.returncode == 1
    assert f"UnreadablePathError: {dataset / locked}" in result.stderr  # the path or one under it
    assert "Permission denied" in result.stderr


def test_the_probe_cannot_read_a_file_without_permission(tmp_path):
    """The permission cases above mean something only when the bypass is
    really dropped: a mode 000 file is unreadable to the same command."""
    locked = tmp_path / "locked"
    locked.write_text("secret")
    locked.chmod(0)
    command = without_permission_bypass([sys.executable, "-c", f"open({str(locked)!r}).read()"])
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "PermissionError" in result.stderr


def test_a_schema_that_does_not_build_is_reported_against_its_manifest(dataset):
    from conformance.mutations.edit import edit_manifest

    def childless_list(manifest_file):
        manifest_file.manifest.schema.fields[0].logical_type = "list"

    edit_manifest(dataset, childless_list)
    with pytest.raises(CorruptFileError) as caught:
        Dataset.open(dataset).to_table()
    assert caught.value.path == str(_latest_manifest(dataset))
    assert "schema: field 'id' (id 0): logical type 'list' needs 1 child field" in caught.value.problem
