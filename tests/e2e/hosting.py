"""Helpers of the hosting browser tests (share links, attacks, load): driving the
dashboard's widgets by their visible labels, and an independent per-row count of the
routing numbers the pages must show.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
JUDGE = ROOT / "sample_data" / "judge_a_synthetic.jsonl"
#: Playwright timeouts (ms): generous, the CI machine has 2 cores shared by a server and Chromium.
SLOW = 120_000
ROUTING_LABELS = ("Sent to a person", "Accepted unseen", "Accuracy among accepted", "Errors slipping through",
                  "Errors caught")


# ------------------------------------------------------------- expected numbers
class Row(NamedTuple):
    stated: float
    correct: bool


def read_rows(path: Path = JUDGE) -> list[Row]:
    """The judge file's rows, read with json alone (not with calib)."""
    rows = []
    for line in path.read_text().splitlines():
        if line.strip():
            obj = json.loads(line)
            rows.append(Row(float(obj["confidence"]), bool(obj["correct"])))
    return rows


def expected_routing(rows: Sequence[tuple[float, bool]], lo: float, hi: float | None = None) -> dict[str, str]:
    """The routing numbers at review threshold ``lo`` (and upper threshold ``hi``),
    counted row by row and formatted as the dashboard prints them: below ``lo`` to a
    person, at or above ``hi`` (``lo`` without one) accepted unseen, between them the
    middle band."""
    accepted = [c for s, c in rows if s >= (lo if hi is None else hi)]
    to_person = [c for s, c in rows if s < lo]
    right = sum(accepted)
    out = {
        "Sent to a person": f"{len(to_person):,}",
        "Accepted unseen": f"{len(accepted):,}",
        "Accuracy among accepted": f"{100 * right / len(accepted):.1f}%" if accepted else "—",
        "Errors slipping through": f"{len(accepted) - right:,}",
        "Errors caught": f"{sum(not c for c in to_person):,}",
    }
    if hi is not None:
        out["Middle band"] = f"{sum(1 for s, _ in rows if lo <= s < hi):,}"
    return out


# ------------------------------------------------------------- page helpers
def upload(page, files, *, wait_rows: str | None = "Rows kept") -> None:
    """Upload through the first file input (a path, a list of paths, or Playwright
    file payloads ``{"name", "mimeType", "buffer"}``) and wait for the load report."""
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(files)
    if wait_rows:
        page.get_by_test_id("stMetricLabel").filter(has_text=wait_rows).first.wait_for(timeout=SLOW)


def metric(page, label: str, *, scope=None) -> str:
    """The value of the metric with exactly this label (``scope``: a locator to search in)."""
    root = scope if scope is not None else page
    box = root.get_by_test_id("stMetric").filter(
        has=page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True))
    return box.first.get_by_test_id("stMetricValue").inner_text(timeout=SLOW).strip()


def metrics(page, labels, *, scope=None) -> dict[str, str]:
    return {label: metric(page, label, scope=scope) for label in labels}


def wait_metrics(page, want: dict[str, str], *, scope=None, timeout_s: float = SLOW / 1000) -> dict[str, str]:
    """Poll until every labelled metric shows the wanted value; return the last values seen."""
    import time

    deadline = time.monotonic() + timeout_s
    got: dict[str, str] = {}
    while True:
        try:
            got = metrics(page, want, scope=scope)
        except Exception:  # an element re-rendered between lookups: read again
            got = {}
        if got == want or time.monotonic() > deadline:
            return got
        page.wait_for_timeout(150)


def main_area(page):
    return page.get_by_test_id("stMain")


def sidebar(page):
    return page.get_by_test_id("stSidebar")


#: Page title -> its link in the sidebar navigation (the entry page is the first link).
NAV = {"How the scale was used": "Scale"}


def go_to(page, title: str) -> None:
    """Switch page through the sidebar navigation (same session, unlike a new URL)."""
    nav = sidebar(page).get_by_test_id("stSidebarNav").get_by_role("link")
    link = nav.first if title == "Data" else nav.filter(has_text=NAV.get(title, title)).first
    link.click()
    page.get_by_test_id("stHeading").filter(has_text=title).first.wait_for(timeout=SLOW)


def threshold_slider(page):
    """The review threshold's slider: in the Routing page's body, in the sidebar elsewhere."""
    return page.get_by_test_id("stSlider").filter(has_text="Review threshold").first.locator(
        'input[type="range"]')


def threshold(page) -> float:
    """The threshold the slider shows (its thumb's label: a select slider's value is its index)."""
    return float(threshold_slider(page).get_attribute("aria-valuetext", timeout=SLOW))


def set_threshold(page, target: float) -> None:
    """Move the review threshold with the keyboard to ``target`` (one of its positions):
    one press, wait until the slider shows the next position, and so on."""
    import time

    s = threshold_slider(page)
    deadline = time.monotonic() + SLOW / 1000
    while time.monotonic() < deadline:
        now = threshold(page)
        if abs(now - target) < 1e-9:
            return
        before = s.get_attribute("aria-valuetext")
        s.focus()
        page.keyboard.press("ArrowRight" if target > now else "ArrowLeft")
        page.wait_for_function("([el, v]) => el.getAttribute('aria-valuetext') !== v",
                               arg=[s.element_handle(timeout=SLOW), before], timeout=SLOW)
    raise AssertionError(f"the threshold did not reach {target} (shows {threshold(page)})")


def share(page) -> tuple[str, str]:
    """Click Share; return (link, owner key) as the sidebar shows them."""
    bar = sidebar(page)
    bar.get_by_role("button", name="Share this view").click()
    link_box = bar.get_by_test_id("stCode").filter(has_text="share=")
    link_box.wait_for(timeout=SLOW)
    link = link_box.inner_text().strip()
    codes = [c.strip() for c in bar.get_by_test_id("stCode").all_inner_texts()]
    key = next(c for c in codes if "share=" not in c)
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", key), key
    return link, key


def wait_text(page, text: str, timeout: int = SLOW) -> None:
    page.get_by_text(text, exact=False).first.wait_for(timeout=timeout)


UNAVAILABLE_TITLE = "This link is no longer available"


def assert_unavailable(page) -> None:
    """The dead-link page: its title and message, and no data of any kind."""
    page.get_by_test_id("stHeading").filter(has_text=UNAVAILABLE_TITLE).wait_for(timeout=SLOW)
    wait_text(page, "This shared link is no longer available")
    assert page.get_by_test_id("stMetric").count() == 0
    assert page.get_by_test_id("stFileUploader").count() == 0
