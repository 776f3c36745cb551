"""The Routing page's two-threshold certificate and cheapest chain of judges (issue 28), driven
headless with Streamlit's AppTest on the three sample judges (which share item ids): the figures
shown are the engine's, recomputed here on the files."""

from __future__ import annotations

import pytest

from calib.decision.cascade import cascade
from calib.decision.two_thresholds import two_thresholds
from calib.loading import load
from tests.apptest import ROOT, app, ok

SAMPLES = ROOT / "sample_data"
NAMES = ("judge_a_synthetic", "judge_b_synthetic", "judge_c_synthetic")

pytestmark = pytest.mark.usefixtures("fresh_caches")


def routing(samples: str):
    at = app()
    at.query_params.update({"sample": samples, "reps": "50"})
    at.switch_page("pages/5_Routing.py")
    return ok(at.run())


def test_two_thresholds_on_the_routing_page():
    at = routing(f"{NAMES[0]}.jsonl")
    at.button(key="two_go").click()
    ok(at.run())
    texts = "\n".join(t.value for t in at.text)
    assert "Two thresholds certified together" in texts
    t = two_thresholds(load(SAMPLES / f"{NAMES[0]}.jsonl"), target_error=0.05, max_review_share=0.3)
    assert f"{t.valid.sum():,} of" in texts


def test_cascade_table_with_three_judges():
    at = routing(",".join(f"{n}.jsonl" for n in NAMES))
    at.text_input(key="cascade_prices").set_value("0.01,0.1,1")
    at.button(key="cascade_go").click()
    ok(at.run())
    df = next(d.value for d in at.dataframe if "cost per 1,000 items" in d.value.columns)
    runs = [load(SAMPLES / f"{n}.jsonl", name=n) for n in NAMES]
    c = cascade([r.rows for r in runs], list(NAMES), [0.01, 0.1, 1.0], 10.0, target_error=0.05, reps=50, seed=0)
    assert list(df["plan"]) == [p.label for p in c.plans]
    assert list(df["accepted"]) == [f"{p.accepted:,}" for p in c.plans]
