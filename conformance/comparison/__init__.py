"""Comparison of rows by meaning: two Arrow tables compared at the level of the
schema format's logical types, not of their Arrow representation.

A reader may hand back the rows of a dataset in an Arrow shape of its own: a
SQL engine drops the not-null flag, a JavaScript one names list children
``element``, another returns ``list`` for ``large_list``, a dictionary
decoded, a ``halffloat`` widened to ``double``. None of that changes a value,
so none of it fails: each such representation difference is an
:class:`Observation` naming the column, the two representations and the
requirement it concerns. A value that differs, or that the reader's type
cannot hold exactly (a narrowed integer, a rounded float, a lost time zone),
is a difference, and differences fail.

What counts as representation (kind: requirement it concerns):

* ``nullability``: the nullable flag of a field (``schema.non-nullable-has-no-nulls``);
* ``child-name``: the name of a list's or map's child fields
  (``schema.list-element-child``, ``schema.map-children``,
  ``schema.fixed-size-list-format``);
* ``offset-width``: ``large_string``/``string``, ``large_binary``/``binary``,
  ``large_list``/``list`` (``schema.large-offset-types``);
* ``view-layout``: Arrow's view layouts of strings, binaries and lists
  (``schema.arrow-type-conversion``);
* ``dictionary``: dictionary-encoded against plain, or another index type
  (``schema.dictionary-format``);
* ``wider-type``: a type holding every value of the expected one exactly: a
  wider integer, a float with enough mantissa, a wider float, a decimal with as
  many integer and fraction digits, a finer unit of the same time zone
  (``schema.timestamp-format``, ``schema.date-time-units``,
  ``schema.decimal-format``, otherwise ``schema.arrow-type-conversion``),
  and ``lance.bfloat16`` values read as float32 or float64
  (``schema.bfloat16-in-fixed-size-list``);
* ``extension``: an Arrow extension type against its storage type
  (``schema.extension-metadata-namespace``);
* ``blob-payload``: a blob v2 column in its logical struct shape against its
  values, compared on the struct's ``data`` bytes (``blob.payload-as-large-binary``,
  :mod:`.blobs`); a blob column's stored descriptors hold no bytes and never
  compare with values.

Field and schema metadata are ignored. Column and struct field order is part of
the schema (reordering columns is a schema evolution operation with a meaning of
its own, schema format page, "Schema Evolution"), so a different order is a
difference. NaN equals NaN; a null list differs from an empty one.

Columns are compared whole with pyarrow and numpy; rows are only visited to
describe the first few differences of each column.

Public API
----------
:func:`compare_tables`
    ``compare_tables(expected, actual) -> TableComparison``.
:class:`TableComparison`
    ``differences`` (messages, they fail), ``observations``, ``equal``.
:class:`Observation`, :class:`ObservationKind`
    One representation difference.
"""

from .observations import Observation, ObservationKind
from .tables import MAX_ROWS_SHOWN, TableComparison, compare_tables

__all__ = ["MAX_ROWS_SHOWN", "Observation", "ObservationKind", "TableComparison", "compare_tables"]
