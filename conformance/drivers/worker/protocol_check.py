"""Check any worker command against the worker protocol:
``python -m conformance.drivers.worker --check "COMMAND LINE" --dataset PATH``.

It speaks to the worker directly, line by line (not through
:class:`~.client.WorkerDriver`, which tolerates nothing it need not), and
validates every response against ``conformance/schemas/worker-protocol.schema.json``
and each result against the schema of its request kind.

A worker is held to what it declares in its ``hello`` (its capabilities),
and nothing else: a request it does not declare is not sent, and where the
protocol lets it answer ``unsupported`` (an explicit version other than the
latest, asked of a worker without ``time-travel``) that answer stands. In
order: the ``hello`` handshake (and an offer of only an unknown protocol
version, which must be answered ``unsupported``); ``versions``
(``list-versions``); ``describe`` of the latest and the first version
(``describe``; each description valid against ``describe.schema.json``, of
the version asked); ``read`` of both versions and again with the expected
schema (``read-latest``), whose Arrow IPC file must hold the rows it says; a
``write`` that creates a dataset (``write`` with ``create``); the error
shapes, asked of a request it declares (versions, else describe, else read;
``hello`` for a writer only): a dataset that is not there (``refused``), a
line that is not JSON (``bad-request``, id null), an unknown request and a
request missing its field (``bad-request`` with the request's id), each
followed by a request that must still be served; and ``shutdown``, after
which the worker must exit with status 0.

The result is a list of problems, each naming the step; empty means the
worker speaks the protocol. The dataset should have at least one version
readable by the worker (one version only, for a latest-only worker that
does not list versions: the first version is asked for as version 1).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from .crash import describe_exit
from .messages import SUPPORTED_PROTOCOL_VERSIONS, encode

#: Seconds each response may take.
STEP_TIMEOUT_SECONDS = 60.0


@cache
def protocol_schema() -> dict[str, Any]:
    text = resources.files("conformance").joinpath("schemas/worker-protocol.schema.json").read_text("utf-8")
    return json.loads(text)


@cache
def _validator(definition: str) -> jsonschema.Draft202012Validator:
    schema = protocol_schema()
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]})


@cache
def _describe_validator() -> jsonschema.Draft202012Validator:
    text = resources.files("conformance").joinpath("schemas/describe.schema.json").read_text("utf-8")
    return jsonschema.Draft202012Validator(json.loads(text))


def schema_problems(definition: str, document: Any) -> list[str]:
    """Where ``document`` breaks ``$defs/<definition>`` of the protocol's schema."""
    return [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(top)'}: {error.message}"
        for error in _validator(definition).iter_errors(document)
    ]


class _Session:
    """One worker process under check, and the problems found so far."""

    def __init__(self, command: list[str], scratch: Path, timeout: float):
        self.scratch = scratch
        self.timeout = timeout
        self.problems: list[str] = []
        self.stderr = (scratch / "stderr").open("w+b")
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.buffer = b""
        self.next_id = 0
        self.dead = False

    def problem(self, step: str, text: str) -> None:
        self.problems.append(f"{step}: {text}")

    def send(self, step: str, line: bytes) -> dict[str, Any] | None:
        """Write one line and read one response: valid JSON and a valid
        response, or None (with the problem recorded; the session is dead
        when the worker broke the stream)."""
        if self.dead:
            return None
        assert self.process.stdin is not None and self.process.stdout is not None  # opened as pipes
        try:
            self.process.stdin.write(line)
            self.process.stdin.flush()
        except OSError as exc:
            return self._dead(step, f"cannot send the request: {exc}")
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return self._dead(step, f"no response within {self.timeout:g} s")
            readable, _, _ = select.select([self.process.stdout], [], [], remaining)
            if readable:
                chunk = os.read(self.process.stdout.fileno(), 1 << 20)
                if not chunk:
                    try:
                        self.process.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        pass  # still running with stdout closed: said as such below
                    return self._dead(step, f"the worker closed stdout: {describe_exit(self.process.poll())}")
                self.buffer += chunk
        raw, _, self.buffer = self.buffer.partition(b"\n")
        try:
            message = json.loads(raw)
        except ValueError:
            return self._dead(step, f"the response is not JSON: {raw[:200]!r}")
        found = schema_problems("response", message)
        if found:
            return self._dead(step, f"not a valid response {raw[:200]!r}: {'; '.join(found)}")
        return message

    def request(self, step: str, kind: str, **fields: Any) -> dict[str, Any] | None:
        """Send a valid request; the response (its id checked), or None."""
        self.next_id += 1
        request = {"id": self.next_id, "request": kind, **fields}
        assert not schema_problems("request", request), request  # the check's own requests are valid
        response = self.send(step, encode(request))
        if response is not None and response["id"] != self.next_id:
            self.problem(step, f"answered id {response['id']}, not {self.next_id}")
        return response

    def result(self, step: str, kind: str, *, allowed: Iterable[str] = (), **fields: Any) -> dict[str, Any] | None:
        """The result of a request that must succeed (or fail with an error
        of a kind ``allowed``: None, no problem), checked against its schema."""
        response = self.request(step, kind, **fields)
        if response is None:
            return None
        if "error" in response:
            if response["error"]["kind"] not in allowed:
                self.problem(step, f"failed: {response['error']}")
            return None
        for found in schema_problems(f"{kind}-result", response["result"]):
            self.problem(step, f"result {found}")
        return response["result"]

    def error(self, step: str, expected_kind: str, response: dict[str, Any] | None) -> None:
        if response is None:
            return
        if "error" not in response:
            self.problem(step, f"answered {response.get('result')!r:.200} where an error {expected_kind} was expected")
        elif response["error"]["kind"] != expected_kind:
            self.problem(step, f"answered error kind {response['error']['kind']!r}, not {expected_kind!r}")

    def _dead(self, step: str, text: str) -> dict[str, Any] | None:
        """Record a problem that ends the session (the stream is out of step); None."""
        self.problem(step, text)
        self.dead = True
        return None

    def stop(self) -> None:
        """Close stdin, give the worker a moment, kill it by pid if it lingers."""
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass  # it is gone already
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.stderr.close()


def check_worker(command: list[str], dataset: str | os.PathLike, *, timeout: float = STEP_TIMEOUT_SECONDS) -> list[str]:
    """The problems of the worker ``command`` against the protocol (module
    docstring), using the readable dataset ``dataset``."""
    uri = os.path.abspath(os.fspath(dataset))
    with tempfile.TemporaryDirectory(prefix="lance-conformance-worker-check-") as scratch_dir:
        scratch = Path(scratch_dir)
        session = _Session(command, scratch, timeout)
        try:
            _run_checks(session, uri, scratch)
            if not session.dead:
                _check_shutdown(session)
        finally:
            session.stop()
        if session.problems:
            tail = (scratch / "stderr").read_bytes()[-2000:].decode("utf-8", "replace").strip()
            if tail:
                session.problems.append(f"(the worker's stderr ends with: {tail})")
        return session.problems


def _run_checks(session: _Session, uri: str, scratch: Path) -> None:
    offered = list(SUPPORTED_PROTOCOL_VERSIONS)
    hello = session.result("hello", "hello", protocol_versions=offered)
    if hello is None:
        return
    driver = hello["driver"]
    capabilities = set(driver.get("capabilities", ()))
    session.error(
        "hello with an unknown version", "unsupported", session.request("hello", "hello", protocol_versions=[999])
    )
    listed: list[int] = []
    if "list-versions" in capabilities:
        versions = session.result("versions", "versions", uri=uri)
        listed = versions["versions"] if versions else []
        if versions is not None and (not listed or listed != sorted(set(listed))):
            session.problem("versions", f"expected ascending distinct versions, got {listed}")
    first = listed[0] if listed else 1
    # Without time-travel, an explicit version other than the latest may be answered unsupported.
    latest_only = "time-travel" not in capabilities
    if "describe" in capabilities:
        for step, version in (("describe latest", None), (f"describe v{first}", first)):
            allowed = UNSUPPORTED if latest_only and version is not None else ()
            described = session.result(step, "describe", allowed=allowed, uri=uri, version=version)
            if described is not None:
                _check_description(session, step, driver, described["description"], version, listed)
    if "read-latest" in capabilities:
        _check_reads(session, uri, first, scratch, latest_only)
    if "write" in capabilities and "create" in driver.get("write_operations", ()):
        _check_write(session, scratch)
    probe = _probe(capabilities)
    if probe is not None:
        kind, fields = probe
        missing = str(scratch / "no-such-dataset")
        step = f"{kind} of a missing dataset"
        session.error(step, "refused", session.request(step, kind, uri=missing, **fields(scratch)))
    _check_bad_requests(session, uri, probe)


#: A request the check may accept an ``unsupported`` answer to.
UNSUPPORTED = ("unsupported",)

#: A request kind the worker declares, and its fields beside ``uri``.
Probe = tuple[str, Callable[[Path], dict[str, Any]]]


def _probe(capabilities: set[str]) -> Probe | None:
    """A request about a dataset the worker declares it answers (versions,
    else describe, else read): what the error and recovery steps ask. None
    for a worker that declares none of them (a writer only)."""
    if "list-versions" in capabilities:
        return "versions", lambda scratch: {}
    if "describe" in capabilities:
        return "describe", lambda scratch: {"version": None}
    if "read-latest" in capabilities:
        return "read", lambda scratch: {"version": None, "output": str(scratch / "probe.arrow")}
    return None


def _check_description(
    session: _Session, step: str, driver: dict[str, Any], document: Any, version: int | None, listed: list[int]
) -> None:
    unreported = set(driver.get("unreported", ()))
    for error in _describe_validator().iter_errors(document):
        # What the driver declares it cannot report may be null.
        if not (error.instance is None and _notation(error.absolute_path) in unreported):
            session.problem(step, f"description {_notation(error.absolute_path)}: {error.message}")
    wanted = version if version is not None else (listed[-1] if listed else None)
    if wanted is not None and isinstance(document, dict) and document.get("version") != wanted:
        session.problem(step, f"described version {document.get('version')}, not {wanted}")


def _notation(path: Iterable[str | int]) -> str:
    """A description path as ``DriverInfo.unreported`` writes it: ``fragments[].files[].base_id``."""
    text = ""
    for part in path:
        text += "[]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "(top)"


def _check_reads(session: _Session, uri: str, first: int, scratch: Path, latest_only: bool) -> None:
    """``read`` of the latest version and of ``first`` by number (which a
    latest-only worker may answer ``unsupported``), then once more with the
    schema of a read that answered."""
    schemas: dict[int | None, Any] = {}
    for version in (None, first):
        schema = _check_read(session, uri, version, scratch, latest_only)
        if schema is not None:
            schemas.setdefault(version, schema)
    if schemas:
        version = first if first in schemas else None
        _check_read(session, uri, version, scratch, latest_only, schemas[version])


def _check_read(
    session: _Session, uri: str, version: int | None, scratch: Path, latest_only: bool, schema: Any = None
) -> Any:
    """One ``read`` step (with the expected ``schema`` when given): the
    schema of the rows it wrote, or None when it answered none."""
    import pyarrow as pa  # lazy: only the read steps need pyarrow

    from .messages import encode_schema  # lazy: needs pyarrow

    step = f"read {'latest' if version is None else f'v{version}'}" + (" with its schema" if schema else "")
    output = scratch / f"rows-{session.next_id + 1}.arrow"
    fields: dict[str, Any] = {"uri": uri, "version": version, "output": str(output)}
    if schema is not None:
        fields["schema"] = encode_schema(schema)
    allowed = UNSUPPORTED if latest_only and version is not None else ()
    result = session.result(step, "read", allowed=allowed, **fields)
    if result is None:
        return None
    try:
        with pa.memory_map(str(output), "rb") as source:
            table = pa.ipc.open_file(source).read_all()
    except (OSError, pa.ArrowException) as exc:
        session.problem(step, f"the output is not an Arrow IPC file: {exc}")
        return None
    if table.num_rows != result["num_rows"]:
        session.problem(step, f"answered {result['num_rows']} rows, the file holds {table.num_rows}")
    return table.schema


def _check_write(session: _Session, scratch: Path) -> None:
    import pyarrow as pa  # lazy: only a writing worker is asked to write

    from ..writes import Create  # lazy: the write vocabulary imports pyarrow

    target = scratch / "created"
    operation = Create(rows=pa.table({"id": pa.array([1, 2, 3], pa.int64())})).to_json(rows_dir=scratch)
    result = session.result("write create", "write", uri=str(target), operation=operation)
    if result is not None and result["version"] != 1:
        session.problem("write create", f"a new dataset's first version is 1, answered {result['version']}")
    listed = session.result("versions after create", "versions", uri=str(target))
    if listed is not None and listed["versions"] != [1]:
        session.problem("versions after create", f"expected [1], got {listed['versions']}")


def _check_bad_requests(session: _Session, uri: str, probe: Probe | None) -> None:
    """Malformed requests answered ``bad-request``, each followed by a
    request the worker declares it answers (``hello`` for a worker that
    declares no request about a dataset), which it must still serve."""
    fields: dict[str, Any]
    if probe is None:
        kind, needed, fields = "hello", "protocol_versions", {"protocol_versions": list(SUPPORTED_PROTOCOL_VERSIONS)}
    else:
        kind, needed, fields = probe[0], "uri", {"uri": uri, **probe[1](session.scratch)}

    def served(step: str) -> None:
        """The worker still serves after a bad request."""
        session.result(f"{step}, then {kind}", kind, **fields)

    response = session.send("a line that is not JSON", b"this is not json\n")
    session.error("a line that is not JSON", "bad-request", response)
    if response is not None and response["id"] is not None:
        session.problem("a line that is not JSON", f"answered id {response['id']}, not null")
    served("a line that is not JSON")
    session.next_id += 1
    unknown = {"id": session.next_id, "request": "fly"}
    response = session.send("an unknown request", encode(unknown))
    session.error("an unknown request", "bad-request", response)
    if response is not None and response["id"] != session.next_id:
        session.problem("an unknown request", f"answered id {response['id']}, not {session.next_id}")
    served("an unknown request")
    session.next_id += 1
    step = f"{kind} without {needed}"
    incomplete = {name: value for name, value in fields.items() if name != needed}
    response = session.send(step, encode({"id": session.next_id, "request": kind, **incomplete}))
    session.error(step, "bad-request", response)
    served(step)


def _check_shutdown(session: _Session) -> None:
    response = session.result("shutdown", "shutdown")
    if response is None:
        return
    try:
        session.process.wait(timeout=session.timeout)
    except subprocess.TimeoutExpired:
        session.problem("shutdown", f"the worker did not exit within {session.timeout:g} s")
        return
    if session.process.returncode != 0:
        session.problem("shutdown", f"the worker {describe_exit(session.process.returncode)}, not 0")
