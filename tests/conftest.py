"""Shared fixtures and the Hypothesis profiles of the test suite.

Hypothesis profile, chosen by the ``HYPOTHESIS_PROFILE`` environment variable:

* ``ci`` (default): modest example counts so the whole suite stays quick;
* ``dev``: fewer examples still, for the edit-test loop;
* ``nightly``: thousands of examples per property.

All profiles disable the per-example deadline (pylance calls vary in time with
machine load, which would make deadline failures noise) and print the
reproduction blob of a failing example.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Headless Chromium through chromedriver, for the HTML pages' browser tests.
from tests.browser import browser  # noqa: F401

# The moto server fixtures (moto_server, s3_options, s3_bucket), shared by the suite.
from tests.servers import moto_server, s3_bucket, s3_options  # noqa: F401

# The harness's Spark executor on local[*], and a standalone cluster on loopback.
from tests.spark import spark_cluster, spark_local  # noqa: F401

OLD_PYLANCE_VERSION = "0.20.0"

settings.register_profile("ci", max_examples=50, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=10, deadline=None, print_blob=True)
settings.register_profile(
    "nightly",
    max_examples=5000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_sessionstart(session):
    """In CI, the peer and the proto compiler must be there: tests that would
    skip without them are coverage, so their absence fails the run."""
    import importlib.util

    if os.environ.get("CI"):
        missing = [name for name in ("lance", "grpc_tools") if importlib.util.find_spec(name) is None]
        if missing:
            pytest.exit(f"CI run without the test extra ({', '.join(missing)} missing): pip install -e '.[test]'", 3)


@pytest.fixture(scope="session")
def pylance_datasets(tmp_path_factory) -> dict[str, Path]:
    """Every scenario of ``tests/pylance_scenarios.py``, built once per session."""
    from tests.pylance_scenarios import build_all

    return build_all(tmp_path_factory.mktemp("pylance-14"))


@pytest.fixture(scope="session")
def old_pylance_datasets(tmp_path_factory) -> dict[str, Path]:
    """Datasets written by pylance 0.20.0 in its own venv, built once per session.

    Fails (never skips) when that release cannot be installed: a suite that
    silently stops testing old datasets would look green while covering less.
    """
    from conformance.peers import old_pylance

    out_dir = tmp_path_factory.mktemp(f"pylance-{OLD_PYLANCE_VERSION}")
    try:
        return old_pylance.write_scenarios(OLD_PYLANCE_VERSION, out_dir)
    except old_pylance.PeerUnavailableError as exc:
        reason = str(exc)
    # Outside the except block so the report shows the reason once.
    pytest.fail(
        f"cannot install pylance {OLD_PYLANCE_VERSION} into {old_pylance.venv_dir(OLD_PYLANCE_VERSION)} "
        "(the first run needs network access to the package index; LANCE_CONFORMANCE_CACHE "
        f"selects another cache directory):\n{reason}",
        pytrace=False,
    )
