"""Deep validation finds page-level corruption pylance's full scan would meet
(issue 29, acceptance).

Property, over the golden corpus: corrupt a random byte range inside a page
buffer of one data file (a buffer the file's column metadata names). Then,
for every version that lists the file, whenever pylance's full scan of that
version (``lance.dataset(path, version=v).to_table()``) fails or gives other
row counts or types than on the untouched corpus, ``validate --deep`` reports
an error finding on that version; and on the versions that do not list the
file, the deep run reports no error or warning it did not report before.
It is checked in its equivalent form: on a version listing the file where
the deep run reports no error, pylance's scan gives what it gave untouched
(pylance is asked only then: on some corrupt pages it takes minutes to fail).

pylance runs in a child process (:class:`PylanceScanner`): a panic in its
native code on corrupt bytes aborts that process, not the test run, and
counts as a failed scan. The child is started and stopped by pid.

A second test states the other half: deep validation of the untouched corpus
adds no error or warning to what shallow validation reports.
"""

from __future__ import annotations

import shutil
import tempfile
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.fixtures import default_corpus
from conformance.validator import Severity, validate
from reference_impl.dataset import Dataset
from reference_impl.errors import LanceFormatError
from reference_impl.file_format.footer import LAYOUT_V2, NEWEST_VERSION, inspect_file, read_v2_metadata
from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage
from tests.hypothesis_budget import examples
from tests.pylance_scanner import PylanceScanner

CASES = sorted(path for path in (default_corpus() / "cases").glob("*/dataset") if path.is_dir())
SERIOUS = (Severity.ERROR, Severity.WARNING)


@cache
def _page_buffers(root: Path) -> list[tuple[str, int, int]]:
    """``(data file name, position, size)`` of every non-empty page buffer of
    the decodable v2 data files of the dataset."""
    found = []
    storage = LocalStorage(root / "data")
    for path in sorted((root / "data").glob("*.lance")):
        try:
            info = inspect_file(storage, path.name)
            if info.layout != LAYOUT_V2 or (info.major, info.minor) > NEWEST_VERSION:
                continue
            metadata = read_v2_metadata(storage, path.name)
        except LanceFormatError:
            continue
        for column in metadata.columns:
            for page in column.pages:
                for position, size in zip(page.buffer_offsets, page.buffer_sizes, strict=True):
                    if size:
                        found.append((path.name, position, size))
    return found


@cache
def _versions_listing(root: Path) -> dict[str, frozenset[int]]:
    """Data file name -> the versions whose manifests list it."""
    listing: dict[str, set[int]] = {}
    for version in sorted(list_versions(LocalStorage(root)).manifests()):
        try:
            dataset = Dataset.open(root, version=version)
        except LanceFormatError:
            continue
        for fragment in dataset.fragments:
            for data_file in fragment.files:
                listing.setdefault(data_file.path.rsplit("/", 1)[-1], set()).add(version)
    return {name: frozenset(versions) for name, versions in listing.items()}


_BASELINE: dict[tuple[Path, int], dict] = {}


def _baseline(scanner: PylanceScanner, root: Path, version: int) -> dict:
    key = (root, version)
    if key not in _BASELINE:
        _BASELINE[key] = scanner.scan(root, version)
    return _BASELINE[key]


@cache
def _deep_findings(root: Path) -> frozenset[tuple[int | None, str, str]]:
    """The serious findings of the deep run of an untouched case."""
    report = validate(root, all_versions=True, deep=True)
    return frozenset((f.version, f.rule, f.message) for f in report.findings if f.severity in SERIOUS)


def _self_contained(root: Path) -> bool:
    """Whether the case's latest version declares no base paths (a copy of
    it reads as the original does)."""
    try:
        return not Dataset.open(root).manifest.base_paths
    except LanceFormatError:
        return False


#: Cases with page buffers to corrupt, whose copies read as they do.
CORRUPTIBLE = [root for root in CASES if _self_contained(root) and _page_buffers(root)]


@st.composite
def corruptions(draw):
    root = draw(st.sampled_from(CORRUPTIBLE))
    name, position, size = draw(st.sampled_from(_page_buffers(root)))
    start = draw(st.integers(0, size - 1))
    length = draw(st.integers(1, min(size - start, 64)))
    fill = draw(st.one_of(st.just(b"\xff" * length), st.binary(min_size=length, max_size=length)))
    return root, name, position + start, fill


@settings(
    max_examples=examples(1.5),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(corruption=corruptions())
def test_deep_validation_reports_every_corruption_that_changes_pylances_scan(scanner, corruption):
    source, name, offset, fill = corruption
    listed = _versions_listing(source).get(name, frozenset())
    with tempfile.TemporaryDirectory(prefix="deep-corruption-") as directory:
        root = Path(directory) / "dataset"
        shutil.copytree(source, root, symlinks=True)
        target = root / "data" / name
        data = bytearray(target.read_bytes())
        data[offset : offset + len(fill)] = fill
        target.write_bytes(bytes(data))
        report = validate(root, all_versions=True, deep=True)
        errors = {f.version for f in report.findings if f.severity is Severity.ERROR}
        before = _deep_findings(source)
        for version in sorted(report.versions):
            if version not in listed:
                new = {
                    (f.version, f.rule, f.message)
                    for f in report.findings
                    if f.version == version and f.severity in SERIOUS
                } - before
                assert not new, f"version {version} does not list {name} but draws {new}"
                continue
            if version in errors:
                continue  # reported: whatever pylance's scan gives, the property holds
            # Not reported: pylance's scan must then be what it was before.
            expected = _baseline(scanner, source, version)
            if not expected["ok"]:
                continue  # pylance cannot scan the untouched version: nothing to compare
            scanned = scanner.scan(root, version)
            assert scanned == expected, (
                f"{source.parent.name} v{version}: {fill!r} at {offset} of {name} makes pylance's scan give "
                f"{scanned} (untouched: {expected}), but validate --deep reports no error: {report.findings}"
            )


@pytest.mark.parametrize("root", CASES, ids=[path.parent.name for path in CASES])
def test_deep_validation_of_the_untouched_corpus_adds_no_error_or_warning(root):
    shallow = validate(root, all_versions=True)
    deep = validate(root, all_versions=True, deep=True)
    before = {(f.version, f.rule, f.message) for f in shallow.findings if f.severity in SERIOUS}
    added = [f for f in deep.findings if f.severity in SERIOUS and (f.version, f.rule, f.message) not in before]
    assert not added, added
