"""``validate`` of a many-fragment dataset on S3, reads in parallel against
reads one after another (issue 17, parallel I/O).

The dataset of ``reader._many_fragments`` (one-row fragments written by
pylance) is uploaded to a local moto server started for the benchmark (a
child process on 127.0.0.1, stopped by its pid), and validated twice through
the reference S3 storage: with the default pool for object stores and with
``io_threads=1``. Every request the validator's S3 client sends first waits
the injected latency (a botocore ``before-send`` hook that sleeps, as a
network round trip would: the thread waits, the core is free), so that the
local server behaves like a distant object store. The server is moto's,
started through :mod:`benchmarks.moto_launcher` (which takes a per-request
directory listing out of moto's own time; the stock ``moto_server`` with
``LANCE_CONFORMANCE_BENCH_STOCK_MOTO=1``).

Sizes (environment variables, so that ``python -m benchmarks`` takes them):

* ``LANCE_CONFORMANCE_BENCH_S3_FRAGMENTS``: fragments (default 10,000);
* ``LANCE_CONFORMANCE_BENCH_S3_LATENCY_MS``: milliseconds per request (default 20).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from .common import DATA_DIR, Measurement
from .reader import _many_fragments

REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def stock_moto() -> bool:
    """Whether the benchmark runs the stock ``moto_server`` rather than
    :mod:`benchmarks.moto_launcher` (``LANCE_CONFORMANCE_BENCH_STOCK_MOTO=1``)."""
    return os.environ.get("LANCE_CONFORMANCE_BENCH_STOCK_MOTO", "") not in ("", "0")


def _moto_command() -> list[str]:
    if not stock_moto():
        return [sys.executable, "-m", "benchmarks.moto_launcher"]
    script = Path(sys.executable).parent / "moto_server"
    command = str(script) if script.exists() else shutil.which("moto_server")
    if command is None:
        raise RuntimeError("moto_server is not installed: pip install -e '.[test]' (moto[server])")
    return [command]


@contextmanager
def moto_server() -> Iterator[str]:
    """The endpoint of a moto server child process, stopped by its pid on exit."""
    command = _moto_command()
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log_path = DATA_DIR / "moto_server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [*command, "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=Path(__file__).resolve().parent.parent,
        )
    try:
        deadline = time.monotonic() + 30
        while not _answers(endpoint):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"moto_server did not start: {log_path.read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)
        yield endpoint
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


def _options(endpoint: str) -> dict[str, str]:
    return {
        "aws_endpoint": endpoint,
        "allow_http": "true",
        "aws_region": REGION,
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
    }


def _upload(root: Path, endpoint: str, bucket: str, prefix: str) -> int:
    """Every file under ``root`` as ``prefix/<relative path>`` (plain boto3,
    16 uploads at a time, no latency); the number of objects."""
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    client.create_bucket(Bucket=bucket)
    files = [path for path in root.rglob("*") if path.is_file()]

    def put(path: Path) -> None:
        client.put_object(Bucket=bucket, Key=f"{prefix}/{path.relative_to(root).as_posix()}", Body=path.read_bytes())

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, files))
    return len(files)


@contextmanager
def injected_latency(uri: str, options: dict[str, str], seconds: float) -> Iterator[list[int]]:
    """Every request of the reference storage's S3 client (shared by every
    storage opened with ``options`` in this process) waits ``seconds`` before
    it is sent; yields a one-element list counting the requests."""
    from reference_impl.storage import open_storage, parse_dataset_uri

    client = open_storage(parse_dataset_uri(uri), options, writable=False)._client  # type: ignore[attr-defined]
    sent = [0]

    def wait(**_):
        sent[0] += 1  # (a lost increment between threads only blurs the count shown in the detail column)
        time.sleep(seconds)

    client.meta.events.register("before-send.s3", wait)
    try:
        yield sent
    finally:
        client.meta.events.unregister("before-send.s3", wait)


def bench_validate_s3_latency() -> Measurement:
    from conformance.validator import validate
    from conformance.validator.context import OBJECT_STORE_IO_THREADS

    fragments = int(os.environ.get("LANCE_CONFORMANCE_BENCH_S3_FRAGMENTS", "10000"))
    latency_ms = float(os.environ.get("LANCE_CONFORMANCE_BENCH_S3_LATENCY_MS", "20"))
    local = _many_fragments(fragments)
    with moto_server() as endpoint:
        bucket = f"bench-{uuid.uuid4().hex[:12]}"
        objects = _upload(local, endpoint, bucket, "t.lance")
        uri, options = f"s3://{bucket}/t.lance", _options(endpoint)
        timings, requests, reports = {}, {}, {}
        for threads in (OBJECT_STORE_IO_THREADS, 1):
            with injected_latency(uri, options, latency_ms / 1000) as sent:
                start = time.perf_counter()
                report = validate(uri, storage_options=options, io_threads=threads)
                timings[threads] = time.perf_counter() - start
                requests[threads] = sent[0]
                reports[threads] = report.to_json()
    if reports[1] != reports[OBJECT_STORE_IO_THREADS]:
        raise AssertionError("the parallel and serial reports differ")
    server = "stock moto_server" if stock_moto() else "moto"
    return Measurement(
        f"validate latest on S3 ({server}, {latency_ms:g} ms a request), {fragments} fragments",
        timings[OBJECT_STORE_IO_THREADS],
        timings[1],
        f"{objects} objects; about {requests[1]} requests a run; reports identical; "
        f"speed-up {timings[1] / timings[OBJECT_STORE_IO_THREADS]:.1f}x",
        columns=(f"{OBJECT_STORE_IO_THREADS} threads", "serial"),
    )


BENCHMARKS = [bench_validate_s3_latency]
