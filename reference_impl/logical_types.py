"""Logical type strings and the Arrow <-> Lance schema conversion.

The schema format page describes how a Lance schema is stored: a flat,
depth-first list of ``Field`` messages whose ``logical_type`` strings stand for
Arrow data types ("Data Types", "Type Conversion Reference"), whose ids are
assigned depth-first from 0 and then incrementally ("Field IDs"), whose nesting
is carried by ``parent_id`` (-1 at the top level) and whose metadata is a map of
string to bytes ("Field Metadata"). The table overview page ("Unenforced Primary Key") says
how Arrow field metadata marks primary key columns and which columns may be
part of a primary key.

Where the seeds leave room, this module does what pylance 14 records in the
manifests it writes; every such choice is listed in
``docs/spec-discrepancies.md`` under "Schema and logical types". In short:

* pylance writes ``type = PARENT`` (0) for every field, leaves included;
  here every field gets the role the schema format page describes (:func:`field_role`),
  and readers accept either.
* Dictionaries are always written ``...:false`` (never ordered), and view
  types are written as their plain counterparts.
* A fixed-size list keeps a child field only when its element is a struct;
  otherwise the element is described entirely inside the logical type string.
* JSON columns are written ``json`` with extension name ``lance.json``; blob
  columns marked ``lance-encoding:blob`` are kept as they are, or (pylance's
  file version 2.2 and later, ``blob_v2=True`` here) rewritten into the
  ``lance.blob.v2`` struct. The ``blob`` logical type is only ever read.
* A primary key position that parses as an unsigned 32-bit number makes the
  field part of the primary key even without the boolean flag.

Public API
----------
``parse_logical_type`` / ``is_valid_logical_type``
    Grammar of logical type strings, for validators.
``logical_type_of`` / ``arrow_type_of``
    One data type in either direction.
``schema_from_arrow`` / ``schema_to_arrow``
    Whole schemas, including ids, parents, nullability and metadata.
``next_field_id`` / ``add_fields``
    Ids for fields added to an existing schema.
``field_role``, ``primary_key_fields``, ``primary_key_problems``
    Field roles and the unenforced primary key.
"""

# This module is kept so that the names it has always offered still import
# from here; each now lives with its concept: the grammar in type_grammar, the
# Arrow conversion in arrow_schema, field ids and primary keys in schema.
from .arrow_schema import add_fields, arrow_type_of, logical_type_of, schema_from_arrow, schema_to_arrow
from .schema import field_role, next_field_id, primary_key_fields, primary_key_problems
from .type_grammar import (
    ARROW_JSON_EXTENSION,
    BFLOAT16_EXTENSION,
    BLOB_METADATA_KEY,
    BLOB_V2_EXTENSION,
    EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY,
    KNOWN_KINDS,
    LANCE_JSON_EXTENSION,
    MAX_NESTING_DEPTH,
    PRIMARY_KEY_KEY,
    PRIMARY_KEY_POSITION_KEY,
    ParsedType,
    is_valid_logical_type,
    parse_logical_type,
)

__all__ = [
    "ARROW_JSON_EXTENSION",
    "BFLOAT16_EXTENSION",
    "BLOB_METADATA_KEY",
    "BLOB_V2_EXTENSION",
    "EXTENSION_METADATA_KEY",
    "EXTENSION_NAME_KEY",
    "KNOWN_KINDS",
    "LANCE_JSON_EXTENSION",
    "MAX_NESTING_DEPTH",
    "PRIMARY_KEY_KEY",
    "PRIMARY_KEY_POSITION_KEY",
    "ParsedType",
    "add_fields",
    "arrow_type_of",
    "field_role",
    "is_valid_logical_type",
    "logical_type_of",
    "next_field_id",
    "parse_logical_type",
    "primary_key_fields",
    "primary_key_problems",
    "schema_from_arrow",
    "schema_to_arrow",
]
