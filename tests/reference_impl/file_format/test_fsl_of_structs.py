"""A fixed-size list of structs in a 2.2 file written by pylance 14.

pylance stores the struct's leaves without a list layer: their pages count
the list's items (rows times the dimension), not the file's rows. The
encoding page ("Fixed Size List") says a fixed-size list of a structural
type "should" be treated as a variable-size list, but the file container
lets every column hold its own number of items and the schema's dimension
says how items make rows, so the structure is not forbidden: the reference
reads it and the validator accepts it. pylance reads the column alone but
refuses it together with any other column; that is recorded as a pylance
bug (docs/spec-discrepancies.md, the last section) and pinned here, so that
the day pylance reads it the test fails and the record is updated.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from google.protobuf import any_pb2

from conformance.validator import Severity, validate
from reference_impl.dataset import Dataset
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.storage import LocalStorage
from reference_impl.wire import encodings_v2_1_pb2 as enc

lance = pytest.importorskip("lance")

POINT = pa.struct([("x", pa.int32()), ("y", pa.float32())])


@pytest.fixture
def points(tmp_path):
    pairs = [[{"x": 2 * i, "y": i / 2}, {"x": 2 * i + 1, "y": -i / 2}] for i in range(3)]
    table = pa.table({"id": pa.array([10, 11, 12], pa.int64()), "pts": pa.array(pairs, pa.list_(POINT, 2))})
    root = tmp_path / "points"
    lance.write_dataset(table, root, data_storage_version="2.2")
    return root, table


def test_the_leaves_count_items_not_rows(points):
    root, _ = points
    (fragment,) = Dataset.open(root).fragments
    (data_file,) = fragment.files
    metadata = read_v2_metadata(LocalStorage(root), f"data/{data_file.path}")
    lengths = [sum(page.length for page in column.pages) for column in metadata.columns]
    assert metadata.num_rows == 3
    assert lengths == [3, 6, 6]
    for column in metadata.columns[1:]:
        for page in column.pages:
            layout = enc.PageLayout.FromString(any_pb2.Any.FromString(page.encoding.direct.encoding).value)
            layers = layout.mini_block_layout.layers
            assert enc.RepDefLayer.REPDEF_ALL_VALID_LIST not in layers, "a list layer: pylance changed its writer"


def test_pylance_reads_the_column_alone_but_not_with_another(points):
    """The pinned pylance 14 bug: when this fails, pylance reads the file,
    and docs/spec-discrepancies.md must say so."""
    root, table = points
    dataset = lance.dataset(root)
    assert dataset.to_table(columns=["pts"]).column("pts").to_pylist() == table.column("pts").to_pylist()
    with pytest.raises(pa.ArrowInvalid, match="cannot read columns of differing lengths together"):
        dataset.to_table()


def test_the_reference_reads_every_row_and_the_validator_accepts_it(points):
    root, table = points
    assert Dataset.open(root).to_table().to_pylist() == table.to_pylist()
    report = validate(root, all_versions=True)
    assert not [f for f in report.findings if f.severity in (Severity.ERROR, Severity.WARNING)]
