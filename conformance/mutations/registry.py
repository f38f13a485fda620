"""The registry of mutations: named, deliberate breakages of the specification.

A mutation is a function registered with :func:`mutation`. It receives the
root of a fresh copy of a valid base dataset (:mod:`conformance.mutations.bases`)
and changes it on disk so that it now breaks the requirements it names in
``breaks``, and so that the validator rule ``rule`` reports it, at the rule's
severity. Where a defect cannot help tripping a related rule too, the
mutation declares that rule in ``also``; any other error or warning is a
finding the mutation did not expect.

For a requirement that permits something (a MAY, such as a field id reused
after a drop), "breaking" it means using the permission: the rule citing it
then reports an info that says so, and nothing worse.

The registry is filled by importing the topic modules in
:mod:`conformance.mutations.topics`; :func:`conformance.mutations.all_mutations`
(in :mod:`.catalog`, above them) does that.

A second kind of entry lives beside them: a :class:`ManifestMutator`,
registered with :func:`manifest_mutator`, breaks one requirement by editing
a decoded :class:`~reference_impl.manifest.Manifest` (and its index section)
in memory instead of a dataset on disk. It states what the manifest must
hold for the edit to be possible (:class:`ManifestNeeds`), so a generator can
produce such a manifest directly. :func:`manifest_mutators` returns them,
filled from :mod:`conformance.mutations.manifests`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.spec_revisions import SpecRevision
from conformance.validator.engine import newest_revision_of
from conformance.validator.registry import Severity
from conformance.validator.ruleset import rules_by_id
from reference_impl.commit.external_store import SqliteManifestStore

if TYPE_CHECKING:
    from reference_impl.index_metadata import IndexMetadata
    from reference_impl.manifest import Manifest

#: The base every mutation starts from unless it names another.
DEFAULT_BASE = "plain"


@dataclass(frozen=True)
class Mutation:
    """``apply(root)`` edits a copy of base dataset ``base`` so that it
    breaks the requirements ``breaks`` and rule ``rule`` reports it."""

    rule: str
    severity: Severity
    breaks: tuple[str, ...]
    base: str
    apply: Callable[[Path], None]
    also: frozenset[str]
    name: str
    #: Whether the dataset is read together with an external manifest store
    #: (a SQLite store beside the root, :func:`mutation_store`): the
    #: mutation fills and breaks it, and a validator must be given it.
    manifest_store: bool = False

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.name}"

    @property
    def spec_revision(self) -> SpecRevision:
        """The format revision the mutated dataset is validated under: the
        newest one the rule applies under. That is the newest revision for
        every rule citing a requirement still in force, and an earlier one
        for a rule of superseded requirements only (row-id/kept-on-update,
        the seeds' rule on updated rows)."""
        found = newest_revision_of(rules_by_id()[self.rule])
        if found is None:  # a rule no revision runs cannot be tripped: refused when registered
            raise MutationDeclarationError(f"mutation {self.id}: rule {self.rule} applies under no revision")
        return found

    def store_for(self, root: Path) -> SqliteManifestStore | None:
        """The external manifest store to validate ``root`` with (None when
        the mutation uses none)."""
        return mutation_store(root) if self.manifest_store else None


def mutation_store(root: Path) -> SqliteManifestStore:
    """The SQLite manifest store kept beside the dataset at ``root`` by the
    mutations that need one (outside the root, so a copy of the dataset
    does not carry it)."""
    return SqliteManifestStore(Path(root).parent / f"{Path(root).name}.manifest-store.sqlite")


_MUTATIONS: dict[str, Mutation] = {}


class MutationDeclarationError(ValueError):
    """A mutation names an unknown rule, or requirements its rule does not cite."""


def mutation(
    rule: str,
    *,
    breaks: tuple[str, ...] | str | None = None,
    base: str = DEFAULT_BASE,
    also: tuple[str, ...] = (),
    manifest_store: bool = False,
):
    """Register a mutation that ``rule`` must report on a copy of base ``base``.

    ``breaks`` names the requirements the change violates, among those the
    rule cites; it may be left out when the rule cites exactly one.
    ``manifest_store``: the mutation breaks the dataset together with its
    external manifest store (:func:`mutation_store`)."""

    def register(apply: Callable[[Path], None]):
        known = rules_by_id()
        if rule not in known:
            raise MutationDeclarationError(f"mutation {apply.__name__}: no rule {rule!r}")
        cited = known[rule].requirements
        broken: tuple[str, ...]
        if breaks is None:
            if len(cited) != 1:
                raise MutationDeclarationError(
                    f"mutation {apply.__name__}: rule {rule} cites {list(cited)}; say which one it breaks"
                )
            broken = cited
        else:
            broken = (breaks,) if isinstance(breaks, str) else tuple(breaks)
        stray = [r for r in broken if r not in cited]
        if stray or not broken:
            raise MutationDeclarationError(
                f"mutation {apply.__name__}: rule {rule} does not cite {stray or 'an empty list'}"
            )
        if newest_revision_of(known[rule]) is None:
            raise MutationDeclarationError(f"mutation {apply.__name__}: rule {rule} applies under no format revision")
        unknown_also = [r for r in also if r not in known]
        if unknown_also:
            raise MutationDeclarationError(f"mutation {apply.__name__}: no rules {unknown_also}")
        entry = Mutation(
            rule, known[rule].severity, broken, base, apply, frozenset(also), apply.__name__, manifest_store
        )
        if entry.id in _MUTATIONS:
            raise MutationDeclarationError(f"mutation {entry.id} is registered twice")
        _MUTATIONS[entry.id] = entry
        return apply

    return register


def registered_mutations() -> list[Mutation]:
    """The mutations registered so far, by id (:func:`.catalog.all_mutations`
    loads every topic module first)."""
    return [_MUTATIONS[key] for key in sorted(_MUTATIONS)]


@dataclass(frozen=True)
class ManifestNeeds:
    """What a manifest must hold for a :class:`ManifestMutator` to apply: at
    least so many fragments, top-level fields and indices; stable row ids
    (True), none (False) or either (None); a deletion file (True) or either
    (None). The fields have the meaning, and the defaults, of the
    like-named arguments of :func:`conformance.strategies.indexed_manifests`."""

    min_fragments: int = 0
    min_fields: int = 1
    min_indices: int = 0
    stable_row_ids: bool | None = None
    deletions: bool | None = None


@dataclass(frozen=True)
class ManifestMutator:
    """``apply(manifest, indices)`` edits a valid manifest and its index
    section in place so that they break ``requirement``; possible whenever
    the manifest holds what ``needs`` says."""

    requirement: str
    needs: ManifestNeeds
    apply: Callable[[Manifest, list[IndexMetadata]], None]
    name: str


_MANIFEST_MUTATORS: dict[str, ManifestMutator] = {}


def manifest_mutator(requirement: str, needs: ManifestNeeds = ManifestNeeds()):
    """Register a manifest mutator breaking ``requirement``, a requirement
    some validator rule cites; one mutator per requirement."""

    def register(apply: Callable[[Manifest, list[IndexMetadata]], None]):
        cited = {r for rule in rules_by_id().values() for r in rule.requirements}
        if requirement not in cited:
            raise MutationDeclarationError(f"manifest mutator {apply.__name__}: no rule cites {requirement!r}")
        if requirement in _MANIFEST_MUTATORS:
            raise MutationDeclarationError(f"manifest mutator for {requirement} is registered twice")
        _MANIFEST_MUTATORS[requirement] = ManifestMutator(requirement, needs, apply, apply.__name__)
        return apply

    return register


def registered_manifest_mutators() -> dict[str, ManifestMutator]:
    """The manifest mutators registered so far, by requirement id
    (:func:`.catalog.manifest_mutators` loads them first)."""
    return dict(sorted(_MANIFEST_MUTATORS.items()))
