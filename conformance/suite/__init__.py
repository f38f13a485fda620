"""The conformance suite as a pytest plugin: one implementation, every check.

An implementer runs it from any directory of their own repository, after
``pip install lance-conformance``::

    pytest --pyargs conformance.suite --lance-driver NAME|MODULE|CMD \\
        [--lance-expectations FILE] [--lance-suite readers,writers,conflicts,properties,queries]

(``LANCE_CONFORMANCE_DRIVER`` stands in for ``--lance-driver``). The driver
is any name :func:`conformance.drivers.load_driver` accepts: a shipped
driver, an importable module, or a worker command. Each check is one test
id, and its result maps to a pytest outcome honestly:

- pass -> passed; a difference -> failed, with every problem found;
- a check needing a capability the driver lacks -> skipped, the capability
  named as the reason (never passed);
- a failure the implementation's expectations file records -> xfailed with
  its reason; an expectation that no longer fails -> failed (strict), so
  the file stays true.

Pytest's own reports (``--junitxml``, ``-rA``, ``-n`` from pytest-xdist)
work unchanged. The plugin is registered through the ``pytest11`` entry
point and does nothing in a run that collects no suite module.

Modules:

- :mod:`.plugin`: the options, collection and outcome mapping (the entry point);
- :mod:`.run`: the run's settings (driver, expectations, suites) and its one
  loaded driver;
- :mod:`.checks`: what a check is and how its verdict maps to pytest;
- :mod:`.readers`: the golden cases (:func:`conformance.fixtures.verify.verify_case`);
- :mod:`.writers`: the writer conformance script
  (:mod:`conformance.writer_conformance`), one check per step;
- :mod:`.conflicts`: the conflict matrix's cells the driver can race, against
  the outcomes stored in ``conformance/data/conflict_matrix.json``;
- :mod:`.properties`: generated tables crossing between the driver and the
  reference, both ways;
- :mod:`.queries`: index queries answered through the index and without one,
  against the reference's scan (its datasets and queries: :mod:`.query_datasets`).

The corpus is :func:`conformance.fixtures.corpus_root`: a checkout's
``fixtures/`` or the copy an installed wheel carries.
"""
