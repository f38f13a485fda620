"""The ecosystem matrix: every installed Lance implementation, run through the suite.

``lance-conformance matrix`` runs each driver (``installed_drivers()``, or
those asked for) through:

- the golden corpus, every writer by every reader (:mod:`.readers`: the
  view ``fixtures matrix`` prints, kept per case);
- the conflict matrix, two writers racing, against the upstream
  transaction page (:mod:`.conflicts`);

and gathers the results, the expectations applied and the exact versions
of everything (:mod:`.versions`) into one versioned document (:mod:`.model`,
JSON Schema ``conformance/schemas/ecosystem-matrix.schema.json``), which
:mod:`conformance.report.html` renders as a page. :mod:`.run` does the run.

Modules, bottom up: :mod:`.model`, :mod:`.versions`, :mod:`.readers`,
:mod:`.conflicts`, :mod:`.run`.
"""
