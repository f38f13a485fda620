"""The validator's facts about what index segments cover
(conformance/validator/facts/index_contents.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from conformance.validator.context import DatasetView
from conformance.validator.facts import index_contents
from reference_impl.storage.local import LocalStorage

lance = pytest.importorskip("lance")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """pylance 14: three fragments of 100 rows, a BTREE on ``id``, then rows deleted."""
    root = tmp_path_factory.mktemp("covered") / "ds"
    dataset = lance.write_dataset(pa.table({"id": pa.array(range(300))}), root, max_rows_per_file=100)
    dataset.create_scalar_index("id", "BTREE")
    lance.dataset(root).delete("id % 10 = 0")
    return root


def _covered(root, deep: bool):
    dataset = DatasetView(LocalStorage(str(root)), deep=deep)
    view = dataset.version_view(max(dataset.manifest_paths()))
    (index,) = view.reader.indices
    return index_contents.covered_rows(view, index)


def test_covered_rows_are_every_physical_row_with_its_value_address_and_deletion(indexed):
    loaded = _covered(indexed, deep=True)
    assert loaded.ok, loaded.error
    rows = loaded.value
    assert rows.complete and rows.fragment_ids == (0, 1, 2) and rows.gone_fragment_ids == ()
    assert rows.values.to_pylist() == list(range(300))
    expected = [(fragment << 32) | offset for fragment in range(3) for offset in range(100)]
    assert rows.row_addresses.tolist() == expected and np.array_equal(rows.row_ids, rows.row_addresses)
    assert rows.deleted.tolist() == [value % 10 == 0 for value in range(300)]


def test_a_default_run_stops_at_the_sample_and_says_so(indexed, monkeypatch):
    monkeypatch.setattr(index_contents, "SAMPLE_ROWS", 150)
    rows = _covered(indexed, deep=False).value
    assert rows.fragment_ids == (0, 1) and not rows.complete
    assert _covered(indexed, deep=True).value.complete
