"""WorkerDriver: a driver whose calls go to a long-lived child process.

Real processes throughout: the Python server over the reference driver, and
a deliberately broken worker (``broken_worker.py``) that segfaults, panics,
raises, hangs or prints garbage on chosen requests.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.drivers import DriverError, close_driver, greet_driver, load_driver, reference
from conformance.drivers.worker.client import (
    TIMEOUT_VARIABLE,
    WorkerDriver,
    WorkerProcessError,
    WorkerReplyError,
    WorkerStrayOutputError,
)
from conformance.drivers.worker.errors import ErrorKind
from conformance.drivers.writes import Append, Create, WriteConflict
from conformance.fixtures.case import case_dirs
from conformance.fixtures.verify import FAIL, PASS, verify_corpus
from reference_impl.errors import UnsupportedFeatureError

from .conftest import CASES, CORPUS, broken_command, broken_driver_name, is_running


@pytest.fixture
def worker():
    driver = load_driver("worker:reference")
    yield driver
    close_driver(driver)


def test_a_worker_reads_what_the_driver_reads_in_process(worker, dataset):
    assert worker.versions(dataset) == reference.versions(dataset)
    for version in (1, 3, None):
        assert worker.describe(dataset, version) == reference.describe(dataset, version)
        assert worker.read_table(dataset, version).equals(reference.read_table(dataset, version))
    assert worker.UNREPORTED == reference.UNREPORTED
    assert worker.driver_json()["name"] == "worker:reference"


def test_the_expected_schema_travels_to_the_driver(worker, dataset):
    """The schema is handed over as an Arrow IPC stream; a driver without a
    ``schema`` parameter reads without it, the rows are the same."""
    expected = reference.read_table(dataset, 2)
    assert worker.read_table(dataset, 2, schema=expected.schema).equals(expected)


def test_typed_errors_fail_the_call_and_the_worker_keeps_serving(worker, dataset, tmp_path):
    pid = worker.pid
    with pytest.raises(WorkerReplyError, match=r"worker:reference: refused: NotADatasetError: .*no manifest") as raised:
        worker.describe(str(tmp_path / "missing"))
    assert raised.value.kind is ErrorKind.REFUSED
    with pytest.raises(UnsupportedFeatureError, match="unsupported: UnsupportedFeatureError: .*version 0.2"):
        worker.read_table(str(CASES / "pylance-legacy-files" / "dataset"))
    assert worker.versions(dataset) == [1, 2, 3]
    assert worker.pid == pid


def test_writes_travel_with_their_rows_and_conflicts_are_write_conflicts(worker, tmp_path):
    target = str(tmp_path / "written")
    assert worker.write(target, Create(rows=pa.table({"id": pa.array([1, 2], pa.int64())}))).versions == (1,)
    assert worker.write(target, Append(rows=pa.table({"id": pa.array([3], pa.int64())}))).versions == (2,)
    assert reference.read_table(target).column("id").to_pylist() == [1, 2, 3]
    with pytest.raises(WriteConflict, match="conflict: WriteConflict: .*already exists"):
        worker.write(target, Create(rows=pa.table({"id": pa.array([9], pa.int64())})))
    assert not list(tmp_path.glob("lance-conformance-worker-*"))  # rows files live in the driver's scratch


@pytest.mark.parametrize(
    ("behaviour", "seen"),
    [
        ("segfault", r"ended during describe; segmentation fault \(signal 11\); nothing on stderr"),
        (
            "panic",
            r"ended during describe; exited with status 101; "
            r"stderr: thread 'main' panicked at src/blob.rs:42:9: blob column not supported by this reader",
        ),
        ("raise", r"ended during describe; exited with status 1; stderr: RuntimeError: the broken worker raises"),
        ("hang", r"did not answer describe within 2 s; stopped by the suite \(SIGKILL\)"),
        (
            "garbage",
            r"wrote stray output on stdout during describe, not a protocol reply: '<<this is not a response>>' "
            r"\(stdout carries the replies only: .*\); stopped by the suite",
        ),
        ("wrong-id", r"wrote garbage during describe \(not the response to request 3\)"),
        ("stdout-noise", r"wrote stray output on stdout during describe, not a protocol reply: 'INFO opening dataset'"),
        # Text without a newline before the reply: the stray text is quoted, not the reply after it.
        (
            "stdout-prefix",
            r"wrote stray output on stdout during describe, not a protocol reply: 'opening dataset\.\.\. ' ",
        ),
    ],
)
def test_a_broken_call_fails_with_what_was_seen_and_the_next_call_gets_a_fresh_worker(dataset, behaviour, seen):
    with WorkerDriver("broken", broken_command(f"describe:ref-naming-v1:{behaviour}"), timeout=2) as driver:
        assert driver.versions(dataset) == [1, 2, 3]
        first = driver.pid
        assert first is not None
        with pytest.raises(WorkerProcessError, match=r"^broken: the worker \(pid \d+\) " + seen):
            driver.describe(dataset, 1)
        assert not is_running(first)
        assert driver.pid is None
        assert driver.read_table(dataset, 1).num_rows == 5
        assert driver.pid not in (None, first)
        second = driver.pid
    assert not is_running(second)


def test_a_panic_quotes_the_stderr_from_the_panic_on(dataset):
    """The panic's lines are kept, not only the note Rust prints after them."""
    with WorkerDriver("broken", broken_command("versions::panic")) as driver:
        with pytest.raises(WorkerProcessError) as raised:
            driver.versions(dataset)
    assert raised.value.exit == 101
    assert "thread 'main' panicked at src/blob.rs:42:9:\nblob column not supported" in raised.value.stderr
    assert "its stderr:\nthread 'main' panicked" in str(raised.value)
    assert str(raised.value).endswith("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace")


@pytest.mark.parametrize(
    ("behaviour", "stray"),
    [
        ("garbage", "<<this is not a response>>"),
        ("stdout-noise", "INFO opening dataset"),
        ("stdout-prefix", "opening dataset... "),
    ],
)
def test_stray_stdout_is_its_own_error_naming_the_text(dataset, behaviour, stray):
    with WorkerDriver("broken", broken_command(f"versions::{behaviour}")) as driver:
        with pytest.raises(WorkerStrayOutputError) as raised:
            driver.versions(dataset)
        assert raised.value.garbage == stray


def test_a_corpus_run_through_a_broken_worker_completes(monkeypatch):
    """``verify_corpus`` with a worker that segfaults on one case, panics on
    another, hangs on a third and prints garbage on a fourth: those four
    fail naming what was seen, every other case passes, and the run ends."""
    monkeypatch.setenv(TIMEOUT_VARIABLE, "2")
    faults = {
        "ref-tags": "describe:ref-tags:segfault",
        "ref-types-blob": "read:ref-types-blob:panic",
        "ref-restore": "versions:ref-restore:hang",
        "ref-naming-v2": "describe:ref-naming-v2:garbage",
    }
    results = verify_corpus(CORPUS, broken_driver_name(*faults.values()))
    assert len(results) == len(case_dirs(CORPUS))
    by_case = {r.case: r for r in results}
    assert {r.case for r in results if r.status == FAIL} == set(faults)
    assert all(r.status == PASS for r in results if r.case not in faults)
    assert "segmentation fault (signal 11)" in " ".join(by_case["ref-tags"].problems)
    assert "exited with status 101; stderr: thread 'main' panicked at src/blob.rs:42:9: blob column" in " ".join(
        by_case["ref-types-blob"].problems
    )
    assert "did not answer versions within 2 s" in " ".join(by_case["ref-restore"].problems)
    assert "wrote stray output on stdout during describe" in " ".join(by_case["ref-naming-v2"].problems)


def test_a_crash_is_not_a_refusal():
    """A case whose version a reader must refuse fails when the worker
    crashes on it: a segfault is no refusal."""
    name = "crafted-unknown-reader-flag"
    (result,) = verify_corpus(CORPUS, broken_driver_name(f"describe@2:{name}:segfault"), only={name})
    assert result.status == FAIL
    assert result.problems == [
        f"v2: WorkerProcessError: {broken_driver_name(f'describe@2:{name}:segfault')}: the worker (pid "
        + result.problems[0].split("(pid ", 1)[1].split(")")[0]
        + ") ended during describe; segmentation fault (signal 11); nothing on stderr"
    ]
    (result,) = verify_corpus(CORPUS, "worker:reference", only={name})
    assert result.status == PASS


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("worker:", "worker: needs a driver name"),
        ("cmd:", "cmd: needs a command line"),
        ("cmd:/no/such/program --serve", "cannot be started: .*No such file or directory"),
        ("worker:no_such_driver_module", r"ended during hello; exited with status 2; stderr: worker: unknown driver"),
    ],
)
def test_a_worker_that_cannot_start_is_a_driver_error(name, message):
    with pytest.raises(DriverError, match=f"driver {name!r} cannot be loaded: .*{message}"):
        load_driver(name)


def test_a_worker_started_without_greeting_answers_the_same(dataset):
    """``load_driver(..., greet=False)`` starts the child and returns at
    once; the first call greets it, and it answers as a greeted worker."""
    driver = load_driver("worker:reference", greet=False)
    try:
        pid = driver.pid
        assert pid is not None and is_running(pid)
        greet_driver(driver, "worker:reference")
        assert driver.pid == pid and driver.protocol_version is not None
        assert driver.describe(dataset, 2) == reference.describe(dataset, 2)
        assert driver.read_table(dataset).equals(reference.read_table(dataset))
    finally:
        close_driver(driver)
    assert not is_running(pid)


def test_a_worker_started_without_greeting_is_greeted_by_its_first_call(dataset):
    driver = load_driver("worker:reference", greet=False)
    try:
        assert driver.versions(dataset) == reference.versions(dataset)
        assert driver.driver_json()["name"] == "worker:reference"
    finally:
        close_driver(driver)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("worker:no_such_driver_module", r"ended during hello; exited with status 2; stderr: worker: unknown driver"),
        ("cmd:/no/such/program --serve", "cannot be started: .*No such file or directory"),
    ],
)
def test_a_worker_started_without_greeting_that_cannot_start_is_a_driver_error(name, message):
    """The error load_driver raises, raised by greet_driver (or at once, for
    a command that cannot be run at all), and no child left running."""
    with pytest.raises(DriverError, match=f"driver {name!r} cannot be loaded: .*{message}"):
        driver = load_driver(name, greet=False)
        pid = driver.pid
        greet_driver(driver, name)
    if "no_such_driver_module" in name:
        assert pid is not None and not is_running(pid)


def test_greeting_a_driver_that_is_no_worker_does_nothing():
    greet_driver(reference, "reference")
