"""The MinHash signature procedure of ``signature_version`` 0 (upstream
format/index/scalar/minhash_lsh.md, "Version 0 Reference", "Signature
Procedure"): tokens, shingles, their XXH64 hashes, ``num_hashes``
permutations from a SplitMix64 stream, minima compressed to 16 bits, and
band keys. Arithmetic is modulo 2**64, which numpy's unsigned arrays give
(overflowing products wrap silently for arrays).

The page's known-answer vectors are the tests of this module
(tests/reference_impl/indices/test_minhash_lsh.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .xxhash64 import xxh64_rows

#: The seed of every XXH64 of the procedure and the SplitMix64 start state.
SEED = 42
#: The byte joining the tokens of a shingle.
SHINGLE_SEPARATOR = b"\x1f"
#: The signature versions this module computes.
SIGNATURE_VERSIONS = (0,)

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_MIX_1 = 0xBF58476D1CE4E5B9
_MIX_2 = 0x94D049BB133111EB
#: The low 56 bits of a band key hold the band's hash; the top 8 its number.
BAND_HASH_MASK = (1 << 56) - 1
BAND_SHIFT = 56


def _splitmix64(count: int) -> list[int]:
    """The first ``count`` draws of SplitMix64 started at :data:`SEED`."""
    state, draws = SEED, []
    for _ in range(count):
        state = (state + _GOLDEN) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * _MIX_1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX_2) & _MASK
        draws.append(z ^ (z >> 31))
    return draws


def coefficients(num_hashes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(a, b, c)``, each ``num_hashes`` uint64: the draws taken in pairs
    ``a_i | 1, b_i``, then ``c_i | 1``."""
    draws = _splitmix64(3 * num_hashes)
    pairs, tail = draws[: 2 * num_hashes], draws[2 * num_hashes :]
    a = np.array([value | 1 for value in pairs[0::2]], dtype=np.uint64)
    b = np.array(pairs[1::2], dtype=np.uint64)
    c = np.array([value | 1 for value in tail], dtype=np.uint64)
    return a, b, c


def shingles(tokens: Sequence[bytes], shingle_size: int) -> list[bytes]:
    """The shingles of a text's tokens: ``shingle_size`` consecutive tokens
    joined with 0x1F, one per start position; all tokens in one when there
    are fewer; none for no tokens."""
    if not tokens:
        return []
    if len(tokens) < shingle_size:
        return [SHINGLE_SEPARATOR.join(tokens)]
    return [SHINGLE_SEPARATOR.join(tokens[at : at + shingle_size]) for at in range(len(tokens) - shingle_size + 1)]


def hash_byte_strings(values: Sequence[bytes]) -> np.ndarray:
    """XXH64 with seed 42 of each byte string (grouped by length, one
    vectorised call per length)."""
    out = np.zeros(len(values), dtype=np.uint64)
    by_length: dict[int, list[int]] = {}
    for position, value in enumerate(values):
        by_length.setdefault(len(value), []).append(position)
    for length, positions in by_length.items():
        matrix = np.frombuffer(b"".join(values[p] for p in positions), dtype=np.uint8).reshape(len(positions), length)
        out[positions] = xxh64_rows(matrix, SEED)
    return out


class Signer:
    """Signs texts (their tokens) for one ``num_hashes``: the coefficients
    are drawn once."""

    def __init__(self, num_hashes: int, shingle_size: int):
        self.num_hashes, self.shingle_size = num_hashes, shingle_size
        self.a, self.b, self.c = coefficients(num_hashes)

    def minima(self, tokens: Sequence[bytes]) -> np.ndarray | None:
        """``m_i`` (uint64) for a text's tokens; None for no tokens."""
        hashed = hash_byte_strings(shingles(tokens, self.shingle_size))
        if not len(hashed):
            return None
        permuted = self.a[:, None] * hashed[None, :] + self.b[:, None]
        return permuted.min(axis=1)

    def signature(self, tokens: Sequence[bytes]) -> np.ndarray | None:
        """The ``num_hashes`` uint16 signature of a text's tokens, or None
        for a text without tokens (it is not indexed)."""
        minima = self.minima(tokens)
        if minima is None:
            return None
        return ((self.c * minima) >> np.uint64(48)).astype(np.uint16)


def band_keys(signatures: np.ndarray, num_bands: int) -> np.ndarray:
    """The band keys of each row of ``signatures`` (``(rows, num_hashes)``
    uint16): ``(rows, num_bands)`` uint64, band ``j``'s key ``j << 56`` over
    the low 56 bits of XXH64 of its values as little-endian bytes."""
    rows, num_hashes = signatures.shape
    width = num_hashes // num_bands
    band_bytes = np.ascontiguousarray(signatures.astype("<u2")).view(np.uint8).reshape(rows * num_bands, 2 * width)
    hashes = xxh64_rows(band_bytes, SEED).reshape(rows, num_bands) & np.uint64(BAND_HASH_MASK)
    bands = np.arange(num_bands, dtype=np.uint64) << np.uint64(BAND_SHIFT)
    return hashes | bands[None, :]


#: Shingles permuted at once by :func:`Signer.sign_many` (a ``num_hashes``
#: by this many uint64 matrix).
_CHUNK_SHINGLES = 1 << 15


def _sign_chunk(signer: Signer, token_lists: Sequence[Sequence[bytes]], out: np.ndarray) -> None:
    counts = np.array([len(shingles(tokens, signer.shingle_size)) for tokens in token_lists], dtype=np.int64)
    hashed = hash_byte_strings([s for tokens in token_lists for s in shingles(tokens, signer.shingle_size)])
    signed = np.flatnonzero(counts)
    if not len(signed):
        return
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])[signed]
    permuted = signer.a[:, None] * hashed[None, :] + signer.b[:, None]
    minima = np.minimum.reduceat(permuted, starts, axis=1).T
    out[signed] = ((signer.c[None, :] * minima) >> np.uint64(48)).astype(np.uint16)


def sign_many(signer: Signer, token_lists: Sequence[Sequence[bytes]]) -> tuple[np.ndarray, np.ndarray]:
    """The signatures of many texts at once: ``(rows, num_hashes)`` uint16
    (zeros where a text has none) and whether each text has one."""
    out = np.zeros((len(token_lists), signer.num_hashes), dtype=np.uint16)
    begin, shingle_total = 0, 0
    for position, tokens in enumerate(token_lists):
        shingle_total += max(len(tokens) - signer.shingle_size + 1, 1 if tokens else 0)
        if shingle_total >= _CHUNK_SHINGLES:
            _sign_chunk(signer, token_lists[begin : position + 1], out[begin : position + 1])
            begin, shingle_total = position + 1, 0
    if begin < len(token_lists):
        _sign_chunk(signer, token_lists[begin:], out[begin:])
    return out, np.array([bool(tokens) for tokens in token_lists], dtype=bool)
