"""The example worker of ``docs/writing-a-worker.md``
(``examples/worker-javascript/``): an outside implementer's worker in
JavaScript, a reader and writer of the latest version only over LanceDB for
Node.js.

It runs as the page tells an implementer to run it: the worker protocol's own
check, ``fixtures verify --driver "cmd:..." --expectations expectations.json``
over the whole golden corpus, ``writer-check`` and ``harness run --writer
"cmd:..."`` (writers racing on one dataset). The page quotes the worker whole;
a test keeps the quote equal to the file.

The worker runs under the Node.js and the packages of the ``lancedb-node``
driver's install (:mod:`conformance.drivers.lancedb_node`, built into the cache
on first use): a copy of the example sits beside a link to that install's
``node_modules``, as ``npm install`` would leave it. Without the package
indexes those tests skip, except in CI.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest

from conformance.cli import main as cli_main
from conformance.drivers import lancedb_node, load_driver
from conformance.drivers.worker.protocol_check import check_worker
from conformance.drivers.writes import WriteKind, WriteOutcome
from conformance.expectations import load_expectations
from conformance.fixtures.case import case_dirs, load_case
from conformance.fixtures.verify import EXPECTED_FAILURE, FEATURE_CAPABILITIES, NOT_APPLICABLE, PASS
from conformance.harness.history import SETUP_WRITER, load_history
from conformance.harness.runner import HISTORY_FILE, load_writer_file
from conformance.writer_conformance import SUITE as WRITERS_SUITE
from conformance.writer_conformance.report import StepStatus
from reference_impl.errors import UnsupportedFeatureError
from tests.project.test_readme_examples import readme_commands, readme_examples

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "worker-javascript"
PAGE = ROOT / "docs" / "writing-a-worker.md"
CORPUS = ROOT / "fixtures"
#: The line before the page's quote of the whole worker.
QUOTE_MARK = "<!-- quoted whole from examples/worker-javascript/worker.mjs (a test keeps them equal) -->"
#: A dataset of one version: a latest-only worker reads it as the check asks.
ONE_VERSION = CORPUS / "cases" / "ref-types-integers-floats" / "dataset"
#: What the example writes: the operations with one call of LanceDB's table
#: API that answers the version it committed.
WRITES = frozenset(
    {
        WriteKind.CREATE,
        WriteKind.APPEND,
        WriteKind.OVERWRITE,
        WriteKind.DELETE,
        WriteKind.UPDATE,
        WriteKind.UPSERT,
        WriteKind.ADD_COLUMNS,
        WriteKind.ALTER_COLUMNS,
        WriteKind.DROP_COLUMNS,
    }
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
def command(install, tmp_path_factory) -> list[str]:
    """``node worker.mjs`` in a copy of the example whose ``node_modules`` is the install's."""
    directory = tmp_path_factory.mktemp("worker-javascript")
    for name in ("worker.mjs", "package.json"):
        shutil.copyfile(EXAMPLE / name, directory / name)
    (directory / "node_modules").symlink_to(install.home / "node_modules", target_is_directory=True)
    return [str(install.node), str(directory / "worker.mjs")]


def quoted_worker(page: str) -> str | None:
    """The code block after :data:`QUOTE_MARK`, None when the page has none."""
    lines = page.splitlines()
    if QUOTE_MARK not in lines:
        return None
    start = lines.index(QUOTE_MARK) + 1
    if not lines[start].startswith("```"):
        return None
    end = lines.index("```", start + 1)
    return "\n".join(lines[start + 1 : end]) + "\n"


def test_the_page_quotes_the_worker_as_it_is():
    assert quoted_worker(PAGE.read_text(encoding="utf-8")) == (EXAMPLE / "worker.mjs").read_text(encoding="utf-8")


def test_every_other_javascript_block_of_the_page_is_an_excerpt_of_the_worker():
    """The page's shorter quotes are runs of the worker's own lines."""
    worker = (EXAMPLE / "worker.mjs").read_text(encoding="utf-8")
    excerpts = [e.code for e in readme_examples(PAGE.read_text(encoding="utf-8")) if e.language == "js"]
    assert len(excerpts) >= 2 and worker in excerpts
    assert [code for code in excerpts if code not in worker] == []


def test_a_changed_quote_is_caught():
    page = f"{QUOTE_MARK}\n```js\nconsole.log(1);\n```\n"
    assert quoted_worker(page) == "console.log(1);\n"
    assert quoted_worker(page) != (EXAMPLE / "worker.mjs").read_text(encoding="utf-8")
    assert quoted_worker("```js\nconsole.log(1);\n```\n") is None


def test_the_page_is_linked_from_the_readme_and_the_driver_protocol():
    for document in (ROOT / "README.md", ROOT / "docs" / "drivers.md"):
        assert "writing-a-worker.md" in document.read_text(encoding="utf-8"), document


def test_the_pages_commands_and_options_exist(capsys):
    """Every ``lance-conformance`` command the page shows is a subcommand
    whose ``--help`` lists the options it uses."""
    commands = [command for _, command in readme_commands(readme_examples(PAGE.read_text(encoding="utf-8")))]
    assert {tuple(c.split()[1:3]) for c in commands} >= {("fixtures", "verify"), ("writer-check", "--driver")}
    for command in commands:
        words = [word for word in command.split()[1:3] if not word.startswith("-")]
        with pytest.raises(SystemExit) as exit:
            cli_main([*words, "--help"])
        assert exit.value.code == 0
        listed = capsys.readouterr().out
        assert [o for o in sorted(set(re.findall(r"--[a-z][a-z-]*", command))) if o not in listed] == [], command


def test_the_example_pins_the_packages_the_lancedb_node_install_holds():
    """The tests run the example on the ``lancedb-node`` install: the same pins."""
    declared = json.loads((EXAMPLE / "package.json").read_text(encoding="utf-8"))
    assert declared["dependencies"] == lancedb_node.pinned_packages()
    assert declared["engines"]["node"] == f">={lancedb_node.MINIMUM_NODE_MAJOR}"


def test_its_expectations_file_is_valid_and_names_its_implementation():
    expectations = load_expectations(EXAMPLE / "expectations.json")
    assert expectations.implementation == "example-latest-only" and expectations.entries
    assert {entry.suite for entry in expectations.entries} <= {"readers", WRITERS_SUITE}


@pytest.mark.node
def test_the_example_speaks_the_worker_protocol(command):
    assert check_worker(command, ONE_VERSION) == []


@pytest.mark.node
def test_it_declares_a_latest_only_reader_and_writer_and_refuses_older_versions_typed(command):
    """hello declares what it does and nothing more (writes, but not on an
    older version); an older version asked for is answered ``unsupported``
    (UnsupportedFeatureError), the latest read."""
    driver = load_driver("cmd:" + shlex.join(command))
    try:
        info = driver.info()
        assert info.implementation == "example-latest-only"
        assert info.version == lancedb_node.pinned_packages()["@lancedb/lancedb"]
        assert sorted(c.value for c in info.capabilities) == ["list-versions", "read-latest", "write"]
        assert set(info.write_operations) == {kind.value for kind in WRITES}
        dataset = CORPUS / "cases" / "ref-tags" / "dataset"
        latest = driver.versions(dataset)[-1]
        with pytest.raises(UnsupportedFeatureError, match="latest version"):
            driver.read_table(dataset, 1)
        assert driver.read_table(dataset, latest).num_rows == driver.read_table(dataset).num_rows > 0
    finally:
        driver.close()


@pytest.mark.node
def test_fixtures_verify_passes_every_case_a_latest_only_reader_can(command, capsys):
    """The page's ``fixtures verify`` over the whole corpus exits 0: every case
    passes except the blob cases (not applicable, naming ``blobs``) and
    exactly the entries of the example's expectations file (expected
    failures); every version of the cases with several is read from the
    suite's copies, without time travel."""
    argv = ["fixtures", "verify", "--corpus", str(CORPUS), "--driver", "cmd:" + shlex.join(command)]
    argv += ["--expectations", str(EXAMPLE / "expectations.json"), "--format", "json"]
    assert cli_main(argv) == 0
    results = {result["case"]: result for result in json.loads(capsys.readouterr().out)["results"]}
    assert set(results) == {case_dir.name for case_dir in case_dirs(CORPUS)}
    needs_missing = {
        case_dir.name: sorted(
            FEATURE_CAPABILITIES[f].value for f in load_case(case_dir).features if f in FEATURE_CAPABILITIES
        )
        for case_dir in case_dirs(CORPUS)
    }
    expected = {entry.case for entry in load_expectations(EXAMPLE / "expectations.json").entries}
    for name, result in results.items():
        if needs_missing[name]:
            assert result["status"] == NOT_APPLICABLE and result["missing_capabilities"] == needs_missing[name], result
        elif name in expected:
            assert result["status"] == EXPECTED_FAILURE, result
        else:
            assert result["status"] == PASS, result
            assert "describe" in result["missing_capabilities"]
            assert any("without time travel" in note for note in result["notes"])
    assert any(needs_missing.values())


@pytest.mark.node
def test_a_write_on_an_older_version_is_unsupported_and_commits_nothing(command, tmp_path):
    """LanceDB writes on the latest version only: an operation built on
    another (``read_version`` set) is refused as not supported, typed, and
    the dataset keeps its versions; the same operation on the latest commits
    the next version and says so."""
    import pyarrow as pa  # lazy: only the writing tests build rows

    from conformance.drivers import writes  # lazy: the write vocabulary imports pyarrow

    driver = load_driver("cmd:" + shlex.join(command))
    dataset = tmp_path / "table"
    try:
        rows = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
        assert writes.write_result(driver.write(dataset, writes.Create(rows))).versions == (1,)
        assert writes.write_result(driver.write(dataset, writes.Append(rows))).versions == (2,)
        with pytest.raises(writes.WriteNotSupported, match="latest version only"):
            driver.write(dataset, writes.Delete(writes.Compare("id", "=", 1), read_version=1))
        assert driver.versions(dataset) == [1, 2]
        deleted = writes.write_result(driver.write(dataset, writes.Delete(writes.Compare("id", "=", 1))))
        assert deleted.versions == (3,) and driver.read_table(dataset).num_rows == 4
    finally:
        driver.close()


@pytest.mark.node
def test_writer_check_passes_every_step_it_performs(command, capsys):
    """The page's ``writer-check`` exits 0: every step of an operation the
    worker declares passes (or is an expected failure its expectations file
    lists, suite ``writers``), every version it committed checked by the
    validator and every installed reader; every other step is not
    applicable, naming the operation it does not perform."""
    argv = ["writer-check", "--driver", "cmd:" + shlex.join(command), "--format", "json"]
    argv += ["--expectations", str(EXAMPLE / "expectations.json")]
    assert cli_main(argv) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    known = {e.case for e in load_expectations(EXAMPLE / "expectations.json").entries if e.suite == WRITERS_SUITE}
    for step in steps:
        if WriteKind(step["kind"]) in WRITES:
            expected = StepStatus.EXPECTED_FAILURE if step["id"] in known else StepStatus.PASS
            assert step["status"] == expected.value, step
        else:
            assert step["status"] == StepStatus.NOT_APPLICABLE.value and "does not perform" in step["reason"], step
    assert {WriteKind(step["kind"]) for step in steps} > WRITES


@pytest.mark.node
def test_it_races_in_the_concurrency_harness(command, tmp_path, capsys):
    """``harness run --writer "cmd:..."`` with two writers in local processes:
    the worker creates the dataset, writer 0 appends, writer 1 adds columns,
    deletes and compacts. Compaction is not among its operations, so it is
    skipped and the run says so. The run exits 0 with no anomaly, every append
    is acknowledged with the one version it committed, and every other attempt
    is acknowledged or, where it lost a race (a column addition preempted by an
    append may), a typed conflict: never an error."""
    out = tmp_path / "run"
    argv = ["harness", "run", "--writer", "cmd:" + shlex.join(command), "--writers", "2", "--operations", "4"]
    argv += ["--workload", "append", "--workload", "add-columns:1,delete:1,compact:1"]
    argv += ["--master", "local-processes", "--out", str(out), "--format", "json"]
    assert cli_main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["clean"] and report["anomalies"] == [] and report["skipped_workloads"] == [WriteKind.COMPACT.value]
    history = load_history(out / HISTORY_FILE)
    setup, attempts = history[0], history[1:]
    assert setup.writer == SETUP_WRITER and setup.kind is WriteKind.CREATE and setup.versions == (1,)
    assert {attempt.writer for attempt in attempts} == {0, 1} and len(attempts) == 8
    assert {a.kind for a in attempts if a.writer == 0} == {WriteKind.APPEND}
    assert {a.kind for a in attempts if a.writer == 1} <= {WriteKind.ADD_COLUMNS, WriteKind.DELETE}
    for attempt in attempts:
        if attempt.kind is WriteKind.APPEND:
            assert attempt.outcome is WriteOutcome.ACKNOWLEDGED and len(attempt.versions) == 1, attempt
        else:
            assert attempt.outcome in (WriteOutcome.ACKNOWLEDGED, WriteOutcome.CONFLICT), attempt
    skipped, driver = load_writer_file(out)
    assert skipped == [WriteKind.COMPACT.value] and driver is not None
    assert driver["implementation"] == "example-latest-only" and "write-at-version" not in driver["capabilities"]
