"""Hypothesis strategies for the Lance table format (public API).

These are the generators the conformance suite explores the format with, and
the ones a third-party implementation can use for its own property tests.
Every strategy yields objects that are valid *by construction* (no rejection
sampling, so they shrink towards small, readable counterexamples), and each
docstring says which guarantee holds and what it shrinks towards.

Examples (``my_read``, ``my_write``, ``my_decode_manifest`` and
``my_validate`` stand for your own code)::

    from hypothesis import given
    from conformance import strategies as lst

    @given(lst.arrow_tables())
    def test_my_writer(table):                 # round trip through your code
        assert my_read(my_write(table)).equals(table)

    @given(lst.manifests())
    def test_my_manifest_codec(manifest):      # a reference Manifest object
        data = encode_manifest_file(manifest)
        assert my_decode_manifest(data).version == manifest.version

    @given(lst.mutations())
    def test_my_validator(bases, tmp_path_factory, m):   # one broken requirement
        root = m.apply_to_copy(bases, tmp_path_factory.mktemp("m"))
        assert m.requirement_id in my_validate(root)

Arguments. Sizes are keyword-only ``min_<thing>`` / ``max_<thing>`` pairs
with the same defaults everywhere (``max_<thing>=None``: the larger of the
minimum and a default: 8 rows, 4 top-level fields, 4 fragments, 3 indices,
4 writers, 6 steps; ``max_leaves`` of nested types: 10). A caller's mistake
(a negative size, a minimum above its maximum, a name nothing knows, an
empty selection) raises :class:`hypothesis.errors.InvalidArgument` when the
strategy is built.

The strategies, by domain (one private module each):

* types and schemas: :func:`logical_types`, :func:`arrow_fields`,
  :func:`arrow_schemas`, :func:`schemas`;
* tables: :func:`arrow_data_types`, :func:`arrow_values`,
  :func:`arrow_tables`;
* manifests: :func:`sorted_row_ids`, :func:`row_id_sequences`,
  :func:`deletion_vectors`, :func:`fragments`, :func:`indices`,
  :func:`manifests`, :func:`indexed_manifests`;
* transactions: :func:`transactions`, :func:`wire_transactions` (anything
  the transaction proto can carry, for codec round trips);
* races: :func:`commit_schedules` (a :class:`CommitSchedule`: a base
  dataset and :class:`ScheduledWriter` entries, each the version it read and
  one operation of the write vocabulary (:mod:`conformance.drivers.writes`)
  built on it, of the kinds in :data:`SCHEDULED_KINDS`; ``run(path, how,
  driver=...)`` performs it through a driver's ``write`` (the reference's by
  default; any driver declaring ``write-at-version``), serially, in threads
  or in processes (:class:`RunMode`), and gives a :class:`ScheduleRun` of one
  :class:`ScheduledOutcome` per writer, whose ``serial()`` is the
  :class:`TableState` the acknowledged writes give in version order);
* recipes: :func:`dataset_recipes` (whole datasets on disk: a
  :class:`DatasetRecipe` of write-vocabulary operations of the kinds in
  :data:`STEP_KINDS`, written by ``build(path, driver=...)`` through a
  driver's ``write``, the reference's by default; :class:`ManifestNaming`
  names the manifest scheme of recipes and schedules);
* mutations: :func:`mutations` (a :class:`DatasetMutation`: a requirement
  and a registered dataset mutation that breaks it,
  :mod:`conformance.mutations`), :func:`mutated_requirements` (the
  requirements it can draw), :func:`manifest_mutations` (a
  :class:`ManifestMutation`: the same idea on generated manifests, for the
  requirements a manifest alone can break, from
  :func:`conformance.mutations.manifest_mutators`).
"""

from ._manifests import (
    deletion_vectors,
    fragments,
    indexed_manifests,
    indices,
    manifests,
    row_id_sequences,
    sorted_row_ids,
)
from ._mutations import DatasetMutation, ManifestMutation, manifest_mutations, mutated_requirements, mutations
from ._recipes import STEP_KINDS, DatasetRecipe, dataset_recipes
from ._schedule_operations import SCHEDULED_KINDS, TableState
from ._schedule_runs import RunMode, ScheduledOutcome, ScheduleRun
from ._schedules import CommitSchedule, ScheduledWriter, commit_schedules
from ._tables import arrow_data_types, arrow_tables, arrow_values
from ._transactions import transactions, wire_transactions
from ._types import arrow_fields, arrow_schemas, logical_types, schemas
from ._writing import ManifestNaming

__all__ = [
    "SCHEDULED_KINDS",
    "STEP_KINDS",
    "CommitSchedule",
    "DatasetMutation",
    "DatasetRecipe",
    "ManifestMutation",
    "ManifestNaming",
    "RunMode",
    "ScheduleRun",
    "ScheduledOutcome",
    "ScheduledWriter",
    "TableState",
    "arrow_data_types",
    "arrow_fields",
    "arrow_schemas",
    "arrow_tables",
    "arrow_values",
    "commit_schedules",
    "dataset_recipes",
    "deletion_vectors",
    "fragments",
    "indexed_manifests",
    "indices",
    "logical_types",
    "manifest_mutations",
    "manifests",
    "mutated_requirements",
    "mutations",
    "row_id_sequences",
    "schemas",
    "sorted_row_ids",
    "transactions",
    "wire_transactions",
]
