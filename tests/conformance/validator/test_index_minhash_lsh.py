"""The MINHASH_LSH rules on datasets pylance 14 maintains through appends,
optimize_indices (delta and merged segments), deletes, updates and
compaction (with and without deferred remap, with and without stable row
ids): no false finding, in a default run and a deep one. A default run says
what its sample left unchecked, and a deep run finds what lies beyond it;
damaged files give findings, never an internal error; a version without
the index never loads the rules' bodies. (The mutations of
conformance/mutations/topics/index_minhash_lsh.py, one per rule, run in
test_mutations.py.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from conformance.fixtures import default_corpus
from conformance.mutations.bases import build_minhash_lsh
from conformance.validator import Severity, validate
from conformance.validator.facts import index_contents
from reference_impl.dataset import Dataset
from tests.index_scenarios import IndexSpec, build_single_index

lance = pytest.importorskip("lance")

TOPIC = "index-minhash-lsh/"
SERIOUS = (Severity.ERROR, Severity.WARNING)
SPEC = IndexSpec("text_minhash", "text", "MINHASHLSH")


def _findings(path, deep: bool):
    return validate(path, all_versions=True, deep=deep).findings


@pytest.mark.parametrize(
    "stable_row_ids",
    # Stable row ids: the index corpus's scenarios walk MINHASH_LSH with them by default; nightly here.
    [False, pytest.param(True, marks=pytest.mark.slow)],
    ids=["addresses", "stable-row-ids"],
)
def test_every_version_pylance_maintains_draws_no_finding(tmp_path, stable_row_ids):
    scenario = build_single_index(tmp_path / "ds", SPEC, {"text": "'updated text'"}, stable_row_ids=stable_row_ids)
    for deep in (False, True):
        findings = _findings(scenario.path, deep)
        serious = [f"{f.rule} v{f.version}: {f.message}" for f in findings if f.severity in SERIOUS]
        assert not serious, serious
        # Unchecked: only the rows under the fragment a deferred remap wrote.
        notes = [f for f in findings if f.rule.startswith(TOPIC)]
        assert all(f.rule == f"{TOPIC}sampled" and "remap was deferred" in f.message for f in notes), notes
        assert bool(notes) is ("compacted_deferred" in scenario.steps)


#: Characters of the texts below: letters of both cases, digits, punctuation, ASCII whitespace.
ALPHABET = "abcXYZ019_-'.,;:!?\t\n  /@"


@pytest.mark.parametrize(
    ("parameters", "unchecked"),
    [
        ({"num_hashes": 64, "num_bands": 8, "shingle_size": 2}, None),
        ({"shingle_size": 1, "tokenizer": {"base_tokenizer": "whitespace", "lower_case": False}}, None),
        ({"num_hashes": 32, "num_bands": 32, "tokenizer": {"max_token_length": 5, "ascii_folding": False}}, None),
        ({"tokenizer": {"stem": True, "remove_stop_words": True}}, "does not tokenize stemming"),
    ],
    ids=["64-hashes-8-bands", "whitespace-cased", "short-tokens", "stemming"],
)
def test_the_parameters_pylance_takes_draw_no_finding(tmp_path, parameters, unchecked):
    """Signatures are recomputed under every tokenizer the project defines
    exactly; with one it does not, the info says they were not."""
    rng = np.random.default_rng(8)
    texts = ["".join(rng.choice(list(ALPHABET), int(rng.integers(0, 60)))) for _ in range(300)]
    texts += ["a" * length + " tail words" for length in range(3, 8)]
    dataset = lance.write_dataset(pa.table({"t": texts}), tmp_path / "ds")
    dataset.create_scalar_index("t", lance.indices.IndexConfig(index_type="minhashlsh", parameters=parameters))
    findings = _findings(tmp_path / "ds", deep=True)
    assert not [f"{f.rule}: {f.message}" for f in findings if f.severity in SERIOUS]
    notes = [f.message for f in findings if f.rule.startswith(TOPIC)]
    assert notes == ([] if unchecked is None else [notes[0]]) and all(unchecked in note for note in notes), notes


def _edit_text(root: Path, old: str, new: str) -> None:
    (holder,) = [p for p in (root / "data").glob("*.lance") if old.encode() in p.read_bytes()]
    holder.write_bytes(holder.read_bytes().replace(old.encode(), new.encode()))


def test_a_default_run_says_what_it_left_unchecked_and_a_deep_run_checks_it(tmp_path, monkeypatch):
    root = tmp_path / "ds"
    build_minhash_lsh(root)
    # Row 210 lies in the second fragment, beyond a sample of the first.
    _edit_text(root, "unique words of row 0210 here", "unique words of row 0211 here")
    monkeypatch.setattr(index_contents, "SAMPLE_ROWS", 100)

    default = [f for f in _findings(root, deep=False) if f.rule.startswith(TOPIC)]
    assert {f.rule for f in default} == {f"{TOPIC}sampled"}, default
    assert all("rows checked in fragments [0] only" in f.message for f in default), [f.message for f in default]

    deep = [f for f in _findings(root, deep=True) if f.rule.startswith(TOPIC)]
    # Once per version listing the index (versions 3 and 4).
    assert [(f.rule, f.version) for f in deep] == [(f"{TOPIC}signatures", version) for version in (3, 4)]
    assert all("fragment 1 offset 10" in f.message for f in deep), [f.message for f in deep]


def test_damaged_index_files_give_findings_not_internal_errors(tmp_path):
    base = tmp_path / "base"
    build_minhash_lsh(base)
    rng = np.random.default_rng(30)
    for attempt in range(4):
        damaged = tmp_path / f"damaged{attempt}"
        damaged.mkdir()
        subprocess.run(["cp", "-r", f"{base}/.", str(damaged)], check=True)
        for index in Dataset.open(damaged).indices:
            for listed in index.files:
                target = damaged / "_indices" / index.uuid / listed.path
                data = bytearray(target.read_bytes())
                for position in rng.integers(0, len(data), 16):
                    data[int(position)] = int(rng.integers(0, 256))
                target.write_bytes(bytes(data))
        found = _findings(damaged, deep=True)
        assert not [f.message for f in found if f.rule == "validator.internal-error"]
        assert [f for f in found if f.rule.startswith(TOPIC) or f.rule.startswith("index/")]


_PROBE = """
import json, sys
from conformance.validator import validate
validate(sys.argv[1], all_versions=True)
print(json.dumps("conformance.validator.index_checks.minhash_lsh" in sys.modules))
"""


def test_a_dataset_without_the_index_does_not_load_the_checks(tmp_path):
    plain = Path(default_corpus()) / "cases" / "pylance-deletion-bitmap" / "dataset"
    with_index = tmp_path / "ds"
    build_minhash_lsh(with_index)
    loaded = {}
    for name, path in (("plain", plain), ("indexed", with_index)):
        done = subprocess.run([sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        loaded[name] = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == {"plain": False, "indexed": True}
