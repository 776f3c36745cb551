"""Every page of the dashboard, drawn in Chromium and measured: the pieces shared by
tests/e2e/test_screenshots.py (which fails on what it measures) and tools/screenshots.py
(which regenerates docs/screenshots/ and the manual's images).

Contract
--------
:data:`DATASETS` are the two loads every page is shown with (the three synthetic judges of
``sample_data/``, and the lm-eval output folder ``sample_data/lmeval_calib_mc`` opened as a
sample, the way a person picks it on the Data page); :data:`SIZES` the phone and laptop
viewports. :func:`page_paths` reads the pages from the sidebar's navigation (so a page added
or renamed is covered without a change here); :func:`open_page` opens one with a view in the
URL and waits until every Plotly chart has drawn and the app is idle; :func:`measure` reads
the drawn page (:data:`MEASURE_JS`) and :func:`problems` turns a measurement into sentences,
empty when the page passes.

The rules :func:`problems` applies
----------------------------------
- **Figures use their space.** For every drawn Plotly figure (a ``.js-plotly-plot`` element,
  in the frame :func:`dashboard.chart.show_figure` draws it in, or in the page itself; its
  ``_fullData`` and ``_fullLayout`` hold the traces and the axis ranges Plotly drew), on
  every numeric axis (linear or log; category and date axes are skipped) the data's extent
  must cover at least :data:`MIN_OCCUPANCY` of the axis range. The extent is that of every
  visible trace's points, including error bars (``error_x``/``error_y``) and filled bands,
  and zero for the value axis of a bar. Left out, as reference lines rather than data:
  a trace with at most two points drawn as lines only (the y = x diagonal, a threshold line,
  "no change"), traces without any finite point (legend entries), and layout shapes. An axis
  whose data sits at one position (one bar, one stated value) has no extent to fill and is
  skipped.
- **Headline figures carry their interval.** Every ``[data-testid=stMetric]`` whose value
  holds a number shows an interval (``calib.present.explain.INTERVAL_PATTERN``) in its own
  text or in the caption right below it (``dashboard.layout.metric`` prints the interval
  there), or its label is in ``calib.present.explain.COUNTS`` (counts need none). A metric
  without a digit in its value ("none qualifies", the missing mark) has no figure to bound.
- **The first screen says what the page answers.** The element ``.st-key-page-question``
  (``dashboard.layout.page_question``) exists, and its top is inside the first viewport.
- **Nothing scrolls sideways.** ``document.scrollingElement`` and the main area are no wider
  than the viewport (1 px of rounding allowed), and no visible element of the main block
  reaches past the right edge of the viewport unless an ancestor clips or scrolls it (a
  table scrolling inside its own frame is fine).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dashboard.chart import FRAME_SELECTOR

JUDGES = "judge_a_synthetic.jsonl,judge_b_synthetic.jsonl,judge_c_synthetic.jsonl"
#: (name, URL query): what is loaded. 300 resamples keep the bands honest and the pages quick.
#: The judges come without a map (the pages before a choice), the lm-eval folder (continuous
#: option scores) with a Platt map, so that a continuous map's chart is drawn too.
DATASETS: tuple[tuple[str, str], ...] = (
    ("judges", f"sample={JUDGES}&reps=300"),
    ("lmeval", "sample=lmeval_calib_mc&reps=300&map=platt"),
)
#: (name, viewport): a phone (iPhone 12-14) and a laptop.
SIZES: tuple[tuple[str, dict[str, int]], ...] = (
    ("phone", {"width": 390, "height": 844}),
    ("laptop", {"width": 1440, "height": 900}),
)
#: Share of an axis's range the data must cover.
MIN_OCCUPANCY = 0.5
TIMEOUT_MS = 180_000

#: Every drawn Plotly figure, as a JavaScript expression: in the page, and in each frame
#: (same origin: the frame's document and its elements' ``_fullLayout`` are readable).
PLOTS_JS = """[...document.querySelectorAll('.js-plotly-plot'),
  ...[...document.querySelectorAll('iframe')].flatMap(f => {
    try { return f.contentDocument ? [...f.contentDocument.querySelectorAll('.js-plotly-plot')] : []; }
    catch (e) { return []; } })]"""

#: Resolves once every figure frame on the page (:data:`dashboard.chart.FRAME_SELECTOR`) has
#: drawn its SVG and the app is idle.
SETTLED_JS = """() => {
  if (!document.querySelector('[data-testid=stMain]')) return false;
  const charts = [...document.querySelectorAll(FRAME_JSON)];
  const drawn = charts.every(c => c.contentDocument && c.contentDocument.querySelector('.main-svg'));
  const running = document.querySelector('[data-testid=stStatusWidget], [data-testid=stSpinner]');
  const stale = document.querySelector('[data-stale=true]');
  const skeleton = document.querySelector('[data-testid=stSkeleton], [data-testid=stAppSkeleton]');
  return drawn && !running && !stale && !skeleton;
}""".replace("FRAME_JSON", json.dumps(FRAME_SELECTOR))

#: The pages linked from the sidebar's navigation: their paths (``/Overview``), in order.
NAV_JS = """() => [...document.querySelectorAll('[data-testid=stSidebarNav] a[href]')]
  .map(a => new URL(a.href).pathname)"""

MEASURE_JS = r"""() => {
  const vw = window.innerWidth, vh = window.innerHeight;
  const num = v => (typeof v === 'number' && isFinite(v)) ? v : null;
  const flat = a => (a == null) ? [] : (Array.isArray(a) || ArrayBuffer.isView(a)) ? Array.from(a) : [a];
  function ends(tr, letter) {
    // every position the trace draws on this axis, error bars and bands included
    const raw = flat(tr[letter]);
    const out = [];
    const err = tr['error_' + letter];
    const on = err && err.visible && err.type === 'data';
    const plus = on ? flat(err.array) : [], minus = on ? flat(err.symmetric ? err.array : err.arrayminus) : [];
    raw.forEach((v, i) => {
      const x = num(typeof v === 'string' ? Number(v) : v);
      if (x === null) return;
      out.push(x);
      if (on) {
        if (num(plus[i]) !== null) out.push(x + plus[i]);
        if (num(minus[i]) !== null) out.push(x - minus[i]);
      }
    });
    return out;
  }
  const figures = [];
  for (const el of PLOTS_JS) {
    const fl = el._fullLayout, data = el._fullData;
    if (!fl || !data) continue;
    const title = (fl.title && fl.title.text) || '';
    const axes = {};
    for (const tr of data) {
      if (tr.visible !== true) continue;
      const lineOnly = (tr.mode || '') === 'lines' && (!tr.fill || tr.fill === 'none');
      const xs = ends(tr, 'x'), ys = ends(tr, 'y');
      const pts = Math.max(flat(tr.x).length, flat(tr.y).length);
      if (tr.type === 'scatter' && lineOnly && pts <= 2) continue;  // a reference line
      const isBar = tr.type === 'bar';
      const valueLetter = isBar ? (tr.orientation === 'h' ? 'x' : 'y') : null;
      for (const [letter, vals] of [['x', xs], ['y', ys]]) {
        if (tr.type === 'histogram' && letter !== (tr.orientation === 'h' ? 'y' : 'x')) continue;
        if (!vals.length) continue;
        const id = (letter === 'x' ? tr.xaxis : tr.yaxis) || letter;
        const key = id.replace(/^([xy])(\d*)$/, (m, a, d) => a + 'axis' + d);
        const ax = fl[key];
        if (!ax) continue;
        const a = axes[key] || (axes[key] = {axis: key, type: ax.type, range: ax.range ? [...ax.range] : null,
                                             title: (ax.title && ax.title.text) || '', lo: Infinity, hi: -Infinity,
                                             positions: new Set()});
        let vs = vals;
        if (ax.type === 'log') vs = vals.filter(v => v > 0).map(Math.log10);
        if (letter === valueLetter) vs = vs.concat([0]);
        for (const v of vs) { a.lo = Math.min(a.lo, v); a.hi = Math.max(a.hi, v); a.positions.add(v); }
      }
    }
    const rect = el.getBoundingClientRect();
    figures.push({title, width: rect.width, height: rect.height,
                  axes: Object.values(axes).map(a => ({...a, positions: a.positions.size}))});
  }
  const metrics = [...document.querySelectorAll('[data-testid=stMetric]')].map(m => {
    const label = (m.querySelector('[data-testid=stMetricLabel]') || {}).innerText || '';
    let text = m.innerText;
    const box = m.closest('[data-testid=stElementContainer]');
    const next = box && box.nextElementSibling;
    if (next && next.querySelector('[data-testid=stCaptionContainer]')) text += '\n' + next.innerText;
    return {label: label.trim(), text};
  });
  const q = document.querySelector('.st-key-page-question');
  const qr = q && q.getBoundingClientRect();
  const main = document.querySelector('[data-testid=stMain]');
  const block = document.querySelector('[data-testid=stMainBlockContainer]') || main;
  const overflow = [];
  if (block) {
    for (const e of block.querySelectorAll('*')) {
      const r = e.getBoundingClientRect();
      if (!r.width || !r.height || r.right <= vw + 1) continue;
      let clipped = false;
      for (let p = e.parentElement; p && p !== block.parentElement; p = p.parentElement) {
        const ox = getComputedStyle(p).overflowX;
        if (ox !== 'visible' && p.getBoundingClientRect().right <= vw + 1) { clipped = true; break; }
      }
      if (!clipped) overflow.push({tag: e.tagName.toLowerCase(), testid: e.dataset.testid || '',
                                   cls: String(e.className && e.className.baseVal !== undefined ? e.className.baseVal : e.className).slice(0, 60),
                                   right: Math.round(r.right), text: (e.innerText || '').slice(0, 60)});
    }
  }
  const se = document.scrollingElement;
  return {
    vw, vh, figures, metrics,
    question: q ? {top: qr.top, bottom: qr.bottom, text: q.innerText.slice(0, 300)} : null,
    scroll: {doc: [se.scrollWidth, se.clientWidth], main: main ? [main.scrollWidth, main.clientWidth] : null},
    overflow: overflow.slice(0, 10),
    errors: [...document.querySelectorAll('[data-testid=stException]')].map(e => e.innerText.slice(0, 300)),
  };
}""".replace("PLOTS_JS", PLOTS_JS)


@dataclass(frozen=True)
class Contract:
    """What helper D's explanation module says about headline figures.

    Attributes
    ----------
    counts:
        Labels of headline metrics that are counts and need no interval.
    interval:
        The compiled pattern of an interval as the pages write it.
    """

    counts: frozenset[str]
    interval: re.Pattern[str]


def contract() -> Contract:
    """The headline-figure contract from :mod:`calib.present.explain`."""
    from calib.present import explain

    return Contract(frozenset(explain.COUNTS), re.compile(explain.INTERVAL_PATTERN))


#: What changes while a page is still being drawn: the main area's height and text length.
SIGNATURE_JS = """() => { const m = document.querySelector('[data-testid=stMain]');
  return m ? [m.scrollHeight, m.innerText.length, PLOTS_JS.length] : null; }""".replace("PLOTS_JS", PLOTS_JS)


def settle(page: Any, *, rounds: int = 20) -> None:
    """Wait until the app is idle, every chart drawn, and the page unchanged for 0.6 s (a run
    can pause between two elements without showing the running indicator)."""
    page.wait_for_function(SETTLED_JS, timeout=TIMEOUT_MS, polling=200)
    before = page.evaluate(SIGNATURE_JS)
    for _ in range(rounds):
        page.wait_for_timeout(600)  # on purpose: proves nothing changes for 0.6 s
        page.wait_for_function(SETTLED_JS, timeout=TIMEOUT_MS, polling=200)
        now = page.evaluate(SIGNATURE_JS)
        if now == before:
            return
        before = now


def open_page(page: Any, base: str, path: str, query: str) -> None:
    """Open ``path`` with ``query`` and wait until it has drawn."""
    page.goto(f"{base}{path}?{query}")
    # an element drawn: the script has started (before it, an empty page is "idle" too)
    page.locator("[data-testid=stMain] [data-testid=stElementContainer]").first.wait_for(timeout=TIMEOUT_MS)
    settle(page)


def page_paths(page: Any, base: str, query: str) -> list[str]:
    """The paths of the pages in the sidebar's navigation (the entry page first)."""
    open_page(page, base, "/", query)
    paths: list[str] = page.evaluate(NAV_JS)
    return list(dict.fromkeys(paths)) or ["/"]


def measure(page: Any) -> dict[str, Any]:
    """The drawn page as :data:`MEASURE_JS` reads it (scrolled to the top first)."""
    page.evaluate(
        "() => { const m = document.querySelector('[data-testid=stMain]'); if (m) m.scrollTo(0, 0); }"
    )
    return page.evaluate(MEASURE_JS)


#: Tallest screenshot of a whole page, in CSS pixels (a long report page is cut there).
MAX_SHOT_HEIGHT = 7000


def full_screenshot(page: Any, path: str) -> None:
    """The whole main area in one picture: Streamlit scrolls inside ``stMain``, not the
    document, so the viewport is made as tall as the content for the shot, then restored."""
    size = dict(page.viewport_size)
    tall = int(
        page.evaluate(
            "() => { const m = document.querySelector('[data-testid=stMain]');"
            " return m ? m.scrollHeight : document.body.scrollHeight; }"
        )
    )
    page.mouse.move(1, 1)  # no hover label in the picture
    if tall > size["height"]:
        height = min(tall, MAX_SHOT_HEIGHT)
        page.set_viewport_size({"width": size["width"], "height": height})
        page.wait_for_function("h => window.innerHeight === h", arg=height, timeout=TIMEOUT_MS)
        settle(page)
    page.screenshot(path=path)
    page.set_viewport_size(size)


def figure_problems(figures: Sequence[dict[str, Any]], *, min_share: float = MIN_OCCUPANCY) -> list[str]:
    """Axes whose data covers less than ``min_share`` of their range."""
    out = []
    for f in figures:
        for a in f["axes"]:
            if a["type"] not in ("linear", "log") or not a["range"] or a["positions"] < 2:
                continue
            lo, hi = sorted(float(v) for v in a["range"])
            span = hi - lo
            if span <= 0:
                continue
            share = (min(a["hi"], hi) - max(a["lo"], lo)) / span
            if share < min_share:
                out.append(
                    f"figure {f['title']!r}: {a['axis']} ({a['title']!r}) data {a['lo']:.4g} to "
                    f"{a['hi']:.4g} fills {100 * share:.0f}% of its range {lo:.4g} to {hi:.4g}"
                )
    return out


def problems(m: dict[str, Any], rules: Contract | None) -> list[str]:
    """Everything wrong with a measured page (see the module docstring); empty when it passes."""
    out = [f"an exception on the page: {e}" for e in m["errors"]]
    out += figure_problems(m["figures"])
    if rules is None:
        out.append("calib.present.explain (COUNTS, INTERVAL_PATTERN) is missing: metrics not checked")
    else:
        for x in m["metrics"]:
            value = x["text"].replace(x["label"], "", 1)
            if not re.search(r"\d", value):
                continue  # no figure to bound: a word ("none qualifies") or the missing mark
            if x["label"] not in rules.counts and not rules.interval.search(x["text"]):
                out.append(f"metric {x['label']!r} shows no interval: {x['text']!r}")
    q = m["question"]
    if q is None:
        out.append("no page question (.st-key-page-question)")
    elif not 0 <= q["top"] < m["vh"]:
        out.append(f"the page question starts at {q['top']:.0f} px, below the first screen ({m['vh']} px)")
    doc_w, doc_c = m["scroll"]["doc"]
    if doc_w > doc_c + 1:
        out.append(f"the page scrolls sideways: {doc_w} px wide in {doc_c} px")
    if m["scroll"]["main"] and m["scroll"]["main"][0] > m["scroll"]["main"][1] + 1:
        out.append("the main area scrolls sideways: {} px wide in {} px".format(*m["scroll"]["main"]))
    out += [
        f"element past the right edge ({o['right']} px > {m['vw']}): {o['tag']} {o['testid']} "
        f"{o['cls']!r} {o['text']!r}"
        for o in m["overflow"]
    ]
    return out


def shot_name(load: str, size: str, path: str) -> str:
    """``judges-phone-overview.png`` for the page at ``/Overview`` (``data`` for ``/``)."""
    page = path.strip("/").lower() or "data"
    return f"{load}-{size}-{page}.png"


def compact_png(src: Path, dest: Path) -> None:
    """A copy of ``src`` at ``dest`` in 256 colours (a page is flat colours and text: a third of
    the bytes, no visible change), for the screenshots kept in the repository."""
    from PIL import Image

    with Image.open(src) as im:
        im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(dest, optimize=True)


def visit_all(
    browser: Any,
    base: str,
    paths: Sequence[str],
    load: str,
    size: str,
    out: Path,
    *,
    also: Path | None = None,
    rules: Contract | None = None,
) -> list[str]:
    """Open every page of ``paths`` with the load ``load`` at the viewport ``size`` in one
    browser context, in sequence: measure it, save its whole-page screenshot as
    ``out/<shot_name>`` (and a compact copy in ``also``), and return every problem found,
    each prefixed with its page, load and size."""
    query = dict(DATASETS)[load]
    out.mkdir(parents=True, exist_ok=True)
    if also is not None:
        also.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport=dict(dict(SIZES)[size]), device_scale_factor=1)
    found: list[str] = []
    try:
        page = ctx.new_page()
        for path in paths:
            open_page(page, base, path, query)
            m = measure(page)
            found += [f"{path} ({load}, {size}): {p}" for p in problems(m, rules)]
            shot = out / shot_name(load, size, path)
            full_screenshot(page, str(shot))
            if also is not None:
                compact_png(shot, also / shot.name)
    finally:
        ctx.close()
    return found
