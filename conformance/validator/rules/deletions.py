"""Rules on deletion files (table format: deletion files).

Every rule here looks at a fragment's deletion file through
:func:`~conformance.validator.facts.deletions.deletion_content`, which reads
each file once per validation run and never expands it beyond what the
fragment can hold. A file too large to read is reported by
``deletion/unchecked`` (info) instead of being read.
"""

from __future__ import annotations

import re

from reference_impl.deletions import DELETIONS_DIR, DeletionStatus, deletion_file_location
from reference_impl.errors import LanceFormatError
from reference_impl.fragments import DeletionFile, DeletionFileType, Fragment
from reference_impl.manifest_file import read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.refs import BRANCHES_DIR, TREE_DIR, decode_ref_file_name, is_valid_branch_name
from reference_impl.storage import Storage

from ..context import DatasetView, VersionView
from ..facts.deletions import DeletionContent, DeletionLookup, deletion_file_content, deletion_location
from ..facts.text import listed
from ..registry import Scope, Severity, rule

DELETION_FILE_NAME = re.compile(r"^(\d+)-(\d+)-(\d+)\.(arrow|bin)$")


# -- rules ---------------------------------------------------------------------------


def _with_deletions(view: VersionView) -> list[tuple[Fragment, DeletionContent]]:
    """(fragment, content) for each fragment with a deletion file, listed
    once per version for the dozen rules that iterate them."""
    return view.memo(
        "deletions.with-deletions",
        lambda: [
            (fragment, deletion_file_content(view, fragment, fragment.deletion_file))
            for fragment in view.manifest.fragments
            if fragment.deletion_file is not None
        ],
    )


def _describe(fragment: Fragment) -> str:
    return f"fragment {fragment.id}"


@rule(
    "deletion/file-exists",
    severity=Severity.ERROR,
    requirements=("deletion.file-exists", "deletion.path-derived"),
    summary="The deletion file a fragment names exists at its derived location and can be read",
)
def file_exists(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status is DeletionStatus.MISSING and _other_kind_path(view, fragment, content.deletion_file) is None:
            yield f"{_describe(fragment)}: no deletion file at the derived location", content.location
        elif content.status is DeletionLookup.UNREADABLE:
            yield f"{_describe(fragment)}: the deletion file cannot be read: {content.message}", content.location


def _other_kind_path(view: VersionView, fragment: Fragment, deletion_file: DeletionFile) -> str | None:
    """The location of a file named like ``deletion_file`` (missing) but with
    the other kind's extension, when there is one."""
    kind = deletion_file.file_type
    if not isinstance(kind, DeletionFileType):
        return None
    if kind is DeletionFileType.ARROW_ARRAY:
        other = DeletionFileType.BITMAP
    else:
        other = DeletionFileType.ARROW_ARRAY
    try:
        storage, relpath = deletion_file_location(
            view.dataset.storage, fragment.id, deletion_file, view.manifest.base_paths
        )
    except LanceFormatError:
        return None
    candidate = relpath[: -len(kind.extension)] + other.extension
    return deletion_location(storage, candidate, view.dataset.storage) if storage.exists(candidate) else None


@rule(
    "deletion/extension-matches-kind",
    severity=Severity.ERROR,
    requirements=("deletion.extension-matches-kind", "deletion.either-kind"),
    summary="The deletion file's kind is ARROW_ARRAY (.arrow) or BITMAP (.bin), and its file is of that kind",
)
def extension_matches_kind(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status in (DeletionLookup.UNKNOWN_KIND, DeletionStatus.KIND_MISMATCH):
            yield f"{_describe(fragment)}: {content.message}", content.location
        elif content.status is DeletionStatus.MISSING:
            other = _other_kind_path(view, fragment, content.deletion_file)
            kind = content.deletion_file.file_type
            if other is not None and isinstance(kind, DeletionFileType):
                yield (
                    f"{_describe(fragment)}: the kind is {kind.name}, but the file on "
                    f"disk has the other extension ({other})",
                    content.location,
                )


@rule(
    "deletion/arrow-layout",
    severity=Severity.ERROR,
    requirements=("deletion.arrow-layout",),
    summary="An .arrow deletion file is an Arrow IPC file with one record batch of one non-null 32-bit integer column",
)
def arrow_layout(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status is DeletionStatus.ARROW_LAYOUT:
            yield f"{_describe(fragment)}: {content.message}", content.location


@rule(
    "deletion/arrow-uint32",
    severity=Severity.INFO,
    requirements=("deletion.arrow-layout",),
    summary="An .arrow deletion column is Int32 as the seeds say (pylance writes uint32; "
    "see docs/spec-discrepancies.md)",
)
def arrow_uint32(view: VersionView):
    unsigned = [
        content.location for _, content in _with_deletions(view) if content.ok and content.column_type == "uint32"
    ]
    if unsigned:
        yield (
            f"{len(unsigned)} .arrow deletion files hold a uint32 column, not the seeds' Int32 (the form "
            f"{view.writer} wrote; "
            f"see docs/spec-discrepancies.md): {listed(unsigned, 3)}",
            unsigned[0] if len(unsigned) == 1 else view.at("fragments"),
        )


@rule(
    "deletion/bitmap-layout",
    severity=Severity.ERROR,
    requirements=("deletion.bitmap-layout",),
    summary="A .bin deletion file is a portable 32-bit Roaring bitmap with nothing after it",
)
def bitmap_layout(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status is DeletionStatus.BITMAP_LAYOUT:
            yield f"{_describe(fragment)}: {content.message}", content.location


@rule(
    "deletion/count-matches-metadata",
    severity=Severity.ERROR,
    requirements=("deletion.count-matches-metadata",),
    summary="num_deleted_rows equals the number of distinct offsets the deletion file marks",
)
def count_matches_metadata(view: VersionView):
    for fragment, content in _with_deletions(view):
        if not content.ok:
            continue
        marked = len(content.offsets) + content.distinct_negatives
        if marked != content.deletion_file.num_deleted_rows:
            yield (
                f"{_describe(fragment)}: the deletion file marks {marked} rows, num_deleted_rows says "
                f"{content.deletion_file.num_deleted_rows}",
                content.location,
            )


@rule(
    "deletion/offsets-distinct",
    severity=Severity.ERROR,
    requirements=("deletion.arrow-layout", "deletion.count-matches-metadata"),
    summary="An .arrow deletion file lists each offset once",
)
def offsets_distinct(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.ok and content.repeated > 0:
            yield f"{_describe(fragment)}: {content.repeated} offsets are listed more than once", content.location


@rule(
    "deletion/offsets-in-range",
    severity=Severity.ERROR,
    requirements=("deletion.offsets-in-range",),
    summary="Every deleted offset is at least 0 and below the fragment's physical_rows",
)
def offsets_in_range(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status is DeletionStatus.TOO_MANY:
            yield f"{_describe(fragment)}: {content.message}, so some are repeated or out of range", content.location
        if not content.ok:
            continue
        if content.negatives:
            yield f"{_describe(fragment)}: {content.negatives} offsets are negative", content.location
        if content.offsets and content.offsets.max() >= fragment.physical_rows:
            beyond = len(content.offsets)
            if fragment.physical_rows > 0:
                beyond -= content.offsets.rank(fragment.physical_rows - 1)
            yield (
                f"{_describe(fragment)}: {beyond} offsets (the largest {content.offsets.max()}) are not below its "
                f"{fragment.physical_rows} physical rows",
                content.location,
            )


@rule(
    "deletion/count-within-physical-rows",
    severity=Severity.ERROR,
    requirements=("deletion.count-within-physical-rows",),
    summary="A fragment's num_deleted_rows does not exceed its physical_rows",
)
def count_within_physical_rows(view: VersionView):
    for index, fragment in enumerate(view.manifest.fragments):
        deletion_file = fragment.deletion_file
        if deletion_file is not None and deletion_file.num_deleted_rows > fragment.physical_rows:
            yield (
                f"{_describe(fragment)}: num_deleted_rows {deletion_file.num_deleted_rows} exceeds its "
                f"{fragment.physical_rows} physical rows",
                view.at(f"fragments[{index}].deletion_file.num_deleted_rows"),
            )


@rule(
    "deletion/read-version-earlier",
    severity=Severity.ERROR,
    requirements=("deletion.read-version-earlier",),
    summary="A deletion file's read_version is earlier than the version listing it",
)
def read_version_earlier(view: VersionView):
    for index, fragment in enumerate(view.manifest.fragments):
        deletion_file = fragment.deletion_file
        if deletion_file is not None and deletion_file.read_version >= view.version:
            yield (
                f"{_describe(fragment)}: the deletion file was computed from version {deletion_file.read_version}, "
                f"not earlier than this version {view.version}",
                view.at(f"fragments[{index}].deletion_file.read_version"),
            )


@rule(
    "deletion/absent-when-nothing-deleted",
    severity=Severity.ERROR,
    requirements=("deletion.absent-when-nothing-deleted",),
    summary="A fragment without deleted rows has no deletion file",
)
def absent_when_nothing_deleted(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.ok and content.entries == 0:
            yield f"{_describe(fragment)}: the deletion file marks no row", content.location
        elif (
            not content.ok
            and content.deletion_file.num_deleted_rows == 0
            and content.status not in (DeletionStatus.TOO_MANY, DeletionStatus.TOO_LARGE)
        ):
            yield (
                f"{_describe(fragment)}: num_deleted_rows is 0, yet the fragment names a deletion file",
                content.location,
            )


@rule(
    "deletion/unchecked",
    severity=Severity.INFO,
    requirements=("deletion.offsets-in-range", "deletion.count-matches-metadata"),
    summary="Deletion files too large for this validator to read are reported, not read",
)
def unchecked(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status is DeletionStatus.TOO_LARGE:
            yield f"{_describe(fragment)}: not checked: {content.message}", content.location


# -- files nobody refers to ------------------------------------------------------------

#: Branch directories searched for manifests that may refer to root deletion files.
MAX_BRANCHES = 256
#: Beyond this many manifests (all branches together) the search for
#: unreferenced deletion files is skipped: it would read every one of them.
MAX_MANIFESTS_SCANNED = 2_000


def _referenced_deletion_names(dataset: DatasetView) -> set[str] | None:
    """File names under the root's ``_deletions/`` that a retained manifest
    (of the main branch, or of a branch through a base path) refers to; None
    when some manifest could not be read (then nothing is called unreferenced)."""
    names: set[str] = set()
    root = dataset.storage
    budget = MAX_MANIFESTS_SCANNED - len(dataset.manifest_paths())
    if budget < 0:
        return None
    for version in dataset.manifest_paths():
        loaded = dataset.manifest_file(version)
        if not loaded.ok:
            return None
        _collect(loaded.value.manifest, root, root, names)
    for file_name in root.list_dir(BRANCHES_DIR)[:MAX_BRANCHES]:
        branch = decode_ref_file_name(file_name)
        if branch is None or not is_valid_branch_name(branch):
            continue
        if not root.is_dir(f"{TREE_DIR}/{branch}"):
            continue
        where = root.subtree(f"{TREE_DIR}/{branch}", writable=False)
        try:
            branch_manifests = list_versions(where).manifests()
        except LanceFormatError:
            return None
        budget -= len(branch_manifests)
        if budget < 0:
            return None
        for relpath in branch_manifests.values():
            try:
                manifest = read_manifest_file(where, relpath).manifest
            except LanceFormatError:
                return None
            _collect(manifest, where, root, names)
    return names


def _collect(manifest, storage: Storage, root: Storage, names: set[str]) -> None:
    for fragment in manifest.fragments:
        deletion_file = fragment.deletion_file
        if deletion_file is None or not isinstance(deletion_file.file_type, DeletionFileType):
            continue
        try:
            where, relpath = deletion_file_location(storage, fragment.id, deletion_file, manifest.base_paths)
        except LanceFormatError:
            continue
        if where.root == root.root and relpath.startswith(DELETIONS_DIR + "/"):
            names.add(relpath[len(DELETIONS_DIR) + 1 :])


@rule(
    "deletion/unreferenced-files",
    severity=Severity.INFO,
    requirements=("deletion.path-derived",),
    summary="Every file in _deletions/ has a deletion file name and is referred to by a retained version",
    scope=Scope.DATASET,
)
def unreferenced_files(dataset: DatasetView):
    entries = [name for name in dataset.storage.list_dir(DELETIONS_DIR) if not name.startswith(".")]
    if not entries:
        return
    referenced = _referenced_deletion_names(dataset)
    stray = [name for name in entries if not DELETION_FILE_NAME.match(name)]
    for name in stray[:20]:
        yield f"'{name}' is not named {{fragment_id}}-{{read_version}}-{{id}}.{{arrow|bin}}", f"{DELETIONS_DIR}/{name}"
    if referenced is None:
        return
    orphans = [name for name in entries if DELETION_FILE_NAME.match(name) and name not in referenced]
    if orphans:
        yield (
            f"{len(orphans)} deletion files are referred to by no retained version (left by a failed commit or "
            f"an incomplete cleanup): {listed(orphans)}",
            DELETIONS_DIR,
        )
