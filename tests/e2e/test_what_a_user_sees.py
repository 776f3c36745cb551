"""What a person sees on a phone (390 px) and a laptop (1440 px), in Debian's Chromium (issue 22).

Real clicks, waits on conditions: the sidebar closes after a page is tapped on a narrow
screen, the link icons render without an emoji font, the Reliability page describes the
figure it draws, the Data page says a refresh cleared the uploads, and the HTML report and
the figures' mode bar fit a phone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import screenshot

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1440, "height": 900}
SIZES = [pytest.param(PHONE, id="390px"), pytest.param(LAPTOP, id="1440px")]
TIMEOUT_MS = 120_000
JUDGE = "judge_a_synthetic.jsonl"


@pytest.fixture(params=SIZES)
def sized(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    """A fresh page at the phone's and at the laptop's width."""
    ctx = browser.new_context(viewport=request.param)
    pg = ctx.new_page()
    yield pg
    ctx.close()


def open_path(page: Any, server: Any, path: str, query: str, title: str) -> None:
    page.goto(f"{server.url}{path}?{query}")
    page.locator("[data-testid=stMain] h1", has_text=title).first.wait_for(timeout=TIMEOUT_MS)


def wait_idle(page: Any) -> None:
    """The run has finished: no running indicator, no stale element."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stStatusWidget], [data-stale=true]')",
        timeout=TIMEOUT_MS, polling=200)


# ============================================================================ icons
#: Every codepoint an emoji font would be needed for (pictographs, dingbats, variation selectors).
EMOJI = re.compile("[\u2190-\u2bff\u2600-\u27bf\ufe0f\U0001f000-\U0001faff]")


def test_the_page_links_draw_their_icons_without_an_emoji_font(server: Any, sized: Any) -> None:
    # the Overview's link to the decision showed 🎚️, a blank box on a machine without an emoji font
    open_path(sized, server, "/Overview", f"sample={JUDGE}&reps=0", "Overview")
    link = sized.locator("[data-testid=stPageLink]", has_text="Open the decision").first
    link.wait_for(timeout=TIMEOUT_MS)
    assert link.locator("[data-testid=stIconEmoji]").count() == 0
    icon = link.locator("[data-testid=stIconMaterial]")
    assert icon.count() == 1
    name = icon.inner_text()
    assert re.fullmatch(r"[a-z_]+", name) and not EMOJI.search(link.inner_text()), link.inner_text()
    # drawn by the font Streamlit serves itself (a ligature), not by a system font
    family = icon.evaluate("e => getComputedStyle(e).fontFamily")
    assert "Material Symbols" in family, family
    sized.wait_for_function(
        "() => [...document.fonts].some(f => f.family.includes('Material Symbols') && f.status === 'loaded')",
        timeout=TIMEOUT_MS)
    # one glyph: the ligature is about as wide as it is high, the spelled-out name would be far wider
    box = icon.bounding_box()
    assert box is not None and box["width"] < 1.6 * box["height"], (name, box)
    screenshot(sized, f"icon_overview_{sized.viewport_size['width']}")
