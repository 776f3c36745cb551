"""Plain words (issue 14): the sentences of calib.present.explain, checked against closed
forms written here, and the same sentence for the same quantity on the page, in the CLI's
text report and in the HTML report, all computed from the same file."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from calib.present import explain, questions, tables
from calib.present import format as fmt
from tests.apptest import TIMEOUT, app, ok
from tests.cli_run import run

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_data"
JUDGE = "judge_b_synthetic.jsonl"


# ----------------------------------------------------------------- value -> sentence (closed forms)
def test_ece_sentence_is_the_distance_in_percentage_points():
    assert explain.meaning("ece", 0.16) == (
        "ECE 0.160: on average the stated confidence is 16 percentage points away from how often the judge is right."
    )
    assert "4.3 percentage points" in explain.meaning("ece", 0.043)  # below 10 points: one decimal
    assert "0.4 percentage points" in explain.meaning("mce", 0.004)


@pytest.mark.parametrize(
    ("x", "words"),
    [
        (0.72, "a right answer gets a higher confidence than a wrong one 72% of the time"),
        (0.30, "a wrong answer gets the higher confidence 70% of the time"),
        (0.50, "does not tell right answers from wrong ones"),
    ],
)
def test_auroc_sentence_is_the_chance_of_ranking_a_pair_right(x, words):
    assert words in explain.meaning("auroc", x)


def test_counts_and_shares_of_routing_figures():
    assert explain.meaning("to_person", 250, total=1000).startswith("Sent to a person 250 of 1,000 (25%)")
    assert explain.meaning("accepted", 12345, total=20000).startswith(
        "Accepted unseen 12,345 of 20,000 (62%)"
    )
    assert (
        explain.meaning("accuracy", 0.659) == "Accuracy 65.9%: about 659 of every 1,000 answers were right."
    )
    assert "at most 4.8% are wrong with 95% confidence" in explain.meaning(
        "error_bound", 0.048, confidence=0.95
    )


def test_overconfidence_and_cox_say_which_way():
    assert explain.meaning("overconfidence", 0.226).startswith(
        "Overconfidence +23 pts: on average the judge states 23 percentage points more"
    )
    assert "less confidence" in explain.meaning("overconfidence", -0.05)
    assert "too spread out" in explain.meaning("cox_slope", 0.56)
    assert "too bunched" in explain.meaning("cox_slope", 1.4)


def test_missing_value_reads_as_missing_never_none():
    for key in explain.QUANTITIES:
        text = explain.meaning(key, None)
        assert text.endswith("not defined for this data.") and "None" not in text
        assert explain.meaning(key, float("nan")).endswith("not defined for this data.")


def test_every_quantity_has_what_good_and_a_sentence_naming_it():
    for key, q in explain.QUANTITIES.items():
        assert q.what.endswith(".") and q.good.endswith("."), key
        assert q.name in explain.help_text(key) and q.what in explain.help_text(key)
        # the sentence names the figure by its label (the words before the value)
        first = q.label.split(" (")[0].split()[0]
        assert explain.meaning(key, 0.3).startswith(first), (key, explain.meaning(key, 0.3))


def test_p_value_words():
    assert "1.7% of the time" in explain.p_meaning(0.017)
    assert "less than 0.1%" in explain.p_meaning(1e-9)
    assert explain.p_meaning(0.0) == "Calibrated stated confidences could never produce this data."
    # the verdict's cut for a calibration test is the level over the three tests
    assert "below p=0.01667" in explain.test_meaning("goodness_of_fit", 0.017, 0.95)
    assert "does not reach the verdict's cut" in explain.test_meaning("goodness_of_fit", 0.017, 0.95)
    assert "counts against calibration" in explain.test_meaning("cox_lr", 0.016, 0.95)
    assert "does not decide" in explain.test_meaning("spiegelhalter", 0.001, 0.95)


def test_verdict_tests_follow_the_engine():
    from calib.audit import CALIBRATION_TESTS, miscalibrated
    from calib.metrics import Test

    text = explain.verdict_tests(0.95)
    assert len(CALIBRATION_TESTS) == 3 and "first three tests" in text and f"below {0.05 / 3:.4g}" in text
    assert "(Brier vs constant) decides which forecast is better at p below 0.05" in text

    # the engine decides as the sentence says: one test just below 0.05/3 flags, just above does not
    def tests(p):
        base = {k: Test(k, 1.0, None, 0.5, None) for k in CALIBRATION_TESTS}
        base["goodness_of_fit"] = Test("goodness_of_fit", 1.0, None, p, None)
        return base

    assert miscalibrated(tests(0.0166), 0.95) is True
    assert miscalibrated(tests(0.0168), 0.95) is False


def test_interval_pattern_reads_every_interval_the_formatters_write():
    pattern = re.compile(explain.INTERVAL_PATTERN)
    for text in (
        fmt.interval(0.12, 0.2),
        fmt.interval(0.12, 0.2, fmt.pct),
        fmt.interval(1234, 1500, fmt.count),
        fmt.interval(1724.98, 2204.05, fmt.money),
        fmt.interval(-0.031, 0.02, fmt.points),
        fmt.ci_text((0.12, 0.16), 4),
        fmt.interval(-0.0123, 0.004, fmt.signed),
    ):
        assert pattern.search(f"95% {text}"), text
    assert not pattern.search("95% interval 12.0% to 16.0%")  # the old wording is gone from metrics


def test_one_formatter_set_for_costs_formulas_and_missing_cells():
    assert fmt.estimate(1958, 1724.98, 2204.05, fmt.money) == "1,958.00 [1,724.98, 2,204.05]"
    assert fmt.term(-0.8824) == "- 0.8824" and fmt.term(0.5) == "+ 0.5000"
    from calib.maps import CalibrationMap
    from calib.scale import Scale

    cmap = CalibrationMap(
        method="platt", scale=Scale(0.0, 100.0, "0-100"), params={"slope": 0.7564, "intercept": -0.8824}
    )
    formula = tables.map_formula(cmap)
    assert formula.startswith("q = sigmoid(0.7564 logit f(s) - 0.8824)") and "+ -" not in formula


def test_map_table_has_no_literal_none_and_letter_columns_are_words():
    from calib import maps
    from calib.loading import load

    ds = load(SAMPLES / JUDGE)
    fit = maps.fit(ds, "isotonic", scoring="oddeven", reps=0)
    frame = tables.map_table_frame(fit)
    assert list(frame.columns) == list(tables.MAP_COLUMNS.values())
    assert not frame.isna().any().any() and "None" not in frame.to_string()
    import pandas as pd

    lb = tables.letter_bias_frame(
        pd.DataFrame({"letter": ["A"], "predicted_share": [0.25], "accuracy_when_predicted": [0.5]})
    )
    assert list(lb.columns) == ["option letter", "share predicted (%)", "right when predicted (%)"]
    assert lb.iloc[0, 1] == 25.0


def test_load_report_says_each_fact_once():
    from calib.loading import load

    ds = load(SAMPLES / JUDGE)
    text = "\n".join(tables.load_lines(ds.report, ds.table.scale))
    lines = text.splitlines()
    # the reader's notes repeat the detected fields and the scale: shown once, in their own line
    assert sum("0-100" in line for line in lines) == 1 and text.count("values from") == 1
    assert text.count("correct") == 1 and text.count("confidence <-") == 1 and "auto-detected" not in text
    assert tables.scale_words("given: --rescale 0,200") == "set by you: 0 to 200"
    assert tables.scale_words("--rescale 0,100: every value lies in 1-10: did you mean --rescale 1,10?") == (
        "the scale 0 to 100: every value lies in 1-10: did you mean the scale 1 to 10?"
    )


# ----------------------------------------------------------------- the verdict's hedges
def _fifty_rows(tmp_path: Path) -> Path:
    """50 answers stated 70/80/90, right 8 points less often than stated (seeded)."""
    random.seed(0)
    rows = []
    for _ in range(50):
        c = random.choice([70, 80, 90])
        rows.append({"confidence": c, "correct": random.random() < (c / 100 - 0.08)})
    path = tmp_path / "fifty.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def test_small_file_verdict_explains_why_no_evidence_sits_next_to_a_small_p(tmp_path):
    from calib.audit import audit
    from calib.loading import load

    a = audit(load(_fifty_rows(tmp_path)).table, reps=300)
    citl = a.tests["calibration_in_the_large"].p_value
    assert a.miscalibrated is False and 0.05 / 3 < citl < 0.05
    text = "\n".join(a.verdict)
    assert "No evidence of miscalibration" in text
    assert f"calibration-in-the-large p={citl:.3f} would count at the 5% level" in text
    assert "needs one below p=0.01667 (Bonferroni)" in text
    hi = a.ci["ece"][1]
    assert f"could still be as large as {hi:.3f}" in text


# ----------------------------------------------------------------- one sentence, three faces
def _unescape(md: str) -> str:
    """A markdown element's body as the reader sees it (md_escape's backslashes removed)."""
    return re.sub(r"\\(.)", r"\1", md).replace("  \n", "\n")


def _report_script():
    import streamlit as st

    from calib.present import figures, html_report
    from dashboard.page import page_setup
    from dashboard.report import report_parts
    from dashboard.summary import settings_text

    ctx = page_setup("report")
    parts = report_parts(ctx)
    st.session_state["html"] = html_report.audit_report(
        parts.models,
        comparison=parts.comparison,
        comparison_figures=parts.comparison_figures,
        settings=settings_text(ctx.view),
        config=figures.CONFIG,
    )


def test_page_cli_and_html_report_use_the_same_sentences(capsys):
    params = {"sample": JUDGE, "reps": "200", "seed": "0"}
    code, cli_text, _ = run(["audit", SAMPLES / JUDGE, "--reps", "200", "--seed", "0"], capsys)
    assert code == 0
    _, cli_json, _ = run(["audit", SAMPLES / JUDGE, "--reps", "200", "--seed", "0", "--json"], capsys)
    m = json.loads(cli_json)

    at = app()
    at.query_params.update(params)
    at.switch_page("pages/1_Overview.py")
    page = "\n".join(_unescape(c.value) for c in ok(at.run()).main.caption)

    rep = AppTest.from_function(_report_script, default_timeout=TIMEOUT)
    rep.query_params.update(params)
    html = ok(rep.run()).session_state["html"]

    # the sentences, written here from the JSON's figures (closed forms, not the module)
    ece, auroc, acc = m["ece"], m["auroc"], m["accuracy"]
    want = [
        f"ECE {ece:.3f}: on average the stated confidence is {100 * ece:.0f} percentage points away from how "
        "often the judge is right.",
        f"AUROC {auroc:.2f}: a right answer gets a higher confidence than a wrong one {100 * auroc:.0f}% of the "
        "time (0.5 is chance).",
        f"Accuracy {100 * acc:.1f}%: about {round(1000 * acc):,} of every 1,000 answers were right.",
        f"Brier score {m['brier']:.4f}: the average squared miss of the stated probability; saying 50% every "
        "time scores 0.25, a perfect judge 0.",
    ]
    flat_cli = " ".join(cli_text.split())
    for i, sentence in enumerate(want):
        assert sentence in cli_text, sentence
        assert fmt.esc(sentence) in html, sentence
        # the Overview words ECE and AUROC once, in its trust and ranking lines (issue 23)
        assert (f"What this means: {sentence}" in page) == (i >= 2), sentence
    # which tests the verdict uses: one sentence, everywhere (the CLI wraps it)
    tests_sentence = explain.verdict_tests(0.95)
    assert tests_sentence in flat_cli and tests_sentence in page and fmt.esc(tests_sentence) in html
    assert "first four" not in cli_text and "first three tests)" not in page


def test_every_page_opens_with_its_question():
    import os

    pages = sorted((ROOT / "pages").glob("*.py"))
    for path in pages:
        key = next((k for k in questions.QUESTIONS if path.stem.lower().endswith(f"_{k}")), None)
        if key in (None, "review"):  # the Review page (issue 12) is another helper's: not checked here
            continue
        at = app()
        at.query_params.update({"sample": JUDGE, "reps": "50"})
        ok(at.switch_page(os.path.relpath(path, ROOT)).run())
        heads = [h.value for h in at.main.subheader]
        assert heads and heads[0] == questions.QUESTIONS[key], (path.name, heads[:2])


# ----------------------------------------------------------------- the best map, and the page's controls
def test_best_method_is_the_lowest_held_out_brier_that_beats_the_stated_confidence():
    from calib import maps
    from calib.loading import load

    ds = load(SAMPLES / JUDGE)
    fits = {m: maps.fit(ds, m, scoring="oddeven", reps=0) for m in maps.METHODS}
    usable = [
        (f.after.brier.value, m)
        for m, f in fits.items()
        if not f.useless and f.after.brier.value < f.before.brier.value
    ]
    assert maps.best_method(fits) == min(usable)[1]
    # a map scored on the data it was fitted on flatters the flexible ones: refused
    with pytest.raises(ValueError, match="in-sample"):
        maps.best_method({"isotonic": maps.fit(ds, "isotonic", scoring="insample", reps=0)})
    assert maps.held_out_scoring("insample") == "oddeven" and maps.held_out_scoring("kfold") == "kfold"


def test_recalibration_page_shows_the_best_map_before_a_choice_and_its_controls_drive_the_view():
    from calib import maps
    from calib.loading import load

    at = app()
    at.query_params.update({"sample": JUDGE, "reps": "0"})
    ok(at.switch_page("pages/4_Recalibration.py").run())
    ds = load(SAMPLES / JUDGE)
    best = maps.best_method({m: maps.fit(ds, m, scoring="oddeven", reps=0) for m in maps.METHODS})
    table = next(d.value for d in at.main.dataframe if "best" in d.value.columns)
    assert list(table.loc[table["best"] == "best", "map"]) == [
        at.main.selectbox(key="p_method").format_func(best)
    ]
    assert at.main.subheader[0].value == questions.QUESTIONS["recalibration"]
    # the page's control and the sidebar's write the same view (and the URL)
    at.main.selectbox(key="p_method").set_value("platt")
    ok(at.run())
    assert at.query_params.get("map") == "platt" and at.sidebar.selectbox(key="w_method").value == "platt"
    assert "Brier after" in [m.label for m in at.main.metric]
    at.sidebar.selectbox(key="w_method").set_value("beta")
    ok(at.run())
    assert at.main.selectbox(key="p_method").value == "beta" and at.query_params.get("map") == "beta"


def test_overview_answers_trust_ranking_and_action_first():
    at = app()
    at.query_params.update({"sample": "judge_c_synthetic.jsonl", "reps": "200"})
    ok(at.switch_page("pages/1_Overview.py").run())
    assert at.main.subheader[0].value == questions.QUESTIONS["overview"]
    lines = [_unescape(md.value) for md in at.main.markdown][:3]
    # judge_c: stated ~98 on average, right 62% of the time (the sample's README)
    assert lines[0].startswith("judge_c_synthetic: Not as stated: the judge is too sure by ")
    assert lines[1].startswith("It ")
    assert lines[2].startswith("What to do: ")


def test_html_report_holds_every_judge_with_its_decision_intervals_and_costs_within_budget():
    names = ["judge_a_synthetic", "judge_b_synthetic", "judge_c_synthetic"]
    rep = AppTest.from_function(_report_script, default_timeout=TIMEOUT)
    rep.query_params.update(
        {"sample": ",".join(f"{n}.jsonl" for n in names), "reps": "200", "cost_review": "1", "cost_miss": "5"}
    )
    html = ok(rep.run()).session_state["html"]
    # one decision and one routing section per judge, each routing figure with its interval
    assert (
        html.count("<h3>Threshold decision</h3>") == 3
        and html.count("<h3>Routing at the review threshold</h3>") == 3
    )
    assert (
        len(
            re.findall(
                r"<dt>Errors slipping through</dt><dd>[\d,]+ <small>95% \[[\d,]+, [\d,]+\]</small>", html
            )
        )
        == 3
    )
    assert (
        len(
            re.findall(r"<dt>Total cost</dt><dd>[\d,]+\.\d\d <small>95% \[[\d,]+\.\d\d, [\d,]+\.\d\d\]", html)
        )
        == 3
    )
    assert html.count("Judges at the same target") == 1  # the judges side by side, once
    for n in names:
        assert f"<h2>{n}</h2>" in html
    # the size budget the manual states (docs/dashboard.md, Report): plotly.js once, compressed; three judges about 2.1 MB
    assert len(html.encode()) < 2_500_000 and html.count("DecompressionStream('gzip')") == 1
