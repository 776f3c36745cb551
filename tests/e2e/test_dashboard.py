"""The dashboard in a real browser: `streamlit run app.py` driven by Debian's Chromium.

What a person does, done the way a person does it: files go in through the upload
input, pages are switched with the sidebar navigation (so the session and its
uploads survive), the review threshold is moved with the keyboard, a copied link is
opened in a fresh browser context. Every number read off the page is compared with
a computation written here from the JSONL lines (per row, with json/numpy/
scikit-learn), not with the dashboard's own code. Screenshots of each step land in
test-artifacts/.
"""

from __future__ import annotations

import json
import re
import time
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from dashboard.chart import FRAME_SELECTOR
from tests.e2e.conftest import ROOT, screenshot
from tests.e2e.hosting import expected_routing, read_rows

SAMPLES = ROOT / "sample_data"
JUDGES = ("judge_a_synthetic.jsonl", "judge_b_synthetic.jsonl", "judge_c_synthetic.jsonl")
LMEVAL_DIR = SAMPLES / "lmeval_calib_mc"
INSPECT_EVAL = next((SAMPLES / "inspect").glob("*calib-mc-json*.eval"))
LOGPROBS = SAMPLES / "logprobs_strong_overconfident_synthetic.jsonl"
TIMEOUT_MS = 60_000

TITLES = {
    "Data": "Data", "Overview": "Overview", "Scale": "How the scale was used", "Reliability": "Reliability",
    "Recalibration": "Recalibration", "Routing": "Routing", "Report": "Report",
}

#: (label, value) of every metric in the main area or the sidebar, in page order.
METRICS_JS = """(area) => {
  const root = document.querySelector(area === 'sidebar' ? '[data-testid=stSidebar]' : '[data-testid=stMain]');
  if (!root) return [];
  return [...root.querySelectorAll('[data-testid=stMetric]')].map(m => [
    m.querySelector('[data-testid=stMetricLabel] [data-testid=stMarkdownContainer]').innerText.trim(),
    m.querySelector('[data-testid=stMetricValue]').innerText.trim(),
  ]);
}"""


# ============================================================================ per-row truth
def expected_headline(rows: list[tuple[float, bool]]) -> dict[str, str]:
    """Overview figures of a 0-100 judge, per row (ECE per stated value, as the auto binning does)."""
    from sklearn.metrics import roc_auc_score

    p = np.array([r[0] for r in rows]) / 100
    y = np.array([r[1] for r in rows], dtype=float)
    acc = y.mean()
    ece = sum((p == v).mean() * abs(v - y[p == v].mean()) for v in np.unique(p))
    return {
        "Accuracy": f"{100 * acc:.1f}%",
        "Mean stated confidence": f"{100 * p.mean():.1f}%",
        "ECE": f"{ece:.3f}",
        "Brier score": f"{np.mean((p - y) ** 2):.4f}",
        "Brier of the constant": f"{acc * (1 - acc):.4f}",
        "AUROC": f"{roc_auc_score(y, p):.3f}",
    }


def expected_scale(rows: list[tuple[float, bool]]) -> dict[str, str]:
    counts = Counter(s for s, _ in rows)
    value, n = counts.most_common(1)[0]
    return {
        "Distinct values used": f"{len(counts):,}",
        "Most common value": f"{value:g}",
        "Share at the most common value": f"{100 * n / len(rows):.1f}%",
    }


def even_rows_brier(rows: list[tuple[float, bool]]) -> float:
    """Brier score of the 2nd, 4th, ... line: what the odd/even split scores a map on."""
    even = rows[1::2]
    return sum((s / 100 - c) ** 2 for s, c in even) / len(even)


# ============================================================================ browser helpers
def open_app(page, server, query: str = "") -> None:  # type: ignore[no-untyped-def]
    # without the File System Access API the dataframe's CSV download is an ordinary download
    page.add_init_script("delete window.showSaveFilePicker;")
    page.goto(server.url + "/" + (f"?{query}" if query else ""))
    page.locator("h1", has_text="Data").first.wait_for(timeout=TIMEOUT_MS)


def go(page, name: str) -> None:  # type: ignore[no-untyped-def]
    """Switch page through the sidebar navigation (keeps the session, as a person does)."""
    page.locator("[data-testid=stSidebarNav] a", has_text=re.compile(f"^{name}$")).first.click()
    page.locator("[data-testid=stMain] h1", has_text=TITLES[name]).first.wait_for(timeout=TIMEOUT_MS)


def metric_pairs(page, area: str = "main") -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [tuple(x) for x in page.evaluate(METRICS_JS, area)]


def metrics(page, area: str = "main") -> dict[str, str]:  # type: ignore[no-untyped-def]
    out: dict[str, str] = {}
    for label, value in metric_pairs(page, area):
        out.setdefault(label, value)
    return out


def wait_metrics(page, want: dict[str, str], area: str = "main", timeout: float = 60,  # type: ignore[no-untyped-def]
                 also: tuple[str, ...] = ()) -> dict[str, str]:
    """Wait until every metric in ``want`` shows its value (and the ``also`` ones are drawn);
    on failure, save a screenshot and name what differs."""
    deadline = time.monotonic() + timeout
    got: dict[str, str] = {}
    while time.monotonic() < deadline:
        got = metrics(page, area)
        if all(got.get(k) == v for k, v in want.items()) and all(k in got for k in also):
            return got
        page.wait_for_timeout(100)
    diff = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    shot = screenshot(page, f"FAILED_wait_metrics_{int(time.time())}")
    raise AssertionError(f"metrics in the {area} of {page.url} never showed the expected values "
                         f"(shown, expected): {diff}; missing: {[k for k in also if k not in got]}; see {shot}")


def wait_url(page, **params: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until the URL's query carries these parameters."""
    def ok(url: str) -> bool:
        from urllib.parse import parse_qs, urlparse

        q = parse_qs(urlparse(url).query)
        return all(q.get(k) == [v] for k, v in params.items())

    page.wait_for_url(ok, timeout=TIMEOUT_MS)


def upload(page, *paths: Path, folder: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Put files (or one folder) into the Data page's upload input."""
    key = "upload_folder_" if folder else "upload_files_"
    target = page.locator(f"[class*='st-key-{key}']").get_by_test_id("stFileUploaderDropzoneInput")
    target.set_input_files([str(p) for p in paths])


def threshold_slider(page, name: str = "Review threshold"):  # type: ignore[no-untyped-def]
    """In the Routing page's body, in the sidebar on the other pages."""
    return page.get_by_role("slider", name=name)


def shown(slider) -> str:  # type: ignore[no-untyped-def]
    """What a threshold slider shows: its thumb's label (a select slider's value is its index)."""
    return slider.get_attribute("aria-valuetext", timeout=TIMEOUT_MS) or ""


def press(page, slider, *keys: str, expect: str) -> None:  # type: ignore[no-untyped-def]
    """Focus the slider, press keys, and check where the slider went (the label its thumb
    shows). Each press waits until the slider has moved."""
    from playwright.sync_api import expect as pw_expect

    slider.focus()
    for i, k in enumerate(keys):
        before = slider.input_value()
        page.keyboard.press(k)
        if i < len(keys) - 1:
            page.wait_for_function("([el, v]) => el.value !== v", arg=[slider.element_handle(), before],
                                   timeout=TIMEOUT_MS)
            slider.focus()
    pw_expect(slider).to_have_attribute("aria-valuetext", expect, timeout=TIMEOUT_MS)


def pick(page, key: str, option: str) -> None:  # type: ignore[no-untyped-def]
    """Choose an option of a selectbox / multiselect by its visible label."""
    page.locator(f".st-key-{key} [role=combobox]").click()
    page.get_by_role("option", name=option, exact=True).click()


def frame_with(page, column: str, timeout: float = 30):  # type: ignore[no-untyped-def]
    """The main-area dataframe whose (first, always drawn) columns include ``column``, as its
    own "Download as CSV" button delivers it: the whole table, not just what the grid drew."""
    import pandas as pd

    frames = page.locator("[data-testid=stMain] [data-testid=stDataFrame]")
    deadline = time.monotonic() + timeout
    seen: list[list[str]] = []
    while time.monotonic() < deadline:
        seen = [[h.strip() for h in frames.nth(i).locator("table[role=grid] th[role=columnheader]").all_inner_texts()]
                for i in range(frames.count())]
        hit = next((i for i, headers in enumerate(seen) if column in headers), None)
        if hit is not None:
            frame = frames.nth(hit)
            frame.hover()
            with page.expect_download(timeout=TIMEOUT_MS) as dl:
                # dispatched, not clicked: the toolbar floats over the element above it
                frame.get_by_role("button", name="Download as CSV").dispatch_event("click")
            return pd.read_csv(dl.value.path(), encoding="utf-8-sig", dtype=str, keep_default_na=False)
        page.wait_for_timeout(100)
    raise AssertionError(f"no dataframe with a column {column!r}: {seen}")


def no_traceback(page) -> None:  # type: ignore[no-untyped-def]
    assert page.get_by_test_id("stException").count() == 0, page.get_by_test_id("stException").first.inner_text()


# ============================================================================ tests
def test_upload_and_move_the_threshold_with_the_keyboard(server, page):
    """Upload a judge's file, read its load report, then move the review threshold with the
    keyboard on the Routing page: every move changes the five numbers to the per-row count."""
    path = SAMPLES / JUDGES[1]
    rows = read_rows(path)
    open_app(page, server, "reps=200")
    upload(page, path)
    wait_metrics(page, {"Rows kept": f"{len(rows):,}", "Lines dropped": "0", "Format": "stated",
                        "Distinct stated values": str(len({s for s, _ in rows}))})
    assert page.locator("[data-testid=stMain]").get_by_text("uploaded file: judge_b_synthetic.jsonl").count() == 1
    screenshot(page, "dashboard_01_data_uploaded")

    go(page, "Routing")
    slider = threshold_slider(page)
    assert shown(slider) == "80"  # the default: probability 0.8 on the 0-100 scale
    wait_metrics(page, expected_routing(rows, 80))
    # a press moves to the next value the judge used (70, 75, 80, 85, 88, 90, 95, 98, 100); End: the top
    for keys, lo in ((("ArrowRight",), 85), (("ArrowLeft", "ArrowLeft"), 75), (("End",), 100),
                     (("ArrowLeft",) * 3, 90)):
        press(page, slider, *keys, expect=str(lo))
        wait_metrics(page, expected_routing(rows, lo))
        wait_url(page, lo=str(lo))
    below = sum(1 for s, _ in rows if s < 90)
    button = page.get_by_role("button", name=f"Download the review queue (CSV, {below:,} items)")
    button.wait_for(timeout=TIMEOUT_MS)
    with page.expect_download() as dl:
        button.click()
    import pandas as pd

    queue = pd.read_csv(dl.value.path())
    assert sorted(queue["id"]) == sorted(json.loads(line)["id"] for line in path.read_text().splitlines()
                                         if json.loads(line)["confidence"] < 90)

    # an upper threshold: items between the two are a middle band
    page.locator(".st-key-w_hi_on label").click()
    upper = threshold_slider(page, "Upper threshold")
    upper.wait_for(timeout=TIMEOUT_MS)
    press(page, upper, "End", expect="100")
    wait_metrics(page, expected_routing(rows, 90, 100))
    wait_url(page, lo="90", hi="100")
    no_traceback(page)
    screenshot(page, "dashboard_02_routing_after_keys")


def test_a_copied_link_reopens_the_same_view(server, page, browser):
    """Pick a sample, move the threshold, copy the URL: a fresh browser context opened on it
    shows the same page, sample, threshold and numbers."""
    rows = read_rows(SAMPLES / JUDGES[2])
    open_app(page, server, "reps=0")
    pick(page, "w_samples", JUDGES[2])
    page.keyboard.press("Escape")
    wait_metrics(page, {"Rows kept": f"{len(rows):,}"})
    go(page, "Routing")
    slider = threshold_slider(page)
    assert shown(slider) == "85"  # the default 80 at the position that routes alike (judge c said 70, 85…)
    press(page, slider, "ArrowRight", "ArrowRight", expect="95")
    want = expected_routing(rows, 95)
    wait_metrics(page, want)
    wait_url(page, lo="95", sample=JUDGES[2])
    link = page.url
    assert "/Routing?" in link

    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        fresh = ctx.new_page()
        fresh.goto(link)
        fresh.locator("[data-testid=stMain] h1", has_text="Routing").wait_for(timeout=TIMEOUT_MS)
        wait_metrics(fresh, want)
        assert shown(threshold_slider(fresh)) == "95"
        assert fresh.locator(".st-key-w_model [role=combobox]").input_value() == "judge_c_synthetic"
        screenshot(fresh, "dashboard_03_copied_link")
    finally:
        ctx.close()


def test_every_page_shows_the_engines_numbers(server, page):
    """Three judges loaded from a link; each page's key number equals a per-row computation."""
    rows = {name: read_rows(SAMPLES / name) for name in JUDGES}
    open_app(page, server, "sample=" + ",".join(JUDGES) + "&reps=200")
    wait_metrics(page, {"Rows kept": "1,000"})
    # the three load reports are drawn one after the other
    deadline = time.monotonic() + 60
    while len(kept := [v for k, v in metric_pairs(page) if k == "Rows kept"]) < 3 and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert kept == ["1,000"] * 3
    # the entry page is listed by its name ("Data", not the script's "app"), first, then pages/ in order
    nav = [t.strip() for t in page.locator("[data-testid=stSidebarNav] a").all_inner_texts()]
    assert nav == ["Data", "Overview", "Scale", "Reliability", "Recalibration", "Routing", "Report", "Drift",
                   "Review"]

    go(page, "Overview")
    a = rows[JUDGES[0]]
    wait_metrics(page, {**expected_headline(a), "Better forecast": "the constant"})
    # the comparison table: one row per judge, in load order
    table = frame_with(page, "Model")
    assert list(table["Model"]) == [j.removesuffix(".jsonl") for j in JUDGES]
    assert list(table["Right"]) == [f"{100 * np.mean([c for _, c in rows[j]]):.1f}%" for j in JUDGES]
    assert list(table["Said 90 or more"]) == [
        f"{100 * np.mean([s >= 90 for s, _ in rows[j]]):.0f}% of answers" for j in JUDGES]
    assert list(table["Right when it did"]) == [
        f"{100 * np.mean([c for s, c in rows[j] if s >= 90]):.1f}%" for j in JUDGES]
    screenshot(page, "dashboard_04_overview")

    # the focus follows the sidebar's model choice
    pick(page, "w_model", "judge_b_synthetic")
    wait_url(page, model="judge_b_synthetic")
    wait_metrics(page, expected_headline(rows[JUDGES[1]]))

    go(page, "Scale")
    wait_metrics(page, expected_scale(rows[JUDGES[1]]))
    screenshot(page, "dashboard_05_scale")

    go(page, "Reliability")
    wait_metrics(page, {"ECE": expected_headline(rows[JUDGES[1]])["ECE"]})
    screenshot(page, "dashboard_06_reliability")

    go(page, "Recalibration")
    pick(page, "w_method", "Platt (logistic)")
    wait_url(page, map="platt")
    brier = even_rows_brier(rows[JUDGES[1]])
    got = wait_metrics(page, {"Brier before": f"{brier:.4f}"}, also=("Brier after",))
    assert float(got["Brier after"]) < brier
    screenshot(page, "dashboard_07_recalibration")

    go(page, "Routing")
    wait_metrics(page, expected_routing(rows[JUDGES[1]], 80))
    screenshot(page, "dashboard_08_routing")

    go(page, "Report")
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download the metrics (JSON)").click()
    doc = json.loads(Path(dl.value.path()).read_text())
    b = rows[JUDGES[1]]
    assert doc["n"] == len(b) and doc["correct"] == sum(c for _, c in b)
    assert f"{doc['brier']:.4f}" == expected_headline(b)["Brier score"]
    with page.expect_download(timeout=TIMEOUT_MS) as dl:
        page.get_by_role("button", name="Download the report (HTML)").click()
    html = Path(dl.value.path()).read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert all(j.removesuffix(".jsonl") in html for j in JUDGES)
    assert "A stated 95 meant 79%" in html  # judge_b's verdict sentence (878 answers at 95)
    no_traceback(page)
    screenshot(page, "dashboard_09_report")


def test_a_bad_file_shows_the_load_report_and_an_unreadable_one_its_reason(server, page, tmp_path):
    """Bad lines are listed by line number with their reason and never block the valid ones;
    a file with nothing usable gives its message, not a traceback."""
    mixed = ROOT / "tests" / "data" / "bad" / "mixed.jsonl"
    valid, bad_lines = 0, []
    for i, raw in enumerate(mixed.read_bytes().split(b"\n"), start=1):
        try:
            o = json.loads(raw.decode("utf-8").lstrip("\ufeff"))
        except (UnicodeDecodeError, ValueError):
            if raw.strip():
                bad_lines.append(i)
            continue
        ok = (isinstance(o, dict) and isinstance(o.get("confidence"), int | float)
              and not isinstance(o.get("confidence"), bool) and o["confidence"] == o["confidence"]
              and 0 <= o["confidence"] <= 100 and o.get("correct") in (True, False))
        if ok:
            valid += 1
        elif isinstance(o, dict) and o.get("confidence") == "85%" and o.get("correct") == "yes":
            valid += 1  # "85%" and "yes" are read as 85 and true (documented leniency)
        else:
            bad_lines.append(i)
    open_app(page, server)
    upload(page, mixed)
    wait_metrics(page, {"Rows kept": f"{valid:,}", "Lines dropped": f"{len(bad_lines):,}"})
    page.get_by_text("Dropped by reason").wait_for()
    # every offending line, by number, with its reason
    issues = frame_with(page, "line")
    assert [int(x) for x in issues["line"]] == bad_lines
    assert all(issues["reason"])
    screenshot(page, "dashboard_10_bad_lines")

    unusable = tmp_path / "allbad.jsonl"
    unusable.write_text('{"confidence": "x", "correct": true}\nnot json\n')
    upload(page, unusable)
    alert = page.locator("[data-testid=stMain] [data-testid=stAlertContentError]")
    alert.first.wait_for(timeout=TIMEOUT_MS)
    assert "allbad.jsonl" in alert.first.inner_text()
    no_traceback(page)
    screenshot(page, "dashboard_11_unusable_file")


def test_llm_logs_load_through_the_uploader_as_they_are(server, page):
    """An lm-eval samples file, an Inspect .eval log and an option-logprob file go through the
    file input together, and an lm-eval output folder through the folder input: no conversion."""
    lm_file = sorted(LMEVAL_DIR.glob("samples_calib_mc_letters_*.jsonl"))[0]
    lm_lines = [json.loads(x) for x in lm_file.read_text().splitlines() if x.strip()]
    lp_lines = [json.loads(x) for x in LOGPROBS.read_text().splitlines() if x.strip()]
    with zipfile.ZipFile(INSPECT_EVAL) as z:  # member names are readable without zstd
        inspect_samples = [n for n in z.namelist() if n.startswith("samples/") and n.endswith(".json")]
    folder_lines = sum(1 for p in LMEVAL_DIR.glob("samples_*.jsonl") for x in p.read_text().splitlines() if x.strip())

    open_app(page, server, "reps=100")
    upload(page, lm_file, INSPECT_EVAL, LOGPROBS)
    page.locator("[data-testid=stMain] [data-testid=stMetric]", has_text="Format").nth(2).wait_for(
        timeout=TIMEOUT_MS)
    pairs = metric_pairs(page)
    formats = [v for k, v in pairs if k == "Format"]
    kept = [v for k, v in pairs if k == "Rows kept"]
    dropped = [v for k, v in pairs if k == "Lines dropped"]
    assert formats == ["lmeval", "inspect", "logprobs"]
    # sample q039 answered without a confidence: the only one the Inspect log loses
    assert kept == [f"{len(lm_lines):,}", f"{len(inspect_samples) - 1:,}", f"{len(lp_lines):,}"]
    assert dropped == ["0", "1", "0"]
    assert list(frame_with(page, "line")["sample"]) == ["q039"]
    screenshot(page, "dashboard_12_llm_logs")

    upload(page, LMEVAL_DIR, folder=True)
    page.locator("[data-testid=stMain] [data-testid=stMetric]", has_text="Format").nth(3).wait_for(
        timeout=TIMEOUT_MS)
    pairs = metric_pairs(page)
    assert [v for k, v in pairs if k == "Format"][3] == "lmeval"
    assert [v for k, v in pairs if k == "Rows kept"][3] == f"{folder_lines:,}"

    # the option-logprob file audits: accuracy = share of argmax == gold, mean confidence = top softmax
    pick(page, "w_model", LOGPROBS.name.removesuffix(".jsonl"))
    go(page, "Overview")
    logits = np.array([o["logits"] for o in lp_lines], dtype=float)
    gold = np.array([o["gold"] for o in lp_lines])
    prob = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    wait_metrics(page, {"Accuracy": f"{100 * np.mean(prob.argmax(axis=1) == gold):.1f}%",
                        "Mean stated confidence": f"{100 * prob.max(axis=1).mean():.1f}%"})
    no_traceback(page)


def test_a_200000_row_upload_works_on_every_page(server, page, tmp_path):
    """A 200,000-row file: load report, headline numbers, scale, reliability, a map, and
    threshold moves checked against numpy; the report page still offers its downloads."""
    n = 200_000
    rng = np.random.default_rng(3)
    stated = rng.integers(50, 101, size=n)
    right = rng.random(n) < stated / 100 * 0.85
    path = tmp_path / "big_judge.jsonl"
    with open(path, "w") as f:
        for i, (s, c) in enumerate(zip(stated.tolist(), right.tolist(), strict=True)):
            f.write(f'{{"id": "r{i}", "confidence": {s}, "correct": {"true" if c else "false"}}}\n')
    rows = list(zip(stated.astype(float).tolist(), right.tolist(), strict=True))

    open_app(page, server, "reps=200")
    upload(page, path)
    wait_metrics(page, {"Rows kept": "200,000", "Lines dropped": "0", "Distinct stated values": "51"}, timeout=120)
    go(page, "Overview")
    wait_metrics(page, expected_headline(rows))
    go(page, "Scale")
    wait_metrics(page, expected_scale(rows))
    go(page, "Reliability")
    wait_metrics(page, {"ECE": expected_headline(rows)["ECE"]})
    go(page, "Recalibration")
    pick(page, "w_method", "isotonic")
    got = wait_metrics(page, {"Brier before": f"{even_rows_brier(rows):.4f}"}, also=("Brier after",))
    assert float(got["Brier after"]) < even_rows_brier(rows)
    pick(page, "w_method", "none (stated confidence)")
    go(page, "Routing")
    wait_metrics(page, expected_routing(rows, 80))
    slider = threshold_slider(page)
    for keys, lo in ((("ArrowLeft",), 79), (("ArrowLeft",) * 3, 76), (("ArrowRight",) * 2, 78)):
        press(page, slider, *keys, expect=str(lo))
        wait_metrics(page, expected_routing(rows, lo))
    screenshot(page, "dashboard_13_200k_routing")
    go(page, "Report")
    page.get_by_role("button", name="Download the report (HTML)").wait_for(timeout=TIMEOUT_MS)
    no_traceback(page)


@pytest.mark.parametrize("name", ["Overview", "Scale", "Reliability", "Recalibration", "Routing", "Report"])
def test_a_deep_link_to_a_page_opens_it_with_its_data(server, page, name):
    """A link straight to a page (its first script run) loads the sample and the settings."""
    rows = read_rows(SAMPLES / JUDGES[0])
    page.goto(f"{server.url}/{name}?sample={JUDGES[0]}&reps=0&lo=90")
    page.locator("[data-testid=stMain] h1", has_text=TITLES[name]).first.wait_for(timeout=TIMEOUT_MS)
    area = "main" if name == "Routing" else "sidebar"
    wait_metrics(page, expected_routing(rows, 90), area=area)
    assert shown(threshold_slider(page)) == "90"
    no_traceback(page)


# ============================================================================ scales and labels
def axis_texts(page, chart: int, axis: str) -> tuple[str, list[str]]:
    """(title, tick labels) of one x axis (``x``, ``x2``…) of the ``chart``-th Plotly figure
    in the main area (each in its frame: dashboard.chart), as drawn in the SVG."""
    fig = page.frame_locator(f"[data-testid=stMain] {FRAME_SELECTOR}").nth(chart).locator(".js-plotly-plot")
    fig.locator(".main-svg").first.wait_for(timeout=TIMEOUT_MS)
    title = (fig.locator(f"text.{axis}title").first.text_content(timeout=TIMEOUT_MS) or "").strip()
    ticks = [(t.text_content() or "").strip() for t in fig.locator(f"g.{axis}tick text").all()]
    return title, ticks


def test_judges_on_two_scales_get_an_axis_each_on_the_scale_page(server, page, tmp_path):
    # a judge asked for 1 to 10 next to one asked for 0 to 100 (judge_a: 80, 90, 95, 100)
    ten = tmp_path / "judge_1_10.jsonl"
    ten.write_text("".join(json.dumps({"id": f"t{i}", "confidence": 7 + i % 4, "correct": i % 3 != 0}) + "\n"
                           for i in range(400)))
    open_app(page, server)
    upload(page, SAMPLES / JUDGES[0], ten)
    page.get_by_test_id("stMetricLabel").filter(has_text="Rows kept").nth(1).wait_for(timeout=TIMEOUT_MS)
    go(page, "Scale")
    title1, ticks1 = axis_texts(page, 0, "x")
    title2, ticks2 = axis_texts(page, 0, "x2")
    # each axis spans the values its judge used (the title names the scale), ticks on them
    assert (title1, ticks1) == ("stated confidence (0-100)", ["80", "90", "95", "100"])
    assert (title2, ticks2) == ("stated confidence (1-10)", ["7", "8", "9", "10"])
    # what each value meant: both judges on the probability axis, where y = x is the same line
    title, _ = axis_texts(page, 1, "x")
    assert title == "stated confidence as a probability (%)"
    screenshot(page, "scale_two_scales")
    no_traceback(page)


def test_threshold_on_opens_on_a_click_and_the_diagram_follows_the_map(server, page):
    open_app(page, server, "sample=judge_a_synthetic.jsonl")
    go(page, "Routing")
    # on the Routing page the review threshold's widgets are in the page body (issue 22)
    on = page.get_by_test_id("stMain").get_by_role("combobox", name="Threshold on")
    on.wait_for(timeout=TIMEOUT_MS)
    assert on.is_disabled()  # no map yet: nothing to threshold on but the stated value
    pick(page, "w_method", "Platt (logistic)")
    wait_url(page, map="platt")
    page.wait_for_function("() => !document.querySelector('[data-testid=stMain] input[aria-label=\"Threshold on\"]')"
                           ".disabled", timeout=TIMEOUT_MS)
    # the page is taller than the window: bring the box to its middle, as a person scrolls
    # to it (at the window's bottom edge its list would open below the fold)
    on.evaluate("el => el.scrollIntoView({block: 'center'})")
    on.click()  # a mouse click opens it, and its options are there to click
    options = page.get_by_role("option")
    options.first.wait_for(timeout=TIMEOUT_MS)
    assert options.all_inner_texts() == ["stated confidence", "recalibrated probability"]
    page.get_by_role("option", name="recalibrated probability", exact=True).click()
    wait_url(page, on="calibrated")
    slider = threshold_slider(page)
    deadline = time.monotonic() + 60
    bounds = "el => [Number(el.min), Number(el.max)]"  # an <input type=range>
    while slider.evaluate(bounds) != [0, 1] and time.monotonic() < deadline:
        page.wait_for_timeout(200)  # the slider now runs over probabilities, 0 to 1
    assert slider.evaluate(bounds) == [0, 1]
    # the diagram shows calibrated probabilities now, and says so
    deadline = time.monotonic() + 60
    title = ""
    while time.monotonic() < deadline:
        title, _ = axis_texts(page, 0, "x")
        if title == "calibrated probability (%)":
            break
        page.wait_for_timeout(200)
    assert title == "calibrated probability (%)"
    screenshot(page, "routing_threshold_on_calibrated")
    no_traceback(page)
