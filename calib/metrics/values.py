"""The use of the scale: one row per distinct stated value (:func:`per_value`, with
Wilson (1927) intervals and a per-value test), the most used value, and the share of
answers below a threshold (:func:`default_below`, :func:`share_below`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from calib.estimates import WILSON, Estimate
from calib.metrics.cells import CellStats, safe_div, single, test_prob
from calib.metrics.pvalues import P_FLOOR
from calib.numbers import finite_or_none
from calib.settings import LEVEL
from calib.table import CountTable


@dataclass(frozen=True)
class ValueRow:
    """One distinct stated value: how often it was used and what it meant.

    ``gap`` is stated probability minus hit rate (positive: overconfident);
    ``z``/``p_value`` test "hit rate = stated probability" (ends read as in
    :func:`test_prob`; the p-value is the normal one, or the exact binomial
    two-sided ``2 min(P(K <= k), P(K >= k))`` when fewer than :data:`MIN_EXPECTED`
    right or wrong answers are expected); ``hit_rate`` an :class:`~calib.estimates.Estimate`
    with its Wilson interval (:data:`CLUSTERED_WILSON` on clustered rows).
    """

    value: float
    prob: float
    n: int
    correct: int
    share: float
    hit_rate: Estimate
    gap: float
    z: float | None
    p_value: float | None

    def to_dict(self) -> dict[str, object]:
        return {
            "value": self.value, "prob": self.prob, "n": self.n, "correct": self.correct,
            "share": self.share, "hit_rate": self.hit_rate.value,
            "hit_rate_ci": self.hit_rate.to_list(),
            "gap": self.gap, "z": self.z, "p_value": self.p_value,
        }


#: :attr:`Estimate.method` of a hit rate's interval on clustered rows (:func:`value_arrays`).
CLUSTERED_WILSON = ("Wilson on the effective counts (the cell's Kish design effect), Student's t quantile on "
                    "the effective number of clusters minus one")

#: Expected right or wrong answers below which :func:`per_value` uses the exact binomial p-value.
MIN_EXPECTED = 5.0


def distinct_values(table: CountTable) -> int:
    """Number of distinct stated values used (cells with at least one answer)."""
    t = single(table)
    return int(np.count_nonzero(t.n))


def most_common(table: CountTable) -> tuple[float | None, int, float | None]:
    """The most used stated value (the lowest on ties), its count and its share."""
    t = single(table)
    if t.total == 0:
        return None, 0, None
    i = int(np.argmax(t.n))
    return float(t.value[i]), int(t.n[i]), float(t.n[i] / t.total)


def default_below(table: CountTable) -> float:
    """Default threshold of :func:`share_below`: the stated value of probability 0.8
    (80 on 0-100, where the review threshold of most judge pipelines sits)."""
    return float(table.scale.to_stated(0.8))


def share_below(table: CountTable, value: float) -> float | None:
    """Share of answers stated strictly below ``value`` (on the stated scale)."""
    t = single(table)
    if t.total == 0:
        return None
    return float(t.n[t.value < value].sum() / t.total)


def shares_batch(s: CellStats, below_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    N = s.total.astype(np.float64)
    return safe_div(s.n.max(axis=-1).astype(np.float64), N), safe_div(s.n[:, below_mask].sum(axis=-1).astype(np.float64), N)


def wilson_interval(k: np.ndarray | int, n: np.ndarray | int, level: float = LEVEL,
                    df: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Wilson (1927) score interval for a binomial proportion ``k / n``.

    .. math:: \\frac{k + z^2/2}{n + z^2} \\pm \\frac{z}{n + z^2}\\sqrt{\\frac{k (n - k)}{n} + \\frac{z^2}{4}}

    ``z`` is the normal quantile of ``level``, or with ``df`` (clustered rows: effective
    counts, see :func:`value_arrays`) Student's t quantile on ``df`` degrees of freedom,
    as survey estimates of few clusters use (Korn & Graubard 1998). NaN where ``n = 0``."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if df is None:
        z = float(-special.ndtri((1 - level) / 2))
    else:
        z = -special.stdtrit(np.maximum(np.asarray(df, dtype=np.float64), 1.0), (1 - level) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = (k + z * z / 2) / (n + z * z)
        half = z / (n + z * z) * np.sqrt(np.maximum(k * (n - k), 0) / n + z * z / 4)
        # the bounds hold k / n exactly: at k = n, (k + z^2/2 + half)/(n + z^2) can round to 1 - 1e-16
        share = k / np.where(n > 0, n, 1.0)
        lo = np.where(n > 0, np.clip(np.minimum(centre - half, share), 0, 1), np.nan)
        hi = np.where(n > 0, np.clip(np.maximum(centre + half, share), 0, 1), np.nan)
    return lo, hi


def value_arrays(table: CountTable, level: float = LEVEL) -> dict[str, np.ndarray]:
    """The columns of :func:`per_value` as arrays over the cells with answers
    (vectorised: a continuous table has as many cells as rows)."""
    t = single(table)
    m = t.n > 0
    n, k = t.n[m].astype(np.int64), t.correct[m].astype(np.int64)
    tp = test_prob(t)[m]
    ne, ke, zdiv, df = _effective(t, m, n, k, tp)
    lo, hi = wilson_interval(ke, ne, level, df)
    with np.errstate(divide="ignore", invalid="ignore"):  # a stated 0 or 100 has no variance
        z = (k - n * tp) / np.sqrt(n * tp * (1 - tp)) / zdiv
        # two-sided normal p from its log (as z_test); exact binomial tails where the normal is poor,
        # in the incomplete-beta form, which also takes the effective (non-integer) counts of clusters:
        # P(K <= k) = I_{1-p}(n - k, k + 1), P(K >= k) = I_p(k, n - k + 1)
        pz = np.exp(np.log(2.0) + special.log_ndtr(-np.abs(z)))
        below = np.where(ke < ne, special.betainc(np.maximum(ne - ke, 1e-300), ke + 1, 1 - tp), 1.0)
        above = np.where(ke > 0, special.betainc(np.maximum(ke, 1e-300), ne - ke + 1, tp), 1.0)
        tail = np.minimum(below, above)
    small = np.minimum(ne * tp, ne * (1 - tp)) < MIN_EXPECTED
    pv = np.where(small, np.maximum(np.minimum(1.0, 2 * tail), P_FLOOR), np.maximum(pz, P_FLOOR))
    pv = np.where(small | np.isfinite(z), pv, np.nan)
    hit = k / np.maximum(n, 1)
    return {
        "value": t.value[m].astype(np.float64), "prob": t.prob[m].astype(np.float64), "n": n, "correct": k,
        "share": n / max(t.total, 1), "hit_rate": hit, "lo": lo, "hi": hi, "gap": t.prob[m] - hit,
        "z": np.where(np.isfinite(z), z, np.nan), "p_value": pv,
    }


def _effective(t: CountTable, m: np.ndarray, n: np.ndarray, k: np.ndarray, tp: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Effective counts ``(n / deff, k / deff)`` of each used cell, the divisor of its z,
    and the degrees of freedom of its interval.

    Independent rows: the counts themselves, 1 and ``None`` (the normal quantile). Clustered rows
    (:attr:`CountTable.clusters`): the interval's design effect is the cell's own Kish
    effect (:func:`calib.clusters.cell_design_effects`, centred), never below 1; where it
    is undefined (every answer of the cell right, or every one wrong) the effective size is
    the number of clusters with rows in the cell, the worst case of answers that agree
    within a cluster. The test divides z by the square root of the uncentred effect at
    the stated probability (:func:`calib.clusters.test_adjustment`), as the audit's other
    tests do (Rao & Scott 1981). The interval's quantile is Student's t on the cell's
    effective number of clusters minus one, ``(sum_g n_gc)^2 / sum_g n_gc^2 - 1`` (Kish's
    effective count of unequal clusters): a design effect estimated from a few clusters is
    itself uncertain (``bench/sim_clusters.py``: 50 items x 20 epochs, 88% coverage with
    the normal quantile, 91% with t; 200 x 5: 94%)."""
    if t.clusters is None:
        return n.astype(np.float64), k.astype(np.float64), np.ones(n.size), None
    from calib.clusters import cell_design_effects, test_adjustment

    used = np.flatnonzero(m)
    cl = t.clusters.select(used)
    width = np.diff(cl.n.tocsc().indptr).astype(np.float64)  # clusters per cell
    d = cell_design_effects(cl)
    ne = np.where(np.isfinite(d), n / np.maximum(d, 1.0), np.minimum(n, width))
    dt = cell_design_effects(cl, tp)
    zdiv = np.sqrt([test_adjustment(None if not np.isfinite(x) else float(x)) for x in dt])
    sq = np.asarray(cl.n.multiply(cl.n).sum(axis=0), dtype=np.float64).ravel()
    return ne, k * ne / np.maximum(n, 1), zdiv, n.astype(np.float64) ** 2 / sq - 1


def per_value(table: CountTable, level: float = LEVEL) -> tuple[ValueRow, ...]:
    """One :class:`ValueRow` per distinct stated value (cells with answers); see
    :func:`value_arrays`. Meaningful on a stated scale (values that repeat, see
    :func:`choose_scheme`); a continuous score has one row per answer."""
    a = value_arrays(table, level)
    how = WILSON if single(table).clusters is None else CLUSTERED_WILSON
    cols = [a[f] for f in ("value", "prob", "n", "correct", "share", "hit_rate", "lo", "hi", "gap", "z", "p_value")]
    return tuple(
        ValueRow(float(v), float(p), int(n), int(k), float(sh), Estimate(float(h), float(lo), float(hi), level, how),
                 float(g), finite_or_none(z), finite_or_none(pv))
        for v, p, n, k, sh, h, lo, hi, g, z, pv in zip(*cols, strict=True)
    )
