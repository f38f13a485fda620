"""Zoo features about a dataset's history: tags, branches, shallow and deep
clones, cleanup with tagged versions kept, V1 and V2 manifest naming and the
migration between them, compaction and deferred index remap."""

from __future__ import annotations

import datetime
from pathlib import Path

from . import data
from .model import Feature, FeatureUnavailable, require
from .writing import append, open_dataset, visible_ids, write

#: ``u64::MAX``: V2 manifest names count down from it.
U64_MAX = (1 << 64) - 1


def _manifest_names(path: Path) -> list[str]:
    return sorted(p.name for p in (path / "_versions").glob("*.manifest"))


def build_tags(path: Path) -> None:
    """Tags on two versions, one moved to a later version."""
    write(data.rows(0, 10), path)
    append(data.rows(10, 10), path)
    append(data.rows(20, 10), path)
    tags = open_dataset(path).tags
    tags.create("first", 1)
    tags.create("moving", 1)
    tags.update("moving", 3)
    found = {name: tag["version"] for name, tag in open_dataset(path).tags.list().items()}
    require(found == {"first": 1, "moving": 3}, f"tags {found}")


def build_branches(path: Path) -> None:
    """A branch from version 2 with its own appends and delete, a branch of
    that branch, and the main line moving on."""
    write(data.rows(0, 10), path)
    append(data.rows(10, 10), path)
    dataset = open_dataset(path)
    if not hasattr(dataset, "create_branch"):
        raise FeatureUnavailable("branches: LanceDataset.create_branch is missing")
    branch = dataset.create_branch("dev", 2)
    append(data.rows(100, 5), branch)
    dev = open_dataset(path / "tree" / "dev")
    dev.delete("id = 3")
    dev.create_branch("dev/nested")
    append(data.rows(20, 10), path)
    require(visible_ids(path / "tree" / "dev") == [i for i in range(20) if i != 3] + list(range(100, 105)), "dev")
    require(visible_ids(path) == list(range(30)), f"main ids {visible_ids(path)[:3]}...")


def _clone_source(path: Path) -> Path:
    """The clone's source, a sibling; tagged ``published`` at version 2."""
    source = (path.parent / f"{path.name}-source").absolute()
    write(data.rows(0, 10), source)
    append(data.rows(10, 10), source)
    open_dataset(source).tags.create("published", 2)
    append(data.rows(20, 10), source)
    return source


def build_shallow_clone(path: Path) -> None:
    """A shallow clone of a tagged version: its fragments live under the
    source's base path; then an append of its own."""
    _clone_source(path)
    open_dataset(path.parent / f"{path.name}-source").shallow_clone(str(path.absolute()), "published")
    append(data.rows(30, 5), path)
    require(len(open_dataset(path).base_paths()) == 1, f"base paths {open_dataset(path).base_paths()}")
    require(visible_ids(path) == list(range(20)) + list(range(30, 35)), "the clone holds other rows")


def build_deep_clone(path: Path) -> None:
    """A deep clone of a tagged version: every file copied; then an append."""
    source = _clone_source(path)
    dataset = open_dataset(source)
    if not hasattr(dataset, "deep_clone"):
        raise FeatureUnavailable("deep clones: LanceDataset.deep_clone is missing")
    dataset.deep_clone(str(path.absolute()), "published")
    append(data.rows(30, 5), path)
    require(not open_dataset(path).base_paths(), f"base paths {open_dataset(path).base_paths()}")


def build_cleanup_with_tags(path: Path) -> None:
    """Five versions; version 2 tagged; cleanup removes every old version
    except the tagged one (a gap in the history that is not a skipped commit)."""
    write(data.rows(0, 10), path)
    for start in (10, 20, 30, 40):
        append(data.rows(start, 10), path)
    open_dataset(path).tags.create("kept", 2)
    open_dataset(path).cleanup_old_versions(older_than=datetime.timedelta(0), error_if_tagged_old_versions=False)
    names = _manifest_names(path)
    require(len(names) == 2, f"manifests after cleanup {names}")


def build_naming_v1(path: Path) -> None:
    """Manifests named ``{version}.manifest``."""
    write(data.rows(0, 10), path, enable_v2_manifest_paths=False)
    append(data.rows(10, 10), path)
    open_dataset(path).delete("id = 3")
    require(_manifest_names(path) == ["1.manifest", "2.manifest", "3.manifest"], f"{_manifest_names(path)}")


def build_naming_v2(path: Path) -> None:
    """Manifests named ``{u64::MAX - version:020}.manifest``."""
    write(data.rows(0, 10), path, enable_v2_manifest_paths=True)
    append(data.rows(10, 10), path)
    expected = sorted(f"{U64_MAX - v:020d}.manifest" for v in (1, 2))
    require(_manifest_names(path) == expected, f"{_manifest_names(path)}")


def build_naming_migration(path: Path) -> None:
    """V1 names, ``migrate_manifest_paths_v2``, then more commits (V2 names)."""
    write(data.rows(0, 10), path, enable_v2_manifest_paths=False)
    append(data.rows(10, 10), path)
    dataset = open_dataset(path)
    if not hasattr(dataset, "migrate_manifest_paths_v2"):
        raise FeatureUnavailable("manifest naming migration: migrate_manifest_paths_v2 is missing")
    dataset.migrate_manifest_paths_v2()
    append(data.rows(20, 10), path)
    names = _manifest_names(path)
    require(all(len(name) == len("0" * 20 + ".manifest") for name in names), f"manifests {names}")


def build_compaction(path: Path) -> None:
    """Six small fragments with deletions compacted into one, a BTREE index remapped."""
    write(data.rows(0, 10), path)
    for start in range(10, 60, 10):
        append(data.rows(start, 10), path)
    dataset = open_dataset(path)
    dataset.create_scalar_index("id", "BTREE", name="id_btree")
    dataset.delete("id % 9 = 0")
    metrics = open_dataset(path).optimize.compact_files(target_rows_per_fragment=1000)
    require(metrics.fragments_removed == 6 and metrics.fragments_added == 1, f"compaction {metrics}")


def build_deferred_index_remap(path: Path) -> None:
    """A compaction with ``defer_index_remap``: the index keeps pointing at
    the old fragments and a fragment reuse index records the move; then the
    index is brought up to date by ``optimize_indices``."""
    write(data.rows(0, 10), path)
    for start in range(10, 40, 10):
        append(data.rows(start, 10), path)
    open_dataset(path).create_scalar_index("id", "BTREE", name="id_btree")
    try:
        open_dataset(path).optimize.compact_files(target_rows_per_fragment=1000, defer_index_remap=True)
    except TypeError as exc:
        raise FeatureUnavailable(f"deferred index remap: compact_files(defer_index_remap=True): {exc}") from exc
    names = [index.name for index in open_dataset(path).describe_indices()]
    require("__lance_frag_reuse" in names, f"indices after the deferred compaction {names}")
    append(data.rows(40, 5), path)
    open_dataset(path).optimize.optimize_indices()


def build_multiple_bases(path: Path) -> None:
    """Data files under two extra base paths (siblings ``<name>-zeta`` and
    ``<name>-alpha``, registered in that order) and under the dataset's own."""
    try:
        from lance import DatasetBasePath  # lazy: pylance is optional (the test extra)
    except ImportError as exc:
        raise FeatureUnavailable(f"base paths: lance.DatasetBasePath is missing: {exc}") from exc
    zeta, alpha = (path.parent / f"{path.name}-zeta").absolute(), (path.parent / f"{path.name}-alpha").absolute()
    bases = [DatasetBasePath(str(zeta), name="zeta"), DatasetBasePath(str(alpha), name="alpha")]
    write(data.rows(0, 10), path, initial_bases=bases, target_bases=["zeta"])
    append(data.rows(10, 10), path, target_bases=["alpha"])
    append(data.rows(20, 10), path)
    open_dataset(path).delete("id = 15")
    require(len(open_dataset(path).base_paths()) == 2, f"base paths {open_dataset(path).base_paths()}")


FEATURES: tuple[Feature, ...] = (
    Feature("tags", "tags created and moved", build_tags, cheap=True),
    Feature("branches", "a branch with its own commits, a branch of it, the main line moving on", build_branches),
    Feature("shallow_clone", "a shallow clone of a tagged version, then an append", build_shallow_clone),
    Feature("deep_clone", "a deep clone of a tagged version, then an append", build_deep_clone),
    Feature("cleanup_with_tags", "cleanup_old_versions keeping a tagged version", build_cleanup_with_tags),
    Feature("naming_v1", "V1 manifest names", build_naming_v1),
    Feature("naming_v2", "V2 manifest names", build_naming_v2),
    Feature("naming_migration", "V1 names migrated to V2, then commits", build_naming_migration),
    Feature("compaction", "compaction of small fragments with deletions and an index", build_compaction),
    Feature("multiple_bases", "data files under two registered base paths and the root", build_multiple_bases),
    Feature(
        "deferred_index_remap", "compaction with defer_index_remap, then optimize_indices", build_deferred_index_remap
    ),
)
