"""history.jsonl: attempts round-trip through the file, and a line that
breaks the shipped schema is refused naming the file and the line."""

from __future__ import annotations

import json

import pytest

from conformance.harness.history import (
    HISTORY_FORMAT,
    Attempt,
    AttemptOutcome,
    HistoryError,
    load_history,
    save_history,
)
from conformance.harness.spec import RUN_FORMAT, RunSpec


def _attempt(op_id="w0-0", **changes) -> Attempt:
    fields = dict(
        op_id=op_id,
        writer=0,
        kind="append",
        args={"ids": [1, 2]},
        read_version=3,
        outcome=AttemptOutcome.ACKNOWLEDGED,
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
    attempts = [_attempt(), _attempt("w1-0", outcome=AttemptOutcome.CONFLICT, version=None, error="conflict")]
    save_history(tmp_path / "h.jsonl", attempts)
    assert load_history(tmp_path / "h.jsonl") == attempts


def test_every_history_line_carries_the_format_version(tmp_path):
    save_history(tmp_path / "h.jsonl", [_attempt(), _attempt("w1-0")])
    lines = [json.loads(line) for line in (tmp_path / "h.jsonl").read_text().splitlines()]
    assert [line["format"] for line in lines] == [HISTORY_FORMAT, HISTORY_FORMAT] and HISTORY_FORMAT == 1
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
    assert json.loads((tmp_path / "run.json").read_text())["format"] == RUN_FORMAT == 1
