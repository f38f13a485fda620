"""One Ray head on loopback for a whole run, shared by every writer process.

:func:`engine_session` starts ``ray start --head --block`` bound to
127.0.0.1 (a free port of loopback for the head and for Ray's client
server; Ray's token authentication off, see :func:`engine_session`), waits
until the head says it started, exports ``RAY_ADDRESS`` and
:data:`LOOPBACK_ENVIRONMENT` to this process's environment (so that the
writer processes started inside the session inherit them and join that head
instead of starting their own), and on leaving stops the head by its pid:
``--block`` makes the ``ray start`` process the parent of every Ray process
of the head, and SIGTERM to it stops them all (the process group it leads is
killed only if it is still there after a wide grace period).

Ray replaces 127.0.0.1 by the machine's routable address unless
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (its single-machine mode, where the
node address is loopback and its gRPC servers listen on loopback only).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: What makes Ray keep to loopback, read by Ray when it is imported.
LOOPBACK_ENVIRONMENT: dict[str, str] = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def keep_ray_on_loopback() -> None:
    """Set :data:`LOOPBACK_ENVIRONMENT` in this process (where not set), for
    a Ray imported afterwards: by lance-ray, or by Daft, which imports Ray
    when it runs."""
    for key, value in LOOPBACK_ENVIRONMENT.items():
        os.environ.setdefault(key, value)


#: The line ``ray start --block`` prints once the head runs.
_STARTED = "Ray runtime started."
#: Wide guards against a head that hangs (never a measurement): start, stop.
START_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class RayHead:
    """A running head: the address writers join, and the pid of its ``ray start``."""

    address: str
    pid: int


class RayHeadError(RuntimeError):
    """The Ray head did not start; the message carries the end of its log."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ray_command() -> list[str]:
    """``ray`` of this interpreter's environment."""
    beside = Path(sys.executable).with_name("ray")
    return [str(beside)] if beside.exists() else [shutil.which("ray") or "ray"]


@contextlib.contextmanager
def engine_session(num_cpus: int = 2) -> Iterator[RayHead]:
    """A Ray head on loopback for the duration of the block."""
    port = _free_port()
    address = f"127.0.0.1:{port}"
    log_dir = Path(tempfile.mkdtemp(prefix="lance-conformance-ray-head-"))
    command = [
        *_ray_command(),
        "start",
        "--head",
        "--block",
        "--node-ip-address=127.0.0.1",
        f"--port={port}",
        f"--ray-client-server-port={_free_port()}",
        "--include-dashboard=false",
        f"--num-cpus={num_cpus}",
        "--disable-usage-stats",
    ]
    # No token authentication: a Ray client decides whether to send a token
    # when Ray is imported (Daft imports it before any session may start), and
    # clients send none by default, so a head asking for one would refuse
    # writers depending on import order. The head listens on loopback only.
    session_environment = {**LOOPBACK_ENVIRONMENT, "RAY_AUTH_MODE": "disabled"}
    environment = {**os.environ, **session_environment}
    log_path = log_dir / "head.log"
    saved = {key: os.environ.get(key) for key in ("RAY_ADDRESS", *session_environment)}
    with open(log_path, "wb") as log:
        head = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment, start_new_session=True)
    try:
        _wait_started(head, log_path)
        os.environ.update(session_environment)
        os.environ["RAY_ADDRESS"] = address
        yield RayHead(address, head.pid)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        _stop(head)
        shutil.rmtree(log_dir, ignore_errors=True)


def _wait_started(head: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        if _STARTED in text:
            return
        if head.poll() is not None:
            raise RayHeadError(f"ray start exited with {head.returncode}: {text[-2000:]}")
        time.sleep(0.2)
    raise RayHeadError(f"the Ray head did not start within {START_TIMEOUT_S:.0f} s: {log_path.read_text()[-2000:]}")


def _stop(head: subprocess.Popen) -> None:
    """SIGTERM to the head (it stops the Ray processes it started), then, if
    it is still there after the grace period, SIGKILL to its process group."""
    if head.poll() is None:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(timeout=STOP_TIMEOUT_S)
            return
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(head.pid, signal.SIGKILL)
    head.wait()
