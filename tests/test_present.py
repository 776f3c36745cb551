"""The shared presentation pieces (calib.present): the formatter set, the per-value table,
the reliability page of several audits, one model's report results."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from calib.audit import audit
from calib.loading import load
from calib.present import format as fmt
from calib.present import html_report as hr
from calib.present.reliability_page import reliability_page
from calib.present.tables import PER_VALUE_PERCENT_COLUMNS, per_value_frame

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"


@pytest.fixture(scope="module")
def audited():
    out = []
    for name in ("judge_b_synthetic.jsonl", "judge_c_synthetic.jsonl"):
        ds = load(str(SAMPLES / name))
        out.append((ds, audit(ds.table, reps=50, seed=1, name=ds.name, load_report=ds.report)))
    return out


def test_every_missing_figure_reads_the_same():
    for f in (fmt.pct, fmt.num, fmt.sig, fmt.signed, fmt.points, fmt.count):
        assert f(None) == fmt.MISSING and f(math.nan) == fmt.MISSING
    assert fmt.interval(None, 1.0) == "" and fmt.ci_text((0.1, None)) == ""
    assert fmt.count(12345) == "12,345" and fmt.count(12.6) == "13"
    assert fmt.signed(0.05) == "+0.050" and fmt.points(0.167) == "+16.7 pts" and fmt.sig(94.62) == "94.6"


def test_per_value_frame_has_one_row_per_value_in_percent(audited):
    _, a = audited[0]
    df = per_value_frame(a.per_value)
    assert len(df) == len(a.per_value) > 0
    assert list(df.columns) == ["stated", "answers", "share (%)", "right", "hit rate (%)", "CI low (%)",
                                "CI high (%)", "stated minus hit rate (percentage points)"]
    assert set(PER_VALUE_PERCENT_COLUMNS) <= set(df.columns)
    r = a.per_value[0]
    assert df.iloc[0]["hit rate (%)"] == pytest.approx(100 * r.hit_rate.value)
    assert per_value_frame(a.per_value, digits=1).iloc[0]["hit rate (%)"] == round(100 * r.hit_rate.value, 1)


def test_reliability_page_of_several_audits_holds_each_verdict(audited):
    page = reliability_page(audited)
    assert page.count("<h2>") >= 2 and "Reliability diagram: judge_b_synthetic" in page
    for ds, a in audited:
        assert ds.name in page and hr.esc(a.verdict[0]) in page
    assert "50 resamples (seed 1)" in page
    with pytest.raises(ValueError):
        reliability_page([])


def test_model_results_from_an_audit(audited):
    ds, a = audited[0]
    m = hr.ModelResults.of(ds, a)
    assert m.name == ds.name and m.verdict == a.verdict[0] and m.sentences == tuple(a.verdict[1:])
    assert m.warnings == tuple(a.notes) and m.load_summary.startswith(f"{ds.report.source}: ")


# ------------------------------------------------------------ the threshold decision in words
def _two_value_file(tmp_path: Path) -> Path:
    """600 items stated 95 with 6 wrong, 400 stated 50 with 200 wrong: at a 5% target
    only 95 can be certified (6 errors in 600), 50 cannot (206 in 1,000)."""
    import json

    rows = [(95, i >= 6) for i in range(600)] + [(50, i >= 200) for i in range(400)]
    f = tmp_path / "two.jsonl"
    f.write_text("".join(json.dumps({"id": f"q{i}", "confidence": v, "correct": c}) + "\n"
                         for i, (v, c) in enumerate(rows)))
    return f


def test_decision_card_in_words(tmp_path):
    from scipy.stats import beta

    from calib import decision
    from calib.present.decision import decision_card, decision_lines

    ds = load(str(_two_value_file(tmp_path)))
    d = decision.decide(ds, target=0.05, confidence=0.95, cost_review=1, cost_miss=10, reps=200)
    card = decision_card(d, scale=ds.table.scale)
    upper = beta.ppf(0.95, 7, 594)  # one-sided Clopper-Pearson, 6 errors in 600
    assert card.holds is True and card.threshold == "95 (0-100 scale)"
    assert card.target == "at most 5% wrong among items accepted unseen"
    assert card.guarantee == "with 95% confidence (fixed-sequence Clopper–Pearson, Learn-then-Test)"
    assert card.accepted == "600 of 1,000 items (60.0%) accepted unseen; 400 go to a person"
    assert card.error == f"1.0% wrong among accepted (one-sided 95% upper bound {100 * upper:.1f}%)"
    assert card.per_1000 == (f"Per 1,000 items: 600 accepted unseen, of which about 6 wrong (at most "
                             f"{math.ceil(600 * upper)} at the bound); 400 reviewed by a person")
    # cost per item at 95: 200 errors caught + 200 right reviewed at 1, 6 slipped at 10 -> 0.46;
    # review everything 1.0; review nothing 206 * 10 / 1000 = 2.06
    assert card.cost is not None and card.cost.startswith("expected cost 0.460 per item [")
    assert "at the cheapest threshold, 95 (0-100 scale)" in card.cost
    assert "saves 0.540 per item against reviewing everything and 1.600 against reviewing nothing" in card.cost
    assert card.message == d.recommendation.message
    point = decision_card(d, scale=ds.table.scale, point=True)
    assert point.guarantee == "no guarantee (point estimate)"
    lines = decision_lines(d, scale=ds.table.scale)
    assert lines[0] == "Recommendation: accept at or above 95 (0-100 scale)"
    assert any(x.startswith("AURC (area under the risk-coverage curve") for x in lines)


def test_decision_card_when_nothing_qualifies(tmp_path):
    from calib import decision
    from calib.present.decision import decision_card

    ds = load(str(_two_value_file(tmp_path)))
    d = decision.decide(ds, target=0.001, reps=0)
    card = decision_card(d)
    assert card.holds is False and card.threshold == "none qualifies" and card.cost is None
    assert card.accepted == "0 of 1,000 items (0.0%) accepted unseen; 1,000 go to a person"
    assert card.per_1000 == "Per 1,000 items: 0 accepted unseen; 1,000 reviewed by a person"
    assert "No threshold can be certified" in card.message


def test_decision_figures_mark_the_engines_points(tmp_path):
    from calib import decision, routing
    from calib.present.decision_figures import (
        BAND_NAME,
        CHEAPEST_NAME,
        RECOMMENDED_NAME,
        cost_curve_figure,
        risk_coverage_figure,
    )

    ds = load(str(_two_value_file(tmp_path)))
    d = decision.decide(ds, cost_review=1, cost_miss=10, reps=200)
    for source in (d, d.costs, d.to_dict()):
        fig = cost_curve_figure(source, name="x")
        traces = {t.name: t for t in fig.data}
        assert set(traces) >= {BAND_NAME, CHEAPEST_NAME}
        star = traces[CHEAPEST_NAME]
        assert (star.x[0], star.y[0]) == (95.0, pytest.approx(0.46))
    assert "give the cost" in cost_curve_figure({"cost_curve": [], "cheapest": None}).layout.title.text
    sw = routing.sweep(routing.basis(ds.table))
    fig = risk_coverage_figure("x", "#000", sw, aurc=d.aurc, recommendation=d.recommendation)
    assert fig.layout.title.text.startswith(f"Risk–coverage<br><sup>AURC {d.aurc.aurc.value:.3f} [")
    rec = next(t for t in fig.data if t.name == RECOMMENDED_NAME)
    assert (rec.x[0], rec.y[0]) == (pytest.approx(60.0), pytest.approx(1.0))


def test_level_interval_is_the_headline_metrics_interval():
    import re

    from calib.present import explain
    from calib.present import format as fmt

    assert fmt.level_interval(0.95, 0.12, 0.16) == "95% [0.120, 0.160]"
    assert fmt.level_interval(0.9, 0.125, 0.5, fmt.pct) == "90% [12.5%, 50.0%]"
    assert fmt.level_interval(0.95, None, 0.16) == "" and fmt.level_interval(0.95, 0.1, None) == ""
    assert re.search(explain.INTERVAL_PATTERN, fmt.level_interval(0.95, 1234.0, 1500.0, fmt.money))
