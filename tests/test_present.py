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
    assert df.iloc[0]["hit rate (%)"] == pytest.approx(100 * r.hit_rate)
    assert per_value_frame(a.per_value, digits=1).iloc[0]["hit rate (%)"] == round(100 * r.hit_rate, 1)


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
