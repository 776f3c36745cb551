"""Regenerate docs/screenshots/*.png: one per dashboard view, from the running app.

    python docs/make_screenshots.py [--out docs/screenshots] [--width 1400 --height 900]

Starts ``streamlit run app.py`` on a free port (the browser tests' helper), drives
Debian's Chromium at laptop size and saves the viewport of each view, with the
sample files of ``sample_data/`` (the three synthetic judges; the Inspect log for the
load report, which has one sample without a confidence):

    data.png, overview.png, scale.png, reliability.png, recalibration.png, routing.png, report.png,
    and report_html.png (the downloaded HTML report opened in the browser)

Each page is opened by a link (the view lives in the URL), except the Data page, whose
Inspect log goes through the upload input as a person's file would.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_server  # noqa: E402

JUDGES = "judge_a_synthetic.jsonl,judge_b_synthetic.jsonl,judge_c_synthetic.jsonl"
INSPECT = next((ROOT / "sample_data" / "inspect").glob("*calib-mc-json*.eval"))

#: (file, page path, query, metric that must be on screen or None, main-area text (or CSS selector,
#: starting with "[") scrolled to the top or None, sidebar heading scrolled into view or None)
VIEWS: tuple[tuple[str, str, str, str | None, str | None, str | None], ...] = (
    ("overview.png", "Overview", f"sample={JUDGES}", "Better forecast", "Brier score", None),
    ("scale.png", "Scale", f"sample={JUDGES}&reps=500", "Distinct values used", "[data-testid=stDataFrame]", None),
    ("reliability.png", "Reliability", f"sample={JUDGES}&scheme=corp&reps=500", "ECE", None, None),
    ("recalibration.png", "Recalibration",
     "sample=judge_b_synthetic.jsonl&map=isotonic&scoring=kfold&reps=500", "Brier after",
     "model: judge_b_synthetic", None),
    ("routing.png", "Routing",
     "sample=judge_b_synthetic.jsonl&lo=90&hi=100&cost_review=1&cost_miss=10&reps=500", "Total cost",
     "model: judge_b_synthetic", "Review threshold"),
    ("report.png", "Report", f"sample={JUDGES}&map=platt&lo=90&reps=500", None, None, None),
)

#: Resolves once every Plotly chart on the page has drawn its SVG and the app is idle.
SETTLED_JS = """() => {
  const charts = [...document.querySelectorAll('[data-testid=stPlotlyChart]')];
  const drawn = charts.every(c => c.querySelector('.main-svg'));
  const running = document.querySelector('[data-testid=stStatusWidget] button');
  const stale = document.querySelector('[data-stale=true]');
  return drawn && !running && !stale;
}"""


def settle(page) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_function(SETTLED_JS, timeout=120_000, polling=200)
    page.wait_for_timeout(800)  # Plotly's transitions and the fonts
    page.wait_for_function(SETTLED_JS, timeout=120_000, polling=200)


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
    locator.first.evaluate(SCROLL_JS, offset)


def shoot(page, path: Path) -> None:  # type: ignore[no-untyped-def]
    # the pointer off every element (no tooltip or hover label in the picture)
    page.mouse.move(1, 1)
    page.screenshot(path=str(path))
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=900)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        server = start_server(Path(tmp))
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            viewport = {"width": args.width, "height": args.height}
            # Data: a judge picked from the samples, an Inspect log uploaded; its load report in view
            page = browser.new_page(viewport=viewport)
            page.goto(f"{server.url}/?sample=judge_b_synthetic.jsonl")
            page.get_by_test_id("stFileUploaderDropzone").first.wait_for(timeout=120_000)
            page.locator("[class*='st-key-upload_files_']").get_by_test_id(
                "stFileUploaderDropzoneInput").set_input_files(str(INSPECT))
            page.get_by_text("Dropped by reason").wait_for(timeout=120_000)
            settle(page)
            scroll_to(page.locator("[data-testid=stMain]").get_by_text("uploaded file: "), 70)
            settle(page)
            shoot(page, args.out / "data.png")
            page.close()

            for name, path, query, marker, main_to, side_to in VIEWS:
                page = browser.new_page(viewport=viewport)
                page.goto(f"{server.url}/{path}?{query}")
                if marker:
                    page.locator("[data-testid=stMetric]", has_text=marker).first.wait_for(timeout=120_000)
                else:
                    page.get_by_role("button", name="Download the report (HTML)").wait_for(timeout=120_000)
                settle(page)
                if main_to:
                    main = page.locator("[data-testid=stMain]")
                    target = main.locator(main_to) if main_to.startswith("[") else main.get_by_text(main_to)
                    scroll_to(target, 70)
                if side_to:
                    scroll_to(page.locator("[data-testid=stSidebar] h3", has_text=side_to), 10)
                settle(page)
                shoot(page, args.out / name)
                if name == "report.png":
                    # and the report itself, opened from the downloaded file (offline, self-contained)
                    with page.expect_download(timeout=120_000) as dl:
                        page.get_by_role("button", name="Download the report (HTML)").click()
                    html = Path(tmp) / "calib_audit.html"
                    dl.value.save_as(html)
                    doc = browser.new_page(viewport=viewport)
                    doc.goto(html.as_uri())
                    doc.wait_for_function("document.querySelectorAll('.main-svg').length > 0", timeout=60_000)
                    doc.wait_for_timeout(800)
                    shoot(doc, args.out / "report_html.png")
                    doc.close()
                page.close()
        finally:
            browser.close()
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
