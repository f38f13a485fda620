"""Model-based tests of the reference writer: a Hypothesis
``RuleBasedStateMachine`` drives a dataset through random sequences of
create, append, delete, update, add/drop columns, compact, restore,
overwrite and tag, and keeps a plain in-memory model of every version.

The model of a version is its visible rows in scan order (dicts, with
``_rowid`` when the dataset uses stable row ids) and its schema (column
names and Arrow types). Model rules, from the operations' docstrings and
the older table format page (move-stable row ids):

* append adds rows after all others, with the next row ids;
* delete drops the rows its predicate selects (null selects nothing);
* update moves the selected rows, with their new values and *new* row ids
  (in scan order), after all others;
* add_columns computes a column for every row; drop_columns removes one;
* compaction keeps every row and its row id, and places the rewritten rows
  after the others: the scan order is a stable partition of the old one;
* restore(n) commits a new version with the content of version n; the
  next row id does not go back;
* overwrite replaces schema and rows; its rows take the next row ids;
* a tag names a version and commits nothing;
* a stale writer (a handle kept at an older version while others committed)
  that appends or deletes either commits, and its write applies to the
  latest rows (appended values survive in the columns that are still the
  same fields; the rows it deletes are the ones its predicate selected in
  the version it read), or fails with a commit conflict naming a later
  version whose transaction ``decide`` says it conflicts with.

Invariants checked after every step, for every version the step committed:
the reference reader sees the model's rows and schema; versions are 1..latest
with no gap; a fragment id new in a version was never used before (it is
above every fragment id seen so far, and at most ``max_fragment_id``, so
compaction's reserved ids count as fresh), and a fragment id seen before
still names the same fragment (same physical rows, sharing a data file);
``max_fragment_id`` and ``next_row_id`` never decrease, and ``next_row_id``
is the model's; the validator finds no error and no warning on the latest
version. The second machine also reads every step with pylance.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from dataclasses import field as dc_field
from itertools import pairwise
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from conformance.validator import Severity, validate
from reference_impl.arrow_schema import schema_to_arrow
from reference_impl.commit.conflicts import Outcome, decide
from reference_impl.dataset import Dataset
from reference_impl.errors import CommitConflictError
from reference_impl.transactions import read_transaction_file
from tests.race_checks import rows_both_delete

lance = pytest.importorskip("lance")

KEY = "id"
INT = pa.int64()
STR = pa.string()
ROW_ID = "_rowid"

int_values = st.one_of(st.none(), st.integers(-20, 20))
str_values = st.one_of(st.none(), st.sampled_from(["a", "b", "c", ""]))
COMPARISONS = {
    "<": (lambda a, b: a < b, lambda f, t: f < t),
    ">=": (lambda a, b: a >= b, lambda f, t: f >= t),
    "==": (lambda a, b: a == b, lambda f, t: f == t),
}


@dataclass
class Snapshot:
    """The model of one version: visible rows in scan order, and the schema
    as ``[(name, arrow type)]`` (the key column first)."""

    rows: list[dict]
    schema: list[tuple[str, pa.DataType]]


@dataclass
class Model:
    """The whole table history as plain Python values."""

    stable: bool
    rows: list[dict] = dc_field(default_factory=list)
    schema: list[tuple[str, pa.DataType]] = dc_field(default_factory=list)
    versions: dict[int, Snapshot] = dc_field(default_factory=dict)
    next_row_id: int = 0
    next_key: int = 0

    @property
    def latest(self) -> int:
        return max(self.versions, default=0)

    def commit(self) -> None:
        """Record the current rows and schema as the next version."""
        self.versions[self.latest + 1] = Snapshot([dict(r) for r in self.rows], list(self.schema))

    def with_row_ids(self, rows: list[dict]) -> list[dict]:
        """``rows`` with the next row ids, when the dataset uses stable row ids."""
        if not self.stable:
            return rows
        out = []
        for row in rows:
            out.append(dict(row, **{ROW_ID: self.next_row_id}))
            self.next_row_id += 1
        return out

    def columns(self, data_type=None, *, key: bool = True) -> list[str]:
        return [n for n, t in self.schema if (data_type is None or t == data_type) and (key or n != KEY)]

    def arrow_schema(self, schema=None) -> pa.Schema:
        return pa.schema([pa.field(n, t, nullable=n != KEY) for n, t in (schema or self.schema)])


def without_row_ids(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != ROW_ID} for r in rows]


def to_table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    return pa.table({f.name: [r[f.name] for r in rows] for f in schema}, schema=schema)


def is_stable_partition(before: list[dict], after: list[dict]) -> bool:
    """``after`` holds the rows of ``before`` (equal dicts, keys unique), as
    the rows that stayed in their order followed by the rows that moved in
    their order: mapped to positions in ``before``, at most one descent."""
    position = {r[KEY]: i for i, r in enumerate(before)}
    if len(after) != len(before) or any(r[KEY] not in position or before[position[r[KEY]]] != r for r in after):
        return False
    order = [position[r[KEY]] for r in after]
    return len(set(order)) == len(order) and sum(a > b for a, b in pairwise(order)) <= 1


def scan_rows(table: pa.Table) -> list[dict]:
    return table.to_pylist()


class ReferenceMachine(RuleBasedStateMachine):
    """The reference implementation against the model (see module docstring)."""

    #: Also read every committed version with pylance.
    check_pylance = False

    def __init__(self):
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="lance-model-"))
        self.path = self.tmp / "ds"
        self.model: Model | None = None
        self.checked = 0  # versions already compared with the model
        self.max_fragment_id = -1  # of the last version checked
        self.fragment_files: dict[int, set[str]] = {}
        self.fragment_rows: dict[int, int] = {}
        self.column_counter = 0
        self.tags: dict[str, int] = {}

    def teardown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers ------------------------------------------------------------------

    def open(self, version: int | None = None) -> Dataset:
        return Dataset.open(self.path, version)

    def new_rows(self, data, count: int, schema=None) -> list[dict]:
        """``count`` rows with fresh keys and drawn values for ``schema``."""
        rows = []
        for _ in range(count):
            row = {}
            for name, data_type in schema or self.model.schema:
                if name == KEY:
                    row[name] = self.model.next_key
                    self.model.next_key += 1
                else:
                    row[name] = data.draw(int_values if data_type == INT else str_values)
            rows.append(row)
        return rows

    def predicate(self, data):
        """A comparison of an int column with a constant: the expression and
        the model's reading of it (a null value selects nothing)."""
        column = data.draw(st.sampled_from(self.model.columns(INT)))
        op = data.draw(st.sampled_from(sorted(COMPARISONS)))
        threshold = data.draw(st.integers(-20, self.model.next_key + 1))
        model_op, arrow_op = COMPARISONS[op]
        expression = arrow_op(pc.field(column), threshold)

        def selects(row: dict) -> bool:
            return row[column] is not None and model_op(row[column], threshold)

        return expression, selects

    # -- rules --------------------------------------------------------------------

    @initialize(
        stable=st.booleans(),
        naming=st.sampled_from(["v1", "v2"]),
        count=st.integers(0, 8),
        per_file=st.integers(1, 4),
        data=st.data(),
    )
    def create(self, stable, naming, count, per_file, data):
        self.model = Model(stable=stable, schema=[(KEY, INT), ("v", INT), ("s", STR)])
        rows = self.new_rows(data, count)
        table = to_table(rows, self.model.arrow_schema())
        Dataset.create(self.path, table, manifest_naming=naming, stable_row_ids=stable, max_rows_per_file=per_file)
        self.model.rows = self.model.with_row_ids(rows)
        self.model.commit()

    @rule(count=st.integers(0, 6), per_file=st.integers(1, 4), data=st.data())
    def append(self, count, per_file, data):
        rows = self.new_rows(data, count)
        self.open().append(to_table(rows, self.model.arrow_schema()), max_rows_per_file=per_file)
        self.model.rows += self.model.with_row_ids(rows)
        self.model.commit()

    @rule(data=st.data())
    def delete(self, data):
        expression, selects = self.predicate(data)
        self.open().delete(expression)
        self.model.rows = [r for r in self.model.rows if not selects(r)]
        self.model.commit()

    @precondition(lambda self: len(self.model.schema) > 1)
    @rule(data=st.data())
    def update(self, data):
        column = data.draw(st.sampled_from(self.model.columns(key=False)))
        data_type = dict(self.model.schema)[column]
        if data_type == INT and data.draw(st.booleans()):
            step = data.draw(st.integers(-3, 3))
            value = pc.field(column) + step

            def new_value(row):
                return None if row[column] is None else row[column] + step
        else:
            constant = data.draw(int_values if data_type == INT else str_values)
            value = constant

            def new_value(row):
                return constant

        if data.draw(st.booleans()):
            where, selects = self.predicate(data)
        else:
            where, selects = None, lambda row: True
        self.open().update({column: value}, where)
        kept = [r for r in self.model.rows if not selects(r)]
        moved = [dict(r, **{column: new_value(r)}) for r in self.model.rows if selects(r)]
        self.model.rows = kept + self.model.with_row_ids(without_row_ids(moved))
        self.model.commit()

    @rule(scale=st.integers(-2, 3), offset=st.integers(-5, 5), data=st.data())
    def add_column(self, scale, offset, data):
        source = data.draw(st.sampled_from(self.model.columns(INT)))
        name = f"c{self.column_counter}"
        self.column_counter += 1
        self.open().add_columns({pa.field(name, INT): pc.field(source) * scale + offset})
        for row in self.model.rows:
            row[name] = None if row[source] is None else row[source] * scale + offset
        self.model.schema.append((name, INT))
        self.model.commit()

    @precondition(lambda self: len(self.model.schema) > 1)
    @rule(data=st.data())
    def drop_column(self, data):
        name = data.draw(st.sampled_from(self.model.columns(key=False)))
        self.open().drop_columns([name])
        self.model.schema = [(n, t) for n, t in self.model.schema if n != name]
        for row in self.model.rows:
            del row[name]
        self.model.commit()

    @rule(target_rows=st.integers(1, 8), materialize=st.booleans())
    def compact(self, target_rows, materialize):
        before = self.open()
        after = before.compact(target_rows_per_fragment=target_rows, materialize_deletions=materialize)
        committed = after.version - before.version
        assert committed in (0, 1, 2), f"compaction committed {committed} versions"
        if committed == 0:
            return
        for _ in range(committed - 1):  # ReserveFragments: content unchanged
            self.model.commit()
        rows = scan_rows(after.to_table(with_row_id=self.model.stable))
        assert is_stable_partition(self.model.rows, rows), (
            "compaction must keep every row (and row id) and only move rewritten rows after the others"
        )
        self.model.rows = rows
        self.model.commit()

    @rule(data=st.data())
    def restore(self, data):
        version = data.draw(st.integers(1, self.model.latest))
        self.open().restore(version)
        old = self.model.versions[version]
        self.model.rows = [dict(r) for r in old.rows]
        self.model.schema = list(old.schema)
        self.model.commit()

    @rule(
        extra=st.lists(st.sampled_from([("v", INT), ("w", INT), ("s", STR)]), unique=True),
        count=st.integers(0, 6),
        per_file=st.integers(1, 4),
        data=st.data(),
    )
    def overwrite(self, extra, count, per_file, data):
        schema = [(KEY, INT), *extra]
        rows = self.new_rows(data, count, schema)
        self.open().overwrite(to_table(rows, self.model.arrow_schema(schema)), max_rows_per_file=per_file)
        self.model.schema = schema
        self.model.rows = self.model.with_row_ids(rows)
        self.model.commit()

    @rule(data=st.data())
    def tag(self, data):
        version = data.draw(st.integers(1, self.model.latest))
        name = f"tag-{len(self.tags)}"
        self.open().create_tag(name, version)
        self.tags[name] = version
        found = self.open().tags()
        assert {n: t.version for n, t in found.items()} == self.tags
        assert found[name].branch is None
        if self.check_pylance:
            listed = lance.dataset(str(self.path)).tags.list()
            assert {n: t["version"] for n, t in listed.items()} == self.tags

    @precondition(lambda self: self.model is not None and self.model.latest > 1)
    @rule(back=st.integers(1, 3), append=st.booleans(), data=st.data())
    def stale_writer(self, back, append, data):
        """A concurrent writer: it opened an older version and kept the
        handle while others committed, then appends or deletes through it.
        Either the commit goes through, rebased onto every version since,
        and the model applies the write to the latest rows; or it fails with
        the commit conflict that conflict resolution requires, and nothing
        changes."""
        read_version = max(1, self.model.latest - back)
        stale = self.open(read_version)
        snapshot = self.model.versions[read_version]
        if append:
            rows = self.new_rows(data, data.draw(st.integers(1, 4)), snapshot.schema)
            # A column holds what was written only if it is still the same
            # field (same id) in the latest schema; otherwise it reads as null.
            read_ids = {f.name: f.id for f in stale.schema.top_level()}
            latest_ids = {f.name: f.id for f in self.open().schema.top_level()}

            def write():
                stale.append(to_table(rows, self.model.arrow_schema(snapshot.schema)))

            def apply():
                fitted = [
                    {n: row.get(n) if read_ids.get(n) == latest_ids.get(n) else None for n, _ in self.model.schema}
                    for row in rows
                ]
                self.model.rows += self.model.with_row_ids(fitted)
        else:
            column = data.draw(st.sampled_from([n for n, t in snapshot.schema if t == INT]))
            op = data.draw(st.sampled_from(sorted(COMPARISONS)))
            threshold = data.draw(st.integers(-20, self.model.next_key + 1))
            model_op, arrow_op = COMPARISONS[op]
            doomed = {r[KEY] for r in snapshot.rows if r[column] is not None and model_op(r[column], threshold)}

            def write():
                stale.delete(arrow_op(pc.field(column), threshold))

            def apply():
                self.model.rows = [r for r in self.model.rows if r[KEY] not in doomed]

        before = set(stale.storage.list_dir("_transactions"))
        try:
            write()
        except CommitConflictError as exc:
            written = sorted(set(stale.storage.list_dir("_transactions")) - before)
            self.check_conflict_was_required(stale, written, exc)
            return
        apply()
        self.model.commit()

    def check_conflict_was_required(self, stale: Dataset, written: list[str], exc: CommitConflictError) -> None:
        """``exc`` names a version committed after the one ``stale`` read,
        and ``decide`` says the transaction the failed write recorded (the
        transaction file it wrote before it lost, ``written``) conflicts with
        that version's."""
        assert exc.version is not None and stale.version < exc.version <= self.model.latest, exc
        assert len(written) == 1, f"the failed write left transaction files {written}"
        mine = read_transaction_file(stale.storage, written[0])
        theirs = self.open(exc.version)
        other = read_transaction_file(theirs.storage, theirs.manifest.transaction_file)
        assert exc.operation == other.operation_name, exc
        rows = rows_both_delete(stale, mine.operation, theirs)
        decision = decide(mine, other, read=stale.manifest, rows=rows)
        assert decision.outcome in (Outcome.RETRYABLE, Outcome.INCOMPATIBLE), (exc, decision)
        assert exc.retryable == (decision.outcome is Outcome.RETRYABLE), (exc, decision)

    # -- invariants ------------------------------------------------------------------

    @invariant()
    def every_new_version_matches_the_model(self):
        if self.model is None:
            return
        latest = self.open()
        assert latest.version == self.model.latest
        assert latest.versions() == list(range(1, latest.version + 1)), "versions must be gapless from 1"
        for version in range(self.checked + 1, latest.version + 1):
            self.check_version(version)
        self.checked = latest.version
        problems = [f"{f.rule}: {f.message}" for f in validate(self.path).findings if f.severity is not Severity.INFO]
        assert not problems, "the validator objects:\n" + "\n".join(problems)

    def check_version(self, version: int) -> None:
        ds = self.open(version)
        expected = self.model.versions[version]
        actual_schema = schema_to_arrow(ds.schema)
        assert [(f.name, f.type) for f in actual_schema] == expected.schema
        assert scan_rows(ds.to_table(with_row_id=self.model.stable)) == expected.rows, f"v{version} rows"

        manifest = ds.manifest
        top = -1 if manifest.max_fragment_id is None else manifest.max_fragment_id
        assert top >= self.max_fragment_id, "max_fragment_id went back"
        expected_next = self.model.next_row_id if version == self.model.latest else None
        if self.model.stable:
            if expected_next is not None:
                assert manifest.next_row_id == expected_next
        for fragment in ds.fragments:
            assert fragment.id <= top, f"fragment {fragment.id} above max_fragment_id {top}"
            paths = {f.path for f in fragment.files}
            if fragment.id in self.fragment_files:
                assert paths & self.fragment_files[fragment.id], f"fragment id {fragment.id} reused"
                assert self.fragment_rows[fragment.id] == fragment.physical_rows, f"fragment id {fragment.id} reused"
                self.fragment_files[fragment.id] |= paths
            else:
                highest = max(self.fragment_files, default=-1)
                assert fragment.id > highest, f"new fragment {fragment.id} not above every id used before ({highest})"
                self.fragment_files[fragment.id] = paths
                self.fragment_rows[fragment.id] = fragment.physical_rows
        self.max_fragment_id = top
        if version > 1:
            previous = self.open(version - 1).manifest
            assert manifest.next_row_id >= previous.next_row_id, "next_row_id went back"

        if self.check_pylance:
            theirs = lance.dataset(str(self.path), version=version)
            assert [(f.name, f.type) for f in theirs.schema] == expected.schema, f"pylance v{version} schema"
            rows = theirs.to_table(with_row_id=self.model.stable).to_pylist()
            assert rows == expected.rows, f"pylance v{version} rows"


class PylanceMachine(ReferenceMachine):
    """The same machine; pylance must also read every version as the model does."""

    check_pylance = True


#: Scaled from the profile: under ``ci`` 25 runs of up to 30 steps, and 12
#: runs of up to 20 steps with pylance (about 25 s together).
_BASE = settings.default.max_examples
TestReferenceAgainstModel = ReferenceMachine.TestCase
TestReferenceAgainstModel.settings = settings(settings.default, max_examples=max(2, _BASE // 2), stateful_step_count=30)
TestPylanceAgainstModel = PylanceMachine.TestCase
TestPylanceAgainstModel.settings = settings(settings.default, max_examples=max(1, _BASE // 4), stateful_step_count=20)
