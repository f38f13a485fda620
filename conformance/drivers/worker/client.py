"""The suite's side of the worker protocol: :class:`WorkerDriver`, a driver
whose calls go to a long-lived child process.

One child serves every call until it fails. Each request has a deadline
(:data:`DEFAULT_TIMEOUT_SECONDS`, or ``LANCE_CONFORMANCE_WORKER_TIMEOUT``);
a child that dies (a signal such as SIGSEGV, an exit: a Rust panic aborts
the process), stops answering before the deadline, or writes anything but
the one response line the protocol expects fails THAT call with a
:class:`WorkerProcessError` saying what was seen: the exit status or signal
(``aborted (signal 6)``), the garbage line, and what the call left on its
stderr from the line that starts the cause (a panic, a traceback) onward
(:mod:`.crash`). A line on stdout that is no protocol reply at all (a print,
a native library's log) is :class:`WorkerStrayOutputError`, quoting it. The
child is then stopped (by its pid) and the next call starts a fresh one, so a
run over many cases goes on.

A typed error the worker answers raises :class:`WorkerReplyError`, as the
suite's own exception for that meaning where it has one, so a driver behaves
the same in a worker as in process: ``unsupported`` as
:class:`~reference_impl.errors.UnsupportedFeatureError` (a reader declining
rows it cannot decode) or, answering a write,
:class:`~conformance.drivers.writes.WriteNotSupported`, answering a query,
:class:`~conformance.drivers.protocol.QueryNotSupported`; ``conflict`` as
:class:`~conformance.drivers.writes.WriteConflict`. The child keeps serving.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from reference_impl.errors import UnsupportedFeatureError
from reference_impl.storage import absolute_uri

from ..protocol import DriverInfo, DriverInfoError, QueryNotSupported, WriteConflict, WriteNotSupported
from .crash import crash_cause, crash_excerpt, describe_exit
from .errors import ErrorKind
from .messages import MAX_LINE_BYTES, SUPPORTED_PROTOCOL_VERSIONS, ErrorReply, RequestKind, encode, encode_schema

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa

    from ...describe import Description
    from ..queries import QueryAnswer
    from ..writes import WriteResult

#: Seconds a request may take before the child is taken to hang.
DEFAULT_TIMEOUT_SECONDS = 300.0
#: The environment variable that overrides :data:`DEFAULT_TIMEOUT_SECONDS`.
TIMEOUT_VARIABLE = "LANCE_CONFORMANCE_WORKER_TIMEOUT"
#: Seconds a new child may take to answer ``hello`` (an old release imports slowly).
START_TIMEOUT_SECONDS = 120.0
#: Seconds a child is given to exit after ``shutdown`` before it is killed.
SHUTDOWN_GRACE_SECONDS = 5.0
#: How much of what a failed call left on stderr is read, at its start and at
#: its end (the excerpt quoted is bounded by :mod:`.crash`).
STDERR_READ_BYTES = 256 * 1024
#: How much of a garbage line a message quotes.
GARBAGE_QUOTE_CHARS = 200


class WorkerError(RuntimeError):
    """A call through a worker failed."""


class WorkerProcessError(WorkerError):
    """The worker process failed the call: it died (``exit`` is its status,
    negative for a signal), hung past the deadline, or broke the protocol
    (``garbage`` is the line it wrote). The child is gone; the next call
    starts another."""

    def __init__(self, message: str, *, exit: int | None = None, garbage: str | None = None, stderr: str = ""):
        super().__init__(message)
        self.exit = exit
        self.garbage = garbage
        #: The excerpt of the worker's stderr the message quotes (:func:`.crash.crash_excerpt`).
        self.stderr = stderr


class WorkerTimeoutError(WorkerProcessError):
    """The worker did not answer a call within its deadline (a wide guard
    against a hang, never a measurement); it was stopped."""


class WorkerStrayOutputError(WorkerProcessError):
    """The worker wrote something on stdout that is no protocol reply (a
    print, a native library's log): ``garbage`` is that text. stdout carries
    the protocol's replies only; a Python worker served by
    :mod:`.server` cannot do this (its fd 1 goes to stderr)."""


class WorkerReplyError(WorkerError):
    """The worker answered the request with a typed error (``kind``, the
    implementation's ``error_type`` when it named one, ``detail``: its message)."""

    def __init__(self, driver: str, reply: ErrorReply):
        label = f"{reply.kind.value}: {reply.error_type}" if reply.error_type else reply.kind.value
        super().__init__(f"{driver}: {label}: {reply.message}")
        self.kind = reply.kind
        self.error_type = reply.error_type
        self.detail = reply.message


class WorkerUnsupportedError(WorkerReplyError, UnsupportedFeatureError):
    """The implementation cannot do what was asked (kind ``unsupported``)."""

    def __init__(self, driver: str, reply: ErrorReply, uri: str):
        WorkerReplyError.__init__(self, driver, reply)
        self.path = uri
        self.problem = str(self)


class WorkerWriteNotSupportedError(WorkerReplyError, WriteNotSupported):
    """The implementation does not perform this write operation (kind
    ``unsupported`` answering a write)."""


class WorkerQueryNotSupportedError(WorkerReplyError, QueryNotSupported):
    """The implementation does not answer this index query (kind
    ``unsupported`` answering a query)."""


class WorkerConflictError(WorkerReplyError, WriteConflict):
    """A write lost a commit race (kind ``conflict``)."""


def reply_error(driver: str, reply: ErrorReply, kind: RequestKind, uri: str) -> WorkerReplyError:
    """The exception for one typed error answer to a request of ``kind``: the
    suite's own exception type for that meaning where it has one."""
    if reply.kind is ErrorKind.CONFLICT:
        return WorkerConflictError(driver, reply)
    if reply.kind is ErrorKind.UNSUPPORTED:
        if kind is RequestKind.WRITE:
            return WorkerWriteNotSupportedError(driver, reply)
        if kind is RequestKind.QUERY:
            return WorkerQueryNotSupportedError(driver, reply)
        return WorkerUnsupportedError(driver, reply, uri)
    return WorkerReplyError(driver, reply)


def default_timeout() -> float:
    """:data:`DEFAULT_TIMEOUT_SECONDS`, or the environment's override."""
    value = os.environ.get(TIMEOUT_VARIABLE)
    if not value:
        return DEFAULT_TIMEOUT_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(f"{TIMEOUT_VARIABLE} must be a number of seconds, not {value!r}") from None
    if not seconds > 0:
        raise ValueError(f"{TIMEOUT_VARIABLE} must be positive, not {value!r}")
    return seconds


class _Child:
    """One running worker process: its pipes, its stderr file and the bytes
    read from its stdout that are not yet a whole line."""

    def __init__(self, command: list[str], env: dict[str, str] | None, cwd: str | None, scratch: str):
        self.stderr: IO[bytes] = tempfile.TemporaryFile(dir=scratch)
        try:
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env, cwd=cwd
            )
        except BaseException:
            self.stderr.close()
            raise
        self.buffer = bytearray()
        #: Where the current call's stderr begins (0 until the first call
        #: after ``hello``: what a worker says while starting counts too).
        self.stderr_mark = 0

    def mark_stderr(self) -> None:
        self.stderr.seek(0, os.SEEK_END)
        self.stderr_mark = self.stderr.tell()

    def stderr_of_call(self) -> str:
        """What the child wrote on stderr since the current call began (its
        start and its end when that is long)."""
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(self.stderr_mark)
        if size - self.stderr_mark <= 2 * STDERR_READ_BYTES:
            data = self.stderr.read()
        else:
            data = self.stderr.read(STDERR_READ_BYTES) + b"\n...\n"
            self.stderr.seek(size - STDERR_READ_BYTES)
            data += self.stderr.read()
        return data.decode("utf-8", "replace").strip()


def _stop(holder: list[_Child | None], grace: float = SHUTDOWN_GRACE_SECONDS) -> None:
    """Close a child's stdin (a worker exits at end of input), wait ``grace``
    seconds, then kill it by its pid; always reap it and close its files."""
    child, holder[0] = holder[0], None
    if child is None:
        return
    process = child.process
    try:
        if process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass  # it is gone already: a broken pipe on flush
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    finally:
        if process.stdout is not None:
            process.stdout.close()
        child.stderr.close()


class WorkerDriver:
    """A driver served by a worker process speaking the worker protocol
    (``docs/drivers.md``, "Workers"): ``command`` is the child's command line.

    ``name`` is the driver name the suite knows it by (``worker:reference``,
    ``cmd:node worker.js``, ``pylance@0.20.0``); :meth:`info` is the
    description the worker gave in its ``hello``, under that name."""

    def __init__(
        self,
        name: str,
        command: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        timeout: float | None = None,
        start_timeout: float = START_TIMEOUT_SECONDS,
    ):
        self.name = name
        self.command = list(command)
        self.env = env
        self.cwd = cwd
        self.timeout = default_timeout() if timeout is None else timeout
        self.start_timeout = start_timeout
        self._scratch = tempfile.TemporaryDirectory(prefix="lance-conformance-worker-")
        self._holder: list[_Child | None] = [None]
        self._finalizer = weakref.finalize(self, _stop, self._holder, 0.0)
        self._next_id = 0
        self._reads = 0
        self._writes = 0
        self._driver_json: dict[str, Any] | None = None
        self.protocol_version: int | None = None
        #: What the worker's ``hello`` said it cannot report (set by every start).
        self.UNREPORTED: frozenset[str] = frozenset()
        #: A child started by :meth:`spawn` that was not sent its ``hello`` yet.
        self._spawned_ungreeted = False

    # -- the driver API -----------------------------------------------------------

    def driver_json(self) -> dict[str, Any]:
        """The driver description (``DriverInfo`` JSON) the worker answered
        ``hello`` with, ``name`` replaced by this driver's; starts the worker
        when none runs yet."""
        self._ensure_started()
        assert self._driver_json is not None  # set by every successful start
        return dict(self._driver_json, name=self.name)

    def info(self) -> DriverInfo:
        """The worker's :class:`~conformance.drivers.protocol.DriverInfo`, under this driver's name."""
        return DriverInfo.from_json(self.driver_json())

    def versions(self, uri: str | os.PathLike) -> list[int]:
        result = self._call(RequestKind.VERSIONS, {"uri": absolute_uri(uri)})
        return [int(v) for v in _member(result, "versions", list, self._what(RequestKind.VERSIONS))]

    def describe(self, uri: str | os.PathLike, version: int | None = None) -> Description:
        result = self._call(RequestKind.DESCRIBE, {"uri": absolute_uri(uri), "version": version})
        return _member(result, "description", dict, self._what(RequestKind.DESCRIBE))

    def read_table(
        self,
        uri: str | os.PathLike,
        version: int | None = None,
        *,
        schema: pa.Schema | None = None,
        with_row_ids: bool = False,
    ) -> pa.Table:
        """The rows the worker writes as an Arrow IPC file in this driver's
        scratch directory (read whole, then removed)."""
        import pyarrow as pa  # lazy: versions and describe need no pyarrow

        self._reads += 1
        output = Path(self._scratch.name) / f"rows-{self._reads}.arrow"
        request: dict[str, Any] = {"uri": absolute_uri(uri), "version": version, "output": str(output)}
        if schema is not None:
            request["schema"] = encode_schema(schema)
        if with_row_ids:
            request["with_row_ids"] = True
        try:
            result = self._call(RequestKind.READ, request)
            rows = _member(result, "num_rows", int, self._what(RequestKind.READ))
            try:
                # Read whole, not memory-mapped: mapping a small fresh file costs more than copying it.
                table = pa.ipc.open_file(pa.py_buffer(output.read_bytes())).read_all()
            except (OSError, pa.ArrowException) as exc:
                raise WorkerError(f"{self.name}: the rows of read {uri} are not an Arrow IPC file: {exc}") from None
            if table.num_rows != rows:
                raise WorkerError(f"{self.name}: read {uri} answered {rows} rows but its file holds {table.num_rows}")
            return table
        finally:
            output.unlink(missing_ok=True)

    def write(self, uri: str | os.PathLike, op: Any, *, storage_options: dict[str, str] | None = None) -> WriteResult:
        """Commit one write operation (:mod:`conformance.drivers.writes`); what
        it committed (a worker answers ``{"version": N}``, or ``{"result":
        ...}``, a :class:`~conformance.drivers.writes.WriteResult` document).
        Its rows travel as Arrow IPC files in this driver's scratch
        directory, removed after the call."""
        from ..writes import WriteOpError, WriteResult, write_result  # lazy: the vocabulary needs pyarrow

        self._writes += 1
        rows_dir = Path(self._scratch.name) / f"write-{self._writes}"
        rows_dir.mkdir()
        try:
            request: dict[str, Any] = {"uri": absolute_uri(uri), "operation": op.to_json(rows_dir=rows_dir)}
            if storage_options is not None:
                request["storage_options"] = dict(storage_options)
            reply = self._call(RequestKind.WRITE, request)
            if isinstance(reply, dict) and "result" in reply:
                try:
                    return WriteResult.from_json(reply["result"])
                except WriteOpError as exc:
                    raise WorkerError(f"{self._what(RequestKind.WRITE)}: {exc}") from None
            return write_result(_member(reply, "version", int, self._what(RequestKind.WRITE)))
        finally:
            shutil.rmtree(rows_dir, ignore_errors=True)

    def query(self, uri: str | os.PathLike, query: Any, *, use_index: bool) -> QueryAnswer:
        """Answer one index query (:mod:`conformance.drivers.queries`) on the
        latest version: the worker answers ``{"answer": {...}}``, a
        :class:`~conformance.drivers.queries.QueryAnswer` document."""
        from ..queries import QueryAnswer, QueryError, query_to_json  # lazy: the vocabulary needs pyarrow

        request = {"uri": absolute_uri(uri), "query": query_to_json(query), "use_index": use_index}
        reply = self._call(RequestKind.QUERY, request)
        try:
            return QueryAnswer.from_json(_member(reply, "answer", dict, self._what(RequestKind.QUERY)))
        except QueryError as exc:
            raise WorkerError(f"{self._what(RequestKind.QUERY)}: {exc}") from None

    def close(self) -> None:
        """Ask the child to shut down and stop it (idempotent); the driver
        starts a new one if used again."""
        child = self._holder[0]
        if child is not None and child.process.poll() is None:
            try:
                self._exchange(RequestKind.SHUTDOWN, {}, SHUTDOWN_GRACE_SECONDS)
            except WorkerError:
                pass  # it failed its shutdown: stopped below all the same
        _stop(self._holder)

    def __enter__(self) -> WorkerDriver:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
        self._scratch.cleanup()

    @property
    def pid(self) -> int | None:
        """The running child's process id (None when none runs)."""
        child = self._holder[0]
        return child.process.pid if child is not None else None

    # -- the child process ---------------------------------------------------------------

    def spawn(self) -> None:
        """Start the child now without waiting for it (the first call, or
        :meth:`driver_json`, greets it): its start-up then overlaps with
        whatever this process does meanwhile. Nothing when one runs already."""
        child = self._holder[0]
        if child is not None and child.process.poll() is None:
            return
        _stop(self._holder, 0.0)
        self._driver_json = None
        try:
            self._holder[0] = _Child(self.command, self.env, self.cwd, self._scratch.name)
        except OSError as exc:
            raise WorkerProcessError(f"{self.name}: the worker {self.command!r} cannot be started: {exc}") from None
        self._spawned_ungreeted = True

    def _ensure_started(self) -> None:
        child = self._holder[0]
        running = child is not None and child.process.poll() is None
        if running and self._driver_json is not None:
            return
        if not (running and self._spawned_ungreeted):
            _stop(self._holder, 0.0)  # none runs, or one whose hello failed: a fresh start
            self.spawn()
        self._spawned_ungreeted = False  # greeted once, whatever it answers
        offered = list(SUPPORTED_PROTOCOL_VERSIONS)
        result = self._exchange(RequestKind.HELLO, {"protocol_versions": offered}, self.start_timeout)
        version = result.get("protocol_version")
        driver = result.get("driver")
        if version not in offered or not isinstance(driver, dict):
            raise self._failed(
                f"answered hello with {result!r:.{GARBAGE_QUOTE_CHARS}} (a protocol version of {offered} "
                "and the driver's description expected)",
                garbage=repr(result)[:GARBAGE_QUOTE_CHARS],
            )
        try:
            DriverInfo.from_json(driver)
        except DriverInfoError as exc:
            raise self._failed(
                f"answered hello with a driver description that does not fit the protocol: {exc}"
            ) from None
        self.protocol_version = version
        self._driver_json = driver
        self.UNREPORTED = frozenset(driver.get("unreported", ()))

    def _call(self, kind: RequestKind, fields: dict[str, Any]) -> dict[str, Any]:
        self._ensure_started()
        return self._exchange(kind, fields, self.timeout)

    def _what(self, kind: RequestKind) -> str:
        return f"{self.name}: {kind.value}"

    def _exchange(self, kind: RequestKind, fields: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request and read its response: the result, or raise."""
        child = self._holder[0]
        assert child is not None and child.process.stdin is not None  # started by the caller
        self._next_id += 1
        request_id = self._next_id
        if kind is not RequestKind.HELLO:
            child.mark_stderr()
        try:
            child.process.stdin.write(encode({"id": request_id, "request": kind.value, **fields}))
            child.process.stdin.flush()
        except OSError as exc:
            raise self._failed(f"could not be sent {kind.value} ({exc})") from None
        line = self._read_line(child, time.monotonic() + timeout, kind, timeout)
        message = _protocol_message(line)
        if message is None:
            raise self._stray(_stray_part(line), kind)
        if message.get("id") != request_id:
            raise self._garbage(line, kind, f"not the response to request {request_id}")
        if "error" in message and "result" not in message:
            try:
                reply = ErrorReply.from_json(message["error"])
            except ValueError as exc:
                raise self._garbage(line, kind, str(exc)) from None
            raise reply_error(self.name, reply, kind, str(fields.get("uri", "")))
        result = message.get("result")
        if not isinstance(result, dict) or "error" in message:
            raise self._garbage(line, kind, "a response holds either a result object or an error")
        return result

    def _read_line(self, child: _Child, deadline: float, kind: RequestKind, timeout: float) -> bytes:
        """The next line of the child's stdout, read straight from its file
        descriptor (so no line sits in a buffer ``select`` cannot see)."""
        stdout = child.process.stdout
        assert stdout is not None  # the child is started with a pipe for it
        descriptor = stdout.fileno()
        searched = 0
        while True:
            newline = child.buffer.find(b"\n", searched)
            if newline >= 0:
                line = bytes(child.buffer[:newline])
                del child.buffer[: newline + 1]
                return line
            searched = len(child.buffer)
            if searched > MAX_LINE_BYTES:
                raise self._garbage(bytes(child.buffer[:GARBAGE_QUOTE_CHARS]), kind, "a line longer than allowed")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._failed(f"did not answer {kind.value} within {timeout:g} s", error=WorkerTimeoutError)
            readable, _, _ = select.select([descriptor], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                if child.buffer:
                    raise self._garbage(bytes(child.buffer), kind, "an unterminated line, then it closed stdout")
                raise self._failed(f"ended during {kind.value}", exited=True)
            child.buffer += chunk

    def _garbage(self, line: bytes, kind: RequestKind, why: str) -> WorkerProcessError:
        quoted = line[:GARBAGE_QUOTE_CHARS].decode("utf-8", "replace")
        return self._failed(f"wrote garbage during {kind.value} ({why}): {quoted!r}", garbage=quoted)

    def _stray(self, stray: bytes, kind: RequestKind) -> WorkerProcessError:
        quoted = stray[:GARBAGE_QUOTE_CHARS].decode("utf-8", "replace")
        return self._failed(
            f"wrote stray output on stdout during {kind.value}, not a protocol reply: {quoted!r} "
            "(stdout carries the replies only: a print or a library's log belongs on stderr)",
            garbage=quoted,
            error=WorkerStrayOutputError,
        )

    def _failed(
        self,
        what: str,
        *,
        exited: bool = False,
        garbage: str | None = None,
        error: type[WorkerProcessError] = WorkerProcessError,
    ) -> WorkerProcessError:
        """Stop the child and describe its end: exit status or signal, and
        what the call left on its stderr (:mod:`.crash`): the line naming
        the cause on the message's first line, the excerpt after it."""
        child = self._holder[0]
        self._driver_json = None
        if child is None:
            return error(f"{self.name}: the worker {what}")
        process = child.process
        if exited:
            try:  # it closed stdout: it is exiting, let it say how
                process.wait(timeout=SHUTDOWN_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        killed = process.poll() is None
        if killed:
            process.kill()  # it stopped answering or broke the protocol: no point waiting for it
            process.wait()
        excerpt = crash_excerpt(child.stderr_of_call())
        _stop(self._holder, 0.0)
        status = "stopped by the suite (SIGKILL)" if killed else describe_exit(process.returncode)
        cause = crash_cause(excerpt)
        message = f"{self.name}: the worker (pid {process.pid}) {what}; {status}"
        message += f"; stderr: {cause}" if cause else "; nothing on stderr"
        if excerpt and excerpt != [cause]:
            message += "\nits stderr:\n" + "\n".join(excerpt)
        return error(message, exit=process.returncode, garbage=garbage, stderr="\n".join(excerpt))


def _protocol_message(line: bytes) -> dict[str, Any] | None:
    """The line as a protocol message (a JSON object with an ``id`` and a
    ``result`` or an ``error``), or None when it is none: stray output."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or "id" not in message or not ({"result", "error"} & message.keys()):
        return None
    return message


def _stray_part(line: bytes) -> bytes:
    """The stray text of a line that is no protocol message: all of it, or,
    when a reply follows text printed without a newline, the text before it."""
    start = line.find(b'{"id"', 1)
    if start > 0 and _protocol_message(line[start:]) is not None:
        return line[:start]
    return line


def _member(result: dict[str, Any], name: str, kind: type, what: str) -> Any:
    value = result.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise WorkerError(f"{what}: the worker's result lacks {name!r} ({kind.__name__}): {result!r:.200}")
    return value
