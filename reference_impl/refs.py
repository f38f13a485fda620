"""Tags and branches (branch & tag specification; ``_refs/``).

Files
    A tag is ``_refs/tags/{name}.json``; a branch is
    ``_refs/branches/{name}.json`` with every ``/`` of the branch name written
    as ``%2F`` (so ``bugfix/issue-123`` is ``bugfix%2Fissue-123.json``).
    pylance percent-encodes every other byte outside ``A-Z a-z 0-9 . - _`` of
    both kinds of names too (``té`` is ``t%C3%A9.json``), which the upstream
    page does not say; this module does the same. Tags
    always live at the dataset root, whichever branch they point into; a
    branch's own versions live under ``tree/{name}/`` (the name used as a
    path, ``/`` making sub-directories).

JSON keys
    The upstream page lists snake_case keys (``manifest_size``,
    ``parent_branch``, ``parent_version``, ``create_at``). pylance 14 writes
    and *requires* camelCase (``manifestSize``, ``parentBranch``,
    ``parentVersion``, ``createAt``, plus ``createdAt``/``updatedAt``
    timestamps, ``metadata`` and, for branches, ``identifier``) and refuses a
    file that only has the snake_case spelling. This reader accepts either
    spelling of every key; the writer emits camelCase, the form pylance reads
    (docs/spec-discrepancies.md). Keys it does not know are kept in ``raw``.

Names (checked by :func:`validate_tag_name` / :func:`validate_branch_name`)
    A tag name is non-empty, made of alphanumerics, ``.``, ``-`` and ``_``,
    neither starts nor ends with ``.``, has no ``..`` and does not end with
    ``.lock``. A branch name is non-empty, does not start or end with ``/``,
    has no ``//``, no ``..``, no ``\\``, every ``/``-separated segment is made
    of alphanumerics, ``.``, ``-`` and ``_``, does not end with ``.lock`` and
    is not ``main`` (the name of the default branch). One rule beyond the
    upstream list: no segment may be ``.`` alone. The name becomes the path
    ``tree/{name}``, where such a segment means "this directory"; pylance
    refuses it too (its object-store paths cannot hold one). "Alphanumeric" is
    Python's ``str.isalnum``, which, like pylance, admits non-ASCII letters and
    digits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from dataclasses import field as dc_field
from datetime import datetime, timezone
from typing import Any, Literal, overload
from urllib.parse import quote, unquote

from . import entropy
from .errors import CorruptFileError, LanceFormatError
from .json_file import read_json_file
from .naming import resolve_version
from .storage import Storage

REFS_DIR = "_refs"
TAGS_DIR = f"{REFS_DIR}/tags"
BRANCHES_DIR = f"{REFS_DIR}/branches"
TREE_DIR = "tree"
MAIN_BRANCH = "main"


class InvalidRefNameError(ValueError):
    """A tag or branch name breaks the naming rules."""


# -- names --------------------------------------------------------------------


def _allowed_char(c: str) -> bool:
    return c.isalnum() or c in ".-_"


def validate_tag_name(name: str) -> None:
    """Raise :class:`InvalidRefNameError` unless ``name`` is a valid tag name."""
    if not isinstance(name, str) or not name:
        raise InvalidRefNameError("a tag name cannot be empty")
    if not all(_allowed_char(c) for c in name):
        raise InvalidRefNameError(f"tag name {name!r} may only hold alphanumerics, '.', '-' and '_'")
    if name.startswith(".") or name.endswith("."):
        raise InvalidRefNameError(f"tag name {name!r} cannot start or end with '.'")
    if ".." in name:
        raise InvalidRefNameError(f"tag name {name!r} cannot contain '..'")
    if name.endswith(".lock"):
        raise InvalidRefNameError(f"tag name {name!r} cannot end with '.lock'")


def validate_branch_name(name: str) -> None:
    """Raise :class:`InvalidRefNameError` unless ``name`` is a valid branch name."""
    if not isinstance(name, str) or not name:
        raise InvalidRefNameError("a branch name cannot be empty")
    if name.startswith("/") or name.endswith("/"):
        raise InvalidRefNameError(f"branch name {name!r} cannot start or end with '/'")
    if "//" in name:
        raise InvalidRefNameError(f"branch name {name!r} cannot contain '//'")
    if ".." in name or "\\" in name:
        raise InvalidRefNameError(f"branch name {name!r} cannot contain '..' or '\\'")
    for segment in name.split("/"):
        if segment == ".":
            raise InvalidRefNameError(f"branch name {name!r} has a '.' segment")
        if not all(_allowed_char(c) for c in segment):
            raise InvalidRefNameError(f"branch name segment {segment!r} may only hold alphanumerics, '.', '-' and '_'")
    if name.endswith(".lock"):
        raise InvalidRefNameError(f"branch name {name!r} cannot end with '.lock'")
    if name == MAIN_BRANCH:
        raise InvalidRefNameError(f"{MAIN_BRANCH!r} is reserved for the default branch")


def is_valid_tag_name(name: str) -> bool:
    try:
        validate_tag_name(name)
    except InvalidRefNameError:
        return False
    return True


def is_valid_branch_name(name: str) -> bool:
    try:
        validate_branch_name(name)
    except InvalidRefNameError:
        return False
    return True


def encode_ref_file_name(name: str) -> str:
    """``{name}.json`` with every byte outside ``A-Z a-z 0-9 . - _``
    percent-encoded (``/`` becomes ``%2F``, ``é`` becomes ``%C3%A9``)."""
    return quote(name, safe="") + ".json"


def decode_ref_file_name(file_name: str) -> str | None:
    """The tag or branch name of a file under ``_refs/``, or None when the
    file name does not end in ``.json``."""
    if not file_name.endswith(".json"):
        return None
    return unquote(file_name[: -len(".json")])


def tag_path(name: str) -> str:
    return f"{TAGS_DIR}/{encode_ref_file_name(name)}"


def branch_path(name: str) -> str:
    return f"{BRANCHES_DIR}/{encode_ref_file_name(name)}"


def branch_root(name: str | None) -> str | None:
    """Where a branch keeps its versions, relative to the dataset root; None
    for the main branch (the root itself)."""
    if name is None or name == MAIN_BRANCH:
        return None
    validate_branch_name(name)
    return f"{TREE_DIR}/{name}"


# -- records --------------------------------------------------------------------


@dataclass
class Tag:
    name: str
    version: int
    #: The branch the version belongs to; None for the main branch.
    branch: str | None
    #: The whole JSON object as read (or as written).
    raw: dict[str, Any] = dc_field(default_factory=dict)
    manifest_size: int | None = None


@dataclass
class Branch:
    name: str
    #: The branch this one was created from; None for the main branch.
    parent_branch: str | None
    parent_version: int
    raw: dict[str, Any] = dc_field(default_factory=dict)
    #: Creation time, Unix seconds.
    create_at: int | None = None
    manifest_size: int | None = None


_MISSING = object()


def _key(obj: dict, camel: str, snake: str, path: str) -> Any:
    """The value under either spelling; both present must agree."""
    a = obj.get(camel, _MISSING)
    b = obj.get(snake, _MISSING)
    if a is not _MISSING and b is not _MISSING and a != b:
        raise CorruptFileError(path, f"keys {camel!r} and {snake!r} disagree ({a!r} vs {b!r})")
    return a if a is not _MISSING else b


@overload
def _uint(value: Any, key: str, path: str, *, required: Literal[True]) -> int: ...
@overload
def _uint(value: Any, key: str, path: str, *, required: Literal[False]) -> int | None: ...
def _uint(value: Any, key: str, path: str, *, required: bool) -> int | None:
    if value is _MISSING or (value is None and not required):
        if required:
            raise CorruptFileError(path, f"missing required key {key!r}")
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value >= 2**64:
        raise CorruptFileError(path, f"{key!r} must be a non-negative integer, not {value!r}")
    return value


def _opt_str(value: Any, key: str, path: str) -> str | None:
    if value is _MISSING or value is None:
        return None
    if not isinstance(value, str):
        raise CorruptFileError(path, f"{key!r} must be a string or null, not {value!r}")
    return value


def _load_json(storage: Storage, relpath: str) -> tuple[dict, str]:
    path = str(storage.path(relpath))
    obj = read_json_file(storage, relpath)
    if not isinstance(obj, dict):
        raise CorruptFileError(path, f"expected a JSON object, found {type(obj).__name__}")
    return obj, path


def parse_tag(name: str, obj: dict, path: str) -> Tag:
    version = _uint(obj.get("version", _MISSING), "version", path, required=True)
    branch = _opt_str(obj.get("branch", _MISSING), "branch", path)
    size = _uint(_key(obj, "manifestSize", "manifest_size", path), "manifestSize", path, required=False)
    return Tag(name=name, version=version, branch=branch, raw=obj, manifest_size=size)


def parse_branch(name: str, obj: dict, path: str) -> Branch:
    parent_version = _uint(_key(obj, "parentVersion", "parent_version", path), "parentVersion", path, required=True)
    parent_branch = _opt_str(_key(obj, "parentBranch", "parent_branch", path), "parentBranch", path)
    create_at = _uint(_key(obj, "createAt", "create_at", path), "createAt", path, required=False)
    size = _uint(_key(obj, "manifestSize", "manifest_size", path), "manifestSize", path, required=False)
    return Branch(
        name=name,
        parent_branch=parent_branch,
        parent_version=parent_version,
        raw=obj,
        create_at=create_at,
        manifest_size=size,
    )


def read_tag(storage: Storage, name: str) -> Tag:
    """The tag ``name``; :class:`CorruptFileError` when its file is malformed."""
    validate_tag_name(name)
    obj, path = _load_json(storage, tag_path(name))
    return parse_tag(name, obj, path)


def read_branch(storage: Storage, name: str) -> Branch:
    validate_branch_name(name)
    obj, path = _load_json(storage, branch_path(name))
    return parse_branch(name, obj, path)


def list_tags(storage: Storage) -> dict[str, Tag]:
    """Every tag under ``_refs/tags`` (files not ending in ``.json`` and
    hidden files are skipped)."""
    tags = {}
    for file_name in storage.list_dir(TAGS_DIR):
        name = decode_ref_file_name(file_name)
        if file_name.startswith(".") or name is None:
            continue
        obj, path = _load_json(storage, f"{TAGS_DIR}/{file_name}")
        tags[name] = parse_tag(name, obj, path)
    return tags


def list_branches(storage: Storage) -> dict[str, Branch]:
    branches = {}
    for file_name in storage.list_dir(BRANCHES_DIR):
        if file_name.startswith("."):
            continue
        name = decode_ref_file_name(file_name)
        if name is None:
            continue
        obj, path = _load_json(storage, f"{BRANCHES_DIR}/{file_name}")
        branches[name] = parse_branch(name, obj, path)
    return branches


# -- writing --------------------------------------------------------------------


def _manifest_size(storage: Storage, branch: str | None, version: int) -> int:
    """Size of the manifest of ``version`` on ``branch`` (main when None)."""
    root = branch_root(branch)
    where = storage if root is None else storage.subtree(root, writable=False)
    _, relpath, _ = resolve_version(where, version)
    return where.size(relpath)


def _now_rfc3339() -> str:
    seconds, nanos = divmod(entropy.current().time_ns(), 1_000_000_000)
    moment = datetime.fromtimestamp(seconds, timezone.utc).replace(microsecond=nanos // 1000)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def write_tag(
    storage: Storage,
    name: str,
    version: int,
    *,
    branch: str | None = None,
    manifest_size: int | None = None,
    overwrite: bool = False,
) -> Tag:
    """Create ``_refs/tags/{name}.json`` pointing at ``version`` of ``branch``.

    The version must exist: its manifest's size is looked up unless
    ``manifest_size`` is given. An existing tag is an error (put-if-not-exists)
    unless ``overwrite``. Writes the camelCase object pylance reads.
    """
    validate_tag_name(name)
    if branch == MAIN_BRANCH:
        branch = None
    if manifest_size is None:
        manifest_size = _manifest_size(storage, branch, version)
    now = _now_rfc3339()
    obj: dict[str, object] = {
        "branch": branch,
        "version": version,
        "createdAt": now,
        "updatedAt": now,
        "manifestSize": manifest_size,
        "metadata": {},
    }
    data = json.dumps(obj, indent=2).encode("utf-8")
    if overwrite:
        storage.put(tag_path(name), data)
    else:
        storage.put_if_not_exists(tag_path(name), data)
    return Tag(name=name, version=version, branch=branch, raw=obj, manifest_size=manifest_size)


def write_branch(
    storage: Storage,
    name: str,
    parent_version: int,
    *,
    parent_branch: str | None = None,
    manifest_size: int | None = None,
    create_at: int | None = None,
) -> Branch:
    """Create the metadata file of branch ``name``, created from
    ``parent_version`` of ``parent_branch`` (main when None).

    Only the ``_refs/branches`` file is written: the branch's manifests under
    ``tree/{name}/`` are the caller's to write (a branch is a shallow clone).
    ``manifest_size`` defaults to the size of the parent version's manifest.
    """
    validate_branch_name(name)
    if parent_branch == MAIN_BRANCH:
        parent_branch = None
    if manifest_size is None:
        manifest_size = _manifest_size(storage, parent_branch, parent_version)
    if create_at is None:
        create_at = entropy.current().time_ns() // 1_000_000_000
    obj: dict[str, object] = {
        "parentBranch": parent_branch,
        "parentVersion": parent_version,
        "createAt": create_at,
        "manifestSize": manifest_size,
        "metadata": {},
    }
    storage.put_if_not_exists(branch_path(name), json.dumps(obj, indent=2).encode("utf-8"))
    return parse_branch(name, obj, str(storage.path(branch_path(name))))


def delete_tag(storage: Storage, name: str) -> None:
    validate_tag_name(name)
    if not storage.exists(tag_path(name)):
        raise LanceFormatError(str(storage.path(tag_path(name))), f"tag {name!r} does not exist")
    storage.delete(tag_path(name))


# -- choosing what to read --------------------------------------------------------


class RefNotFoundError(LanceFormatError):
    """A tag or branch the caller named does not exist."""


@dataclass(frozen=True)
class RefTarget:
    """What a tag, or a branch and version, select: a branch (None for main)
    and a version of it (None for its latest)."""

    branch: str | None
    version: int | None

    @property
    def root(self) -> str | None:
        """Where the branch keeps its versions, relative to the dataset root; None for main."""
        return branch_root(self.branch)


def resolve_ref(
    storage: Storage, *, tag: str | None = None, branch: str | None = None, version: int | None = None
) -> RefTarget:
    """The branch and version a tag names, or ``version`` of ``branch``.

    A tag names its version itself, so it takes neither a branch nor a
    version. Raises :class:`InvalidRefNameError` for a malformed name and
    :class:`RefNotFoundError` for a tag or branch the dataset does not have.
    """
    if tag is not None:
        if branch is not None or version is not None:
            raise ValueError("a tag selects its own branch and version; give no branch or version with it")
        validate_tag_name(tag)
        if not storage.exists(tag_path(tag)):
            raise RefNotFoundError(str(storage.root), f"tag {tag!r} does not exist (no {tag_path(tag)})")
        found = read_tag(storage, tag)
        on_branch = None if found.branch == MAIN_BRANCH else found.branch
        if on_branch is not None and not is_valid_branch_name(on_branch):
            raise CorruptFileError(
                str(storage.path(tag_path(tag))), f"names the branch {on_branch!r}, not a valid branch name"
            )
        return RefTarget(on_branch, found.version)
    if branch is None or branch == MAIN_BRANCH:
        return RefTarget(None, version)
    validate_branch_name(branch)
    if not storage.exists(branch_path(branch)):
        raise RefNotFoundError(str(storage.root), f"branch {branch!r} does not exist (no {branch_path(branch)})")
    return RefTarget(branch, version)
