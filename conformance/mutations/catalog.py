"""Every mutation and manifest mutator. The topic modules and
:mod:`.manifests` register theirs with :mod:`.registry` when imported; this
module imports them, from above, so that the registry never imports its own
plugins."""

from __future__ import annotations

import importlib
import pkgutil

from . import (
    manifests,  # noqa: F401  (importing registers the manifest mutators)
    topics,
)
from .registry import ManifestMutator, Mutation, registered_manifest_mutators, registered_mutations


def all_mutations() -> list[Mutation]:
    """Every registered mutation, by id (imports every topic module once)."""
    for module in pkgutil.iter_modules(topics.__path__):
        importlib.import_module(f"{topics.__name__}.{module.name}")
    return registered_mutations()


def broken_requirements() -> dict[str, list[Mutation]]:
    """Requirement id -> the mutations that break it."""
    found: dict[str, list[Mutation]] = {}
    for entry in all_mutations():
        for requirement in entry.breaks:
            found.setdefault(requirement, []).append(entry)
    return found


def manifest_mutators() -> dict[str, ManifestMutator]:
    """Requirement id -> the manifest mutator that breaks it (each of those
    requirements also has a dataset mutation among :func:`all_mutations`)."""
    return registered_manifest_mutators()
