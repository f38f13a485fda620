"""The HTML page of a harness run (conformance/harness/html.py), read back
with html.parser and compared with the history it was built from."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from html.parser import HTMLParser

from conformance.harness.history import SETUP_WRITER
from conformance.harness.html import OUTCOMES, render_html, write_html, writer_label
from conformance.harness.runner import run
from conformance.harness.spec import RunSpec


class Outcome(enum.Enum):
    ACKNOWLEDGED = "acknowledged"
    CONFLICT = "conflict"
    ERROR = "error"
    INDETERMINATE = "indeterminate"


@dataclass(frozen=True)
class StandInAttempt:
    op_id: str
    writer: int
    kind: str
    args: dict
    read_version: int | None
    outcome: Outcome
    version: int | None
    error: str | None
    start: float
    end: float


@dataclass(frozen=True)
class StandInAnomaly:
    name: str
    witness: dict = field(default_factory=dict)


class PageReader(HTMLParser):
    """The page's tables (rows of cell texts and the row's attributes), its
    anomaly items and every tag that could fetch something from elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[tuple[dict, list[str]]]] = {}
        self.anomalies: list[str] = []
        self.external: list[str] = []
        self.texts_by_id: dict[str, str] = {}
        self._table: str | None = None
        self._row: tuple[dict, list[str]] | None = None
        self._cell: list[str] | None = None
        self._anomaly: list[str] | None = None
        self._id: tuple[str, list[str]] | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("script", "link", "img", "iframe", "object", "embed") or any(
            name in ("src", "href") for name in attributes
        ):
            self.external.append(tag)
        if "url(" in (attributes.get("style") or ""):
            self.external.append(tag)
        if tag == "table":
            self._table = attributes.get("id", "")
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self._row = (attributes, [])
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "li" and attributes.get("class") == "anomaly":
            self._anomaly = []
        if "id" in attributes and tag in ("td", "p"):
            self._id = (attributes["id"], [])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row[1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "li" and self._anomaly is not None:
            self.anomalies.append("".join(self._anomaly))
            self._anomaly = None
        if tag in ("td", "p") and self._id is not None:
            self.texts_by_id[self._id[0]] = "".join(self._id[1]).strip()
            self._id = None

    def handle_data(self, data):
        for sink in (self._cell, self._anomaly, self._id[1] if self._id else None):
            if sink is not None:
                sink.append(data)


def _history() -> list[StandInAttempt]:
    outcomes = [Outcome.ACKNOWLEDGED, Outcome.CONFLICT, Outcome.ACKNOWLEDGED, Outcome.ERROR, Outcome.INDETERMINATE]
    attempts, version = [], 1
    for index in range(20):
        writer, outcome = index % 3, outcomes[index % len(outcomes)]
        committed = None
        if outcome is Outcome.ACKNOWLEDGED:
            version += 1
            committed = version
        attempts.append(
            StandInAttempt(
                f"w{writer}-{index}",
                writer,
                "append",
                {"ids": [index]},
                version - 1,
                outcome,
                committed,
                None,
                100.0 + index,
                100.5 + index,
            )
        )
    return attempts


def _read(page: str) -> PageReader:
    reader = PageReader()
    reader.feed(page)
    reader.close()
    return reader


def test_the_page_shows_each_version_its_writer_and_each_writers_outcomes(tmp_path):
    """The timeline lists every acknowledged attempt in version order with
    its writer; the per-writer table counts each outcome as the history
    does; nothing is fetched from elsewhere."""
    history = _history()
    path = write_html(tmp_path, history)
    assert path == tmp_path / "report.html"
    page = _read(path.read_text(encoding="utf-8"))

    timeline = [cells for _, cells in page.tables["timeline"][1:]]
    acknowledged = sorted((a for a in history if a.outcome is Outcome.ACKNOWLEDGED), key=lambda a: a.version or 0)
    assert [(int(c[0]), c[1], c[2]) for c in timeline] == [
        (a.version, writer_label(a.writer), a.op_id) for a in acknowledged
    ]
    writers = {cells[0]: cells[1:5] for _, cells in page.tables["writers"][1:]}
    for writer in {a.writer for a in history}:
        expected = [str(sum(a.writer == writer and a.outcome.value == o for a in history)) for o in OUTCOMES]
        assert writers[writer_label(writer)] == expected
    for outcome in OUTCOMES:
        assert page.texts_by_id[f"total-{outcome}"] == str(sum(a.outcome.value == outcome for a in history))
    assert page.texts_by_id["verdict"] == "clean: no anomaly"
    assert page.anomalies == []
    assert page.external == []


def test_each_anomaly_is_shown_with_its_witness():
    anomalies = [
        StandInAnomaly("lost append", {"op_ids": ["w1-4"], "versions": [5, 6], "rows": [4]}),
        StandInAnomaly("fragment-id reuse", {"fragment_id": 3, "versions": [7, 9]}),
    ]
    page = _read(render_html(_history(), None, anomalies))
    assert page.texts_by_id["verdict"] == "2 anomalies"
    assert page.texts_by_id["total-anomalies"] == "2"
    assert [item.split("{")[0] for item in page.anomalies] == ["lost append", "fragment-id reuse"]
    assert '"w1-4"' in page.anomalies[0] and '"rows": [\n    4\n  ]' in page.anomalies[0]
    assert '"fragment_id": 3' in page.anomalies[1]


def test_text_from_the_history_is_escaped():
    """An operation id or an error with markup in it stays text."""
    attempt = StandInAttempt("<b>w0-1</b>", 0, "append<script>", {}, 1, Outcome.ACKNOWLEDGED, 2, None, 1.0, 2.0)
    page_text = render_html([attempt])
    assert "<b>w0-1</b>" not in page_text and "<script>" not in page_text
    page = _read(page_text)
    assert page.tables["timeline"][1][1][2] == "<b>w0-1</b>"
    assert page.external == []


def test_the_runner_writes_the_page_of_its_run(spark_local, tmp_path):
    """A real run on local Spark: DIR/report.html names, for every version
    the history says was committed, the writer that committed it, and the
    per-writer outcomes and totals are the history's."""
    spec = RunSpec(
        uri=str(tmp_path / "t.lance"),
        storage_options={},
        writer="reference",
        writers=3,
        operations=4,
        workloads={"append": 3.0, "delete": 1.0},
        seed=5,
        stable_row_ids=False,
        naming="v2",
    )
    result = run(spec, spark_local, tmp_path / "out", validate=False)
    page = _read((tmp_path / "out" / "report.html").read_text(encoding="utf-8"))

    committed = sorted(
        (a for a in result.history if a.version is not None and a.outcome.value == "acknowledged"),
        key=lambda a: a.version,
    )
    timeline = [(int(cells[0]), cells[1], cells[2]) for _, cells in page.tables["timeline"][1:]]
    assert timeline == [(a.version, writer_label(a.writer), a.op_id) for a in committed]
    assert timeline[0] == (1, writer_label(SETUP_WRITER), "setup")
    writers = {cells[0]: cells[1:5] for _, cells in page.tables["writers"][1:]}
    for writer in range(spec.writers):
        expected = [str(sum(a.writer == writer and a.outcome.value == o for a in result.history)) for o in OUTCOMES]
        assert writers[writer_label(writer)] == expected
    assert page.texts_by_id["total-anomalies"] == str(len(result.report.anomalies)) == "0"
    assert page.external == []
