"""Deep validation of file format 2.3 (issue 29): a dataset pylance 14
writes at 2.3 draws no finding from ``validate --deep`` and nothing goes
unchecked; corrupting its page buffers, every corruption that changes
pylance's full scan is reported (the corpus property of
``test_deep_corruption``, over every page buffer of one 2.3 file, until the
golden corpus holds 2.3 cases), and at least one of them does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from conformance.validator import Severity, validate
from reference_impl import jsonb
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.storage import LocalStorage

ROWS = 3000
_JSON = pa.field("doc", pa.large_binary(), metadata={b"ARROW:extension:name": b"lance.json"})
#: Bytes overwritten at the start of each page buffer.
SPAN = 64


def _table() -> pa.Table:
    """Several types, with the patterns pylance 14 encodes differently at
    2.3 (runs, ranges, repeats, nulls)."""
    rows = range(ROWS)
    return pa.table(
        {
            "id": pa.array(rows, pa.int64()),
            "small": pa.array([i % 7 for i in rows], pa.int32()),
            "score": pa.array([None if i % 11 == 0 else i / 3 for i in rows], pa.float64()),
            "flag": pa.array([i % 3 == 0 for i in rows]),
            "name": pa.array([f"name-{i % 13}" for i in rows]),
            "text": pa.array([None if i % 5 == 0 else f"row {i} " * (i % 4) for i in rows]),
            "tags": pa.array([[i, i + 1][: i % 3] for i in rows], pa.list_(pa.int32())),
            "point": pa.array([{"x": i, "y": None if i % 2 else str(i)} for i in rows]),
            "vector": pa.array([[float(i), 1.0, -1.0] for i in rows], pa.list_(pa.float32(), 3)),
            "blob": pa.array([bytes([i % 256]) * (i % 9) for i in rows], pa.large_binary()),
        }
    ).append_column(_JSON, pa.array([jsonb.encode(f'{{"i":{i},"s":"v{i % 5}"}}') for i in rows], pa.large_binary()))


@pytest.fixture(scope="module")
def dataset_23(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("v23") / "dataset"
    lance.write_dataset(_table(), root, data_storage_version="2.3", max_rows_per_group=1024)
    return root


def _data_file(root: Path) -> Path:
    (path,) = (root / "data").glob("*.lance")
    return path


def test_pylance_writes_2_3_and_deep_validation_finds_nothing(dataset_23):
    metadata = read_v2_metadata(LocalStorage(dataset_23 / "data"), _data_file(dataset_23).name)
    assert metadata.version == (2, 3)
    report = validate(dataset_23, deep=True)
    assert {"data-page/decodes", "data-page/rows", "data-page/buffers"} <= set(report.rules)
    serious = [f for f in report.findings if f.severity in (Severity.ERROR, Severity.WARNING)]
    assert not serious, serious
    assert not [f for f in report.findings if f.rule.startswith("data-page/")], report.findings


def test_every_corruption_of_a_2_3_page_buffer_that_changes_pylances_scan_is_reported(dataset_23, scanner, tmp_path):
    """Property, over every page buffer of the file: ``\\xff`` over its first
    bytes either draws an error from the deep run or leaves pylance's scan
    as it was; and some such corruption makes pylance's scan fail."""
    name = _data_file(dataset_23).name
    metadata = read_v2_metadata(LocalStorage(dataset_23 / "data"), name)
    spans = [
        (position, min(size, SPAN))
        for column in metadata.columns
        for page in column.pages
        for position, size in zip(page.buffer_offsets, page.buffer_sizes, strict=True)
        if size
    ]
    assert len(spans) > 10
    untouched = scanner.scan(dataset_23, 1)
    assert untouched["ok"] and untouched["rows"] == ROWS
    original = _data_file(dataset_23).read_bytes()
    reported_and_failing = 0
    for position, length in spans:
        root = tmp_path / f"at-{position}"
        shutil.copytree(dataset_23, root)
        data = bytearray(original)
        data[position : position + length] = b"\xff" * length
        (root / "data" / name).write_bytes(bytes(data))
        errors = [f for f in validate(root, deep=True).findings if f.severity is Severity.ERROR]
        scanned = scanner.scan(root, 1)
        if errors:
            reported_and_failing += not scanned["ok"]
        else:
            assert scanned == untouched, f"\\xff * {length} at {position} changes pylance's scan: {scanned}"
        shutil.rmtree(root)
    assert reported_and_failing, "no corruption of a page buffer made pylance's scan fail"


@pytest.mark.parametrize(
    "column, buffer, at, fill, problem",
    [
        # The items chunk 0 of the list column leaves over, in the mini
        # block repetition index (its row counts still add up).
        (6, -1, 8, "67fe4d72", "repetition index entry 0 is"),
        # A delta-coded length of the large binary column's first chunk
        # (2.3's compressed offsets), leaving its last offset short.
        (10, 1, 57, "0b02e308851fb0", "compressed variable-width offsets end at byte"),
        # A mini block chunk header of the int32 column, leaving a value
        # buffer larger than its one bitpacked chunk.
        (
            1,
            1,
            368,
            "d129cb68b623d6dc6e92ff5724a7d8bb09ad4a9855004f46a8c919462004e52b1cbc88",
            "a bitpacked chunk of 388 bytes in a buffer of 392",
        ),
    ],
)
def test_corruptions_the_property_found_are_reported(dataset_23, scanner, tmp_path, column, buffer, at, fill, problem):
    """Regression cases from running the corruption property at length:
    each makes pylance's scan fail, and deep validation names it."""
    name = _data_file(dataset_23).name
    page = read_v2_metadata(LocalStorage(dataset_23 / "data"), name).columns[column].pages[0]
    position = page.buffer_offsets[buffer] + at
    root = tmp_path / "dataset"
    shutil.copytree(dataset_23, root)
    data = bytearray(_data_file(root).read_bytes())
    data[position : position + len(fill) // 2] = bytes.fromhex(fill)
    _data_file(root).write_bytes(bytes(data))
    assert not scanner.scan(root, 1)["ok"]
    errors = [f.message for f in validate(root, deep=True).findings if f.severity is Severity.ERROR]
    assert any(problem in message for message in errors), errors
