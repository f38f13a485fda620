"""The worker protocol's own conformance test (:mod:`conformance.drivers.worker.protocol_check`):
the Python server speaks it, and the check catches a worker that does not."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from conformance.drivers.worker import python_worker_command
from conformance.drivers.worker.messages import encode
from conformance.drivers.worker.protocol_check import check_worker, protocol_schema, schema_problems

from .conftest import ROOT, broken_command


def test_the_python_server_speaks_the_protocol(dataset):
    """Handshake, every request kind, the error shapes and shutdown, each
    response valid against the schema: no problems."""
    assert check_worker(python_worker_command("reference"), dataset) == []


def test_the_python_server_speaks_it_from_the_command_line(dataset):
    completed = subprocess.run(
        [sys.executable, "-m", "conformance.drivers.worker", "--check", shlex.join(python_worker_command("reference"))]
        + ["--dataset", dataset],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.strip() == "speaks the worker protocol"


@pytest.mark.parametrize(
    ("fault", "seen"),
    [
        ("describe::garbage", "describe latest: the response is not JSON: b'<<this is not a response>>'"),
        ("versions::wrong-id", "versions: answered id 10000, not 3"),
        ("read::segfault", "read latest: the worker closed stdout: segmentation fault (signal 11)"),
        ("versions::stdout-noise", "versions: the response is not JSON: b'INFO opening dataset'"),
    ],
)
def test_the_check_names_what_a_broken_worker_does(dataset, fault, seen):
    problems = check_worker(broken_command(fault), dataset, timeout=30)
    assert problems[0] == seen, problems


def test_a_worker_declaring_only_read_latest_passes(dataset):
    """A worker is checked on what it declares: no versions or describe are
    demanded of it, its ``unsupported`` answer to a read of an older version
    by number stands, and the error and recovery steps use its read."""
    from . import read_latest_only

    assert check_worker(python_worker_command(read_latest_only.NAME), dataset) == []


def test_the_server_answers_a_call_the_driver_lacks_unsupported(dataset):
    """The Python server answers ``unsupported``, not ``refused``, for a
    request the served driver has no call for."""
    from conformance.drivers.worker.server import WorkerServer

    from . import read_latest_only

    server = WorkerServer(read_latest_only, read_latest_only.NAME)
    for request in ({"request": "versions", "uri": dataset}, {"request": "describe", "uri": dataset, "version": 1}):
        answer = server.answer(json.dumps({"id": 1, **request}).encode())
        assert answer["error"]["kind"] == "unsupported", answer


def test_a_worker_declaring_more_than_it_does_fails_the_check(tmp_path, dataset, monkeypatch):
    """Held to what it declares: the same reader declaring time travel may
    no longer answer a read of an older version ``unsupported``."""
    (tmp_path / "overclaiming_reader.py").write_text(
        "from dataclasses import replace\n"
        "from conformance.drivers.protocol import Capability\n"
        "from tests.conformance.drivers.worker import read_latest_only\n"
        "from tests.conformance.drivers.worker.read_latest_only import read_table\n"
        "def info():\n"
        "    capabilities = frozenset({Capability.READ_LATEST, Capability.TIME_TRAVEL})\n"
        "    return replace(read_latest_only.info(), capabilities=capabilities)\n"
    )
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{ROOT}")
    problems = check_worker(python_worker_command("overclaiming_reader"), dataset)
    assert problems and problems[0].startswith("read v1: failed: {'kind': 'unsupported'"), problems


def test_the_check_names_a_worker_that_hangs(dataset):
    problems = check_worker(broken_command("hello::hang"), dataset, timeout=1)
    assert problems == ["hello: no response within 1 s"]


def test_every_message_of_a_session_is_valid_against_the_schema(dataset, tmp_path):
    """Requests as the client builds them and the server's answers (results
    and every error kind it gives) validate against the protocol's schema."""
    from conformance.drivers import reference
    from conformance.drivers.worker.server import WorkerServer

    server = WorkerServer(reference, "reference")
    requests = [
        {"id": 1, "request": "hello", "protocol_versions": [1]},
        {"id": 2, "request": "versions", "uri": dataset},
        {"id": 3, "request": "describe", "uri": dataset, "version": 2},
        {"id": 4, "request": "read", "uri": dataset, "version": None, "output": str(tmp_path / "rows.arrow")},
        {"id": 5, "request": "describe", "uri": str(tmp_path / "missing"), "version": None},
        {"id": 6, "request": "versions"},
        {"id": 7, "request": "shutdown"},
    ]
    kinds = ["hello", "versions", "describe", "read", None, None, "shutdown"]
    errors = []
    for request, kind in zip(requests, kinds, strict=True):
        assert schema_problems("request", request) == [] or request["id"] == 6
        answer = json.loads(encode(server.answer(json.dumps(request).encode())))
        assert schema_problems("response", answer) == [], answer
        if kind is None:
            errors.append(answer["error"]["kind"])
        else:
            assert schema_problems(f"{kind}-result", answer["result"]) == [], answer
    assert errors == ["refused", "bad-request"]
    assert schema_problems("request", requests[5])  # the schema itself refuses what the server refused


def test_the_schema_lists_every_request_and_error_kind():
    from conformance.drivers.worker.errors import ErrorKind
    from conformance.drivers.worker.messages import RequestKind

    definitions = protocol_schema()["$defs"]
    assert definitions["request"]["properties"]["request"]["enum"] == [k.value for k in RequestKind]
    assert definitions["error"]["properties"]["kind"]["enum"] == [k.value for k in ErrorKind]
    assert all(f"{k.value}-request" in definitions and f"{k.value}-result" in definitions for k in RequestKind)


@pytest.mark.old_pylance
def test_an_old_release_served_from_its_own_venv_speaks_the_protocol(dataset):
    """``pylance@0.20.0``'s worker (the same server, bootstrapped in the
    release's venv) passes the check; what the release declares unreported
    may be null in its descriptions."""
    from conformance.drivers.release import ReleaseDriver
    from conformance.peers.old_pylance import ensure_venv
    from tests.conftest import OLD_PYLANCE_VERSION

    driver = ReleaseDriver("pylance@old", "pylance", ensure_venv(OLD_PYLANCE_VERSION), OLD_PYLANCE_VERSION)
    assert driver.pid is None  # nothing started: only its command line is used
    assert check_worker(driver.command, dataset) == []
