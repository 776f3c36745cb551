"""A page with figures opened cold (a share link of three judges on the Routing page), with
the head the guard gives it (calib.hosting.page_head): Streamlit finds its server at the
first try (no look-up under the page's path), the element chunks start loading before the
first element arrives (every one the head names), each preloaded chunk is fetched once, the
figures draw in their frames with plotly.js's basic bundle (dashboard.chart), prefetched
at its versioned, immutable address, under the same Content-Security-Policy, Streamlit's
own Plotly chunk is never fetched, its front-end files come gzip-compressed from the
guard's memory (calib.hosting.static_assets); the Data page is served as Streamlit writes it."""

from __future__ import annotations

import re
from pathlib import Path

from calib.hosting.page_head import (
    EAGER_CHUNKS,
    build,
    chunk_files,
    streamlit_index_html,
    streamlit_static_js,
)
from calib.hosting.shares import DatasetSpec
from calib.hosting.static_assets import CACHE_CONTROL
from calib.hosting.store import Store
from dashboard.chart import FRAME_SELECTOR, PLOTLY_JS_URL, cached_assets
from tests.e2e.conftest import screenshot, start_server
from tests.e2e.screens import settle
from tests.e2e.test_attacks import CSP_RECORDER, csp_violations, get

ROOT = Path(__file__).resolve().parents[2]
JUDGES = ("judge_a_synthetic.jsonl", "judge_b_synthetic.jsonl", "judge_c_synthetic.jsonl")


def _share(server, judges: tuple[str, ...] = JUDGES) -> str:  # type: ignore[no-untyped-def]
    specs = [
        DatasetSpec.from_upload(Path(n).stem, n, (ROOT / "sample_data" / n).read_bytes()) for n in judges
    ]
    view = {
        "v": 1,
        "params": {"page": "routing"},
        "datasets": [{"kind": "file", "filename": n, "overrides": {}} for n in judges],
    }
    return Store.open(server.data_dir).share(specs, view).token


def test_a_share_link_preloads_its_chunks_once_and_draws_under_the_policy(server, page):
    token = _share(server)
    page.add_init_script(CSP_RECORDER)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    fetched: list[tuple[str, int]] = []
    headers: dict[str, dict[str, str]] = {}

    def seen(r) -> None:  # type: ignore[no-untyped-def]
        fetched.append((r.url, r.status))
        headers.setdefault(r.url, r.headers)

    page.on("response", seen)
    page.goto(f"{server.url}/Routing?share={token}")
    frames = page.frame_locator(f"[data-testid=stMain] {FRAME_SELECTOR}")
    frames.first.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=120_000)
    settle(page)  # every figure drawn: every chunk the page needs has been fetched
    screenshot(page, "preload_share_routing")
    preloaded = set(chunk_files(streamlit_index_html(), streamlit_static_js()))
    js = [u.rsplit("/", 1)[-1] for u, _ in fetched if "/static/js/" in u]
    assert preloaded and preloaded <= set(js)
    twice = [name for name in preloaded if js.count(name) != 1]
    assert twice == []  # the preload and Streamlit's own import share one fetch
    assert not [name for name in js if name.startswith("PlotlyChart.")]  # the 4.7 MB chunk: not needed
    basic = [u for u, s in fetched if u == f"{server.url}/{PLOTLY_JS_URL}" and s == 200]
    assert basic, "the figures' frames load plotly.js's basic bundle, from its versioned address"
    assert headers[basic[0]]["cache-control"] == CACHE_CONTROL.decode()
    # every lazily loaded element component the head names was asked to load at the start
    assert page.evaluate("() => window.__calibLazy()") == len(EAGER_CHUNKS)
    # Streamlit's bundles come from the guard's memory, compressed for a browser that accepts it
    index = [u for u, _ in fetched if re.search(r"/static/js/index\.[\w-]+\.js$", u)]
    assert index and headers[index[0]].get("content-encoding") == "gzip"
    assert headers[index[0]]["cache-control"] == CACHE_CONTROL.decode()
    assert csp_violations(page) == []
    assert page.get_by_test_id("stException").count() == 0
    drawn = page.locator(f"[data-testid=stMain] {FRAME_SELECTOR}")
    assert drawn.count() >= 2
    for i in range(drawn.count()):
        frames.nth(i).locator(".js-plotly-plot .main-svg").first.wait_for(timeout=60_000)
    # the head names the app's root: Streamlit looks for its server there at once, not first
    # under the page's path (which failed with two 404s and cost a retry)
    assert [u for u, s in fetched if s >= 400] == [] and errors == []
    assert [u for u, _ in fetched if u.endswith("/_stcore/health")] == [f"{server.url}/_stcore/health"]


def test_only_the_apps_pages_but_the_data_page_get_the_head(server):
    tags = build(tuple(url for url, _ in cached_assets()))
    _, _, data_page = get(server.url + "/")
    assert tags.first not in data_page and b"ComponentInstance." not in data_page  # Streamlit's own only
    for name in ("Overview", "Routing", "Review"):
        _, headers, page = get(f"{server.url}/{name}")
        assert page.count(tags.first) == 1 and page.count(tags.last) == 1, name
        assert page.index(tags.first) < page.index(b'<script type="module" crossorigin src="./static/js/index.')
        assert page.count(b"ComponentInstance.") == 2 and b"PlotlyChart." not in page  # the preload, the script
        assert headers["content-length"] == str(len(page))
    # not a page: as Streamlit writes it ("/Routing/" is redirected to "/Routing" by Streamlit)
    for path in ("/Nowhere", "/routing", "/Routing/x"):
        assert tags.first not in get(server.url + path)[2], path


def test_under_a_base_url_path_the_head_finds_the_apps_root(browser, tmp_path):  # type: ignore[no-untyped-def]
    # server.baseUrlPath set (a deployment under /calib/): the head's address for Streamlit's
    # connection is the page's folder, /calib/, so its one look-up goes there; the assets
    # come from /calib/static/, the figures draw, nothing fails
    server = start_server(tmp_path, base_url_path="calib")
    try:
        token = _share(server, JUDGES[:2])
        for path, figure in ((f"/calib/Routing?share={token}", True), ("/calib/Overview", False)):
            ctx = browser.new_context()
            page = ctx.new_page()
            fetched: list[tuple[str, int]] = []
            page.on("response", lambda r, into=fetched: into.append((r.url, r.status)))
            page.goto(server.url + path)
            if figure:
                page.frame_locator(f"[data-testid=stMain] {FRAME_SELECTOR}").first.locator(
                    ".js-plotly-plot .main-svg").first.wait_for(timeout=120_000)
            page.get_by_test_id("stSidebarNav").wait_for(timeout=120_000)
            assert [u for u, s in fetched if s >= 400] == [], path
            assert [u for u, _ in fetched if u.endswith("/_stcore/health")] == [f"{server.url}/calib/_stcore/health"]
            assert page.evaluate("() => window.__calibLazy()") == len(EAGER_CHUNKS)
            assert any("/calib/static/js/index." in u for u, _ in fetched)
            assert page.get_by_test_id("stException").count() == 0
            ctx.close()
    finally:
        server.stop()
