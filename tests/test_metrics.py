"""Metrics against independent implementations: scikit-learn, per-row loops written
here, closed forms, and property tests."""

from __future__ import annotations

import math
from collections import defaultdict
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import optimize
from scipy.stats import binom, chi2, norm
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score

from calib import metrics as m
from calib.bootstrap import resample_counts
from calib.metrics.cox import WALD
from calib.rows import Judgments
from calib.scale import Scale
from calib.table import from_counts, from_judgments

PCT = Scale(0.0, 100.0, "0-100")
PROB = Scale(0.0, 1.0, "0-1")


def rows_of(v: np.ndarray, y: np.ndarray, scale: Scale, group: np.ndarray | None = None) -> Judgments:
    n = v.size
    return Judgments(stated=np.asarray(v, dtype=float), prob=scale.to_prob(np.asarray(v, dtype=float)),
                     correct=np.asarray(y, dtype=bool), line=np.arange(1, n + 1), item_id=np.full(n, ""),
                     scale=scale, group=group)


def judge(seed: int, n: int = 600) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An overconfident judge on 0-100: stated values, probabilities, outcomes."""
    rng = np.random.default_rng(seed)
    v = rng.choice([0, 20, 50, 60, 70, 75, 80, 85, 90, 95, 99, 100], size=n,
                   p=[.02, .03, .05, .05, .05, .05, .1, .1, .15, .2, .1, .1]).astype(float)
    p = v / 100
    y = rng.random(n) < 0.15 + 0.7 * p
    return v, p, y


def by_value(p: np.ndarray, y: np.ndarray) -> dict[float, tuple[int, int, float]]:
    """Per distinct p: (n, right, sum p), by an explicit loop."""
    d: dict[float, list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for pi, yi in zip(p.tolist(), y.tolist(), strict=True):
        d[pi][0] += 1
        d[pi][1] += int(yi)
        d[pi][2] += pi
    return {k: (int(a), int(b), c) for k, (a, b, c) in d.items()}


# ------------------------------------------------------------ against sklearn
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_brier_auroc_log_loss_match_sklearn(seed: int) -> None:
    v, p, y = judge(seed)
    t = from_judgments(rows_of(v, y, PCT))
    assert m.brier(t) == pytest.approx(brier_score_loss(y, p), abs=1e-12)
    assert m.auroc(t) == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    assert m.log_loss(t) == pytest.approx(log_loss(y, np.clip(p, 1e-15, 1 - 1e-15)), abs=1e-9)
    acc = y.mean()
    assert m.accuracy(t) == pytest.approx(acc, abs=1e-15)
    assert m.brier_base_rate(t) == pytest.approx(brier_score_loss(y, np.full(y.size, acc)), abs=1e-12)
    assert m.brier_skill(t) == pytest.approx(1 - brier_score_loss(y, p) / (acc * (1 - acc)), abs=1e-12)


def test_pooled_table_keeps_brier_and_log_loss_exact_and_auroc_within_bound() -> None:
    rng = np.random.default_rng(7)
    p = rng.beta(5, 2, 5000)
    y = rng.random(5000) < p**1.5
    t = from_judgments(rows_of(p, y, PROB)).coarse()  # the table the bootstrap resamples
    assert t.pooled
    assert m.brier(t) == pytest.approx(brier_score_loss(y, p), abs=1e-12)
    assert m.log_loss(t) == pytest.approx(log_loss(y, p), abs=1e-9)
    assert m.mean_confidence(t) == pytest.approx(p.mean(), abs=1e-12)
    bound = m.auroc_grid_bound(t)
    assert 0 < bound < 0.01
    assert abs(m.auroc(t) - roc_auc_score(y, p)) <= bound + 1e-12


def test_cox_of_a_continuous_judge_far_from_calibration_matches_sklearn() -> None:
    """Continuous scores (a table with a coarser version): the fit starts from the coarse
    table's fit (calib.metrics.cox.point_start); from calibration (0, 1) plain Newton runs
    off on a judge with a slope near 0.1 and is refitted from a cold start. Either way
    the same maximum, which sklearn's row-level fit finds too."""
    rng = np.random.default_rng(11)
    p = rng.uniform(0.02, 0.98, 30_000)
    y = rng.random(p.size) < 1 / (1 + np.exp(-(0.45 + 0.12 * np.log(p / (1 - p)))))
    t = from_judgments(rows_of(p, y, PROB))
    from calib.metrics.cox import cox_x, point_start

    assert t.coarse() is not t and point_start(t, cox_x(t)) != (0.0, 1.0)
    c = m.cox(t)
    x = np.log(p / (1 - p))
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(x[:, None], y)
    assert c.intercept.value == pytest.approx(lr.intercept_[0], abs=1e-6)
    assert c.slope.value == pytest.approx(lr.coef_[0, 0], abs=1e-6)
    assert 0.05 < c.slope.value < 0.2


@pytest.mark.parametrize("seed", [3, 4])
def test_cox_matches_sklearn_logistic_regression_and_row_level_likelihood(seed: int) -> None:
    v, p, y = judge(seed, 800)
    y = np.where(v == 100, True, np.where(v == 0, False, y))  # the ends as stated (else: impossible, p = 0)
    t = from_judgments(rows_of(v, y, PCT))
    c = m.cox(t)
    # answers stated at 0 or 100 that came out as stated carry no information: fitted on the others
    inner = (v > 0) & (v < 100)
    assert "fitted on the other" in c.note
    v, p, y = v[inner], p[inner], y[inner]
    x = np.log(p / (1 - p))
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(x[:, None], y)
    assert c.intercept.value == pytest.approx(lr.intercept_[0], abs=1e-6)
    assert c.slope.value == pytest.approx(lr.coef_[0, 0], abs=1e-6)
    # likelihood-ratio statistic from per-row log-likelihoods
    def ll(a: float, b: float) -> float:
        eta = a + b * x
        return float(np.sum(np.where(y, -np.logaddexp(0, -eta), -np.logaddexp(0, eta))))
    stat = 2 * (ll(c.intercept.value, c.slope.value) - ll(0.0, 1.0))
    assert c.test.statistic == pytest.approx(stat, rel=1e-9)
    assert c.test.df == 2
    assert c.test.p_value == pytest.approx(chi2.sf(stat, 2), rel=1e-6)
    # Wald interval from the per-row Fisher information
    mu = 1 / (1 + np.exp(-(c.intercept.value + c.slope.value * x)))
    X = np.column_stack([np.ones_like(x), x])
    cov = np.linalg.inv((X * (mu * (1 - mu))[:, None]).T @ X)
    z = norm.isf(0.025)
    assert c.slope.ci[0] == pytest.approx(c.slope.value - z * math.sqrt(cov[1, 1]), abs=1e-6)
    assert c.intercept.ci[1] == pytest.approx(c.intercept.value + z * math.sqrt(cov[0, 0]), abs=1e-6)
    assert (c.slope.level, c.slope.method, c.intercept.method) == (0.95, WALD, WALD)


def test_corp_matches_sklearn_isotonic_on_rows_and_decomposes_exactly() -> None:
    v, p, y = judge(5, 1000)
    t = from_judgments(rows_of(v, y, PCT))
    fit = IsotonicRegression().fit(p, y.astype(float)).predict(p)  # ties pooled, as CORP wants
    bs = np.mean((p - y) ** 2)
    cal = np.mean((fit - y) ** 2)
    unc = y.mean() * (1 - y.mean())
    c = m.corp(t)
    assert c.mcb == pytest.approx(bs - cal, abs=1e-12)
    assert c.dsc == pytest.approx(unc - cal, abs=1e-12)
    assert c.unc == pytest.approx(unc, abs=1e-15)
    assert c.mcb - c.dsc + c.unc == pytest.approx(m.brier(t), abs=1e-12)


# ------------------------------------------------------------ brute force on rows
@pytest.mark.parametrize("seed", [0, 6])
def test_per_value_ece_mce_murphy_against_row_loops(seed: int) -> None:
    v, p, y = judge(seed)
    t = from_judgments(rows_of(v, y, PCT))
    cells = by_value(p, y)
    N = y.size
    ece = sum(abs(s - k) for n, k, s in cells.values()) / N
    mce = max(abs(s / n - k / n) for n, k, s in cells.values())
    ybar = y.mean()
    rel = sum(n * (s / n - k / n) ** 2 for n, k, s in cells.values()) / N
    res = sum(n * (k / n - ybar) ** 2 for n, k, s in cells.values()) / N
    assert m.ece(t) == pytest.approx(ece, abs=1e-12)
    assert m.ece(t, "values") == pytest.approx(ece, abs=1e-12)
    assert m.mce(t) == pytest.approx(mce, abs=1e-12)
    mu = m.murphy(t)
    assert mu.reliability == pytest.approx(rel, abs=1e-12)
    assert mu.resolution == pytest.approx(res, abs=1e-12)
    assert mu.uncertainty == pytest.approx(ybar * (1 - ybar), abs=1e-15)
    assert mu.reliability - mu.resolution + mu.uncertainty == pytest.approx(m.brier(t), abs=1e-12)
    assert m.overconfidence(t) == pytest.approx(p.mean() - y.mean(), abs=1e-12)
    assert m.distinct_values(t) == len(cells)
    top = max(cells, key=lambda k: (cells[k][0], -k))
    assert m.most_common(t) == (pytest.approx(100 * top), cells[top][0], pytest.approx(cells[top][0] / N))
    assert m.share_below(t, 80) == pytest.approx(np.mean(v < 80))


def kumar_l2(p: np.ndarray, y: np.ndarray, bins: list[np.ndarray]) -> float:
    """The debiased squared error of Kumar et al.'s code, on rows, then the root."""
    total = 0.0
    for idx in bins:
        if idx.size < 2:
            continue
        ym = y[idx].mean()
        total += idx.size / y.size * ((p[idx].mean() - ym) ** 2 - ym * (1 - ym) / (idx.size - 1))
    return math.sqrt(max(total, 0.0))


def test_equal_width_bins_are_exact_and_right_closed() -> None:
    # 0.3 * 10 is 3.0000000000000004 in floating point; the bin must still be (0.2, 0.3]
    vals = np.array([0.0, 0.1, 0.2, 0.3, 0.30000000000000004, 0.7, 0.9, 1.0])
    t = from_counts(vals, np.ones(vals.size, dtype=int), np.zeros(vals.size, dtype=int), scale=PROB)
    assert m.width_bins(t, 10).tolist() == [0, 0, 1, 2, 3, 6, 8, 9]
    # the same on 0-100 and 1-10 scales, by exact decimals in the test
    for scale, vals in ((PCT, np.arange(0, 101, 1.0)), (Scale(1, 10, "1-10"), np.arange(1, 11, 1.0))):
        t = from_counts(vals, np.ones(vals.size, dtype=int), np.zeros(vals.size, dtype=int), scale=scale)
        for bins in (3, 7, 10, 20):
            want = []
            for x in vals:
                q = (Decimal(repr(float(x))) - Decimal(repr(scale.lo))) / (Decimal(repr(scale.hi)) - Decimal(repr(scale.lo)))
                want.append(max(math.ceil(q * bins) - 1, 0))
            assert m.width_bins(t, bins).tolist() == want


def test_equal_mass_bins_follow_the_quantile_rule_and_never_split_ties() -> None:
    v, p, y = judge(8, 500)
    t = from_judgments(rows_of(v, y, PCT))
    B = 4
    srt = np.sort(v)
    edges = [srt[math.ceil(j * v.size / B) - 1] for j in range(1, B)]  # lower quantiles
    row_bin = np.searchsorted(np.array(edges), v, side="left")  # (q_{j-1}, q_j]
    ids = m.mass_bins(t.n, B)
    cell_of = {val: i for i, val in enumerate(t.value)}
    assert all(ids[cell_of[x]] == b for x, b in zip(v, row_bin, strict=True))
    bins = [np.flatnonzero(row_bin == b) for b in range(B)]
    ece = sum(abs(p[i].sum() - y[i].sum()) for i in bins) / v.size
    assert m.ece(t, "mass", B) == pytest.approx(ece, abs=1e-12)
    assert m.ece_l2_debiased(t, "mass", B) == pytest.approx(kumar_l2(p, y, bins), abs=1e-12)


def test_width_ece_and_debiased_l2_against_rows() -> None:
    v, p, y = judge(9, 700)
    t = from_judgments(rows_of(v, y, PCT))
    row_bin = np.array([max(math.ceil(Decimal(int(x)) / 100 * 10) - 1, 0) for x in v])
    bins = [np.flatnonzero(row_bin == b) for b in range(10)]
    ece = sum(abs(p[i].sum() - y[i].sum()) for i in bins) / v.size
    assert m.ece(t, "width", 10) == pytest.approx(ece, abs=1e-12)
    assert m.ece_l2_debiased(t, "width", 10) == pytest.approx(kumar_l2(p, y, bins), abs=1e-12)
    assert m.mce(t, "width", 10) == pytest.approx(
        max(abs(p[i].mean() - y[i].mean()) for i in bins if i.size), abs=1e-12)


def test_tests_against_row_level_formulas() -> None:
    v, p, y = judge(10, 900)
    y = np.where(v == 100, True, np.where(v == 0, False, y))  # the ends as stated (else: impossible, p = 0)
    t = from_judgments(rows_of(v, y, PCT))
    q = p  # as stated: the ends add nothing to the sums
    z = (y.sum() - q.sum()) / math.sqrt(np.sum(q * (1 - q)))
    assert m.calibration_in_the_large(t).statistic == pytest.approx(z, rel=1e-12)
    sz = np.sum((y - p) * (1 - 2 * p)) / math.sqrt(np.sum((1 - 2 * p) ** 2 * p * (1 - p)))
    sp = m.spiegelhalter(t)
    assert sp.statistic == pytest.approx(sz, rel=1e-9)
    assert sp.p_value == pytest.approx(2 * norm.sf(abs(sz)), rel=1e-9)
    x2 = 0.0
    inner = np.unique(v[(v > 0) & (v < 100)])
    for val in inner:
        i = v == val
        x2 += (y[i].sum() - q[i].sum()) ** 2 / np.sum(q[i] * (1 - q[i]))
    g = m.goodness_of_fit(t)
    assert g.statistic == pytest.approx(x2, rel=1e-12)
    assert g.df == inner.size
    d = (p - y) ** 2 - (y.mean() - y) ** 2
    # Diebold-Mariano with Hall's (1992) monotone skewness correction, from the rows
    sd = d.std(ddof=1)
    wr, g = d.mean() / sd, np.mean((d - d.mean()) ** 3) / sd**3
    bz = math.sqrt(d.size) * (((1 + g * wr / 3) ** 3 - 1) / g + g / (6 * d.size))
    bt = m.brier_vs_constant(t)
    assert bt.statistic == pytest.approx(bz, rel=1e-9)
    assert bt.p_value == pytest.approx(2 * norm.sf(abs(bz)), rel=1e-9)


def test_per_value_rows_wilson_and_binomial_z() -> None:
    v, p, y = judge(11)
    t = from_judgments(rows_of(v, y, PCT))
    zq = norm.isf(0.025)
    for r in m.per_value(t):
        i = v == r.value
        n, k = int(i.sum()), int(y[i].sum())
        assert (r.n, r.correct) == (n, k)
        ph = k / n
        centre = (ph + zq**2 / (2 * n)) / (1 + zq**2 / n)
        half = zq / (1 + zq**2 / n) * math.sqrt(ph * (1 - ph) / n + zq**2 / (4 * n * n))
        assert r.hit_rate.lo == pytest.approx(max(centre - half, 0), abs=1e-12)
        assert r.hit_rate.hi == pytest.approx(min(centre + half, 1), abs=1e-12)
        assert (r.hit_rate.value, r.hit_rate.level) == (pytest.approx(ph), 0.95)
        assert r.gap == pytest.approx(r.value / 100 - ph, abs=1e-12)


# ------------------------------------------------------------------- smooth ECE
def smece_rows(p: np.ndarray, y: np.ndarray, sigma: float) -> float:
    """smECE_sigma written from the definition: reflected Gaussian by images (|j| <= 3),
    |smoothed residual| integrated between its sign changes (roots by Brent's method)
    by Gauss-Legendre on 64 subintervals per piece."""
    r = p - y

    def phi(d: np.ndarray) -> np.ndarray:
        return np.exp(-0.5 * (d / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))

    def g(t: np.ndarray) -> np.ndarray:
        t = np.atleast_1d(t)[:, None]
        k = sum(phi(t - p - 2 * j) + phi(t + p - 2 * j) for j in range(-3, 4))
        return (k * r).mean(axis=1)

    grid = np.linspace(0, 1, 4001)
    gv = g(grid)
    roots = [optimize.brentq(lambda s: g(s)[0], grid[i], grid[i + 1], xtol=1e-15)
             for i in np.flatnonzero(gv[:-1] * gv[1:] < 0)]
    x, w = np.polynomial.legendre.leggauss(24)
    total = 0.0
    for a, b in zip([0.0, *roots], [*roots, 1.0], strict=True):
        edges = np.linspace(a, b, 65)
        lo, hi = edges[:-1, None], edges[1:, None]
        nodes = (lo + (hi - lo) * (x + 1) / 2).ravel()
        total += abs(float(np.sum(np.tile(w, 64) * g(nodes) * np.repeat((hi - lo)[:, 0] / 2, 24))))
    return total


@pytest.mark.parametrize("case", ["spread", "ends", "one-sided"])
def test_smooth_ece_is_the_fixed_point_of_the_row_level_definition(case: str) -> None:
    rng = np.random.default_rng(12)
    n = 120
    if case == "spread":
        v = rng.integers(0, 101, n).astype(float)
        y = rng.random(n) < v / 100
    elif case == "ends":
        v = rng.choice([0.0, 50.0, 100.0], n)
        y = rng.random(n) < 0.2 + 0.6 * v / 100
    else:
        v = rng.integers(60, 101, n).astype(float)
        y = rng.random(n) < (v / 100) ** 3
    p = v / 100
    d = m.smooth_ece_detail(from_judgments(rows_of(v, y, PCT)))
    assert d.value == pytest.approx(d.sigma, abs=1e-12)  # value at the fixed point is its width
    ref = smece_rows(p, y, d.sigma)
    assert ref == pytest.approx(d.sigma, abs=1e-9)
    # and it is the fixed point: above it the error is below the width, below it above
    assert smece_rows(p, y, 1.02 * d.sigma) < 1.02 * d.sigma
    assert smece_rows(p, y, 0.98 * d.sigma) > 0.98 * d.sigma


def test_smooth_ece_one_sided_residual_equals_the_mean_gap() -> None:
    # every residual of one sign: the smoothed residual never changes sign and integrates to the mean
    t = from_counts(np.array([70.0, 90.0]), np.array([100, 300]), np.array([40, 150]), scale=PCT)
    assert m.smooth_ece(t) == pytest.approx(m.overconfidence(t), abs=1e-12)


def test_smooth_ece_perfectly_calibrated_cells_is_zero_at_the_floor() -> None:
    t = from_counts(np.array([20.0, 50.0, 80.0]), np.array([10, 10, 10]), np.array([2, 5, 8]), scale=PCT)
    d = m.smooth_ece_detail(t)
    assert d.value == 0.0 and d.sigma == m.SMECE_MIN_WIDTH


# ------------------------------------------------------------------ closed forms
def test_perfectly_calibrated_per_value_data_has_zero_error() -> None:
    v = np.array([10.0, 25.0, 50.0, 80.0, 90.0])
    n = np.array([10, 40, 20, 50, 70])
    k = (n * v / 100).astype(int)
    t = from_counts(v, n, k, scale=PCT)
    assert m.ece(t) == 0.0 and m.mce(t) == 0.0
    assert m.murphy(t).reliability == 0.0
    assert m.overconfidence(t) == pytest.approx(0.0, abs=1e-15)
    assert m.calibration_in_the_large(t).statistic == pytest.approx(0.0, abs=1e-9)
    assert m.goodness_of_fit(t).statistic == pytest.approx(0.0, abs=1e-12)
    assert m.corp(t).mcb == pytest.approx(0.0, abs=1e-15)


def test_constant_forecast_at_the_hit_rate() -> None:
    t = from_counts(np.array([70.0]), np.array([1000]), np.array([700]), scale=PCT)
    assert m.brier(t) == pytest.approx(0.7 * 0.3, abs=1e-15)
    assert m.brier_skill(t) == pytest.approx(0.0, abs=1e-12)
    assert m.ece(t) == pytest.approx(0.0, abs=1e-15)
    assert m.auroc(t) == 0.5  # every pair tied
    c = m.cox(t)
    assert c.slope.value is None and c.intercept.value == pytest.approx(0.0, abs=1e-12) and c.test.df == 1


# ---------------------------------------------------- the blind spots of Spiegelhalter
def test_everything_stated_at_100_is_seen_by_the_verdict_tests_not_by_spiegelhalter() -> None:
    t = from_counts(np.array([100.0]), np.array([593]), np.array([357]), scale=PCT)
    assert m.spiegelhalter(t).p_value is None
    assert m.brier_vs_constant(t).p_value < 1e-10
    # a wrong answer stated at 100 is impossible under calibration: p = 0, said in words
    for test in (m.calibration_in_the_large(t), m.goodness_of_fit(t), m.cox(t).test):
        assert test.p_value == 0.0 and "236 wrong answers stated at 100: impossible" in test.note, test


def test_values_zero_half_one_are_seen_by_the_verdict_tests_not_by_spiegelhalter() -> None:
    v = np.array([0.0, 0.5, 1.0])
    t = from_counts(v, np.array([200, 200, 200]), np.array([60, 100, 140]), scale=PROB)
    assert m.spiegelhalter(t).p_value is None
    # 60 right answers stated at 0 and 60 wrong at 1: impossible under calibration
    for test in (m.cox(t).test, m.goodness_of_fit(t), m.calibration_in_the_large(t)):
        assert test.p_value == 0.0 and "60 wrong answers stated at 1 and 60 right answers stated at 0" in test.note


def test_symmetric_overconfidence_is_seen_by_goodness_of_fit_and_cox() -> None:
    # 90 meant 70%, 10 meant 30%: the mean stated equals the hit rate
    t = from_counts(np.array([10.0, 90.0]), np.array([500, 500]), np.array([150, 350]), scale=PCT)
    assert m.calibration_in_the_large(t).p_value == pytest.approx(1.0)
    assert m.goodness_of_fit(t).p_value < 1e-10
    c = m.cox(t)
    assert c.test.p_value < 1e-10 and c.slope.hi < 1


def test_over_and_underconfidence_that_cancel_in_spiegelhalter_are_seen() -> None:
    # 90 meaning 70% (Brier above its expectation) offset by 60 meaning 95% (below)
    n1, n2 = 700, 1600
    t = from_counts(np.array([60.0, 90.0]), np.array([n2, n1]), np.array([int(0.95 * n2), int(0.7 * n1)]), scale=PCT)
    assert m.spiegelhalter(t).p_value > 0.05
    assert m.goodness_of_fit(t).p_value < 1e-10
    assert m.cox(t).test.p_value < 1e-10


def test_p_values_never_underflow_to_zero() -> None:
    t = from_counts(np.array([99.0]), np.array([100_000]), np.array([50_000]), scale=PCT)
    for test in (m.calibration_in_the_large(t), m.goodness_of_fit(t), m.cox(t).test):
        assert 0 < test.p_value <= m.P_FLOOR
        assert test.log10_p < -308 and math.isfinite(test.log10_p)
    # the chi-square tail beyond where scipy's logsf gives up, checked against the exact
    # binomial-free identity for 2 df: log P(chi2_2 > x) = -x / 2
    assert m.chi2_logsf(3000.0, 2) == pytest.approx(-1500.0, rel=1e-12)
    assert m.chi2_logsf(50.0, 5) == pytest.approx(chi2.logsf(50.0, 5), rel=1e-12)
    assert m.z_test("z", 60.0).log10_p == pytest.approx((math.log(2) + norm.logsf(60.0)) / math.log(10), rel=1e-12)


# ------------------------------------------------------------------ edge cases
def test_one_class_only_gives_none_not_nan() -> None:
    t = from_counts(np.array([80.0, 90.0]), np.array([10, 20]), np.array([10, 20]), scale=PCT)
    assert m.auroc(t) is None and m.brier_skill(t) is None
    assert m.accuracy(t) == 1.0 and m.brier(t) == pytest.approx((10 * 0.04 + 20 * 0.01) / 30)
    c = m.cox(t)
    assert c.intercept.value is None and c.slope.value is None and c.test.statistic is not None
    assert "right" in c.note


def test_empty_table() -> None:
    t = from_counts(np.array([50.0]), np.array([0]), np.array([0]), scale=PCT)
    assert t.total == 0
    assert m.accuracy(t) is None and m.ece(t) is None and m.brier(t) is None and m.smooth_ece(t) is None
    assert m.per_value(t) == () and m.bin_table(t) == ()
    assert m.calibration_in_the_large(t).p_value is None
    assert m.cox(t).test.p_value is None


def test_groups_are_pooled_for_metrics() -> None:
    v, p, y = judge(13, 400)
    g = np.where(np.arange(400) % 2 == 0, "a", "b")
    t = from_judgments(rows_of(v, y, PCT, g))
    assert len(t.groups) == 2
    assert m.auroc(t) == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    assert m.ece(t) == pytest.approx(m.ece(from_judgments(rows_of(v, y, PCT))), abs=1e-15)


# ------------------------------------------------------------ batch = point, per rep
def test_batch_kernels_equal_point_functions_on_each_resample() -> None:
    v, p, y = judge(14, 500)
    # the ends as stated, so that Cox has a fit (a wrong answer at 100 leaves none: NaN and None)
    y = np.where(v == 100, True, np.where(v == 0, False, y))
    t = from_judgments(rows_of(v, y, PCT))
    plan = m.Plan.of(t, "mass", 5)
    nb, kb = resample_counts(t, 40, seed=3)
    got = m.batch_metrics(m.CellStats.resampled(t, nb, kb), plan)
    for r in range(40):
        tr = t.with_counts(nb[r], kb[r])
        assert got["ece"][r] == pytest.approx(m.ece(tr, "mass", 5), abs=1e-12)
        assert got["auroc"][r] == pytest.approx(m.auroc(tr), abs=1e-12)
        assert got["corp_mcb"][r] == pytest.approx(m.corp(tr).mcb, abs=1e-10)
        slope = m.cox(tr).slope.value
        assert np.isnan(got["cox_slope"][r]) if slope is None else got["cox_slope"][r] == pytest.approx(slope, abs=1e-7)
        assert got["smooth_ece"][r] == pytest.approx(m.smooth_ece(tr), rel=1e-4)
        assert got["brier"][r] == pytest.approx(m.brier(tr), abs=1e-12)


# -------------------------------------------------------------------- properties
cells = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 30), st.floats(0, 1)), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells, st.sampled_from(["values", "width", "mass"]), st.integers(1, 12))
def test_properties_no_crash_ece_in_unit_interval(data, scheme, bins) -> None:  # type: ignore[no-untyped-def]
    v = np.array([float(a) for a, _, _ in data])
    n = np.array([b for _, b, _ in data])
    k = np.array([int(round(b * c)) for _, b, c in data])
    t = from_counts(v, n, k, scale=PCT)
    e = m.ece(t, scheme, bins)
    if t.total == 0:
        assert e is None
        return
    assert 0 <= e <= 1
    assert 0 <= m.mce(t, scheme, bins) <= 1
    assert 0 <= m.ece_l2_debiased(t, scheme, bins) <= 1
    s = m.smooth_ece(t)
    assert s is not None and 0 <= s <= 1
    # p = 0 exactly when, and only when, calibration rules the data out
    ruled_out = m.impossible(t) != (0, 0)
    for test in (m.calibration_in_the_large(t), m.goodness_of_fit(t, scheme, bins), m.cox(t).test):
        assert test.p_value is None or (test.p_value == 0) == ruled_out and 0 <= test.p_value <= 1
    c = m.corp(t)
    assert c.mcb >= -1e-12 and c.dsc >= -1e-12


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 100), st.booleans()), min_size=1, max_size=60), st.randoms())
def test_row_order_is_irrelevant(rows, rnd) -> None:  # type: ignore[no-untyped-def]
    v = np.array([float(a) for a, _ in rows])
    y = np.array([b for _, b in rows])
    perm = list(range(len(rows)))
    rnd.shuffle(perm)
    a = from_judgments(rows_of(v, y, PCT))
    b = from_judgments(rows_of(v[perm], y[perm], PCT))
    for scheme in ("values", "width", "mass"):
        assert m.ece(a, scheme, 4) == m.ece(b, scheme, 4)
        assert (m.bin_index(a, scheme, 4) == m.bin_index(b, scheme, 4)).all()
    assert m.auroc(a) == m.auroc(b)
    assert m.smooth_ece(a) == m.smooth_ece(b)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=30), st.integers(1, 15))
def test_equal_mass_bins_are_monotone_and_whole_cells(counts, bins) -> None:  # type: ignore[no-untyped-def]
    n = np.array(counts)
    ids = m.mass_bins(n, bins)
    assert (np.diff(ids) >= 0).all() and ids.min() >= 0 and ids.max() < bins
    # each bin but the last holds no more answers than one cell beyond its share
    N = n.sum()
    for b in range(bins):
        inb = n[ids == b]
        if inb.size:
            assert inb[:-1].sum() <= math.ceil(N / bins) or inb.size == 1


def test_small_expected_counts_use_monte_carlo_p_values_close_to_exact() -> None:
    # one value, 95, 2 answers, 1 wrong: X2 = 8.5 and P(X2 >= 8.5) = P(K <= 1) = 0.0975 exactly,
    # where the chi-square approximation would say 0.0035
    t = from_counts(np.array([95.0]), np.array([2]), np.array([1]), scale=PCT)
    g = m.goodness_of_fit(t)
    assert g.statistic == pytest.approx(0.81 / 0.095)
    assert g.p_value == pytest.approx(binom.cdf(1, 2, 0.95), abs=0.015)
    assert g.p_value == m.goodness_of_fit(t).p_value  # seeded: same seed, same draws
    c = m.calibration_in_the_large(t)
    assert c.p_value == pytest.approx(binom.cdf(1, 2, 0.95), abs=0.015)
    r = m.per_value(t)[0]
    assert r.p_value == pytest.approx(min(1.0, 2 * binom.cdf(1, 2, 0.95)), rel=1e-9)


def test_binomial_reference_for_the_share_tests() -> None:
    # z of a value compared with the exact binomial: same direction, similar size
    t = from_counts(np.array([95.0]), np.array([878]), np.array([694]), scale=PCT)
    r = m.per_value(t)[0]
    exact = 2 * binom.cdf(694, 878, 0.95)
    assert r.p_value < 1e-20 and exact < 1e-20


def test_wilson_interval_holds_its_estimate_at_zero_and_n() -> None:
    # k = n: the bound was (k + z^2/2 + ...)/(n + z^2) = 1 - 1e-16 for n = 29, 30, 35, ... and the
    # static figure's error bar got a negative length (issue 22); k = 0 likewise above 0
    n = np.arange(1, 5001)
    for k in (n, 0 * n, n // 3):
        lo, hi = m.wilson_interval(k, n)
        assert np.all(lo <= k / n) and np.all(k / n <= hi)
        lo, hi = m.wilson_interval(k, n, df=np.full(n.size, 7.0))
        assert np.all(lo <= k / n) and np.all(k / n <= hi)


def test_bin_table_hit_rates_carry_their_wilson_interval() -> None:
    from statsmodels.stats.proportion import proportion_confint

    from calib.estimates import WILSON

    v, _, y = judge(5, 500)
    rows = m.bin_table(from_judgments(rows_of(v, y, PCT)), "width", 5, 0.9)
    for r in rows:
        inb = (v > r.lo) & (v <= r.hi) if r.index else v <= r.hi  # right-closed bins, 0 in the first
        k, n = int(y[inb].sum()), int(inb.sum())
        assert (r.n, r.hit_rate.value) == (n, pytest.approx(k / n))
        assert r.hit_rate.ci == pytest.approx(proportion_confint(k, n, alpha=0.1, method="wilson"), abs=1e-12)
        assert (r.hit_rate.level, r.hit_rate.method) == (0.9, WILSON)
