"""Reliability curves: per value, binned and CORP isotonic, against independent computations."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.isotonic import IsotonicRegression

from calib import curves
from calib.bootstrap import resample_counts
from calib.errors import CalibError
from calib.rows import Judgments
from calib.scale import PROBABILITY, Scale
from calib.table import from_counts, from_judgments

S100 = Scale(0.0, 100.0, "0-100")


def random_rows(seed, n=800, values=tuple(range(50, 101, 5)), bend=1.0):
    rng = np.random.default_rng(seed)
    s = rng.choice(values, size=n).astype(float)
    y = rng.random(n) < (s / 100) ** bend
    return Judgments(stated=s, prob=s / 100, correct=y, line=np.arange(1, n + 1),
                     item_id=np.array([f"q{i}" for i in range(n)]), scale=S100)


def test_value_points_match_a_row_loop_and_scipy_wilson():
    r = random_rows(1, bend=2.0)
    vp = curves.value_points(from_judgments(r), level=0.9)
    assert list(vp.value) == sorted(set(r.stated))
    for i, v in enumerate(vp.value):
        y = r.correct[r.stated == v]
        assert vp.n[i] == y.size and vp.correct[i] == y.sum()
        assert vp.hit_rate[i] == pytest.approx(y.mean())
        ci = binomtest(int(y.sum()), int(y.size)).proportion_ci(0.9, "wilson")
        assert vp.lo[i] == pytest.approx(ci.low, abs=1e-12) and vp.hi[i] == pytest.approx(ci.high, abs=1e-12)
        assert vp.gap[i] == pytest.approx(v / 100 - y.mean())


def test_binned_points_width_match_a_row_loop():
    r = random_rows(2, values=tuple(range(0, 101)))
    bp = curves.binned_points(from_judgments(r), scheme="width", bins=10)
    # right-closed bins (j/10, (j+1)/10], 0 in the first; exact on integer stated values
    b = np.maximum(np.ceil(r.stated / 10).astype(int) - 1, 0)
    used = np.unique(b)
    assert bp.scheme == "width" and len(bp.n) == used.size
    for i, j in enumerate(used):
        m = b == j
        assert bp.n[i] == m.sum() and bp.hit_rate[i] == pytest.approx(r.correct[m].mean())
        assert bp.mean_prob[i] == pytest.approx(r.prob[m].mean())


def test_binned_points_mass_never_split_a_value():
    r = random_rows(3)
    bp = curves.binned_points(from_judgments(r), scheme="mass", bins=4)
    assert bp.n.sum() == len(r)
    # every bin's edges are stated values and bins do not overlap
    assert np.all(bp.lo[1:] > bp.hi[:-1])


def test_isotonic_fit_matches_sklearn_with_ties():
    r = random_rows(4, bend=3.0)
    t = from_judgments(r)
    fit = curves.isotonic_fit(t)
    ir = IsotonicRegression().fit(r.prob, r.correct.astype(float))
    assert np.allclose(fit, ir.predict(t.prob), atol=1e-12)


def test_isotonic_on_monotone_data_returns_the_hit_rates():
    t = from_counts(np.array([10.0, 40, 70, 90]), np.array([20, 30, 40, 50]), np.array([2, 9, 24, 45]), scale=S100)
    c = curves.isotonic_curve(t, reps=0)
    assert np.allclose(c.fitted, t.correct / t.n)
    assert np.isnan(c.consistency_lo).all() and np.isnan(c.confidence_hi).all()


def _sk_fit(x, n, k):
    m = n > 0
    ir = IsotonicRegression(out_of_bounds="clip").fit(x[m], k[m] / n[m], sample_weight=n[m])
    return ir.predict(x)


def test_bands_match_a_per_resample_sklearn_loop():
    r = random_rows(5, n=400, values=(55, 60, 70, 75, 80, 90, 95, 100), bend=2.0)
    # a few values used once or twice, so that many resamples leave cells empty
    few = from_counts(np.array([5.0, 20, 62, 99]), np.array([1, 2, 1, 2]), np.array([0, 1, 1, 2]), scale=S100)
    t = from_counts(np.r_[from_judgments(r).value, few.value], np.r_[from_judgments(r).n, few.n],
                    np.r_[from_judgments(r).correct, few.correct], scale=S100)
    reps, seed, level = 300, 7, 0.9
    c = curves.isotonic_curve(t, reps=reps, seed=seed, level=level)
    a = (1 - level) / 2
    # consistency: outcomes drawn as Binomial(n, stated p) with seed + 1
    rng = np.random.default_rng(seed + 1)
    k_cons = rng.binomial(np.broadcast_to(t.n, (reps, t.cells)), t.prob)
    fits = np.array([_sk_fit(t.prob, t.n, k_cons[i]) for i in range(reps)])
    lo, hi = np.quantile(fits, [a, 1 - a], axis=0)
    assert np.allclose(c.consistency_lo, lo, atol=1e-9) and np.allclose(c.consistency_hi, hi, atol=1e-9)
    # confidence: multinomial bootstrap of the table, empty values interpolated by sklearn
    n_b, k_b = resample_counts(t, reps, seed)
    assert (n_b == 0).any(axis=1).mean() > 0.5
    fits = np.array([_sk_fit(t.prob, n_b[i], k_b[i]) for i in range(reps)])
    lo, hi = np.quantile(fits, [a, 1 - a], axis=0)
    assert np.allclose(c.confidence_lo, lo, atol=1e-9) and np.allclose(c.confidence_hi, hi, atol=1e-9)


def test_consistency_band_covers_a_calibrated_curve_and_not_an_overconfident_one():
    v = np.arange(50.0, 101.0, 10)
    n = np.full(v.size, 400)
    calibrated = from_counts(v, n, np.round(n * v / 100).astype(int), scale=S100)
    c = curves.isotonic_curve(calibrated, reps=500, seed=1)
    assert np.all((c.fitted >= c.consistency_lo - 1e-12) & (c.fitted <= c.consistency_hi + 1e-12))
    over = from_counts(v, n, np.round(n * (v / 100 - 0.15)).astype(int), scale=S100)
    c = curves.isotonic_curve(over, reps=500, seed=1)
    inner = v < 100  # at 100 the band is the single point 1
    assert np.all(c.fitted[inner] < c.consistency_lo[inner])
    assert np.all((c.fitted >= c.confidence_lo - 1e-12) & (c.fitted <= c.confidence_hi + 1e-12))


def test_curves_are_deterministic_and_serialise():
    t = from_judgments(random_rows(6))
    a = curves.isotonic_curve(t, reps=100, seed=3).to_dict()
    assert a == curves.isotonic_curve(t, reps=100, seed=3).to_dict()
    for view in curves.VIEWS:
        json.dumps(curves.reliability(t, view, reps=50).to_dict(), allow_nan=False)
    with pytest.raises(CalibError, match="unknown reliability view"):
        curves.reliability(t, "smooth")


def test_groups_are_pooled_and_continuous_tables_work():
    r = random_rows(7)
    grouped = Judgments(**{**r.__dict__, "group": np.where(np.arange(len(r)) % 2, "a", "b")})
    c1 = curves.isotonic_curve(from_judgments(grouped), reps=0)
    c2 = curves.isotonic_curve(from_judgments(r), reps=0)
    assert np.allclose(c1.fitted, c2.fitted)
    rng = np.random.default_rng(0)
    p = rng.random(3000)
    cont = Judgments(stated=p, prob=p, correct=rng.random(3000) < p, line=np.arange(1, 3001),
                     item_id=np.array([""] * 3000), scale=PROBABILITY)
    c = curves.isotonic_curve(from_judgments(cont), reps=50)
    assert c.value.size <= 1001 and np.all(np.diff(c.fitted) >= -1e-12)
