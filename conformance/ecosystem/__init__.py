"""The ecosystem matrix: every installed Lance implementation, run through the suite.

``lance-conformance matrix`` runs each driver (``installed_drivers()``, or
those asked for) through:

- the golden corpus, every writer by every reader (:mod:`.readers`: the
  view ``fixtures matrix`` prints, kept per case);
- writer conformance, every writing driver through the script of
  operations, each version read back by the run's readers
  (:mod:`.writers`, over :mod:`conformance.writer_conformance`);
- the conflict matrix, two writers racing, against the upstream
  transaction page (:mod:`.conflicts`);

and gathers the results, the expectations applied (each implementation's
shipped expectations file, narrowed to the release the driver reported) and
the exact versions of everything
(:mod:`.versions`: each driver's ``DriverInfo``, the suite, Python, pyarrow)
into one versioned document (:mod:`.model`, JSON Schema
``conformance/schemas/ecosystem-matrix.schema.json``), which
:mod:`conformance.report.html` renders as a page. :mod:`.run` does the run.

Modules, bottom up: :mod:`.model`; :mod:`.versions`, :mod:`.readers`,
:mod:`.writers`, :mod:`.conflicts`; :mod:`.run`.
"""
