"""The conflict matrix: what happens when two writers race, measured.

Two writers read the same version ``v`` of a small table; the first commits
an operation, then the second tries to commit its own. The upstream
transaction page (``docs/src/format/table/transaction.md`` of
``lance-format/lance``, each operation's "Compatibility" section) says, from
the second writer's side, whether the two are compatible, whether the second
rebases over the first, or whether it fails with a retryable or an
incompatible conflict. This package builds every such situation for real,
for every ordered pair of the operation types in ``protos/transaction.proto``
and every sub-case the page distinguishes, runs it with pylance 14 and with
the reference implementation in four modes (pylance then pylance, reference
then reference, and both mixed orders, where each must honour the other's
transaction files), and stores what it observed as data:
``conformance/data/conflict_matrix.json`` (JSON Schema:
``conformance/schemas/conflict-matrix.schema.json``), rendered as
``docs/conflicts.md`` and printed by ``lance-conformance conflicts``.

Modules, bottom up:

- :mod:`.model`: operations, sub-cases, modes, outcomes, and the stored
  matrix with its typed loader;
- :mod:`.page`: the outcome the upstream page gives for each cell;
- :mod:`.signals`: a driver's conflict (each driver's ``conflict_from``) as an
  outcome, retryable or incompatible;
- :mod:`.actions`: each operation, done with pylance and with the reference;
- :mod:`.cells`: the cells (pairs x sub-cases) and the base tables;
- :mod:`.measure`: runs a cell in a mode and checks the result;
- :mod:`.render`: text and Markdown tables;
- ``python -m conformance.conflict_matrix``: measure and render.

pylance (``lance``) is imported lazily, inside the functions that drive it,
as the drivers do: the validator and the reference implementation never
import this package.
"""
