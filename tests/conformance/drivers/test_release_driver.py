"""The pylance driver run inside an older release's own venv (``pylance@0.20.0``).

Real releases, real processes: pylance 0.20.0 is installed beside the project
by ``conformance.peers.old_pylance`` and the same driver code runs in it. Its
panics are real too: pylance 0.20 panics on a ``map`` column.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.drivers import DriverError, load_driver
from conformance.drivers.worker.client import WorkerProcessError, WorkerReplyError
from conformance.expectations import shipped_expectations, version_key
from conformance.fixtures.case import case_dirs
from conformance.fixtures.generate import CASES_DIR
from conformance.fixtures.verify import ACCEPTED, EXPECTED_FAILURE, PASS, SUITE, verify_case, verify_corpus
from conformance.peers.old_pylance import PINNED_REQUIREMENTS
from conformance.validator.writer_defects import release_key
from tests.conftest import OLD_PYLANCE_VERSION

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "fixtures"
#: pylance 0.20 panics opening it (it has no ``map`` type).
PANICKING_CASE = "pylance-map-2-2"
OLD_RELEASE = f"pylance@{OLD_PYLANCE_VERSION}"


def expected_failures(driver_name: str) -> set[str]:
    """The golden cases the shipped expectations list for a driver's release."""
    return {entry.case for entry in shipped_expectations(driver_name).entries if entry.suite == SUITE}


@pytest.fixture(scope="module")
def old_release():
    from conformance.peers import old_pylance

    try:
        old_pylance.ensure_venv(OLD_PYLANCE_VERSION)
    except old_pylance.PeerUnavailableError as exc:
        pytest.fail(f"cannot install pylance {OLD_PYLANCE_VERSION}: {exc}", pytrace=False)
    assert OLD_RELEASE == f"pylance@{OLD_PYLANCE_VERSION}"
    driver = load_driver(OLD_RELEASE)
    yield driver
    driver.close()


def test_the_old_release_expectations_name_cases_of_the_corpus():
    names = {d.name for d in case_dirs(CORPUS)}
    assert expected_failures(OLD_RELEASE) and expected_failures(OLD_RELEASE) <= names


def test_release_ranges_concern_exactly_the_releases_they_hold():
    """The entries for releases before 0.17 (V2 naming unknown) concern
    0.16.1 and not 0.17.0, those before 0.16 concern 0.11.1 (versions
    compare as numbers: 0.11 > 0.9) and not 0.16.1; a range closed on both
    sides holds its ends' neighbours out."""
    assert "pylance-naming-v2-deletes" in expected_failures("pylance@0.16.1")
    assert "pylance-naming-v2-deletes" not in expected_failures("pylance@0.17.0")
    assert "ref-naming-v1" in expected_failures("pylance@0.11.1")
    assert "ref-naming-v1" not in expected_failures("pylance@0.16.1")
    assert "ref-types-json" in expected_failures("pylance@0.20.0")
    assert "ref-types-json" in expected_failures("pylance@0.35.0")
    assert "ref-types-json" not in expected_failures("pylance@0.36.0")
    assert "pylance-index-tags-restore" in expected_failures("pylance@0.20.0")
    assert "pylance-index-tags-restore" in expected_failures("pylance@0.17.0")
    assert "pylance-index-tags-restore" not in expected_failures("pylance@0.21.0")
    assert not expected_failures("pylance@0.20.0") & {"ref-naming-v1", "pylance-naming-v2-deletes"}
    # a range naming one release holds it and neither neighbour
    assert "pylance-rtree-minhash-indices" in expected_failures("pylance@12.0.0")
    assert "pylance-rtree-minhash-indices" not in expected_failures("pylance@11.0.0")
    assert "pylance-rtree-minhash-indices" not in expected_failures("pylance@13.0.0")


def test_a_release_that_is_not_pinned_is_refused_with_the_known_ones():
    with pytest.raises(DriverError, match=r"no pinned release '0\.0\.1' of pylance; known: .*pylance@0\.20\.0"):
        load_driver("pylance@0.0.1")
    with pytest.raises(DriverError, match="only pylance run in a release's venv"):
        load_driver("reference@1.0")


@pytest.mark.old_pylance
def test_the_old_release_reads_every_case_or_records_why_not(old_release):
    """``fixtures verify --driver pylance@0.20.0``: the same driver as for
    pylance 14, in the release's venv; every case passes or is an expected
    failure of this release in pylance's expectations file (and every entry
    is still needed: one that passes is fixed, and fails)."""
    results = verify_corpus(CORPUS, OLD_RELEASE)
    failed = [(r.case, r.status, r.problems) for r in results if r.status not in ACCEPTED]
    assert not failed
    assert {r.case for r in results if r.status == EXPECTED_FAILURE} == expected_failures(OLD_RELEASE)
    assert len(results) == len(case_dirs(CORPUS))


@pytest.mark.old_pylance
def test_the_old_release_reports_what_it_cannot_see_as_unreported(old_release):
    """pylance 0.20 has no ``tracked_files``, ``base_paths``, ``metadata`` or
    ``describe_indices``: those keys are unreported, nothing else is."""
    assert old_release.UNREPORTED == {
        "naming_scheme",
        "base_paths",
        "fragments[].files[].base_id",
        "table_metadata",
        "indices[].type_url",
        "fragments[].files[].file_size_bytes",
    }


@pytest.mark.old_pylance
def test_a_panic_fails_one_case_and_the_run_goes_on(old_release, tmp_path, capsys):
    """A real Rust panic (pylance 0.20 on a map column) fails that case with
    the panic's message; the cases after it are still verified."""
    corpus = tmp_path / "corpus"
    for name in (PANICKING_CASE, "ref-naming-v1", "ref-tags"):
        shutil.copytree(CORPUS / CASES_DIR / name, corpus / CASES_DIR / name)
    # Without an expectation the panic is a plain failure.
    nothing_expected = tmp_path / "none.json"
    nothing_expected.write_text('{"format": 1, "implementation": "pylance", "expectations": []}')
    argv = ["fixtures", "verify", "--driver", OLD_RELEASE, "--corpus", str(corpus)]
    assert main([*argv, "--expectations", str(nothing_expected)]) == 1
    captured = capsys.readouterr()
    out = captured.out
    assert f"FAIL             {PANICKING_CASE}" in out
    assert "PanicException: called `Result::unwrap()`" in out and "Unsupported logical type: map" in out
    assert "PASS             ref-naming-v1" in out and "PASS             ref-tags" in out
    assert "1 fail, 2 pass" in out and "Traceback" not in out + captured.err


@pytest.mark.old_pylance
def test_a_relative_path_means_what_it_means_to_the_caller(old_release, monkeypatch):
    monkeypatch.chdir(CORPUS / CASES_DIR)
    assert old_release.versions("ref-naming-v1/dataset") == [1, 2, 3]


@pytest.mark.old_pylance
def test_the_child_survives_a_panic_and_is_replaced_when_it_dies(old_release):
    """One long-lived worker per driver: a panic leaves it serving (a typed
    error of kind ``panic``); a worker that is killed is replaced on the next call."""
    panicking = str(CORPUS / CASES_DIR / PANICKING_CASE / "dataset")
    readable = str(CORPUS / CASES_DIR / "ref-naming-v1" / "dataset")
    old_release.versions(readable)
    pid = old_release.pid
    with pytest.raises(WorkerReplyError, match="panic: PanicException: .*Unsupported logical type: map"):
        old_release.describe(panicking, 1)
    assert old_release.describe(readable, 1)["version"] == 1
    assert old_release.pid == pid
    os.kill(pid, 9)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # until it has exited; the driver reaps it
    assert old_release.read_table(readable, 1).num_rows == 5
    assert old_release.pid not in (None, pid)


@pytest.mark.old_pylance
def test_a_child_that_stops_answering_is_killed_and_replaced(old_release, tmp_path, monkeypatch):
    """A real hang: pylance opens a named pipe in place of a manifest and
    waits for a writer forever. The call fails after the timeout, naming it,
    and the next call gets a new child."""

    dataset = tmp_path / "dataset"
    shutil.copytree(CORPUS / CASES_DIR / "ref-naming-v1" / "dataset", dataset)
    (dataset / "_versions" / "3.manifest").unlink()
    os.mkfifo(dataset / "_versions" / "3.manifest")
    monkeypatch.setattr(old_release, "timeout", 3.0)
    with pytest.raises(WorkerProcessError, match="did not answer describe within 3 s"):
        old_release.describe(str(dataset), 3)
    assert old_release.versions(str(CORPUS / CASES_DIR / "ref-naming-v1" / "dataset")) == [1, 2, 3]


#: Cases every release from 0.17 on reads as the format says: V1 and V2
#: names, deletions, 2.0 data files. Older releases have expectations for
#: ranges of releases.
PLAIN_CASES = ("ref-naming-v1", "old-appends-deletes", "pylance-naming-v2-deletes")


#: The default run: the oldest and the newest pinned release (the ends of
#: the API the driver bridges). Every other release (a venv each on a fresh
#: machine), the bounds of pylance's expectations ranges among them, runs
#: under ``tox -e releases``, which a change to a range must pass.
DEFAULT_RELEASES = {min(PINNED_REQUIREMENTS, key=release_key), max(PINNED_REQUIREMENTS, key=release_key)}


@pytest.mark.old_pylance
@pytest.mark.parametrize(
    "release",
    [
        release if release in DEFAULT_RELEASES else pytest.param(release, marks=pytest.mark.releases)
        for release in sorted(PINNED_REQUIREMENTS, key=release_key)
    ],
)
def test_the_same_driver_runs_in_every_pinned_release(release):
    """Every release ``conformance.peers`` pins runs the driver in its own
    venv and reads each plain case exactly, or fails it as pylance's
    expectations say for a range holding the release (an entry the release
    reads correctly is fixed, and fails)."""
    driver_name = f"pylance@{release}"
    driver = load_driver(driver_name)
    try:
        for name in PLAIN_CASES:
            case_dir = CORPUS / CASES_DIR / name
            recorded = shipped_expectations(driver_name).lookup(SUITE, name)
            result = verify_case(case_dir, driver_name, driver)
            assert result.status == (EXPECTED_FAILURE if recorded else PASS), (name, result.status, result.problems)
            # What the release can describe it describes as the case expects
            # (releases before 0.16 infer the data format from the files).
            assert not [p for p in result.problems if re.match(r"v\d+: describe ", p)], (name, result.problems)
    finally:
        driver.close()


#: The golden cases with pylance 14's, LanceDB 0.40's and the reference's
#: index files. Which releases fail them, and why, was measured release by
#: release (docs/spec-discrepancies.md, "Older pylance releases as readers",
#: items 7, 9 and 10): the ranges in pylance's expectations must hold exactly.
INDEX_CASES = (
    "ref-index-metadata",
    "pylance-scalar-indices",
    "crafted-bitmap-row-moved",
    "crafted-index-remap-dropped",
    "lancedb-indices",
    "pylance-vector-indices",
    "pylance-hnsw-indices",
    "pylance-rtree-minhash-indices",
)


@pytest.mark.old_pylance
@pytest.mark.releases
@pytest.mark.parametrize("release", sorted(PINNED_REQUIREMENTS, key=release_key))
def test_every_pinned_release_reads_the_index_cases_as_its_expectations_say(release):
    """Each index case passes in a release no entry of pylance's expectations
    concerns, and fails in one an entry's range holds (an entry whose range
    holds a release that reads the case is fixed, and fails)."""
    driver_name = f"pylance@{release}"
    driver = load_driver(driver_name)
    try:
        for name in INDEX_CASES:
            recorded = shipped_expectations(driver_name).lookup(SUITE, name)
            result = verify_case(CORPUS / CASES_DIR / name, driver_name, driver)
            assert result.status == (EXPECTED_FAILURE if recorded else PASS), (name, result.status, result.problems)
    finally:
        driver.close()


@pytest.mark.old_pylance
@pytest.mark.releases
@pytest.mark.parametrize("release", ["0.18.2", "0.27.0"])
def test_the_driver_speaks_each_release_api_for_blobs_and_config(release):
    """From 0.27 ``take_blobs`` takes the column first (the driver used to
    pass the row ids first and got a TypeError); releases before 0.19 show
    no table config, so the driver declares ``config`` unreported instead of
    reporting it empty. What is left is each release's own behaviour, as
    pylance's expectations record it."""
    from conformance.drivers import installed_drivers
    from conformance.drivers.protocol import driver_info

    name = f"pylance@{release}"
    if name not in installed_drivers():
        pytest.skip(f"{name}'s venv is not built here")
    driver = load_driver(name)
    try:
        blob = verify_case(CORPUS / CASES_DIR / "ref-types-blob", name, driver)
        config = verify_case(CORPUS / CASES_DIR / "ref-config-metadata", name, driver)
        unreported = driver_info(driver, name).unreported
    finally:
        driver.close()
    assert not [p for p in blob.problems if "TypeError" in p], blob.problems
    assert blob.status == EXPECTED_FAILURE
    assert config.status == PASS, config.problems
    assert ("config" in unreported) is (version_key(release) < version_key("0.19"))
