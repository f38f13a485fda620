"""The validator's rules, one module per topic of the specification.

Importing a module registers its rules (see :mod:`conformance.validator.registry`).
Importing this package imports none of them: :mod:`conformance.validator.ruleset`
loads every module (:func:`load_all`) for the catalog and a full run, and only
the modules of the selected topics for ``validate --rules`` (:func:`load_for`),
so that a run never pays for rules it does not run. A new topic module is
found by :func:`load_all` with no other wiring; :data:`TOPIC_MODULES` says
which modules register rules under each rule id topic, and
``tests/conformance/validator/test_rule_topics.py`` checks it against what
the modules register.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

#: Every rule module, by name.
MODULES: tuple[str, ...] = tuple(sorted(module.name for module in pkgutil.iter_modules(__path__)))

#: Rule id topic (the part before the first "/") -> the modules registering rules under it.
TOPIC_MODULES: dict[str, tuple[str, ...]] = {
    "base-path": ("base_paths",),
    "blob": ("blobs",),
    "data-file": ("data_files", "legacy_data_files"),
    "data-page": ("data_pages",),
    "deletion": ("deletions",),
    "external-store": ("external_store", "naming"),
    "feature-flags": ("feature_flags",),
    "fragment": ("fragments",),
    "history": ("concurrency", "history"),
    "index": ("indices",),
    "index-bitmap": ("index_bitmap",),
    "index-bloom-filter": ("index_zonemap",),
    "index-btree": ("index_btree",),
    "index-inverted": ("index_text",),
    "index-json": ("index_text",),
    "index-label-list": ("index_bitmap",),
    "index-minhash-lsh": ("index_minhash_lsh",),
    "index-ngram": ("index_text",),
    "index-vector": ("index_vector",),
    "index-zonemap": ("index_zonemap",),
    "manifest": ("manifest",),
    "mem-wal": ("mem_wal", "mem_wal_sharding", "mem_wal_shards"),
    "naming": ("naming",),
    "primary-key": ("primary_key",),
    "refs": ("refs",),
    "row-id": ("row_ids", "row_lineage"),
    "schema": ("field_types", "non_nullable", "schema"),
    "transaction": ("history", "table_operations", "transactions"),
    "writer-version": ("writer_version",),
    "index-rtree": ("index_rtree",),
}


def load_all() -> None:
    """Import every rule module (each registers its rules once)."""
    _load(MODULES)


def load_for(selected: Iterable[str]) -> None:
    """Import the modules whose rules a ``--rules`` selection (ids or id
    prefixes) can name; every module when an entry's topic is unknown."""
    modules: list[str] = []
    for entry in selected:
        topic = entry.strip("/").split("/", 1)[0]
        if topic not in TOPIC_MODULES:
            load_all()
            return
        modules.extend(TOPIC_MODULES[topic])
    _load(modules)


def _load(modules: Iterable[str]) -> None:
    for name in modules:
        importlib.import_module(f"{__name__}.{name}")
