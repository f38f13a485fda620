"""Every zoo feature by name, and building them into a directory.

``build_zoo(root)`` writes each feature's dataset at ``root/<name>`` and a
record, ``root/zoo.json``, of what was built and what the installed releases
do not offer (with the reason): the checker reads it, so a skipped feature is
reported, never silently absent."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import history, indices, lancedb_features, operations, types
from .model import Feature, FeatureUnavailable

#: The record of a build, under the zoo's root.
RECORD = "zoo.json"

FEATURES: dict[str, Feature] = {
    feature.name: feature
    for module in (indices, operations, history, types, lancedb_features)
    for feature in module.FEATURES
}


class UnknownFeatureError(KeyError):
    """A feature name the zoo does not have."""

    def __str__(self) -> str:
        return f"no zoo feature named {self.args[0]!r} (known: {', '.join(sorted(FEATURES))})"


def cheap_features() -> list[str]:
    """The features of the default test run's subset."""
    return [name for name, feature in FEATURES.items() if feature.cheap]


def feature(name: str) -> Feature:
    try:
        return FEATURES[name]
    except KeyError:
        raise UnknownFeatureError(name) from None


@dataclass(frozen=True)
class Built:
    """One feature's build: its dataset's path, or the reason it was skipped."""

    name: str
    path: Path | None
    unavailable: str | None
    seconds: float

    def to_json(self) -> dict:
        return {
            "path": None if self.path is None else self.path.name,
            "unavailable": self.unavailable,
            "seconds": round(self.seconds, 3),
        }


def build_feature(name: str, root: Path) -> Built:
    """Write feature ``name``'s dataset at ``root/name`` (replacing an earlier
    one and its ``name-*`` siblings)."""
    chosen = feature(name)
    path = root / name
    for old in [path, *root.glob(f"{name}-*")]:
        shutil.rmtree(old, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        chosen.build(path)
    except FeatureUnavailable as exc:
        for partial in [path, *root.glob(f"{name}-*")]:
            shutil.rmtree(partial, ignore_errors=True)
        return Built(name, None, str(exc), time.monotonic() - started)
    return Built(name, path, None, time.monotonic() - started)


def build_zoo(root: Path, names: Iterable[str] | None = None) -> list[Built]:
    """Build ``names`` (every feature by default) under ``root`` and record
    the outcome in ``root/zoo.json`` (merged with an earlier record)."""
    root = Path(root)
    built = [build_feature(name, root) for name in (list(names) if names is not None else list(FEATURES))]
    record = read_record(root)
    record.update({b.name: b.to_json() for b in built})
    (root / RECORD).write_text(json.dumps({"features": record}, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return built


def read_record(root: Path) -> dict[str, dict]:
    """``{feature: {"path", "unavailable", "seconds"}}`` of the zoo at ``root``
    (empty when nothing was built there)."""
    where = Path(root) / RECORD
    if not where.is_file():
        return {}
    return dict(json.loads(where.read_text(encoding="utf-8"))["features"])
