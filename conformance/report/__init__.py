"""Reports for people: the outputs rendered from the suite's results.

Modules, one per output:

- :mod:`.html`: the ecosystem matrix (:mod:`conformance.ecosystem`) as one
  self-contained HTML page (``lance-conformance matrix --html OUT``).

The machine-readable form of the same results is the ecosystem document
(:func:`conformance.ecosystem.model.dumps`). The validator's own text, JSON,
JUnit and SARIF reports stay in :mod:`conformance.validator.report`, and a
harness run's page in :mod:`conformance.harness.html`, next to what they render.
"""
