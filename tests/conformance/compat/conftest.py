"""The small compatibility run the default tests share: the pylance installed
beside the project and 0.20.0 (whose venv the default run builds anyway), a
few features, run once per test run (tests/shared_build.py: the workers
share it)."""

from __future__ import annotations

import pytest

from tests.shared_build import built_once

#: Features chosen to show every outcome between the two releases: 2.0 files
#: both read, 2.2 files 0.20 refuses, a BTREE index and 2.1 files it fails on,
#: a DataOverlay only the newer one writes.
SMALL_FEATURES = ("file-2.0", "file-2.1", "file-2.2", "index-btree", "txn-data-overlay")


@pytest.fixture(scope="session")
def small_compat(tmp_path_factory):
    """``(CompatRun, document)`` of the small run."""
    # lazy: conftest modules are imported by every run; only these tests need the release machinery
    from conformance.compat.document import to_document
    from conformance.compat.releases import DEFAULT_RELEASES, resolve
    from conformance.compat.run import run_compat

    def build(directory):
        releases = [resolve(name) for name in DEFAULT_RELEASES]
        run = run_compat(releases, list(SMALL_FEATURES), workdir=directory)
        return run, to_document(run)

    return built_once(tmp_path_factory, "compat-small", build)
