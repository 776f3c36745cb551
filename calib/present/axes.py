"""Where a figure's axes start and end, and how judges at the same value stand apart: the
rules shared by the Plotly figures (:mod:`calib.present.figures`) and the static ones
(:mod:`calib.present.static`), so that both show the same part of the scale.

Contract
--------
:func:`fit_range` is the extent of the data drawn (points, interval ends, bands) with a
margin, never past the axis's natural bounds (0-100% for a rate); :func:`diagonal_ranges`
does that for a reliability-type figure and then widens the y axis toward the x range,
so that the y = x line crosses the drawn square (it stops widening before the data
would fill less than :data:`MIN_DATA_SHARE` of the axis, unless the diagonal would
otherwise cross less than :data:`DIAGONAL_SHARE` of the x range); :func:`dodge` spreads ``k``
series sharing x positions over a fraction of the closest gap between positions.
Nothing here draws; every function takes and returns plain numbers.

Why: a judge that states only 80-100 on a 0-100 scale, drawn on 0-100, puts its whole
story in the right fifth of the figure; three judges stating 90 draw three markers on
one spot, the biggest hiding the others.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

#: Margin on each side of the data, as a share of the data's extent.
PAD = 0.06
#: Smallest margin, as a share of the axis's natural span (one point on 0-100 is 1.5).
MIN_PAD = 0.015
#: The data keeps at least this share of an axis widened toward the diagonal.
MIN_DATA_SHARE = 0.6
#: The y = x line crosses at least this share of the x range of a reliability-type figure.
DIAGONAL_SHARE = 0.25
#: The dodged series together span this share of the closest gap between x positions.
DODGE_SHARE = 0.6
#: ... and at most this share of the axis's natural span per neighbour (2 points on 0-100).
DODGE_MAX = 0.02


def _finite(values: Iterable[object]) -> np.ndarray:
    arr = np.array([v for v in values if v is not None], dtype=np.float64).ravel()
    return arr[np.isfinite(arr)]


def fit_range(
    values: Iterable[object], *, bounds: tuple[float, float] = (0.0, 100.0), pad: float = PAD
) -> tuple[float, float]:
    """``[lo, hi]`` of an axis showing ``values`` (``None`` and NaN ignored) with a margin.

    Parameters
    ----------
    values:
        Everything drawn on the axis: points, interval ends, band edges.
    bounds:
        The axis's natural ends (a rate: 0 and 100); the range extends at most a margin
        past them, and is exactly ``bounds`` plus that margin when nothing is drawn.
    pad:
        Margin per side as a share of the data's extent (at least :data:`MIN_PAD` of
        the natural span, so a single value still gets an axis around it).

    Returns
    -------
    tuple[float, float]
        The range, ``lo < hi``.
    """
    b_lo, b_hi = float(bounds[0]), float(bounds[1])
    span_b = (b_hi - b_lo) or 1.0
    v = _finite(values)
    if v.size == 0:
        return b_lo - MIN_PAD * 2 * span_b, b_hi + MIN_PAD * 2 * span_b
    lo, hi = float(v.min()), float(v.max())
    margin = max(pad * (hi - lo), MIN_PAD * span_b)
    return max(lo - margin, b_lo - margin), min(hi + margin, b_hi + margin)


def diagonal_ranges(
    xs: Iterable[object], ys: Iterable[object], *, bounds: tuple[float, float] = (0.0, 100.0)
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The x and y ranges of a figure with a y = x reference line (both axes in the same unit).

    The x range fits ``xs``; the y range fits ``ys`` and is then widened toward the x
    range (so that the diagonal runs through the drawn part) as far as the data keeps
    :data:`MIN_DATA_SHARE` of it, and in any case until the diagonal crosses
    :data:`DIAGONAL_SHARE` of the x range. A judge stating 80-100 and right 60-90% of the time
    gets x about 79-101 and y about 58-101, the diagonal from corner to corner of its part.
    """
    x_lo, x_hi = fit_range(xs, bounds=bounds)
    y_lo, y_hi = fit_range(ys, bounds=bounds)
    v = _finite(ys)
    extent = float(v.max() - v.min()) if v.size else 0.0
    room = max(0.0, extent / MIN_DATA_SHARE - (y_hi - y_lo))  # how much wider y may grow
    if x_hi > y_hi:
        grow = min(x_hi - y_hi, room)
        y_hi, room = y_hi + grow, room - grow
    if x_lo < y_lo:
        y_lo -= min(y_lo - x_lo, room)
    # the diagonal wins over the data's share: it crosses at least DIAGONAL_SHARE of the x
    # range, so a judge far off it (right 80% at a stated 98) still shows how far
    reach = DIAGONAL_SHARE * (x_hi - x_lo)
    y_hi = max(y_hi, x_lo + reach)
    y_lo = min(y_lo, x_hi - reach)
    return (x_lo, x_hi), (y_lo, y_hi)


def dodge(positions: Iterable[Iterable[object]], *, span: float) -> list[float]:
    """Offsets (in x units) that put series side by side at shared x positions.

    Parameters
    ----------
    positions:
        The x positions of each series, one iterable per series.
    span:
        The axis's natural span (100 for percent): each neighbour at most :data:`DODGE_MAX` of it away.

    Returns
    -------
    list[float]
        One offset per series, centred on zero, together spanning :data:`DODGE_SHARE` of
        the closest gap between distinct positions; all zero for one series or when no
        position is shared.
    """
    sets = [set(_finite(p).round(9).tolist()) for p in positions]
    k = len(sets)
    if k < 2 or not any(a & b for i, a in enumerate(sets) for b in sets[i + 1 :]):
        return [0.0] * k
    every = np.array(sorted(set().union(*sets)))
    gap = float(np.min(np.diff(every))) if every.size > 1 else span
    width = min(DODGE_SHARE * gap, DODGE_MAX * span * (k - 1))
    step = width / (k - 1)
    return [(i - (k - 1) / 2) * step for i in range(k)]


#: Tick labels closer than this share of the visible axis would overlap (on a phone's 300 px plot).
TICK_GAP = 0.07


def used_ticks(
    values: np.ndarray, n: np.ndarray, lo: float, hi: float, *, gap: float = TICK_GAP
) -> list[float]:
    """Tick positions on the values a judge used: the most used first, each kept only if
    no kept tick is within ``gap`` of the axis (their labels would overlap); then the
    scale's ends where there is room, so the axis still shows where it starts. Sorted."""
    span = (hi - lo) or 1.0
    order = np.lexsort((values, -n))
    kept: list[float] = []
    for v in [float(values[i]) for i in order] + [float(lo), float(hi)]:
        if all(abs(v - k) >= gap * span for k in kept):
            kept.append(v)
    return sorted(kept)


def curve_extent(c: object) -> tuple[list[float], list[float]]:
    """Every x and y (percent) a curve of :mod:`calib.curves` draws: points, interval ends, the
    confidence band's edges (not the consistency band's: a reference, not data)."""
    from calib import curves as _curves

    if isinstance(c, _curves.ValuePoints):
        return list(100 * c.prob), [*(100 * c.lo), *(100 * c.hi), *(100 * c.hit_rate)]
    if isinstance(c, _curves.BinnedPoints):
        return list(100 * c.mean_prob), [*(100 * c.ci_lo), *(100 * c.ci_hi), *(100 * c.hit_rate)]
    ys = [*(100 * c.fitted), *(100 * c.confidence_lo), *(100 * c.confidence_hi)]
    return list(100 * c.prob), ys


#: A map's fitting data with more distinct stated values than this is shown in bins.
FIT_POINTS_MAX = 30
#: Equal-mass bins of the fitting data of a continuous score: at most this many ...
FIT_BINS = 15
#: ... of at least this many answers each (so that an interval says something), and at least 3.
FIT_BIN_ANSWERS = 15


def fit_bins(
    stated: np.ndarray, n: np.ndarray, hit: np.ndarray, *, bins: int | None = None, level: float = 0.95
) -> dict[str, np.ndarray]:
    """The fitting data of a continuous score in equal-mass bins, for the map's chart.

    One dot per distinct value of a continuous score sits at 0% or 100% (one answer each)
    and says nothing; ``bins`` bins of about equal counts (cut between distinct values;
    by default ``min(FIT_BINS, max(3, answers // FIT_BIN_ANSWERS))``) give a hit rate with
    its Wilson interval (:func:`calib.metrics.values.wilson_interval`).

    Returns
    -------
    dict
        ``x`` (count-weighted mean stated value), ``lo``/``hi`` (the bin's smallest and
        largest value), ``n``, ``k`` (right answers), ``rate`` (``k / n``), ``ci_lo``/``ci_hi``.
    """
    from calib.metrics.values import wilson_interval

    if bins is None:
        bins = min(FIT_BINS, max(3, int(np.sum(n)) // FIT_BIN_ANSWERS))
    order = np.argsort(stated)
    s, nn = stated[order], n[order]
    kk = nn * np.nan_to_num(hit[order])
    cuts = np.searchsorted(np.cumsum(nn), np.linspace(0, nn.sum(), bins + 1)[1:-1], side="right")
    groups = [g for g in np.split(np.arange(s.size), np.unique(cuts)) if g.size and nn[g].sum() > 0]
    out = {key: np.empty(len(groups)) for key in ("x", "lo", "hi", "n", "k")}
    for i, g in enumerate(groups):
        w = nn[g]
        out["x"][i], out["lo"][i], out["hi"][i] = float(np.dot(s[g], w) / w.sum()), s[g].min(), s[g].max()
        out["n"][i], out["k"][i] = w.sum(), float(np.round(kk[g].sum()))
    out["rate"] = out["k"] / out["n"]
    out["ci_lo"], out["ci_hi"] = wilson_interval(out["k"], out["n"], level)
    return out
