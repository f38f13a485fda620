"""What the engine drivers' tests read back, always with the reference
implementation: the rows of a version, the transaction that made it, and the
validator's error findings."""

from __future__ import annotations

import pyarrow as pa

from conformance.drivers.reference import read_table
from conformance.validator.engine import validate
from conformance.validator.registry import Severity
from reference_impl.dataset import Dataset
from reference_impl.transactions import Transaction, read_transaction_file


def ids(uri: str, version: int | None = None) -> list[int]:
    """The ``id`` column of a version, sorted (engines write in any order)."""
    return sorted(read_table(uri, version).column("id").to_pylist())


def rows_by_id(uri: str, version: int | None = None) -> dict[str, list]:
    return read_table(uri, version).sort_by("id").to_pydict()


def fragments(uri: str, version: int | None = None) -> list:
    return Dataset.open(uri, version).manifest.fragments


def columns(uri: str, version: int | None = None) -> list[str]:
    return Dataset.open(uri, version).to_table().column_names


def transaction_of(uri: str, version: int) -> Transaction:
    dataset = Dataset.open(uri, version)
    name = dataset.manifest_file.manifest.transaction_file
    transaction = read_transaction_file(dataset.storage, name) if name else dataset.manifest_file.transaction
    assert transaction is not None, f"version {version} records no transaction"
    return transaction


def latest_version(uri: str) -> int:
    return Dataset.open(uri).version


def validation_errors(uri: str) -> list[str]:
    """Every error finding of every version."""
    report = validate(uri, all_versions=True)
    return [f"{f.rule}: {f.message}" for f in report.findings if f.severity is Severity.ERROR]


def id_rows(start: int, stop: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, stop), pa.int64()), "name": [f"n{i}" for i in range(start, stop)]})
