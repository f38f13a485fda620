"""The zoo's machinery: the registry, the build record, the known entries,
the checker catching what it must, and the module's command line."""

from __future__ import annotations

import json
import re

import pytest

from conformance.zoo import (
    FEATURES,
    Aspect,
    Disagreement,
    Feature,
    FeatureUnavailable,
    KnownDisagreement,
    build_feature,
    build_zoo,
    catalog,
    cheap_features,
    check_feature,
    check_zoo,
)
from conformance.zoo.__main__ import main
from conformance.zoo.check import NotBuiltError, datasets_of
from conformance.zoo.known import EVERY_FEATURE, KNOWN, explanation, stale_entries
from conformance.zoo.writing import open_dataset

lance = pytest.importorskip("lance")


def test_the_default_subset_is_small_and_the_zoo_is_not():
    cheap = cheap_features()
    assert 4 <= len(cheap) <= 8, cheap
    assert len(FEATURES) > 4 * len(cheap)


def test_every_known_entry_names_features_of_the_zoo_and_where_it_is_fixed():
    for entry in KNOWN:
        assert set(entry.features) <= set(FEATURES) | {EVERY_FEATURE}, entry
        assert entry.what and entry.fixed_by, entry
        re.compile(entry.pattern)


def test_an_entry_explains_only_its_features_aspect_and_pattern():
    entry = KnownDisagreement(("tags",), Aspect.ROWS, r"column 'x'", "x differs", "nowhere")
    matching = Disagreement("tags", "tags", 1, Aspect.ROWS, "column 'x': 1 != 2")
    assert explanation(matching, [entry]) is entry
    assert explanation(Disagreement("restore", "restore", 1, Aspect.ROWS, "column 'x': 1 != 2"), [entry]) is None
    assert explanation(Disagreement("tags", "tags", 1, Aspect.DESCRIPTION, "column 'x'"), [entry]) is None
    assert explanation(Disagreement("tags", "tags", 1, Aspect.ROWS, "column 'y': 1 != 2"), [entry]) is None
    assert stale_entries([matching], ["tags"], [entry]) == []
    assert stale_entries([], ["tags"], [entry]) == [entry]
    assert stale_entries([], ["restore"], [entry]) == [], "an entry about features not checked is not stale"
    deep_only = KnownDisagreement(("tags",), Aspect.FINDING, "data-page", "pages", "nowhere", deep_only=True)
    assert stale_entries([], ["tags"], [deep_only]) == [], "a deep-only entry is not stale in a shallow run"
    assert stale_entries([], ["tags"], [deep_only], deep=True) == [deep_only]
    sometimes = KnownDisagreement(("tags",), Aspect.ROWS, "x", "order", "nowhere", intermittent=True)
    assert stale_entries([], ["tags"], [sometimes]) == [], "an intermittent entry is never reported stale"


def test_a_damaged_dataset_gives_unexplained_disagreements(tmp_path):
    """The checker is not blind: a data file removed from a zoo dataset is a
    validator error and a read failure, neither of them known."""
    build_feature("tags", tmp_path)
    victim = sorted((tmp_path / "tags" / "data").iterdir())[0]
    victim.unlink()
    result = check_feature(tmp_path, "tags")
    aspects = {d.aspect for d in result.unexplained}
    assert Aspect.FINDING in aspects and Aspect.READ in aspects, result.unexplained


def test_a_known_disagreement_is_explained_not_unexplained(tmp_path):
    """Values changed behind pylance's back would be unexplained; an entry
    recording them moves them to the explained list."""
    build_feature("tags", tmp_path)
    found = check_feature(tmp_path, "tags", known=())
    assert not found.unexplained and found.versions_checked == 3
    (tmp_path / "tags" / "_versions").rename(tmp_path / "tags" / "_versions_hidden")
    lost = check_feature(tmp_path, "tags", known=())
    assert [d.detail for d in lost.unexplained] == ["no dataset found"]
    entry = KnownDisagreement(("tags",), Aspect.VALIDATION, "^no dataset found$", "gone", "this test")
    explained = check_feature(tmp_path, "tags", known=[entry])
    assert not explained.unexplained and [e for _, e in explained.explained] == [entry]


def test_an_unavailable_feature_is_recorded_with_its_reason(tmp_path, monkeypatch):
    def lacking(path):
        path.mkdir()
        raise FeatureUnavailable("frobnication: lance.frobnicate is missing")

    monkeypatch.setitem(catalog.FEATURES, "frobnication", Feature("frobnication", "not offered", lacking))
    (built,) = build_zoo(tmp_path, ["frobnication"])
    assert built.unavailable == "frobnication: lance.frobnicate is missing"
    assert not (tmp_path / "frobnication").exists(), "a skipped feature leaves no partial dataset"
    record = json.loads((tmp_path / "zoo.json").read_text())["features"]
    assert record["frobnication"]["unavailable"] == built.unavailable
    result = check_zoo(tmp_path)
    assert result.unavailable == {"frobnication": built.unavailable} and result.features == []


def test_branches_clone_sources_and_mem_wal_generations_are_checked_too(tmp_path):
    for name in ("branches", "shallow_clone", "mem_wal"):
        build_feature(name, tmp_path)
    assert datasets_of(tmp_path, "branches") == [
        tmp_path / "branches",
        tmp_path / "branches" / "tree" / "dev",
        tmp_path / "branches" / "tree" / "dev" / "nested",
    ]
    assert datasets_of(tmp_path, "shallow_clone") == [tmp_path / "shallow_clone", tmp_path / "shallow_clone-source"]
    generations = datasets_of(tmp_path, "mem_wal")[1:]
    assert len(generations) == 1 and generations[0].parts[-3] == "_mem_wal", generations


def test_two_builds_hold_the_same_rows(tmp_path):
    for where in ("a", "b"):
        build_feature("merge_insert", tmp_path / where)
    for version in (1, 2, 3):
        first = open_dataset(tmp_path / "a" / "merge_insert", version=version).to_table()
        second = open_dataset(tmp_path / "b" / "merge_insert", version=version).to_table()
        assert first.equals(second), version


def test_checking_what_was_not_built_is_an_error(tmp_path):
    build_zoo(tmp_path, ["tags"])
    with pytest.raises(NotBuiltError):
        check_zoo(tmp_path, names=["restore"])


def test_the_module_builds_and_checks(tmp_path, capsys):
    assert main(["build", str(tmp_path), "naming_v2"]) == 0
    assert "naming_v2: built" in capsys.readouterr().out
    assert main(["check", str(tmp_path)]) == 0
    assert "0 unexplained disagreements" in capsys.readouterr().out
    victim = sorted((tmp_path / "naming_v2" / "data").iterdir())[0]
    victim.unlink()
    assert main(["check", str(tmp_path)]) == 1
    assert "UNEXPLAINED" in capsys.readouterr().out
    assert main(["check", str(tmp_path), "no_such_feature"]) == 2
    assert main(["check", str(tmp_path / "empty")]) == 2
