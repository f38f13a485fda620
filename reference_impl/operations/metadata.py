"""Changing table config, table metadata, schema metadata and field metadata.

Spec sections: table.proto ``Manifest.config`` and ``Manifest.table_metadata``
(string maps of the table), the schema format page "Field Metadata" and the schema metadata
map, transaction.proto ``UpdateConfig``. Every change is one ``UpdateConfig``
transaction written with the current fields (``config_updates``,
``table_metadata_updates``, ``schema_metadata_updates``,
``field_metadata_updates``, each an ``UpdateMap``), never the deprecated ones
(``upsert_values``, ``delete_keys``, ``schema_metadata``, ``field_metadata``).
That is what pylance 14 writes for ``update_config``, ``update_metadata``,
``update_schema_metadata`` and ``update_field_metadata``.

Reserved config keys. pylance reads some config keys under the ``lance.``
prefix as settings of its own (for example ``lance.auto_cleanup.interval``
makes it delete old versions after later commits). They are stored like any
other key here, because the format gives config keys no meaning; the
reference writer acts on none of them, but a pylance writer committing to the
same dataset afterwards will. Set them knowingly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..errors import InvalidOperationError
from ..transactions import UpdateConfig, UpdateMap, UpdateMapEntry
from .schema_evolution import resolve_path

if TYPE_CHECKING:
    from ..dataset import Dataset

#: Config keys with this prefix may be read by pylance as its own settings.
RESERVED_CONFIG_PREFIX = "lance."


def update_metadata(
    dataset: Dataset,
    *,
    config: Mapping[str, str | None] | None = None,
    table_metadata: Mapping[str, str | None] | None = None,
    schema_metadata: Mapping[str, str | None] | None = None,
    field_metadata: Mapping[str, Mapping[str, str | None]] | None = None,
    replace: bool = False,
) -> Dataset:
    """Commit one ``UpdateConfig`` changing the maps given (None leaves a map
    alone; an empty mapping with ``replace`` empties it).

    Each map is ``{key: value}``; a value of None removes the key. With
    ``replace``, every map given is replaced by its new entries instead of
    merged into. ``field_metadata`` is ``{field path: {key: value}}``, paths
    dotted as in :func:`~reference_impl.operations.schema_evolution.resolve_path`;
    it is recorded by field id. Values are text; schema and field metadata
    store them as UTF-8 bytes.
    """
    if not isinstance(replace, bool):
        raise TypeError("replace must be True or False")
    if not (config is not None or table_metadata is not None or schema_metadata is not None or field_metadata):
        raise InvalidOperationError("nothing to update: give config, table_metadata, schema_metadata or field_metadata")
    operation = UpdateConfig(
        config_updates=update_map(config, replace, "config"),
        table_metadata_updates=update_map(table_metadata, replace, "table metadata"),
        schema_metadata_updates=update_map(schema_metadata, replace, "schema metadata"),
        field_metadata_updates=_field_updates(dataset, field_metadata, replace),
    )
    return dataset.commit(operation)


def update_map(values: Mapping[str, str | None] | None, replace: bool, what: str) -> UpdateMap | None:
    """The ``UpdateMap`` for ``values`` (entries in the given order), or None
    when ``values`` is None."""
    if values is None:
        return None
    if not isinstance(values, Mapping):
        raise TypeError(f"{what} must be a mapping, not {type(values).__name__}")
    entries = []
    for key, value in values.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"{what}: keys are non-empty strings, not {key!r}")
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{what}: the value of {key!r} must be a string or None, not {type(value).__name__}")
        entries.append(UpdateMapEntry(key, value))
    return UpdateMap(entries, replace=replace)


def _field_updates(dataset: Dataset, field_metadata, replace: bool) -> dict[int, UpdateMap]:
    """Field metadata updates by field id (schema format page: "use the field ids
    rather than field names")."""
    if field_metadata is None:
        return {}
    if not isinstance(field_metadata, Mapping):
        raise TypeError("field_metadata must map field paths to mappings")
    updates: dict[int, UpdateMap] = {}
    for path, values in field_metadata.items():
        field = resolve_path(dataset.schema, path)
        if field.id in updates:
            raise InvalidOperationError(f"field {path!r} is named twice")
        update = update_map(values, replace, f"metadata of field {path!r}")
        if update is None:
            raise TypeError(f"metadata of field {path!r} must be a mapping")
        updates[field.id] = update
    return updates


def reserved_config_keys(config: Mapping[str, str]) -> list[str]:
    """The keys of ``config`` under the reserved ``lance.`` prefix."""
    return sorted(k for k in config if k.startswith(RESERVED_CONFIG_PREFIX))


__all__ = ["RESERVED_CONFIG_PREFIX", "reserved_config_keys", "update_map", "update_metadata"]
