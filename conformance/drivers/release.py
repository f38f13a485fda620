"""A driver run inside another release's own environment: ``pylance@VERSION``.

An older pylance needs an older pyarrow (and numpy) than the project, so it
cannot be imported beside it. ``pylance@0.20.0`` therefore runs the very same
:mod:`conformance.drivers.pylance_driver` inside the venv
:func:`conformance.peers.old_pylance.ensure_venv` builds for that release, in
one long-lived child process per driver, and talks to it in JSON lines:

* the child starts by printing ``{"ready": {"lance_version": ..., "unreported": [...]}}``;
* each request is one line ``{"call": "info"|"versions"|"describe"|"read_table",
  "uri": ..., "version": ..., "arrow_path": ...}``; the answer is one line,
  ``{"result": ...}`` or ``{"error": {"type": ..., "message": ...}}``;
* ``read_table`` writes the rows as an Arrow IPC file at ``arrow_path`` (a
  file in the parent's scratch directory) and answers with the row count.

A failure of the release, a Rust panic included (``PanicException``, which
is not an ``Exception``), comes back as :class:`ReleaseCallError` naming the
error type and message; the child keeps serving. A child that dies or stops
answering within :data:`CALL_TIMEOUT_SECONDS` is killed, the call fails with
the end of its stderr, and the next call starts a new one.

The child runs this file as a script (``python -I release.py``: no
``PYTHONPATH``, no user site) and loads the ``conformance`` package from the
directory this file lives in without putting its parent on ``sys.path``, so
it sees only the release's own site-packages. Everything it imports is the
standard library, ``conformance.describe``, the driver, and the release's
``lance`` and ``pyarrow``.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import weakref
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - typing only
    from ..describe import Description
    from .protocol import DriverInfo

#: ``pylance@VERSION``: the driver name of a release run in its own venv.
RELEASE_SEPARATOR = "@"
#: Drivers that can run in a release's venv, by the name before the ``@``.
RELEASE_MODULES = {"pylance": "conformance.drivers.pylance_driver"}
CALL_TIMEOUT_SECONDS = 300.0
START_TIMEOUT_SECONDS = 120.0
STDERR_TAIL_BYTES = 4000


class ReleaseCallError(RuntimeError):
    """A call into the release failed; the message names the release, the
    error type it raised and its message."""


class ReleaseDriver:
    """A driver whose implementation runs in a release's venv (see the module
    docstring); the four driver names plus :meth:`close`."""

    def __init__(self, name: str, module: str, python: Path, release: str):
        self.name = name
        self.module = module
        self.python = Path(python)
        self.release = release
        self._scratch = tempfile.TemporaryDirectory(prefix="lance-conformance-release-")
        self._process: subprocess.Popen | None = None
        self._stderr: IO[bytes] | None = None
        self._calls = 0
        self.UNREPORTED: frozenset[str] = frozenset()
        self._info: DriverInfo | None = None
        self._finalizer = weakref.finalize(self, _stop, [None])
        self._start()

    # -- the driver API ---------------------------------------------------------

    def versions(self, uri) -> list[int]:
        return [int(v) for v in self._call("versions", uri, None)]

    def describe(self, uri, version: int | None = None) -> Description:
        return self._call("describe", uri, version)

    def info(self) -> DriverInfo:
        """The release's own declaration (its driver's ``info()``), under this driver's name."""
        if self._info is None:
            from dataclasses import replace

            from .protocol import DriverInfo

            self._info = replace(DriverInfo.from_json(self._call("info", "", None)), name=self.name)
        return self._info

    def read_table(self, uri, version: int | None = None, *, schema=None):
        """The release's rows (``schema``, the expected one, is not needed: the
        release reads the dataset's own)."""
        import pyarrow as pa

        self._calls += 1
        arrow_path = Path(self._scratch.name) / f"rows-{self._calls}.arrow"
        try:
            self._call("read_table", uri, version, arrow_path=str(arrow_path))
            with pa.OSFile(str(arrow_path), "rb") as source:
                return pa.ipc.open_file(source).read_all()
        finally:
            arrow_path.unlink(missing_ok=True)

    def close(self) -> None:
        """Stop the child (idempotent); the driver restarts it if used again."""
        process, self._process = self._process, None
        _stop([process])
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> ReleaseDriver:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
        self._scratch.cleanup()

    # -- the child process ---------------------------------------------------------

    def _start(self) -> None:
        env = dict(os.environ, LANCE_LOG="error")
        env.pop("PYTHONPATH", None)
        self._stderr = tempfile.TemporaryFile(dir=self._scratch.name)
        self._process = subprocess.Popen(
            [str(self.python), "-I", str(Path(__file__).resolve()), self.module],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=self._scratch.name,
            text=True,
            encoding="utf-8",
        )
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _stop, [self._process])
        ready = self._answer(START_TIMEOUT_SECONDS, "starting")
        if "ready" not in ready:
            self.close()
            raise ReleaseCallError(f"{self.name}: the child process did not start: {ready}")
        installed = ready["ready"]["lance_version"]
        if installed != self.release:
            self.close()
            raise ReleaseCallError(f"{self.name}: the child process runs lance {installed}, not {self.release}")
        self.UNREPORTED = frozenset(ready["ready"]["unreported"])

    def _call(self, call: str, uri, version: int | None, **extra):
        if self._process is None or self._process.poll() is not None:
            self.close()
            self._start()
        # The child runs in its own working directory: a relative path must
        # mean what it means here.
        uri = str(uri) if "://" in str(uri) else os.path.abspath(uri)
        request = {"call": call, "uri": uri, "version": version, **extra}
        assert self._process is not None and self._process.stdin is not None  # started just above
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
        except OSError as exc:
            raise self._died(f"could not be sent {call}: {exc}") from None
        answer = self._answer(CALL_TIMEOUT_SECONDS, call)
        if "error" in answer:
            error = answer["error"]
            raise ReleaseCallError(f"{self.name}: {error['type']}: {error['message']}")
        return answer["result"]

    def _answer(self, timeout: float, what: str) -> dict:
        assert self._process is not None and self._process.stdout is not None  # only called on a started child
        stdout = self._process.stdout
        readable, _, _ = select.select([stdout], [], [], timeout)
        if not readable:
            raise self._died(f"did not answer {what} within {timeout:.0f} s")
        line = stdout.readline()
        if not line:
            raise self._died(f"exited during {what}")
        try:
            return json.loads(line)
        except ValueError:
            raise self._died(f"wrote something other than JSON during {what}: {line[:200]!r}") from None

    def _died(self, what: str) -> ReleaseCallError:
        """Kill the child and describe its end with the tail of its stderr."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()  # it stopped answering: no point waiting for it
        _stop([process])
        code = process.returncode if process is not None else None
        tail = ""
        if self._stderr is not None:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - STDERR_TAIL_BYTES))
            tail = self._stderr.read().decode("utf-8", "replace").strip()
        self.close()
        message = f"{self.name}: the child process {what} (exit {code})"
        return ReleaseCallError(f"{message}; its stderr ends with:\n{tail}" if tail else message)


def _stop(holder: list) -> None:
    """Close a child's stdin (it exits at end of input), then make sure it is gone."""
    process = holder[0]
    if process is None:
        return
    holder[0] = None
    try:
        if process.stdin:
            process.stdin.close()
        process.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        process.kill()
        process.wait()
    finally:
        if process.stdout:
            process.stdout.close()


def open_release_driver(name: str) -> ReleaseDriver:
    """The driver for a name ``DRIVER@RELEASE`` (``pylance@0.20.0``); builds
    the release's venv on first use. Raises ``ValueError`` for an unknown
    driver or release, ``PeerUnavailableError`` when the release cannot be
    installed, :class:`ReleaseCallError` when its child does not start."""
    from ..peers.old_pylance import PINNED_REQUIREMENTS, ensure_venv

    driver, _, release = name.partition(RELEASE_SEPARATOR)
    if driver not in RELEASE_MODULES:
        raise ValueError(f"only {', '.join(sorted(RELEASE_MODULES))} run in a release's venv, not {driver!r}")
    if release not in PINNED_REQUIREMENTS:
        known = ", ".join(f"{driver}{RELEASE_SEPARATOR}{v}" for v in sorted(PINNED_REQUIREMENTS))
        raise ValueError(f"no pinned release {release!r} of {driver}; known: {known}")
    return ReleaseDriver(name, RELEASE_MODULES[driver], ensure_venv(release), release)


# ---------------------------------------------------------------------------
# The child side (runs in the release's venv)
# ---------------------------------------------------------------------------


def is_implementation_failure(exc: BaseException) -> bool:
    """Any ``Exception``, and a Rust panic surfaced by PyO3 (a ``BaseException``);
    never ``KeyboardInterrupt``, ``SystemExit`` or ``GeneratorExit``."""
    return isinstance(exc, Exception) or any(
        cls.__name__ == "PanicException" and cls.__module__ == "pyo3_runtime" for cls in type(exc).__mro__
    )


def _load_conformance_package() -> None:
    """Make ``conformance`` importable from this file's package directory
    alone (its parent directory may be a site-packages of another Python)."""
    import importlib.util

    package_dir = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location(
        "conformance", package_dir / "__init__.py", submodule_search_locations=[str(package_dir)]
    )
    assert spec is not None and spec.loader is not None  # a file location always has a loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["conformance"] = module
    spec.loader.exec_module(module)


def _handle(driver, request: dict):
    call = request["call"]
    if call == "info":
        return driver.info().to_json()
    if call == "versions":
        return driver.versions(request["uri"])
    if call == "describe":
        return driver.describe(request["uri"], request["version"])
    if call == "read_table":
        import pyarrow as pa

        table = driver.read_table(request["uri"], request["version"])
        with pa.OSFile(request["arrow_path"], "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        return table.num_rows
    raise ValueError(f"unknown call {call!r}")


def serve(module_name: str) -> int:
    """Answer requests from stdin until it closes (the child's main loop)."""
    import importlib

    # Keep the protocol channel to ourselves: anything the release prints
    # goes to stderr.
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())

    def send(message: dict) -> None:
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    import lance

    driver = importlib.import_module(module_name)
    send({"ready": {"lance_version": lance.__version__, "unreported": sorted(driver.UNREPORTED)}})
    for line in sys.stdin:
        try:
            send({"result": _handle(driver, json.loads(line))})
        except BaseException as exc:  # narrowed just below: a panic is a BaseException
            if not is_implementation_failure(exc):
                raise
            text = str(exc)
            send({"error": {"type": type(exc).__name__, "message": text.splitlines()[0] if text else ""}})
    return 0


if __name__ == "__main__":
    _load_conformance_package()
    sys.exit(serve(sys.argv[1]))
