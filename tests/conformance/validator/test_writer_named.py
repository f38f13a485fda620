"""Findings that put a departure down to the dataset's writer name the writer
its manifests record (writer_version: library and version), never an assumed
"pylance"."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.mutations.edit import edit_manifest
from conformance.validator import Severity, validate
from reference_impl.manifest import WriterVersion

lance = pytest.importorskip("lance")


def test_infos_name_the_recorded_writer(tmp_path):
    """pylance writes the dataset (so its departures are there to report),
    then the latest manifest is relabelled as another writer's: every finding
    that blames the writer names that one."""
    path = tmp_path / "ds"
    lance.write_dataset(pa.table({"id": pa.array(range(10), pa.int64())}), path)
    lance.dataset(path).delete("id = 3")  # an .arrow deletion file with a uint32 column

    def relabel(manifest_file):
        manifest_file.manifest.writer_version = WriterVersion("acme-lance", "2.5.0")

    edit_manifest(path, relabel)
    findings = validate(path).findings
    blaming = {f.rule: f.message for f in findings if "acme-lance 2.5.0" in f.message}
    assert {"schema/field-kind", "deletion/arrow-uint32"} <= set(blaming), [f.message for f in findings]
    assert all(f.severity is Severity.INFO for f in findings if f.rule in blaming)
    assert not [f.message for f in findings if "pylance" in f.message]

    # The unmodified first version names pylance's own library and release.
    (first,) = [f for f in validate(path, version=1).findings if f.rule == "schema/field-kind"]
    assert f"lance {lance.__version__}" in first.message
