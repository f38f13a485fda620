"""Time zones compared as zones, not as spellings.

An Arrow timestamp stores instants (UTC) and names a zone to show them in
(schema format page, "Type Conversion Reference": ``timestamp`` keeps its
zone). Readers name the same zone differently: ``UTC`` comes back as
``Etc/UTC`` or ``+00:00``, ``US/Eastern`` as ``America/New_York``. Two names
denote the same zone when

* both are a fixed offset from UTC, and the offsets are equal: an ISO 8601
  offset (``+00:00``, ``-0530``, ``Z``) or a tz database zone that has
  always had one offset (``UTC``, ``Etc/GMT``, ``Etc/GMT+5``); or
* both are tz database names of the same zone: a link and its target
  (``US/Eastern`` and ``America/New_York``), whose compiled zone files
  (RFC 8536, "TZif") are byte for byte the same.

A name the tz database here does not know is equal only to itself.
"""

from __future__ import annotations

import re
import struct
import zoneinfo
from functools import lru_cache
from importlib import resources
from pathlib import Path

# An ISO 8601 / Arrow offset zone: Z, +HH, +HHMM, +HH:MM.
_OFFSET = re.compile(r"^(?P<sign>[+-])(?P<hours>\d{2}):?(?P<minutes>\d{2})?$")
# RFC 8536 section 3.1: magic, version, 15 reserved bytes, six 32-bit counts.
_HEADER = struct.Struct(">4sc15x6l")


def same_zone(a: str | None, b: str | None) -> bool:
    """Whether two Arrow time zones (None: no zone) denote the same zone."""
    if a is None or b is None:
        return a is b
    return a == b or canonical_zone(a) == canonical_zone(b)


@lru_cache(maxsize=256)
def canonical_zone(name: str) -> object:
    """A value equal for names of the same zone: ``("offset", seconds)`` for
    a fixed offset, ``("tzif", bytes)`` for another tz database zone, the
    name itself for an unknown one."""
    offset = _offset_seconds(name)
    if offset is not None:
        return ("offset", offset)
    data = _tzif(name)
    if data is None:
        return ("name", name)
    fixed = _fixed_offset(data)
    return ("offset", fixed) if fixed is not None else ("tzif", data)


def _offset_seconds(name: str) -> int | None:
    if name == "Z":
        return 0
    match = _OFFSET.match(name)
    if match is None:
        return None
    seconds = int(match["hours"]) * 3600 + int(match["minutes"] or 0) * 60
    return -seconds if match["sign"] == "-" else seconds


def _tzif(name: str) -> bytes | None:
    """The compiled zone file of ``name``, where :mod:`zoneinfo` looks for it:
    the system's tz database (``zoneinfo.TZPATH``), then the ``tzdata`` package."""
    parts = name.split("/")
    if not name or any(part in ("", ".", "..") for part in parts):
        return None
    for root in zoneinfo.TZPATH:
        path = Path(root).joinpath(*parts)
        if path.is_file():
            return path.read_bytes()
    try:
        return resources.files("tzdata.zoneinfo").joinpath(*parts).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _fixed_offset(data: bytes) -> int | None:
    """The one UTC offset of a TZif file whose zone never changes offset
    (no transitions, one local time type, and for version 2 and later a
    footer rule without daylight saving time), else None (RFC 8536)."""
    try:
        magic, version, isut, isstd, leap, times, types, chars = _HEADER.unpack_from(data, 0)
        if magic != b"TZif":
            return None
        start, time_size = _HEADER.size, 4
        if version != b"\x00":
            # Version 2+: the 64-bit block after the version 1 block is authoritative.
            start += times * 5 + types * 6 + chars + leap * 8 + isstd + isut
            _, _, isut, isstd, leap, times, types, chars = _HEADER.unpack_from(data, start)
            start, time_size = start + _HEADER.size, 8
        if times != 0 or types != 1:
            return None
        (offset,) = struct.unpack_from(">l", data, start)
        if version != b"\x00":
            footer_start = start + 6 + chars + leap * (time_size + 4) + isstd + isut
            footer = data[footer_start:].strip(b"\n")
            if b"," in footer:  # a POSIX TZ rule with daylight saving time
                return None
        return int(offset)
    except struct.error:
        return None
