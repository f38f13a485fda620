"""The few pylance calls every builder makes, and checks on what it wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from .model import FeatureUnavailable, require


def lance() -> Any:
    """The pylance module."""
    # lazy: pylance is optional (the test extra); only building the zoo needs it
    import lance as pylance

    return pylance


def write(table: pa.Table, path: Path | Any, **options) -> Any:
    """``lance.write_dataset`` of ``table`` at ``path``, or into ``path``
    when it is an opened dataset (a branch's, say: its URI alone would not
    name the branch)."""
    return lance().write_dataset(table, str(path) if isinstance(path, Path) else path, **options)


def append(table: pa.Table, path: Path | Any, **options) -> Any:
    return write(table, path, mode="append", **options)


def open_dataset(path: Path, **options) -> Any:
    return lance().dataset(str(path), **options)


def offered(owner: Any, attribute: str, what: str) -> Any:
    """``owner.attribute``, or :class:`FeatureUnavailable` naming ``what``
    when the installed release lacks it."""
    found = getattr(owner, attribute, None)
    if found is None:
        raise FeatureUnavailable(f"{what}: {getattr(owner, '__name__', type(owner).__name__)}.{attribute} is missing")
    return found


def index_types(path: Path) -> dict[str, str]:
    """``{index name: index type}`` as pylance describes the latest version."""
    return {index.name: index.index_type for index in open_dataset(path).describe_indices()}


def require_index(path: Path, name: str) -> None:
    names = index_types(path)
    require(name in names, f"index {name!r} is missing, the dataset has {sorted(names)}")


def file_versions(path: Path, version: int | None = None) -> set[str]:
    """The data file versions (``"2.1"``, ...) of the version's fragments."""
    dataset = open_dataset(path, version=version)
    return {
        f"{data_file.file_major_version}.{data_file.file_minor_version}"
        for fragment in dataset.get_fragments()
        for data_file in fragment.metadata.files
    }


def deletion_kinds(path: Path) -> set[str]:
    """The deletion file extensions of the latest version's fragments."""
    kinds = set()
    for fragment in open_dataset(path).get_fragments():
        deletion_file = fragment.metadata.deletion_file
        if deletion_file is not None:
            kinds.add(deletion_file.path(fragment.fragment_id).rsplit(".", 1)[-1])
    return kinds


def visible_ids(path: Path, version: int | None = None) -> list[int]:
    return sorted(open_dataset(path, version=version).to_table(columns=["id"]).column("id").to_pylist())
