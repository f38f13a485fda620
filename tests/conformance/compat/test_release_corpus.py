"""The compatibility matrix over one release per major line from 0.15 to 14
(``majors``), every feature (tox -e releases; deselected by default: 16
releases write and read about 16 x 16 x 30 datasets). The JSON and the page
are kept as test artifacts under ``$LANCE_CONFORMANCE_ARTIFACTS`` when set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.compat.document import (
    BREAK_MESSAGE,
    ISSUE_9454,
    OVERLAY_FEATURE,
    dumps,
    to_document,
    validate_document,
)
from conformance.compat.releases import expand, major_line_releases, resolve
from conformance.compat.run import known_features, run_compat
from conformance.expectations import version_key
from conformance.peers.old_pylance import release_lines
from conformance.report.compat_html import write_compat_html
from tests.browser import ARTIFACTS_ENV

MAJORS = major_line_releases()

pytestmark = [pytest.mark.releases, pytest.mark.old_pylance(*MAJORS)]


@pytest.fixture(scope="module")
def majors_document(tmp_path_factory):
    releases = [resolve(name) for name in expand(["majors"])]
    run = run_compat(releases, known_features(), workdir=tmp_path_factory.mktemp("compat-majors"))
    document = to_document(run)
    out = Path(os.environ.get(ARTIFACTS_ENV) or tmp_path_factory.mktemp("compat-artifacts"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "compat-majors.json").write_text(dumps(document), encoding="utf-8")
    write_compat_html(out / "compat-majors.html", document)
    return document


def test_majors_hold_one_release_per_major_line_from_0_15_to_14():
    majors = {line.split(".")[0] for line in release_lines() if version_key(line) >= (0, 15)}
    assert {name.split(".")[0] for name in MAJORS} == majors
    assert MAJORS[0] == "0.15.0" and MAJORS[-1].startswith("14.")


def test_the_document_fits_its_schema_and_every_reader_started(majors_document):
    validate_document(majors_document)
    assert majors_document["releases"] == list(MAJORS)
    assert majors_document["reader_failures"] == []
    assert not [w for w in majors_document["writes"] if w["status"] == "writer-failed"]


def test_every_release_reads_its_own_datasets(majors_document):
    diagonal = [c for c in majors_document["cells"] if c["writer"] == c["reader"]]
    assert len(diagonal) == sum(w["status"] == "written" for w in majors_document["writes"])
    assert [c for c in diagonal if c["status"] != "pass"] == []


#: Datasets every reader from 0.20 on reads, whoever wrote them (as measured;
#: 0.15 panics on the 2.0 files of every later release).
PLAIN_FEATURES = ("file-legacy", "file-2.0", "naming-v1", "naming-v2", "txn-append", "txn-delete")


@pytest.mark.parametrize("feature", PLAIN_FEATURES)
def test_readers_from_0_20_read_every_releases_plain_datasets(majors_document, feature):
    cells = [c for c in majors_document["cells"] if c["feature"] == feature and version_key(c["reader"]) >= (0, 20)]
    writers = [w["release"] for w in majors_document["writes"] if w["feature"] == feature and w["status"] == "written"]
    assert len(cells) == len(writers) * len([r for r in MAJORS if version_key(r) >= (0, 20)])
    assert [c for c in cells if c["status"] != "pass"] == []


def test_a_file_version_unknown_to_the_reader_is_refused_or_fails_never_passes(majors_document):
    """2.2 data files read by a release older than 2.2: 0.20 refuses them
    cleanly, others fail (a panic or an error); none returns rows."""
    writers = {
        w["release"] for w in majors_document["writes"] if w["feature"] == "file-2.2" and w["status"] == "written"
    }
    first = min(writers, key=version_key)
    older = [
        c
        for c in majors_document["cells"]
        if c["feature"] == "file-2.2" and version_key(c["reader"]) < version_key(first)
    ]
    assert older and all(c["status"] in ("refused", "fail") for c in older)
    assert any(c["status"] == "refused" for c in older)


def test_the_9454_break_shows_as_failing_cells_with_its_error(majors_document):
    """Writers from 9.0 to 13.x commit a DataOverlay that readers from 1.0 to
    8.x cannot decode, and they fail to open the version; 14.x writes the
    transaction where those readers do not look (the note says it)."""
    (note,) = [n for n in majors_document["notes"] if n["id"] == ISSUE_9454]
    assert note["status"] == "reproduced"
    broken = {(c["writer"], c["reader"]) for c in note["cells"]}
    overlay = [c for c in majors_document["cells"] if c["feature"] == OVERLAY_FEATURE]
    for cell in overlay:
        writer, reader = version_key(cell["writer"]), version_key(cell["reader"])
        expected_break = (9,) <= writer < (14,) and (1,) <= reader < (9,)
        assert ((cell["writer"], cell["reader"]) in broken) == expected_break, cell
        if expected_break:
            assert cell["status"] == "fail" and cell["failure_kind"] == "error"
            assert BREAK_MESSAGE in cell["message"]
    assert broken
