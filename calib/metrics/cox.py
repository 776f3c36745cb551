"""Cox (1958) logistic recalibration: the calibration intercept and slope, their Wald
intervals and the likelihood-ratio test of (0, 1), fitted batched on cells by the one
logistic solver (:mod:`calib.logistic`) for the point estimate, the bootstrap and the
Monte Carlo p-value alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special
from scipy.special import expit

from calib.estimates import NONE, Estimate
from calib.logistic import loglik, newton
from calib.metrics.cells import single, test_prob
from calib.metrics.null import (
    TIE,
    certain_test,
    cluster_effect,
    clustered_note,
    impossible_test,
    null_draws_for,
    null_groups,
)
from calib.metrics.pvalues import Test, chi2_test, mc_test
from calib.numbers import finite_or_none
from calib.settings import LEVEL
from calib.table import CountTable

#: :attr:`Estimate.method` of the intercept's and the slope's intervals (:func:`cox`).
WALD = "Wald, estimate +- z se (cluster-robust sandwich when rows are clustered)"


@dataclass(frozen=True)
class Cox:
    """Cox (1958) logistic recalibration ``logit P(right) = intercept + slope * logit(p)``.

    Perfect calibration is ``intercept = 0, slope = 1``; a slope below 1 means the
    stated values are too spread out (too sure both ways). Each is an
    :class:`~calib.estimates.Estimate` with its Wald interval (:data:`WALD`); ``test`` is
    the likelihood-ratio test of (0, 1) against the fit. Answers stated at 0 or 100 that
    came out as stated carry no information about either and are left out (``note`` says
    how many). With one distinct stated value the slope is not identifiable: ``slope``'s
    value is ``None`` and ``intercept`` is fitted with the slope held at 1.
    """

    intercept: Estimate
    slope: Estimate
    test: Test
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "intercept": self.intercept.value, "slope": self.slope.value,
            "intercept_ci": self.intercept.to_list(), "slope_ci": self.slope.to_list(),
            "lr_test": self.test.to_dict(), "note": self.note,
        }


def cox_fit(
    x: np.ndarray, n: np.ndarray, k: np.ndarray, start: tuple[float, float] | None = None, need_ll: bool = True,
) -> dict[str, np.ndarray]:
    """Batched maximum-likelihood fit of ``logit P = a + b x`` on cells.

    ``x`` (cells,), ``n, k`` (reps, cells). Returns ``a, b`` (NaN when not
    estimable), their Wald variances and covariance, the maximised log-likelihood
    ``ll`` (its supremum, approached, when the outcomes are separated), the null
    log-likelihood ``ll0`` at ``(0, 1)``, and ``single`` (one distinct x: slope
    fixed at 1, intercept only).

    From a cold start each fit is Newton's method with step halving (the
    log-likelihood is concave, so this finds the maximum when one exists). Given
    ``start`` (the full-data fit, for bootstrap resamples, whose fits lie close to
    it), plain Newton steps are tried first and only the resamples where they do
    not settle are refitted from a cold start.

    Cells with a non-finite ``x`` (stated probability 0 or 1, :func:`cox_x`) are left
    out: when their outcome agrees with the stated end their likelihood is 1 for
    every slope > 0, so they carry no information. An outcome that disagrees (a wrong
    answer at 1, a right one at 0) has likelihood 0 for every slope > 0: there is no
    maximum-likelihood fit, and ``a, b`` and their variances are NaN in that rep
    (``no_fit`` true); ``ll`` is still that of the other cells."""
    with np.errstate(invalid="ignore"):
        no_fit = (((x == np.inf) & (k < n)) | ((x == -np.inf) & (k > 0))).any(axis=-1)
    fin = np.isfinite(x)
    x = np.where(fin, x, 0.0)
    n = np.where(fin, n, 0).astype(np.float64)
    k = np.where(fin, k, 0).astype(np.float64)
    reps = n.shape[0]
    N = n.sum(axis=-1)
    K = k.sum(axis=-1)
    ll0 = loglik(np.broadcast_to(x, n.shape), n, k) if need_ll else np.zeros(reps)
    with np.errstate(invalid="ignore", divide="ignore"):
        xm = (n * x).sum(axis=-1) / N
        vx = (n * (x - xm[:, None]) ** 2).sum(axis=-1) / N
    single = ~(vx > 1e-12 * (1 + xm**2))
    one_class = (K == 0) | (K == N)
    out = {key: np.full(reps, np.nan) for key in ("a", "b", "va", "vb", "cab")}
    out["ll"] = np.where(one_class, 0.0, np.nan)
    _fit_intercept_only(out, single & ~one_class & (N > 0), N, K, xm)
    idx = np.flatnonzero(~single & ~one_class & (N > 0))
    if idx.size:
        _fit_slope(out, idx, x, n[idx], k[idx], K[idx] / N[idx], start, need_ll)
    for key in ("a", "b", "va", "vb", "cab"):
        out[key][no_fit] = np.nan
    return {**out, "ll0": ll0, "single": single, "one_class": one_class, "no_fit": no_fit}


def _fit_intercept_only(out: dict[str, np.ndarray], s1: np.ndarray, N: np.ndarray, K: np.ndarray,
                        xm: np.ndarray) -> None:
    """One distinct value: slope held at 1, intercept in closed form, saturated likelihood."""
    if not s1.any():
        return
    yb = K[s1] / N[s1]
    out["a"][s1] = np.log(yb) - np.log1p(-yb) - xm[s1]
    out["va"][s1] = 1 / (N[s1] * yb * (1 - yb))
    out["ll"][s1] = K[s1] * np.log(yb) + (N[s1] - K[s1]) * np.log1p(-yb)


def _estimable(beta: np.ndarray, x: np.ndarray, nn: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(ok, h00, h01, h11, det)`` of fits ``beta``: the information matrix at each fit and
    whether the fit is an estimate.

    Under separation the maximum is at infinity: the fitted probabilities saturate, the
    information matrix vanishes, and Newton's step (0 for a singular matrix) can look
    settled. A fit is an estimate only where the information matrix is still non-singular
    and the coefficients stay finite in size. (Distance from the identity is no test:
    near-certain answers have logits of 30 and more, and a slope of 0.2 then lies 25 away
    from them.)"""
    ca, cb = beta[:, 0], beta[:, 1]
    with np.errstate(over="ignore", invalid="ignore"):
        mu = expit(ca[:, None] + cb[:, None] * x)
        wt = nn * mu * (1 - mu)
        h00, h01, h11 = wt.sum(-1), (wt * x).sum(-1), (wt * x * x).sum(-1)
        det = h00 * h11 - h01 * h01
        ok = (np.isfinite(beta).all(axis=1) & (det > 1e-9 * h00 * h11) & (np.abs(ca) < 1e3)
              & (np.abs(cb) < 1e3))
    return ok, h00, h01, h11, det


def _fit_slope(out: dict[str, np.ndarray], idx: np.ndarray, x: np.ndarray, nn: np.ndarray, kk: np.ndarray,
               yb: np.ndarray, start: tuple[float, float] | None, need_ll: bool) -> None:
    """Intercept and slope of reps ``idx`` (warm Newton from ``start``, cold refit where it
    does not settle on an estimate) with their Wald (co)variances, written into ``out``."""
    X = np.column_stack([np.ones_like(x), x])
    ok = np.zeros(idx.size, dtype=bool)
    beta = np.zeros((idx.size, 2))
    cur = np.zeros(idx.size)
    if start is not None and all(map(math.isfinite, start)):
        beta, cur, ok = newton(X, nn, kk, np.tile(start, (idx.size, 1)), safe=False, iters=8, need_ll=need_ll)
        # a warm fit that ran off to a saturated, singular point looks settled (a zero
        # step) but is no estimate: refit it from a cold start like one that did not settle
        ok &= _estimable(beta, x, nn)[0]
    cold = np.flatnonzero(~ok)
    if cold.size:
        b0 = np.column_stack([np.log(yb[cold]) - np.log1p(-yb[cold]), np.zeros(cold.size)])
        beta[cold], cur[cold], ok[cold] = newton(X, nn[cold], kk[cold], b0, safe=True, iters=100)
    ca, cb = beta[:, 0], beta[:, 1]
    good, h00, h01, h11, det = _estimable(beta, x, nn)
    ok &= good
    with np.errstate(invalid="ignore", divide="ignore"):
        out["a"][idx] = np.where(ok, ca, np.nan)
        out["b"][idx] = np.where(ok, cb, np.nan)
        out["va"][idx] = np.where(ok, h11 / det, np.nan)
        out["vb"][idx] = np.where(ok, h00 / det, np.nan)
        out["cab"][idx] = np.where(ok, -h01 / det, np.nan)
    out["ll"][idx] = cur


def point_start(t: CountTable, x: np.ndarray) -> tuple[float, float]:
    """Where the Newton fit of the whole table starts: calibration ``(0, 1)``, or, for a
    table with a coarser version (:meth:`CountTable.coarse`, continuous scores), that
    table's fit, as good a start for a thousandth of the cost. From ``(0, 1)`` plain
    Newton steps can run off when the judge is far from calibrated (1,000,000 rows with
    a slope of 0.12: eight wasted passes and a cold refit, 0.33 s against 0.12 s)."""
    c = t.coarse()
    if c is t:
        return (0.0, 1.0)
    f = cox_fit(cox_x(c), c.n[None, :], c.correct[None, :], need_ll=False)
    a, b = float(f["a"][0]), float(f["b"][0])
    return (a, b) if math.isfinite(a + b) else (0.0, 1.0)


def point_fit(t: CountTable) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The regressor (:func:`cox_x`) and the Cox fit (:func:`cox_fit`, with its
    log-likelihoods) of a table with its groups pooled, from :func:`point_start`: the fit
    :func:`cox` reports. Computed once, it can be handed to :func:`cox` and to
    :func:`calib.metrics.point_metrics` (the fit of a million cells costs 0.2-0.3 s)."""
    t = single(t)
    x = cox_x(t)
    return x, cox_fit(x, t.n[None, :], t.correct[None, :], start=point_start(t, x))


def cox_x(table: CountTable) -> np.ndarray:
    """The regressor of the Cox fit: ``logit`` of :func:`test_prob` per cell, ``-inf``
    and ``inf`` at probabilities 0 and 1 (cells :func:`cox_fit` leaves out)."""
    p = test_prob(table)
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p)


#: Fewest expected right, and wrong, answers (among those not stated at 0 or 100) at
#: which the Cox likelihood-ratio test uses its chi-square reference; below, its
#: p-value is a Monte Carlo one.
COX_MIN_EVENTS = 20.0


#: Draws of that Monte Carlo p-value (each is one logistic fit).
COX_DRAWS = 1000


def cox(table: CountTable, level: float = LEVEL, *, seed: int = 0,
        fit: tuple[np.ndarray, dict[str, np.ndarray]] | None = None) -> Cox:
    """Cox (1958) calibration intercept and slope, with the likelihood-ratio test.

    Weighted logistic regression of the outcome on ``x = logit(p)`` (cells weighted
    by their counts, ``p`` as stated, :func:`test_prob`):
    ``logit P(right) = a + b x``. Answers stated at 0 or 100 that came out as stated
    carry no information about ``a`` or ``b`` (their likelihood is 1 for every
    ``b > 0``) and are left out of the fit; one that did not is impossible under
    calibration and rejects with ``p = 0`` (:func:`impossible`). Wald intervals
    ``a +- z se``. The likelihood-ratio statistic ``2 (l(a^, b^) - l(0, 1))`` is
    chi-square with 2 df (1 df with one distinct stated value, where only ``a`` is
    fitted) when at least :data:`COX_MIN_EVENTS` right and wrong answers are
    expected; otherwise its p-value is a Monte Carlo one under perfect calibration
    (:data:`COX_DRAWS` refits). When the outcomes are separated (e.g. one class
    only) the maximum is at infinity: the estimates are ``None`` and the statistic
    uses the supremum of the likelihood. ``fit``: the table's :func:`point_fit`, when
    already computed.
    """
    t = single(table)
    name = "cox_lr"
    if t.total == 0:
        none = Estimate.point(None)
        return Cox(none, none, Test(name, None, None, None, None, "no answers"), "no answers")
    # plain Newton from a start near the maximum, refitted from a cold start if it does not settle
    x, f = point_fit(t) if fit is None else fit
    fin = np.isfinite(x)
    z = float(-special.ndtri((1 - level) / 2))
    a, b = finite_or_none(f["a"]), finite_or_none(f["b"])
    single_v = bool(f["single"][0])
    va, vb = _cluster_variances(t, x, a, None if single_v else b, float(f["va"][0]), float(f["vb"][0]))
    sa = finite_or_none(np.sqrt(va))
    sb = finite_or_none(np.sqrt(vb))
    df = 1 if single_v else 2
    n_fin = int(t.n[fin].sum())
    imp = impossible_test(name, t)
    if imp is not None:
        test = imp
    elif n_fin == 0:
        test = certain_test(name)
    else:
        lr = max(2 * (float(f["ll"][0]) - float(f["ll0"][0])), 0.0)
        # the scores of (a, b) at the null a = 0, b = 1: (y - p) (1, x), over the cells with 0 < p < 1
        xs = np.where(fin, x, 0.0)
        pf = np.where(fin, test_prob(t), 0.0)
        cols = np.stack([fin.astype(np.float64), xs], axis=1)[:, :df]
        info = (cols * (t.n * pf * (1 - pf))[:, None]).T @ cols
        d = cluster_effect(t, cols * (1 - pf)[:, None], cols * -pf[:, None], info)
        lr /= d
        e_right = float(np.sum((t.prob * t.n)[fin]))
        if min(e_right, n_fin - e_right) >= COX_MIN_EVENTS:
            test = chi2_test(name, lr, df)
        else:
            test = _cox_mc(name, t, lr, df, seed,
                           f"{min(e_right, n_fin - e_right):.3g} right or wrong answers expected, "
                           f"fewer than {COX_MIN_EVENTS:g}")
        test = clustered_note(test, t, d)
    no_fit = bool(f["no_fit"][0])
    notes = _notes_at_the_ends(t, x, n_fin, no_fit)
    if not no_fit:
        notes += _fit_note(t, f, n_fin, single_v, a is None)
    return Cox(
        intercept=_wald(a, sa, z, level), slope=Estimate.point(None) if single_v else _wald(b, sb, z, level),
        test=test, note="; ".join(notes),
    )


def _wald(est: float | None, se: float | None, z: float, level: float) -> Estimate:
    """``est +- z se`` (no interval without an estimate or its standard error)."""
    if est is None or se is None:
        return Estimate(est, None, None, None, NONE)
    return Estimate(est, est - z * se, est + z * se, level, WALD)


def _fit_note(t: CountTable, f: dict[str, np.ndarray], n_fin: int, single_v: bool, unfitted: bool) -> list[str]:
    """Why the fit of the answers not at the ends has no estimate, or fixes the slope."""
    lo, hi = t.scale.lo, t.scale.hi
    if n_fin == 0:
        return [f"every answer is stated at {lo:g} or {hi:g}: nothing to fit"]
    if bool(f["one_class"][0]):
        right = int(t.correct[np.isfinite(cox_x(t))].sum()) == n_fin
        return ["every answer is " + ("right" if right else "wrong")
                + ": intercept and slope run to infinity; the test uses the likelihood's supremum"]
    if single_v:
        return ["one distinct stated value: the slope is not identifiable; intercept fitted with the slope held at 1"]
    if unfitted:
        return ["the stated values separate right from wrong answers: the fit runs to infinity; the test uses the "
                "likelihood's supremum"]
    return []


def _notes_at_the_ends(t: CountTable, x: np.ndarray, n_fin: int, no_fit: bool) -> list[str]:
    """What the answers stated at the ends of the scale did to the fit: none where a
    wrong one at the top (or a right one at the bottom) leaves no maximum; else those
    that came out as stated carry no information."""
    top, bottom = x == np.inf, x == -np.inf
    wrong_top, right_bottom = int(t.wrong[top].sum()), int(t.correct[bottom].sum())
    lo, hi = t.scale.lo, t.scale.hi
    if no_fit:
        parts = [f"{c:,} {what} answer{'s' if c != 1 else ''} stated at {v:g}"
                 for c, what, v in ((wrong_top, "wrong", hi), (right_bottom, "right", lo)) if c]
        return [" and ".join(parts) + " ha" + ("s" if wrong_top + right_bottom == 1 else "ve")
                + " probability 0 under every positive Cox slope: no maximum-likelihood fit exists, so no "
                "intercept, slope or interval is reported"]
    as_stated = int(t.correct[top].sum() + t.wrong[bottom].sum())
    if as_stated and n_fin:
        return [f"{as_stated:,} answer{'s' if as_stated != 1 else ''} stated at {lo:g} or {hi:g} carry no "
                f"information about intercept or slope (they came out as stated): fitted on the other {n_fin:,}"]
    return []


def _cluster_variances(t: CountTable, x: np.ndarray, a: float | None, b: float | None, va: float, vb: float
                       ) -> tuple[float, float]:
    """The Wald variances of the intercept and slope, allowing for clustered rows.

    Independent rows (or no estimate): the model's, ``I^-1``. Clustered rows
    (:attr:`CountTable.clusters`): the cluster-robust sandwich (Liang & Zeger 1986)

    .. math:: V = I^{-1} \\Big(\\frac{G}{G-1} \\sum_g U_g U_g^T\\Big) I^{-1}, \\qquad
              U_g = \\sum_{i \\in g} (y_i - \\hat q_i) (1, x_i)

    at the fit (``b`` is ``None`` with one distinct value: the slope held at 1, the
    intercept only), each variance never below the model's, as a test's design effect is
    never below 1 (:func:`calib.clusters.test_adjustment`)."""
    if t.clusters is None or a is None:
        return va, vb
    from calib import clusters

    fin = np.isfinite(x)
    xs = np.where(fin, x, 0.0)
    q = expit(a + (1.0 if b is None else b) * xs)
    cols = np.stack([fin.astype(np.float64), xs], axis=1)[:, : 1 if b is None else 2]
    info = (cols * (t.n * q * (1 - q) * fin)[:, None]).T @ cols
    u = clusters.totals(t.clusters, cols * (1 - q)[:, None], cols * -q[:, None])
    G = u.shape[0]
    if G < 2:
        return va, vb
    try:
        inv = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        return va, vb
    v = inv @ (u.T @ u * G / (G - 1)) @ inv
    return max(va, float(v[0, 0])), (vb if b is None else max(vb, float(v[1, 1])))


def _cox_mc(name: str, t: CountTable, lr: float, df: int, seed: int, reason: str) -> Test:
    """Monte Carlo p-value of the Cox LR statistic: outcomes drawn under perfect
    calibration on :func:`null_groups`, each draw refitted (batched)."""
    _, ng, pg = null_groups(t)
    draws = min(COX_DRAWS, null_draws_for(ng.size))
    k = np.random.default_rng(seed).binomial(ng, pg, size=(draws, ng.size))
    # drawn under (0, 1), so each fit starts there (plain Newton; cold refit where it does not settle)
    f = cox_fit(np.log(pg) - np.log1p(-pg), np.broadcast_to(ng, k.shape), k, start=(0.0, 1.0))
    sims = 2 * (f["ll"] - f["ll0"])
    return mc_test(name, lr, float(df), int(np.sum(sims >= lr * (1 - TIE) - TIE)), draws, reason)
