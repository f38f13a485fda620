"""Running ``validate`` and ``describe`` on a hostile dataset and saying what
went wrong, for the hostile-file tests.

:func:`check_dataset` runs the command line in-process (every ``validate``
format over all versions, ``describe`` of every version and of the latest)
and returns the broken promises: an exception escaping the command (what a
user sees as a traceback), a run that does not finish within its deadline, a
JSON report missing or not matching its schema, an error message that names
no path, an internal error of a rule, or a file opened under a directory
planted outside the dataset.

Permissions mean nothing to root, and CI runs as root, so the checks run in a
*probe*: a child process (``python -m tests.hostile_probe``) started with the
capabilities that bypass file permissions (``CAP_DAC_OVERRIDE``,
``CAP_DAC_READ_SEARCH``) dropped by ``setpriv``. It reads one request per line
on stdin and answers each with one JSON line; on start it proves that a mode
000 file is unreadable to it, so a probe that still bypasses permissions is
refused rather than silently testing nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

#: Seconds one command may take on a small damaged dataset (they take well under one).
RUN_DEADLINE = 15.0
#: The capabilities that let root ignore file permissions.
BYPASS_CAPABILITIES = ("dac_override", "dac_read_search")


class Deadline(BaseException):
    """A run did not finish in time (raised from SIGALRM, so that a blocking
    system call such as opening a named pipe is interrupted too). Not an
    ``Exception``: the validator turns those into findings, and a deadline
    must end the run."""


@contextlib.contextmanager
def deadline(seconds: float):
    """Raise :class:`Deadline` in the block after ``seconds``. Only the main
    thread receives signals; elsewhere the block runs without a limit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise Deadline(f"did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- watching for reads outside the dataset ------------------------------------------

_watched: list[str] = []
_seen_outside: list[str] = []
_hook_installed = False


def _audit(event: str, args: tuple) -> None:
    if not _watched or event not in ("open", "os.listdir", "os.scandir"):
        return
    target = args[0] if args else None
    if isinstance(target, (str, bytes, os.PathLike)):
        text = os.fsdecode(target)
        real = os.path.realpath(text)
        for directory in _watched:
            if real == directory or real.startswith(directory + os.sep):
                _seen_outside.append(f"{event} {text}")


@contextlib.contextmanager
def watch_outside(directory: str | os.PathLike):
    """Record every open or listing under ``directory`` in the block (an
    audit hook sees Python's ``open``, ``os.open``, ``os.listdir`` and
    ``os.scandir``, whichever path leads there)."""
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit)  # hooks cannot be removed; this one is idle outside the block
        _hook_installed = True
    _watched.append(os.path.realpath(directory))
    _seen_outside.clear()
    try:
        yield _seen_outside
    finally:
        _watched.clear()


# -- the checks ------------------------------------------------------------------------


def _command(argv: list[str]) -> tuple[int | None, str, str, str | None]:
    """Run the CLI in-process: (exit code, stdout, stderr, what escaped)."""
    from conformance.cli import main

    out, err = io.StringIO(), io.StringIO()
    escaped = None
    code = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), deadline(RUN_DEADLINE):
            code = main(argv)
    except Deadline as exc:
        escaped = f"hung: {exc}"
    except BaseException as exc:  # noqa: BLE001 - anything escaping main is a traceback to a user
        escaped = f"traceback: {type(exc).__name__}: {exc}"
    return code, out.getvalue(), err.getvalue(), escaped


def check_dataset(root: str, versions: list[int], outside: str | None = None) -> list[str]:
    """What goes wrong running ``validate`` (all formats, all versions) and
    ``describe`` (latest, and each of ``versions``) on ``root``; empty when
    every run finished with a report or a clean error naming a path."""
    from conformance.describe import schema_validator, validate_description
    from conformance.validator.engine import INTERNAL_ERROR_RULE

    problems: list[str] = []
    workdir = str(Path(root).parent)
    watching = watch_outside(outside) if outside else contextlib.nullcontext([])
    with watching as seen:
        for output in ("json", "text", "junit", "sarif"):
            argv = ["validate", root, "--all-versions", "--format", output]
            code, stdout, stderr, escaped = _command(argv)
            where = f"validate --format {output}"
            if escaped:
                problems.append(f"{where}: {escaped}")
                continue
            if code == 2:
                continue  # not a dataset (no manifest left): a clean refusal
            if code not in (0, 1) or not stdout.strip():
                problems.append(f"{where}: exit {code} without a report; stderr: {stderr.strip()[:300]}")
                continue
            if output == "json":
                try:
                    report = json.loads(stdout)
                except ValueError as exc:
                    problems.append(f"{where}: the report is not JSON: {exc}")
                    continue
                errors = list(schema_validator("validation-report.schema.json").iter_errors(report))
                if errors:
                    problems.append(f"{where}: the report does not match its schema: {errors[0].message}")
                problems.extend(
                    f"{where}: {finding['message']}"
                    for finding in report["findings"]
                    if finding["rule"] == INTERNAL_ERROR_RULE
                )
        for version in [None, *versions]:
            argv = ["describe", root] + ([] if version is None else ["--version", str(version)])
            code, stdout, stderr, escaped = _command(argv)
            where = f"describe{'' if version is None else f' --version {version}'}"
            if escaped:
                problems.append(f"{where}: {escaped}")
            elif code == 0:
                try:
                    validate_description(json.loads(stdout))
                except Exception as exc:  # noqa: BLE001
                    problems.append(f"{where}: the description is not a valid document: {exc}")
            elif code in (1, 2):
                if workdir not in stderr:
                    problems.append(f"{where}: the error names no path: {stderr.strip()[:300]}")
            else:
                problems.append(f"{where}: exit {code}; stderr: {stderr.strip()[:300]}")
        problems.extend(f"read outside the dataset: {entry}" for entry in dict.fromkeys(seen))
    return problems


# -- the probe process -------------------------------------------------------------------


def _bypasses_permissions() -> bool:
    """Whether this process can read a file whose mode is 000."""
    with tempfile.TemporaryDirectory() as directory:
        probe = Path(directory) / "mode-000"
        probe.write_bytes(b"x")
        probe.chmod(0)
        try:
            probe.read_bytes()
        except PermissionError:
            return False
        finally:
            probe.chmod(0o600)
        return True


def serve() -> None:
    """Answer requests ``{"root", "versions", "outside"}`` on stdin, one JSON
    line each, after a first line saying whether permissions bind here."""
    import conformance.cli  # noqa: F401  (imported before the first deadline starts)

    print(json.dumps({"bypasses_permissions": _bypasses_permissions()}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        problems = check_dataset(request["root"], request["versions"], request.get("outside"))
        print(json.dumps({"problems": problems}), flush=True)


def without_permission_bypass(argv: list[str]) -> list[str]:
    """``argv`` as a command that runs without the permission bypass: as is
    for an ordinary user; for root, under setpriv (or capsh) dropping the
    bypassing capabilities from the bounding and inheritable sets."""
    if os.geteuid() != 0:
        return argv
    if shutil.which("setpriv"):
        caps = ",".join(f"-{cap}" for cap in BYPASS_CAPABILITIES)
        return ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}", *argv]
    if shutil.which("capsh"):
        drop = ",".join(f"cap_{cap}" for cap in BYPASS_CAPABILITIES)
        return ["capsh", f"--drop={drop}", "--", "-c", shlex.join(argv)]
    raise RuntimeError("running as root, and neither setpriv nor capsh is here to drop the permission bypass")


class Probe:
    """A running probe process (see the module docs)."""

    def __init__(self) -> None:
        repo = Path(__file__).resolve().parent.parent
        command = without_permission_bypass([sys.executable, "-m", "tests.hostile_probe"])
        self.process = subprocess.Popen(
            command,
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        hello = self._answer(120)
        if hello.get("bypasses_permissions"):
            self.close()
            raise RuntimeError(f"the probe ({' '.join(command)}) still reads mode 000 files: permissions are bypassed")

    def _answer(self, timeout: float) -> dict:
        result: list[str] = []
        reader = threading.Thread(target=lambda: result.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        if not result or not result[0]:
            self.close()
            raise RuntimeError(f"the probe gave no answer within {timeout} s")
        return json.loads(result[0])

    def check(
        self, root: str | os.PathLike, versions: list[int], outside: str | os.PathLike | None = None
    ) -> list[str]:
        """:func:`check_dataset` in the probe."""
        request = {"root": str(root), "versions": versions, "outside": None if outside is None else str(outside)}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        # Each run has its own deadline inside; this one catches a probe that died.
        return self._answer(RUN_DEADLINE * (len(versions) + 6))["problems"]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


if __name__ == "__main__":
    serve()
