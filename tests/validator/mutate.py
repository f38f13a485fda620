"""Mutations of valid datasets, each breaking one validator rule.

A mutation is a function registered with :func:`mutation`: it receives the
root of a fresh copy of a valid base dataset and changes it so that exactly
the named rule fires (plus, where a defect cannot help tripping a related
rule, the rules it declares in ``also``). ``tests/validator/test_mutations.py``
runs every registered mutation, and checks that every error rule has one.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from reference_impl.manifest_file import ManifestFile, encode_manifest_file, read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.storage import Storage
from reference_impl.wire import table_pb2


@dataclass(frozen=True)
class Mutation:
    rule: str
    base: str
    apply: Callable[[Path], None]
    also: frozenset[str]
    name: str


MUTATIONS: list[Mutation] = []


def mutation(rule: str, *, base: str = "plain", also: tuple[str, ...] = ()):
    """Register a mutation that breaks ``rule`` on a copy of base dataset ``base``."""

    def register(apply: Callable[[Path], None]):
        MUTATIONS.append(Mutation(rule, base, apply, frozenset(also), apply.__name__))
        return apply

    return register


def copy_dataset(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True)
    return target


def manifest_relpath(root: Path, version: int | None = None) -> str:
    manifests = list_versions(Storage(root)).manifests()
    return manifests[max(manifests) if version is None else version]


def edit_manifest(root: Path, edit: Callable[[ManifestFile], None], version: int | None = None) -> None:
    """Decode a manifest file, let ``edit`` change its dataclasses, and write
    it back in place (index and transaction sections kept)."""
    storage = Storage(root)
    relpath = manifest_relpath(root, version)
    manifest_file = read_manifest_file(storage, relpath)
    edit(manifest_file)
    data = encode_manifest_file(manifest_file.manifest, manifest_file.indices, manifest_file.transaction)
    (root / relpath).write_bytes(data)


def edit_manifest_message(root: Path, edit: Callable[[table_pb2.Manifest], None], version: int | None = None) -> None:
    """Edit the Manifest protobuf itself, for defects the dataclasses cannot
    express; the file is laid out anew by the reference encoder."""
    from reference_impl.manifest import Manifest

    def apply(manifest_file: ManifestFile) -> None:
        message = manifest_file.manifest.to_proto()
        edit(message)
        manifest_file.manifest = Manifest.from_proto(message)

    edit_manifest(root, apply, version)
