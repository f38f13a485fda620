"""What the engine drivers share: their declaration (write-only), the
conflict signal of the pylance inside every engine, the token's transaction
properties, and how rows are cut into the slices workers write.

Every engine here commits through the pylance installed beside it, so a
commit conflict reaches the driver as pylance's error (directly, or wrapped
by the engine: :func:`conflict_from` follows ``__cause__`` and
``__context__``).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .. import pylance_driver
from ..lance_core_conflicts import conflict_from_message
from ..protocol import Capability, DriverInfo, WriteConflict, WriteKind
from ..pylance_driver import lance_core_version

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa


def engine_info(name: str, package: str, operations: Iterable[WriteKind], *, at_version: bool = False) -> DriverInfo:
    """An engine driver's declaration: it writes (and, with ``at_version``,
    honours a read version), the kinds ``operations`` name, the data file
    versions its pylance writes; ``package`` is the PyPI distribution whose
    release is under test. Nothing to read: the readers are the reference
    and pylance, so the protocol asks it for no read member."""
    capabilities = {Capability.WRITE, *([Capability.WRITE_AT_VERSION] if at_version else [])}
    return DriverInfo(
        name=name,
        implementation=name,
        version=importlib.metadata.version(package),
        lance_version=lance_core_version(),
        capabilities=frozenset(capabilities),
        write_operations=frozenset(kind.value for kind in operations),
        data_storage_versions=("2.0", "2.1", "2.2"),
    )


def conflict_from(error: BaseException) -> WriteConflict | None:
    """The :class:`WriteConflict` a pylance commit conflict means, looking
    through the engine's wrapping (``__cause__``, ``__context__``, and the
    message of an error that quotes the conflict's words, as a Ray task's
    error does); None for any other error. pylance's own signal is read by
    :func:`conformance.drivers.pylance_driver.conflict_from`."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = pylance_driver.conflict_from(current) or conflict_from_message(str(current), anywhere=True)
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
    return None


def token_properties(op: Any) -> dict[str, str] | None:
    """The transaction properties naming ``op`` (its token), None without one."""
    # lazy: driver modules import without pyarrow (installed_drivers imports each one)
    from ..writes import TOKEN_PROPERTY

    return None if op.token is None else {TOKEN_PROPERTY: op.token}


def slices(rows: pa.Table, parts: int) -> list[pa.Table]:
    """``rows`` cut into at most ``parts`` contiguous, non-empty slices, in
    order (one empty slice for an empty table, so that its schema still
    travels)."""
    if rows.num_rows == 0:
        return [rows]
    size = -(-rows.num_rows // max(1, parts))
    return [rows.slice(start, size) for start in range(0, rows.num_rows, size)]
