"""The acceptance check shared by every writer test: a dataset written by the
reference implementation reads the same in pylance, at every version, and
conforms to the specification.

For each version: pylance opens it and scans it, both drivers give the same
canonical description, and the rows (with their row ids) are equal. The
validator reports no error and no warning on any version.
"""

from __future__ import annotations

import pyarrow as pa

from conformance.describe import differences, validate_description
from conformance.drivers import pylance_driver, reference
from conformance.validator import Severity, validate
from reference_impl.dataset import Dataset


def _sorted_rows(table: pa.Table) -> pa.Table:
    return table.sort_by("_rowid") if "_rowid" in table.column_names else table


def assert_pylance_agrees(path, *, versions=None) -> int:
    """Check every version (or ``versions``); returns how many were checked."""
    import lance

    all_versions = reference.versions(path)
    assert pylance_driver.versions(path) == all_versions, "pylance lists other versions"
    checked = 0
    for version in versions or all_versions:
        ours = reference.describe(path, version)
        validate_description(ours)
        theirs = pylance_driver.describe(path, version)
        diffs = differences(ours, theirs, ignore=pylance_driver.UNREPORTED)
        assert not diffs, f"v{version} descriptions differ:\n" + "\n".join(diffs)

        expected = Dataset.open(path, version).to_table(with_row_id=True)
        actual = lance.dataset(path, version=version).to_table(with_row_id=True)
        assert actual.schema.remove_metadata() == expected.schema.remove_metadata(), f"v{version} schemas differ"
        assert actual.to_pylist() == expected.to_pylist(), f"v{version} rows differ"
        checked += 1
    problems = [
        f"v{f.version} {f.rule}: {f.message}"
        for f in validate(path, all_versions=True).findings
        if f.severity is not Severity.INFO
    ]
    assert not problems, "the validator objects:\n" + "\n".join(problems)
    return checked
