"""Deliberate, named breakages of the specification, for testing validators.

Each :class:`Mutation` turns a copy of a valid dataset into one that breaks
the requirements it names (catalog ids, ``conformance/data/requirements.json``)
and that a validator rule must report. They are how this project proves its
own validator complete (every requirement a rule checks has a mutation, and
every mutation trips the rule), and they are public so that another validator
or reader can be held to the same cases::

    from conformance.mutations import all_mutations, build_bases, copy_dataset

    bases = build_bases(workdir / "bases")             # valid datasets
    for m in all_mutations():
        root = copy_dataset(bases[m.base], workdir / m.name)
        m.apply(root)
        assert my_validator_rejects(root, m.breaks)     # yours

A mutation breaks the format as its rule's newest revision states it
(``m.spec_revision``: the newest revision for most, an earlier one for a
rule of superseded requirements only); a validator of another revision
should judge it under that one.

:func:`conformance.strategies.mutations` draws them in Hypothesis tests.

Manifest mutators (:func:`manifest_mutators`) are the in-memory kind: each
breaks one requirement by editing a decoded manifest, and
:func:`conformance.strategies.manifest_mutations` draws them.
"""

from .bases import BASES, build_bases
from .catalog import all_mutations, broken_requirements, manifest_mutators
from .edit import copy_dataset
from .registry import (
    ManifestMutator,
    ManifestNeeds,
    Mutation,
    MutationDeclarationError,
    manifest_mutator,
    mutation,
)

__all__ = [
    "BASES",
    "ManifestMutator",
    "ManifestNeeds",
    "Mutation",
    "MutationDeclarationError",
    "all_mutations",
    "broken_requirements",
    "build_bases",
    "copy_dataset",
    "manifest_mutator",
    "manifest_mutators",
    "mutation",
]
