"""The model comparison table, against row-level computations and scikit-learn."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.metrics import brier_score_loss

from calib import compare
from calib.dataset import Dataset
from calib.errors import CalibError
from calib.loadreport import LoadReport
from calib.present.tables import comparison_markdown, comparison_table
from calib.rows import Judgments
from calib.scale import PROBABILITY, Scale
from calib.table import from_judgments

S100 = Scale(0.0, 100.0, "0-100")


def model_rows(seed, values, weights, rates, n=1000, scale=S100):
    rng = np.random.default_rng(seed)
    s = rng.choice(np.asarray(values, float), size=n, p=np.asarray(weights) / np.sum(weights))
    rate = dict(zip(values, rates, strict=True))
    y = rng.random(n) < np.array([rate[v] for v in s])
    return Judgments(stated=s, prob=scale.to_prob(s), correct=y, line=np.arange(1, n + 1),
                     item_id=np.array([f"q{i}" for i in range(n)]), scale=scale)


MODELS = {
    "llama": model_rows(1, [80, 85, 90, 95, 100], [30, 14, 25, 20, 11], [0.56, 0.56, 0.74, 0.75, 0.72]),
    "qwen": model_rows(2, [80, 85, 90, 95, 100], [1, 4, 2, 88, 5], [0.5, 0.57, 0.6, 0.79, 0.92]),
    "aya": model_rows(3, [70, 90, 95, 100], [2, 5, 34, 59], [0.6, 0.6, 0.64, 0.60]),
}


def test_rows_match_row_level_computations():
    c = compare.compare({k: from_judgments(v) for k, v in MODELS.items()}, reps=300, seed=4)
    assert [r.model for r in c.rows] == list(MODELS)
    for row, r in zip(c.rows, MODELS.values(), strict=True):
        y, s, p = r.correct, r.stated, r.prob
        assert row.n == len(y) and row.accuracy == pytest.approx(y.mean())
        assert row.mean_stated == pytest.approx(s.mean())
        said = s >= 90
        assert row.at_stated == 90 and row.share_at == pytest.approx(said.mean())
        assert row.right_when_at == pytest.approx(y[said].mean())
        assert row.brier.value == pytest.approx(brier_score_loss(y, p))
        assert row.brier_constant.value == pytest.approx(brier_score_loss(y, np.full(len(y), y.mean())))
        # the winner comes from the paired test (Diebold-Mariano on per-row loss differences, with
        # Hall's skewness correction), as in the audit
        d = (p - y) ** 2 - (y.mean() - y) ** 2
        sd = d.std(ddof=1)
        wr, g = d.mean() / sd, np.mean((d - d.mean()) ** 3) / sd**3
        z = math.sqrt(d.size) * (((1 + g * wr / 3) ** 3 - 1) / g + g / (6 * d.size))
        pz = 2 * norm.sf(abs(z))
        assert row.brier_p_value == pytest.approx(pz, rel=1e-9)
        want = "neither" if pz >= 0.05 else ("constant" if d.mean() > 0 else "stated")
        assert row.brier_winner == want and row.constant_wins == {"constant": True, "stated": False}.get(want)
        ece = sum(abs(p[s == v].sum() - y[s == v].sum()) for v in np.unique(s)) / len(y)
        assert row.ece_scheme == "values" and row.ece.value == pytest.approx(ece, abs=1e-12)
        assert row.ece.lo <= row.ece.value <= row.ece.hi
    json.dumps(c.to_dict(), allow_nan=False)


def test_the_blog_layout():
    c = compare.compare([Dataset(k, from_judgments(v), LoadReport(f"{k}.jsonl", "stated"), v) for k, v in MODELS.items()],
                        reps=200)
    t = comparison_table(c)
    assert list(t.columns) == ["Model", "Right", "Mean stated", "Said 90 or more", "Right when it did",
                               "Calibration error", "Brier vs constant"]
    first = c.rows[0]
    assert t.iloc[0]["Right"] == f"{100 * first.accuracy:.1f}%"
    assert t.iloc[0]["Said 90 or more"] == f"{100 * first.share_at:.0f}% of answers"
    assert t.iloc[0]["Calibration error"] == f"{first.ece.value:.2f} [{first.ece.lo:.2f}, {first.ece.hi:.2f}]"
    assert "constant wins" in t.iloc[2]["Brier vs constant"]
    md = comparison_markdown(c)
    assert md.splitlines()[0].startswith("| Model | Right |") and md.count("\n") == 4


def test_at_is_a_probability_on_every_scale():
    r = MODELS["qwen"]
    as01 = Judgments(**{**r.__dict__, "stated": r.prob.copy(), "scale": PROBABILITY})
    c = compare.compare({"pct": from_judgments(r), "prob": from_judgments(as01)}, at=0.95, reps=0)
    a, b = c.rows
    assert a.at_stated == 95 and b.at_stated == 0.95
    assert a.share_at == b.share_at == pytest.approx(np.mean(r.stated >= 95))
    assert a.ece.lo is None and a.ece.value == pytest.approx(b.ece.value)
    assert comparison_table(c).columns[3] == "Said 95% or more"


def test_errors():
    with pytest.raises(CalibError, match="nothing to compare"):
        compare.compare({})
    with pytest.raises(CalibError, match="'at' is a probability"):
        compare.compare({"a": from_judgments(MODELS["aya"])}, at=90)


def test_the_interval_is_the_audits():
    from calib.bootstrap import bootstrap

    t = from_judgments(MODELS["llama"])
    for scheme in ("values", "mass"):
        row = compare.model_row("llama", t, scheme=scheme, reps=400, seed=9, level=0.9)
        ref = bootstrap(t, scheme=scheme, reps=400, seed=9, level=0.9).ci("ece")
        assert row.ece.ci == pytest.approx(ref, abs=1e-15)
