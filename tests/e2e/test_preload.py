"""A page with figures opened cold (a share link of three judges on the Routing page):
Streamlit's Plotly chunk, preloaded by the guard's tags (calib.hosting.webguard.page_preloads),
is fetched once, under the same Content-Security-Policy, and the figures draw; the Data page
is served as Streamlit writes it."""

from __future__ import annotations

import re
from pathlib import Path

from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store
from tests.e2e.conftest import screenshot
from tests.e2e.test_attacks import CSP_RECORDER, get

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


def test_a_share_link_preloads_plotly_once_and_draws_under_the_policy(server, page):
    token = _share(server)
    page.add_init_script(CSP_RECORDER)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    fetched: list[tuple[str, int]] = []
    page.on("response", lambda r: fetched.append((r.url, r.status)))
    page.goto(f"{server.url}/Routing?share={token}")
    page.locator("[data-testid=stMain] .js-plotly-plot .main-svg").first.wait_for(timeout=120_000)
    page.wait_for_timeout(1000)
    screenshot(page, "preload_share_routing")
    plotly = [u for u, _ in fetched if re.search(r"/static/js/PlotlyChart\.[\w-]+\.js$", u)]
    assert len(plotly) == 1, plotly  # the preload and Streamlit's own import share one fetch
    assert page.evaluate("window.__cspViolations") == []
    assert page.get_by_test_id("stException").count() == 0
    assert page.locator("[data-testid=stMain] .js-plotly-plot").count() >= 2
    # Streamlit's frontend first looks for its server under the page's path (a base URL path),
    # then at the root: those two 404s are its own, with or without the preload
    failed = [u for u, s in fetched if s >= 400]
    assert all(re.search(r"/Routing/_stcore/(health|host-config)$", u) for u in failed), failed
    assert len(errors) == len(failed) and all("404" in e for e in errors), errors


def test_only_pages_with_figures_get_the_preload(server):
    _, _, data_page = get(server.url + "/")
    _, headers, routing = get(server.url + "/Routing")
    assert b"modulepreload" in data_page and b"PlotlyChart." not in data_page  # Streamlit's own preloads only
    assert (
        routing.count(b"PlotlyChart.") == 1
        and b'<link rel="modulepreload" fetchpriority="low" crossorigin href="./static/js/PlotlyChart.'
        in routing
    )
    assert headers["content-length"] == str(len(routing))
