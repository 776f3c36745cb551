"""A page with figures opened cold (a share link of three judges on the Routing page): the
chunks of its elements, preloaded by the guard's tags (calib.hosting.webguard.page_preloads),
are each fetched once; the figures draw in their frames with plotly.js's basic bundle
(dashboard.chart), under the same Content-Security-Policy, and Streamlit's own Plotly chunk
is never fetched; the Data page is served as Streamlit writes it."""

from __future__ import annotations

import re
from pathlib import Path

from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store
from calib.hosting.webguard import chunk_files, page_preloads, streamlit_index_html, streamlit_static_js
from dashboard.chart import FRAME_SELECTOR
from tests.e2e.conftest import screenshot
from tests.e2e.test_attacks import CSP_RECORDER, csp_violations, get

ROOT = Path(__file__).resolve().parents[2]
JUDGES = ("judge_a_synthetic.jsonl", "judge_b_synthetic.jsonl", "judge_c_synthetic.jsonl")


def _share(server) -> str:  # type: ignore[no-untyped-def]
    specs = [
        DatasetSpec.from_upload(Path(n).stem, n, (ROOT / "sample_data" / n).read_bytes()) for n in JUDGES
    ]
    view = {
        "v": 1,
        "params": {"page": "routing"},
        "datasets": [{"kind": "file", "filename": n, "overrides": {}} for n in JUDGES],
    }
    return Store.open(server.data_dir).share(specs, view).token


def test_a_share_link_preloads_its_chunks_once_and_draws_under_the_policy(server, page):
    token = _share(server)
    page.add_init_script(CSP_RECORDER)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    fetched: list[tuple[str, int]] = []
    page.on("response", lambda r: fetched.append((r.url, r.status)))
    page.goto(f"{server.url}/Routing?share={token}")
    frames = page.frame_locator(f"[data-testid=stMain] {FRAME_SELECTOR}")
    frames.first.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=120_000)
    page.wait_for_timeout(1000)
    screenshot(page, "preload_share_routing")
    preloaded = set(chunk_files(streamlit_index_html(), streamlit_static_js()))
    js = [u.rsplit("/", 1)[-1] for u, _ in fetched if "/static/js/" in u]
    assert preloaded and preloaded <= set(js)
    twice = [name for name in preloaded if js.count(name) != 1]
    assert twice == []  # the preload and Streamlit's own import share one fetch
    assert not [name for name in js if name.startswith("PlotlyChart.")]  # the 4.7 MB chunk: not needed
    basic = [u for u, s in fetched if u.endswith("/component/dashboard.chart.figure/plotly-basic.min.js") and s == 200]
    assert basic, "the figures' frames load plotly.js's basic bundle"
    assert csp_violations(page) == []
    assert page.get_by_test_id("stException").count() == 0
    drawn = page.locator(f"[data-testid=stMain] {FRAME_SELECTOR}")
    assert drawn.count() >= 2
    for i in range(drawn.count()):
        frames.nth(i).locator(".js-plotly-plot .main-svg").first.wait_for(timeout=60_000)
    # Streamlit's frontend first looks for its server under the page's path (a base URL path),
    # then at the root: those two 404s are its own, with or without the preload
    failed = [u for u, s in fetched if s >= 400]
    assert all(re.search(r"/Routing/_stcore/(health|host-config)$", u) for u in failed), failed
    assert len(errors) == len(failed) and all("404" in e for e in errors), errors


def test_only_pages_with_figures_get_the_preload(server):
    _, _, data_page = get(server.url + "/")
    _, headers, routing = get(server.url + "/Routing")
    tags = page_preloads(chunk_files(streamlit_index_html(), streamlit_static_js()))
    assert tags and tags not in data_page and b"ComponentInstance." not in data_page  # Streamlit's own only
    assert routing.count(tags) == 1 and routing.count(b"ComponentInstance.") == 1
    assert b"PlotlyChart." not in routing
    assert headers["content-length"] == str(len(routing))
