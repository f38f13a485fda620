"""The lance-conformance command line, run as a user would run it."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pyarrow as pa
import pytest

from conformance.describe import validate_description
from reference_impl.dataset import Dataset


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True, timeout=timeout
    )


#: What the libraries the demo drives print on their own: pylance's and LanceDB's Rust log lines,
#: Python warnings (LanceDB's at a fork), log4j and Spark's start-up notices, the JVM's and Hadoop's.
THIRD_PARTY_MARKERS = (
    r"\b(WARN|INFO|ERROR)\s+lance",
    r"Warning:",
    r"log4j",
    r"Setting default log level",
    r"setLogLevel",
    r"NativeCodeLoader",
    r"incubator modules",
)

#: The demo writes datasets, reads the corpus with three drivers, runs writer conformance and
#: three harness runs on Spark: on a loaded 2-core machine that takes minutes.
DEMO_TIMEOUT = 420


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "ds"
    ds = Dataset.create(path, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", None, "c"]}))
    ds.append(pa.table({"id": pa.array([4], pa.int64()), "s": ["d"]}))
    return path


def test_describe_prints_the_canonical_json_document(small_dataset):
    result = run_cli("describe", str(small_dataset))
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    validate_description(document)
    assert document["version"] == 2 and document["num_rows"] == 4
    assert [f["name"] for f in document["schema"]] == ["id", "s"]


def test_describe_a_chosen_version_as_text(small_dataset):
    result = run_cli("describe", str(small_dataset), "--version", "1", "--format", "text")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("version 1 (v2 names), 3 rows, 1 fragments")
    assert "0: id int64" in result.stdout


def test_not_a_dataset_exits_2_without_a_traceback(tmp_path):
    result = run_cli("describe", str(tmp_path))
    assert result.returncode == 2
    assert "not a Lance dataset" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["describe", "validate"])
def test_a_missing_version_is_a_usage_error_naming_the_dataset_and_what_exists(small_dataset, tmp_path, command):
    """A version never committed, and one whose manifest a cleanup removed,
    exit 2 (as an unknown tag does), naming the dataset, the version and the
    versions present; nothing is validated or described."""
    missing = run_cli(command, str(small_dataset), "--version", "9")
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert f"{small_dataset}: version 9 has no manifest (versions present: 1, 2)" in missing.stderr
    assert missing.stdout == "" and "Traceback" not in missing.stderr

    import shutil

    cleaned = tmp_path / f"cleaned-{command}"
    shutil.copytree(small_dataset, cleaned)
    from reference_impl.naming import parse_manifest_name

    (first,) = [m for m in (cleaned / "_versions").glob("*.manifest") if parse_manifest_name(m.name)[0] == 1]
    first.unlink()  # what a cleanup of old versions leaves
    removed = run_cli(command, str(cleaned), "--version", "1")
    assert removed.returncode == 2 and "version 1 has no manifest (versions present: 2)" in removed.stderr
    assert run_cli(command, str(cleaned), "--version", "2").returncode == 0


def test_a_corrupt_manifest_exits_1_naming_the_file(small_dataset, tmp_path):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(small_dataset, broken)
    manifest = sorted((broken / "_versions").glob("*.manifest"))[0]
    manifest.write_bytes(manifest.read_bytes()[:-3])
    result = run_cli("describe", str(broken))
    assert result.returncode == 1
    assert manifest.name in result.stderr and "Traceback" not in result.stderr


def test_the_demo_runs_and_reports_agreement(tmp_path, browser):
    pytest.importorskip("lance")
    from selenium.webdriver.common.by import By

    from tests.browser import save_screenshot

    result = run_cli("demo", "--out", str(tmp_path / "demo"), timeout=DEMO_TIMEOUT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "every description agrees and every version is valid" in result.stdout
    assert (tmp_path / "demo" / "reference_every_operation" / "_versions").is_dir()
    # The golden fixtures' matrix: one row per writer, at least the reference and pylance, no cell failing.
    assert "writer \\ reader" in result.stdout
    header = next(line for line in result.stdout.splitlines() if line.startswith("writer \\ reader"))
    assert {"reference", "pylance"} <= set(header.split()[3:]), header
    rows = [line for line in result.stdout.splitlines() if line.startswith(("lance ", "lance-conformance "))]
    assert len(rows) >= 3 and not any(" fail" in line or " fixed" in line for line in rows), result.stdout
    # The ecosystem matrix page, as a browser shows it: a cell of the readers grid opens its cases.
    page = tmp_path / "demo" / "matrix.html"
    assert f"ecosystem matrix (golden cases, conflict matrix, versions, expectations): {page}" in result.stdout
    browser.get(page.as_uri())
    cell = browser.find_element(By.CSS_SELECTOR, "#grid-readers td.cell")
    cell.click()
    details = browser.find_element(By.ID, cell.get_attribute("data-details"))
    assert details.is_displayed() and details.find_elements(By.CSS_SELECTOR, "li.outcome")
    assert "pylance" in browser.find_element(By.ID, "drivers").text
    save_screenshot(browser, "demo-matrix", tmp_path)
    # The harness on local Spark: both correct writers clean, the faulty one caught by name.
    assert result.stdout.count("clean, as it must be") == 2, result.stdout
    assert "faulty:stale-read: caught: resurrected delete" in result.stdout
    assert (tmp_path / "demo" / "harness" / "faulty-stale-read-run" / "report.html").exists()
    # The screen holds the demo's own lines: what pylance, LanceDB, Spark and the JVM print is in the log it names.
    output = result.stdout + result.stderr
    shown = [marker for marker in THIRD_PARTY_MARKERS if re.search(marker, output)]
    assert not shown, output
    log = tmp_path / "demo" / "third-party.log"
    assert f"third-party logs (pylance, LanceDB, Spark, Java): {log}" in result.stdout
    assert log.is_file()
