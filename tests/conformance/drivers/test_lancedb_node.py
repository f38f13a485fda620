"""The LanceDB for Node.js driver: its set-up, its worker, reads of the golden
corpus and writes the reference reads.

The install (a Node.js 22 from PyPI when the machine's is older, the pinned
npm packages) is built into the cache on first use, about a minute, and
reused afterwards; without the package indexes the tests skip, except in CI.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pyarrow as pa
import pytest

from conformance.drivers import lancedb_node, load_driver, reference
from conformance.fixtures.expected import load_expected
from tests.conformance.drivers.test_lancedb_driver import ROWS, _by_id, _script, content_problems

pytestmark = pytest.mark.node

CASES = Path(__file__).resolve().parents[3] / "fixtures" / "cases"
#: 2.0 cases whose rows the reference pins (ref-types-nested is left out:
#: apache-arrow for JavaScript has no large_list, see the expectations file).
READ_CASES = (
    "ref-tags",
    "ref-types-temporal",
    "ref-types-strings-binary-decimal",
    "ref-deletion-bitmap",
    "ref-restore",
    "ref-empty-table",
    "ref-stable-row-ids",
    "old-schema-evolution",
    "old-nested-types",
)


@pytest.fixture(scope="module")
def install():
    try:
        return lancedb_node.ensure_install()
    except lancedb_node.NodeUnavailableError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"LanceDB for Node.js cannot be installed here: {exc}")


@pytest.fixture(scope="module")
def worker(install):
    driver = lancedb_node.open_worker(install)
    yield driver
    driver.close()


def test_the_install_is_complete_and_found_again(install):
    again = lancedb_node.installed()
    assert again == install and lancedb_node.available()
    assert (lancedb_node.node_major(again.node) or 0) >= lancedb_node.MINIMUM_NODE_MAJOR
    package = json.loads((again.home / "node_modules" / "@lancedb" / "lancedb" / "package.json").read_text())
    assert package["version"] == lancedb_node.pinned_packages()["@lancedb/lancedb"]


def test_the_worker_speaks_the_worker_protocol(install, monkeypatch):
    """The worker protocol's own conformance check, run on this worker."""
    from conformance.drivers.worker.protocol_check import check_worker

    for key, value in lancedb_node.worker_env(install).items():
        monkeypatch.setenv(key, value)
    assert check_worker(lancedb_node.worker_command(install), CASES / "ref-tags" / "dataset") == []


def test_hello_names_the_package_its_embedded_lance_and_capabilities(install, worker, tmp_path):
    hello = worker.driver_json()
    assert hello["name"] == hello["implementation"] == "lancedb-node"
    assert hello["version"] == lancedb_node.pinned_packages()["@lancedb/lancedb"]
    assert "describe" not in hello["capabilities"] and "blobs" not in hello["capabilities"]
    assert {"list-versions", "read-latest", "time-travel", "row-ids", "write"} <= set(hello["capabilities"])
    assert "config" not in hello["write_operations"]
    # The embedded Lance is the writer version of what the worker writes.
    from conformance.drivers import writes

    worker.write(str(tmp_path / "t"), writes.Create(ROWS))
    writer = reference.describe(str(tmp_path / "t"))["writer_version"]
    assert writer is not None and hello["lance_version"] == writer["version"]


@pytest.mark.parametrize("case", READ_CASES)
def test_rows_of_every_version_equal_the_references(worker, case):
    dataset = CASES / case / "dataset"
    expected = [v for v in load_expected(CASES / case) if v.outcome == "read"]
    assert worker.versions(dataset) == [v.version for v in expected]
    for version in expected:
        assert version.content is not None
        problems = content_problems(version.content, worker.read_table(str(dataset), version.version))
        assert problems == [], f"v{version.version}: {problems}"


def test_row_ids_come_with_the_rows(worker):
    dataset = str(CASES / "ref-stable-row-ids" / "dataset")
    with_ids = worker.read_table(dataset, with_row_ids=True)
    assert with_ids.drop_columns(["_rowid"]).equals(worker.read_table(dataset))
    assert with_ids.column("_rowid").type == pa.uint64()


def test_describe_is_refused_with_a_typed_error(worker):
    from reference_impl.errors import UnsupportedFeatureError

    with pytest.raises(UnsupportedFeatureError, match="cannot describe"):
        worker.describe(str(CASES / "ref-tags" / "dataset"))


def test_every_write_is_read_alike_by_the_reference_and_accepted_by_the_validator(worker, tmp_path):
    from conformance.validator.engine import validate
    from conformance.validator.registry import Severity

    uri = str(tmp_path / "dataset")
    committed = []
    for op in _script():
        version = worker.write(uri, op).version
        assert version is not None, f"{op.kind.value}: the worker says the version it committed"
        committed.append(version)
        ours, theirs = reference.read_table(uri, version), worker.read_table(uri, version)
        assert content_problems(_by_id(ours), _by_id(theirs)) == [], op.kind.value
    assert committed == sorted(committed) and committed[0] == 1
    assert reference.versions(uri) == worker.versions(uri)
    # Created at LanceDB for Node.js's default data file version, whose rows the reference reads.
    assert reference.describe(uri)["data_format"]["version"] == "2.2"
    report = validate(uri, all_versions=True)
    assert [f for f in report.findings if f.severity is Severity.ERROR] == []


def test_unsupported_writes_are_typed(worker, tmp_path):
    from conformance.drivers import writes

    uri = str(tmp_path / "dataset")
    worker.write(uri, writes.Create(ROWS))
    worker.write(uri, writes.Append(ROWS))
    with pytest.raises(writes.WriteNotSupported, match="latest version"):
        worker.write(uri, writes.Delete(writes.Compare("id", "=", 1), read_version=1))
    with pytest.raises(writes.WriteNotSupported, match="config"):
        worker.write(uri, writes.Config((("k", "v"),)))
    assert worker.versions(uri) == [1, 2]


def test_a_killed_worker_fails_one_request_and_the_next_one_gets_a_fresh_worker(worker):
    from conformance.drivers.worker.client import WorkerError

    dataset = str(CASES / "ref-tags" / "dataset")
    assert worker.versions(dataset) == [1, 2]
    pid = worker.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    try:
        worker.versions(dataset)
    except WorkerError as exc:
        assert "SIGKILL" in str(exc) or "exit" in str(exc)
    assert worker.versions(dataset) == [1, 2]
    assert worker.pid != pid


def test_the_driver_name_loads_the_module_driver():
    driver = load_driver("lancedb-node")
    assert driver is lancedb_node
    try:
        assert driver.versions(str(CASES / "ref-tags" / "dataset")) == [1, 2]
        info = lancedb_node.info()
        assert info.name == info.implementation == "lancedb-node"
        assert info.lance_version == lancedb_node.ensure_install().lance_version
    except lancedb_node.NodeUnavailableError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"LanceDB for Node.js cannot be installed here: {exc}")
    finally:
        lancedb_node.close()


def test_the_shipped_expectations_are_failures_of_today(worker):
    from tests.conformance.drivers.test_lancedb_driver import check_shipped_expectations

    check_shipped_expectations(worker, "lancedb-node")


def test_the_golden_corpus_fails_exactly_the_expectations(worker):
    from tests.conformance.drivers.test_lancedb_driver import check_corpus_matches_expectations

    check_corpus_matches_expectations("lancedb-node", worker)


@pytest.mark.node_install
def test_two_processes_racing_to_build_the_install_both_get_a_sound_one(tmp_path):
    """Race safety: two processes building the same install in an empty cache
    both end with the same complete install, and no staging directory stays."""
    import subprocess
    import sys

    env = dict(os.environ, LANCE_CONFORMANCE_CACHE=str(tmp_path / "cache"))
    program = (
        "from conformance.drivers import lancedb_node as n; i = n.ensure_install(); "
        "print(i.home, i.lance_version, n.versions('fixtures/cases/ref-tags/dataset')); n.close()"
    )
    root = CASES.parents[1]
    racers = [
        subprocess.Popen([sys.executable, "-c", program], env=env, cwd=root, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [racer.communicate(timeout=900)[0].strip().splitlines()[-1] for racer in racers]
    assert [racer.returncode for racer in racers] == [0, 0]
    assert outputs[0] == outputs[1] and outputs[0].endswith("[1, 2]")
    node_dir = tmp_path / "cache" / "node"
    assert [p.name for p in node_dir.iterdir()] == [Path(outputs[0].split()[0]).name]
