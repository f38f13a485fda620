"""The worker protocol's server side for any Python driver:
``python -m conformance.drivers.worker --driver NAME``.

One process serves one driver until its stdin closes or it is asked to shut
down. stdout is the protocol's channel alone: file descriptor 1 is pointed
at stderr before the driver is loaded, so whatever the implementation prints
(a Rust library's logging, a stray ``print``) cannot corrupt a response.

An exception the implementation raises answers that request with a typed
error (:func:`.errors.error_kind`) and the server keeps serving; a Rust panic
caught by the binding (``PanicException``) too. Anything else ends the
process, and the suite reports what it saw.

Standard library only, plus the driver and (for rows) pyarrow: this module
also runs inside an old pylance release's own environment
(:mod:`conformance.drivers.release`, through :mod:`.bootstrap`).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
from dataclasses import replace
from typing import IO, Any

from ..protocol import Capability, WriteKind, driver_info
from .errors import ErrorKind, error_kind, is_implementation_failure
from .messages import (
    SUPPORTED_PROTOCOL_VERSIONS,
    BadRequest,
    ErrorReply,
    RequestKind,
    decode_schema,
    encode,
    error_response,
    response,
)


def driver_description(driver: Any, name: str) -> dict[str, Any]:
    """The driver's :class:`~conformance.drivers.protocol.DriverInfo` as JSON
    (the ``hello`` answer's ``driver``). A driver without ``info()`` that has
    ``write()`` is declared a writer of its ``WRITE_OPERATIONS`` (every kind
    when it names none: each is tried, and one it lacks answers
    ``unsupported``), as the suite takes such a driver in process
    (:mod:`conformance.writer_conformance`), so it behaves the same in a worker."""
    info = driver_info(driver, name)
    if not callable(getattr(driver, "info", None)) and callable(getattr(driver, "write", None)):
        declared = getattr(driver, "WRITE_OPERATIONS", None)
        operations = frozenset(str(getattr(k, "value", k)) for k in declared) if declared is not None else None
        info = replace(
            info,
            capabilities=info.capabilities | {Capability.WRITE},
            write_operations=operations if operations is not None else frozenset(k.value for k in WriteKind),
        )
    return info.to_json()


class WorkerServer:
    """Answers the protocol's requests with one driver (a module or object
    with the driver API, :class:`conformance.drivers.Driver`)."""

    def __init__(self, driver: Any, name: str):
        self.driver = driver
        self.name = name
        self.stopping = False
        read_table = getattr(driver, "read_table", None)
        self._read_parameters = set(inspect.signature(read_table).parameters) if callable(read_table) else set()

    def answer(self, line: bytes) -> dict[str, Any]:
        """The response to one request line."""
        request_id = None
        try:
            try:
                request = json.loads(line)
            except ValueError as exc:
                raise BadRequest(f"not a JSON object: {exc}") from None
            if not isinstance(request, dict):
                raise BadRequest(f"a request is a JSON object, not {type(request).__name__}")
            request_id = request.get("id")
            if not isinstance(request_id, int) or isinstance(request_id, bool):
                request_id = None
                raise BadRequest("a request needs an integer id")
            try:
                kind = RequestKind(request.get("request"))
            except ValueError:
                known = ", ".join(k.value for k in RequestKind)
                raise BadRequest(f"unknown request {request.get('request')!r}; known: {known}") from None
            return response(request_id, self._dispatch(kind, request))
        except BadRequest as exc:
            return error_response(request_id, ErrorReply(ErrorKind.BAD_REQUEST, str(exc)))
        except BaseException as exc:  # narrowed just below: a Rust panic is a BaseException
            if not is_implementation_failure(exc):
                raise
            text = str(exc)
            message = text.splitlines()[0] if text else ""
            return error_response(request_id, ErrorReply(_classify(exc), message, type(exc).__name__))

    def _dispatch(self, kind: RequestKind, request: dict[str, Any]) -> dict[str, Any]:
        if kind is RequestKind.HELLO:
            offered = _field(request, "protocol_versions", list)
            shared = [v for v in SUPPORTED_PROTOCOL_VERSIONS if v in offered]
            if not shared:
                speaks = list(SUPPORTED_PROTOCOL_VERSIONS)
                raise _Unsupported(f"the suite speaks worker protocol versions {offered}, this worker {speaks}")
            return {"protocol_version": max(shared), "driver": driver_description(self.driver, self.name)}
        if kind is RequestKind.SHUTDOWN:
            self.stopping = True
            return {}
        uri = _field(request, "uri", str)
        if kind is RequestKind.VERSIONS:
            return {"versions": [int(v) for v in self._member("versions", "list versions")(uri)]}
        if kind is RequestKind.DESCRIBE:
            return {"description": self._member("describe", "describe")(uri, _version(request))}
        if kind is RequestKind.READ:
            return {"num_rows": self._read(uri, request)}
        if kind is RequestKind.QUERY:
            return {"answer": self._query(uri, request)}
        operation = _field(request, "operation", dict)
        storage_options = request.get("storage_options")
        if storage_options is not None and not isinstance(storage_options, dict):
            raise BadRequest("storage_options must be an object")
        write = getattr(self.driver, "write", None)
        if write is None:
            raise _Unsupported(f"driver {self.name!r} does not write")
        from ..writes import write_result  # lazy: the vocabulary needs pyarrow

        result = write_result(write(uri, _write_op(operation), storage_options=storage_options))
        # "version" keeps protocol-1 clients reading; "result" says everything.
        return {"version": result.version, "result": result.to_json()}

    def _member(self, name: str, what: str) -> Any:
        """The driver's call ``name``; a driver without it (one that does not
        declare the capability) answers ``unsupported``, as the protocol says."""
        member = getattr(self.driver, name, None)
        if not callable(member):
            raise _Unsupported(f"driver {self.name!r} does not {what}")
        return member

    def _read(self, uri: str, request: dict[str, Any]) -> int:
        import pyarrow as pa  # lazy: versions and describe need no pyarrow

        output = _field(request, "output", str)
        options: dict[str, Any] = {}
        schema = request.get("schema")
        if schema is not None:
            # The expected schema is a hint the driver may use; one that cannot take it reads without.
            if "schema" in self._read_parameters:
                options["schema"] = decode_schema(_field(request, "schema", str))
        if request.get("with_row_ids"):
            if "with_row_ids" not in self._read_parameters:
                raise _Unsupported(f"driver {self.name!r} does not read row ids")
            options["with_row_ids"] = True
        table = self._member("read_table", "read rows")(uri, _version(request), **options)
        try:
            with pa.OSFile(output, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
        except (OSError, pa.ArrowException) as exc:
            raise _Internal(f"cannot write the rows to {output}: {exc}") from None
        return table.num_rows

    def _query(self, uri: str, request: dict[str, Any]) -> dict[str, Any]:
        from ..queries import QueryAnswer, QueryError, query_from_json  # lazy: the vocabulary imports pyarrow

        try:
            query = query_from_json(_field(request, "query", dict))
        except QueryError as exc:
            raise BadRequest(f"query: {exc}") from None
        use_index = _field(request, "use_index", bool)
        answer = self._member("query", "answer index queries")(uri, query, use_index=use_index)
        if not isinstance(answer, QueryAnswer):
            raise _Internal(f"driver {self.name!r} answered a query with {type(answer).__name__}, not QueryAnswer")
        return answer.to_json()

    def serve(self, requests: IO[bytes], responses: IO[bytes]) -> int:
        """Answer request lines until end of input or ``shutdown``."""
        for line in requests:
            if not line.strip():
                continue
            responses.write(encode(self.answer(line)))
            responses.flush()
            if self.stopping:
                break
        return 0


class _Unsupported(NotImplementedError):
    """The driver lacks what the request needs (answered ``unsupported``)."""


class _Internal(Exception):
    """The server's own failure (answered ``internal``)."""


# The server's own failures are classified by name like the implementation's.
def _classify(exc: BaseException) -> ErrorKind:
    return ErrorKind.INTERNAL if isinstance(exc, _Internal) else error_kind(exc)


def _field(request: dict[str, Any], name: str, kind: type) -> Any:
    value = request.get(name)
    if not isinstance(value, kind):
        raise BadRequest(f"{request.get('request')} needs {name!r} ({kind.__name__}), got {value!r:.200}")
    return value


def _version(request: dict[str, Any]) -> int | None:
    version = request.get("version")
    if version is not None and (not isinstance(version, int) or isinstance(version, bool) or version < 1):
        raise BadRequest(f"version must be a positive integer or null, got {version!r:.200}")
    return version


def _write_op(operation: dict[str, Any]) -> Any:
    """The write operation a request carries, as the write vocabulary's type
    (:func:`conformance.drivers.writes.op_from_json`)."""
    from ..writes import WriteOpError, op_from_json  # lazy: the write vocabulary imports pyarrow

    try:
        return op_from_json(operation)
    except WriteOpError as exc:
        raise BadRequest(f"write: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    """Serve the driver ``--driver NAME`` (any name ``load_driver`` knows) on stdin/stdout."""

    parser = argparse.ArgumentParser(prog="python -m conformance.drivers.worker", description=__doc__.split("\n")[0])
    parser.add_argument("--driver", required=True, help="the driver to serve: reference, pylance, a module name, ...")
    args = parser.parse_args(argv)
    # The protocol channel is a private copy of stdout; fd 1 itself goes to stderr.
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    from .. import DriverError, load_driver  # lazy: the drivers package imports this package

    try:
        driver = load_driver(args.driver)
    except DriverError as exc:
        print(f"worker: {exc}", file=sys.stderr)
        return 2
    server = WorkerServer(driver, args.driver)
    return server.serve(sys.stdin.buffer, channel)
