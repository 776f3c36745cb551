"""The fitters: one function per method fits a map on a count table (pooled over its
groups) and says when the fit is useless. Platt (1999) and beta calibration (Kull, Silva
Filho & Flach 2017) on the one logistic solver (:func:`calib.logistic.logistic_fit`),
temperature scaling, isotonic regression (Zadrozny & Elkan 2002), histogram binning
(Zadrozny & Elkan 2001), and the softmax temperature over option log-probs (Guo et al. 2017).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.special import expit, logsumexp

from calib import metrics
from calib.errors import CalibError
from calib.isotonic import pav
from calib.logistic import logistic_fit
from calib.maps.calibration_map import (
    CalibrationMap,
    base_rate_map,
    cell_prob,
    fit_steps,
    logit,
    table_finite,
)
from calib.rows import OptionScores
from calib.scale import CORRECTION, PROBABILITY
from calib.settings import METHODS
from calib.solvers import brentq
from calib.table import CountTable

#: Search range of the temperature ``T``; an optimum outside it is reported.
T_MIN, T_MAX = 0.01, 100.0


#: Default number of bins of histogram binning (Zadrozny & Elkan 2001 used 10).
HIST_BINS = 10


@dataclass(frozen=True)
class Fitted:
    """A fitted map, and why it is useless when it is (``reason``)."""

    cmap: CalibrationMap
    reason: str = ""


def nonempty_cells(table: CountTable) -> CountTable:
    t = table.pooled_over_groups()
    keep = t.n > 0
    if keep.all():
        return t
    return replace(
        t, value=t.value[keep], prob=t.prob[keep], n=t.n[keep], correct=t.correct[keep],
        py_sum=t.py_sum[keep], sq_sum=t.sq_sum[keep], nll_sum=t.nll_sum[keep], group=t.group[keep],
    )


def _degenerate(t: CountTable, method: str, correction: float) -> Fitted | None:
    """The base-rate map when the fitting data cannot support a map."""
    n, k = t.total, t.total_correct
    if n == 0:
        raise CalibError("no rows to fit a recalibration map on")
    reason = ""
    if k in (0, n):
        reason = f"every answer in the fitting data is {'right' if k == n else 'wrong'}: there is nothing to map"
    elif t.cells == 1:
        reason = f"the fitting data uses one stated value ({t.value[0]:g}): there is nothing to map"
    if not reason:
        return None
    return Fitted(base_rate_map(t, replaces=method, note=reason, correction=correction), reason)


def _fit_platt(t: CountTable, c: float) -> Fitted:
    z = logit(table_finite(t, c))
    beta, ok = logistic_fit(z, t.n, t.correct)
    cmap = CalibrationMap(
        "platt", t.scale, {"slope": float(beta[0]), "intercept": float(beta[1])}, c, t.value, n_fit=t.total,
        note="" if ok else _NOT_CONVERGED, steps=fit_steps(t),
    )
    if beta[0] <= 0:
        return Fitted(cmap, _slope_reason("Platt slope", beta[0]))
    return Fitted(cmap)


_NOT_CONVERGED = (
    "the logistic fit did not converge: the stated values separate right from wrong answers "
    "in the fitting data, so the likelihood has no finite maximum; the parameters are where "
    "Newton's method stopped (try isotonic)"
)


def _slope_reason(what: str, slope: float) -> str:
    return (
        f"the {what} is {slope:.3g} (not positive): a higher stated value does not mean a higher "
        "chance of being right, so the map falls back to the base rate"
    )


def _temperature_slope(grad: Any, lo_a: float, hi_a: float) -> tuple[float, str]:
    """Root of a monotone increasing gradient ``grad(a)`` in the slope ``a = 1/T``.

    Returns ``(a, status)``: status ``"ok"``, ``"nonpositive"`` (optimum at ``a <= 0``),
    ``"upper"`` (``T`` would exceed :data:`T_MAX`) or ``"lower"`` (below :data:`T_MIN`).
    """
    if grad(0.0) >= 0:
        return 0.0, "nonpositive"
    if grad(lo_a) > 0:
        return lo_a, "upper"
    if grad(hi_a) < 0:
        return hi_a, "lower"
    return float(brentq(grad, lo_a, hi_a, xtol=1e-14, rtol=1e-12, maxiter=200)), "ok"


def _bound_note(status: str, t_value: float) -> str:
    if status == "upper":
        return (
            f"the temperature search stopped at its upper bound T = {T_MAX:g} (the likelihood still "
            "improves beyond it: the stated value carries almost no information); T is reported at the bound"
        )
    if status == "lower":
        return (
            f"the temperature search stopped at its lower bound T = {T_MIN:g} (the likelihood still "
            "improves below it: the stated values separate right from wrong); T is reported at the bound"
        )
    return ""


def _fit_temperature(t: CountTable, c: float) -> Fitted:
    z = logit(table_finite(t, c))
    n, k = t.n.astype(np.float64), t.correct.astype(np.float64)

    def grad(a: float) -> float:
        # d/da of sum n log(1+e^{az}) - k a z, increasing in a (the loss is convex)
        return float(np.sum(z * (n * expit(a * z) - k)))

    a, status = _temperature_slope(grad, 1 / T_MAX, 1 / T_MIN)
    if status == "nonpositive":
        cmap = CalibrationMap("temperature", t.scale, {"T": T_MAX}, c, t.value, n_fit=t.total, steps=fit_steps(t))
        return Fitted(cmap, _slope_reason("best slope 1/T", _nonpositive_slope(grad)))
    temp = 1.0 / a
    cmap = CalibrationMap("temperature", t.scale, {"T": temp}, c, t.value, n_fit=t.total,
                          note=_bound_note(status, temp), steps=fit_steps(t))
    return Fitted(cmap)


def _nonpositive_slope(grad: Any) -> float:
    """The (non-positive) optimal slope, for the message; 0 when the gradient is flat."""
    if grad(0.0) == 0:
        return 0.0
    lo = -1.0
    while grad(lo) > 0 and lo > -1e6:
        lo *= 4
    return float(brentq(grad, lo, 0.0)) if grad(lo) <= 0 else lo


def _fit_beta(t: CountTable, c: float) -> Fitted:
    """Beta calibration with the constraint handling of Kull et al.'s ``betacal``:
    fit ``[ln f, -ln(1-f)]`` freely; if ``a < 0`` refit on ``-ln(1-f)`` alone (a = 0);
    else if ``b < 0`` refit on ``ln f`` alone (b = 0)."""
    f = table_finite(t, c)
    x = np.column_stack([np.log(f), -np.log1p(-f)])
    beta, ok = logistic_fit(x, t.n, t.correct)
    a, b, icpt = float(beta[0]), float(beta[1]), float(beta[2])
    notes = []
    if a < 0:
        beta, ok = logistic_fit(x[:, 1], t.n, t.correct)
        a, b, icpt = 0.0, float(beta[0]), float(beta[1])
        notes.append("a < 0 in the free fit: refitted with a = 0")
    elif b < 0:
        beta, ok = logistic_fit(x[:, 0], t.n, t.correct)
        a, b, icpt = float(beta[0]), 0.0, float(beta[1])
        notes.append("b < 0 in the free fit: refitted with b = 0")
    if not ok:
        notes.append(_NOT_CONVERGED)
    cmap = CalibrationMap("beta", t.scale, {"a": a, "b": b, "c": icpt}, c, t.value, n_fit=t.total,
                          note="; ".join(notes), steps=fit_steps(t))
    if a <= 0 and b <= 0:
        return Fitted(cmap, _slope_reason("beta map's slope (a and b)", max(a, b)))
    return Fitted(cmap)


def _fit_isotonic(t: CountTable, c: float) -> Fitted:
    # table cells are distinct values, so ties are pooled before PAV
    x = cell_prob(t)
    order = np.argsort(x, kind="stable")
    x = x[order]
    y = pav(t.correct[order] / t.n[order], t.n[order].astype(np.float64))
    cmap = CalibrationMap("isotonic", t.scale, {"x": x, "y": y}, c, t.value, n_fit=t.total)
    return Fitted(cmap)


def _fit_histogram(t: CountTable, c: float, bins: int, scheme: str) -> Fitted:
    """Histogram binning (Zadrozny & Elkan 2001) on the bins of :func:`calib.metrics.bin_index`.

    ``mass`` bins (the original's equal-frequency bins; ties never split) get edges
    halfway between the largest probability of one bin and the smallest of the
    next, so a new value falls in the bin of the nearest fitted values; ``width``
    bins keep their edges ``j / B`` (right-closed, as in :func:`histogram_bin`). A
    bin without fitting rows maps to the overall hit rate (said in the note).
    """
    if scheme not in ("width", "mass"):
        raise CalibError(f"histogram binning uses 'width' or 'mass' bins, not {scheme!r}")
    idx = metrics.bin_index(t, scheme, bins)
    if scheme == "width":
        edges = np.arange(bins + 1, dtype=np.float64) / bins
    else:
        used = np.unique(idx)
        p = cell_prob(t)
        inner = [(p[idx == a].max() + p[idx == b].min()) / 2 for a, b in zip(used[:-1], used[1:], strict=True)]
        edges = np.array([0.0, *inner, 1.0])
        idx = np.searchsorted(used, idx)
    nb = edges.size - 1
    n_b = np.bincount(idx, weights=t.n, minlength=nb)
    k_b = np.bincount(idx, weights=t.correct, minlength=nb)
    rate = t.total_correct / t.total
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = np.where(n_b > 0, k_b / np.maximum(n_b, 1), rate)
    note = ""
    if (n_b == 0).any():
        note = f"{int((n_b == 0).sum())} bin(s) without fitting data map to the overall hit rate {rate:.3f}"
    cmap = CalibrationMap("histogram", t.scale, {"edges": edges, "prob": probs}, c, t.value,
                          n_fit=t.total, note=note)
    return Fitted(cmap)


def fit_on_table(table: CountTable, method: str, *, correction: float, bins: int, scheme: str) -> Fitted:
    if method not in METHODS:
        raise CalibError(f"unknown recalibration method {method!r}: choose one of {', '.join(METHODS)}")
    t = nonempty_cells(table)
    degenerate = _degenerate(t, method, correction)
    if degenerate is not None:
        return degenerate
    if method == "platt":
        return _fit_platt(t, correction)
    if method == "temperature":
        return _fit_temperature(t, correction)
    if method == "beta":
        return _fit_beta(t, correction)
    if method == "isotonic":
        return _fit_isotonic(t, correction)
    return _fit_histogram(t, correction, bins, scheme)


def fit_map(
    table: CountTable, method: str, *, correction: float = CORRECTION, bins: int = HIST_BINS,
    scheme: str = "mass",
) -> CalibrationMap:
    """Fit one map on a count table (pooled over its groups), as fitted.

    No usefulness check beyond the fit itself: use :func:`fit` for a scored result
    that falls back to the base rate. ``bins`` and ``scheme`` concern ``histogram``.
    """
    return fit_on_table(table, method, correction=correction, bins=bins, scheme=scheme).cmap


def fit_softmax_temperature(options: OptionScores) -> CalibrationMap:
    """Temperature scaling of option scores (Guo et al. 2017).

    Minimises the negative log-likelihood of the gold options
    ``sum_i logsumexp_k(l_ik / T) - l_i,gold / T`` over ``T`` in
    ``[T_MIN, T_MAX]``. The loss is convex in ``a = 1/T`` (a log-sum-exp of linear
    functions), so the optimum is the root of its derivative
    ``sum_i E_{softmax(a l_i)}[l_i] - l_i,gold``, found by Brent's method. An
    optimum at ``a <= 0`` (the scores point away from the gold options on average)
    or beyond a bound is reported in the map's note, never capped silently.
    """
    return fit_softmax(options).cmap


def fit_softmax(options: OptionScores) -> Fitted:
    logits = np.asarray(options.logits, dtype=np.float64)
    gold = np.asarray(options.gold, dtype=np.int64)
    if logits.ndim != 2 or logits.shape[0] == 0:
        raise CalibError("temperature scaling on option scores needs at least one item")
    valid = np.isfinite(logits)
    lg = np.where(valid, logits, 0.0)
    l_gold = lg[np.arange(lg.shape[0]), gold]

    def grad(a: float) -> float:
        z = np.where(valid, a * lg, -np.inf)
        w = np.exp(z - logsumexp(z, axis=1, keepdims=True))
        return float(np.sum(np.sum(w * lg, axis=1) - l_gold))

    a, status = _temperature_slope(grad, 1 / T_MAX, 1 / T_MIN)
    n = int(logits.shape[0])
    if status == "nonpositive":
        reason = _slope_reason("best slope 1/T", _nonpositive_slope(grad))
        cmap = CalibrationMap("softmax_temperature", PROBABILITY, {"T": T_MAX}, CORRECTION, n_fit=n, note=reason)
        return Fitted(cmap, reason)
    temp = 1.0 / a
    return Fitted(CalibrationMap("softmax_temperature", PROBABILITY, {"T": temp}, CORRECTION, n_fit=n,
                               note=_bound_note(status, temp)))


def softmax_nll(options: OptionScores, temperature: float = 1.0) -> float:
    """Mean negative log-likelihood of the gold options at temperature ``T``."""
    lg = np.asarray(options.logits, dtype=np.float64) / temperature
    gold = np.asarray(options.gold, dtype=np.int64)
    return float(np.mean(logsumexp(lg, axis=1) - lg[np.arange(lg.shape[0]), gold]))
