"""The acceptance check shared by every writer test: a dataset written by the
reference implementation reads the same in pylance, at every version, and
conforms to the specification.

The checks are the shipped ones (``conformance.writer_conformance.checks``,
what writer conformance runs on every version a writer commits): the
validator, the reference reader's description, pylance's description against
it; both list the same versions. Rows are compared here, more strictly than
an outside writer's are (by meaning, as a multiset): the exact Arrow schema,
the rows in the same order with the same row ids; and no validator warning
is accepted either.
"""

from __future__ import annotations

import pyarrow as pa

from conformance.drivers import pylance_driver, reference
from conformance.writer_conformance.checks import CheckStatus, agreement_checks, versions_check
from reference_impl.dataset import Dataset


def _sorted_rows(table: pa.Table) -> pa.Table:
    return table.sort_by("_rowid") if "_rowid" in table.column_names else table


def assert_pylance_agrees(path, *, versions=None) -> int:
    """Check every version (or ``versions``); returns how many were checked."""
    import lance

    uri = str(path)
    all_versions = reference.versions(uri)
    listing = versions_check(uri, {"pylance": pylance_driver}, all_versions)
    assert not listing, "pylance lists other versions: " + "; ".join(listing)
    checked = list(versions or all_versions)
    checks = agreement_checks(uri, {"pylance": pylance_driver}, checked, compare_rows=False)
    problems = [
        f"v{check.version} {check.check}: {problem}"
        for check in checks
        for problem in (*check.problems, *(note for note in check.notes if check.check == "validator"))
    ]
    assert all(check.status is not CheckStatus.FAIL for check in checks) and not problems, (
        "the shipped writer checks object:\n" + "\n".join(problems)
    )
    for version in checked:
        expected = Dataset.open(uri, version).to_table(with_row_id=True)
        actual = lance.dataset(uri, version=version).to_table(with_row_id=True)
        assert actual.schema.remove_metadata() == expected.schema.remove_metadata(), f"v{version} schemas differ"
        assert actual.to_pylist() == expected.to_pylist(), f"v{version} rows differ"
    return len(checked)
