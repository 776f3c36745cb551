"""Regenerate docs/screenshots/: the manual's images and every page at phone and laptop size.

    python tools/screenshots.py [--out docs/screenshots] [--only readme|pages]

Starts ``streamlit run app.py`` on a free port (the browser tests' helper,
tests/e2e/conftest.py) and drives Debian's Chromium:

1. **The manual's images** (1400 x 900, the first screen of each view, with the sample files
   of ``sample_data/``: the three synthetic judges; the Inspect log uploaded on the Data page,
   which has one sample without a confidence, so its load report shows a dropped line):
   ``data.png``, ``overview.png``, ``scale.png``, ``reliability.png``, ``recalibration.png``,
   ``routing.png``, ``report.png``, ``report_html.png`` (the downloaded HTML report opened in the
   browser), and ``phone_overview.png``, ``phone_reliability.png`` (390 x 844).
2. **Every page** (the pages of the sidebar's navigation) with the three judges and with the
   lm-eval folder, at 390 x 844 and 1440 x 900, whole-page: ``<load>-<size>-<page>.png``,
   exactly as tests/e2e/test_screenshots.py takes them (:mod:`tests.e2e.screens`); the problems
   that test would fail on are printed, not raised.

Every image is saved in 256 colours (:func:`tests.e2e.screens.compact_png`). Each manual
view is opened by a link (the view lives in the URL), except the Data page, whose Inspect log
goes through the upload input as a person's file would.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e import screens  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_server  # noqa: E402

INSPECT = next((ROOT / "sample_data" / "inspect").glob("*calib-mc-json*.eval"))
LAPTOP = {"width": 1400, "height": 900}
PHONE = dict(dict(screens.SIZES)["phone"])

#: (file, page path, query, main-area text (or CSS selector, starting with "[") scrolled to the
#: top or None, sidebar heading scrolled into view or None, viewport)
VIEWS: tuple[tuple[str, str, str, str | None, str | None, dict[str, int]], ...] = (
    ("overview.png", "/Overview", f"sample={screens.JUDGES}&reps=500", None, None, LAPTOP),
    ("scale.png", "/Scale", f"sample={screens.JUDGES}&reps=500", "[data-testid=stCustomComponentV1]", None, LAPTOP),
    (
        "reliability.png",
        "/Reliability",
        f"sample={screens.JUDGES}&scheme=corp&reps=500",
        "[data-testid=stCustomComponentV1]",
        None,
        LAPTOP,
    ),
    (
        "recalibration.png",
        "/Recalibration",
        "sample=judge_b_synthetic.jsonl&map=isotonic&scoring=kfold&reps=500",
        None,
        None,
        LAPTOP,
    ),
    (
        "routing.png",
        "/Routing",
        "sample=judge_b_synthetic.jsonl&lo=90&hi=100&cost_review=1&cost_miss=10&reps=500",
        None,
        "Review threshold",
        LAPTOP,
    ),
    ("report.png", "/Report", f"sample={screens.JUDGES}&map=platt&lo=90&reps=500", None, None, LAPTOP),
    ("phone_overview.png", "/Overview", f"sample={screens.JUDGES}&reps=500", None, None, PHONE),
    (
        "phone_reliability.png",
        "/Reliability",
        f"sample={screens.JUDGES}&reps=500",
        "[data-testid=stCustomComponentV1]",
        None,
        PHONE,
    ),
)

#: Scrolls the element's scrolling ancestor (the main area, the sidebar) so that the element's
#: top sits ``offset`` px below the ancestor's top, instantly (the app scrolls smoothly).
SCROLL_JS = """(e, offset) => {
  let box = e.parentElement;
  while (box && !(box.scrollHeight > box.clientHeight && getComputedStyle(box).overflowY !== 'visible')) box = box.parentElement;
  if (!box) return;
  const top = box.scrollTop + e.getBoundingClientRect().top - box.getBoundingClientRect().top - offset;
  box.scrollTo({top, behavior: 'instant'});
}"""


def scroll_to(locator, offset: int) -> None:  # type: ignore[no-untyped-def]
    """Scroll to the first match, when there is one (a view whose words changed still gets its picture)."""
    if locator.count():
        locator.first.evaluate(SCROLL_JS, offset)


def shoot(page, path: Path) -> None:  # type: ignore[no-untyped-def]
    page.mouse.move(1, 1)  # the pointer off every element (no tooltip or hover label in the picture)
    raw = path.with_suffix(".raw.png")
    page.screenshot(path=str(raw))
    screens.compact_png(raw, path)
    raw.unlink()
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def data_view(browser, base: str, out: Path) -> None:  # type: ignore[no-untyped-def]
    """The Data page: a judge from the samples, an Inspect log uploaded; its load report in view."""
    page = browser.new_page(viewport=LAPTOP)
    page.goto(f"{base}/?sample=judge_b_synthetic.jsonl")
    page.get_by_test_id("stFileUploaderDropzone").first.wait_for(timeout=screens.TIMEOUT_MS)
    page.locator("[class*='st-key-upload_files_']").get_by_test_id(
        "stFileUploaderDropzoneInput"
    ).set_input_files(str(INSPECT))
    page.get_by_text("Dropped by reason").wait_for(timeout=screens.TIMEOUT_MS)
    screens.settle(page)
    scroll_to(page.locator("[data-testid=stMain]").get_by_text("uploaded file: "), 70)
    screens.settle(page)
    shoot(page, out / "data.png")
    page.close()


def report_html(browser, page, tmp: Path, out: Path) -> None:  # type: ignore[no-untyped-def]
    """The report itself, opened from the downloaded file (offline, self-contained)."""
    with page.expect_download(timeout=screens.TIMEOUT_MS) as dl:
        page.get_by_role("button", name="Download the report (HTML)").click()
    html = tmp / "calib_audit.html"
    dl.value.save_as(html)
    doc = browser.new_page(viewport=LAPTOP)
    doc.goto(html.as_uri())
    doc.wait_for_function("document.querySelectorAll('.main-svg').length > 0", timeout=60_000)
    # plotly.js redraws once the responsive width is known and the margins have grown to hold
    # the legend and the tick labels: wait until the drawn page stops changing
    last = None
    for _ in range(20):
        doc.wait_for_timeout(500)
        now = doc.evaluate(
            "() => [...document.querySelectorAll('.main-svg')].map(s => s.getBoundingClientRect().height"
            " + ':' + s.querySelector('.legend')?.getBoundingClientRect().top).join()"
        )
        if now == last:
            break
        last = now
    shoot(doc, out / "report_html.png")
    doc.close()


def readme_images(browser, base: str, tmp: Path, out: Path) -> None:  # type: ignore[no-untyped-def]
    data_view(browser, base, out)
    for name, path, query, main_to, side_to, viewport in VIEWS:
        page = browser.new_page(viewport=viewport)
        screens.open_page(page, base, path, query)
        if main_to:
            main = page.locator("[data-testid=stMain]")
            scroll_to(main.locator(main_to) if main_to.startswith("[") else main.get_by_text(main_to), 70)
        if side_to:
            scroll_to(page.locator("[data-testid=stSidebar] h3", has_text=side_to), 10)
        screens.settle(page)
        shoot(page, out / name)
        if name == "report.png":
            report_html(browser, page, tmp, out)
        page.close()


def every_page(browser, base: str, tmp: Path, out: Path) -> list[str]:  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport=dict(dict(screens.SIZES)["laptop"]))
    paths = screens.page_paths(ctx.new_page(), base, screens.DATASETS[0][1])
    ctx.close()
    try:
        rules = screens.contract()
    except (ImportError, AttributeError):
        rules = None
    found: list[str] = []
    for load, _ in screens.DATASETS:
        for size, _ in screens.SIZES:
            found += screens.visit_all(browser, base, paths, load, size, tmp / "shots", also=out, rules=rules)
            print(f"wrote {len(paths)} pages, {load} at {size} size")
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    ap.add_argument("--only", choices=("readme", "pages"), default=None)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    from playwright.sync_api import sync_playwright

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        server = start_server(Path(tmp))
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            if args.only in (None, "readme"):
                readme_images(browser, server.url, Path(tmp), args.out)
            found = (
                every_page(browser, server.url, Path(tmp), args.out) if args.only in (None, "pages") else []
            )
        finally:
            browser.close()
            server.stop()
    for line in found:
        print(f"problem: {line}")
    print(f"done in {time.monotonic() - t0:.0f} s, {len(found)} problems")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
