"""Manifest naming schemes and version discovery (table format: manifest naming schemes)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_impl.errors import NamingSchemeError, NotADatasetError, VersionNotFoundError
from reference_impl.naming import (
    U64_MAX,
    NamingScheme,
    list_versions,
    manifest_name,
    parse_manifest_name,
    read_hint,
    resolve_version,
)
from reference_impl.storage import LocalStorage


def test_v2_name_of_version_one_is_u64_max_minus_one():
    assert manifest_name(1, NamingScheme.V2) == "18446744073709551614.manifest"
    assert manifest_name(1, NamingScheme.V1) == "1.manifest"


@given(st.integers(min_value=1, max_value=U64_MAX), st.sampled_from(list(NamingScheme)))
def test_names_parse_back_to_their_version_and_scheme(version, scheme):
    """Property: parse(name(v, s)) == (v, s) for every version and scheme,
    except V1 names long enough to look like V2 names (20 digits), which no
    real dataset reaches."""
    name = manifest_name(version, scheme)
    if scheme is NamingScheme.V1 and len(str(version)) == 20:
        return
    assert parse_manifest_name(name) == (version, scheme)


@given(st.lists(st.integers(min_value=1, max_value=10**12), min_size=2, max_size=20, unique=True))
def test_v2_names_sort_newest_first(versions):
    """Property: lexicographic order of V2 names is descending version order."""
    names = sorted(manifest_name(v, NamingScheme.V2) for v in versions)
    assert [parse_manifest_name(n)[0] for n in names] == sorted(versions, reverse=True)


def _touch(root, *names):
    (root / "_versions").mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / "_versions" / name).write_bytes(b"")


def test_a_mixture_of_schemes_is_an_error(tmp_path):
    _touch(tmp_path, "1.manifest", manifest_name(2, NamingScheme.V2))
    with pytest.raises(NamingSchemeError, match="mix"):
        resolve_version(LocalStorage(tmp_path), None)


@pytest.mark.requirements("history.latest-is-highest")
def test_latest_is_the_highest_version_whatever_the_hint_says(tmp_path):
    _touch(tmp_path, "1.manifest", "2.manifest", "3.manifest")
    (tmp_path / "_versions" / "latest_version_hint.json").write_text('{"version": 1}')
    listing = list_versions(LocalStorage(tmp_path))
    assert listing.has_hint and read_hint(LocalStorage(tmp_path)) == 1
    version, path, scheme = resolve_version(LocalStorage(tmp_path), None)
    assert (version, path, scheme) == (3, "_versions/3.manifest", NamingScheme.V1)


@pytest.mark.requirements("external-store.staged-not-visible")
def test_staged_external_store_manifests_are_not_committed_versions(tmp_path):
    _touch(tmp_path, "1.manifest", "2.manifest-0b7b1f1e-8d7c-4bb1-a7b5-2a4b8b0f5e1d")
    listing = list_versions(LocalStorage(tmp_path))
    assert listing.manifests() == {1: "_versions/1.manifest"}
    assert list(listing.staged) == [2]


def test_missing_version_and_empty_directory(tmp_path):
    with pytest.raises(NotADatasetError):
        resolve_version(LocalStorage(tmp_path), None)
    _touch(tmp_path, "1.manifest")
    with pytest.raises(VersionNotFoundError, match="version 5"):
        resolve_version(LocalStorage(tmp_path), 5)


def test_legacy_latest_manifest_is_used_when_versions_are_absent(tmp_path):
    (tmp_path / "_latest.manifest").write_bytes(b"")
    assert resolve_version(LocalStorage(tmp_path), None) == (None, "_latest.manifest", None)
