"""The release corpus: datasets written by pylance releases themselves, one
release per minor line from 0.15 on (``conformance.peers.old_pylance``), each
installed in a venv of its own.

For each release the writer script builds a small corpus (creates, appends,
deletes, schema changes, a scalar index, a vector index with a delta segment,
every scalar and vector index type the release creates taken through an
append, optimize_indices, a delete and compaction, tags, legacy and 2.0
storage, as far as the release can: what it cannot write is skipped and
reported),
every version of every dataset is validated, and the reference reader reads
every version of the release's 2.0 dataset as pylance does. The property: no version
has an error, and the known writer defects (conformance/data/writer_defects.json)
appear as warnings naming the defect and its releases exactly for the
releases the table says they affect (requirement
writer-version.identifies-writer).

The default run takes the releases where each known defect begins and ends
(its first affected and first fixed release); ``tox -e releases`` (pytest
marker ``releases``) takes every other release as well.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conformance.peers import old_pylance
from conformance.validator import Severity, validate
from conformance.validator.writer_defects import known_defects, release_key
from reference_impl.dataset import Dataset
from reference_impl.indices.types import IndexType
from reference_impl.manifest import WriterVersion

#: What every pylance release records as writer_version.library.
LIBRARY = "lance"
#: The oldest release whose 2.0 files the reference reader is held to read:
#: older releases' 2.0 files use encodings from before the format settled
#: (pylance 14 cannot read those of 0.11.1; 0.13.0 stores strings as lists
#: of bytes, which the reference reader does not decode).
READ_ROW_FOR_ROW_FROM = "0.14.1"


def _boundaries() -> list[str]:
    releases = {d.first_affected for d in known_defects()} | {d.first_fixed for d in known_defects() if d.first_fixed}
    return sorted(releases, key=release_key)


BOUNDARY_RELEASES = _boundaries()
OTHER_RELEASES = sorted(set(old_pylance.PINNED_REQUIREMENTS) - set(BOUNDARY_RELEASES), key=release_key)


@pytest.fixture(scope="session")
def installed_releases(request) -> dict[str, str]:
    """Install every release the session's corpus tests need, two at a time
    (installs wait on the network more than on the CPU); ``{release: why it
    failed}`` for those that would not install."""
    here = Path(__file__)
    wanted = sorted(
        {
            item.callspec.params["release"]
            for item in request.session.items
            if item.path == here and "release" in getattr(getattr(item, "callspec", None), "params", {})
        },
        key=release_key,
    )

    def install(release):
        try:
            old_pylance.ensure_venv(release)
            return release, None
        except old_pylance.PeerUnavailableError as exc:
            return release, str(exc)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {release: why for release, why in pool.map(install, wanted) if why is not None}


def _check_release(release: str, installed_releases: dict[str, str], out_dir) -> None:
    if release in installed_releases:
        pytest.fail(f"pylance {release} does not install here:\n{installed_releases[release]}", pytrace=False)
    written = old_pylance.run_writer(release, out_dir)
    assert written.datasets, f"pylance {release} wrote nothing (skipped: {written.skipped})"
    expected = {d.id: d for d in known_defects() if d.affects(WriterVersion(LIBRARY, release))}
    errors, warnings, seen = [], [], set()
    for name, root in sorted(written.datasets.items()):
        for finding in validate(root, all_versions=True).findings:
            line = f"{name} v{finding.version} {finding.rule}: {finding.message}"
            if finding.severity is Severity.ERROR:
                errors.append(line)
            elif finding.known_defect is not None:
                seen.add(finding.known_defect)
                defect = expected.get(finding.known_defect)
                assert defect is not None, f"pylance {release} is not in the range of {line}"
                assert finding.severity is Severity.WARNING and defect.releases in finding.message, line
            elif finding.severity is Severity.WARNING:
                warnings.append(line)
    assert not errors, json.dumps({"skipped": written.skipped, "errors": errors[:40]}, indent=2)
    if "v2_0_history" in written.datasets and release_key(release) >= release_key(READ_ROW_FOR_ROW_FROM):
        _reads_like_pylance(written.datasets["v2_0_history"])
    assert not warnings, json.dumps(warnings[:40], indent=2)
    # Every defect of the release shows (the corpus exercises each one).
    assert seen == set(expected), f"pylance {release}: expected {sorted(expected)}, saw {sorted(seen)}"
    layouts = index_layouts(written.datasets)
    assert UNKNOWN_LAYOUT not in layouts, f"pylance {release}: index layouts {layouts}"
    index_datasets = {"scalar_indices", "vector_indices", "hnsw_indices"} & set(written.datasets)
    assert index_datasets, f"pylance {release} wrote no index dataset (skipped: {written.skipped})"


#: How :func:`index_layouts` names a segment without ``index_details``
#: (early releases' layout, which the reference skips as an unknown type).
LEGACY_LAYOUT = "legacy (no index_details)"
UNKNOWN_LAYOUT = "unknown type"


def index_layouts(datasets: dict[str, Path]) -> dict[str, int]:
    """``{layout: segments}`` over the latest versions of ``datasets``: the
    index type of each segment, :data:`LEGACY_LAYOUT` for one without details,
    :data:`UNKNOWN_LAYOUT` for a type URL the index pages do not specify."""
    layouts: dict[str, int] = {}
    for root in datasets.values():
        for index in Dataset.open(root, check_features=False).indices:
            index_type = IndexType.of(index)
            if index_type is not None:
                layout = index_type.name
            else:
                layout = LEGACY_LAYOUT if not index.type_url else UNKNOWN_LAYOUT
            layouts[layout] = layouts.get(layout, 0) + 1
    return layouts


def _reads_like_pylance(root) -> None:
    """The reference reader sees the rows the project's pylance sees, at
    every version of a release's 2.0 dataset (whatever file version the
    release recorded for its files)."""
    lance = pytest.importorskip("lance")
    for version in Dataset.open(root, check_features=False).versions():
        ours = Dataset.open(root, version).to_table().to_pylist()
        theirs = lance.dataset(str(root), version=version).to_table().to_pylist()
        assert ours == theirs, f"{root} v{version}"


#: The default run checks the oldest release's corpus (its venv is built for
#: the driver tests anyway); the other boundaries, a venv each on a fresh
#: machine, run with every release under ``tox -e releases``.
IN_THE_DEFAULT_RUN = {min(old_pylance.PINNED_REQUIREMENTS, key=release_key)}


@pytest.mark.old_pylance
@pytest.mark.parametrize(
    "release",
    [r if r in IN_THE_DEFAULT_RUN else pytest.param(r, marks=pytest.mark.releases) for r in BOUNDARY_RELEASES],
)
def test_release_corpus_at_defect_boundaries(release, installed_releases, tmp_path):
    _check_release(release, installed_releases, tmp_path / release)


@pytest.mark.releases
@pytest.mark.old_pylance
@pytest.mark.parametrize("release", OTHER_RELEASES)
def test_release_corpus_of_every_release(release, installed_releases, tmp_path):
    _check_release(release, installed_releases, tmp_path / release)


def test_every_minor_line_from_0_15_is_covered_or_explained():
    """The peers keep one release per minor line: every line between 0.15
    and the newest pinned one that has no release here is listed with why."""
    lines = old_pylance.release_lines()
    assert "0.15" in lines
    majors = {release_key(r)[0] for r in old_pylance.PINNED_REQUIREMENTS}
    newest = max(majors)
    for major in range(1, newest + 1):
        if major not in majors:
            assert f"{major}.x" in old_pylance.UNCOVERED_LINES, major
    for minor in range(15, 40):
        assert f"0.{minor}" in lines
