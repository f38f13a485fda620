"""pylance's full scan of a dataset version, in a child process that a panic
or an abort cannot take the test run down with (the deep-validation
properties ask it whether a corruption changes what pylance reads)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

#: Seconds one scan may take in the child: a wide guard against a hang, never a measurement.
SCAN_TIMEOUT = 120

#: The child: one dataset path and version per line in, one JSON line out.
_SCANNER = r"""
import json, sys
import lance
for line in sys.stdin:
    request = json.loads(line)
    try:
        table = lance.dataset(request["path"], version=request["version"]).to_table()
        # Names and types only: pylance lists field metadata in no fixed order.
        types = [[field.name, str(field.type)] for field in table.schema]
        answer = {"ok": True, "rows": table.num_rows, "types": types}
    except Exception as exc:
        answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
    print(json.dumps(answer), flush=True)
"""


class PylanceScanner:
    """pylance's full scan in a child process, started again after a crash."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SCANNER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        return self.process

    def scan(self, path: Path, version: int) -> dict:
        """``{"ok": True, "rows": n, "types": [[name, type], ...]}``, or ``{"ok": False, ...}``
        when the scan raised, or the child died (a panic) or hung."""
        process = self.process if self.process is not None and self.process.poll() is None else self._start()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps({"path": str(path), "version": version}) + "\n")
            process.stdin.flush()
            line = _read_line(process, SCAN_TIMEOUT)
        except (BrokenPipeError, TimeoutError) as exc:
            self.stop()
            return {"ok": False, "error": f"the pylance process ended: {type(exc).__name__}"}
        if not line:
            self.stop()
            return {"ok": False, "error": "the pylance process died (a panic or an abort)"}
        return json.loads(line)

    def stop(self) -> None:
        """End the child this scanner started, by its pid."""
        if self.process is None:
            return
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process = None


def _read_line(process: subprocess.Popen, timeout: float) -> str:
    import selectors  # lazy: only the scanner waits on a pipe

    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise TimeoutError("no answer from pylance")
    return process.stdout.readline()
