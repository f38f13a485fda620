"""The feature zoo: small datasets written by pylance and LanceDB with every
feature the installed releases offer, and a checker that holds the reference
and the validator to them.

Each feature (:mod:`.model`) has one builder writing one small dataset with
deterministic rows: every scalar index type (BTREE, BITMAP, LABEL_LIST,
INVERTED, NGRAM, ZONEMAP, BLOOMFILTER, MINHASHLSH, JSON), every vector index
type (IVF_PQ, IVF_FLAT, IVF_SQ, IVF_RQ, IVF_HNSW_*, multivector), delta
indices, a dropped index (:mod:`.indices`); merge_insert, update, deletions
of both kinds, column changes, restore, 61 appends, distributed writes,
overwrite, config and metadata, empty and truncated tables, primary and
clustering keys, MemWAL, stable row ids (:mod:`.operations`); tags,
branches, shallow and deep clones, cleanup with a tag kept, V1/V2 manifest
names and their migration, base paths, compaction and deferred index remap
(:mod:`.history`); every data storage version, every encoding hint, nested,
odd and extension types, JSON, blob v1 and the kinds of blob v2
(:mod:`.types`); a LanceDB table's whole life, its indices and its MemWAL
write path (:mod:`.lancedb_features`). A builder for something the installed release
lacks raises :class:`~.model.FeatureUnavailable`, and the build records the
reason (:mod:`.catalog`, ``zoo.json``).

The checker (:mod:`.check`) validates every version of every dataset
(shallow, or deep when asked), compares the reference's rows and canonical
description of each version with pylance's, and sorts what differs into
disagreements explained by :mod:`.known` (the one place they are recorded,
each with the document that explains it or the issue fixing it) and
unexplained ones, which fail.

Public API
----------
:data:`~.catalog.FEATURES`, :func:`~.catalog.build_zoo`, :func:`~.catalog.build_feature`
    The features by name; building them into a directory.
:func:`~.check.check_feature`, :func:`~.check.check_zoo`
    Checking what was built.
``python -m conformance.zoo build DIR [FEATURE ...]`` / ``check DIR [--deep] [FEATURE ...]``
    The same from a shell (:mod:`.__main__`).
"""

from .catalog import FEATURES, build_feature, build_zoo, cheap_features
from .check import FeatureCheck, ZooCheck, check_feature, check_zoo
from .disagreements import Aspect, Disagreement
from .known import KNOWN, KnownDisagreement
from .model import Feature, FeatureUnavailable, ZooBuildError

__all__ = [
    "FEATURES",
    "KNOWN",
    "Aspect",
    "Disagreement",
    "Feature",
    "FeatureCheck",
    "FeatureUnavailable",
    "KnownDisagreement",
    "ZooBuildError",
    "ZooCheck",
    "build_feature",
    "build_zoo",
    "cheap_features",
    "check_feature",
    "check_zoo",
]
