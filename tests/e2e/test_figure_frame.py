"""The figures' frames in the browser (dashboard/chart.py): a moved threshold redraws the
figure in its frame, without reloading it; the dark theme reaches the figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard.chart import FRAME_SELECTOR
from tests.e2e.conftest import screenshot, start_server
from tests.e2e.screens import PLOTS_JS, settle

TIMEOUT_MS = 120_000
FRAMES = f"[data-testid=stMain] {FRAME_SELECTOR}"

#: The x positions of the trace named ``name`` in any drawn figure, or null.
LINE_X_JS = "(name) => { for (const el of PLOTS) { const t = (el._fullData || []).find(t => t.name === name);" \
            " if (t) return Array.from(t.x); } return null; }"


def _all_drawn(page) -> None:  # type: ignore[no-untyped-def]
    """A figure frame is on the page, and every one has drawn (:func:`screens.settle`)."""
    page.locator(FRAMES).first.wait_for(timeout=TIMEOUT_MS)
    settle(page)


def test_a_moved_threshold_redraws_the_figure_in_the_same_frame(server, page):
    page.goto(f"{server.url}/Routing?sample=judge_a_synthetic.jsonl&reps=0&lo=95")
    _all_drawn(page)
    line = LINE_X_JS.replace("PLOTS", PLOTS_JS)
    page.wait_for_function(f"() => {{ const x = ({line})('review threshold'); return x && x[0] === 95; }}",
                           timeout=TIMEOUT_MS)
    # a mark in each frame's window: a frame that reloaded would lose it
    count = page.evaluate(f"() => {{ const f = [...document.querySelectorAll({FRAMES!r})];"
                          " f.forEach(x => { x.contentWindow.__calibMark = true; }); return f.length; }")
    assert count >= 2
    slider = page.locator("[data-testid=stMain]").get_by_role("slider", name="Review threshold")
    slider.focus()
    slider.press("ArrowLeft")  # judge a said 80, 90, 95 and 100: the next position down is 90
    page.wait_for_function(f"() => {{ const x = ({line})('review threshold'); return x && x[0] === 90; }}",
                           timeout=TIMEOUT_MS)
    marks = page.evaluate(f"() => [...document.querySelectorAll({FRAMES!r})].map(x => x.contentWindow.__calibMark === true)")
    assert marks == [True] * count, marks
    screenshot(page, "frame_threshold_moved")


@pytest.fixture(scope="module")
def dark_server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    srv = start_server(Path(tmp_path_factory.mktemp("dark")), env={"STREAMLIT_THEME_BASE": "dark"})
    yield srv
    srv.stop()


def test_the_dark_theme_reaches_the_figures(dark_server, page):
    page.goto(f"{dark_server.url}/Reliability?sample=judge_a_synthetic.jsonl&reps=0")
    _all_drawn(page)
    paper, text, app, grids = page.evaluate(
        "() => { const el = (" + PLOTS_JS + ")[0]; const fl = el._fullLayout;"
        " return [fl.paper_bgcolor, fl.font.color,"
        " getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor,"
        " Object.keys(fl).filter(k => /^[xy]axis[0-9]*$/.test(k)).map(k => fl[k].gridcolor)]; }")
    assert len(grids) >= 2 and len(set(grids)) == 1 and grids[0] != "#EBF0F8", grids  # every axis dimmed
    rgb = "rgb({}, {}, {})".format(*(int(paper[i:i + 2], 16) for i in (1, 3, 5)))
    assert rgb == app, (paper, app)  # the figure sits on the page's own background
    assert text.lower() not in ("#2a3f5f", "#444")  # not the light figure's dark text
    screenshot(page, "frame_dark_theme")


def test_a_frame_whose_plotly_does_not_load_says_so(server, page):
    # the bundle blocked on its way (a proxy, a broken install): the frame says so in words,
    # the rest of the page is drawn as usual
    page.route("**/plotly-basic.min.js*", lambda route: route.abort())  # the versioned address too
    page.goto(f"{server.url}/Reliability?sample=judge_a_synthetic.jsonl&reps=0")
    frame = page.frame_locator(FRAMES).first
    frame.get_by_text("This figure could not be drawn (plotly.js did not load).").wait_for(timeout=TIMEOUT_MS)
    # the metrics come after the first figure in the page's run: wait for them, then no error box
    page.locator("[data-testid=stMain] [data-testid=stMetric]").first.wait_for(timeout=TIMEOUT_MS)
    assert page.get_by_test_id("stException").count() == 0
