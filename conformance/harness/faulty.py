"""Writers with one known bug class each, shipped to prove the checker bites
(``--writer faulty:NAME``)."""

from __future__ import annotations

from .writers import Writer

#: name -> (the bug class, the anomaly the checker must name).
FAULTY_WRITERS: dict[str, tuple[str, str]] = {}


class UnknownFaultyWriterError(ValueError):
    """``faulty:NAME`` names no shipped faulty writer."""


def create(name: str) -> Writer:
    raise UnknownFaultyWriterError(
        f"no faulty writer {name!r}; shipped: {', '.join(sorted(FAULTY_WRITERS)) or 'none yet'}"
    )
