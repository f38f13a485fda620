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
from conformance.fixtures.case import case_dirs, case_problems, driver_matches, load_case, version_key
from conformance.fixtures.generate import CASES_DIR
from conformance.fixtures.release_deviations import OLD_RELEASE, RANGE_DEVIATIONS, RELEASE_DEVIATIONS
from conformance.fixtures.verify import ACCEPTED, KNOWN_DEVIATION, PASS, verify_case, verify_corpus
from conformance.peers.old_pylance import PINNED_REQUIREMENTS
from conformance.validator.writer_defects import known_defects, release_key
from tests.conftest import OLD_PYLANCE_VERSION

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "fixtures"
#: pylance 0.20 panics opening it (it has no ``map`` type).
PANICKING_CASE = "pylance-map-2-2"


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


def test_every_release_deviation_names_a_case_of_the_corpus():
    names = {d.name for d in case_dirs(CORPUS)}
    assert set(RELEASE_DEVIATIONS) <= names
    for name, deviations in RELEASE_DEVIATIONS.items():
        recorded = [d for d in load_case(CORPUS / CASES_DIR / name).known_deviations if d.driver == OLD_RELEASE]
        assert [d.requirement for d in recorded] == [d.requirement for d in deviations], name


def test_every_range_deviation_is_recorded_in_its_case():
    for name, deviations in RANGE_DEVIATIONS.items():
        recorded = load_case(CORPUS / CASES_DIR / name).known_deviations
        for deviation in deviations:
            assert any(r.driver == deviation.driver and r.requirement == deviation.requirement for r in recorded), name


def test_a_release_range_concerns_exactly_the_releases_it_holds():
    assert driver_matches("pylance@<0.17", "pylance@0.16.1")
    assert not driver_matches("pylance@<0.17", "pylance@0.17.0")
    assert driver_matches("pylance@>=0.11,<0.16", "pylance@0.15.0")
    assert not driver_matches("pylance@>=0.11,<0.16", "pylance@0.16.1")
    assert not driver_matches("pylance@>=0.12,<0.16", "pylance@0.11.1")
    assert driver_matches("pylance@>=0.17", "pylance@14.0.2")
    # Numbers compare as numbers, not text; a range is never a driver run in-process.
    assert not driver_matches("pylance@<0.9", "pylance@0.11.1")
    assert not driver_matches("pylance@<0.17", "pylance")
    assert not driver_matches("pylance@<0.17", "other@0.16.1")
    assert driver_matches("pylance@0.20.0", "pylance@0.20.0") and not driver_matches("pylance@0.20.0", "pylance@0.20")


def test_a_malformed_release_range_is_a_problem_of_the_case():
    document = load_case(CORPUS / CASES_DIR / "ref-naming-v1").to_json()
    document["known_deviations"][0]["driver"] = "pylance@<0.x"
    assert case_problems(document) == [
        "known_deviations: 'pylance@<0.x' is neither a driver name nor a release range like 'pylance@<0.17'"
    ]


def test_a_release_that_is_not_pinned_is_refused_with_the_known_ones():
    with pytest.raises(DriverError, match=r"no pinned release '0\.0\.1' of pylance; known: .*pylance@0\.20\.0"):
        load_driver("pylance@0.0.1")
    with pytest.raises(DriverError, match="only pylance run in a release's venv"):
        load_driver("reference@1.0")


@pytest.mark.old_pylance
def test_the_old_release_reads_every_case_or_records_why_not(old_release):
    """``fixtures verify --driver pylance@0.20.0``: the same driver as for
    pylance 14, in the release's venv; every case passes or is a deviation
    recorded for this release (and every record is still needed)."""
    results = verify_corpus(CORPUS, OLD_RELEASE)
    failed = [(r.case, r.status, r.problems) for r in results if r.status not in ACCEPTED]
    assert not failed
    assert {r.case for r in results if r.status == KNOWN_DEVIATION} == set(RELEASE_DEVIATIONS)
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
    # Without its record the panic is a plain failure.
    case_json = corpus / CASES_DIR / PANICKING_CASE / "case.json"
    case_json.write_text(case_json.read_text().replace(f'"driver": "{OLD_RELEASE}"', '"driver": "elsewhere"'))
    assert main(["fixtures", "verify", "--driver", OLD_RELEASE, "--corpus", str(corpus)]) == 1
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
#: names, deletions, 2.0 data files. Older releases record range deviations.
PLAIN_CASES = ("ref-naming-v1", "old-appends-deletes", "pylance-naming-v2-deletes")


def _range_bounds() -> set[str]:
    """The versions bounding the recorded release ranges (``<0.17`` -> 0.17)."""
    bounds = set()
    for deviations in RANGE_DEVIATIONS.values():
        for deviation in deviations:
            bounds.update(bound.lstrip("<>=") for bound in deviation.driver.split("@", 1)[1].split(","))
    return bounds


def _default_releases() -> set[str]:
    """The oldest and newest release, 0.20.0, the first affected and first
    fixed release of every known writer defect, and the releases either side
    of every bound of a recorded release range (so a range that is too wide
    or too narrow fails by default); the rest run under ``tox -e releases``."""
    pinned = sorted(PINNED_REQUIREMENTS, key=release_key)
    chosen = {pinned[0], pinned[-1], OLD_RELEASE.split("@", 1)[1]}
    for defect in known_defects():
        chosen.update({defect.first_affected, defect.first_fixed} - {None})
    for bound in _range_bounds():
        below = [r for r in pinned if version_key(r) < version_key(bound)]
        above = [r for r in pinned if version_key(r) >= version_key(bound)]
        chosen.update(below[-1:] + above[:1])
    return chosen & set(pinned)


DEFAULT_RELEASES = _default_releases()


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
    venv and reads each plain case exactly, or fails it as a deviation the
    case records for a range holding the release (a record the release
    reads correctly is stale, and fails)."""
    driver_name = f"pylance@{release}"
    driver = load_driver(driver_name)
    try:
        for name in PLAIN_CASES:
            case_dir = CORPUS / CASES_DIR / name
            recorded = load_case(case_dir).deviation_for(driver_name)
            result = verify_case(case_dir, driver_name, driver)
            assert result.status == (KNOWN_DEVIATION if recorded else PASS), (name, result.status, result.problems)
            # What the release can describe it describes as the case expects
            # (releases before 0.16 infer the data format from the files).
            assert not [p for p in result.problems if re.match(r"v\d+: describe ", p)], (name, result.problems)
    finally:
        driver.close()
