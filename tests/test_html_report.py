"""The self-contained HTML report (calib.present.html_report): offline, escaped, interactive."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd

from calib.present import figures
from calib.present import html_report as hr
from calib.table import from_counts

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>![a](http://evil.example/i.png)'


class _Collect(HTMLParser):
    """Every tag and attribute of a document, and the text of each element kind."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[tuple[str, str]] = []
        self._stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._stack.append(tag)

    def handle_endtag(self, tag):
        if self._stack and self._stack[-1] == tag:
            self._stack.pop()

    def handle_data(self, data):
        self.text.append((self._stack[-1] if self._stack else "", data))


def parse(doc: str) -> _Collect:
    p = _Collect()
    p.feed(doc)
    return p


def _table():
    return from_counts(np.array([80.0, 90, 100]), np.array([100, 300, 600]), np.array([56, 220, 450]))


def test_user_text_is_inert_everywhere():
    fig = figures.stated_histogram([(EVIL, _table())], figures.palette([EVIL]))
    doc = hr.render(
        EVIL,
        [
            hr.Heading(EVIL),
            hr.Paragraph(EVIL, kind="verdict"),
            hr.KeyFigures(((EVIL, EVIL, EVIL),)),
            hr.Table(pd.DataFrame({EVIL: [EVIL], "n": [3]}), caption=EVIL),
            hr.Figure(fig),
        ],
        subtitle=EVIL,
    )
    p = parse(doc)
    # no img tag and no script tag other than plotly's own inline ones (no src)
    assert not [t for t, _ in p.tags if t == "img"]
    assert all("src" not in a for t, a in p.tags if t == "script")
    # the text reads back exactly as given, in the heading, the paragraph and the table
    texts = {tag: [] for tag, _ in p.text}
    for tag, data in p.text:
        texts[tag].append(data)
    assert EVIL in "".join(texts["h1"]) and EVIL in "".join(texts["h2"])
    assert EVIL in "".join(texts["td"]) and EVIL in "".join(texts["th"])
    # inside the figure JSON the name is HTML-escaped (Plotly would render tags in it)
    assert "&lt;script&gt;" in doc


def test_works_offline_plotly_embedded_once_and_nothing_fetched():
    fig = figures.stated_histogram([("m", _table())], figures.palette(["m"]))
    doc = hr.render("r", [hr.Figure(fig), hr.Figure(fig)])
    p = parse(doc)
    scripts = [a for t, a in p.tags if t == "script"]
    assert scripts and all("src" not in a for a in scripts)
    assert not [a for t, a in p.tags if t == "link"]
    # plotly.js itself is inside, once
    assert doc.count("window.Plotly") >= 1
    assert len(re.findall(r"plotly\.js v\d", doc)) == 1
    # a content security policy forbids any fetch
    csp = next(a["content"] for t, a in p.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp
    # two figures, two divs, stable ids
    assert doc.count('id="calib-fig-0"') == 1 and doc.count('id="calib-fig-1"') == 1


def test_table_cells_and_missing_values():
    doc = hr.table_html(pd.DataFrame({"model": ["a", "b"], "ece": [0.1234567, float("nan")], "n": [1, 2]}))
    p = parse(doc)
    cells = [d for t, d in p.text if t == "td"]
    assert cells == ["a", "0.1235", "1", "b", "—", "2"]


def test_same_input_same_document():
    fig = figures.stated_histogram([("m", _table())], figures.palette(["m"]))
    a = hr.render("r", [hr.Heading("h"), hr.Figure(fig)])
    b = hr.render("r", [hr.Heading("h"), hr.Figure(fig)])
    assert a == b


def test_decision_section_escapes_group_and_judge_names(tmp_path):
    import json

    from calib import decision
    from calib.loading import load
    from calib.readers.base import LoadOptions

    rng = np.random.default_rng(5)
    f = tmp_path / "g.jsonl"
    with f.open("w") as fh:
        for i in range(900):
            v = int(rng.choice([60, 80, 95, 100]))
            fh.write(json.dumps({"id": f"q{i}", "confidence": v, "correct": bool(rng.random() < v / 100 - 0.02),
                                 "subject": EVIL if i % 2 else "plain"}) + "\n")
    ds = load(str(f), name=EVIL, options=LoadOptions(group_key="subject"))
    d = decision.decide(ds, target=0.1, cost_review=1, cost_miss=5, by_group=True, reps=50)
    jc = decision.compare_judges([ds, load(str(f), name="other")], target=0.1, reps=50)
    heading, blocks = hr.decision_section(d, scale=ds.table.scale, judges=jc)
    assert heading == "Threshold decision"
    doc = hr.render(EVIL, list(blocks))
    p = parse(doc)
    assert not [t for t, _ in p.tags if t in ("img", "script")]
    cells = "".join(data for tag, data in p.text if tag == "td")
    assert EVIL in cells and "plain" in cells  # group and judge names read back as text
    dd = "".join(data for tag, data in p.text if tag == "dd")
    assert f"{d.recommendation.threshold:g} (0-100 scale)" in dd
    assert f"expected cost {d.costs.cheapest.cost.value:.3f} per item" in dd
    frame = hr.per_group_frame(d, scale=ds.table.scale)
    assert list(frame["Group"]) == [g.group for g in d.per_group.groups]
    certified = frame["certified on its own items"]
    assert list(certified).count("yes") == sum(not g.pooled_fallback for g in d.per_group.groups)
    assert all(c == "yes" or c.startswith("no: ") for c in certified)
    page = hr.decision_report(EVIL, d, scale=ds.table.scale)
    assert "<title>Threshold decision: &lt;script&gt;" in page
