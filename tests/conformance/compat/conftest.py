"""The small compatibility run the default tests share: the pylance installed
beside the project and 0.20.0 (whose venv the default run builds anyway), a
few features, run once per session (per xdist worker)."""

from __future__ import annotations

import pytest

#: Features chosen to show every outcome between the two releases: 2.0 files
#: both read, 2.2 files 0.20 refuses, a BTREE index and 2.1 files it fails on,
#: a DataOverlay only the newer one writes.
SMALL_FEATURES = ("file-2.0", "file-2.1", "file-2.2", "index-btree", "txn-data-overlay")


@pytest.fixture(scope="session")
def small_compat(tmp_path_factory):
    """``(CompatRun, document)`` of the small run. Not shared between xdist
    workers (tests/shared_build.py): on a fresh machine its build waits for
    the 0.20.0 venv, and a worker waiting on another's build could run no
    other test meanwhile."""
    # lazy: conftest modules are imported by every run; only these tests need the release machinery
    from conformance.compat.document import to_document
    from conformance.compat.releases import DEFAULT_RELEASES, resolve
    from conformance.compat.run import run_compat

    releases = [resolve(name) for name in DEFAULT_RELEASES]
    run = run_compat(releases, list(SMALL_FEATURES), workdir=tmp_path_factory.mktemp("compat"))
    return run, to_document(run)
