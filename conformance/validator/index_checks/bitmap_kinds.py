"""What tells the BITMAP and LABEL_LIST rules apart, shared by their
declarations (``rules/index_bitmap.py``, which register most rules once per
kind) and their bodies (:mod:`.bitmap`). Light: it imports no numpy or
pyarrow, as the rule declarations must not.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference_impl.indices.types import IndexType


@dataclass(frozen=True)
class Kind:
    """What differs between the two index types for these rules."""

    index_type: IndexType
    topic: str
    labels: bool

    @property
    def noun(self) -> str:
        return "label" if self.labels else "key"


BITMAP = Kind(IndexType.BITMAP, "index-bitmap", labels=False)
LABEL_LIST = Kind(IndexType.LABEL_LIST, "index-label-list", labels=True)
