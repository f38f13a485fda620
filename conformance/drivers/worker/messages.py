"""The worker protocol's messages: one JSON object per line, each way.

The suite writes one request a line to the worker's stdin and reads exactly
one response a line from its stdout before sending the next request. The JSON
Schema is ``conformance/schemas/worker-protocol.schema.json``; the prose is
``docs/drivers.md``, section "Workers". In short:

* request: ``{"id": N, "request": KIND, ...}`` with KIND one of
  :class:`RequestKind` and the fields that kind takes;
* response: ``{"id": N, "result": {...}}`` or
  ``{"id": N, "error": {"kind": ERROR_KIND, "message": ..., "type": ...}}``,
  ``id`` the request's (``null`` when the request had none that could be read).

Standard library only: the server side runs inside an old pylance release's
own environment too.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .errors import ErrorKind

#: The version of this wire protocol (not of the driver protocol, which the
#: driver's description in the ``hello`` answer carries). Raised when a
#: message changes meaning; fields added with defaults keep it.
WORKER_PROTOCOL_VERSION = 1
#: The protocol versions this side speaks; the ``hello`` request lists them.
SUPPORTED_PROTOCOL_VERSIONS = (WORKER_PROTOCOL_VERSION,)
#: The longest line either side accepts: a description of a large manifest is
#: a few megabytes; anything past this is a runaway writer, not an answer.
MAX_LINE_BYTES = 256 * 1024 * 1024


class RequestKind(str, Enum):
    """The requests a worker answers (``request`` in a request)."""

    HELLO = "hello"  # protocol_versions -> protocol_version, driver (DriverInfo JSON)
    VERSIONS = "versions"  # uri -> versions
    DESCRIBE = "describe"  # uri, version -> description
    READ = "read"  # uri, version, output[, schema][, with_row_ids] -> num_rows
    WRITE = "write"  # uri, operation[, storage_options] -> version
    QUERY = "query"  # uri, query, use_index -> answer (conformance.drivers.queries)
    SHUTDOWN = "shutdown"  # -> {} and the worker exits


class BadRequest(ValueError):
    """A request the server cannot act on (answered with ``bad-request``)."""


@dataclass(frozen=True)
class ErrorReply:
    """The ``error`` member of a response."""

    kind: ErrorKind
    message: str
    #: The implementation's own error type (``LanceError``, ``PanicException``), when it has one.
    error_type: str | None = None

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"kind": self.kind.value, "message": self.message}
        if self.error_type:
            document["type"] = self.error_type
        return document

    @classmethod
    def from_json(cls, document: Any) -> ErrorReply:
        """Raises ``ValueError`` when ``document`` is not an error object."""
        if not isinstance(document, dict) or not isinstance(document.get("message"), str):
            raise ValueError(f"an error must be an object with a kind and a message, not {document!r:.200}")
        error_type = document.get("type")
        if error_type is not None and not isinstance(error_type, str):
            raise ValueError(f"an error's type must be a string, not {error_type!r:.200}")
        return cls(ErrorKind(document.get("kind")), document["message"], error_type)


def encode(message: dict[str, Any]) -> bytes:
    """One message as its line (compact JSON, ``\\n``-terminated; JSON escapes
    every newline inside strings, so a line is always one message)."""
    return json.dumps(message, separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"


def response(request_id: int | None, result: dict[str, Any]) -> dict[str, Any]:
    return {"id": request_id, "result": result}


def error_response(request_id: int | None, error: ErrorReply) -> dict[str, Any]:
    return {"id": request_id, "error": error.to_json()}


def encode_schema(schema: Any) -> str:
    """An Arrow schema as the ``schema`` field of a read request: base64 of an
    Arrow IPC stream that holds the schema and no record batches (every Arrow
    library's stream reader opens it)."""
    import pyarrow as pa  # lazy: only readers of rows need pyarrow

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema):
        pass
    return base64.b64encode(sink.getvalue().to_pybytes()).decode("ascii")


def decode_schema(text: str) -> Any:
    """The Arrow schema a read request's ``schema`` field holds; raises
    :class:`BadRequest` when it is not one."""
    import pyarrow as pa  # lazy: only readers of rows need pyarrow

    try:
        data = base64.b64decode(text, validate=True)
        return pa.ipc.open_stream(pa.py_buffer(data)).schema
    except (ValueError, pa.ArrowException) as exc:
        raise BadRequest(f"schema is not a base64 Arrow IPC stream: {exc}") from None
