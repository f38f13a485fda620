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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Headless Chromium through chromedriver, for the HTML pages' browser tests.
from tests.browser import browser  # noqa: F401

# The moto server fixtures (moto_server, s3_options, s3_bucket), shared by the suite.
from tests.servers import moto_server, s3_bucket, s3_options  # noqa: F401

# Session fixtures whose files the xdist workers of a run share.
from tests.shared_build import built_once

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


#: Tests that share something expensive a worker starts once per session run
#: on one xdist worker (``--dist loadgroup``, pyproject's addopts), so that it
#: is started once rather than on both: the group of the first that applies.
#: The rest of the suite is dealt out test by test.
XDIST_GROUPS: tuple[tuple[str, str], ...] = (
    # A Spark session on local[8] (tests/spark.py): a JVM of its own.
    ("fixture", "spark_local"),
    # A Spark standalone cluster (tox -e spark): three JVMs.
    ("fixture", "spark_cluster"),
    # Headless Chromium and its chromedriver (tests/browser.py).
    ("fixture", "browser"),
    # LanceDB for Node.js: installed into the cache on first use, by one process.
    ("marker", "node"),
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the tests of each :data:`XDIST_GROUPS` entry in one xdist group
    (before xdist reads the groups; without ``-n`` groups change nothing),
    and the groups first. xdist deals a group out as one unit, where its
    first test stands: a group dealt out late leaves one worker running
    it alone at the end; dealt out first, the other workers share the rest
    of the suite meanwhile."""
    grouped: dict[str, list[pytest.Item]] = {name: [] for _, name in XDIST_GROUPS}
    rest: list[pytest.Item] = []
    for item in items:
        for kind, name in XDIST_GROUPS:
            if (name in getattr(item, "fixturenames", ())) if kind == "fixture" else item.get_closest_marker(name):
                item.add_marker(pytest.mark.xdist_group(name))
                grouped[name].append(item)
                break
        else:
            rest.append(item)
    items[:] = [item for group in grouped.values() for item in group] + rest


#: How many release venvs the session builds at once (they wait on the
#: network and the disk more than on the two cores the tests run on).
CONCURRENT_VENV_BUILDS = 3
#: The pool building them, kept to be shut down when the session ends.
_VENV_BUILDS = pytest.StashKey[ThreadPoolExecutor]()


def releases_used(item: pytest.Item) -> set[str]:
    """The pinned pylance releases whose venvs a test marked ``old_pylance``
    uses: the marker's arguments, else the test's ``release`` parameter,
    else :data:`OLD_PYLANCE_VERSION`."""
    from conformance.peers.old_pylance import PINNED_REQUIREMENTS

    marker = item.get_closest_marker("old_pylance")
    if marker is None:
        return set()
    if marker.args:
        return set(marker.args)
    callspec = getattr(item, "callspec", None)
    release = callspec.params.get("release") if callspec is not None else None
    return {release} if release in PINNED_REQUIREMENTS else {OLD_PYLANCE_VERSION}


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start building, in the background, the venvs of every release the
    selected tests use, a few at once: the first test that needs one finds it
    built or waits for its build (``ensure_venv`` locks each venv while it is
    built), instead of each test building its release in turn. Under xdist
    the first worker builds them for both; the builds are separate processes,
    so the tests beside them keep the cores."""
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0" or session.config.option.collectonly:
        return
    from conformance.peers import old_pylance

    # In the order the tests come, so that the first tests to run wait least.
    releases = dict.fromkeys(release for item in session.items for release in sorted(releases_used(item)))
    missing = [release for release in releases if not old_pylance.venv_ready(release)]
    if not missing:
        return
    pool = ThreadPoolExecutor(max_workers=CONCURRENT_VENV_BUILDS, thread_name_prefix="release-venv")
    for release in missing:
        # A build that fails here fails again, with its reason, in the test
        # that calls ensure_venv itself.
        pool.submit(old_pylance.ensure_venv, release)
    session.config.stash[_VENV_BUILDS] = pool


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Builds not yet started are dropped; those under way are waited for
    (an installer is never left running after the session)."""
    pool = session.config.stash.get(_VENV_BUILDS, None)
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="session")
def pylance_datasets(tmp_path_factory) -> dict[str, Path]:
    """Every scenario of ``tests/pylance_scenarios.py``, built once per run (:func:`~tests.shared_build.built_once`)."""
    from tests.pylance_scenarios import build_all

    return built_once(tmp_path_factory, "pylance-14", build_all)


@pytest.fixture(scope="session")
def pylance_index_datasets(tmp_path_factory):
    """Every scenario of ``tests/index_scenarios.py`` (pylance 14, every index
    type through appends, deletes, updates, compaction and optimize_indices),
    built once per session: ``{name: IndexScenario}``."""
    from tests.index_scenarios import build_all

    return built_once(tmp_path_factory, "pylance-14-indices", build_all)


@pytest.fixture(scope="session")
def old_pylance_datasets(tmp_path_factory) -> dict[str, Path]:
    """Datasets written by pylance 0.20.0 in its own venv, built once per run
    (:func:`~tests.shared_build.built_once`).

    Fails (never skips) when that release cannot be installed: a suite that
    silently stops testing old datasets would look green while covering less.
    """
    from conformance.peers import old_pylance

    try:
        return built_once(
            tmp_path_factory,
            f"pylance-{OLD_PYLANCE_VERSION}",
            lambda out_dir: old_pylance.write_scenarios(OLD_PYLANCE_VERSION, out_dir),
        )
    except old_pylance.PeerUnavailableError as exc:
        reason = str(exc)
    # Outside the except block so the report shows the reason once.
    pytest.fail(
        f"cannot install pylance {OLD_PYLANCE_VERSION} into {old_pylance.venv_dir(OLD_PYLANCE_VERSION)} "
        "(the first run needs network access to the package index; LANCE_CONFORMANCE_CACHE "
        f"selects another cache directory):\n{reason}",
        pytrace=False,
    )
