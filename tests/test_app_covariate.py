"""Calibration against a covariate on the Reliability page (issue 28 item 7), driven
headless with AppTest on an uploaded JSONL file with a language field: the per-segment
residuals and their intervals checked against numpy and scipy (rows as clusters: CR1 is
then s / sqrt(n) with Student's t on n - 1 degrees of freedom), the verdicts against the
planted segments, the thin segment said so, and the per-slice thresholds against a
Clopper-Pearson bound computed here."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

from tests.apptest import app, ok

pytestmark = pytest.mark.usefixtures("fresh_caches")


def planted() -> list[dict]:
    """en: 600 answers stated at 99, 6 wrong (calibrated, certifiable); fr: 300 stated at 90,
    180 right (overconfident by 30 points); de: 20 answers (too thin to test or certify)."""
    rows = [{"id": f"en-{i}", "lang": "en", "confidence": 99, "correct": i >= 6} for i in range(600)]
    rows += [{"id": f"fr-{i}", "lang": "fr", "confidence": 90, "correct": i < 180} for i in range(300)]
    rows += [{"id": f"de-{i}", "lang": "de", "confidence": 80, "correct": i < 16} for i in range(20)]
    order = np.random.default_rng(7).permutation(len(rows))
    return [rows[i] for i in order]


def reliability_page(rows: list[dict]) -> AppTest:
    at = app()
    at.query_params.update({"reps": "100"})
    ok(at.run())
    data = "\n".join(json.dumps(r) for r in rows).encode()
    at.file_uploader[0].set_value(("langs.jsonl", data, "application/octet-stream"))
    ok(at.run())
    at.switch_page("pages/3_Reliability.py")
    return ok(at.run())


def frame_with(at: AppTest, column: str):  # noqa: ANN201
    frames = [d.value for d in at.dataframe if column in d.value.columns]
    assert len(frames) == 1, [list(d.value.columns) for d in at.dataframe]
    return frames[0].set_index("segment")


def test_segments_their_intervals_the_verdict_and_the_slices():
    rows = planted()
    at = reliability_page(rows)
    field = at.selectbox(key="covariate_field")
    assert field.options == ["(choose a field)", "lang"]  # confidence, outcome and id are not offered
    field.set_value("lang")
    ok(at.run())
    assert not at.error, [e.value for e in at.error]
    seg = frame_with(at, "residual (right - stated)")
    for lang in ("en", "fr", "de"):
        y = np.array([float(r["correct"]) for r in rows if r["lang"] == lang])
        p = np.array([r["confidence"] / 100 for r in rows if r["lang"] == lang])
        r = y - p
        assert float(seg.loc[lang, "residual (right - stated)"]) == pytest.approx(r.mean(), abs=6e-4)
        assert int(seg.loc[lang, "answers"]) == r.size
        if lang != "de":
            half = stats.t.ppf(0.975, r.size - 1) * r.std(ddof=1) / np.sqrt(r.size)
            lo, hi = (float(x) for x in seg.loc[lang, "95% interval (CR1)"].strip("[]").split(","))
            assert (lo, hi) == pytest.approx((r.mean() - half, r.mean() + half), abs=6e-4)
    assert seg.loc["fr", "verdict"] == "miscalibrated"
    assert seg.loc["en", "verdict"] == "no evidence of miscalibration"
    assert seg.loc["de", "verdict"] == "too thin to certify" and seg.loc["de", "p (Holm)"] == "not tested"
    texts = "\n".join(t.value for t in at.text)
    assert "1 of 2 tested segments of lang miscalibrated at the 95% level (Holm): fr." in texts

    sl = frame_with(at, "accepted unseen")
    # en: the one threshold, 99, accepts all 600 (6 wrong): certified when the one-sided 95% Clopper-Pearson
    # bound on their error is under the 5% target
    bound = stats.beta.ppf(0.95, 6 + 1, 600 - 6)
    assert bound < 0.05
    assert sl.loc["en", "threshold"] == "99" and int(sl.loc["en", "accepted unseen"]) == 600
    assert float(sl.loc["en", "error bound among accepted"].rstrip("%")) == pytest.approx(100 * bound, abs=0.06)
    # fr: 40% wrong at its only value: nothing certified; de: 20 items, too few for any certificate
    assert sl.loc["fr", "threshold"].startswith("none") and "certify no threshold" in sl.loc["fr", "why not certified"]
    assert sl.loc["de", "threshold"].startswith("none") and "fewer than" in sl.loc["de", "why not certified"]


def test_a_numeric_field_gets_a_slope_and_no_slices():
    rows = [{"confidence": 90, "correct": i % 10 != 0, "length": i % 97} for i in range(400)]
    at = reliability_page(rows)
    at.selectbox(key="covariate_field").set_value("length")
    ok(at.run())
    texts = "\n".join(t.value for t in at.text)
    assert "Slope of the residual per unit of length" in texts
    assert any("numeric" in i.value for i in at.info)


def test_rows_without_other_fields_offer_none():
    at = reliability_page([{"confidence": 90, "correct": True}] * 5 + [{"confidence": 80, "correct": False}] * 5)
    assert any(i.value.startswith("No field to test against") for i in at.info)


def test_field_names_and_values_are_never_markdown():
    evil = "<b>**x**</b>[a](javascript:1)"
    rows = [{"confidence": 99, "correct": i >= 2, evil: evil if i % 2 else "ok"} for i in range(200)]
    at = reliability_page(rows)
    at.selectbox(key="covariate_field").set_value(evil)
    ok(at.run())
    assert not at.error, [e.value for e in at.error]
    assert any(evil in t.value for t in at.text)  # shown as plain text
    rendered = [e.value for kind in ("markdown", "caption", "info", "warning", "subheader") for e in getattr(at, kind)]
    assert not any("<b>" in v or "**x**" in v for v in rendered), rendered
