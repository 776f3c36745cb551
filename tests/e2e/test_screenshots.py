"""Every page at phone and laptop size, with three judges and with an lm-eval folder: a
screenshot of each, and a failure when a figure wastes its axes, a headline figure lacks its
interval, the first screen lacks the page's question, or the main content scrolls sideways.

The rules are those of :mod:`tests.e2e.screens` (its docstring says how each is measured).
Screenshots land in ``test-artifacts/screenshots/<load>-<size>-<page>.png``; with
``CALIB_WRITE_SCREENSHOTS=1`` also in ``docs/screenshots/`` (``tools/screenshots.py`` does
that and the manual's images in one go). One server, the pages in sequence; each test
gathers every problem of its load and size before failing, so one run lists them all.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e import screens
from tests.e2e.conftest import ARTIFACTS, ROOT

SHOTS = ARTIFACTS / "screenshots"
DOCS = ROOT / "docs" / "screenshots"


def _rules() -> screens.Contract | None:
    try:
        return screens.contract()
    except (ImportError, AttributeError):
        return None  # reported as a problem of every page, not as an error of the test


@pytest.fixture(scope="module")
def paths(server, browser) -> list[str]:  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport=dict(screens.SIZES[1][1]))
    try:
        return screens.page_paths(ctx.new_page(), server.url, screens.DATASETS[0][1])
    finally:
        ctx.close()


@pytest.mark.parametrize("size", [s for s, _ in screens.SIZES])
@pytest.mark.parametrize("load", [d for d, _ in screens.DATASETS])
def test_every_page(server, browser, paths: list[str], load: str, size: str) -> None:  # type: ignore[no-untyped-def]
    assert len(paths) >= 7, f"the sidebar lists only {paths}"
    also = DOCS if os.environ.get("CALIB_WRITE_SCREENSHOTS") == "1" else None
    found = screens.visit_all(browser, server.url, paths, load, size, SHOTS, also=also, rules=_rules())
    assert not found, "\n".join(found)


def test_the_checks_catch_a_page_that_breaks_them(server, browser, paths: list[str]) -> None:  # type: ignore[no-untyped-def]
    """The measurement on a real page, broken on purpose in the browser: a block wider than the
    phone, the page question removed, a metric without an interval, an axis stretched to 0-1000."""
    ctx = browser.new_context(viewport=dict(dict(screens.SIZES)["phone"]))
    try:
        page = ctx.new_page()
        screens.open_page(page, server.url, "/Reliability", dict(screens.DATASETS)["judges"])
        assert not [p for p in screens.problems(screens.measure(page), _rules()) if "interval" not in p]
        page.evaluate(r"""() => {
          const main = document.querySelector('[data-testid=stMainBlockContainer]');
          const wide = document.createElement('div');
          wide.style.width = '900px'; wide.textContent = 'too wide';
          main.appendChild(wide);
          document.querySelector('.st-key-page-question')?.remove();
          // the first headline metric of the page loses the caption that carries its interval
          const m = document.querySelector('[data-testid=stMain] [data-testid=stMetric]');
          const delta = m.querySelector('[data-testid=stMetricDelta]');
          if (delta) delta.remove(); else m.closest('[data-testid=stElementContainer]').nextElementSibling.remove();
          // the first figure (in its frame: dashboard.chart) zoomed out to a wasted axis
          const frame = document.querySelector('[data-testid=stMain] iframe');
          const plot = frame.contentDocument.querySelector('.js-plotly-plot');
          return frame.contentWindow.Plotly.relayout(plot, {'xaxis.range': [0, 1000]});
        }""")
        # the relayout's promise was awaited above; wait until the plot holds the wasted range
        page.wait_for_function("""() => {
          const frame = document.querySelector('[data-testid=stMain] iframe');
          const plot = frame && frame.contentDocument.querySelector('.js-plotly-plot');
          const range = plot && plot._fullLayout && plot._fullLayout.xaxis.range;
          return !!range && range[0] === 0 && range[1] === 1000;
        }""", timeout=30_000)
        found = screens.problems(screens.measure(page), _rules())
    finally:
        ctx.close()
    text = "\n".join(found)
    assert "no page question" in text
    assert "element past the right edge" in text and "too wide" in text
    assert "fills" in text and "range 0 to 1000" in text
    if _rules() is not None:
        assert "metric 'ECE' shows no interval" in text


def test_rules_catch_a_wasted_axis() -> None:
    """The occupancy rule, on a measurement written by hand: 80-100 data on a -2..102 axis
    fills 19% of it; on 78..102 it fills 83%; a one-position axis is not judged."""
    fig = {
        "title": "t",
        "axes": [
            {
                "axis": "xaxis",
                "type": "linear",
                "range": [-2, 102],
                "title": "x",
                "lo": 80.0,
                "hi": 100.0,
                "positions": 3,
            }
        ],
    }
    assert screens.figure_problems([fig]) == [
        "figure 't': xaxis ('x') data 80 to 100 fills 19% of its range -2 to 102"
    ]
    fig["axes"][0]["range"] = [78, 102]
    assert screens.figure_problems([fig]) == []
    fig["axes"][0].update(range=[-2, 102], positions=1)
    assert screens.figure_problems([fig]) == []


def test_shot_names() -> None:
    assert screens.shot_name("judges", "phone", "/") == "judges-phone-data.png"
    assert screens.shot_name("lmeval", "laptop", "/Overview") == "lmeval-laptop-overview.png"
    assert Path(SHOTS).parts[-2:] == ("test-artifacts", "screenshots")
