"""Rules on tags and branches (branch & tag specification: ``_refs/`` and
``tree/``).

Tag and branch files are checked against the JSON Schemas
``conformance/schemas/tag.schema.json`` and ``branch.schema.json``, which
accept both the snake_case keys of upstream ``branch_tag.md`` and the
camelCase keys pylance writes (docs/spec-discrepancies.md); the reference
parser (:mod:`reference_impl.refs`) then checks that both spellings, when a
file has both, agree.

Branch versions live under ``tree/{name}/``; the validator's version rules
only look at the main branch, so the branch checks here read just what they
need: each branch's version listing and its newest manifest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, TypeVar

import jsonschema

from conformance.describe import load_schema
from reference_impl.errors import LanceFormatError, UnreadablePathError
from reference_impl.json_file import decode_json
from reference_impl.manifest import Manifest
from reference_impl.manifest_file import read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.refs import (
    BRANCHES_DIR,
    MAIN_BRANCH,
    TAGS_DIR,
    TREE_DIR,
    Branch,
    InvalidRefNameError,
    Tag,
    decode_ref_file_name,
    encode_ref_file_name,
    is_valid_branch_name,
    parse_branch,
    parse_tag,
    validate_branch_name,
    validate_tag_name,
)
from reference_impl.storage import Storage

from ..context import DatasetView
from ..registry import Scope, Severity, rule

#: Ref files larger than this are not read (pylance's are a few hundred bytes).
MAX_REF_BYTES = 1 << 20
#: At most this many entries of each refs directory are looked at.
MAX_REFS = 10_000
#: How deep tree/ is searched for branch directories.
MAX_TREE_DEPTH = 16


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema(name))


#: The parsed record of a ref file: a Tag or a Branch.
Parsed = TypeVar("Parsed", Tag, Branch)


@dataclass(frozen=True)
class RefKind(Generic[Parsed]):
    """Tags or branches: where their files live and how one is checked and parsed."""

    #: "tag" or "branch", as messages name it.
    name: str
    directory: str
    schema: str
    parse: Callable[[str, dict, str], Parsed]


TAGS = RefKind("tag", TAGS_DIR, "tag.schema.json", parse_tag)
BRANCHES = RefKind("branch", BRANCHES_DIR, "branch.schema.json", parse_branch)


@dataclass
class RefFile(Generic[Parsed]):
    """One entry of ``_refs/tags`` or ``_refs/branches``."""

    file_name: str
    relpath: str
    #: The ref name the file name encodes (None: not a ``.json`` file).
    name: str | None
    #: The decoded JSON object, when the file is one.
    document: dict | None = None
    #: Why the file is not a valid ref file ("" when it is).
    problem: str = ""
    #: The parsed record when valid.
    parsed: Parsed | None = None


def _load(storage: Storage, kind: RefKind[Parsed]) -> list[RefFile[Parsed]]:
    refs: list[RefFile[Parsed]] = []
    schema = kind.schema
    for file_name in storage.list_dir(kind.directory)[:MAX_REFS]:
        if file_name.startswith("."):
            continue  # a writer's temporary file
        relpath = f"{kind.directory}/{file_name}"
        ref: RefFile[Parsed] = RefFile(file_name, relpath, decode_ref_file_name(file_name))
        refs.append(ref)
        if ref.name is None or not storage.exists(relpath):
            continue
        try:
            size = storage.size(relpath)
            if size > MAX_REF_BYTES:
                ref.problem = f"the file holds {size} bytes, far more than a ref file needs"
                continue
            document = decode_json(storage.read(relpath, 0, size), relpath)
        except LanceFormatError as exc:
            ref.problem = exc.problem
            continue
        if not isinstance(document, dict):
            ref.problem = f"expected a JSON object, found {type(document).__name__}"
            continue
        ref.document = document
        errors = sorted(_validator(schema).iter_errors(document), key=lambda e: list(e.absolute_path))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "(top level)"
            ref.problem = f"does not match {schema} at {where}: {first.message}"
            continue
        try:
            ref.parsed = kind.parse(ref.name, document, relpath)
        except LanceFormatError as exc:
            ref.problem = exc.problem
    return refs


def _refs(dataset: DatasetView, kind: RefKind[Parsed]) -> list[RefFile[Parsed]]:
    loaded = dataset.cached(("rules.refs", kind.name), lambda: _load(dataset.storage, kind))
    return loaded.value if loaded.ok else []


def _branch_storage(dataset: DatasetView, branch: str | None) -> Storage | None:
    """Where the versions of ``branch`` live (None or main: the root); None
    when the name is invalid or the branch directory does not exist."""
    if branch is None or branch == MAIN_BRANCH:
        return dataset.storage
    try:
        validate_branch_name(branch)
    except InvalidRefNameError:
        return None
    relpath = f"{TREE_DIR}/{branch}"
    if not dataset.storage.is_dir(relpath):
        return None
    return dataset.storage.subtree(relpath, writable=False)


def _branch_manifests(dataset: DatasetView, branch: str | None) -> tuple[Storage, dict[int, str]] | None:
    """Where a branch's versions live, and its manifest paths by version
    (relative to that directory); None when there is no such directory."""
    storage = _branch_storage(dataset, branch)
    if storage is None:
        return None
    if branch is None or branch == MAIN_BRANCH:
        return storage, dataset.manifest_paths()
    loaded = dataset.cached(("rules.refs.listing", branch), lambda: list_versions(storage).manifests())
    if isinstance(loaded.error, UnreadablePathError):
        raise loaded.error  # there, but unreadable: not a missing directory (the engine reports it)
    return (storage, loaded.value) if loaded.ok else None


def _label(branch: str | None) -> str:
    return "the main branch" if branch in (None, MAIN_BRANCH) else f"branch '{branch}'"


@rule(
    "refs/tag-file-content",
    severity=Severity.ERROR,
    requirements=("refs.tag-file-content",),
    summary="Each tag file is a JSON object matching tag.schema.json (version, optional branch, manifest size)",
    scope=Scope.DATASET,
)
def tag_file_content(dataset: DatasetView):
    for ref in _refs(dataset, TAGS):
        if ref.name is not None and ref.problem:
            yield f"tag '{ref.name}': {ref.problem}", ref.relpath


@rule(
    "refs/branch-file-content",
    severity=Severity.ERROR,
    requirements=("refs.branch-file-content",),
    summary="Each branch file is a JSON object matching branch.schema.json (parent, parent version, creation time, "
    "manifest size)",
    scope=Scope.DATASET,
)
def branch_file_content(dataset: DatasetView):
    for ref in _refs(dataset, BRANCHES):
        if ref.name is not None and ref.problem:
            yield f"branch '{ref.name}': {ref.problem}", ref.relpath


@rule(
    "refs/tag-name",
    severity=Severity.ERROR,
    requirements=("refs.tag-name-charset", "refs.tag-name-shape"),
    summary="Tag names use letters, digits, '.', '-' and '_' and have a valid shape",
    scope=Scope.DATASET,
)
def tag_name(dataset: DatasetView):
    for ref in _refs(dataset, TAGS):
        if ref.name is None:
            continue
        try:
            validate_tag_name(ref.name)
        except InvalidRefNameError as exc:
            yield str(exc), ref.relpath


@rule(
    "refs/branch-name",
    severity=Severity.ERROR,
    requirements=("refs.branch-name-charset", "refs.branch-name-shape", "refs.branch-name-not-main"),
    summary="Branch names have valid '/'-separated segments, a valid shape, and are not 'main'",
    scope=Scope.DATASET,
)
def branch_name(dataset: DatasetView):
    for ref in _refs(dataset, BRANCHES):
        if ref.name is None:
            continue
        try:
            validate_branch_name(ref.name)
        except InvalidRefNameError as exc:
            yield str(exc), ref.relpath


@rule(
    "refs/file-location",
    severity=Severity.WARNING,
    requirements=("refs.tag-file-location", "refs.branch-file-location"),
    summary="_refs/tags and _refs/branches hold only {name}.json files, names percent-encoded as writers encode them",
    scope=Scope.DATASET,
)
def file_location(dataset: DatasetView):
    kinds: tuple[RefKind[Any], ...] = (TAGS, BRANCHES)
    for kind in kinds:
        for ref in _refs(dataset, kind):
            if ref.name is None:
                yield f"'{ref.file_name}' is not a {kind.name} file ({{name}}.json)", ref.relpath
            elif not dataset.storage.exists(ref.relpath):
                yield f"'{ref.file_name}' is not a regular file", ref.relpath
            elif encode_ref_file_name(ref.name) != ref.file_name:
                yield (
                    f"the {kind.name} '{ref.name}' should be stored as '{encode_ref_file_name(ref.name)}': readers "
                    "looking it up by name will not find it",
                    ref.relpath,
                )


@rule(
    "refs/tag-target-exists",
    severity=Severity.ERROR,
    requirements=("refs.tag-target-exists",),
    summary="The version a tag names exists on the branch it names",
    scope=Scope.DATASET,
)
def tag_target_exists(dataset: DatasetView):
    for ref in _refs(dataset, TAGS):
        if ref.parsed is None:
            continue
        tag = ref.parsed
        branch = _branch_manifests(dataset, tag.branch)
        if branch is None:
            yield f"tag '{tag.name}' names {_label(tag.branch)}, which has no version directory", ref.relpath
        elif tag.version not in branch[1]:
            yield (
                f"tag '{tag.name}' names version {tag.version} of {_label(tag.branch)}, which has no manifest",
                ref.relpath,
            )


@rule(
    "refs/tag-manifest-size",
    severity=Severity.WARNING,
    requirements=("refs.tag-manifest-size",),
    summary="A tag's manifest size equals the size of the tagged version's manifest file",
    scope=Scope.DATASET,
)
def tag_manifest_size(dataset: DatasetView):
    for ref in _refs(dataset, TAGS):
        tag = ref.parsed
        if tag is None or tag.manifest_size is None:
            continue
        branch = _branch_manifests(dataset, tag.branch)
        if branch is None or tag.version not in branch[1]:
            continue
        storage, manifests = branch
        try:
            size = storage.size(manifests[tag.version])
        except LanceFormatError:
            continue
        if size != tag.manifest_size:
            yield (
                f"tag '{tag.name}' records a manifest size of {tag.manifest_size} bytes; the manifest of version "
                f"{tag.version} has {size} (a reader trusting the recorded size reads the wrong bytes)",
                ref.relpath,
            )


def _tree_branches(dataset: DatasetView) -> list[str]:
    """Names of the directories under tree/ that hold a _versions directory."""
    found: list[str] = []
    pending = [("", 0)]
    while pending and len(found) < MAX_REFS:
        prefix, depth = pending.pop()
        base = f"{TREE_DIR}/{prefix}" if prefix else TREE_DIR
        holds_versions = bool(prefix) and dataset.storage.is_dir(f"{base}/_versions")
        for entry in dataset.storage.list_dir(base)[:MAX_REFS]:
            path = f"{prefix}/{entry}" if prefix else entry
            if entry.startswith("_") or (holds_versions and entry == "data"):
                continue  # a branch's own directories
            if not dataset.storage.is_dir(f"{TREE_DIR}/{path}"):
                continue
            if dataset.storage.is_dir(f"{TREE_DIR}/{path}/_versions"):
                found.append(path)
            if depth + 1 < MAX_TREE_DEPTH:
                pending.append((path, depth + 1))
    return sorted(found)


@dataclass(frozen=True)
class _BranchHead:
    """A well-named branch's newest manifest, decoded from its tree/ directory."""

    version: int
    location: str
    storage: Storage
    manifest: Manifest


def _branch_heads(dataset: DatasetView) -> Iterator[tuple[RefFile[Branch], _BranchHead | None]]:
    """``(ref, head)`` for every well-named branch (badly named ones are
    refs/branch-file-content's and refs/branch-name's): ``head`` is its newest
    manifest, or None when the branch has no manifest at all. A branch whose
    newest manifest does not decode is skipped: the branch's own validation
    reports it."""
    for ref in _refs(dataset, BRANCHES):
        if ref.parsed is None or not is_valid_branch_name(ref.parsed.name):
            continue
        branch = _branch_manifests(dataset, ref.parsed.name)
        if branch is None or not branch[1]:
            yield ref, None
            continue
        storage, manifests = branch
        latest = max(manifests)
        try:
            manifest = read_manifest_file(storage, manifests[latest]).manifest
        except LanceFormatError:
            continue
        yield ref, _BranchHead(latest, f"{TREE_DIR}/{ref.name}/{manifests[latest]}", storage, manifest)


@rule(
    "refs/branch-tree-layout",
    severity=Severity.ERROR,
    requirements=("refs.branch-tree-layout", "refs.branch-is-shallow-clone"),
    summary="Each branch keeps its versions under tree/{name}/_versions/ and reaches its source's data files "
    "through base paths",
    scope=Scope.DATASET,
)
def branch_tree_layout(dataset: DatasetView):
    for ref, head in _branch_heads(dataset):
        if head is None:
            yield f"branch '{ref.name}' has no manifests under {TREE_DIR}/{ref.name}/_versions/", ref.relpath
            continue
        # A data file without a base path is the branch's own: it lies in the
        # branch's data/ directory. The source's files are reached through a
        # base path (a branch is a shallow clone of its source).
        missing = [
            data_file.path
            for fragment in head.manifest.fragments[:MAX_REFS]
            for data_file in fragment.files
            if data_file.base_id is None and not head.storage.exists(f"data/{data_file.path}")
        ]
        if missing:
            yield (
                f"the newest version ({head.version}) of branch '{ref.name}' names {len(missing)} data files "
                f"that are neither in {TREE_DIR}/{ref.name}/data/ nor reached through a base path (first: "
                f"{missing[0]}); a branch reaches its source's files through base paths",
                head.location,
            )


@rule(
    "refs/orphan-branch-directory",
    severity=Severity.WARNING,
    requirements=("refs.branch-tree-layout", "refs.branch-file-location"),
    summary="Every branch directory under tree/ has its branch file in _refs/branches",
    scope=Scope.DATASET,
)
def orphan_branch_directory(dataset: DatasetView):
    known = {ref.name for ref in _refs(dataset, BRANCHES) if ref.name is not None}
    for path in _tree_branches(dataset):
        if path not in known:
            yield (
                f"{TREE_DIR}/{path}/ holds versions but no branch file _refs/branches/{encode_ref_file_name(path)} "
                "exists (left by a deleted branch?)",
                f"{TREE_DIR}/{path}",
            )


def _is_branch_directory(dataset: DatasetView, branch: str) -> bool:
    """Whether the validated root's path ends in ``tree/{branch}`` (the
    validator was pointed at a branch's own directory). Decided from the path
    alone: nothing outside the root is looked at."""
    return dataset.storage.above([TREE_DIR, *branch.split("/")]) is not None


@rule(
    "refs/manifest-branch-field",
    severity=Severity.ERROR,
    requirements=("refs.manifest-branch-field",),
    summary="Main-branch manifests have no branch field; a branch's manifests name their branch",
    scope=Scope.DATASET,
)
def manifest_branch_field(dataset: DatasetView):
    paths = dataset.manifest_paths()
    for version in dataset.selected_versions:
        loaded = dataset.manifest_file(version)
        if not loaded.ok:
            continue
        named = loaded.value.manifest.branch
        if named not in (None, "", MAIN_BRANCH) and not _is_branch_directory(dataset, named):
            yield (
                f"version {version} says it belongs to branch '{named}', but it is a version of the main branch "
                f"(a branch's versions live under {TREE_DIR}/{named}/)",
                paths.get(version),
            )
    for ref, head in _branch_heads(dataset):
        if head is not None and head.manifest.branch != ref.name:
            shown = "no branch" if head.manifest.branch is None else f"branch '{head.manifest.branch}'"
            yield f"the newest version ({head.version}) of branch '{ref.name}' names {shown}", head.location
