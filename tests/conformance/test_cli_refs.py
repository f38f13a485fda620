"""``describe`` and ``validate`` select a version by tag or branch
(``--tag NAME``, ``--branch NAME [--version N]``), resolved through
reference_impl.refs; unknown or malformed names are clean usage errors."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from conformance.cli import main
from reference_impl.dataset import Dataset


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _rows(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64())})


@pytest.fixture(scope="module")
def branched(tmp_path_factory):
    """main: versions 1 (3 rows) and 2 (4 rows), tag ``first`` -> 1; branch
    ``dev/x`` from 2 with its own version 3 (5 rows), tag ``dev-head`` -> it."""
    path = tmp_path_factory.mktemp("refs") / "ds"
    dataset = Dataset.create(path, _rows(1, 2, 3)).append(_rows(4))
    dataset.create_tag("first", 1)
    branch = dataset.create_branch("dev/x").append(_rows(5))
    branch.create_tag("dev-head")
    return path


def describe(capsys, *args) -> dict:
    code, out, err = run(capsys, "describe", *args)
    assert code == 0, err
    return json.loads(out)


def test_describe_by_tag_and_branch(branched, capsys):
    first = describe(capsys, branched, "--tag", "first")
    assert (first["version"], first["num_rows"]) == (1, 3)
    latest_dev = describe(capsys, branched, "--branch", "dev/x")
    assert (latest_dev["version"], latest_dev["num_rows"]) == (3, 5)
    assert describe(capsys, branched, "--tag", "dev-head")["num_rows"] == 5
    assert describe(capsys, branched, "--branch", "main")["version"] == 2
    assert describe(capsys, branched, "--branch", "main", "--version", "1")["num_rows"] == 3


def test_validate_by_tag_and_branch(branched, capsys):
    code, out, _ = run(capsys, "validate", branched, "--tag", "first", "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["versions"] == [1] and report["dataset"] == str(branched)
    code, out, _ = run(capsys, "validate", branched, "--branch", "dev/x", "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["versions"] == [3] and report["dataset"] == str(branched / "tree" / "dev" / "x")
    assert report["summary"]["errors"] == 0
    code, out, _ = run(capsys, "validate", branched, "--branch", "dev/x", "--all-versions", "--format", "json")
    assert code == 0 and json.loads(out)["versions"][-1] == 3


@pytest.mark.parametrize(
    "args, message",
    [
        (("--tag", "nightly"), "tag 'nightly' does not exist (no _refs/tags/nightly.json)"),
        (("--branch", "feature"), "branch 'feature' does not exist (no _refs/branches/feature.json)"),
        (("--branch", "dev/y", "--version", "3"), "branch 'dev/y' does not exist"),
        (("--tag", "a..b"), "tag name 'a..b' cannot contain '..'"),
        (("--branch", "/lead"), "branch name '/lead' cannot start or end with '/'"),
    ],
)
@pytest.mark.parametrize("command", ["describe", "validate"])
def test_an_unknown_or_malformed_ref_is_a_usage_error_naming_it(branched, capsys, command, args, message):
    code, out, err = run(capsys, command, branched, *args)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["describe", "validate"])
def test_a_tag_names_its_own_branch_and_version(branched, capsys, command):
    for extra in (("--branch", "dev/x"), ("--version", "1")):
        with pytest.raises(SystemExit) as exited:
            main([command, str(branched), "--tag", "first", *extra])
        assert exited.value.code == 2
        error = capsys.readouterr().err
        assert "--tag" in error and ("not allowed with" in error or "mutually exclusive" in error), error
