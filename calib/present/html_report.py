"""The whole audit as one self-contained HTML file (figures interactive, works offline).

The page is assembled from :class:`Block` s (headings, paragraphs, key figures,
tables, Plotly figures). Every piece of text, including model names, ids and file
names, goes through :func:`calib.present.format.esc`; no user text is ever inserted as markup.
Size budget: plotly.js is inside the file once, for all its figures, gzip-compressed and
base64-encoded (4.8 MB of JavaScript become 1.9 MB; the browser unpacks it with
``DecompressionStream``, in every browser since 2023), and each figure is its JSON spec
(``<script type="application/json">``, inert) drawn once plotly.js is unpacked. A trace
of more than :data:`MAX_POINTS` points is decimated (evenly spaced points, both ends kept)
before it is written. A report of three judges with every section is about 2.1 MB. No
``<script src>``, stylesheet link or font is fetched from anywhere.

This module builds strings; it does not build figures (they arrive as objects built by
:mod:`calib.present.figures`) and does not compute any metric.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from calib.present.format import esc, sig

if TYPE_CHECKING:
    from calib.audit import Audit
    from calib.dataset import Dataset
    from calib.decision import Decision, JudgeComparison
    from calib.scale import Scale

#: Inline style sheet: readable at laptop width, on a phone (390 px: nothing scrolls the page
#: sideways; a wide table scrolls inside its own box, figures take the width there is, long
#: words break) and in print.
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1100px;
padding:24px;color:#1f2328;line-height:1.45;overflow-wrap:anywhere}
div.tbl{max-width:100%;overflow-x:auto}div.tbl td,div.tbl th{overflow-wrap:normal}
.fig,.calib-plot{max-width:100%}
@media (max-width:640px){body{padding:12px}h1{font-size:1.4em}}
h1{font-size:1.7em;margin-bottom:.2em}h2{font-size:1.35em;margin-top:1.8em;border-bottom:1px solid #d0d7de}
h3{font-size:1.1em;margin-top:1.4em}
p.meta{color:#57606a;font-size:.9em}
p.verdict{font-size:1.08em;background:#f6f8fa;border-left:4px solid #0072B2;padding:10px 14px}
p.warning{background:#fff8c5;border-left:4px solid #bf8700;padding:8px 12px}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.92em}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:right;vertical-align:top}
th{background:#f6f8fa}td.t,th.t{text-align:left}
dl.kv{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:8px 16px;margin:.6em 0 1em}
dl.kv div{border:1px solid #d0d7de;border-radius:6px;padding:6px 10px}
dl.kv dt{color:#57606a;font-size:.85em}dl.kv dd{margin:0;font-size:1.25em;font-weight:600}
dl.kv dd small{font-size:.7em;font-weight:400;color:#57606a}
.fig{margin:.4em 0 1.2em}
"""


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Paragraph:
    text: str
    kind: str = ""  # "", "verdict", "warning", "meta"


@dataclass(frozen=True)
class KeyFigures:
    """Headline numbers: ``(label, value, detail)`` triples (detail: an interval, may be "")."""

    items: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class Table:
    frame: pd.DataFrame
    caption: str = ""


@dataclass(frozen=True)
class Figure:
    """A Plotly figure object (anything with ``to_html``)."""

    figure: Any
    config: dict[str, object] = field(default_factory=dict)


Block = Heading | Paragraph | KeyFigures | Table | Figure

#: Most points a figure's trace keeps in the report (more are decimated evenly).
MAX_POINTS = 2000
#: A trace's per-point arrays, decimated together.
_POINT_ATTRS = ("x", "y", "customdata", "text", "hovertext")


@functools.lru_cache(maxsize=1)
def plotly_bundle() -> tuple[str, str]:
    """``(first line of its licence header, gzip + base64 of plotly.min.js)``: the one
    copy of plotly.js a report carries (compressed once per process; ``mtime=0`` keeps
    the same input the same document)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("plotly")
    assert spec is not None and spec.submodule_search_locations
    js = (Path(next(iter(spec.submodule_search_locations))) / "package_data" / "plotly.min.js").read_bytes()
    version = next((line.strip("* ").strip() for line in js.decode("utf-8", "replace").splitlines()[:3]
                    if "plotly.js v" in line), "plotly.js")
    packed = base64.b64encode(gzip.compress(js, compresslevel=9, mtime=0)).decode("ascii")
    return version, packed


def _decimated(fig: Any) -> Any:
    """``fig`` with every trace of more than :data:`MAX_POINTS` points thinned to evenly
    spaced points (both ends kept; a copy: the caller's figure is not changed)."""
    def size(tr: Any) -> int:
        x = getattr(tr, "x", None)
        return 0 if x is None else len(x)

    if all(size(tr) <= MAX_POINTS for tr in fig.data):
        return fig
    fig = type(fig)(fig)
    for tr in fig.data:
        n = size(tr)
        if n <= MAX_POINTS:
            continue
        keep = np.unique(np.linspace(0, n - 1, MAX_POINTS).round().astype(int))
        changes: dict[str, Any] = {}
        for attr in _POINT_ATTRS:
            v = getattr(tr, attr, None)
            if v is not None and not isinstance(v, str) and len(v) == n:
                changes[attr] = np.asarray(v, dtype=object if attr in ("text", "hovertext") else None)[keep]
        for bar in ("error_x", "error_y"):
            eb = getattr(tr, bar, None)
            for attr in ("array", "arrayminus"):
                v = None if eb is None else getattr(eb, attr, None)
                if v is not None and len(v) == n:
                    changes[f"{bar}.{attr}"] = np.asarray(v)[keep]
        tr.update({k: v for k, v in changes.items() if "." not in k})
        for k, v in changes.items():
            if "." in k:
                bar, attr = k.split(".")
                getattr(tr, bar).update({attr: v})
    return fig


def _figure_html(fig: Any, div_id: str, config: dict[str, object]) -> str:
    """A figure as an empty div and its JSON spec, inert until plotly.js is unpacked
    (``<`` written as its JSON unicode escape: no text in the spec can close the script element)."""
    spec = json.loads(_decimated(fig).to_json())
    spec["config"] = {"responsive": True, **(config or {})}
    text = json.dumps(spec, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
    return (f'<div id="{div_id}" class="calib-plot"></div>'
            f'<script type="application/json" class="calib-spec" data-target="{div_id}">{text}</script>')


def _loader() -> str:
    """The one script that unpacks plotly.js and draws every figure."""
    version, packed = plotly_bundle()
    return (
        "<script>/* " + version + " (MIT licence), gzip + base64 */\n(function(){"
        "function draw(){document.querySelectorAll('script.calib-spec').forEach(function(s){"
        "var spec=JSON.parse(s.textContent);Plotly.newPlot(document.getElementById(s.dataset.target),"
        "spec.data,spec.layout||{},spec.config||{});});}"
        "if(window.Plotly){draw();return;}"
        "if(!('DecompressionStream' in window)){document.querySelectorAll('.calib-plot').forEach(function(d){"
        "d.textContent='This browser cannot unpack the figures (it needs DecompressionStream, 2023 or later).';});"
        "return;}"
        "var b=atob('" + packed + "'),u=new Uint8Array(b.length);for(var i=0;i<b.length;i++)u[i]=b.charCodeAt(i);"
        "new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream('gzip'))).text()"
        ".then(function(src){(0,eval)(src);draw();});"
        "})();</script>"
    )


def _cell(value: object) -> str:
    if value is None or isinstance(value, float):
        return sig(value, 4)
    return esc(value)


def table_html(frame: pd.DataFrame, caption: str = "") -> str:
    """A DataFrame as an HTML table, every header and cell escaped, in a box that scrolls
    sideways on its own when the table is wider than the page (a phone)."""
    out = ['<div class="tbl"><table>']
    if caption:
        out.append(f"<caption>{esc(caption)}</caption>")
    text_cols = {c for c in frame.columns if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c])}
    out.append("<thead><tr>")
    for c in frame.columns:
        cls = ' class="t"' if c in text_cols else ""
        out.append(f"<th{cls}>{esc(c)}</th>")
    out.append("</tr></thead><tbody>")
    for row in frame.itertuples(index=False):
        out.append("<tr>")
        for c, v in zip(frame.columns, row, strict=True):
            cls = ' class="t"' if c in text_cols else ""
            out.append(f"<td{cls}>{_cell(v)}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def render(title: str, blocks: Sequence[Block], *, subtitle: str = "") -> str:
    """The complete HTML document.

    Parameters
    ----------
    title:
        Page title (escaped).
    blocks:
        Content in order.
    subtitle:
        A line under the title (escaped), e.g. the generator and the settings.
    """
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # nothing on this page may be fetched from elsewhere
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:; "
        "font-src data:\">",
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
    ]
    if subtitle:
        parts.append(f'<p class="meta">{esc(subtitle)}</p>')
    any_figure = False
    for i, b in enumerate(blocks):
        if isinstance(b, Heading):
            lv = min(max(b.level, 2), 4)
            parts.append(f"<h{lv}>{esc(b.text)}</h{lv}>")
        elif isinstance(b, Paragraph):
            cls = f' class="{esc(b.kind)}"' if b.kind else ""
            parts.append(f"<p{cls}>{esc(b.text)}</p>")
        elif isinstance(b, KeyFigures):
            parts.append('<dl class="kv">')
            for label, value, detail in b.items:
                small = f" <small>{esc(detail)}</small>" if detail else ""
                parts.append(f"<div><dt>{esc(label)}</dt><dd>{esc(value)}{small}</dd></div>")
            parts.append("</dl>")
        elif isinstance(b, Table):
            parts.append(table_html(b.frame, b.caption))
        elif isinstance(b, Figure):
            parts.append(f'<div class="fig">{_figure_html(b.figure, f"calib-fig-{i}", b.config)}</div>')
            any_figure = True
        else:  # pragma: no cover - typing guards this
            raise TypeError(f"not a report block: {type(b).__name__}")
    if any_figure:  # plotly.js once, after every figure's div
        parts.append(_loader())
    parts.append("</body></html>")
    return "\n".join(parts)


# ------------------------------------------------------------------ the audit report
@dataclass(frozen=True, eq=False)
class ModelResults:
    """Everything the report shows about one model, as the engine computed it.

    ``headline`` holds ``(label, value, interval)`` texts already formatted by the
    caller (so the report and the dashboard print the same strings); ``figures``
    are Plotly figures from :mod:`calib.present.figures`; ``tables`` are ``(caption, frame)``.
    """

    name: str
    headline: tuple[tuple[str, str, str], ...] = ()
    verdict: str = ""
    sentences: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    figures: tuple[Any, ...] = ()
    tables: tuple[tuple[str, pd.DataFrame], ...] = ()
    sections: tuple[tuple[str, tuple[Block, ...]], ...] = ()
    load_summary: str = ""
    meanings: tuple[str, ...] = ()
    small_print: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, ds: Dataset, a: Audit, *, headline: tuple[tuple[str, str, str], ...] = (),
        figures: Sequence[Any] = (), tables: Sequence[tuple[str, pd.DataFrame]] = (),
        sections: Sequence[tuple[str, tuple[Block, ...]]] = (),
    ) -> ModelResults:
        """One model's results from its dataset and audit: the verdict's first sentence as
        the verdict, the others as sentences, the audit's notes as warnings and the load
        summary (``source: summary``), what the headline figures mean and which tests the
        verdict uses (:mod:`calib.present.explain`, the sentences the pages and ``calib
        audit`` print); the rest as given."""
        from calib.present import explain

        return cls(
            name=ds.name, headline=tuple(headline), verdict=a.verdict[0] if a.verdict else "",
            sentences=tuple(a.verdict[1:]), warnings=tuple(a.notes), figures=tuple(figures), tables=tuple(tables),
            sections=tuple(sections), load_summary=f"{ds.report.source}: {ds.report.summary()}",
            meanings=explain.audit_meanings(a), small_print=(explain.verdict_tests(a.level),),
        )


def audit_report(
    models: Sequence[ModelResults], *, comparison: pd.DataFrame | None = None,
    comparison_figures: Sequence[Any] = (), settings: str = "", title: str = "Calibration audit",
    config: dict[str, object] | None = None,
) -> str:
    """The dashboard's whole audit as one HTML document (see :func:`render`).

    Order: the comparison of all models (when there are several), then per model
    its headline figures, verdict, what the most used values meant, figures,
    tables and extra sections (recalibration, routing), and the load report summary.
    """
    cfg = dict(config or {})
    blocks: list[Block] = []
    if comparison is not None and len(comparison):
        blocks.append(Heading("Models side by side"))
        blocks.append(Table(comparison))
        blocks.extend(Figure(f, cfg) for f in comparison_figures)
    for m in models:
        blocks.append(Heading(m.name))
        if m.load_summary:
            blocks.append(Paragraph(m.load_summary, kind="meta"))
        if m.headline:
            blocks.append(KeyFigures(tuple(m.headline)))
        if m.verdict:
            blocks.append(Paragraph(m.verdict, kind="verdict"))
        blocks.extend(Paragraph(w, kind="warning") for w in m.warnings)
        blocks.extend(Paragraph(s) for s in m.sentences)
        if m.meanings:
            blocks.append(Heading("What the figures mean", level=3))
            blocks.extend(Paragraph(s) for s in m.meanings)
        blocks.extend(Paragraph(s, kind="meta") for s in m.small_print)
        blocks.extend(Figure(f, cfg) for f in m.figures)
        for caption, frame in m.tables:
            blocks.append(Heading(caption, level=3))
            blocks.append(Table(frame))
        for heading, content in m.sections:
            blocks.append(Heading(heading, level=3))
            blocks.extend(b if not isinstance(b, Figure) or b.config else Figure(b.figure, cfg) for b in content)
    return render(title, blocks, subtitle=settings)


# ------------------------------------------------------------------ the threshold decision
def decision_section(
    decision: Decision, *, scale: Scale | None = None, cost_figure: Any = None, risk_figure: Any = None,
    judges: JudgeComparison | None = None, point: bool = False, config: dict[str, object] | None = None,
) -> tuple[str, tuple[Block, ...]]:
    """The threshold decision as a report section ``(heading, blocks)`` (the shape of
    :attr:`ModelResults.sections`): the decision card (threshold, target, guarantee,
    items accepted, error with its bound, per 1,000 items, cost with its interval), the
    recommendation's sentence, the capacity line and AURC with their intervals, the
    figures given (built by :mod:`calib.present.decision_figures`: this module imports
    no plotly), the per-group table and, with ``judges``, the judges table and the
    paired comparisons. Every text is escaped by :func:`render`."""
    from calib.present.decision import aurc_text, capacity_text, decision_card

    card = decision_card(decision, scale=scale, point=point)
    cfg = dict(config or {})
    blocks: list[Block] = [KeyFigures(tuple(_card_items(card))), Paragraph(card.message, kind="verdict")]
    blocks.append(Paragraph(card.per_1000))
    blocks.append(Paragraph(f"Certified on: {decision.recommendation.certified_on}.", kind="meta"))
    cap = capacity_text(decision.costs.capacity, decision.costs.on, scale)
    if cap:
        blocks.append(Paragraph(cap))
    blocks.append(Paragraph(aurc_text(decision.aurc) + "."))
    blocks.extend(Figure(f, cfg) for f in (cost_figure, risk_figure) if f is not None)
    if decision.per_group is not None:
        blocks.append(Heading("Per-group thresholds", level=4))
        blocks.append(Table(per_group_frame(decision, scale=scale), decision.per_group.message))
    if judges is not None:
        blocks += judges_blocks(judges)
    return "Threshold decision", tuple(blocks)


def _card_items(card: Any) -> list[tuple[str, str, str]]:
    items = [("Review threshold", card.threshold, ""), ("Target", card.target, card.guarantee),
             ("Accepted unseen", card.accepted, ""), ("Error among accepted", card.error, "")]
    if card.cost:
        items.append(("Expected cost", card.cost, ""))
    return items


def per_group_frame(decision: Decision, *, scale: Scale | None = None) -> pd.DataFrame:
    """The per-group thresholds as text: group, threshold, accepted of total, errors,
    upper bound, whether its own items certify it (and why not: then every item goes to
    a person)."""
    from calib.present.decision import group_rows

    return pd.DataFrame(group_rows(decision, scale=scale))


def judges_blocks(judges: JudgeComparison, *, with_costs: bool | None = None) -> list[Block]:
    """The judges at one target: one row per judge, then the paired comparisons."""
    from calib.present.decision import judge_rows, paired_lines

    costs = any(j.cheapest_cost is not None for j in judges.judges) if with_costs is None else with_costs
    out: list[Block] = [Heading("Judges at the same target", level=4),
                        Table(pd.DataFrame(judge_rows(judges, with_costs=costs)))]
    out += [Paragraph(line) for line in paired_lines(judges)]
    return out


def decision_report(
    name: str, decision: Decision, *, scale: Scale | None = None, cost_figure: Any = None,
    risk_figure: Any = None, judges: JudgeComparison | None = None, point: bool = False, settings: str = "",
    extra: Sequence[Block] = (), config: dict[str, object] | None = None,
) -> str:
    """A whole page: the decision of one dataset first (:func:`decision_section`), then
    ``extra`` blocks (the routing table at the threshold routed at)."""
    heading, blocks = decision_section(decision, scale=scale, cost_figure=cost_figure, risk_figure=risk_figure,
                                       judges=judges, point=point, config=config)
    return render(f"{heading}: {name}", [*blocks, *extra], subtitle=settings)
