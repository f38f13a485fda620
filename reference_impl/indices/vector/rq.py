"""RabitQ storage (format/index/vector/index.md, "RQ" in the auxiliary
file, ``storage_metadata`` for RabitQ).

Read here: the columns and their widths (``_rabit_codes`` of
``ceil(code_dim / 8)`` bytes, ``__blocked_ex_codes`` of
``next_multiple_of(code_dim, 64) * (num_bits - 1) / 8`` bytes when
``num_bits > 1``, the factor columns) and the metadata. Not decoded: the
rotation (pylance 14 writes ``rotation_type: fast`` with sign vectors the
page does not describe), the packed partition-local layout of the sign
codes, and the factors. A reader that cannot use the codes skips the index
as index.md says; the validator says the codes went unchecked.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..files import IndexFileContents, IndexFormatError
from .flat import fixed_size_rows

SIGN_CODES = "_rabit_codes"
EX_CODES = "__blocked_ex_codes"
LEGACY_EX_CODES = "__ex_codes"
ALWAYS = ("__add_factors", "__scale_factors")
WHEN_MULTI_BIT = ("__add_factors_ex", "__scale_factors_ex")
OPTIONAL = (
    "__error_factors",
    "__rq_bounds_hi",
    "__rq_bounds_full",
    "__add_factors_ex_hi",
    "__scale_factors_ex_hi",
    "__blocked_ex_codes_lo",
)


@dataclass(frozen=True)
class RqStorage:
    code_dim: int
    num_bits: int
    packed: bool
    rotation_type: str
    sign_code_width: int
    ex_code_width: int | None
    #: The quantizer's columns present in the file.
    columns: tuple[str, ...]


def read_rq_storage(aux: IndexFileContents, meta: dict) -> RqStorage:
    try:
        code_dim, num_bits = int(meta["code_dim"]), int(meta["num_bits"])
    except (KeyError, TypeError, ValueError) as exc:
        raise IndexFormatError(aux.path, f"the RQ storage_metadata lacks or mistypes {exc}") from None
    if not 1 <= num_bits <= 9 or code_dim <= 0:
        raise IndexFormatError(aux.path, f"RQ with {num_bits} bits over code_dim {code_dim}")
    names = set(aux.table.column_names)
    required = [SIGN_CODES, *ALWAYS] + (list(WHEN_MULTI_BIT) if num_bits > 1 else [])
    missing = [name for name in required if name not in names]
    if num_bits > 1 and EX_CODES not in names and LEGACY_EX_CODES not in names:
        missing.append(EX_CODES)
    if missing:
        raise IndexFormatError(aux.path, f"RQ storage lacks the columns {missing}")
    sign_width = fixed_size_rows(aux, SIGN_CODES).shape[1]
    ex_width = None
    if EX_CODES in names:
        ex_width = fixed_size_rows(aux, EX_CODES).shape[1]
    present = tuple(
        n for n in (SIGN_CODES, EX_CODES, LEGACY_EX_CODES, *ALWAYS, *WHEN_MULTI_BIT, *OPTIONAL) if n in names
    )
    return RqStorage(
        code_dim=code_dim,
        num_bits=num_bits,
        packed=bool(meta.get("packed", False)),
        rotation_type=str(meta.get("rotation_type", "matrix")),
        sign_code_width=sign_width,
        ex_code_width=ex_width,
        columns=present,
    )


def width_problems(storage: RqStorage) -> list[str]:
    """Code widths that disagree with ``code_dim`` and ``num_bits``."""
    problems = []
    if storage.sign_code_width != -(-storage.code_dim // 8):
        problems.append(f"_rabit_codes hold {storage.sign_code_width} bytes, not ceil({storage.code_dim} / 8)")
    if storage.ex_code_width is not None and storage.num_bits > 1:
        padded = -(-storage.code_dim // 64) * 64
        expected = padded * (storage.num_bits - 1) // 8
        if storage.ex_code_width != expected:
            problems.append(f"__blocked_ex_codes hold {storage.ex_code_width} bytes, not {expected}")
    return problems
