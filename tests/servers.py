"""Real servers for the object storage tests: moto's server (PyPI
``moto[server]``) in a child process, serving one request at a time and
speaking the S3 and DynamoDB APIs over HTTP on a loopback port, exactly as
AWS would be spoken to.

Fixtures (registered in ``tests/conftest.py``):

* ``moto_server`` (session): the endpoint ``http://127.0.0.1:PORT`` of one
  server started for the whole session (one per xdist worker), stopped by
  its pid when the session ends, also after a failure;
* ``s3_options``: the pylance-style storage options for that server;
* ``s3_bucket``: a fresh bucket for one test (names need three characters).

:func:`requested_keys` reads the server's request log: which keys (and
listing prefixes) of a bucket were asked for, to show that nothing outside
a dataset's root was touched.
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import boto3
import pytest

#: How long a fresh server may take to answer before the session gives up.
STARTUP_SECONDS = 60
REGION = "us-east-1"
#: The request log of each running server, by endpoint.
_LOGS: dict[str, Path] = {}
#: A request line of the server's log: "METHOD /path?query HTTP/1.1".
_REQUEST = re.compile(r'"(?:\x1b\[[0-9;]*m)*([A-Z]+) (\S+) HTTP/[0-9.]+')


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


#: The server's own program, run by this interpreter. moto's ``moto_server``
#: script serves each request on its own thread, and moto's S3 checks
#: If-None-Match and stores the object without a lock: two racing
#: conditional PUTs can both succeed (seen in CI: 2 winners out of 16), where
#: S3 itself lets exactly one win. Serving one request at a time gives the
#: tests the atomic conditional create the real store promises.
_SERIAL_SERVER = """
import os, sys
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
port = int(sys.argv[1])
os.environ.setdefault("MOTO_PORT", str(port))
run_simple("127.0.0.1", port, DomainDispatcherApplication(create_backend_app),
           threaded=False, request_handler=MotoRequestHandler)
"""


def _moto_command(port: int) -> list[str]:
    if importlib.util.find_spec("moto") is None:
        pytest.fail("moto is not installed: pip install -e '.[test]' (moto[server])", pytrace=False)
    return [sys.executable, "-c", _SERIAL_SERVER, str(port)]


def _answers(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _stop(process: subprocess.Popen) -> None:
    """Stop the server by its pid: SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@pytest.fixture(scope="session")
def moto_server(tmp_path_factory) -> Iterator[str]:
    """The endpoint of a moto server child process for this session."""
    log_path = tmp_path_factory.mktemp("moto") / "moto_server.log"
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(_moto_command(port), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _answers(endpoint):
            if process.poll() is not None or time.monotonic() > deadline:
                output = log_path.read_text(errors="replace")[-2000:]
                pytest.fail(f"moto_server on port {port} did not start:\n{output}", pytrace=False)
            time.sleep(0.1)
        _LOGS[endpoint] = log_path
        yield endpoint
    finally:
        _LOGS.pop(endpoint, None)
        _stop(process)


def requested_keys(endpoint: str, bucket: str) -> list[str]:
    """Every object key, and every listing prefix, of ``bucket`` that a
    request to the server at ``endpoint`` has named so far, in order."""
    found = []
    for line in _LOGS[endpoint].read_text(errors="replace").splitlines():
        match = _REQUEST.search(line)
        if match is None:
            continue
        parts = urlsplit(match.group(2))
        path = unquote(parts.path)
        if path == f"/{bucket}":
            found.extend(parse_qs(parts.query).get("prefix", [""]))
        elif path.startswith(f"/{bucket}/"):
            found.append(path[len(bucket) + 2 :])
    return found


@pytest.fixture
def s3_options(moto_server) -> dict[str, str]:
    """Storage options, as pylance spells them, for the session's moto server."""
    return {
        "aws_endpoint": moto_server,
        "dynamodb_endpoint": moto_server,
        "allow_http": "true",
        "aws_region": REGION,
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
    }


def s3_client(options: dict[str, str]):
    """A plain boto3 client for the test's own setup and inspection."""
    return boto3.client(
        "s3",
        endpoint_url=options["aws_endpoint"],
        region_name=options["aws_region"],
        aws_access_key_id=options["aws_access_key_id"],
        aws_secret_access_key=options["aws_secret_access_key"],
    )


@pytest.fixture
def s3_bucket(s3_options) -> str:
    """A fresh, empty bucket on the moto server."""
    name = f"lc-{uuid.uuid4().hex[:16]}"
    s3_client(s3_options).create_bucket(Bucket=name)
    return name
