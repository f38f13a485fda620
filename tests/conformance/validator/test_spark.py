"""The validator as a Spark job reports what the local run reports: the same
findings in the same order, serially, with a pool of reader threads and on
Spark, both with the versions' rules on executors and with only the per-file
reads there; and whatever an executor meets (a damaged file, a load that
raises, a chunk it cannot read) becomes the finding a local run gives.

The default run checks a few golden cases, a few mutations and damaged files
on the shared ``local[8]`` session (``spark_local``); the whole golden corpus
and every file mutation run on a standalone cluster on loopback under the
``spark_cluster`` marker (``tox -e spark``).
"""

from __future__ import annotations

import os
import pickle

import pytest

from conformance.fixtures import default_corpus
from conformance.mutations import all_mutations, copy_dataset
from conformance.validator import validate
from conformance.validator.context import Failed, Ok
from conformance.validator.spark import SparkDistribution, dumps, run_loads, run_versions
from conformance.validator.spark import validate as validate_on_spark
from reference_impl.errors import CorruptFileError, PathEscapeError, UnreadablePathError

CASES = sorted(path for path in (default_corpus() / "cases").glob("*/dataset") if path.is_dir())
#: Golden cases for the default run: the most data files, deletion files and index files.
FEW_CASES = ["old-update-compaction", "pylance-fragment-reuse-index", "pylance-stable-row-ids", "old-index-tags"]
#: The mutations whose rules read files the executors read (as in test_parallel_reads).
FILE_MUTATIONS = [m for m in all_mutations() if m.rule.split("/")[0] in ("data-file", "deletion", "base-path", "index")]
#: One of each topic for the default run, with and without an external manifest store.
FEW_MUTATIONS = [
    next(m for m in FILE_MUTATIONS if m.rule.startswith(topic) and m.manifest_store is store)
    for topic, store in (("data-file", False), ("deletion", False), ("index", False))
] + [m for m in all_mutations() if m.manifest_store][:1]


def _case(name: str):
    return next(path for path in CASES if path.parent.name == name)


def _spark_report(root, session, on_executors: bool, store=None, **options) -> tuple[dict, SparkDistribution]:
    """The JSON report of a Spark run, and the distribution that ran it (its
    counters). Work is cut for two task slots: on a two-core machine more
    only start more Python workers."""
    distribution = SparkDistribution(
        session.sparkContext, path=root, manifest_store=store, versions_on_executors=on_executors, parallelism=2
    )
    report = validate(root, manifest_store=store, distribution=distribution, **options)
    return report.to_json(), distribution


def _assert_same_everywhere(root, session, store=None, **options) -> dict:
    """Serial, threaded and both Spark modes give one report; the per-version
    mode ran every version on executors, and neither mode redid anything on
    the driver."""
    serial = validate(root, io_threads=1, manifest_store=store, **options).to_json()
    assert validate(root, io_threads=8, manifest_store=store, **options).to_json() == serial
    by_version, distribution = _spark_report(root, session, True, store, **options)
    assert by_version == serial
    assert distribution.versions_done_on_executors == len(serial["versions"])
    assert distribution.redone_locally == 0
    by_file, distribution = _spark_report(root, session, False, store, **options)
    assert by_file == serial
    assert distribution.versions_done_on_executors == 0 and distribution.redone_locally == 0
    return serial


# -- what crosses between processes ------------------------------------------------------


def test_format_errors_cross_to_the_driver_as_raised():
    """Property: a format error pickled on an executor is, on the driver, of
    the same class with the same message, path and problem (their
    ``__init__`` does not take their ``args``: ``LanceFormatError`` says
    how it is pickled)."""
    for error in (
        CorruptFileError("/d/data/a.lance", "truncated"),
        UnreadablePathError("/d/data/b.lance", "permission denied"),
        PathEscapeError("/d", "invalid relative path '..'"),
    ):
        copy = pickle.loads(dumps(Failed(error))).error
        assert type(copy) is type(error)
        assert (str(copy), copy.path, copy.problem) == (str(error), error.path, error.problem)


def test_an_s3_storage_and_a_sqlite_store_cross_without_their_connections(tmp_path):
    from reference_impl.commit.external_store import SqliteManifestStore
    from reference_impl.storage.object_store import S3Storage

    options = {
        "aws_endpoint": "http://127.0.0.1:1",
        "allow_http": "true",
        "aws_access_key_id": "k",
        "aws_secret_access_key": "s",
    }
    storage = S3Storage("bucket", "some/table", storage_options=options, writable=False)
    copy = pickle.loads(dumps(storage))
    assert (copy.root, copy.storage_options, copy.writable) == (storage.root, storage.storage_options, False)
    store = SqliteManifestStore(tmp_path / "store.db", read_only=True)
    copy = pickle.loads(dumps(store))
    assert (copy.path, copy.read_only) == (store.path, True)


def _corrupt(path: str) -> int:
    raise CorruptFileError(path, "bytes that do not decode")


def _broken(path: str) -> int:
    raise RuntimeError(f"not a format error: {path}")


def test_an_executor_sends_back_format_errors_and_leaves_other_failures_to_the_driver():
    """What an executor's chunk of loads gives back: the value, the format
    error as the local load keeps it, and None (the driver loads it itself,
    meeting the error where a local run does) for anything else."""
    jobs = [(len, ("abc",)), (_corrupt, ("/d/x",)), (_broken, ("/d/y",))]
    for threads in (1, 4):
        answer = pickle.loads(run_loads(dumps((threads, jobs))))
        assert answer[0] == Ok(3)
        assert isinstance(answer[1], Failed) and str(answer[1].error) == "/d/x: bytes that do not decode"
        assert answer[2] is None
    assert pickle.loads(run_loads(b"not a pickle")) is None
    assert pickle.loads(run_versions(b"not a pickle")) is None


# -- on the shared local session -------------------------------------------------------------


@pytest.fixture(scope="module")
def session(spark_local):
    return spark_local.session()


@pytest.mark.parametrize("name", FEW_CASES)
def test_a_golden_case_reports_the_same_serial_parallel_and_on_spark(session, name):
    _assert_same_everywhere(_case(name), session, all_versions=True)


def test_the_latest_version_alone_is_read_by_executors(session):
    """One version: its rules run on the driver, its footers and deletion files are read by executors."""
    root = _case("old-appends-deletes")
    serial = validate(root).to_json()
    report, distribution = _spark_report(root, session, None)
    assert report == serial
    assert distribution.loads_on_executors >= 2 and distribution.redone_locally == 0


@pytest.mark.parametrize("case", FEW_MUTATIONS, ids=[m.id for m in FEW_MUTATIONS])
def test_a_mutated_dataset_reports_the_same_serial_parallel_and_on_spark(case, base_datasets, tmp_path, session):
    root = copy_dataset(base_datasets[case.base], tmp_path / "ds")
    store = case.store_for(root)
    case.apply(root)
    serial = _assert_same_everywhere(root, session, store, all_versions=True)
    assert any(f["rule"] == case.rule for f in serial["findings"]), "the mutation is not reported at all"


def test_damaged_files_read_by_executors_give_the_local_findings(base_datasets, tmp_path, session):
    """Truncated, garbage, a named pipe and a missing file: the executors'
    failed reads become the findings of the local run, in its order."""
    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    files = sorted((root / "data").iterdir())
    files[0].write_bytes(files[0].read_bytes()[:10])
    files[1].write_bytes(b"\xff" * 200)
    files[2].unlink()
    os.mkfifo(files[2])
    files[3].unlink()
    serial = _assert_same_everywhere(root, session, all_versions=True)
    assert {f["rule"] for f in serial["findings"] if f["severity"] == "error"}, "the damage is not reported"
    report, distribution = _spark_report(root, session, None)
    assert report == validate(root).to_json() and distribution.loads_on_executors >= 2


#: Deep validation on Spark: golden cases of 2.0, 2.1 and 2.2 files, and the data-page mutations.
DEEP_CASES = ["ref-file-format-2-1", "old-update-compaction"]
DEEP_MUTATIONS = [m for m in all_mutations() if m.rule.startswith("data-page/")]


@pytest.mark.parametrize("name", DEEP_CASES)
def test_a_deep_validation_decodes_on_executors_and_reports_what_a_local_one_does(session, name):
    """--deep --spark: the data files are decoded by executors (a batch of
    new files at a time, as footers are read; the versions' rules stay on
    the driver) and the report is the local one."""
    root = _case(name)
    serial = validate(root, all_versions=True, deep=True).to_json()
    assert serial["deep"] is True
    report, distribution = _spark_report(root, session, None, all_versions=True, deep=True)
    assert report == serial
    assert distribution.versions_done_on_executors == 0 and distribution.redone_locally == 0
    assert distribution.loads_on_executors > 0


def test_deep_decodings_are_loads_of_their_own_on_executors(session):
    """The decodings of a deep run go out as loads of their own: more loads
    reach the executors than in the shallow run of the same dataset."""
    root = _case("old-update-compaction")
    _, shallow = _spark_report(root, session, False, all_versions=True)
    _, deep = _spark_report(root, session, False, all_versions=True, deep=True)
    assert deep.loads_on_executors > shallow.loads_on_executors
    assert deep.redone_locally == 0


@pytest.mark.parametrize("case", DEEP_MUTATIONS, ids=[m.id for m in DEEP_MUTATIONS])
def test_a_page_level_mutation_is_reported_the_same_deep_on_spark(case, base_datasets, tmp_path, session):
    root = copy_dataset(base_datasets[case.base], tmp_path / "ds")
    case.apply(root)
    serial = validate(root, all_versions=True, deep=True).to_json()
    assert any(f["rule"] == case.rule for f in serial["findings"]), "the mutation is not reported at all"
    report, distribution = _spark_report(root, session, None, all_versions=True, deep=True)
    assert report == serial and distribution.redone_locally == 0


def test_the_python_api_runs_on_a_session_it_is_given_and_leaves_it_running(session):
    root = _case("pylance-stable-row-ids")
    assert (
        validate_on_spark(root, all_versions=True, session=session).to_json()
        == validate(root, all_versions=True).to_json()
    )
    assert session.sparkContext._jsc is not None  # still running


# -- the whole corpus on a standalone cluster (tox -e spark) ------------------------------


@pytest.fixture(scope="module")
def cluster_session(spark_cluster):
    from conformance.spark_session import start_session

    session, owned = start_session(spark_cluster, "lance-conformance validator tests", {})
    try:
        yield session
    finally:
        if owned:
            session.stop()


@pytest.mark.spark_cluster
@pytest.mark.parametrize("root", CASES, ids=[path.parent.name for path in CASES])
def test_every_golden_case_reports_the_same_on_a_cluster(cluster_session, root):
    _assert_same_everywhere(root, cluster_session, all_versions=True)


@pytest.mark.spark_cluster
@pytest.mark.parametrize("case", FILE_MUTATIONS, ids=[m.id for m in FILE_MUTATIONS])
def test_every_file_mutation_reports_the_same_on_a_cluster(case, base_datasets, tmp_path, cluster_session):
    root = copy_dataset(base_datasets[case.base], tmp_path / "ds")
    store = case.store_for(root)
    case.apply(root)
    serial = _assert_same_everywhere(root, cluster_session, store, all_versions=True)
    assert any(f["rule"] == case.rule for f in serial["findings"]), "the mutation is not reported at all"
