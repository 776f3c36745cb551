"""The hypothesis tests of calibration: calibration-in-the-large, the binned
goodness-of-fit chi-square (Hosmer & Lemeshow 2000), Spiegelhalter's (1986) Z, and the
paired Brier test of the stated confidence against the constant base rate
(Diebold-Mariano with Hall's 1992 monotone skewness correction), with the verdict it gives
(:func:`brier_winner`), and the cumulative-differences test with no bins (Kuiper and
Kolmogorov-Smirnov; Tygert 2021, :func:`cumulative_differences`). Each reads the probabilities as stated (:func:`calib.metrics.cells.test_prob`)
and uses the shared null of :mod:`calib.metrics.null`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from calib.metrics.binned import bin_index, bin_sums
from calib.metrics.cells import CellStats, brier_batch, single, test_prob
from calib.metrics.null import (
    LYAPUNOV_MAX,
    NULL_CELLS,
    TIE,
    certain_test,
    cluster_effect,
    clustered_note,
    decided_test,
    far_from_normal,
    lyapunov,
    null_deviations,
    null_groups,
    null_variance,
)
from calib.metrics.pvalues import (
    P_FLOOR,
    Test,
    brownian_max_abs_logsf,
    brownian_range_logsf,
    chi2_test,
    mc_test,
    z_test,
)
from calib.settings import BINS
from calib.table import CountTable


def calibration_in_the_large(table: CountTable, *, seed: int = 0) -> Test:
    """Test of "mean stated probability = accuracy".

    .. math:: z = \\frac{\\sum_i y_i - \\sum_i p_i}{\\sqrt{\\sum_i p_i (1 - p_i)}}

    on the stated probabilities (:func:`test_prob`, :func:`null_variance`): under
    perfect calibration the number of right answers is a sum of independent
    Bernoulli(p) draws (a Poisson-binomial count, normal for large N). Unlike
    Spiegelhalter's Z it sees every answer stated at 100 with some wrong. It cannot
    see an error that averages out (overconfidence symmetric around 0.5):
    :func:`goodness_of_fit` and :func:`cox` do.

    The p-value is the normal one when the count is close to normal
    (:func:`lyapunov` at most :data:`LYAPUNOV_MAX`), else a Monte Carlo one under
    perfect calibration (:func:`null_groups`; ``p >= 1 / (draws + 1)``). A wrong
    answer stated at 100 rejects with ``p = 0`` (:func:`impossible`).
    """
    t = single(table)
    name = "calibration_in_the_large"
    decided = decided_test(name, t)
    if decided is not None:
        return decided
    var = null_variance(t.prob * t.n, t.sq_sum)
    if not var > 0:
        return certain_test(name)
    d = cluster_effect(t, 1 - t.p_correct, -t.p_wrong, var)
    z = (t.total_correct - float(np.sum(t.prob * t.n))) / math.sqrt(var * d)
    p = test_prob(t)
    lyap = lyapunov(np.ones_like(p), t.n, p, var)
    if lyap <= LYAPUNOV_MAX:
        return clustered_note(z_test(name, z), t, d)
    _, ng, pg = null_groups(t)
    exceed, draws = 0, 0
    for dev in null_deviations(ng, pg, seed=seed):
        exceed += int(np.sum(np.abs(dev.sum(axis=1)) >= abs(z) * math.sqrt(var) - TIE))
        draws += dev.shape[0]
    return clustered_note(mc_test(name, z, None, exceed, draws, far_from_normal(lyap)), t, d)


def brier_vs_constant(table: CountTable) -> Test:
    """Paired test of the stated confidence against the constant base rate.

    Per answer, ``d_i = (p_i - y_i)^2 - (ybar - y_i)^2``; ``mean d`` is
    ``BS - BS_base`` (positive: the constant is better). With ``s^2`` the sample
    variance, ``W = dbar / s`` and ``g = m_3 / s^3`` the sample skewness of ``d``,
    two-sided,

    .. math:: z = \\sqrt N \\left(W + \\frac{g W^2}{3} + \\frac{g^2 W^3}{27} + \\frac{g}{6N}\\right)

    the Diebold-Mariano test for independent pairs (``z = sqrt(N) W``) with Hall's
    (1992, JRSS B 54:221) transformation for skewness: a loss difference is skewed (a
    rare wrong answer stated high costs much), and without a correction the test
    rejects 11% of the time at 5% on 50 answers of equal Brier scores, 8-9% with it
    (6% at 500, 5% from 5,000; ``bench/sim_tests.py --only brier``). Hall's cubic
    ``W + g W^2/3 + g^2 W^3/27 = ((1 + g W/3)^3 - 1)/g`` is increasing in ``W``, so
    the statistic keeps the sign of ``dbar`` (up to the ``g / (6 sqrt N)`` shift,
    at most about 1/6 in size, never significant). Johnson's (1978) correction, used
    before, stops at the quadratic term and turns round for a large difference with
    skewed ``d``: 80 meaning 55% with 99 meaning 99% (n = 1,000) read ``z = +16.7``,
    "the constant wins", where the stated confidence's Brier score is 0.021 lower.
    ``d`` takes two values per cell (right,
    wrong), so its moments come from the counts; on a pooled table each part is
    taken at its mean probability. ``ybar`` is estimated from the same data, which
    favours the constant by O(1/N).
    """
    t = single(table)
    name = "brier_vs_constant"
    N, K = t.total, t.total_correct
    if N < 2:
        return Test(name, None, None, None, None, "needs at least two answers")
    ybar = K / N
    d = np.r_[(t.p_correct - 1) ** 2 - (ybar - 1) ** 2, t.p_wrong**2 - ybar**2]
    w = np.r_[t.correct, t.wrong].astype(np.float64)
    mean = float(brier_batch(CellStats.of(t))[0]) - ybar * (1 - ybar)
    var = mean_variance(mean * N, float(np.sum(w * d**2)), N)
    if var <= 1e-300:
        return Test(name, None, None, None, None, "every answer has the same loss difference")
    m3 = float(np.sum(w * (d - mean) ** 3.0)) / N  # 3.0: the same pow(), at half the cost of an int power
    c = t.cells
    deff = cluster_effect(t, d[:c], d[c:], var * N, centre=True)
    s = math.sqrt(var)
    ratio, skew = mean / s, m3 / (s * s * s)
    # Hall's cubic: ((1 + skew ratio / 3)^3 - 1) / skew, expanded so that skew = 0 is plain
    hall = ratio + skew * ratio**2 / 3 + skew**2 * ratio**3 / 27
    z = math.sqrt(N) * (hall + skew / (6 * N)) / math.sqrt(deff)
    return clustered_note(z_test(name, z), t, deff)


def mean_variance(total: float, sq: float, units: int) -> float:
    """Sample variance ``(sum x^2 - (sum x)^2 / U) / (U - 1)`` of ``U`` independent
    units from their sums: the variance the paired Brier test rests on (one place,
    so that units may become clusters)."""
    return max(sq - total * total / units, 0.0) / (units - 1)


def brier_winner(test: Test, alpha: float) -> str | None:
    """Which forecast the paired Brier test (:func:`brier_vs_constant`) favours at
    level ``alpha``: ``"constant"``, ``"stated"``, ``"neither"`` (no significant
    difference) or ``None`` (undefined). ``calib audit`` and ``calib compare`` both
    word their Brier sentence from it."""
    if test.p_value is None or test.statistic is None:
        return None
    if test.p_value >= alpha:
        return "neither"
    return "constant" if test.statistic > 0 else "stated"


def goodness_of_fit(table: CountTable, scheme: str = "auto", bins: int = BINS, *, seed: int = 0) -> Test:
    """Chi-square test of "every bin's hit rate equals its stated probability".

    .. math:: X^2 = \\sum_b \\frac{(O_b - E_b)^2}{V_b}, \\quad
              E_b = \\sum_{i \\in b} p_i, \\; V_b = \\sum_{i \\in b} p_i (1 - p_i)

    on the stated probabilities (:func:`test_prob`; ``V_b`` from the cell sums,
    :func:`null_variance`), on the bins of ``scheme`` (one per stated value by
    default: a per-value binomial goodness-of-fit test), over the bins with
    ``V_b > 0`` (a bin whose answers are all stated at 0 or 100 has a certain
    outcome); ``df`` is their number (nothing is fitted). This is the Hosmer-Lemeshow
    statistic for external validation (Hosmer & Lemeshow 2000, sect. 5.2.2). It sees
    what Spiegelhalter's Z cannot: answers all stated at 100 (some wrong), values in
    {0, 0.5, 1}, and over- and underconfidence that cancel in Z's sum.

    The chi-square reference holds when every bin's count is close to normal
    (:func:`lyapunov` at most :data:`LYAPUNOV_MAX`); otherwise (sparse bins, values
    near 0 or 1) the p-value is a Monte Carlo one under perfect calibration
    (:func:`null_groups`: bounded cost on a table of any size), noted in the Test.
    A wrong answer stated at 100 rejects with ``p = 0`` (:func:`impossible`).
    """
    t = single(table)
    name = "goodness_of_fit"
    decided = decided_test(name, t)
    if decided is not None:
        return decided
    ids = bin_index(t, scheme, bins)
    nbins = int(ids.max()) + 1
    p = test_prob(t)
    ps = t.prob * t.n
    third = t.n * p * (1 - p) * (p * p + (1 - p) ** 2)
    kb, eb, vb, tb = (x[0] for x in bin_sums(
        ids, nbins, t.correct[None, :], ps[None, :], np.maximum(ps - t.sq_sum, 0.0)[None, :], third[None, :]))
    live = vb > 0
    if not live.any():
        return certain_test(name)
    live_bin = np.cumsum(live) - 1  # the chi-square's coordinate of each live bin
    d = cluster_effect(t, 1 - t.p_correct, -t.p_wrong, vb[live], coordinate=np.where(live[ids], live_bin[ids], -1))
    x2 = float(np.sum((kb[live] - eb[live]) ** 2 / vb[live])) / d
    df = int(live.sum())
    lyap = float(np.max(tb[live] / vb[live] ** 1.5))
    if lyap <= LYAPUNOV_MAX:
        return clustered_note(chi2_test(name, x2, df), t, d)
    gb, ng, pg = null_groups(t, ids)
    order = np.argsort(gb, kind="stable")
    gb, ng, pg = gb[order], ng[order], pg[order]
    starts = np.flatnonzero(np.r_[True, gb[1:] != gb[:-1]])
    vg = vb[gb[starts]]
    inv_v = np.where(vg > 0, 1 / np.where(vg > 0, vg, 1.0), 0.0)
    exceed, draws = 0, 0
    for dev in null_deviations(ng, pg, seed=seed):
        x2s = (np.add.reduceat(dev, starts, axis=1) ** 2) @ inv_v
        exceed += int(np.sum(x2s >= x2 * (1 - TIE)))
        draws += dev.shape[0]
    return clustered_note(mc_test(name, x2, float(df), exceed, draws, far_from_normal(lyap)), t, d)


def spiegelhalter(table: CountTable, *, seed: int = 0) -> Test:
    """Spiegelhalter's (1986) Z test of calibration.

    .. math:: Z = \\frac{\\sum_i (y_i - p_i)(1 - 2 p_i)}{\\sqrt{\\sum_i (1 - 2p_i)^2 p_i (1 - p_i)}}

    on the stated probabilities, two-sided. It is blind where LLM judges often are:
    every answer stated at 100 and all values in {0, 0.5, 1} (each weight
    ``1 - 2p`` or variance ``p (1 - p)`` is 0, so Z is undefined), and over- and
    underconfidence that cancel in its weighted sum (90 meaning 70% with 60 meaning
    95%). It does see overconfidence symmetric around 0.5, which
    :func:`calibration_in_the_large` cannot. The audit's verdict rests on
    :func:`calibration_in_the_large`, :func:`goodness_of_fit` and :func:`cox`.
    The numerator is exact on pooled tables; the variance is
    ``sum_c (1 - 2 pbar_c)^2 (sum p - sum p^2)_c`` (exact on unpooled tables). The
    p-value is normal or Monte Carlo as in :func:`calibration_in_the_large`.
    """
    t = single(table)
    name = "spiegelhalter"
    if t.total == 0:
        return Test(name, None, None, None, None, "no answers")
    num = float(np.sum(t.correct - 2 * t.py_sum - t.prob * t.n + 2 * t.sq_sum))
    p = test_prob(t)
    w = 1 - 2 * p
    var = float(np.sum(w**2 * np.maximum(t.prob * t.n - t.sq_sum, 0.0)))
    if var <= 1e-12 * t.total:
        return Test(name, None, None, None, None,
                    "undefined: every stated probability is 0, 0.5 or 1, where Spiegelhalter's Z has no variance")
    d = cluster_effect(t, (1 - p) * w, -p * w, var)
    num /= math.sqrt(d)
    z = num / math.sqrt(var)
    lyap = lyapunov(w, t.n, p, var)
    if lyap <= LYAPUNOV_MAX:
        return clustered_note(z_test(name, z), t, d)
    _, ng, pg = null_groups(t)
    wg = 1 - 2 * pg
    exceed, draws = 0, 0
    for dev in null_deviations(ng, pg, seed=seed):
        exceed += int(np.sum(np.abs(dev @ wg) >= abs(num) - TIE * max(1.0, abs(num))))
        draws += dev.shape[0]
    return clustered_note(mc_test(name, z, None, exceed, draws, far_from_normal(lyap)), t, d)


#: Most points of the path a :class:`CumulativeDifferences` keeps for its figure.
PATH_POINTS = 2001


@dataclass(frozen=True)
class CumulativeDifferences:
    """The cumulative-differences calibration test (:func:`cumulative_differences`).

    ``kuiper`` and ``ks`` are in units of probability (the range and the largest
    absolute value of the path ``C``); ``sigma`` the path's standard deviation at its end
    under perfect calibration, ``sqrt(sum p (1 - p)) / N``; ``kuiper_test`` and
    ``ks_test`` test perfect calibration with the normalised statistics. ``share``,
    ``value`` and ``path``: the path at the end of each stated value (thinned to
    :data:`PATH_POINTS` points, its highest and lowest kept), starting at ``(0, 0)``."""

    kuiper: float | None
    ks: float | None
    sigma: float | None
    kuiper_test: Test
    ks_test: Test
    share: np.ndarray = field(repr=False, compare=False)
    value: np.ndarray = field(repr=False, compare=False)
    path: np.ndarray = field(repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"kuiper": self.kuiper, "ks": self.ks, "sigma": self.sigma,
                "kuiper_normalised": self.kuiper_test.statistic, "ks_normalised": self.ks_test.statistic,
                "kuiper_p": self.kuiper_test.p_value, "ks_p": self.ks_test.p_value,
                "tests": {"kuiper": self.kuiper_test.to_dict(), "ks": self.ks_test.to_dict()}}


def _path_extremes(dev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Range and largest absolute value of the cumulative sums of ``dev`` along its last
    axis, the path starting at 0."""
    c = np.cumsum(dev, axis=-1)
    hi, lo = np.maximum(c.max(axis=-1), 0.0), np.minimum(c.min(axis=-1), 0.0)
    return hi - lo, np.maximum(hi, -lo)


def cumulative_differences(table: CountTable, *, seed: int = 0, inflation: float = 1.0) -> CumulativeDifferences:
    # long: the statistic, its two references (Monte Carlo, Brownian) and the clusters' adjustment in one place
    """Cumulative-differences test of calibration, with no bins (Tygert 2021, "Cumulative
    deviation of a subpopulation from the full population", J. Big Data 8; Arrieta-Ibarra,
    Gujral, Tannen, Tygert & Xu 2022, "Metrics of calibration for probabilistic
    predictions", JMLR 23).

    Answers sorted by stated probability, ``C_k = (1/N) sum_{i<=k} (y_i - p_i)``: flat
    where the judge is calibrated, rising where it is underconfident, falling where
    overconfident. Kuiper's statistic is ``max C - min C`` (``C_0 = 0``), Kolmogorov and
    Smirnov's ``max |C|``; divided by ``sigma = sqrt(sum p (1 - p)) / N`` each is, under
    perfect calibration and for many small steps, the range (the largest absolute value)
    of a standard Brownian motion on [0, 1] (:func:`brownian_range_logsf`,
    :func:`brownian_max_abs_logsf`).

    Ties: the order of answers tied at one stated value is arbitrary, and the path inside
    a tie would move with it; ``C`` is read only at the end of each stated value (each
    cell), where it does not. With at most :data:`NULL_CELLS` cells holding ``0 < p < 1``
    (a stated scale) the p-value is a Monte Carlo one under perfect calibration over the
    same cells (:func:`null_deviations`): exact in level for this statistic, where the
    Brownian reference, which assumes a continuous path, would be conservative. With more
    cells it is the Brownian one, unless the path is far from normal (:func:`lyapunov`
    above :data:`LYAPUNOV_MAX`: simulated on :func:`null_groups`). A wrong answer at 100
    or a right one at 0 rejects with ``p = 0``. With clusters both normalised statistics
    are divided by the square root of the design effect of the sum of residuals, and by
    ``sqrt(inflation)`` (a variance the caller adds: :mod:`calib.maps.transport`)."""
    t = single(table)
    empty = np.zeros(1)
    decided = decided_test("cumulative_differences_kuiper", t)
    N = t.total
    dev = (t.correct - t.prob * t.n).astype(np.float64) if N else empty
    c = np.concatenate([[0.0], np.cumsum(dev)]) / max(N, 1)
    share = np.concatenate([[0.0], np.cumsum(t.n)]) / max(N, 1)
    val = np.concatenate([[np.nan], t.value.astype(np.float64)])
    keep = np.unique(np.concatenate([np.linspace(0, c.size - 1, min(c.size, PATH_POINTS)).astype(np.int64),
                                     [int(np.argmax(c)), int(np.argmin(c))]]))
    share, val, path = share[keep], val[keep], c[keep]
    kuiper, ks = (float(np.max(c) - np.min(c)), float(np.max(np.abs(c)))) if N else (None, None)
    var = null_variance(t.prob * t.n, t.sq_sum) if N else 0.0
    sigma = math.sqrt(var) / N if N else None

    def result(ku: Test, k: Test) -> CumulativeDifferences:
        return CumulativeDifferences(kuiper, ks, sigma, ku, k, share, val, path)

    if decided is not None:
        return result(decided, replace(decided, name="cumulative_differences_ks"))
    if not var > 0:
        return result(certain_test("cumulative_differences_kuiper"), certain_test("cumulative_differences_ks"))
    d = cluster_effect(t, 1 - t.p_correct, -t.p_wrong, var) * float(inflation)
    assert kuiper is not None and ks is not None
    obs_ku, obs_ks = kuiper * N / math.sqrt(d), ks * N / math.sqrt(d)
    z_ku, z_ks = obs_ku / math.sqrt(var), obs_ks / math.sqrt(var)
    p = test_prob(t)
    live = int(np.sum((t.n > 0) & (p > 0) & (p < 1)))
    lyap = lyapunov(np.ones_like(p), t.n, p, var)
    if live > NULL_CELLS and lyap <= LYAPUNOV_MAX:
        tests = [_brownian_test(name, z, logsf) for name, z, logsf in
                 (("cumulative_differences_kuiper", z_ku, brownian_range_logsf),
                  ("cumulative_differences_ks", z_ks, brownian_max_abs_logsf))]
    else:
        _, ng, pg = null_groups(t)
        exceed, draws = np.zeros(2, dtype=np.int64), 0
        for sim in null_deviations(ng, pg, seed=seed):
            rng_, mx = _path_extremes(sim)
            exceed += [int(np.sum(rng_ >= obs_ku - TIE)), int(np.sum(mx >= obs_ks - TIE))]
            draws += sim.shape[0]
        why = ("the path is read at each of a few stated values, where the Brownian reference would be conservative"
               if live <= NULL_CELLS else far_from_normal(lyap))
        tests = [mc_test("cumulative_differences_kuiper", z_ku, None, int(exceed[0]), draws, why),
                 mc_test("cumulative_differences_ks", z_ks, None, int(exceed[1]), draws, why)]
    return result(*(clustered_note(x, t, d) for x in tests))


def _brownian_test(name: str, stat: float, logsf: Any) -> Test:
    """A test whose p-value is ``exp(logsf(stat))``, floored at :data:`P_FLOOR`."""
    lp = max(float(logsf(stat)), math.log(P_FLOOR))
    return Test(name, float(stat), None, math.exp(lp), lp / math.log(10),
                "p-value from the Brownian limit (many stated values, each a small step of the path)")
