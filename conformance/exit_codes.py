"""The exit statuses of the ``lance-conformance`` command, defined once: every
sub-command returns one of these, and the documentation (README, each
command's ``--help``) describes them from here.

Each value means one thing to a script that runs the command:

* 0: the command did its work and found nothing wrong;
* 1: it did its work and found something (validator findings, a failing
  conformance case, harness anomalies);
* 2: it was asked something it cannot answer as asked (a bad option, an
  existing run directory, a tag that is not there, a path that holds no
  dataset);
* 3: it could not do its work (a writer that cannot load, an internal error).
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    #: Done, nothing found.
    OK = 0
    #: Done, and something found: findings, failing cases, anomalies.
    FINDINGS = 1
    #: The harness's name for FINDINGS: the checker named anomalies.
    ANOMALIES = 1
    #: The command line asked for something that cannot be done as asked.
    USAGE = 2
    #: ``validate`` and friends on a path that holds no Lance dataset: a
    #: usage error too, named apart because scripts have long tested for it.
    NOT_A_DATASET = 2
    #: The command could not do its work: a writer that cannot load, an
    #: internal error (a bug of lance-conformance's, reported in one line).
    INTERNAL = 3
    #: The harness's name for INTERNAL when the writer itself cannot be loaded.
    WRITER_CANNOT_LOAD = 3
    #: ... and the other commands' when a driver that exists cannot load here.
    DRIVER_CANNOT_LOAD = 3
