"""A deliberately broken worker: the reference driver served over the worker
protocol, except on the requests its ``--fault`` rules choose, where it
misbehaves the way a real implementation under test can.

``--fault REQUEST:URI_PART:BEHAVIOUR`` (repeatable): on a request of kind
REQUEST (``*`` for any; ``describe@2`` for version 2 only) whose ``uri``
contains URI_PART (empty for any),

* ``segfault``: the process kills itself with SIGSEGV (a crash in native code);
* ``panic``: a Rust-style panic: the panic message on stderr, exit status 101;
* ``raise``: an uncaught Python exception (a traceback on stderr, exit status 1);
* ``hang``: never answers (sleeps until killed);
* ``garbage``: prints a line that is not JSON, then carries on reading;
* ``wrong-id``: answers with another request's id;
* ``stdout-noise``: prints a log line on stdout before its (correct) answer;
* ``stdout-prefix``: prints text on stdout without a newline, then its answer
  (a native library's ``printf`` without one lands on the answer's line).

Run as a script: ``python broken_worker.py --fault describe:ref-tags:segfault``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

from conformance.drivers import reference
from conformance.drivers.worker.messages import encode
from conformance.drivers.worker.server import WorkerServer

BEHAVIOURS = ("segfault", "panic", "raise", "hang", "garbage", "wrong-id", "stdout-noise", "stdout-prefix")


def parse_fault(text: str) -> tuple[str, str, str]:
    request, uri_part, behaviour = text.split(":", 2)
    if behaviour not in BEHAVIOURS:
        raise argparse.ArgumentTypeError(f"unknown behaviour {behaviour!r}; known: {', '.join(BEHAVIOURS)}")
    return request, uri_part, behaviour


def chosen(faults: list[tuple[str, str, str]], request: object) -> str | None:
    if not isinstance(request, dict):
        return None
    for selector, uri_part, behaviour in faults:
        kind, _, version = selector.partition("@")
        if version and str(request.get("version")) != version:
            continue
        if kind in ("*", request.get("request")) and uri_part in str(request.get("uri", "")):
            return behaviour
    return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fault", type=parse_fault, action="append", default=[])
    faults = parser.parse_args().fault
    server = WorkerServer(reference, "broken")
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        behaviour = chosen(faults, request)
        if behaviour == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif behaviour == "panic":
            sys.stderr.write("thread 'main' panicked at src/blob.rs:42:9:\nblob column not supported by this reader\n")
            sys.stderr.write("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
            sys.stderr.flush()
            os._exit(101)
        elif behaviour == "raise":
            raise RuntimeError(f"the broken worker raises on {request.get('request')}")  # type: ignore[union-attr]
        elif behaviour == "hang":
            time.sleep(3600)
        elif behaviour == "garbage":
            out.write(b"<<this is not a response>>\n")
            out.flush()
            continue
        answer = server.answer(line)
        if behaviour == "wrong-id":
            answer["id"] = 10_000
        elif behaviour == "stdout-noise":
            out.write(b"INFO opening dataset\n")
        elif behaviour == "stdout-prefix":
            out.write(b"opening dataset... ")
        out.write(encode(answer))
        out.flush()
        if server.stopping:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
