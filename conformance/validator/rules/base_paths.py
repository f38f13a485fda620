"""Rules on base paths (table format: layout, base path system)."""

from __future__ import annotations

from collections import Counter

from reference_impl.fragments import Fragment
from reference_impl.storage import local_path
from reference_impl.transactions import Clone, Restore

from ..context import DatasetView, VersionView
from ..facts.data_files import FileStatus, base_storages, check_file, each_data_file, locate
from ..facts.fragment_checks import per_fragment
from ..facts.text import listed, printable, uses
from ..facts.transactions import clone_source_bases, recorded_transaction, version_state
from ..registry import Finding, Severity, rule

EXISTS_REQUIREMENTS = ("base-path.resolution", "data-file.exists")


def _base_ids_in_use(view: VersionView) -> dict[int, list[str]]:
    """``{base_id: [what uses it, ...]}`` over data files, deletion files and
    indices; computed once per version (two rules ask), not to be modified."""
    return view.memo("base_paths.ids-in-use", lambda: _find_base_ids_in_use(view))


def _uses_a_base(fragment: Fragment) -> bool:
    # A loop rather than any() over a generator: asked of every fragment, and
    # the generator costs several times the test.
    for data_file in fragment.files:
        if data_file.base_id is not None:
            return True
    deletion = fragment.deletion_file
    return deletion is not None and deletion.base_id is not None


def _any_fragment_uses_a_base(view: VersionView) -> bool:
    """Whether a data or deletion file of the version names a base (most
    tables name none), from each fragment's answer kept for the run; asked
    once per version (two rules ask)."""
    return view.memo(
        "base_paths.any-uses-a-base", lambda: any(per_fragment(view, "base_paths.uses-a-base", _uses_a_base))
    )


def _find_base_ids_in_use(view: VersionView) -> dict[int, list[str]]:
    users: dict[int, list[str]] = {}
    fragments = view.manifest.fragments if _any_fragment_uses_a_base(view) else []
    for f_index, fragment in enumerate(fragments):
        for d_index, data_file in enumerate(fragment.files):
            if data_file.base_id is not None:
                users.setdefault(data_file.base_id, []).append(f"fragments[{f_index}].files[{d_index}]")
        deletion = fragment.deletion_file
        if deletion is not None and deletion.base_id is not None:
            users.setdefault(deletion.base_id, []).append(f"fragments[{f_index}].deletion_file")
    for i_index, index in enumerate(view.manifest_file.indices or ()):
        if index.base_id is not None:
            users.setdefault(index.base_id, []).append(f"indices[{i_index}] ({index.name})")
    return users


@rule(
    "base-path/ids-unique",
    severity=Severity.ERROR,
    requirements=("base-path.ids-unique",),
    summary="No two base path entries share an id",
)
def ids_unique(view: VersionView):
    repeated = sorted(i for i, n in Counter(b.id for b in view.manifest.base_paths).items() if n > 1)
    if repeated:
        yield f"base path ids {listed(repeated)} are declared more than once", view.at("base_paths")


@rule(
    "base-path/ids-sequential",
    severity=Severity.INFO,
    requirements=("base-path.ids-sequential",),
    summary="Base path ids count up from 0",
)
def ids_sequential(view: VersionView):
    ids = sorted({b.id for b in view.manifest.base_paths})
    if ids and ids != list(range(len(ids))):
        yield (
            f"base path ids are [{listed(ids)}] rather than 0 to {len(ids) - 1} ({view.writer} numbered them so, "
            "see docs/spec-discrepancies.md)",
            view.at("base_paths"),
        )


@rule(
    "base-path/base-id-declared",
    severity=Severity.ERROR,
    requirements=("base-path.base-id-declared", "base-path.absent-means-root"),
    summary="Every base_id of a data file, deletion file or index names a declared base path",
)
def base_id_declared(view: VersionView):
    declared = {b.id for b in view.manifest.base_paths}
    for base_id, users in sorted(_base_ids_in_use(view).items()):
        if base_id not in declared:
            yield (
                f"base_id {base_id} is not declared in base_paths but {uses(len(users))} it ({listed(users, 3)})",
                view.at(users[0].split(" ", 1)[0]),
            )


@rule(
    "base-path/absolute",
    severity=Severity.INFO,
    requirements=("base-path.absolute",),
    summary="Base paths are absolute (pylance stores a relative path as it was given)",
)
def absolute(view: VersionView):
    for index, base in enumerate(view.manifest.base_paths):
        if not base.path or "://" in base.path:
            continue  # empty: base-path/exists reports it; a URI is absolute by construction
        if not local_path(base.path).is_absolute():
            yield (
                f"base path {base.id} is the relative path '{printable(base.path, 200)}'; it is resolved against the "
                f"dataset root ({view.writer} stored it as it was given, see docs/spec-discrepancies.md)",
                view.at(f"base_paths[{index}]"),
            )


@rule(
    "base-path/exists",
    severity=Severity.ERROR,
    requirements=EXISTS_REQUIREMENTS,
    summary="A base path that files of the version use is an existing directory",
)
def exists(view: VersionView):
    bases = base_storages(view)
    users = _base_ids_in_use(view)
    for index, base in enumerate(view.manifest.base_paths):
        found = bases.get(base.id)
        if found is None or found.status is FileStatus.OK:
            continue
        using = users.get(base.id, [])
        where = view.at(f"base_paths[{index}]")
        if found.status is FileStatus.BASE_UNUSABLE:
            yield Finding(
                "base-path/exists",
                Severity.INFO,
                EXISTS_REQUIREMENTS,
                f"base path {base.id} ('{printable(base.path, 200)}') cannot be checked: {found.problem}",
                view.version,
                where,
            )
        elif using:
            state = "is not usable" if found.status is FileStatus.BASE_INVALID else "does not exist"
            yield (
                f"base path {base.id} ('{printable(base.path, 200)}') {state} ({found.problem}), but "
                f"{uses(len(using))} it ({listed(using, 3)})",
                where,
            )
        else:
            yield Finding(
                "base-path/exists",
                Severity.INFO,
                EXISTS_REQUIREMENTS,
                f"base path {base.id} ('{printable(base.path, 200)}') is not usable or does not exist "
                f"({found.problem}); no file of this version uses it",
                view.version,
                where,
            )


@rule(
    "base-path/dataset-root-flag",
    severity=Severity.WARNING,
    requirements=("base-path.resolution",),
    summary="is_dataset_root matches where the base's files are (under data/ for a dataset root, directly otherwise)",
)
def dataset_root_flag(view: VersionView):
    if not _any_fragment_uses_a_base(view):
        return
    bases = base_storages(view)
    misplaced: dict[int, list[str]] = {}
    for _, _, data_file in each_data_file(view):
        if data_file.base_id is None:
            continue
        located = locate(view, data_file, bases)
        if located.status is not FileStatus.MISSING:
            continue
        base = bases[data_file.base_id]
        storage = base.usable_storage
        if storage is None:
            continue  # cannot happen: a file is MISSING only under a usable base
        other = data_file.path if base.is_dataset_root else f"data/{data_file.path}"
        if check_file(storage, other).status is FileStatus.OK:
            misplaced.setdefault(data_file.base_id, []).append(printable(other))
    for index, declared in enumerate(view.manifest.base_paths):
        files = misplaced.pop(declared.id, None)
        if files:
            flag = "true" if declared.is_dataset_root else "false"
            yield (
                f"base path {declared.id} has is_dataset_root {flag}, but its data files are at "
                f"{listed(files, 3)} as if it were {'not ' if declared.is_dataset_root else ''}a dataset root",
                view.at(f"base_paths[{index}]"),
            )


def _shallow_clone_source(dataset: DatasetView) -> tuple[int, frozenset[int]] | None:
    """(version, ids of the source's base paths) when the oldest retained
    version is a shallow Clone, as the first version of a clone is; None
    otherwise (not a clone, or the Clone was cleaned up)."""

    def compute() -> tuple[int, frozenset[int]] | None:
        versions = sorted(dataset.manifest_paths())
        view = dataset.version_view(versions[0]) if versions else None
        if view is None:
            return None
        found = recorded_transaction(view)
        if found is None or not isinstance(found[0].operation, Clone) or not found[0].operation.is_shallow:
            return None
        source = clone_source_bases(view.manifest, found[0].operation)
        return (view.version, frozenset(source)) if source else None

    return dataset.cached(("base-paths:shallow-clone-source",), compute).value


@rule(
    "base-path/clone-writes-local",
    severity=Severity.ERROR,
    requirements=("base-path.clone-writes-local",),
    summary="After a shallow Clone, new data files, deletion files and indices go under the clone's own "
    "location, never under the source's base path",
)
def clone_writes_local(view: VersionView):
    clone = _shallow_clone_source(view.dataset)
    if clone is None or view.version <= clone[0]:
        return
    found = recorded_transaction(view)
    if found is not None and isinstance(found[0].operation, (Clone, Restore)):
        return  # the files of a restored version were written before
    source = clone[1]
    current, previous = version_state(view.dataset, view.version), version_state(view.dataset, view.version - 1)
    if current is None or previous is None:
        return
    old_files = {(d.base_id, d.path) for f in previous.fragments.values() for d in f.files}
    data, deletions = [], []
    for fragment_id, fragment in sorted(current.fragments.items()):
        if any(d.base_id in source and (d.base_id, d.path) not in old_files for d in fragment.files):
            data.append(fragment_id)
        deletion = fragment.deletion_file
        before = previous.fragments.get(fragment_id)
        if deletion is not None and deletion.base_id in source and (before is None or before.deletion_file != deletion):
            deletions.append(fragment_id)
    old_indices = {i.uuid for i in previous.indices}
    indices = sorted({i.name for i in current.indices if i.base_id in source and i.uuid not in old_indices})
    where = f"the shallow clone's source (base path {listed(source, sort=True)})"
    if data:
        yield (
            f"fragment(s) {listed(data, sort=True)} have data files new in this version under {where}",
            view.at("fragments"),
        )
    if deletions:
        yield (
            f"fragment(s) {listed(deletions, sort=True)} have deletion files new in this version under {where}",
            view.at("fragments"),
        )
    if indices:
        yield (
            f"index(es) {listed((repr(n) for n in indices), sort=True)} new in this version are under {where}",
            view.at("index_section"),
        )
