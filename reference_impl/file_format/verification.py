"""What deep validation of a data file finds (:mod:`.verify`), as plain
data: the kinds of problem, each problem, the data left unchecked and the
result of one file.

The model has no numpy or pyarrow at import, so that the validator's rules
can name problem kinds without loading the decoders (the validator's start-up
imports every rule module).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


class ProblemKind(str, enum.Enum):
    """What a problem of a data file is about (one validator rule each)."""

    #: A page or column the reader cannot decode.
    UNDECODABLE = "undecodable"
    #: Rows of pages, columns and the file that do not add up.
    ROW_COUNT = "row-count"
    #: The file's rows differ from its fragment's physical rows.
    FRAGMENT_ROWS = "fragment-rows"
    #: A buffer outside the data region, or two buffers sharing bytes.
    BUFFER_LAYOUT = "buffer-layout"
    #: A decoded value that breaks its field's logical layer (a JSON value
    #: that is not a well-formed JSONB document).
    MALFORMED_VALUE = "malformed-value"


@dataclass(frozen=True)
class PageProblem:
    """One thing wrong in a data file; ``column`` and ``page`` locate it when known."""

    kind: ProblemKind
    message: str
    column: int | None = None
    page: int | None = None

    @property
    def where(self) -> str:
        """``column N page M``, ``column N`` or ``""``."""
        if self.column is None:
            return ""
        return f"column {self.column}" + ("" if self.page is None else f" page {self.page}")


@dataclass(frozen=True)
class UncheckedData:
    """Data the reference reader cannot decode, so nothing was checked in it:
    ``encoding`` names what it lacks (a file version, a layout, an encoding)."""

    encoding: str
    column: int | None = None
    page: int | None = None


@dataclass(frozen=True)
class FileVerification:
    """What :func:`verify_data_file` found in one file."""

    path: str
    problems: tuple[PageProblem, ...] = ()
    unchecked: tuple[UncheckedData, ...] = ()
    #: For each watched field with nulls: the top-level row of each null
    #: (a row repeats once per null under it, in lists).
    null_rows: dict[int, np.ndarray] = dc_field(default_factory=dict)

    @property
    def well_formed(self) -> bool:
        return not self.problems
