"""Rust ``{:?}`` / ``{:#?}`` renderings parsed back into Python values.

pylance's ``lance.debug.format_manifest`` renders the manifest it loaded with
Rust's ``Debug`` formatting; :mod:`conformance.drivers.pylance_driver` takes
the facts pylance's typed API does not expose from it. Standard library only,
so it runs inside an old pylance release's own environment too
(:mod:`conformance.drivers.release`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any


@dataclass
class DebugStruct:
    """``Name { field: value, ... }``."""

    name: str
    fields: dict[str, Any] = dc_field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        try:
            return self.fields[key]
        except KeyError:
            raise KeyError(f"{self.name} has no field {key!r} in pylance's rendering") from None


@dataclass
class DebugTuple:
    """``Name(value, ...)``; ``Some(x)`` is unwrapped to ``x`` instead."""

    name: str
    items: list[Any] = dc_field(default_factory=list)


@dataclass
class DebugUnit:
    """A bare identifier other than ``None``/``true``/``false``, e.g. ``Bitmap``."""

    name: str


_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<bytes>b"(?:[^"\\]|\\.)*")
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<rest>\.\.)
  | (?P<punct>[{}()\[\],:])
    """,
    re.VERBOSE | re.DOTALL,
)

_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


def _unescape(body: str, *, as_bytes: bool) -> str | bytes:
    out: list[int] | list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            if as_bytes:
                out.extend(char.encode("utf-8"))  # type: ignore[arg-type]
            else:
                out.append(char)  # type: ignore[arg-type]
            i += 1
            continue
        code = body[i + 1]
        if code in _SIMPLE_ESCAPES:
            text = _SIMPLE_ESCAPES[code]
            i += 2
        elif code == "x":
            text = chr(int(body[i + 2 : i + 4], 16))
            i += 4
        elif code == "u":
            end = body.index("}", i)
            text = chr(int(body[i + 3 : end], 16))
            i = end + 1
        else:
            raise ValueError(f"unknown escape \\{code} in rendered string")
        if as_bytes:
            out.append(ord(text))  # type: ignore[arg-type]
        else:
            out.append(text)  # type: ignore[arg-type]
    return bytes(out) if as_bytes else "".join(out)  # type: ignore[arg-type]


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ValueError(f"cannot parse pylance's debug rendering at {text[position : position + 40]!r}")
        kind = match.lastgroup
        assert kind is not None  # every alternative of _TOKEN is a named group
        if kind != "space":
            tokens.append((kind, match.group()))
        position = match.end()
    return tokens


class _DebugParser:
    def __init__(self, text: str):
        self.tokens = _tokenize(text)
        self.position = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise ValueError("pylance's debug rendering ended early")
        if expected is not None and token[1] != expected:
            raise ValueError(f"expected {expected!r} in pylance's debug rendering, found {token[1]!r}")
        self.position += 1
        return token

    def at(self, text: str) -> bool:
        token = self.peek()
        return token is not None and token[1] == text

    def sequence(self, close: str, item) -> list:
        """Items separated by commas (trailing comma allowed) up to ``close``."""
        items = []
        while not self.at(close):
            token = self.peek()
            if token is not None and token[0] == "rest":
                self.take()  # ``..`` of a non-exhaustive struct
            else:
                items.append(item())
            if not self.at(close):
                self.take(",")
        self.take(close)
        return items

    def value(self) -> Any:
        kind, text = self.take()
        if kind == "string":
            return _unescape(text[1:-1], as_bytes=False)
        if kind == "bytes":
            return _unescape(text[2:-1], as_bytes=True)
        if kind == "number":
            return float(text) if any(c in text for c in ".eE") else int(text)
        if text == "[":
            return self.sequence("]", self.value)
        if text == "(":
            return self.sequence(")", self.value)
        if text == "{":
            return dict(self.sequence("}", self.map_entry))
        if kind == "ident":
            return self.after_identifier(text)
        raise ValueError(f"unexpected {text!r} in pylance's debug rendering")

    def map_entry(self) -> tuple[Any, Any]:
        key = self.value()
        self.take(":")
        return _hashable(key), self.value()

    def struct_field(self) -> tuple[str, Any]:
        kind, name = self.take()
        if kind != "ident":
            raise ValueError(f"expected a field name in pylance's debug rendering, found {name!r}")
        self.take(":")
        return name, self.value()

    def after_identifier(self, name: str) -> Any:
        if self.at("{"):
            self.take("{")
            return DebugStruct(name, dict(self.sequence("}", self.struct_field)))
        if self.at("("):
            self.take("(")
            items = self.sequence(")", self.value)
            if name == "Some" and len(items) == 1:
                return items[0]
            return DebugTuple(name, items)
        if self.at("["):
            # Arrow arrays render as ``StringArray [ "a", null, ]``.
            self.take("[")
            return DebugTuple(name, self.sequence("]", self.value))
        if name == "None":
            return None
        if name in ("true", "false"):
            return name == "true"
        return DebugUnit(name)


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(item) for item in value)
    if isinstance(value, DebugUnit):
        return value.name
    return value


def parse_rust_debug(text: str) -> Any:
    """Parse one value rendered by Rust's ``{:?}`` / ``{:#?}``.

    Structs become :class:`DebugStruct`, tuple structs and enum variants with
    payloads :class:`DebugTuple` (``Some(x)`` becomes ``x``), other bare
    identifiers :class:`DebugUnit`, maps ``dict``, lists and tuples ``list``.
    """
    parser = _DebugParser(text)
    value = parser.value()
    trailing = parser.peek()
    if trailing is not None:
        raise ValueError(f"trailing text after the rendered value: {trailing[1]!r}")
    return value
