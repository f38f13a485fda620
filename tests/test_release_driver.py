"""The pylance driver run inside an older release's own venv (``pylance@0.20.0``).

Real releases, real processes: pylance 0.20.0 is installed beside the project
by ``conformance.peers.old_pylance`` and the same driver code runs in it. Its
panics are real too: pylance 0.20 panics on a ``map`` column.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.drivers import DriverError, load_driver
from conformance.drivers.release import ReleaseCallError
from conformance.fixtures.case import case_dirs, load_case
from conformance.fixtures.generate import CASES_DIR
from conformance.fixtures.release_deviations import OLD_RELEASE, RELEASE_DEVIATIONS
from conformance.fixtures.verify import ACCEPTED, KNOWN_DEVIATION, PASS, verify_case, verify_corpus
from conformance.peers.old_pylance import PINNED_REQUIREMENTS
from tests.conftest import OLD_PYLANCE_VERSION

ROOT = Path(__file__).resolve().parents[1]
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
        "naming_scheme", "base_paths", "fragments[].files[].base_id", "table_metadata", "indices[].type_url",
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
    """One long-lived child per driver: a panic leaves it serving; a child
    that is killed is replaced on the next call."""
    panicking = str(CORPUS / CASES_DIR / PANICKING_CASE / "dataset")
    readable = str(CORPUS / CASES_DIR / "ref-naming-v1" / "dataset")
    old_release.versions(readable)
    pid = old_release._process.pid
    with pytest.raises(ReleaseCallError, match="PanicException: .*Unsupported logical type: map"):
        old_release.describe(panicking, 1)
    assert old_release.describe(readable, 1)["version"] == 1
    assert old_release._process.pid == pid
    os.kill(pid, 9)
    old_release._process.wait()
    assert old_release.read_table(readable, 1).num_rows == 5
    assert old_release._process.pid != pid


@pytest.mark.old_pylance
def test_a_child_that_stops_answering_is_killed_and_replaced(old_release, tmp_path, monkeypatch):
    """A real hang: pylance opens a named pipe in place of a manifest and
    waits for a writer forever. The call fails after the timeout, naming it,
    and the next call gets a new child."""
    from conformance.drivers import release

    dataset = tmp_path / "dataset"
    shutil.copytree(CORPUS / CASES_DIR / "ref-naming-v1" / "dataset", dataset)
    (dataset / "_versions" / "3.manifest").unlink()
    os.mkfifo(dataset / "_versions" / "3.manifest")
    monkeypatch.setattr(release, "CALL_TIMEOUT_SECONDS", 3.0)
    with pytest.raises(ReleaseCallError, match="did not answer describe within 3 s"):
        old_release.describe(str(dataset), 3)
    assert old_release.versions(str(CORPUS / CASES_DIR / "ref-naming-v1" / "dataset")) == [1, 2, 3]


#: Cases every release from 0.20 on reads as the format says: V1 and V2
#: names, deletions, 2.0 data files.
PLAIN_CASES = ("ref-naming-v1", "old-appends-deletes", "pylance-naming-v2-deletes")


@pytest.mark.old_pylance
@pytest.mark.parametrize("release", sorted(PINNED_REQUIREMENTS))
def test_the_same_driver_runs_in_every_pinned_release(release):
    """Every release ``conformance.peers`` pins runs the driver in its own
    venv and reads the plain cases exactly."""
    driver = load_driver(f"pylance@{release}")
    try:
        for name in PLAIN_CASES:
            result = verify_case(CORPUS / CASES_DIR / name, f"pylance@{release}", driver)
            assert result.status == PASS, (name, result.problems)
    finally:
        driver.close()
