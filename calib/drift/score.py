"""The Miettinen-Nurminen score test of a difference of two rates, the interval that inverts
it, and Holm's step-down over a family of tests (:func:`holm`).

Contract
--------
For ``k_old`` of ``n_old`` and ``k_new`` of ``n_new`` right, with ``delta = p_new - p_old``:
:func:`score_stat` is the statistic ``T(delta)``, :func:`score_p` the two-sided p-value of
``delta = 0`` and :func:`score_interval` the set ``{delta : |T(delta)| <= z_{(1+level)/2}}``.
The interval is the inversion of the test, so they never contradict each other: it
excludes 0 exactly when ``p < 1 - level`` (issue 22: a bootstrap interval beside a Fisher
p-value could say both "moved" and "not moved" for a small value).

Definition
----------
Miettinen & Nurminen (1985), *Statistics in Medicine* 4, 213-226:

.. math:: T(\\delta) = \\frac{\\hat p_{new} - \\hat p_{old} - \\delta}
          {\\sqrt{\\big(\\tilde p_{new}(1 - \\tilde p_{new}) / n_{new} + \\tilde p_{old}(1 - \\tilde p_{old}) / n_{old}\\big)
          \\, N / (N - 1)}}

with ``N = n_old + n_new`` and ``(p~_new, p~_old = p~_new - delta)`` the maximum-likelihood
rates under ``delta``, the root of a cubic in closed form (Farrington & Manning 1990,
*Statistics in Medicine* 9, 1447-1454, eq. 2.3). At ``delta = 0`` it is Pearson's
chi-square test times ``(N - 1) / N``. ``T`` decreases in ``delta``, so each end of the
interval is found by bisection.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def _restricted(x1: int, n1: int, x2: int, n2: int, delta: float) -> tuple[float, float]:
    """The maximum-likelihood ``(p1, p2)`` under ``p1 - p2 = delta`` (Farrington-Manning's cubic)."""
    theta = n2 / n1
    a = 1 + theta
    b = -(1 + theta + x1 / n1 + theta * x2 / n2 + delta * (theta + 2))
    c = delta * delta + delta * (2 * x1 / n1 + theta + 1) + x1 / n1 + theta * x2 / n2
    d = -(x1 / n1) * delta * (1 + delta)
    v = b ** 3 / (27 * a ** 3) - b * c / (6 * a * a) + d / (2 * a)
    u2 = b * b / (9 * a * a) - c / (3 * a)
    u = math.copysign(math.sqrt(max(u2, 0.0)), v)
    w = (math.pi + math.acos(max(-1.0, min(1.0, v / u ** 3)))) / 3 if u != 0 else math.pi / 2
    p1 = 2 * u * math.cos(w) - b / (3 * a)
    p1 = min(1.0, max(0.0, p1))
    return p1, min(1.0, max(0.0, p1 - delta))


def score_stat(k_old: int, n_old: int, k_new: int, n_new: int, delta: float) -> float:
    """``T(delta)`` (see the module docstring); ``+-inf`` where the restricted variance is 0."""
    num = k_new / n_new - k_old / n_old - delta
    if abs(num) < 1e-15:
        return 0.0
    p1, p2 = _restricted(k_new, n_new, k_old, n_old, delta)
    big_n = n_old + n_new
    var = (p1 * (1 - p1) / n_new + p2 * (1 - p2) / n_old) * big_n / (big_n - 1)
    return math.copysign(math.inf, num) if var <= 0 else num / math.sqrt(var)


def score_p(k_old: int, n_old: int, k_new: int, n_new: int) -> float:
    """Two-sided p-value of "the same rate in both runs": ``2 (1 - Phi(|T(0)|))``."""
    return float(min(1.0, 2 * stats.norm.sf(abs(score_stat(k_old, n_old, k_new, n_new, 0.0)))))


def score_interval(k_old: int, n_old: int, k_new: int, n_new: int, level: float) -> tuple[float, float]:
    """``{delta : |T(delta)| <= z}`` at ``level``: the interval that inverts :func:`score_p`."""
    z = float(stats.norm.ppf((1 + level) / 2))
    d = k_new / n_new - k_old / n_old

    def root(lo: float, hi: float, target: float) -> float:
        # T decreases in delta: T(lo) >= target >= T(hi) on the bracket
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if score_stat(k_old, n_old, k_new, n_new, mid) > target:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    eps = 1e-12
    lower = -1.0 if score_stat(k_old, n_old, k_new, n_new, -1 + eps) <= z else root(-1 + eps, d, z)
    upper = 1.0 if score_stat(k_old, n_old, k_new, n_new, 1 - eps) >= -z else root(d, 1 - eps, -z)
    return lower, upper


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values: ``max_{j<=i} (m - j + 1) p_(j)``, capped at 1.

    Rejecting every hypothesis whose adjusted p-value is at most ``alpha`` controls the
    family-wise error rate at ``alpha`` under any dependence."""
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out
