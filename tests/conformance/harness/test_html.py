"""The HTML page of a harness run (conformance/harness/html.py and its
template), read back with html.parser into a small tree and compared with
the history and the anomalies it was built from."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from conformance.drivers.writes import WriteKind, WriteOutcome
from conformance.harness.anomalies import Anomaly, AnomalyKind, Role, Witness, sentence
from conformance.harness.history import SETUP_WRITER, Attempt
from conformance.harness.html import render_html, write_html, writer_label
from conformance.harness.report import OUTCOMES, outcome_counts
from conformance.harness.runner import run
from conformance.harness.spec import RunSpec

Outcome = WriteOutcome


@dataclass
class Element:
    tag: str
    attrs: dict
    children: list[Element] = field(default_factory=list)
    parts: list = field(default_factory=list)  # text and child elements, in order

    @property
    def text(self) -> str:
        return "".join(part if isinstance(part, str) else part.text for part in self.parts)

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def by_id(self, element_id: str) -> Element:
        return next(e for e in self.walk() if e.attrs.get("id") == element_id)

    def has_id(self, element_id: str) -> bool:
        return any(e.attrs.get("id") == element_id for e in self.walk())

    def select(self, tag: str, css_class: str | None = None) -> list[Element]:
        return [e for e in self.walk() if e.tag == tag and (css_class is None or css_class in e.classes)]

    def children_of(self, tag: str, css_class: str | None = None) -> list[Element]:
        return [e for e in self.children if e.tag == tag and (css_class is None or css_class in e.classes)]


class TreeBuilder(HTMLParser):
    """The page as a tree of elements; tags that could fetch something from elsewhere are listed."""

    VOID = {"meta", "br", "img", "link", "input", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.root = Element("document", {})
        self.stack = [self.root]
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("script", "link", "img", "iframe", "object", "embed") or {"src", "href"} & set(attributes):
            self.external.append(tag)
        if "url(" in (attributes.get("style") or ""):
            self.external.append(tag)
        element = Element(tag, attributes)
        self.stack[-1].children.append(element)
        self.stack[-1].parts.append(element)
        if tag not in self.VOID:
            self.stack.append(element)

    def handle_endtag(self, tag):
        while len(self.stack) > 1:
            if self.stack.pop().tag == tag:
                break

    def handle_data(self, data):
        self.stack[-1].parts.append(data)


def _read(page: str) -> TreeBuilder:
    builder = TreeBuilder()
    builder.feed(page)
    builder.close()
    return builder


def _history() -> list[Attempt]:
    """The set-up, then 20 attempts of three writers starting 100 s after
    it (as an engine's start-up would), every outcome among them."""
    outcomes = [Outcome.ACKNOWLEDGED, Outcome.CONFLICT, Outcome.ACKNOWLEDGED, Outcome.ERROR, Outcome.UNKNOWN]
    attempts = [Attempt("setup", SETUP_WRITER, WriteKind.CREATE, {}, None, Outcome.ACKNOWLEDGED, 1, None, 0.0, 0.5)]
    version = 1
    for index in range(20):
        writer, outcome = index % 3, outcomes[index % len(outcomes)]
        committed = None
        if outcome is Outcome.ACKNOWLEDGED:
            version += 1
            committed = version
        error = None if outcome is Outcome.ACKNOWLEDGED else f"Failure {index}: " + "frame\n" * 3 + f"cause {index}"
        attempts.append(
            Attempt(
                f"w{writer}-{index}",
                writer,
                WriteKind.APPEND,
                {"ids": [index]},
                version - 1,
                outcome,
                committed,
                error,
                100.0 + index,
                100.5 + index,
            )
        )
    return attempts


def _bar_position(bar: Element) -> tuple[float, float]:
    style = bar.attrs["style"]
    left = float(re.search(r"left:([\d.]+)%", style).group(1))
    width = float(re.search(r"width:([\d.]+)%", style).group(1))
    return left, width


def test_the_timeline_has_a_lane_per_writer_drawn_from_the_first_attempt(tmp_path):
    """One lane per writer (the set-up has none), a bar per attempt coloured
    by its outcome; the earliest attempt starts at the left edge, though the
    set-up ran 100 s before it, and the latest ends at the right edge."""
    history = _history()
    path = write_html(tmp_path, history)
    assert path == tmp_path / "report.html"
    page = _read(path.read_text(encoding="utf-8"))
    writers = [a for a in history if a.writer >= 0]

    lanes = page.root.by_id("timeline").select("tr")[1:]
    assert [int(lane.attrs["data-writer"]) for lane in lanes] == sorted({a.writer for a in writers})
    positions = {}
    for lane in lanes:
        writer = int(lane.attrs["data-writer"])
        bars = lane.select("div", "bar")
        own = sorted((a for a in writers if a.writer == writer), key=lambda a: a.start)
        assert [bar.attrs["data-op-id"] for bar in bars] == [a.op_id for a in own]
        for bar, attempt in zip(bars, own, strict=True):
            assert OUTCOMES[list(Outcome).index(attempt.outcome)] in bar.classes
            positions[attempt.op_id] = _bar_position(bar)
        cells = [cell.text for cell in lane.children_of("td")]
        assert cells[0] == writer_label(writer)
        assert cells[1:5] == [str(n) for n in outcome_counts(own).values()]
    first = min(writers, key=lambda a: a.start)
    last = max(writers, key=lambda a: a.end)
    assert positions[first.op_id][0] == 0.0
    assert abs(sum(positions[last.op_id]) - 100.0) < 0.01
    assert "setup" not in positions
    assert page.external == []


def test_the_totals_are_the_command_lines_and_the_set_up_is_not_an_attempt():
    history = _history()
    page = _read(render_html(history, None, ()))
    writers = [a for a in history if a.writer >= 0]
    assert page.root.by_id("total-attempts").text == str(len(writers)) == "20"
    expected = {"acknowledged": 8, "conflict": 4, "error": 4, "unknown": 4}
    assert {o: int(page.root.by_id(f"total-{o}").text) for o in OUTCOMES} == expected
    assert page.root.by_id("verdict").text == "clean: no anomaly"
    assert page.root.by_id("total-anomalies").text == "0"
    # One writer's attempts follow one another; the three writers' never meet (100 + i .. 100.5 + i).
    assert page.root.by_id("overlapping").text == "0"
    # 8 acknowledged over the commit window: the first attempt's start to the last acknowledged end.
    acknowledged_end = max(a.end for a in writers if a.outcome is Outcome.ACKNOWLEDGED)
    window = acknowledged_end - min(a.start for a in writers)
    assert page.root.by_id("commit-window").text == f"{window:.3f} s"
    assert page.root.by_id("per-second").text == f"{8 / window:.2f}"


def test_each_failed_attempt_is_listed_with_its_error():
    history = _history()
    page = _read(render_html(history))
    failed = page.root.by_id("failed").select("tr", "failed")
    expected = [a for a in history if a.writer >= 0 and a.outcome is not Outcome.ACKNOWLEDGED]
    assert [row.attrs["data-op-id"] for row in failed] == [a.op_id for a in expected]
    for row, attempt in zip(failed, expected, strict=True):
        assert row.select("pre", "attempt-error")[0].text == attempt.error
        assert attempt.outcome.value.replace("indeterminate", "unknown") in row.text


def test_anomalies_are_sentences_with_roles_versions_and_consequences_nested():
    """A root anomaly reads as its sentence, its operations' roles beside
    what each operation was, its versions; its consequences are nested under
    it, not listed beside it; the verdict counts roots with correct plurals."""
    history = _history()
    lost = Anomaly(AnomalyKind.LOST_APPEND, Witness.of([("w0-0", Role.LOST)], [5, 6], [0]))
    root = Anomaly(
        AnomalyKind.BLIND_REBASE,
        Witness.of([("w2-2", Role.REBASED), ("w0-0", Role.LOST)], [6], detail="read 3, committed on 5"),
        (lost,),
    )
    alone = Anomaly(AnomalyKind.DUPLICATE, Witness.of([("w1-1", Role.WROTE_COPY)], [4], [7]))

    page = _read(render_html(history, None, [alone]))
    assert page.root.by_id("verdict").text == "1 anomaly"

    page = _read(render_html(history, None, [root, alone]))
    assert page.root.by_id("verdict").text == "2 anomalies, with 1 consequence"
    assert page.root.by_id("total-anomalies").text == "2"
    items = page.root.by_id("anomalies").children_of("li", "anomaly")
    assert [item.select("p", "sentence")[0].text for item in items] == [sentence(root), sentence(alone)]
    roles = {row.attrs["data-op-id"]: [c.text for c in row.children_of("td")] for row in items[0].select("tr")[1:3]}
    assert roles["w2-2"][:4] == [
        "w2-2",
        Role.REBASED.value,
        writer_label(2),
        "append",
    ]
    assert roles["w0-0"][1] == Role.LOST.value
    assert items[0].select("span", "versions")[0].text == "6"
    nested = items[0].select("ol", "consequences")[0].children_of("li", "anomaly")
    assert [item.select("p", "sentence")[0].text for item in nested] == [sentence(lost)]
    assert nested[0].select("span", "versions")[0].text == "5, 6"


def test_skipped_kinds_are_shown_and_unknown_ones_said_so():
    history = _history()
    assert _read(render_html(history, skipped=["upsert", "restore"])).root.by_id("skipped").text == "upsert, restore"
    assert _read(render_html(history, skipped=[])).root.by_id("skipped").text == "none"
    assert "unknown" in _read(render_html(history, skipped=None)).root.by_id("skipped").text


def test_text_from_the_history_is_escaped():
    """An operation id, arguments or an error with markup in it stays text."""
    attempts = [
        Attempt("<b>w0-1</b>", 0, WriteKind.APPEND, {}, 1, Outcome.ACKNOWLEDGED, 2, None, 1.0, 2.0),
        Attempt("w1-1", 1, WriteKind.DELETE, {"where": "<script>"}, 1, Outcome.ERROR, None, '<img src="x">&', 1.5, 2.5),
    ]
    page_text = render_html(attempts)
    assert "<b>w0-1</b>" not in page_text and "<script>" not in page_text and "<img" not in page_text
    page = _read(page_text)
    assert page.root.by_id("versions").select("tr")[1].children_of("td")[2].text == "<b>w0-1</b>"
    assert page.root.by_id("failed").select("pre", "attempt-error")[0].text == '<img src="x">&'
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
    page = _read((tmp_path / "out" / "report.html").read_text(encoding="utf-8")).root

    committed = sorted(
        (a for a in result.history if a.version is not None and a.outcome.value == "acknowledged"),
        key=lambda a: a.version,
    )
    versions = [[c.text for c in row.children_of("td")] for row in page.by_id("versions").select("tr")[1:]]
    assert [(int(c[0]), c[1], c[2]) for c in versions] == [
        (a.version, writer_label(a.writer), a.op_id) for a in committed
    ]
    assert versions[0][:3] == ["1", writer_label(SETUP_WRITER), "setup"]
    lanes = {int(row.attrs["data-writer"]): row for row in page.by_id("timeline").select("tr")[1:]}
    assert sorted(lanes) == list(range(spec.writers))
    for writer, lane in lanes.items():
        own = [a for a in result.history if a.writer == writer]
        assert [c.text for c in lane.children_of("td")[1:5]] == [str(n) for n in outcome_counts(own).values()]
    assert page.by_id("total-attempts").text == str(spec.writers * spec.operations)
    assert page.by_id("total-anomalies").text == str(len(result.report.anomalies)) == "0"
    assert page.by_id("skipped").text == "none"
