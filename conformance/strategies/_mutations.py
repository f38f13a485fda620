"""Strategies for mutations: a valid object plus one requirement it now
breaks, drawn from the registry in :mod:`conformance.mutations` (dataset
mutations on disk, manifest mutators in memory)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from hypothesis import strategies as st

from conformance.mutations import Mutation, broken_requirements, copy_dataset, manifest_mutators
from reference_impl import feature_flags as ff
from reference_impl.fragments import DeletionFile, DeletionFileType
from reference_impl.index_metadata import IndexMetadata
from reference_impl.manifest import Manifest

from ._arguments import selection
from ._manifests import indexed_manifests


class DatasetMutation(NamedTuple):
    """A requirement of the catalog and a registered mutation
    (:class:`conformance.mutations.Mutation`) that breaks it. The valid
    object is the mutation's base dataset, ``mutation.base``, one of
    :data:`conformance.mutations.BASES`."""

    requirement_id: str
    mutation: Mutation

    def apply_to_copy(self, bases: Mapping[str, Path], directory: Path) -> Path:
        """Copy the base (``bases`` maps base names to valid datasets, as
        :func:`conformance.mutations.build_bases` returns) into
        ``directory`` and break it; the broken dataset's root."""
        root = copy_dataset(Path(bases[self.mutation.base]), Path(directory) / self.mutation.name)
        self.mutation.apply(root)
        return root


def mutated_requirements() -> set[str]:
    """The requirement ids :func:`mutations` can draw."""
    return set(broken_requirements())


def mutations(requirement_ids: Iterable[str] | None = None) -> st.SearchStrategy[DatasetMutation]:
    """:class:`DatasetMutation`: a requirement (one of ``requirement_ids``,
    default every one :func:`mutated_requirements` holds; one no mutation
    breaks is an ``InvalidArgument``), then one of the registered mutations
    that break it. Guarantee: applied to a copy of its base, the mutation
    makes the validator rule it names report a finding citing
    ``requirement_id`` when validated under ``mutation.spec_revision`` (the
    newest revision, except for the rules of superseded requirements;
    tests/conformance/validator/test_mutations.py holds every registered
    mutation to that).

    Shrinks towards the first requirement id in sorted order and its first
    mutation by id."""
    by_requirement = broken_requirements()
    chosen = selection("requirements broken by a registered mutation", requirement_ids, by_requirement)
    return st.sampled_from(chosen).flatmap(
        lambda requirement: st.sampled_from(by_requirement[requirement]).map(
            lambda mutation: DatasetMutation(requirement, mutation)
        )
    )


class ManifestMutation(NamedTuple):
    """``valid`` and ``mutated`` are manifests (with their index sections,
    ``valid_indices`` / ``mutated_indices``); ``mutated`` breaks exactly the
    requirement ``requirement_id`` of the catalog (conformance/requirements)."""

    valid: Manifest
    requirement_id: str
    mutated: Manifest
    valid_indices: list[IndexMetadata]
    mutated_indices: list[IndexMetadata]


@st.composite
def _manifest_mutations(draw, requirements: list[str]) -> ManifestMutation:
    requirement = draw(st.sampled_from(requirements))
    mutator = manifest_mutators()[requirement]
    needs = mutator.needs
    manifest, found = draw(indexed_manifests(**dataclasses.asdict(needs)))
    if needs.deletions and not any(f.deletion_file for f in manifest.fragments):
        # every fragment drew a single row: give the first one a second row
        frag = manifest.fragments[0]
        frag.physical_rows = 2
        frag.deletion_file = DeletionFile(DeletionFileType.ARROW_ARRAY, max(manifest.version - 1, 1), 0, 1)
        if frag.row_id_sequence is not None:  # pragma: no cover - deletions never asked with stable ids
            raise AssertionError("deletion mutators do not combine with stable row ids")
        manifest.reader_feature_flags |= ff.DELETION_FILES
        manifest.writer_feature_flags |= ff.DELETION_FILES
    mutated, mutated_indices = copy.deepcopy(manifest), copy.deepcopy(found)
    mutator.apply(mutated, mutated_indices)
    return ManifestMutation(manifest, requirement, mutated, found, mutated_indices)


def manifest_mutations(requirement_ids: Iterable[str] | None = None) -> st.SearchStrategy[ManifestMutation]:
    """:class:`ManifestMutation`: a valid manifest (from
    :func:`indexed_manifests`, drawn with what the mutator needs, so nothing
    is filtered) and a copy edited by one of
    :func:`conformance.mutations.manifest_mutators` (restricted to
    ``requirement_ids`` when given; one no manifest mutator breaks is an
    ``InvalidArgument``). Guarantee: ``valid`` satisfies every
    manifest-level requirement :func:`manifests` promises, and ``mutated``
    differs from it only by the one edit.

    Shrinks towards a requirement whose mutator needs the least (no
    fragments, no indices), on the smallest manifest it can edit."""
    chosen = selection("requirements broken by a manifest mutator", requirement_ids, manifest_mutators())
    return _manifest_mutations(chosen)
