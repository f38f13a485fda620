"""``--manifest-store sqlite:PATH`` on ``describe`` and ``validate``: the
dataset is read through its external manifest store, which is never written,
and a staged manifest is neither finalised nor hidden."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from conformance.cli import main
from reference_impl.commit.external_store import STEP_STORE_COMMITTED, SqliteManifestStore
from reference_impl.dataset import Dataset
from reference_impl.fragment_writer import write_fragments
from reference_impl.transactions import Append


class Stop(Exception):
    pass


def _stop_after_store_commit(step: str) -> None:
    if step == STEP_STORE_COMMITTED:
        raise Stop(step)


@pytest.fixture
def staged(tmp_path):
    """A dataset whose version 2 is committed in the store but only staged."""
    path, store_path = tmp_path / "ds", tmp_path / "store.sqlite"
    store = SqliteManifestStore(store_path)
    ds = Dataset.create(path, pa.table({"id": [1, 2]}), manifest_store=store)
    with pytest.raises(Stop):
        ds.commit(
            Append(fragments=write_fragments(ds.storage, pa.table({"id": [3]}), ds.schema)),
            on_step=_stop_after_store_commit,
        )
    store.close()  # the last connection checkpoints the WAL: the file holds every row now
    return path, store_path


def _snapshot(path, store_path):
    return sorted(p.name for p in (path / "_versions").iterdir()), store_path.read_bytes()


def test_describe_reads_the_stores_latest_version_without_finalising_it(staged, capsys):
    path, store_path = staged
    before = _snapshot(path, store_path)
    assert main(["describe", str(path), "--manifest-store", f"sqlite:{store_path}"]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == 2
    assert main(["describe", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == 1
    assert _snapshot(path, store_path) == before


def test_validate_reports_the_pending_finalisation_and_writes_nothing(staged, capsys):
    path, store_path = staged
    before = _snapshot(path, store_path)
    store = f"sqlite:{store_path}"
    assert main(["validate", str(path), "--manifest-store", store, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["versions"] == [2]
    assert [f["rule"] for f in report["findings"]] == ["external-store/pending-finalization"]
    assert main(["validate", str(path), "--manifest-store", store, "--fail-on", "warning"]) == 1
    capsys.readouterr()
    assert _snapshot(path, store_path) == before


def test_a_manifest_store_option_that_names_no_sqlite_store_is_a_usage_error(staged, capsys):
    path, _ = staged
    with pytest.raises(SystemExit) as exited:
        main(["validate", str(path), "--manifest-store", "redis:somewhere"])
    assert exited.value.code == 2
    assert "expected sqlite:PATH" in capsys.readouterr().err


def test_a_store_that_cannot_be_opened_is_a_finding_not_a_traceback(staged, tmp_path, capsys):
    path, _ = staged
    assert main(["validate", str(path), "--manifest-store", f"sqlite:{tmp_path / 'absent.sqlite'}"]) == 1
    out = capsys.readouterr().out
    assert "external manifest store cannot be read" in out and "absent.sqlite" in out
    assert not (tmp_path / "absent.sqlite").exists()


def test_describe_and_validate_an_s3_ddb_uri_read_through_its_dynamodb_store(s3_options, s3_bucket, capsys):
    """An ``s3+ddb://`` URI brings its DynamoDB store: the store's staged
    latest version is described and validated where it is, and nothing is
    finalised."""
    from tests.reference_impl.commit.test_external_store_interop import ddb_items, keys, make_ddb_table

    table = make_ddb_table(s3_options)
    uri = f"s3+ddb://{s3_bucket}/ds.lance?ddbTableName={table}"
    ds = Dataset.create(uri, pa.table({"id": [1, 2]}), storage_options=s3_options)
    with pytest.raises(Stop):
        ds.commit(
            Append(fragments=write_fragments(ds.storage, pa.table({"id": [3]}), ds.schema)),
            on_step=_stop_after_store_commit,
        )
    options = [argument for key, value in s3_options.items() for argument in ("--storage-option", f"{key}={value}")]
    before = (keys(s3_options, s3_bucket, "ds.lance/"), ddb_items(s3_options, table))
    assert main(["describe", uri, *options]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == 2
    assert main(["validate", uri, *options, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["versions"] == [2]
    assert [f["rule"] for f in report["findings"]] == ["external-store/pending-finalization"]
    assert (keys(s3_options, s3_bucket, "ds.lance/"), ddb_items(s3_options, table)) == before
