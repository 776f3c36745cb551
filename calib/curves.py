"""Reliability curves as data: what a stated value meant, with its uncertainty.

Three views of the same count table (pooled over its groups; pass
``table.select(g)`` for one group), each a small frozen dataclass of arrays that a
figure, a table or JSON can show without further computation:

- :func:`value_points`: one point per distinct stated value, its hit rate with a
  Wilson (1927) interval (:func:`calib.metrics.per_value`);
- :func:`binned_points`: one point per non-empty bin, equal-width or equal-mass
  (:func:`calib.metrics.bin_table`, the binning of the ECE);
- :func:`isotonic_curve`: the CORP reliability curve of Dimitriadis, Gneiting &
  Jordan (2021), the isotonic (PAV) regression of the outcome on the stated
  probability with ties pooled, with a *consistency band* (where the curve of a
  perfectly calibrated forecaster with these stated values would fall) and a
  bootstrap *confidence band* (how much the curve itself could move).

Speed of the bands
------------------
Each band needs one PAV fit per resample: 2,000 fits of up to 1,001 cells. A
Python-loop PAV (:func:`calib.isotonic.pav`, ~2 ms per fit of 1,000 cells) would
take 4 s per band. The bands instead solve all resamples in one call of SciPy's
compiled O(n) PAVA on the resamples laid end to end
(:func:`calib.isotonic.pav_rows`, also the batch path of the CORP decomposition),
and fill empty cells and take quantiles vectorised. Measured with
``bench/bench_models.py`` on the 2-core machine (both bands, 2,000 resamples
each): about 0.2 s for 101 distinct values and 1.7-2 s for a pooled continuous
table of 1,001 cells, a third of which is drawing the multinomial resamples. So
the default stays 2,000 resamples; a caller in a hurry on continuous data can
pass fewer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from calib import metrics
from calib.bootstrap import resample_counts
from calib.errors import CalibError
from calib.isotonic import pav, pav_rows
from calib.numbers import finite_or_none
from calib.settings import BINS, LEVEL, REPS, SCHEMES
from calib.table import CountTable

#: Views :func:`reliability` can return.
VIEWS: tuple[str, ...] = (*SCHEMES, "corp")


def _floats(a: np.ndarray) -> list[float | None]:
    return [finite_or_none(x) for x in np.asarray(a, dtype=np.float64)]


@dataclass(frozen=True, eq=False)
class ValuePoints:
    """One point per distinct stated value.

    Attributes
    ----------
    value, prob:
        The stated value and its probability ``(v - lo) / (hi - lo)`` (cell mean
        for pooled continuous values).
    n, correct, hit_rate:
        Answers with that value, right answers, and their share.
    lo, hi:
        Wilson interval of the hit rate at ``level``.
    gap:
        ``prob - hit_rate`` (positive: overconfident).
    """

    value: np.ndarray
    prob: np.ndarray
    n: np.ndarray
    correct: np.ndarray
    hit_rate: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    gap: np.ndarray
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "values", "level": self.level, "value": _floats(self.value), "prob": _floats(self.prob),
            "n": [int(x) for x in self.n], "correct": [int(x) for x in self.correct],
            "hit_rate": _floats(self.hit_rate), "lo": _floats(self.lo), "hi": _floats(self.hi),
            "gap": _floats(self.gap),
        }


def value_points(table: CountTable, *, level: float = LEVEL) -> ValuePoints:
    """Per-value reliability points with Wilson intervals (:func:`calib.metrics.value_arrays`,
    the columns of :func:`calib.metrics.per_value`)."""
    a = metrics.value_arrays(table, level)
    return ValuePoints(
        value=a["value"], prob=a["prob"], n=a["n"], correct=a["correct"], hit_rate=a["hit_rate"],
        lo=a["lo"], hi=a["hi"], gap=a["gap"], level=level,
    )


@dataclass(frozen=True, eq=False)
class BinnedPoints:
    """One point per non-empty bin.

    Attributes
    ----------
    scheme, bins:
        ``"width"`` or ``"mass"`` (or ``"values"``) and the number of bins asked for.
    lo, hi:
        The bin's edges on the stated scale (for ``mass``, its smallest and largest
        stated value).
    mean_prob:
        Mean stated probability of the bin's answers (the point's x).
    n, correct, hit_rate, ci_lo, ci_hi, gap:
        Counts, hit rate (the point's y) with its Wilson interval, and
        ``mean_prob - hit_rate``.
    """

    scheme: str
    bins: int
    lo: np.ndarray
    hi: np.ndarray
    mean_prob: np.ndarray
    n: np.ndarray
    correct: np.ndarray
    hit_rate: np.ndarray
    ci_lo: np.ndarray
    ci_hi: np.ndarray
    gap: np.ndarray
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.scheme, "bins": self.bins, "level": self.level, "lo": _floats(self.lo),
            "hi": _floats(self.hi), "mean_prob": _floats(self.mean_prob), "n": [int(x) for x in self.n],
            "correct": [int(x) for x in self.correct], "hit_rate": _floats(self.hit_rate),
            "ci_lo": _floats(self.ci_lo), "ci_hi": _floats(self.ci_hi), "gap": _floats(self.gap),
        }


def binned_points(table: CountTable, *, scheme: str = "width", bins: int = BINS,
                  level: float = LEVEL) -> BinnedPoints:
    """Binned reliability points, on the bins of the ECE (:func:`calib.metrics.bin_table`):
    equal-width bins are right-closed ``(j/B, (j+1)/B]`` with 0 in the first;
    equal-mass bins never split a stated value."""
    scheme = metrics.resolve_scheme(table, scheme)
    rows = metrics.bin_table(table, scheme, bins, level)

    def col(name: str, dtype: type = np.float64) -> np.ndarray:
        return np.array([getattr(r, name) for r in rows], dtype=dtype)

    return BinnedPoints(
        scheme=scheme, bins=int(bins), lo=col("lo"), hi=col("hi"), mean_prob=col("mean_prob"),
        n=col("n", np.int64), correct=col("correct", np.int64),
        hit_rate=np.array([r.hit_rate.value for r in rows], dtype=np.float64),
        ci_lo=np.array([r.hit_rate.lo for r in rows], dtype=np.float64),
        ci_hi=np.array([r.hit_rate.hi for r in rows], dtype=np.float64), gap=col("gap"), level=level,
    )


@dataclass(frozen=True, eq=False)
class IsotonicCurve:
    """The CORP reliability curve with its bands, one entry per distinct stated value.

    Attributes
    ----------
    value, prob, n:
        Distinct stated values, their probabilities (the curve's x) and counts.
    fitted:
        The PAV fit of the hit rate, ties pooled (the curve's y).
    consistency_lo, consistency_hi:
        Pointwise ``level`` band of the PAV curve refitted on outcomes drawn as
        Bernoulli(stated probability): where the curve of a *calibrated* forecaster
        with the same stated values would fall. A curve outside it is evidence of
        miscalibration at that value. NaN when ``reps = 0``.
    confidence_lo, confidence_hi:
        Pointwise percentile bootstrap band of the curve (rows resampled, curve
        refitted). NaN when ``reps = 0``.
    reps, seed, level:
        How the bands were drawn.
    """

    value: np.ndarray
    prob: np.ndarray
    n: np.ndarray
    fitted: np.ndarray
    consistency_lo: np.ndarray
    consistency_hi: np.ndarray
    confidence_lo: np.ndarray
    confidence_hi: np.ndarray
    reps: int
    seed: int
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "corp", "reps": self.reps, "seed": self.seed, "level": self.level,
            "value": _floats(self.value), "prob": _floats(self.prob), "n": [int(x) for x in self.n],
            "fitted": _floats(self.fitted),
            "consistency": [_floats(self.consistency_lo), _floats(self.consistency_hi)],
            "confidence": [_floats(self.confidence_lo), _floats(self.confidence_hi)],
        }


def _cells(table: CountTable) -> CountTable:
    """The group-pooled table without empty cells."""
    t = metrics.single(table)
    if (t.n > 0).all():
        return t
    m = t.n > 0
    return replace(
        t, value=t.value[m], prob=t.prob[m], n=t.n[m], correct=t.correct[m], py_sum=t.py_sum[m],
        sq_sum=t.sq_sum[m], nll_sum=t.nll_sum[m], group=t.group[m],
    )


def isotonic_fit(table: CountTable) -> np.ndarray:
    """PAV fit of the hit rate per cell of the (group-pooled) table, ties pooled,
    weights = counts: ``argmin_{f nondecreasing} sum_c n_c (k_c / n_c - f_c)^2``."""
    t = _cells(table)
    return pav(t.correct / t.n, t.n.astype(np.float64)) if t.cells else np.zeros(0)


def _fill_empty(fits: np.ndarray, n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Cells a resample left empty carry no fit: interpolate them linearly in the
    stated probability between the nearest non-empty cells of the same resample
    (flat beyond the ends), as the curve is drawn (and as scikit-learn's
    ``IsotonicRegression.predict`` does). Vectorised: the nearest non-empty cell
    on each side comes from a running max/min of cell indices."""
    empty = n == 0
    if not empty.any():
        return fits
    reps, cells = n.shape
    idx = np.arange(cells)
    left = np.maximum.accumulate(np.where(empty, -1, idx), axis=1)
    right = np.minimum.accumulate(np.where(empty, cells, idx)[:, ::-1], axis=1)[:, ::-1]
    li, ri = np.clip(left, 0, cells - 1), np.clip(right, 0, cells - 1)
    fl, fr = np.take_along_axis(fits, li, 1), np.take_along_axis(fits, ri, 1)
    xl, xr = x[li], x[ri]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(xr > xl, (x - xl) / (xr - xl), 0.0)
    filled = np.where(left < 0, fr, np.where(right >= cells, fl, fl + w * (fr - fl)))
    filled[(left < 0) & (right >= cells)] = np.nan
    return np.where(empty, filled, fits)


def _band(fits: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    a = (1 - level) / 2
    # np.quantile is vectorised over columns (nanquantile loops in Python); a
    # resample is all-NaN only when the table is empty, and those are dropped
    fits = fits[np.isfinite(fits).all(axis=1)]
    if fits.shape[0] == 0:
        nan = np.full(fits.shape[1], np.nan)
        return nan, nan
    lo, hi = np.quantile(fits, [a, 1 - a], axis=0)
    return lo, hi


def isotonic_curve(
    table: CountTable, *, reps: int = REPS, seed: int = 0, level: float = LEVEL,
) -> IsotonicCurve:
    """The CORP reliability curve (Dimitriadis, Gneiting & Jordan 2021) with bands.

    The curve is the isotonic regression of the outcome on the stated probability,
    ties pooled (one block per distinct value), fitted by PAV. Bands, pointwise at
    each distinct value, percentile ``level``:

    - consistency: for each resample, outcomes ``k*_c ~ Binomial(n_c, p_c)`` (the
      stated probability taken as the truth; for pooled continuous cells, the cell
      mean), then the PAV refit; the band shows where a calibrated forecaster's
      curve falls by chance (the resampling method of the paper's section 3.3);
    - confidence: multinomial bootstrap of the table
      (:func:`calib.bootstrap.resample_counts`), then the PAV refit; values a
      resample left empty are interpolated (:func:`_fill_empty`).

    Both bands use ``seed`` (the consistency band with ``seed + 1``, so the two are
    not drawn from the same stream).

    A table of more than 101 distinct values (a continuous score) is drawn on its
    coarse table (:meth:`calib.table.CountTable.coarse`, at most 1,001 cells 0.001
    wide): a curve and bands to look at, whose 2,000 refits stay cheap. The exact
    isotonic fit is :func:`isotonic_fit` (and :func:`calib.metrics.corp`).
    """
    if not 0 < level < 1:
        raise CalibError(f"the band level must be between 0 and 1, got {level:g}")
    t = _cells(metrics.single(table).coarse())
    fitted = isotonic_fit(t)
    nan = np.full(t.cells, np.nan)
    c_lo = c_hi = b_lo = b_hi = nan
    if reps > 0 and t.cells:
        p = np.clip(t.prob, 0.0, 1.0)
        rng = np.random.default_rng(seed + 1)
        n_rep = np.broadcast_to(t.n, (reps, t.cells))
        k_cons = rng.binomial(n_rep, p)
        c_lo, c_hi = _band(pav_rows(np.ascontiguousarray(n_rep), k_cons), level)
        n_b, k_b = resample_counts(t, reps, seed)
        fits = _fill_empty(pav_rows(n_b, k_b), n_b, t.prob)
        b_lo, b_hi = _band(fits, level)
    return IsotonicCurve(
        value=t.value.astype(np.float64), prob=t.prob.astype(np.float64), n=t.n.astype(np.int64),
        fitted=fitted, consistency_lo=c_lo, consistency_hi=c_hi, confidence_lo=b_lo, confidence_hi=b_hi,
        reps=int(reps), seed=int(seed), level=float(level),
    )


def reliability(
    table: CountTable, view: str = "values", *, bins: int = BINS, level: float = LEVEL,
    reps: int = REPS, seed: int = 0,
) -> ValuePoints | BinnedPoints | IsotonicCurve:
    """The reliability view the dashboard's selector names (:data:`VIEWS`)."""
    if view == "values":
        return value_points(table, level=level)
    if view in ("width", "mass"):
        return binned_points(table, scheme=view, bins=bins, level=level)
    if view == "corp":
        return isotonic_curve(table, reps=reps, seed=seed, level=level)
    raise CalibError(f"unknown reliability view {view!r}; choose one of {', '.join(VIEWS)}")


def audit_diagram(
    table: CountTable, *, scheme: str, bins: int = BINS, level: float = LEVEL, reps: int = REPS, seed: int = 0,
) -> tuple[ValuePoints | BinnedPoints, IsotonicCurve]:
    """The points and the CORP curve of the reliability diagram under an audit's settings
    (``scheme`` as the audit resolved it): per-value points when the audit bins per value
    and the table keeps its values, else binned points (width bins for a per-value scheme
    on a pooled table); the curve with its bands from ``reps`` resamples."""
    points: ValuePoints | BinnedPoints
    if scheme == "values" and not table.pooled:
        points = value_points(table, level=level)
    else:
        points = binned_points(table, scheme="width" if scheme == "values" else scheme, bins=bins, level=level)
    return points, isotonic_curve(table, reps=reps, seed=seed, level=level)
