"""Expectations files: an implementation's own record of its known failures."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.expectations import (
    EXPECTATIONS_FORMAT,
    Expectation,
    ExpectationKind,
    Expectations,
    ExpectationsError,
    implementation_and_release,
    load_expectations,
    release_in_range,
    shipped_expectations,
    shipped_path,
)

BUG = {
    "suite": "readers",
    "case": "ref-empty-table",
    "requirement": "fragment.max-id-absent-without-fragments",
    "kind": "bug",
    "reason": "reads an absent max_fragment_id as 0",
    "reproducer": "describe ref-empty-table: max_fragment_id is 0, not absent",
}


def _write(tmp_path, entries, **top):
    path = tmp_path / "mine.json"
    document = {"format": EXPECTATIONS_FORMAT, "implementation": "mine", "expectations": entries, **top}
    path.write_text(json.dumps(document))
    return path


def test_a_file_loads_and_looks_up_by_suite_and_case(tmp_path):
    expectations = load_expectations(_write(tmp_path, [BUG]))
    entry = expectations.lookup("readers", "ref-empty-table")
    assert entry is not None and entry.kind is ExpectationKind.BUG and entry.releases is None
    assert expectations.lookup("writers", "ref-empty-table") is None
    assert expectations.lookup("readers", "ref-tags") is None


def test_a_file_round_trips():
    """Property: parsing to_json() gives back the same expectations."""
    original = Expectations(
        "mine",
        (
            Expectation("readers", "a", "naming.v2-pattern", "r", releases="<0.17", kind=ExpectationKind.UNSUPPORTED),
            Expectation("writers", "step-1", "naming.v2-pattern", "r", issue="https://x/1", reproducer="do x"),
        ),
    )
    from conformance.expectations import parse_expectations

    assert parse_expectations(json.loads(json.dumps(original.to_json()))) == original


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({k: v for k, v in BUG.items() if k != "reproducer"}, "'reproducer' is a required property"),
        ({**BUG, "requirement": "no.such-requirement"}, "unknown requirement id 'no.such-requirement'"),
        ({**BUG, "suite": "elsewhere"}, "'elsewhere' is not one of"),
        ({**BUG, "releases": "~0.17"}, "is not a version specifier set"),
        ({**BUG, "column": "a", "type": "decimal256"}, "names both a column and a type"),
        ({**BUG, "suite": "writers", "column": "a"}, "only in the readers suite"),
        ({**BUG, "case": "*", "column": "a"}, "needs a 'type'"),
        ({**BUG, "type": "decimal512"}, "is not one of"),
        ({**BUG, "reason": ""}, "should be non-empty"),
        ({**BUG, "deviation": "x"}, "Additional properties are not allowed"),
    ],
)
def test_a_bad_entry_is_refused_naming_the_file_and_the_problem(tmp_path, entry, message):
    path = _write(tmp_path, [entry])
    with pytest.raises(ExpectationsError) as raised:
        load_expectations(path)
    assert str(path) in str(raised.value) and message in str(raised.value)


def test_an_unsupported_feature_needs_no_reproducer(tmp_path):
    entry = {k: v for k, v in BUG.items() if k != "reproducer"} | {"kind": "unsupported"}
    assert load_expectations(_write(tmp_path, [entry])).entries[0].reproducer is None


def test_unreadable_and_non_json_files_are_refused_naming_them(tmp_path):
    with pytest.raises(ExpectationsError, match="cannot read"):
        load_expectations(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ExpectationsError, match="bad.json: not JSON"):
        load_expectations(tmp_path / "bad.json")
    with pytest.raises(ExpectationsError, match="'format' is a required property"):
        load_expectations(_bare(tmp_path))


def _bare(tmp_path):
    """A file without its format version."""
    path = tmp_path / "bare.json"
    path.write_text(json.dumps({"implementation": "mine", "expectations": []}))
    return path


@pytest.mark.parametrize(
    ("version", "releases", "holds"),
    [
        ("0.16.1", "<0.17", True),
        ("0.17.0", "<0.17", False),
        ("0.17", "<0.17.0", False),
        ("0.11.1", ">=0.11,<0.16", True),
        ("0.16.1", ">=0.11,<0.16", False),
        ("0.20.0", "==0.20", True),
        ("14.0.2", ">14,<=14.0.2", True),
        ("1.0.0-beta.2", "<=1.0.0", True),
        ("1.0.0-beta.2", ">=1.0.0b1", True),
        ("1.0.0-beta.2", "==1.0.0", False),
        ("0.20.0-nightly+abc", ">=0.20", True),
        ("0.21", "==0.21.*", True),
        ("0.21.3", "~=0.20", True),
    ],
)
def test_release_ranges(version, releases, holds):
    assert release_in_range(version, releases) is holds


@given(st.lists(st.integers(0, 30), min_size=1, max_size=4), st.lists(st.integers(0, 30), min_size=1, max_size=4))
def test_every_version_is_below_or_at_or_above_a_bound(version, bound):
    """Property: for any two versions exactly one of <, == and > holds, as
    release ranges see them."""
    v, b = ".".join(map(str, version)), ".".join(map(str, bound))
    holding = [op for op in ("<", "==", ">") if release_in_range(v, f"{op}{b}")]
    assert len(holding) == 1
    assert release_in_range(v, f"<={b}") == (holding[0] in ("<", "=="))


def test_entries_for_some_releases_apply_only_to_them(tmp_path):
    expectations = load_expectations(_write(tmp_path, [{**BUG, "releases": "<0.17"}]))
    assert expectations.for_release("0.16.1").lookup("readers", "ref-empty-table") is not None
    assert expectations.for_release("0.20.0").lookup("readers", "ref-empty-table") is None
    assert expectations.for_release(None).entries == ()


def test_driver_names_map_to_implementation_and_release():
    assert implementation_and_release("pylance@0.20.0") == ("pylance", "0.20.0")
    assert implementation_and_release("worker:pylance") == ("pylance", None)
    assert implementation_and_release("third_party.lance_rs") == ("third_party.lance_rs", None)


def test_the_reference_ships_an_empty_file():
    assert shipped_path("reference").is_file()
    assert shipped_expectations("reference") == Expectations("reference", ())


def test_an_implementation_without_a_file_expects_nothing():
    assert shipped_expectations("third_party.lance_rs").entries == ()


def test_a_driver_name_with_path_characters_has_no_shipped_file():
    """A command-line driver name (or any name with path characters) has no
    shipped file, even when the path it spells leads to one."""
    assert (shipped_path("reference").parent / ".." / "expectations" / "pylance.json").is_file()
    assert shipped_expectations("../expectations/pylance@0.20.0").entries == ()
    assert shipped_expectations("cmd:node ../../worker.js").entries == ()


def test_every_shipped_file_loads_and_is_named_after_its_implementation():
    directory = shipped_path("reference").parent
    for path in sorted(directory.glob("*.json")):
        assert load_expectations(path).implementation == path.stem
