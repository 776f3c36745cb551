"""Benchmark (not a test): the dashboard in a real browser (Debian's Chromium via Playwright).

Prints, for the goals of issue 3 and issue 5:

1. **Cold start to first paint** (goal < 4 s): from launching ``streamlit run app.py``
   to the Data page's uploader visible in a freshly opened page (Chromium itself is
   already running: its own start-up is not the app's). Repeated ``--cold`` times,
   each with a new server process; then the same for a one-uploader Streamlit app, the
   floor that Streamlit and Chromium set on this machine.
2. **A 1,000,000-row dataset already loaded** (uploaded through the file input, then the
   Routing page opened), the review threshold moved with the keyboard ``--moves`` times
   (ArrowRight / ArrowLeft between 80 and 81, every move changes the numbers):

   - *key press -> updated numbers* (goal < 150 ms, issue 29): ``performance.now()`` in
     the page, from the ``keydown`` event to the moment a ``MutationObserver`` sees the text
     of "Sent to a person" change; beside its floor, the same on a bare Streamlit page of
     one select slider and one metric (:data:`KEYS_FLOOR_APP`);
   - *key press -> page settled*: to the first animation frame after the run's last
     message (figures redrawn too);
   - *rerun request -> last message handled*: from the rerun request leaving the page to
     the page's handler taking the ``script_finished`` message (WebSocket frames, decoded
     with Streamlit's own protobuf classes). The handler runs on the page's main thread, so
     this includes the page's backlog of rendering the run's earlier messages; timestamps
     printed by an instrumented server showed the run itself ending 30-45 ms after the
     request, the rest being the page drawing;
   - *server time of the rerun* (goal < 50 ms): the threshold fragment's own duration,
     measured in-process by ``bench/bench_dashboard.py`` (AppTest) when ``--server-side``
     is given (it loads the same 1,000,000 rows once more).
3. **Issue 5: a 57-subject lm-eval folder, 14,042 samples** (``bench_lmeval_folder.write_folder``)
   uploaded through the folder input to a fresh server: time to the load report, and to
   the Overview's numbers (audit with 2,000 bootstrap resamples) after a click on
   "Overview" (goal: upload -> audited under 5 s), and to the per-subject table below
   them. Once right after the page is painted (``--pauses 0``: the upload then waits
   for the server's post-paint imports) and once 3 s later (a person picking the folder).

4. **Issue 13: a share link of three judges** opened on the Routing page of a warm server
   (opened once before): time to its first drawn figure in a fresh browser context (goal
   1.5 s, issue 29), beside the Data page's first paint on the same server and the first figure of a
   page that draws one tiny figure and nothing else, twice: with ``st.plotly_chart`` (a
   fresh context loads Streamlit's 4.7 MB Plotly chunk before any figure is drawn) and
   with the dashboard's own figure frame (:mod:`dashboard.chart`: plotly.js's basic
   bundle, 1.2 MB, in a frame). The dashboard's pages get a head of their own
   (:mod:`calib.hosting.page_head`) and its server answers Streamlit's files from memory
   (:mod:`calib.hosting.static_assets`); the floors are bare Streamlit apps, without either.
   Then the same link in a browser that has opened it before (one context, a new tab
   each time: Streamlit's hashed assets come from its cache), as a reviewer's second
   visit; and over an emulated Internet connection (Chromium's network emulation: 40 ms
   each way, 20 Mbit/s down, 5 up), as a reviewer elsewhere opens it.

   Each open is timed twice: **in the page**, from the start of the navigation to the
   first figure's data drawn in its frame (``performance.timeOrigin`` + ``now()``, one
   clock across the page and its frames; :data:`SEEN_JS`), what a person waits for and
   the budget's measure; and Playwright's **wall time**, from ``page.goto`` to Playwright
   seeing the figure, which adds the harness's own polling and messages (0.1-0.3 s).

Usage::

    python bench/bench_browser.py [--rows 1000000] [--moves 40] [--cold 3] [--server-side]
    python bench/bench_browser.py --only keys --rows 200000   # one part only

Medians and 95th percentiles are printed; nothing is asserted about speed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from dashboard.chart import FRAME_SELECTOR  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, Server, start_server  # noqa: E402

VIEWPORT = {"width": 1400, "height": 900}
METRIC = "[data-testid=stMetric]"

#: Arms the measurement of one key press: the keydown time, and the time the text of the
#: metric labelled ``label`` (in the main area) first differs from what it is now.
ARM_JS = """([label]) => {
  const find = () => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMetric]')]
      .find(e => e.innerText.startsWith(label));
  const value = () => { const e = find(); return e ? e.querySelector('[data-testid=stMetricValue]').innerText : null; };
  const start = value();
  window.__bench = {t0: null, t1: null, start, now: null};
  document.addEventListener('keydown', () => { window.__bench.t0 = performance.now(); },
                            {capture: true, once: true});
  const obs = new MutationObserver(() => {
    const v = value();
    if (v !== null && v !== start && window.__bench.t1 === null) {
      window.__bench.t1 = performance.now(); window.__bench.now = v; obs.disconnect();
    }
  });
  obs.observe(document.querySelector('[data-testid=stMain]'), {subtree: true, childList: true, characterData: true});
  return start;
}"""
#: performance.now() at the first animation frame from now (what the user sees next).
NEXT_FRAME_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))))"


def make_jsonl(rows: int, seed: int = 0) -> bytes:
    """A judge that states every integer from 50 to 100 (so each step of the threshold
    moves items), right with probability 0.85 x stated."""
    rng = np.random.default_rng(seed)
    values = rng.integers(50, 101, size=rows)
    right = rng.random(rows) < values / 100 * 0.85
    tf = np.where(right, "true", "false")
    ids = np.char.add("i", np.arange(rows).astype(str))
    lines = [f'{{"id": "{i}", "confidence": {v}, "correct": {c}}}'
             for i, v, c in zip(ids.tolist(), values.tolist(), tf.tolist(), strict=True)]
    return ("\n".join(lines) + "\n").encode()


def summary(xs: list[float], unit: str = "ms", scale: float = 1000.0) -> str:
    a = np.asarray(xs) * scale
    d = 0 if unit == "ms" else 2
    return (f"median {np.median(a):.{d}f} {unit}, p95 {np.percentile(a, 95):.{d}f} {unit}, "
            f"min {a.min():.{d}f}, max {a.max():.{d}f} (n = {len(a)})")


#: Installed before the app's scripts: timestamps (``performance.now()``) and bytes of
#: every binary WebSocket message, so the rerun request and the ``script_finished``
#: message can be timed on the same clock as the key press.
WS_TAP_JS = """(() => {
  const Orig = window.WebSocket;
  window.__ws = [];
  const b64 = (buf) => {
    const a = buf instanceof ArrayBuffer ? new Uint8Array(buf) : new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    if (a.length > 65536) return null;
    let s = ''; for (let i = 0; i < a.length; i++) s += String.fromCharCode(a[i]); return btoa(s);
  };
  class Tap extends Orig {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (ev) => {
        if (typeof ev.data !== 'string') window.__ws.push([performance.now(), 'in', b64(ev.data)]);
      });
    }
    send(data) {
      if (typeof data !== 'string') window.__ws.push([performance.now(), 'out', b64(data)]);
      return super.send(data);
    }
  }
  window.WebSocket = Tap;
})();"""


class Frames:
    """The Streamlit WebSocket messages of a page (see :data:`WS_TAP_JS`), decoded with
    Streamlit's own protobuf classes."""

    def __init__(self, page) -> None:  # type: ignore[no-untyped-def]
        page.add_init_script(WS_TAP_JS)
        self.page = page

    def since(self, t0: float) -> list[tuple[float, str, str]]:
        """``(time ms, direction, message type)`` of the messages at or after ``t0`` (ms)."""
        import base64

        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        out = []
        for t, way, data in self.page.evaluate("(t0) => window.__ws.filter(m => m[0] >= t0)", t0):
            kind = "?"
            if data is not None:
                raw = base64.b64decode(data)
                msg = (BackMsg if way == "out" else ForwardMsg).FromString(raw)
                kind = msg.WhichOneof("type") or "?"
            out.append((t, way, kind))
        return out

    def clear(self) -> None:
        self.page.evaluate("() => { window.__ws.length = 0; }")


def wait_until(pred: Callable[[], object], timeout: float, step: float = 0.01) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = pred()
        if out:
            return out
        time.sleep(step)
    raise TimeoutError("condition not met")


def metric_value(page, label: str, where: str = "[data-testid=stMain]") -> str:  # type: ignore[no-untyped-def]
    loc = page.locator(f"{where} {METRIC}", has_text=label).first
    return loc.locator("[data-testid=stMetricValue]").inner_text()


def goto_page(page, name: str) -> None:  # type: ignore[no-untyped-def]
    """Switch page the way a person does (the sidebar navigation keeps the session)."""
    page.locator("[data-testid=stSidebarNav] a", has_text=name).first.click()


# ----------------------------------------------------------------------------- parts
def bench_cold_start(browser, repeats: int) -> None:  # type: ignore[no-untyped-def]
    print(f"\n== cold start to first paint ({repeats} fresh servers)")
    totals, health, paint = [], [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            ctx = browser.new_context(viewport=VIEWPORT)
            page = ctx.new_page()
            t0 = time.perf_counter()
            server = start_server(Path(tmp))
            t1 = time.perf_counter()
            try:
                page.goto(server.url, wait_until="commit")
                page.get_by_test_id("stFileUploaderDropzone").first.wait_for(state="visible", timeout=60_000)
                page.evaluate(NEXT_FRAME_JS)
                t2 = time.perf_counter()
            finally:
                ctx.close()
                server.stop()
            totals.append(t2 - t0)
            health.append(t1 - t0)
            paint.append(t2 - t1)
    print(f"launch -> server healthy:           {summary(health, 's', 1)}")
    print(f"healthy -> uploader painted:        {summary(paint, 's', 1)}")
    print(f"launch -> first paint (goal < 4 s): {', '.join(f'{x:.2f} s' for x in totals)}; "
          f"median {statistics.median(totals):.2f} s")


#: The floor under the cold start: a Streamlit app of one title and one file uploader.
BASELINE_APP = 'import streamlit as st\nst.title("baseline")\nst.file_uploader("upload")\n'


def bench_cold_baseline(browser, repeats: int) -> None:  # type: ignore[no-untyped-def]
    """The same measurement on a one-uploader Streamlit app: what Streamlit and Chromium
    cost on this machine before calib does anything."""
    import os
    import urllib.request

    from tests.e2e.conftest import free_port

    print(f"\n== baseline: a one-uploader Streamlit app, cold start to first paint ({repeats} fresh servers)")
    totals = []
    with tempfile.TemporaryDirectory() as tmp:
        app = Path(tmp) / "baseline.py"
        app.write_text(BASELINE_APP)
        for _ in range(repeats):
            port = free_port()
            ctx = browser.new_context(viewport=VIEWPORT)
            page = ctx.new_page()
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", str(app), "--server.headless=true",
                 f"--server.port={port}", "--server.address=127.0.0.1", "--server.fileWatcherType=none"],
                cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env={**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"})
            try:
                wait_until(lambda port=port: _healthy(urllib.request, port), 60, 0.05)
                page.goto(f"http://127.0.0.1:{port}", wait_until="commit")
                page.get_by_test_id("stFileUploaderDropzone").first.wait_for(state="visible", timeout=60_000)
                page.evaluate(NEXT_FRAME_JS)
                totals.append(time.perf_counter() - t0)
            finally:
                ctx.close()
                proc.terminate()
                proc.wait()
    print(f"launch -> first paint: {', '.join(f'{x:.2f} s' for x in totals)}; median {statistics.median(totals):.2f} s")


def _healthy(request, port: int) -> bool:  # type: ignore[no-untyped-def]
    try:
        with request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


def upload_file(page, path: Path, timeout_s: float = 600) -> float:  # type: ignore[no-untyped-def]
    """Upload ``path`` through the Data page's file input; seconds to its load report."""
    t = time.perf_counter()
    page.locator(".st-key-upload_files_0, [class*=st-key-upload_files_]").first.get_by_test_id(
        "stFileUploaderDropzoneInput").set_input_files(str(path))
    page.locator(f"[data-testid=stMain] {METRIC}", has_text="Rows kept").first.wait_for(timeout=timeout_s * 1000)
    return time.perf_counter() - t


def routing_loaded(browser, server: Server, rows: int, tmp: Path):  # type: ignore[no-untyped-def]
    """A page of ``server`` with a ``rows``-row judge (:func:`make_jsonl`) uploaded and the
    Routing page open: ``(context, page, frames)``; prints the upload's times."""
    t = time.perf_counter()
    path = tmp / f"judge_{rows}.jsonl"
    path.write_bytes(make_jsonl(rows))
    print(f"wrote {path.name}: {path.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - t:.1f} s")
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    frames = Frames(page)
    page.goto(server.url)
    page.get_by_test_id("stFileUploaderDropzone").first.wait_for()
    t_up = upload_file(page, path)
    print(f"upload -> load report shown: {t_up:.1f} s (Rows kept {metric_value(page, 'Rows kept')})")
    t = time.perf_counter()
    goto_page(page, "Routing")
    page.locator(f"[data-testid=stMain] {METRIC}", has_text="Sent to a person").first.wait_for(timeout=600_000)
    print(f"Routing page first shown (routing resamples drawn): {time.perf_counter() - t:.1f} s")
    return ctx, page, frames


@dataclass(frozen=True)
class KeyPresses:
    """Seconds per key press: to the updated numbers (the budget's measure), to the page
    settled, and from the rerun request to the run's last message handled."""

    numbers: list[float]
    settled: list[float]
    roundtrip: list[float]


def key_presses(page, frames: Frames, moves: int, label: str = "Sent to a person") -> KeyPresses:  # type: ignore[no-untyped-def]
    """The slider "Review threshold" of ``page`` moved with the keyboard ``moves`` times
    (ArrowRight, ArrowLeft in turn: every move changes the numbers), each timed from the
    ``keydown`` to the text of the metric ``label`` changing (:data:`ARM_JS`)."""
    slider = page.get_by_role("slider", name="Review threshold")
    slider.focus()
    page.wait_for_timeout(1000)
    numbers, settled, roundtrip = [], [], []
    for i in range(moves):
        key = "ArrowRight" if i % 2 == 0 else "ArrowLeft"
        frames.clear()
        page.evaluate(ARM_JS, [label])
        page.keyboard.press(key)
        page.wait_for_function("() => window.__bench.t1 !== null", timeout=60_000, polling="raf")
        b = page.evaluate("window.__bench")
        # the run is over when its script_finished message has arrived
        done = wait_until(lambda b=b: [m for m in frames.since(b["t0"]) if m[2] == "script_finished"], 60)
        t_frame = page.evaluate(NEXT_FRAME_JS)
        sent = [m for m in frames.since(b["t0"]) if m[1] == "out" and m[2] == "rerun_script"]
        numbers.append((b["t1"] - b["t0"]) / 1000)
        settled.append((t_frame - b["t0"]) / 1000)
        if sent:
            roundtrip.append((done[0][0] - sent[0][0]) / 1000)
        page.wait_for_timeout(150)  # a person's pause between presses
    return KeyPresses(numbers, settled, roundtrip)


def bench_keys(browser, server: Server, rows: int, moves: int, tmp: Path) -> KeyPresses:  # type: ignore[no-untyped-def]
    print(f"\n== {rows:,} rows loaded: review threshold moved with the keyboard ({moves} moves)")
    ctx, page, frames = routing_loaded(browser, server, rows, tmp)
    try:
        got = key_presses(page, frames, moves)
        print(f"key press -> updated numbers (goal < 150 ms): {summary(got.numbers)}")
        print(f"key press -> page settled (figures redrawn):  {summary(got.settled)}")
        print(f"rerun request -> last message handled:        {summary(got.roundtrip)}")
        slider = page.get_by_role("slider", name="Review threshold")
        print(f"slider now at {slider.input_value()}; 'Sent to a person' = {metric_value(page, 'Sent to a person')}")
    finally:
        ctx.close()
    return got


#: The floor under a key press: a Streamlit page of one select slider (the Routing page's
#: label and positions) and one metric that shows a number computed from it.
KEYS_FLOOR_APP = """import streamlit as st

v = st.select_slider("Review threshold", options=list(range(50, 101)), value=80)
st.metric("Sent to a person", f"{v * 11_759:,}")
"""


def keys_floor(browser, tmp: Path, moves: int) -> KeyPresses:  # type: ignore[no-untyped-def]
    """:func:`key_presses` on :data:`KEYS_FLOOR_APP` (a bare Streamlit server, warm)."""
    with floor_server(tmp, KEYS_FLOOR_APP) as server:
        ctx = browser.new_context(viewport=VIEWPORT)
        try:
            page = ctx.new_page()
            frames = Frames(page)
            page.goto(server.url)
            page.locator(f"[data-testid=stMain] {METRIC}", has_text="Sent to a person").first.wait_for()
            return key_presses(page, frames, moves)
        finally:
            ctx.close()


def bench_server_side(rows: int) -> None:
    print(f"\n== server time of the rerun after a threshold change, {rows:,} rows (bench_dashboard.py, AppTest)")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_dashboard.py"), "--rows", str(rows)],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    print(out.stdout.rstrip() or out.stderr[-2000:])


#: In-page clock for issue 5 (``Date.now()``, the same wall clock as Python's
#: ``time.time()``): when the load report's "Rows kept" appears, click "Overview" at once
#: (a person would click later, never sooner), then note when the Overview's "Accuracy"
#: and its "Per group" table appear. Measured in the page, so Playwright's polling and
#: round trips are not counted.
LMEVAL_JS = """() => {
  const t = window.__lm = {rows: null, click: null, acc: null, groups: null};
  const main = () => document.querySelector('[data-testid=stMain]');
  const metric = (label) => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMetric]')]
      .some(e => e.innerText.startsWith(label));
  const obs = new MutationObserver(() => {
    if (t.rows === null && metric('Rows kept')) {
      t.rows = Date.now();
      const link = [...document.querySelectorAll('[data-testid=stSidebarNav] a')].find(a => a.innerText.includes('Overview'));
      t.click = Date.now(); link.click();
    }
    if (t.click !== null && t.acc === null && metric('Accuracy')) t.acc = Date.now();
    if (t.acc !== null && t.groups === null &&
        [...main().querySelectorAll('h3')].some(h => h.innerText.includes('Per group'))) t.groups = Date.now();
  });
  obs.observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def bench_lmeval(browser, server: Server, tmp: Path, pause: float) -> None:  # type: ignore[no-untyped-def]
    """One upload of the folder to a server that has served nothing else, ``pause``
    seconds after the Data page is painted (the time a person takes to pick the folder
    in the file dialog; the server imports pandas, scipy and the readers meanwhile)."""
    from bench_lmeval_folder import write_folder

    folder = tmp / "mmlu_lmeval_out"
    if not folder.exists():
        folder.mkdir()
        write_folder(folder)
    n = sum(1 for p in folder.glob("samples_*") for line in p.open("rb") if line.strip())
    size = sum(p.stat().st_size for p in folder.iterdir())
    print(f"\n== issue 5: lm-eval folder, {len(list(folder.iterdir()))} files, {n:,} samples, {size / 1e6:.1f} MB, "
          f"uploaded {pause:g} s after the page is painted (fresh server)")
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.goto(server.url)
    page.get_by_test_id("stFileUploaderDropzone").first.wait_for()
    page.wait_for_timeout(pause * 1000)
    page.evaluate(LMEVAL_JS)
    t0 = time.time()
    page.locator("[class*=st-key-upload_folder_]").get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        str(folder))
    page.wait_for_function("() => window.__lm.groups !== null", timeout=180_000, polling=100)
    t = {k: v / 1000 - t0 for k, v in page.evaluate("window.__lm").items()}
    acc = metric_value(page, "Accuracy")
    print(f"upload -> load report (Rows kept):                       {t['rows']:.2f} s")
    print(f"click on Overview -> headline numbers (Accuracy {acc}):  {t['acc'] - t['click']:.2f} s")
    print(f"upload -> audited: Overview numbers and verdict shown (goal < 5 s): {t['acc']:.2f} s")
    print(f"upload -> per-subject table shown too (57 groups compared):  {t['groups']:.2f} s")
    ctx.close()


#: The three judges a share link of the share benchmark holds (issue 13: "three judges loaded").
SHARE_JUDGES = ("judge_a_synthetic.jsonl", "judge_b_synthetic.jsonl", "judge_c_synthetic.jsonl")


#: What an open waits for: a CSS selector in the page, or (frame selector, selector inside
#: the first such frame).
Target = str | tuple[str, str]


def _find(page, target: Target):  # type: ignore[no-untyped-def]
    """The first element ``target`` names, in the page or inside its first matching frame."""
    if isinstance(target, tuple):
        return page.frame_locator(target[0]).first.locator(target[1]).first
    return page.locator(target).first


#: Installed in every document of a context: the time (``performance.timeOrigin +
#: performance.now()``, the same clock in every frame) at which the page's target first
#: exists: in a figure's frame, Plotly's drawn SVG; in the page, the selector
#: ``window.__seenSelector`` names. Polled every 4 ms (a MutationObserver on a page that
#: Streamlit's React rewrites thousands of times would cost more than it measures).
SEEN_JS = """(() => {
  const inFrame = window !== window.top;
  const tick = () => {
    const sel = inFrame ? '.js-plotly-plot .main-svg .trace' : window.__seenSelector;
    if (sel && document.querySelector(sel)) { window.__seenAt = performance.timeOrigin + performance.now(); return; }
    setTimeout(tick, 4);
  };
  tick();
})();"""


@dataclass(frozen=True)
class Opened:
    """One open of a page: ``in_page`` from the start of the navigation to the target drawn,
    on the page's own clock (what a person waits for); ``wall`` from Playwright's
    ``goto`` to Playwright seeing it (that, plus the harness's own polling and messages)."""

    in_page: float
    wall: float


def _context(browser, selector: Target):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    if not isinstance(selector, tuple):
        ctx.add_init_script(f"window.__seenSelector = {json.dumps(selector)};")
    ctx.add_init_script(SEEN_JS)
    return ctx


#: The emulated connection of a reviewer elsewhere: (one-way latency ms, download, upload
#: bytes/s): 40 ms, 20 Mbit/s down, 5 Mbit/s up.
INTERNET = (40.0, 20e6 / 8, 5e6 / 8)


def _seconds_to(browser, url: str, selector: Target, timeout_s: float = 120,  # type: ignore[no-untyped-def]
                network: tuple[float, float, float] | None = None) -> Opened:
    """Opening ``url`` in a fresh browser context until ``selector`` is visible; over an
    emulated ``network`` (:data:`INTERNET`'s form) when given."""
    ctx = _context(browser, selector)
    try:
        page = ctx.new_page()
        if network is not None:
            cdp = ctx.new_cdp_session(page)
            cdp.send("Network.enable")
            cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": network[0],
                                                          "downloadThroughput": network[1],
                                                          "uploadThroughput": network[2]})
        return _timed_open(page, url, selector, timeout_s)
    finally:
        ctx.close()


def _timed_open(page, url: str, selector: Target, timeout_s: float) -> Opened:  # type: ignore[no-untyped-def]
    """``page.goto(url)`` until ``selector`` is visible (the page's context has :data:`SEEN_JS`)."""
    t0 = time.monotonic()
    page.goto(url)
    target = _find(page, selector)
    target.wait_for(timeout=timeout_s * 1000)
    wall = time.monotonic() - t0
    where = page
    if isinstance(selector, tuple):
        where = page.locator(selector[0]).first.element_handle().content_frame()
    seen = where.evaluate("() => window.__seenAt || null")
    origin = page.evaluate("() => performance.timeOrigin")
    return Opened((seen - origin) / 1000 if seen else float("nan"), wall)


def _seconds_returning(browser, url: str, selector: Target, repeats: int,  # type: ignore[no-untyped-def]
                       timeout_s: float = 120) -> list[Opened]:
    """Opening ``url`` until ``selector`` is visible in a browser that has opened it before:
    one context (its HTTP cache holds Streamlit's hashed assets, sent ``immutable``, and
    their compiled code), a new tab each time."""
    ctx = _context(browser, selector)
    try:
        out = []
        for _ in range(repeats + 1):  # the first visit fills the cache: not counted
            page = ctx.new_page()
            out.append(_timed_open(page, url, selector, timeout_s))
            page.close()
        return out[1:]
    finally:
        ctx.close()


def opened_summary(xs: list[Opened]) -> str:
    """The in-page times (the budget's measure) with the harness's wall times beside them."""
    return (f"{summary([x.in_page for x in xs], 's', 1.0)}; Playwright's wall time "
            f"{summary([x.wall for x in xs], 's', 1.0)}")


#: The dashboard's first drawn figure (in its frame: dashboard.chart); the Data page's
#: uploader (the floor); a figure drawn by ``st.plotly_chart`` (the Plotly floor).
FIRST_FIGURE = (f"[data-testid=stMain] {FRAME_SELECTOR}", ".js-plotly-plot .main-svg")
PLOTLY_FIGURE = "[data-testid=stMain] .js-plotly-plot .main-svg"
UPLOADER = "[data-testid=stFileUploader]"


#: The Plotly floors of the share benchmark: a page that draws one two-point figure and
#: nothing else, with ``st.plotly_chart`` (a fresh browser loads Streamlit's Plotly chunk,
#: the full plotly.js, about 4.7 MB, before any figure can be drawn) and with the
#: dashboard's own frame (:func:`dashboard.chart.show_figure`: plotly.js's basic bundle,
#: 1.2 MB, in a frame of the app's origin).
PLOTLY_FLOOR_APP = """import plotly.graph_objects as go
import streamlit as st

st.title("floor")
st.plotly_chart(go.Figure(go.Scatter(x=[0, 1], y=[0, 1])))
"""
FRAME_FLOOR_APP = """import plotly.graph_objects as go
import streamlit as st

from dashboard.chart import show_figure

st.title("floor")
show_figure(go.Figure(go.Scatter(x=[0, 1], y=[0, 1])), key="floor")
"""


@contextlib.contextmanager
def floor_server(tmp: Path, app: str) -> Iterator[Server]:
    """A bare Streamlit server of the script ``app`` (run with this repository importable),
    healthy, stopped on leaving."""
    import os
    import urllib.request

    from tests.e2e.conftest import free_port

    tmp.mkdir(parents=True, exist_ok=True)
    script = tmp / "floor.py"
    script.write_text(app)
    port = free_port()
    log_path = tmp / "floor.log"
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "PYTHONPATH": str(ROOT)}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(script), "--server.headless=true",
                                 f"--server.port={port}", "--server.address=127.0.0.1",
                                 "--server.fileWatcherType=none"], cwd=tmp, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
        server = Server(port, proc, log_path, tmp, env)
        try:
            wait_until(lambda: _healthy(urllib.request, port), 60, 0.2)
            yield server
        finally:
            server.stop()


def _floor_s(browser, tmp: Path, app: str, figure: Target, repeats: int) -> list[Opened]:  # type: ignore[no-untyped-def]
    """First figure of the one-figure page ``app`` in a fresh context, on its own warm
    server (a bare Streamlit app, run with this repository importable)."""
    with floor_server(tmp, app) as server:
        url = server.url + "/"
        _seconds_to(browser, url, figure)  # warm, as the share link's server is
        return [_seconds_to(browser, url, figure) for _ in range(repeats)]


def figure_floor(browser, tmp: Path, repeats: int) -> list[Opened]:  # type: ignore[no-untyped-def]
    """The share link's floor: the first figure of a page drawing one tiny figure and
    nothing else with the dashboard's frame, in a fresh context (warm server)."""
    return _floor_s(browser, tmp, FRAME_FLOOR_APP, FIRST_FIGURE, repeats)


def share_url(server: Server) -> str:
    """A share link of the three judges of :data:`SHARE_JUDGES` on the Routing page."""
    from calib.hosting.shares import DatasetSpec
    from calib.hosting.store import Store

    samples = ROOT / "sample_data"
    specs = [DatasetSpec.from_upload(Path(n).stem, n, (samples / n).read_bytes()) for n in SHARE_JUDGES]
    view = {"v": 1, "params": {"page": "routing"},
            "datasets": [{"kind": "file", "filename": n, "overrides": {}} for n in SHARE_JUDGES]}
    token = Store.open(server.data_dir).share(specs, view).token
    return f"{server.url}/Routing?share={token}"


def share_first_figures(browser, url: str, repeats: int) -> list[Opened]:  # type: ignore[no-untyped-def]
    """The share link ``url`` opened ``repeats`` times in a fresh context to its first
    figure, after one open that warms the server (its caches then hold the audits, the
    decision, the figures)."""
    _seconds_to(browser, url, FIRST_FIGURE)
    return [_seconds_to(browser, url, FIRST_FIGURE) for _ in range(repeats)]


def bench_share(browser, server: Server, repeats: int, tmp: Path | None = None) -> None:  # type: ignore[no-untyped-def]
    """Issue 13: a share link of three judges, opened on the Routing page of a warm server
    (the link opened once first), time to its first figure in a fresh browser context,
    beside its floors: the Data page's first paint on the same server, and (with ``tmp``)
    the first figure of a page drawing one tiny figure and nothing else, with
    ``st.plotly_chart`` and with the dashboard's frame."""
    url = share_url(server)
    got = share_first_figures(browser, url, repeats)
    floor = [_seconds_to(browser, server.url + "/", UPLOADER) for _ in range(repeats)]
    print(f"share link, three judges, warm server: first figure {opened_summary(got)} (goal 1.5 s); "
          f"floor, the Data page's first paint: {opened_summary(floor)}", flush=True)
    back = _seconds_returning(browser, url, FIRST_FIGURE, repeats)
    print(f"the same link in a browser that opened it before (cached assets): first figure "
          f"{opened_summary(back)}", flush=True)
    far = [_seconds_to(browser, url, FIRST_FIGURE, network=INTERNET) for _ in range(repeats)]
    print(f"the same link over an emulated Internet connection (40 ms each way, 20 Mbit/s down), fresh "
          f"context: first figure {opened_summary(far)}", flush=True)
    if tmp is not None:
        times = _floor_s(browser, tmp / "floor", PLOTLY_FLOOR_APP, PLOTLY_FIGURE, repeats)
        print(f"floor, a one-figure page drawn with st.plotly_chart: first figure, fresh context: "
              f"{opened_summary(times)}", flush=True)
        times = figure_floor(browser, tmp / "floor", repeats)
        print(f"floor, a one-figure page drawn with the dashboard's frame: first figure, fresh context: "
              f"{opened_summary(times)}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--moves", type=int, default=40)
    ap.add_argument("--cold", type=int, default=3, help="cold starts to time")
    ap.add_argument("--server-side", action="store_true", help="also run bench_dashboard.py (AppTest)")
    ap.add_argument("--only", choices=("cold", "keys", "lmeval", "share"), help="run one part only")
    ap.add_argument("--pauses", default="0,3",
                    help="seconds between the page's first paint and the folder upload, one fresh server each")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw, tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        if args.only in (None, "cold"):
            bench_cold_start(browser, args.cold)
            bench_cold_baseline(browser, args.cold)
        if args.only in (None, "lmeval"):
            for pause in (float(x) for x in args.pauses.split(",")):
                server = start_server(tmp / f"lmeval-{pause:g}")
                try:
                    bench_lmeval(browser, server, tmp, pause)
                finally:
                    server.stop()
        if args.only in (None, "share"):
            server = start_server(tmp / "share")
            try:
                bench_share(browser, server, max(3, args.cold), tmp)
            finally:
                server.stop()
        if args.only in (None, "keys"):
            server = start_server(tmp / "keys")
            try:
                bench_keys(browser, server, args.rows, args.moves, tmp)
            finally:
                server.stop()
            floor = keys_floor(browser, tmp / "keys-floor", args.moves)
            print(f"floor, a one-slider one-metric page: key press -> updated number {summary(floor.numbers)}")
        browser.close()
    if args.server_side:
        bench_server_side(args.rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
