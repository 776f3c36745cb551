"""P-values of the calibration tests: the :class:`Test` result, asymptotic normal and
chi-square p-values computed from log tail probabilities (never underflowing to 0, floored
at :data:`P_FLOOR`), and the Monte Carlo p-value (Davison & Hinkley 1997) used where the
asymptotic reference is unreliable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

#: Smallest asymptotic p-value reported (the smallest normal double); ``log10_p`` is exact.
P_FLOOR = float(np.finfo(np.float64).tiny)


_LOG_P_FLOOR = math.log(P_FLOOR)


@dataclass(frozen=True)
class Test:
    """A hypothesis test of calibration.

    Attributes
    ----------
    name:
        Short identifier (``"calibration_in_the_large"``...).
    statistic:
        The test statistic (z or chi-square), ``None`` when undefined.
    df:
        Degrees of freedom of a chi-square statistic (``None`` for a z statistic).
    p_value:
        Two-sided p-value. An asymptotic one is computed from the log tail
        probability (``scipy.stats.norm.logsf`` / ``chi2.logsf``) and floored at
        :data:`P_FLOOR` (2.2e-308) so that it never underflows to 0; a Monte Carlo
        one is ``(1 + exceed) / (draws + 1)``. It is exactly 0 only for data the
        hypothesis rules out (:func:`impossible`), 1 for data it makes certain.
    log10_p:
        ``log10`` of the p-value where that is exact or asymptotic (below -308 when
        the floor applies); ``None`` for a Monte Carlo bound (``p_bound``) and for
        ``p = 0``.
    note:
        Why the statistic is undefined, how the p-value was computed when not
        asymptotically, or what the data rules out.
    p_bound:
        True when ``p_value`` is only an upper bound: a Monte Carlo p-value whose
        simulations never reached the observed statistic (the true p is smaller).
    """

    name: str
    statistic: float | None
    df: float | None
    p_value: float | None
    log10_p: float | None
    note: str = ""
    p_bound: bool = False

    def rejects(self, alpha: float) -> bool | None:
        """True when ``p < alpha``; ``None`` when the test is undefined."""
        return None if self.p_value is None else self.p_value < alpha

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name, "statistic": self.statistic, "df": self.df,
            "p_value": self.p_value, "log10_p": self.log10_p, "note": self.note,
            "p_bound": self.p_bound,
        }


def _p_from_log(logp: float) -> tuple[float, float]:
    logp = min(float(logp), 0.0)
    return (math.exp(logp) if logp > _LOG_P_FLOOR else P_FLOOR), logp / math.log(10)


def z_test(name: str, z: float | None, note: str = "") -> Test:
    """Two-sided normal test: ``p = 2 P(Z > |z|) = erfc(|z| / sqrt 2)``, from its log
    (``log_ndtr(-|z|)``, accurate far into the tail where ``erfc`` underflows)."""
    if z is None or not np.isfinite(z):
        return Test(name, None, None, None, None, note)
    p, lp = _p_from_log(math.log(2.0) + float(special.log_ndtr(-abs(z))))
    return Test(name, float(z), None, p, lp, note)


def chi2_logsf(x: float, df: float) -> float:
    """``log P(chi2_df > x)``, finite however far in the tail.

    ``log Q(df/2, x/2)`` (the upper regularized incomplete gamma,
    ``scipy.special.gammaincc``) where that is a normal number; beyond, its log
    from the continued fraction
    (modified Lentz; Press et al., Numerical Recipes, sect. 6.2), which converges
    fast exactly there (``x/2 > df/2 + 1``)."""
    q = float(special.gammaincc(df / 2.0, x / 2.0))
    if q > 1e-300 or x / 2.0 <= df / 2.0 + 1:
        return math.log(q) if q > 0 else _LOG_P_FLOOR
    a, z = df / 2.0, x / 2.0
    tiny = 1e-300
    b = z + 1 - a
    c = 1 / tiny
    d = 1 / b
    f = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        f *= delta
        if abs(delta - 1) < 1e-15:
            break
    return -z + a * math.log(z) - math.lgamma(a) + math.log(f)


def chi2_test(name: str, x2: float | None, df: float, note: str = "") -> Test:
    """Upper-tail chi-square test with ``df`` degrees of freedom (:func:`chi2_logsf`)."""
    if x2 is None or not np.isfinite(x2) or df <= 0:
        return Test(name, None, None, None, None, note)
    p, lp = _p_from_log(chi2_logsf(max(float(x2), 0.0), float(df)))
    return Test(name, float(x2), float(df), p, lp, note)


def mc_test(name: str, stat: float, df: float | None, exceed: int, draws: int, reason: str) -> Test:
    """Monte Carlo p-value ``(1 + #{simulated >= observed}) / (draws + 1)`` (Davison &
    Hinkley 1997, eq. 4.11): never 0, and exact in level. When no draw reached the
    observed statistic it is only a bound (``p_bound``, ``log10_p`` is ``None``)."""
    pv = (1 + exceed) / (draws + 1)
    bound = exceed == 0
    note = (f"p-value by Monte Carlo ({draws:,} draws under perfect calibration): the asymptotic "
            f"distribution is unreliable here ({reason})")
    if bound:
        note += f"; no draw reached the observed statistic, so p <= {pv:.1g}"
    return Test(name, float(stat), df, pv, None if bound else math.log10(pv), note, p_bound=bound)


def _ks_terms(x: float) -> int:
    return int(min(10_000, math.ceil(12.0 / max(x, 1e-3)) + 2))


def brownian_max_abs_logsf(x: float) -> float:
    """``log P(sup_{0<=t<=1} |B(t)| >= x)`` for a standard Brownian motion ``B``.

    .. math:: P = 4 \\sum_{j \\ge 0} (-1)^j \\, \\bar\\Phi\\big((2j + 1) x\\big)

    (reflection: Feller 1971, vol. II, sect. X.5; the image series of the CDF
    ``sum_k (-1)^k [Phi((2k+1)x) - Phi((2k-1)x)]``), summed from ``log Phi-bar(x)`` so
    that it never underflows. The reference distribution of the Kolmogorov-Smirnov
    statistic of cumulative differences (Tygert 2021)."""
    if not x > 0:
        return 0.0
    lead = float(special.log_ndtr(-x))
    ratio = 1.0
    for j in range(1, _ks_terms(x)):
        term = math.exp(float(special.log_ndtr(-(2 * j + 1) * x)) - lead)
        ratio += (-1) ** j * term
        if term < 1e-17:
            break
    return min(0.0, math.log(4.0) + lead + math.log(max(ratio, 1e-300)))


def brownian_range_logsf(x: float) -> float:
    """``log P(max B - min B >= x)`` over ``[0, 1]`` for a standard Brownian motion ``B``.

    .. math:: P = 1 - \\sum_{k \\ge 0} \\Big(\\frac{8}{x^2} + \\frac{2}{(k + 1/2)^2 \\pi^2}\\Big)
              e^{-2 (k + 1/2)^2 \\pi^2 / x^2}

    (Feller 1951, "The asymptotic distribution of the range of sums of independent random
    variables", Ann. Math. Statist. 22; in the form of Tygert 2021), summed for ``x <
    RANGE_TAIL_FROM``; beyond, where the series' ``1 - ...`` loses its digits, its tail
    ``8 Phi-bar(x)`` (within 1e-9 relative of the series at 5 and 6), from
    ``log Phi-bar(x)`` so that it never underflows. The reference distribution of the
    Kuiper statistic of cumulative differences."""
    if not x > 0:
        return 0.0
    if x >= RANGE_TAIL_FROM:
        return math.log(8.0) + float(special.log_ndtr(-x))
    cdf, k = 0.0, 0
    while True:
        kp = (k + 0.5) * math.pi
        term = (8 / x**2 + 2 / kp**2) * math.exp(-2 * kp**2 / x**2)
        cdf += term
        k += 1
        if term < 1e-18 * max(cdf, 1e-300) or k > 1000:
            break
    return math.log(max(1.0 - cdf, 1e-300)) if cdf < 1.0 else math.log(1e-300)


#: Where :func:`brownian_range_logsf` switches from the series to its tail.
RANGE_TAIL_FROM = 6.0


def brownian_max_abs_critical(alpha: float) -> float:
    """The ``x`` with ``P(sup |B| >= x) = alpha`` (:func:`brownian_max_abs_logsf`, by
    bisection): 2.2414 at 5%. The band of the cumulative-differences figure."""
    lo, hi, target = 1e-3, 40.0, math.log(alpha)
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if brownian_max_abs_logsf(mid) > target else (lo, mid)
    return (lo + hi) / 2
