"""Where the reference writer gets its fresh uuids, random ids and clock.

Everything the writer invents rather than derives (transaction and index
uuids, data file names, deletion file ids, commit timestamps, index creation
times, ref timestamps) comes from the :class:`EntropySource` returned by
:func:`current`. Normally that is the system's randomness and clock.

:func:`deterministic` swaps in a seeded source for the duration of a ``with``
block, so that writing the same operations twice gives byte-identical
datasets: this is how the golden fixtures (``conformance/fixtures``) stay
stable when they are regenerated. The manifest builder
(``reference_impl.commit.build_manifest``) stays a pure function: the values
are drawn by its callers and handed to it as arguments.
"""

from __future__ import annotations

import hashlib
import secrets
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


class EntropySource:
    """The system's randomness and clock."""

    def uuid4(self) -> uuid.UUID:
        return uuid.uuid4()

    def randbits(self, bits: int) -> int:
        return secrets.randbits(bits)

    def time_ns(self) -> int:
        return time.time_ns()


@dataclass
class SeededEntropy(EntropySource):
    """Reproducible values: uuids and random bits are hashes of ``seed`` and a
    counter, and the clock starts at ``start_ns`` and moves ``step_ns`` each
    time it is read (so commits still have increasing timestamps)."""

    seed: str
    start_ns: int
    step_ns: int = 1_000_000_000
    _draws: int = 0
    _ticks: int = 0

    def _digest(self) -> bytes:
        self._draws += 1
        return hashlib.sha256(f"{self.seed}/{self._draws}".encode()).digest()

    def uuid4(self) -> uuid.UUID:
        # Version and variant bits set as for a random uuid, so the values
        # look like what a writer would otherwise produce.
        return uuid.UUID(bytes=self._digest()[:16], version=4)

    def randbits(self, bits: int) -> int:
        return int.from_bytes(self._digest(), "big") >> (256 - bits)

    def time_ns(self) -> int:
        now = self.start_ns + self._ticks * self.step_ns
        self._ticks += 1
        return now


_current: EntropySource = EntropySource()


def current() -> EntropySource:
    """The source the writer draws from right now."""
    return _current


@contextmanager
def deterministic(seed: str, start_ns: int = 1_767_225_600_000_000_000) -> Iterator[SeededEntropy]:
    """Within the block, the writer's uuids, random ids and clock come from
    ``seed`` (default start: 2026-01-01T00:00:00Z). Not thread-safe: it is
    meant for generating fixtures, one writer at a time."""
    global _current
    previous = _current
    _current = SeededEntropy(seed=seed, start_ns=start_ns)
    try:
        yield _current
    finally:
        _current = previous
