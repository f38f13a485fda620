"""The JSON files of a dataset: tag and branch files under ``_refs/`` and
the latest-version hint under ``_versions/`` (branch & tag specification;
table format: manifest naming schemes).

Python's JSON decoder recurses once per level of nesting, so a file nested a
thousand levels deep ends in a ``RecursionError`` (and a deeper one could
exhaust the stack). No file of the format nests more than a few levels, so
the depth is measured with a flat scan and bounded before anything is
decoded, and the size is bounded before anything is read.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate

from .errors import CorruptFileError
from .storage import Storage

#: Far more than any tag, branch or hint file holds (they are a few hundred bytes).
MAX_JSON_BYTES = 1 << 20
#: Far deeper than any of them nests (a branch's ``metadata`` object is level 2).
MAX_JSON_DEPTH = 64

#: A JSON string literal (escapes included), whose brackets are not structure.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")


def nesting_depth(text: str) -> int:
    """How deeply the arrays and objects of ``text`` nest (0 for a scalar),
    counted without recursion. Brackets inside string literals are not
    counted; for text that is not JSON the count is only an estimate, and
    the decoder rejects such text anyway."""
    brackets = _NOT_A_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(1 if c in "[{" else -1 for c in brackets), default=0)


def decode_json(data: bytes, path: str, *, max_depth: int = MAX_JSON_DEPTH) -> object:
    """The JSON value of ``data`` (the bytes of the file at ``path``);
    :class:`CorruptFileError` naming ``path`` when they are not UTF-8 JSON
    or nest deeper than ``max_depth``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFileError(path, f"not valid UTF-8 JSON: {exc}") from None
    depth = nesting_depth(text)
    if depth > max_depth:
        raise CorruptFileError(path, f"JSON nests {depth} levels deep, more than the {max_depth} this reader accepts")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise CorruptFileError(path, f"not valid UTF-8 JSON: {exc}") from None


def read_json_file(storage: Storage, relpath: str, *, max_bytes: int = MAX_JSON_BYTES) -> object:
    """The JSON value of the file at ``relpath``, its size and nesting
    bounded before it is read and decoded."""
    path = str(storage.path(relpath))
    size = storage.size(relpath)
    if size > max_bytes:
        raise CorruptFileError(path, f"the file holds {size} bytes, more than the {max_bytes} a JSON file may hold")
    return decode_json(storage.read(relpath, 0, size), path)
