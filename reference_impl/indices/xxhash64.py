"""XXH64, the 64-bit xxHash, over many byte strings at once (numpy).

The bloom filter index hashes each value with XXH64 and seed 0, as Parquet's
split block bloom filters do (parquet-format BloomFilter.md, "Hash
Function"). The algorithm is the published xxHash specification
(xxhash/doc/xxhash_spec.md, "XXH64"); this is a fresh, vectorised statement
of it: the rows of a ``(count, length)`` byte matrix are hashed together, all
of one length, so a column of fixed-width values is one call and a string
column one call per distinct length. Arithmetic is modulo 2**64, which
numpy's unsigned arrays give for free.
"""

from __future__ import annotations

import numpy as np

_U64 = np.uint64
PRIME_1 = _U64(0x9E3779B185EBCA87)
PRIME_2 = _U64(0xC2B2AE3D27D4EB4F)
PRIME_3 = _U64(0x165667B19E3779F9)
PRIME_4 = _U64(0x85EBCA77C2B2AE63)
PRIME_5 = _U64(0x27D4EB2F165667C5)

#: Bytes consumed per step of the main loop (four 8-byte lanes).
STRIPE = 32


def _rotl(x: np.ndarray, bits: int) -> np.ndarray:
    return (x << _U64(bits)) | (x >> _U64(64 - bits))


def _round(accumulator: np.ndarray, lane: np.ndarray) -> np.ndarray:
    return _rotl(accumulator + lane * PRIME_2, 31) * PRIME_1


def _lanes(data: np.ndarray, start: int, width: int) -> np.ndarray:
    """The little-endian unsigned integers of ``width`` bytes at column
    ``start`` of every row, as uint64."""
    return np.ascontiguousarray(data[:, start : start + width]).view(f"<u{width}").reshape(-1).astype(np.uint64)


def xxh64_rows(data: np.ndarray, seed: int = 0) -> np.ndarray:
    """XXH64 of every row of ``data`` (a 2-D uint8 array: one input per row,
    all of the same length), as a uint64 array."""
    data = np.asarray(data, dtype=np.uint8)
    if data.ndim != 2:
        raise ValueError(f"expected a 2-D byte matrix, got shape {data.shape}")
    count, length = data.shape
    seed_word = np.full(count, seed, dtype=np.uint64)
    position = 0
    if length >= STRIPE:
        accumulators = [seed_word + PRIME_1 + PRIME_2, seed_word + PRIME_2, seed_word.copy(), seed_word - PRIME_1]
        while position + STRIPE <= length:
            for lane in range(4):
                accumulators[lane] = _round(accumulators[lane], _lanes(data, position + 8 * lane, 8))
            position += STRIPE
        v1, v2, v3, v4 = accumulators
        hashes = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
        for accumulator in accumulators:
            hashes = (hashes ^ _round(np.zeros(count, np.uint64), accumulator)) * PRIME_1 + PRIME_4
    else:
        hashes = seed_word + PRIME_5
    hashes = hashes + _U64(length)
    while position + 8 <= length:
        hashes = hashes ^ _round(np.zeros(count, np.uint64), _lanes(data, position, 8))
        hashes = _rotl(hashes, 27) * PRIME_1 + PRIME_4
        position += 8
    if position + 4 <= length:
        hashes = hashes ^ (_lanes(data, position, 4) * PRIME_1)
        hashes = _rotl(hashes, 23) * PRIME_2 + PRIME_3
        position += 4
    while position < length:
        hashes = hashes ^ (data[:, position].astype(np.uint64) * PRIME_5)
        hashes = _rotl(hashes, 11) * PRIME_1
        position += 1
    # The final avalanche.
    hashes = hashes ^ (hashes >> _U64(33))
    hashes = hashes * PRIME_2
    hashes = hashes ^ (hashes >> _U64(29))
    hashes = hashes * PRIME_3
    return hashes ^ (hashes >> _U64(32))


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of one byte string."""
    matrix = np.frombuffer(bytes(data), dtype=np.uint8).reshape(1, len(data))
    return int(xxh64_rows(matrix, seed)[0])
