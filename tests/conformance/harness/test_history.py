"""history.jsonl: attempts round-trip through the file, and a line that
breaks the shipped schema is refused naming the file and the line."""

from __future__ import annotations

import json

import pytest

from conformance.harness.history import Attempt, AttemptOutcome, HistoryError, load_history, save_history
from conformance.harness.spec import RunSpec


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


def test_attempts_round_trip(tmp_path):
    attempts = [_attempt(), _attempt("w1-0", outcome=AttemptOutcome.CONFLICT, version=None, error="conflict")]
    save_history(tmp_path / "h.jsonl", attempts)
    assert load_history(tmp_path / "h.jsonl") == attempts


@pytest.mark.parametrize(
    "line, problem",
    [
        ("{not json", "not JSON"),
        (json.dumps({**_attempt().to_json(), "outcome": "maybe"}), "'maybe' is not one of"),
        (json.dumps({k: v for k, v in _attempt().to_json().items() if k != "op_id"}), "'op_id' is a required property"),
        (json.dumps({**_attempt().to_json(), "version": 0}), "less than the minimum"),
    ],
)
def test_a_line_breaking_the_schema_is_refused_with_its_line_number(tmp_path, line, problem):
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(_attempt().to_json()) + "\n" + line + "\n")
    with pytest.raises(HistoryError, match=rf"h\.jsonl:2: .*{problem}"):
        load_history(path)


def test_the_run_spec_saves_and_loads(tmp_path):
    spec = RunSpec("t.lance", {"allow_http": "true"}, "pylance", 8, 10, {"append": 1.0}, 3, True, "v1")
    spec.save(tmp_path / "run.json")
    assert RunSpec.load(tmp_path / "run.json") == spec
