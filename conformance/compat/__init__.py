"""Who can read what, across releases: the cross-release compatibility matrix.

Every release of the release corpus (the pinned pylance releases of
:mod:`conformance.peers.old_pylance`, and the pylance installed beside the
project) writes a set of feature datasets, and every release reads every
release's datasets, forward and backward. Each cell (writer release, reader
release, feature) passes, refuses cleanly (a pass), or fails with the error,
the wrong rows or the panic it met. ``lance-conformance compat`` runs it.

Modules:

- :mod:`.feature_writer`: the standalone script each release runs in its own
  environment to write the feature datasets (and the list of features);
- :mod:`.releases`: which releases a run names, and running their writers;
- :mod:`.outcomes`: the outcomes of a cell, and the one place that decides
  whether a reader's error is a clean refusal or a failure;
- :mod:`.run`: the reads and their comparison with the writer's own;
- :mod:`.document`: the JSON document (``conformance/schemas/compat-matrix.schema.json``)
  and its notes, lance-format/lance#9454 among them.

The HTML page is :mod:`conformance.report.compat_html`.
"""
