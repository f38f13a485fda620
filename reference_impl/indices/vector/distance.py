"""Distance types of vector indices (format/index/vector/index.md,
``distance_type``) and the arithmetic the checks of stored assignments need:
which vector a quantizer encodes, and which candidates are nearest, ties
within a stated float tolerance included.
"""

from __future__ import annotations

import enum

import numpy as np


class DistanceType(enum.Enum):
    """The distance types the page names (``distance_type`` values)."""

    L2 = "l2"
    COSINE = "cosine"
    DOT = "dot"
    HAMMING = "hamming"


#: Candidates whose distance is within this of the smallest are ties: the
#: writer computes in float32 (about 7 digits), the reference in float64.
RELATIVE_TOLERANCE = 1e-4
ABSOLUTE_TOLERANCE = 1e-5


def normalized(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def indexed_form(vectors: np.ndarray, distance: DistanceType) -> np.ndarray:
    """The vectors as the index sees them: cosine indices work on unit
    vectors (pylance 14 normalizes before assigning and storing)."""
    vectors = np.asarray(vectors, dtype=np.float64)
    return normalized(vectors) if distance is DistanceType.COSINE else vectors


def squared_l2(vectors: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """``[rows, candidates]`` squared Euclidean distances (expanded as
    ``|x|^2 - 2 x.c + |c|^2``, so that no ``rows x candidates x dimension``
    array is built; float64 keeps the cancellation far below the tolerance)."""
    vectors, candidates = np.asarray(vectors, np.float64), np.asarray(candidates, np.float64)
    found = (vectors**2).sum(axis=1)[:, None] - 2.0 * (vectors @ candidates.T) + (candidates**2).sum(axis=1)[None, :]
    return np.maximum(found, 0.0)


def negative_dot(vectors: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    return -(np.asarray(vectors, np.float64) @ np.asarray(candidates, np.float64).T)


def assignment_mismatches(vectors: np.ndarray, centroids: np.ndarray, chosen: np.ndarray, distance: DistanceType):
    """Per row, whether partition ``chosen`` is not (within ties) the
    nearest centroid. The page says IVF clusters with k-means and names the
    distance type, not the assignment; pylance 14 assigns by Euclidean
    distance, of the unit vector for cosine, and for dot either by it or by
    inner product (docs/spec-discrepancies.md), so dot accepts either."""
    indexed = indexed_form(vectors, distance)
    fits = within_ties(squared_l2(indexed, centroids), chosen)
    if distance is DistanceType.DOT:
        fits |= within_ties(negative_dot(indexed, centroids), chosen)
    return ~fits


def within_ties(distances: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Per row, whether candidate ``chosen`` is as near as the nearest,
    within :data:`RELATIVE_TOLERANCE` of the distances' scale."""
    best = distances.min(axis=1)
    picked = distances[np.arange(len(chosen)), chosen]
    scale = np.abs(distances).max(axis=1)
    return picked <= best + RELATIVE_TOLERANCE * scale + ABSOLUTE_TOLERANCE
