"""The feature zoo (conformance/zoo): every feature pylance and LanceDB offer,
built into a dataset, and every version of it validated and compared with
pylance, rows and canonical descriptions. A disagreement not recorded in
conformance/zoo/known.py fails; a recorded one that no longer shows fails too
(its entry must go when its fix lands).

The cheap features run by default; the rest carry the ``zoo`` marker
(``tox -e zoo`` runs them all). Deep validation runs where the validator
offers it, and is skipped with the reason where it does not."""

from __future__ import annotations

import pytest

from conformance.zoo import FEATURES, build_feature, check_feature
from conformance.zoo.known import KNOWN, stale_entries

pytest.importorskip("lance")


def _feature_params():
    for name, feature in FEATURES.items():
        marks = () if feature.cheap else (pytest.mark.zoo,)
        yield pytest.param(name, id=name, marks=marks)


@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
@pytest.mark.parametrize("name", list(_feature_params()))
def test_every_version_of_the_feature_agrees(name, deep, tmp_path):
    """Property: every version of every dataset the feature wrote gets no
    finding but infos from the validator, and the reference reads the rows
    and describes the version as pylance does, except the disagreements
    recorded as known; every known entry naming the feature still shows."""
    built = build_feature(name, tmp_path)
    if built.unavailable:
        pytest.skip(f"not offered by the installed release: {built.unavailable}")
    result = check_feature(tmp_path, name, deep=deep)
    assert result.versions_checked > 0, f"{name}: no version compared in {result.datasets}"
    assert not result.unexplained, "unexplained disagreements:\n" + "\n".join(map(str, result.unexplained))
    own = [entry for entry in KNOWN if name in entry.features]
    stale = stale_entries(result.disagreements, [name], own, deep=deep)
    assert not stale, f"known entries that no longer show (remove them): {[e.what for e in stale]}"
