"""The text index rules (conformance/validator/rules/index_text.py) on datasets
pylance 14 writes: no false finding through appends, deletes,
optimize_indices, compaction (remapped at once or deferred) and stable row
ids; the info rules say what went unchecked; corrupt index bytes give
findings, never a traceback. (Each error rule's mutation is in
test_mutations.py.)"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pytest

from conformance.mutations.edit import edit_manifest
from conformance.validator import Severity, validate
from conformance.validator.facts import index_contents
from reference_impl.dataset import Dataset

lance = pytest.importorskip("lance")

TOPICS = ("index-inverted/", "index-ngram/", "index-json/")
WORDS = ["Alpha", "beta", "gamma,", "x1", "zeta!", "th-eta", "Kappa", "lam", "common", "naïve"]


def _rows(start: int, count: int) -> pa.Table:
    rng = random.Random(start)
    ids = list(range(start, start + count))
    text = [None if i % 19 == 0 else " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 8))) for i in ids]
    docs = [None if i % 7 == 0 else json.dumps({"a": i % 5, "s": f"v{i % 3}"}) for i in ids]
    return pa.table({"id": ids, "text": text, "doc": pa.array(docs, pa.json_(pa.utf8()))})


def _build(path: Path, *, stable: bool = False, compact: str | None = None) -> Path:
    dataset = lance.write_dataset(_rows(0, 300), path, max_rows_per_file=100, enable_stable_row_ids=stable)
    dataset.create_scalar_index(
        "text", "INVERTED", name="exact", with_position=True, stem=False, remove_stop_words=False
    )
    dataset.create_scalar_index("text", "INVERTED", name="stemmed")
    dataset.create_scalar_index("text", "NGRAM", name="trigrams")
    if not stable:  # pylance 14 refuses JSON-wrapped BTREE indices with stable row ids
        config = lance.indices.IndexConfig(index_type="json", parameters={"target_index_type": "btree", "path": "a"})
        dataset.create_scalar_index("doc", config, name="doc_a")
    dataset = lance.write_dataset(_rows(300, 100), path, mode="append", max_rows_per_file=50)
    dataset.delete("id % 10 = 4")
    dataset.optimize.optimize_indices()
    dataset.delete("id >= 150 AND id < 160")
    if compact == "remap":
        dataset.optimize.compact_files(target_rows_per_fragment=1000)
    elif compact == "deferred":
        dataset.optimize.compact_files(target_rows_per_fragment=1000, defer_index_remap=True)
    return path


def _text_findings(path: Path, deep: bool = False):
    return [f for f in validate(path, all_versions=True, deep=deep).findings if f.rule.startswith(TOPICS)]


@pytest.mark.parametrize(
    "variant",
    [{}, {"stable": True}, {"compact": "remap"}, {"compact": "deferred"}],
    ids=["appends-deletes-optimize", "stable-row-ids", "compacted", "compacted-deferred-remap"],
)
def test_pylance_written_text_indices_give_no_false_finding(tmp_path, variant):
    findings = _text_findings(_build(tmp_path / "ds", **variant))
    serious = [f for f in findings if f.severity is not Severity.INFO]
    assert not serious, serious
    # The stemming index's postings are not compared, and the rule says so.
    assert any(f.rule == "index-inverted/unchecked" and "stemming" in f.message for f in findings)


def test_a_default_run_says_which_fragments_it_compared(tmp_path, monkeypatch):
    path = _build(tmp_path / "ds")
    monkeypatch.setattr(index_contents, "SAMPLE_ROWS", 100)
    sampled = [f for f in _text_findings(path) if "validate --deep" in f.message]
    assert {f.rule for f in sampled} == {"index-inverted/unchecked", "index-ngram/unchecked", "index-json/unchecked"}
    deep = [f for f in _text_findings(path, deep=True) if "validate --deep" in f.message]
    assert not deep


def test_corrupt_index_bytes_give_findings_not_tracebacks(tmp_path):
    """Every text index file of the latest version with a stretch of bytes
    overwritten (its size kept): validation reports errors and finishes."""
    path = _build(tmp_path / "ds")
    rng = random.Random(30)
    for index in Dataset.open(str(path)).indices:
        for file in (path / "_indices" / index.uuid).iterdir():
            data = bytearray(file.read_bytes())
            start = rng.randrange(len(data) // 4, len(data) // 2)
            data[start : start + 64] = rng.randbytes(64)
            file.write_bytes(bytes(data))
    findings = validate(path, all_versions=True).findings
    assert any(f.severity is Severity.ERROR and f.rule.startswith(TOPICS) for f in findings)


def test_a_segment_of_an_unknown_version_is_skipped_and_said_so(tmp_path):
    """index.md, "Index Compatibility": a reader skips a segment whose
    index_version is newer than it reads; the validator checks nothing
    inside it and says so."""
    path = _build(tmp_path / "ds")

    def newer(manifest_file):
        for entry in manifest_file.indices or []:
            if entry.name in ("exact", "trigrams"):
                entry.index_version = 99

    edit_manifest(path, newer)
    findings = [f for f in _text_findings(path) if f.version == lance.dataset(path).version]
    assert not [f for f in findings if f.severity is not Severity.INFO]
    skipped = {f.rule for f in findings if "is skipped: unknown version 99" in f.message}
    assert skipped == {"index-inverted/unchecked", "index-ngram/unchecked"}
