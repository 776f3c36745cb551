"""When the judge changes (issue 28), in a real browser: files go in through the Data page's
upload input, pages are switched with the sidebar navigation, the cascade's prices are
typed and its button clicked, and every figure is read off the page (a dataframe as its own
"Download as CSV" button delivers it) and compared with the CLI's JSON on the same files:

- who moved: the Drift page's judge / system / total parts with their intervals and the
  shared items equal ``calib drift OLD NEW --json``'s ``attribution``;
- the cheapest certified chain of three priced judges: the Routing page's table (each plan,
  its chain, its cost per 1,000 items with the interval) equals ``calib cascade ... --json``.

The runs are tests/data/judge_change/ (written by its make.py). Waits are on conditions.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.e2e.conftest import ROOT, screenshot
from tests.e2e.hosting import SLOW
from tests.e2e.test_dashboard import frame_with, no_traceback, open_app, upload

DATA = ROOT / "tests" / "data" / "judge_change"
REPS = 200  # the dashboard's resamples (the URL's reps) and the CLI's --reps
JUDGES = ("cascade_cheap", "cascade_mid", "cascade_strong")
PRICES = "0.01,0.1,1"


def cli(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "calib", *args, "--reps", str(REPS), "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 1, 4), out.stderr  # a drift found / a threshold not certified is no error
    return json.loads(out.stdout)


def nav(page, link: str, title: str) -> None:  # type: ignore[no-untyped-def]
    """Switch page through the sidebar navigation (the session and its uploads survive)."""
    page.get_by_test_id("stSidebarNav").get_by_role("link").filter(has_text=link).first.click()
    page.get_by_test_id("stMain").get_by_test_id("stHeading").filter(has_text=title).first.wait_for(timeout=SLOW)


def wait_text(page, text: str, name: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until the main area shows ``text``; on failure a screenshot names what was shown."""
    try:
        page.get_by_test_id("stMain").get_by_text(text).first.wait_for(timeout=SLOW)
    except Exception as exc:
        shot = screenshot(page, f"FAILED_{name}")
        raise AssertionError(f"{text!r} never shown; see {shot}") from exc


def wait_loaded(page, *files: str) -> None:  # type: ignore[no-untyped-def]
    """Every uploaded run is loaded (the Data page's count and each file's load report)."""
    wait_text(page, f"{len(files)} inputs loaded", "loaded")
    for f in files:
        wait_text(page, f"uploaded file: {f}", "loaded")


def points(x: float) -> str:
    return f"{100 * x:+.1f} pts"


def test_who_moved_on_the_drift_page_equals_the_cli(server, page):
    old, new = DATA / "drift_old.jsonl", DATA / "drift_new.jsonl"
    # the Drift page's review threshold: probability 0.8 on the 0-100 scale, unless the sidebar moves it
    want = cli("drift", str(old), str(new), "--threshold", "80")["attribution"]
    open_app(page, server, f"reps={REPS}")
    upload(page, old, new)
    wait_loaded(page, old.name, new.name)
    nav(page, "Drift", "Drift between runs")
    wait_text(page, "Who moved: the judge or what it judges?", "who_moved")
    table = frame_with(page, "part")
    assert list(table["change in accuracy among accepted"]) == [points(want[k]["estimate"])
                                                                for k in ("judge", "system", "total")]
    assert list(table["95% interval (points)"]) == [
        f"[{100 * want[k]['ci'][0]:.1f}, {100 * want[k]['ci'][1]:.1f}]" for k in ("judge", "system", "total")]
    shared = page.get_by_test_id("stMetric").filter(has_text="Shared items").get_by_test_id("stMetricValue")
    assert shared.inner_text(timeout=SLOW).strip() == f"{want['shared_items']:,}"
    anchors = frame_with(page, "hit rate then")
    assert list(anchors["stated"]) == [f"{a['value']:g}" for a in want["anchors"]]
    assert list(anchors["hit rate now"]) == [f"{100 * a['new']:.1f}%" for a in want["anchors"]]
    assert list(anchors["meaning"]) == ["moved" if a["moved"] else "" for a in want["anchors"]]
    no_traceback(page)
    screenshot(page, "judge_change_01_who_moved")


def test_cascade_table_with_three_judges_equals_the_cli(server, page):
    paths = [DATA / f"{n}.jsonl" for n in JUDGES]
    want = cli("cascade", *map(str, paths), "--names", ",".join(JUDGES), "--prices", PRICES, "--person-price", "10",
               "--target-error", "0.05")
    assert want["best"] is not None and len(want["best"]["chain"]) >= 2  # the planted chain is certified
    open_app(page, server, f"reps={REPS}")
    upload(page, *paths)
    wait_loaded(page, *(p.name for p in paths))
    nav(page, "Routing", "Routing")
    box = page.get_by_test_id("stExpander").filter(has_text="Cheapest certified chain of judges")
    box.locator("summary").click()
    prices = box.locator(".st-key-cascade_prices input")
    prices.fill(PRICES)
    prices.press("Enter")
    page.wait_for_function("([el, v]) => el.value === v", arg=[prices.element_handle(timeout=SLOW), PRICES],
                           timeout=SLOW)
    box.get_by_role("button", name="Find the cheapest certified chain").click()
    table = frame_with(page, "cost per 1,000 items", timeout=SLOW / 1000)
    plans = want["plans"]
    assert list(table["plan"]) == [p["label"] for p in plans]
    assert list(table["chain"]) == [p["plan"] for p in plans]
    assert list(table["cost per 1,000 items"]) == [f"{p['cost_per_1000']:,.2f}" for p in plans]
    assert list(table["interval"]) == [f"[{p['cost_ci'][0]:,.2f}, {p['cost_ci'][1]:,.2f}]" for p in plans]
    assert list(table["accepted"]) == [f"{p['accepted']:,}" for p in plans]
    no_traceback(page)
    screenshot(page, "judge_change_02_cascade")
