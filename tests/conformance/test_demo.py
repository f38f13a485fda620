"""The demo's first screen holds its own lines: what the libraries it drives
print goes to a log file (conformance.demo.stderr_to). The whole demo, run
as a user runs it, is tests/conformance/test_cli.py's demo test."""

from __future__ import annotations

import subprocess
import sys
import textwrap

#: Inside stderr_to: a line of the demo's own, a Python warning, a child
#: process writing to the standard error it inherits (as Spark's JVM does),
#: and this process writing to descriptor 2 directly (as Rust's loggers do).
_NOISY = textwrap.dedent(
    """
    import os, subprocess, sys, warnings
    from pathlib import Path
    from conformance.demo import stderr_to

    print("before", flush=True)
    with stderr_to(Path(sys.argv[1])):
        print("own line")
        warnings.warn("fork support is experimental", RuntimeWarning)
        child = "import os; os.write(2, b'WARN  lance::index from a child process\\\\n')"
        subprocess.run([sys.executable, "-c", child], check=True)
        os.write(2, b"written to descriptor 2\\n")
        if sys.argv[2:] == ["raise"]:
            raise ValueError("the demo's own failure")
    print("after", file=sys.stderr)
    """
)


def _run(log, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _NOISY, str(log), *args], capture_output=True, text=True, timeout=120)


def test_what_libraries_print_goes_to_the_log_and_the_demo_lines_stay_on_screen(tmp_path):
    log = tmp_path / "third-party.log"
    result = _run(log)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "before\nown line\n"
    # Standard error is the terminal's again once the section ends.
    assert result.stderr == "after\n"
    captured = log.read_text()
    for line in ("RuntimeWarning: fork support is experimental", "from a child process", "written to descriptor 2"):
        assert line in captured, captured


def test_an_exception_inside_is_reported_on_the_terminal(tmp_path):
    """The traceback of the demo's own failure is not hidden in the log."""
    log = tmp_path / "third-party.log"
    result = _run(log, "raise")
    assert result.returncode == 1
    assert "ValueError: the demo's own failure" in result.stderr
    assert "after" not in result.stderr
    assert "the demo's own failure" not in log.read_text()
    assert "written to descriptor 2" in log.read_text()
