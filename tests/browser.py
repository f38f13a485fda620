"""A real browser for the tests of the HTML pages: Debian's headless Chromium
driven through its chromedriver by selenium (``./dev`` installs the
``chromium`` and ``chromium-driver`` packages; selenium is in the test extra).

Fixture (registered in ``tests/conftest.py``):

* ``browser`` (session): a selenium WebDriver on a headless Chromium with a
  fresh profile directory. chromedriver is started here, on a loopback port,
  in a process group of its own; at the end of the session the browser is
  quit and chromedriver asked to shut down (it reaps its browser), its group
  is killed by its id if it has not exited, and any Chromium process still
  using the session's profile directory is killed by its pid, so nothing is
  left running, also after a failure (the session fails if something is).

Chromium's flags keep it off the network: this machine's closed network
refuses background connections (component updates, sync, QUIC probes), which
otherwise stall start-up; and without a crash handler, whose process would
outlive the browser.

:func:`save_screenshot` writes a PNG test artifact: under the test's
``tmp_path`` by default, or under ``$LANCE_CONFORMANCE_ARTIFACTS`` when set (CI
uploads that directory).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Where screenshots go when set (else the test's tmp_path).
ARTIFACTS_ENV = "LANCE_CONFORMANCE_ARTIFACTS"
STARTUP_SECONDS = 30
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # No crash handler: it would outlive the browser as a process of its own.
    "--disable-crash-reporter",
    "--disable-breakpad",
    "--window-size=1400,1000",
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: pip install -e '.[test]'"
    for program in (CHROMIUM, CHROMEDRIVER):
        if not os.access(program, os.X_OK):
            return f"{program} is missing: ./dev setup installs Debian's chromium and chromium-driver"
    return None


def processes_using(marker: str) -> list[int]:
    """Pids of the processes whose command line contains ``marker`` (a profile directory)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in command:
            pids.append(int(entry.name))
    return pids


def _wait_ready(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"chromedriver exited with {process.returncode} before answering", pytrace=False)
        try:
            with urllib.request.urlopen(f"{url}/status", timeout=2):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    pytest.fail(f"chromedriver did not answer on {url} within {STARTUP_SECONDS} s", pytrace=False)


def _stop(process: subprocess.Popen, url: str, profile: str) -> None:
    """chromedriver asked to shut down (it reaps its browser), its group
    killed by its id if it does not, then any Chromium still on ``profile``
    killed by pid."""
    try:
        with urllib.request.urlopen(f"{url}/shutdown", timeout=5):
            pass
    except (urllib.error.URLError, OSError):
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=10)
    deadline = time.monotonic() + 10
    while (left := processes_using(profile)) and time.monotonic() < deadline:
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    if left:
        pytest.fail(f"Chromium processes {left} outlived the session's browser", pytrace=False)


@pytest.fixture(scope="session")
def browser() -> Iterator:
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(missing, pytrace=False)
        pytest.skip(missing)
    from selenium import webdriver

    profile = tempfile.mkdtemp(prefix="lance-conformance-chromium-")
    port = _free_port()
    process = subprocess.Popen(
        [CHROMEDRIVER, f"--port={port}", "--allowed-ips=127.0.0.1", "--log-level=WARNING"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    driver = None
    try:
        _wait_ready(url, process)
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Remote(command_executor=url, options=options)
        driver.set_page_load_timeout(STARTUP_SECONDS)
        yield driver
    finally:
        if driver is not None:
            try:
                driver.quit()
            except Exception:  # the browser may be gone already; the processes are stopped below
                pass
        _stop(process, url, profile)
        shutil.rmtree(profile, ignore_errors=True)


def save_screenshot(driver, name: str, tmp_path: Path) -> Path:
    """A PNG of the page as shown, as a test artifact; its path."""
    root = Path(os.environ.get(ARTIFACTS_ENV) or tmp_path)
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{name}.png"
    if not driver.save_screenshot(str(path)):
        raise AssertionError(f"the browser could not save a screenshot to {path}")
    return path
