"""Mutations, one module per topic of the specification (the same topics as
the validator's rules). :func:`conformance.mutations.all_mutations` imports
every module here; a new topic module needs no other wiring."""
