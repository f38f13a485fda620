"""Reading files concurrently changes nothing but the time: the validator's
report with its reads in a pool of threads is the one it gives reading them
one after another (same findings, same order), and across ``--all-versions`` each data
file footer is read once, however many versions list the file.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable

import pyarrow as pa
import pytest

from conformance.fixtures import default_corpus
from conformance.mutations import all_mutations, copy_dataset
from conformance.validator import validate
from conformance.validator.facts import data_files as data_file_facts

CASES = sorted(path for path in (default_corpus() / "cases").glob("*/dataset") if path.is_dir())
#: The mutations of the rules whose facts are read from files in the pool:
#: data file footers, deletion files, index files, and files under other base paths.
FILE_MUTATIONS = [m for m in all_mutations() if m.rule.split("/")[0] in ("data-file", "deletion", "base-path", "index")]


def _report(root, threads: int, store=None) -> dict:
    return validate(root, all_versions=True, io_threads=threads, manifest_store=store).to_json()


@pytest.mark.parametrize("root", CASES, ids=[path.parent.name for path in CASES])
def test_golden_case_reports_the_same_serial_and_parallel(root):
    serial = _report(root, 1)
    assert _report(root, 8) == serial


@pytest.mark.parametrize("case", FILE_MUTATIONS, ids=[m.id for m in FILE_MUTATIONS])
def test_mutated_dataset_reports_the_same_serial_and_parallel(case, base_datasets, tmp_path):
    root = copy_dataset(base_datasets[case.base], tmp_path / "ds")
    store = case.store_for(root)
    case.apply(root)
    serial = _report(root, 1, store)
    assert any(f["rule"] == case.rule for f in serial["findings"]), "the mutation is not reported at all"
    assert _report(root, 8, store) == serial


def _appended(tmp_path, versions: int):
    """A dataset of ``versions`` one-row appends by pylance (one data file each)."""
    import lance

    root = tmp_path / "ds"
    for number in range(versions):
        lance.write_dataset(pa.table({"id": [number]}), root, mode="append" if number else "create")
    return root


def _watch(monkeypatch, name: str, seen: Callable[[object], None]) -> None:
    """Call ``seen(located)`` each time the data file facts module calls its ``name``."""
    original = getattr(data_file_facts, name)

    def watched(located):
        seen(located)
        return original(located)

    monkeypatch.setattr(data_file_facts, name, watched)


def test_a_file_many_versions_list_is_read_once(tmp_path, monkeypatch):
    """Twenty appends: version v lists v data files, 210 in all, of which 20
    are distinct; each footer is read once."""
    root = _appended(tmp_path, 20)
    reads: Counter[str] = Counter()
    _watch(monkeypatch, "_read_facts", lambda located: reads.update([located.key]))
    report = validate(root, all_versions=True, io_threads=4)
    assert len(report.versions) == 20
    assert len(reads) == 20 and set(reads.values()) == {1}, reads


def test_every_footer_is_read_in_the_pool(tmp_path, monkeypatch):
    """With more than one I/O thread, every data file footer is read by the
    pool, none one after another in the validating thread (on an object store
    a footer read waits for a request: the whole point of the pool)."""
    root = _appended(tmp_path, 6)
    readers: list[str] = []
    _watch(monkeypatch, "_read_facts", lambda located: readers.append(threading.current_thread().name))
    validate(root, io_threads=4)
    assert len(readers) == 6
    assert all(name.startswith("validator-io") for name in readers), readers


def test_io_threads_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="io_threads"):
        validate(tmp_path, io_threads=0)


def test_damaged_files_report_the_same_serial_and_parallel(base_datasets, tmp_path):
    """Data files truncated, filled with garbage, replaced by a named pipe or
    removed: the reads that fail in the pool give the findings the serial
    reads give, in the same order, and nothing blocks on the pipe."""
    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    files = sorted((root / "data").iterdir())
    assert len(files) >= 4
    files[0].write_bytes(files[0].read_bytes()[:10])
    files[1].write_bytes(b"\xff" * 200)
    files[2].unlink()
    os.mkfifo(files[2])
    files[3].unlink()
    serial = _report(root, 1)
    assert {f["rule"] for f in serial["findings"] if f["severity"] == "error"}, "the damage is not reported"
    assert _report(root, 8) == serial
