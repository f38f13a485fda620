"""A reader driver module without time travel (``faulty_writers.LatestOnlyReader``)."""

from __future__ import annotations

from .faulty_writers import LatestOnlyReader

_READER = LatestOnlyReader()
UNREPORTED = _READER.UNREPORTED
info = _READER.info
versions = _READER.versions
describe = _READER.describe
read_table = _READER.read_table
