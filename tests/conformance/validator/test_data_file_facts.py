"""Where data files resolve: the batch that locates a version's new fragments
(``locate_many``, with its fast path for plain names found in one listing of
``data/``) gives every data file what :func:`locate` gives it alone, for the
names the fast path takes and for those it must leave to the checked route.
"""

from __future__ import annotations

import os

import lance
import pyarrow as pa

from conformance.validator.context import DatasetView
from conformance.validator.facts.data_files import FileStatus, base_storages, locate, locate_many
from reference_impl.fragments import DataFile
from reference_impl.storage import LocalStorage


def test_locate_many_gives_each_file_what_locate_gives(tmp_path):
    root = tmp_path / "ds"
    lance.write_dataset(pa.table({"id": [1]}), root)
    data = root / "data"
    (written,) = [p.name for p in data.iterdir()]
    (tmp_path / "outside.lance").write_bytes(b"x")
    os.symlink(data / written, data / "link.lance")  # a symlink is never taken as a regular file
    os.symlink(tmp_path / "outside.lance", data / "out.lance")
    (data / "folder.lance").mkdir()
    (data / "sub").mkdir()
    (data / "sub" / "nested.lance").write_bytes(b"x")
    for odd in ("\\back.lance", "C:\\drive.lance", "C:plain.lance", " spaced.lance"):
        (data / odd).write_bytes(b"x")  # names a Linux listing shows; some are absolute elsewhere
    paths = [
        written,
        "link.lance",
        "out.lance",
        "folder.lance",
        "sub/nested.lance",
        "missing.lance",
        "\\back.lance",
        "C:\\drive.lance",
        "C:plain.lance",
        " spaced.lance",
        "../outside.lance",
        "/etc/passwd",
        "",
        ".",
        "..",
    ]
    files = [DataFile(path, [0]) for path in paths] + [DataFile(written, [0], base_id=7), DataFile(written, [0])]

    def located(batch: bool) -> list:
        dataset = DatasetView(LocalStorage(root))
        view = dataset.version_view(max(dataset.manifest_paths()))
        assert view is not None
        bases = base_storages(view)
        return locate_many(view, files, bases) if batch else [locate(view, d, bases) for d in files]

    in_batch, one_by_one = located(True), located(False)
    assert [(str(x.location), x[:1] + x[2:]) for x in in_batch] == [
        (str(x.location), x[:1] + x[2:]) for x in one_by_one
    ]
    statuses = [x.status for x in in_batch]
    # The names the fast path takes and those it must not are both present.
    assert statuses[0] is statuses[9] is statuses[-1] is FileStatus.OK
    assert statuses[6] is statuses[7] is FileStatus.ESCAPES
    assert statuses[1] is FileStatus.OK and statuses[2] is FileStatus.ESCAPES
    assert statuses[3] is FileStatus.NOT_A_FILE and statuses[5] is FileStatus.MISSING
    assert statuses[-2] is FileStatus.UNDECLARED_BASE
