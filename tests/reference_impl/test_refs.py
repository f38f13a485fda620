"""Tags and branches (branch & tag specification), read from and written for
pylance 14."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.errors import CommitConflictError, CorruptFileError, LanceFormatError
from reference_impl.naming import resolve_version
from reference_impl.refs import (
    InvalidRefNameError,
    branch_path,
    decode_ref_file_name,
    encode_ref_file_name,
    is_valid_branch_name,
    is_valid_tag_name,
    list_branches,
    list_tags,
    read_branch,
    read_tag,
    tag_path,
    validate_branch_name,
    validate_tag_name,
    write_branch,
    write_tag,
)
from reference_impl.storage import LocalStorage
from tests.hypothesis_budget import examples

lance = pytest.importorskip("lance")


def _rows(count: int) -> pa.Table:
    return pa.table({"a": pa.array(range(count), pa.int64())})


@pytest.fixture(scope="module")
def refs_dataset(tmp_path_factory):
    """Three versions; tags on main and on a branch; branches with and
    without '/' and a non-ASCII name."""
    path = tmp_path_factory.mktemp("refs") / "ds"
    lance.write_dataset(_rows(10), path)
    lance.write_dataset(_rows(5), path, mode="append")
    ds = lance.write_dataset(_rows(5), path, mode="append")
    ds.tags.create("v1.0", 1)
    ds.tags.create("latest_main", 3)
    ds.create_branch("dev", 2)
    ds.create_branch("feature/login", "v1.0")
    ds.create_branch("café/x", 3)
    ds.tags.create("on-dev", ("dev", 2))
    return path


def _manifest_size(path, version: int) -> int:
    storage = LocalStorage(path)
    _, relpath, _ = resolve_version(storage, version)
    return storage.size(relpath)


def test_tags_match_pylance(refs_dataset):
    ours = list_tags(LocalStorage(refs_dataset))
    theirs = lance.dataset(refs_dataset).tags.list()
    assert set(ours) == set(theirs) == {"v1.0", "latest_main", "on-dev"}
    for name, tag in ours.items():
        assert (tag.version, tag.branch, tag.manifest_size) == (
            theirs[name]["version"],
            theirs[name]["branch"],
            theirs[name]["manifest_size"],
        )
    assert ours["v1.0"].manifest_size == _manifest_size(refs_dataset, 1)
    assert ours["on-dev"].branch == "dev"
    # pylance 14 writes camelCase keys, not the upstream page's snake_case
    assert "manifestSize" in ours["v1.0"].raw and "manifest_size" not in ours["v1.0"].raw


def test_branches_match_pylance(refs_dataset):
    ours = list_branches(LocalStorage(refs_dataset))
    theirs = lance.dataset(refs_dataset).branches.list()
    assert set(ours) == set(theirs) == {"dev", "feature/login", "café/x"}
    for name, branch in ours.items():
        assert (branch.parent_branch, branch.parent_version, branch.create_at, branch.manifest_size) == (
            theirs[name]["parent_branch"],
            theirs[name]["parent_version"],
            theirs[name]["create_at"],
            theirs[name]["manifest_size"],
        )
    assert ours["feature/login"].parent_version == 1
    assert read_branch(LocalStorage(refs_dataset), "feature/login").parent_version == 1


def test_file_names_are_percent_encoded_like_pylance(refs_dataset, tmp_path):
    assert (refs_dataset / "_refs" / "branches" / "feature%2Flogin.json").is_file()
    assert (refs_dataset / "_refs" / "branches" / "caf%C3%A9%2Fx.json").is_file()
    assert branch_path("feature/login") == "_refs/branches/feature%2Flogin.json"
    assert tag_path("tég") == "_refs/tags/t%C3%A9g.json"
    assert decode_ref_file_name(encode_ref_file_name("café/x")) == "café/x"
    # A non-ASCII tag: pylance percent-encodes its file name and reads it by
    # name, but cannot list it (it encodes the listed name a second time).
    path = tmp_path / "ds"
    lance.write_dataset(_rows(2), path)
    lance.dataset(path).tags.create("tég", 1)
    assert (path / "_refs" / "tags" / "t%C3%A9g.json").is_file()
    assert read_tag(LocalStorage(path), "tég").version == 1
    assert set(list_tags(LocalStorage(path))) == {"tég"}
    assert lance.dataset(path, version="tég").version == 1
    with pytest.raises(Exception, match="t%25C3%25A9g"):
        lance.dataset(path).tags.list()


def test_pylance_sees_tags_we_write(tmp_path, refs_dataset):
    path = tmp_path / "ds"
    lance.write_dataset(_rows(3), path)
    lance.write_dataset(_rows(3), path, mode="append")
    storage = LocalStorage(path)
    tag = write_tag(storage, "ours-1", 1)
    assert tag.manifest_size == _manifest_size(path, 1)
    listed = lance.dataset(path).tags.list()
    assert listed["ours-1"]["version"] == 1
    assert listed["ours-1"]["manifest_size"] == tag.manifest_size
    assert lance.dataset(path, version="ours-1").count_rows() == 3
    with pytest.raises(CommitConflictError):
        write_tag(storage, "ours-1", 2)
    write_tag(storage, "ours-1", 2, overwrite=True)
    assert lance.dataset(path).tags.list()["ours-1"]["version"] == 2
    write_tag(storage, "nöt-ascii", 2)
    assert lance.dataset(path, version="nöt-ascii").count_rows() == 6


def test_pylance_sees_a_tag_on_a_branch_we_write(refs_dataset, tmp_path):
    import shutil

    path = tmp_path / "copy"
    shutil.copytree(refs_dataset, path)
    dev = LocalStorage(path / "tree" / "dev")
    tag = write_tag(LocalStorage(path), "ours-on-dev", 2, branch="dev")
    assert tag.manifest_size == dev.size(resolve_version(dev, 2)[1])
    listed = lance.dataset(path).tags.list()["ours-on-dev"]
    assert (listed["branch"], listed["version"]) == ("dev", 2)
    assert lance.dataset(path, version="ours-on-dev").count_rows() == 15
    with pytest.raises(LanceFormatError):
        write_tag(LocalStorage(path), "nowhere", 1, branch="dev")


def test_pylance_sees_branch_metadata_we_write(refs_dataset, tmp_path):
    import shutil

    path = tmp_path / "copy"
    shutil.copytree(refs_dataset, path)
    written = write_branch(LocalStorage(path), "release/v2", 3, create_at=1_700_000_000)
    assert written.manifest_size == _manifest_size(path, 3)
    listed = lance.dataset(path).branches.list()["release/v2"]
    assert (listed["parent_branch"], listed["parent_version"], listed["create_at"], listed["manifest_size"]) == (
        None,
        3,
        1_700_000_000,
        written.manifest_size,
    )
    assert (path / "_refs" / "branches" / "release%2Fv2.json").is_file()
    assert read_branch(LocalStorage(path), "release/v2") == written


def test_snake_case_is_read_by_us_and_refused_by_pylance(tmp_path):
    """The upstream page's snake_case keys: accepted here, refused by pylance
    14 (a departure recorded in docs/spec-discrepancies.md)."""
    path = tmp_path / "ds"
    lance.write_dataset(_rows(3), path)
    storage = LocalStorage(path)
    size = _manifest_size(path, 1)
    storage.put(tag_path("snake"), json.dumps({"branch": None, "version": 1, "manifest_size": size}).encode())
    storage.put(
        branch_path("snakebr"),
        json.dumps({"parent_branch": None, "parent_version": 1, "create_at": 5, "manifest_size": size}).encode(),
    )
    tag = read_tag(storage, "snake")
    assert (tag.version, tag.branch, tag.manifest_size) == (1, None, size)
    branch = read_branch(storage, "snakebr")
    assert (branch.parent_version, branch.create_at, branch.manifest_size) == (1, 5, size)
    with pytest.raises(Exception, match="manifestSize"):
        lance.dataset(path).tags.list()


# -- names ----------------------------------------------------------------------------

VALID_TAGS = ["ref", "ref-with-dashes", "ref.extension", "ref_with_underscores", "v1.2.3-rc4", "tég", "0"]
INVALID_TAGS = [
    "",
    "../ref",
    ".ref",
    "/ref",
    "@",
    "nested/ref",
    "nested\\ref",
    "ref*",
    "ref.lock",
    "ref.",
    "a..b",
    "a b",
]
VALID_BRANCHES = [
    "feature/login",
    "bugfix/issue-123",
    "release/v1.2.3",
    "user/someone/x",
    "normal",
    "with.dot",
    "mainline",
]
INVALID_BRANCHES = [
    "",
    "/start",
    "end/",
    "a//b",
    "have..dot",
    "back\\slash",
    "name.lock",
    "bad@char",
    "bad space",
    "main",
    ".",
    "a/./b",
]


@pytest.mark.parametrize("name", VALID_TAGS)
def test_valid_tag_names(name):
    validate_tag_name(name)


@pytest.mark.parametrize("name", INVALID_TAGS)
def test_invalid_tag_names(name):
    with pytest.raises(InvalidRefNameError):
        validate_tag_name(name)


@pytest.mark.parametrize("name", VALID_BRANCHES)
def test_valid_branch_names(name):
    validate_branch_name(name)


@pytest.mark.parametrize("name", INVALID_BRANCHES)
def test_invalid_branch_names(name):
    with pytest.raises(InvalidRefNameError):
        validate_branch_name(name)


@pytest.fixture(scope="module")
def scratch_dataset(tmp_path_factory):
    path = tmp_path_factory.mktemp("names") / "ds"
    lance.write_dataset(_rows(2), path)
    return path


ref_names = st.text(alphabet="ab.-_/\\@ é", min_size=0, max_size=8)


@settings(max_examples=min(200, examples(1)))
@given(ref_names)
def test_tag_rules_agree_with_pylance(scratch_dataset, name):
    """A tag name is accepted here exactly when pylance accepts it."""
    ds = lance.dataset(scratch_dataset)
    try:
        ds.tags.create(name, 1)
        accepted = True
    except Exception:
        accepted = False
    else:
        ds.tags.delete(name)
    assert is_valid_tag_name(name) == accepted


@settings(max_examples=min(200, examples(1)))
@given(ref_names)
def test_branch_rules_agree_with_pylance(scratch_dataset, name):
    """A branch name is accepted here exactly when pylance accepts it."""
    ds = lance.dataset(scratch_dataset)
    if name in lance.dataset(scratch_dataset).branches.list():
        return
    try:
        ds.create_branch(name, 1)
        accepted = True
    except Exception:
        accepted = False
    assert is_valid_branch_name(name) == accepted


# -- malformed files ------------------------------------------------------------------

MALFORMED_TAGS = {
    "not json": b"{not json",
    "not utf-8": b"\xff\xfe{}",
    "array": b"[1, 2]",
    "no version": b'{"branch": null, "manifestSize": 3}',
    "negative version": b'{"version": -1, "manifestSize": 3}',
    "string version": b'{"version": "1", "manifestSize": 3}',
    "bool version": b'{"version": true}',
    "branch not a string": b'{"version": 1, "branch": 4}',
    "spellings disagree": b'{"version": 1, "manifestSize": 3, "manifest_size": 4}',
}


@pytest.mark.parametrize("case", sorted(MALFORMED_TAGS))
def test_malformed_tag_files_are_corrupt(tmp_path, case):
    storage = LocalStorage(tmp_path)
    storage.put(tag_path("t"), MALFORMED_TAGS[case])
    with pytest.raises(CorruptFileError, match="t.json"):
        read_tag(storage, "t")
    with pytest.raises(CorruptFileError, match="t.json"):
        list_tags(storage)


@pytest.mark.parametrize(
    "content",
    [b"", b"null", b'{"parentVersion": "2", "createAt": 1, "manifestSize": 1}', b'{"createAt": 1}'],
)
def test_malformed_branch_files_are_corrupt(tmp_path, content):
    storage = LocalStorage(tmp_path)
    storage.put(branch_path("b/c"), content)
    with pytest.raises(CorruptFileError, match="b%2Fc.json"):
        read_branch(storage, "b/c")


def test_missing_refs(tmp_path):
    storage = LocalStorage(tmp_path)
    assert list_tags(storage) == {} and list_branches(storage) == {}
    with pytest.raises(LanceFormatError):
        read_tag(storage, "nope")
    with pytest.raises(InvalidRefNameError):
        read_tag(storage, "../escape")
