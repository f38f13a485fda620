"""history.jsonl: attempts round-trip through the file, and a line that
breaks the shipped schema is refused naming the file and the line."""

from __future__ import annotations

import json

import pytest

from conformance.drivers.writes import WriteKind, WriteOutcome
from conformance.harness.history import (
    HISTORY_FORMAT,
    Attempt,
    HistoryError,
    load_history,
    save_history,
)
from conformance.harness.spec import RUN_FORMAT, RunSpec


def _attempt(op_id="w0-0", **changes) -> Attempt:
    fields = dict(
        op_id=op_id,
        writer=0,
        kind=WriteKind.APPEND,
        args={"ids": [1, 2]},
        read_version=3,
        outcome=WriteOutcome.ACKNOWLEDGED,
        version=4,
        error=None,
        start=1.5,
        end=2.5,
    )
    fields.update(changes)
    return Attempt(**fields)


def _line_of(attempt: Attempt) -> dict:
    """A history line as save_history writes it: the attempt and the format version."""
    return {"format": HISTORY_FORMAT, **attempt.to_json()}


def test_attempts_round_trip(tmp_path):
    attempts = [_attempt(), _attempt("w1-0", outcome=WriteOutcome.CONFLICT, version=None, error="conflict")]
    save_history(tmp_path / "h.jsonl", attempts)
    assert load_history(tmp_path / "h.jsonl") == attempts


def test_every_history_line_carries_the_format_version(tmp_path):
    save_history(tmp_path / "h.jsonl", [_attempt(), _attempt("w1-0")])
    lines = [json.loads(line) for line in (tmp_path / "h.jsonl").read_text().splitlines()]
    assert [line["format"] for line in lines] == [HISTORY_FORMAT, HISTORY_FORMAT] and HISTORY_FORMAT == 2
    (tmp_path / "old.jsonl").write_text(json.dumps(_attempt().to_json()) + "\n")
    with pytest.raises(HistoryError, match=r"old\.jsonl:1: 'format' is a required property"):
        load_history(tmp_path / "old.jsonl")


@pytest.mark.parametrize(
    "line, problem",
    [
        ("{not json", "not JSON"),
        (json.dumps({**_line_of(_attempt()), "outcome": "maybe"}), "'maybe' is not one of"),
        (json.dumps({k: v for k, v in _line_of(_attempt()).items() if k != "op_id"}), "'op_id' is a required property"),
        (json.dumps({**_line_of(_attempt()), "version": 0}), "less than the minimum"),
    ],
)
def test_a_line_breaking_the_schema_is_refused_with_its_line_number(tmp_path, line, problem):
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(_line_of(_attempt())) + "\n" + line + "\n")
    with pytest.raises(HistoryError, match=rf"h\.jsonl:2: .*{problem}"):
        load_history(path)


def test_the_run_spec_saves_and_loads(tmp_path):
    spec = RunSpec("t.lance", {"allow_http": "true"}, "pylance", 8, 10, {"append": 1.0}, 3, True, "v1")
    spec.save(tmp_path / "run.json")
    assert RunSpec.load(tmp_path / "run.json") == spec
    assert json.loads((tmp_path / "run.json").read_text())["format"] == RUN_FORMAT == 2


def test_format_1_lines_are_read_in_the_vocabulary(tmp_path):
    """A history saved before the write vocabulary: workload kinds such as
    add_column and upsert_race, one config key, outcome indeterminate."""
    old = {**_line_of(_attempt()), "format": 1}
    for key in ("versions", "engine_read_versions", "read_asked"):
        old.pop(key)
    lines = [
        {**old, "op_id": "a", "kind": "add_column", "args": {"name": "c_w0_1"}},
        {**old, "op_id": "b", "kind": "upsert_race", "args": {"ids": [5], "new_ids": [5], "value": 9}},
        {**old, "op_id": "c", "kind": "config", "args": {"key": "k", "value": "v"}, "outcome": "indeterminate"},
    ]
    path = tmp_path / "h.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    a, b, c = load_history(path)
    assert (a.kind, a.args["columns"]) == (WriteKind.ADD_COLUMNS, ["c_w0_1"])
    assert (b.kind, b.args["shared"]) == (WriteKind.UPSERT, True)
    assert (c.kind, c.args["values"], c.outcome) == (WriteKind.CONFIG, [["k", "v"]], WriteOutcome.UNKNOWN)


def test_the_versions_a_writer_said_round_trip(tmp_path):
    attempt = _attempt(version=6, versions=(5, 6), engine_read_versions=(3, 4), read_asked=True)
    save_history(tmp_path / "h.jsonl", [attempt])
    assert load_history(tmp_path / "h.jsonl") == [attempt]
