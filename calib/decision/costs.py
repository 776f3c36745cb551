"""Costs and capacity of a review threshold: the expected-cost curve, its cheapest
point and the best threshold within a reviewers' capacity.

Contract: :func:`costs` returns a :class:`CostAnalysis` whose ``to_dict()`` has
``cost_curve``, ``cheapest`` and ``capacity`` (``calib route --json``).

Definitions
-----------
At a threshold ``t`` (accept ``score >= t``, :mod:`calib.routing`), per item of the
data (``N`` items), with ``c_r`` the cost of one review of a wrong answer, ``c_ok``
that of reviewing an answer that was right anyway (``c_r`` unless given) and
``c_m`` that of one error accepted unseen:

.. math:: \\mathrm{cost}(t) = (c_r \\, \\mathrm{caught}(t) + c_{ok} \\, \\mathrm{needless}(t) + c_m \\, \\mathrm{slipped}(t)) / N

"Review everything" sends every item to a person (the threshold above every
score, ``threshold = None``); "review nothing" accepts every item (the lowest
score). The cheapest threshold is the argmin over every distinct score and "review
everything" (on a tie, the lowest threshold: the most accepted). Its bootstrap
interval is the percentile interval of the argmin over the resamples (the curve's
thresholds; ``None`` at the top end means "review everything"), and its cost's
interval (``cost_ci``) the chosen threshold's part of a band simultaneous over every
threshold compared (:func:`simultaneous_interval`), as the threshold was picked for
its low cost on the same data; ``cost_ci_pointwise`` is the pointwise percentile
interval there, which does not allow for that choice (decision-theoretic cost
curves: Elkan 2001).

Bands come from :func:`calib.routing.basis`'s resamples (clusters resampled whole
when the table has them), moved by exact minus coarse point figure as in
:func:`calib.routing.route`.

Capacity: at most ``K`` items (or a share of the items) go to a person. Among
the thresholds with ``to_person <= K``: with costs the cheapest; without costs
the highest (the most items reviewed within capacity, so the fewest errors
accepted unseen).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from calib import routing
from calib.bootstrap import percentile_interval
from calib.dataset import Data, table_and_rows
from calib.errors import CalibError
from calib.estimates import NONE, PERCENTILE, Estimate
from calib.maps import CalibrationMap
from calib.numbers import finite_or_none
from calib.settings import REPS

#: ``cost_ci_method`` of the cheapest threshold's cost interval.
SIMULTANEOUS = ("simultaneous over the {m} thresholds compared (bootstrap max-t band), so it allows for "
                "picking the cheapest")


def check_cost(c: float | None, name: str) -> float | None:
    """A cost as a float, refused unless finite and non-negative (``None`` passes)."""
    if c is None:
        return None
    try:
        v = float(c)
    except (TypeError, ValueError):
        raise CalibError(f"the cost of {name} must be a number, got {c!r}") from None
    if not math.isfinite(v) or v < 0:
        raise CalibError(f"the cost of {name} must be a non-negative number, got {c!r}")
    return v


def parse_capacity(text: str) -> tuple[int | None, float | None]:
    """``"200"`` -> ``(200, None)`` items; ``"20%"`` -> ``(None, 0.2)`` share (the CLI's
    ``--capacity K|P%``)."""
    s = str(text).strip()
    try:
        if s.endswith("%"):
            return None, float(s[:-1]) / 100
        v = float(s)
    except ValueError:
        raise CalibError(f"capacity must be a number of items or a percentage (200 or 20%), got {text!r}") from None
    if v != int(v):
        raise CalibError(f"capacity in items must be a whole number, got {text!r} (write 20% for a share)")
    return int(v), None


def capacity_items(total: int, items: int | None, share: float | None) -> int | None:
    """The capacity in items: ``items``, or ``floor(share * total)``; refused when
    negative, over ``total``, or both given."""
    if items is not None and share is not None:
        raise CalibError("give capacity as items or as a share, not both")
    if share is not None:
        if not (math.isfinite(share) and 0 <= share <= 1):
            raise CalibError(f"the capacity share must be between 0% and 100%, got {share:.4g}")
        return int(math.floor(share * total + 1e-9))
    if items is None:
        return None
    if items < 0:
        raise CalibError(f"capacity must not be negative, got {items}")
    if items > total:
        raise CalibError(f"capacity ({items:,} items) is larger than the data ({total:,} items)")
    return int(items)


@dataclass(frozen=True)
class Cheapest:
    """The cheapest threshold (``None``: review everything) and its figures; costs per item.

    ``cost`` is an :class:`~calib.estimates.Estimate` whose interval is simultaneous over
    the ``compared`` thresholds (:data:`SIMULTANEOUS`); ``cost_pointwise`` the same figure
    with the pointwise percentile interval at it alone (narrower: it ignores the choice)."""

    threshold: float | None
    cost: Estimate
    threshold_ci: tuple[float | None, float | None]
    saving_vs_review_all: float
    saving_vs_review_none: float
    cost_total: float
    to_person: int
    accepted: int
    cost_pointwise: Estimate
    compared: int = 0

    @property
    def cost_ci_method(self) -> str:
        """How ``cost``'s interval was made (the JSON's ``cost_ci_method``)."""
        return SIMULTANEOUS.format(m=self.compared)

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": finite_or_none(self.threshold), "cost": finite_or_none(self.cost.value),
            "cost_ci": [finite_or_none(x) for x in self.cost.ci],
            "cost_ci_pointwise": [finite_or_none(x) for x in self.cost_pointwise.ci],
            "cost_ci_method": self.cost_ci_method if self.compared else None,
            "threshold_ci": [finite_or_none(x) for x in self.threshold_ci],
            "saving_vs_review_all": finite_or_none(self.saving_vs_review_all),
            "saving_vs_review_none": finite_or_none(self.saving_vs_review_none),
            "cost_total": finite_or_none(self.cost_total), "to_person": self.to_person, "accepted": self.accepted,
        }


@dataclass(frozen=True)
class Capacity:
    """The best threshold within capacity (``None``: review everything fits and is best)."""

    limit: int
    threshold: float | None
    to_person: int
    accepted: int
    error_rate: float | None
    cost: float | None
    binding: bool

    def to_dict(self) -> dict[str, Any]:
        return {"limit": self.limit, "threshold": finite_or_none(self.threshold), "to_person": self.to_person,
                "accepted": self.accepted, "error_rate": finite_or_none(self.error_rate),
                "cost": finite_or_none(self.cost), "binding": self.binding}


@dataclass(frozen=True, eq=False)
class CostAnalysis:
    """The cost curve (per item, on :func:`calib.routing.sweep_thresholds`), the
    cheapest threshold and the capacity choice; ``curve_*`` are ``None`` and
    ``cheapest`` is ``None`` without costs."""

    threshold: np.ndarray
    curve_cost: np.ndarray | None
    curve_lo: np.ndarray | None
    curve_hi: np.ndarray | None
    cheapest: Cheapest | None
    capacity: Capacity | None
    review_all_cost: float | None
    total: int
    on: str
    level: float

    def to_dict(self) -> dict[str, Any]:
        curve: list[dict[str, Any]] = []
        if self.curve_cost is not None and self.curve_lo is not None and self.curve_hi is not None:
            curve = [{"threshold": float(t), "cost": finite_or_none(c), "cost_ci": [finite_or_none(lo),
                      finite_or_none(hi)]} for t, c, lo, hi in
                     zip(self.threshold, self.curve_cost, self.curve_lo, self.curve_hi, strict=True)]
        return {"cost_curve": curve, "cheapest": None if self.cheapest is None else self.cheapest.to_dict(),
                "capacity": None if self.capacity is None else self.capacity.to_dict()}


def _per_item(
    cn: np.ndarray, ck: np.ndarray, at: np.ndarray, rates: tuple[float, float, float],
) -> np.ndarray:
    """Cost per item at cumulative-count columns ``at`` (``len`` = review everything)
    for rows of cumulative counts ``cn, ck`` of shape ``(reps, scores + 1)``."""
    c_r, c_ok, c_m = rates
    tot_n, tot_k = cn[:, -1:].astype(np.float64), ck[:, -1:].astype(np.float64)
    p_n, p_k = cn[:, at].astype(np.float64), ck[:, at].astype(np.float64)
    slipped = (tot_n - p_n) - (tot_k - p_k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (c_r * (p_n - p_k) + c_ok * p_k + c_m * slipped) / tot_n


def _draws(b: routing.Basis, thr: np.ndarray, rates: tuple[float, float, float]) -> np.ndarray | None:
    """Resampled cost per item at thresholds ``thr`` (``inf``: review everything),
    shape ``(reps, len(thr))``, moved by exact minus coarse point cost."""
    if b.boot_n is None or b.boot_k is None or b.boot_score is None:
        return None
    j = np.searchsorted(b.boot_score, thr, side="left")
    i = np.searchsorted(b.score, thr, side="left")
    exact = _per_item(b.cum_n[None, :], b.cum_k[None, :], i, rates)
    rough = _per_item(b.boot_cum_n[None, :], b.boot_cum_k[None, :], j, rates)  # type: ignore[index]
    return _per_item(b.boot_n, b.boot_k, j, rates) + np.nan_to_num(exact - rough)


def _quantile_threshold(x: np.ndarray, level: float) -> tuple[float | None, float | None]:
    """Percentile interval of chosen thresholds, ends on values chosen (``inf`` -> ``None``)."""
    if x.size == 0:
        return None, None
    lo, hi = np.quantile(x, [(1 - level) / 2, (1 + level) / 2], method="inverted_cdf")
    return finite_or_none(lo), finite_or_none(hi)


def costs(
    data: Data, *, cost_review: float | None = None, cost_miss: float | None = None,
    cost_right: float | None = None, capacity: int | None = None, capacity_share: float | None = None,
    calibration: CalibrationMap | None = None, reps: int = REPS, seed: int = 0, level: float = 0.95,
) -> CostAnalysis:
    """The cost curve with a bootstrap band, the cheapest threshold with intervals
    and the savings, and the best threshold within capacity (module docstring).

    Parameters
    ----------
    cost_review, cost_miss, cost_right:
        Cost of one review, of one error accepted unseen, and of reviewing an item
        that was right anyway (default: ``cost_review``). Without ``cost_review``
        and ``cost_miss`` there is no curve and no cheapest threshold.
    capacity, capacity_share:
        At most this many items, or this share of the items, go to a person.
    reps, seed, level:
        Bootstrap resamples (0: no bands), their seed, the interval level.
    """
    c_r, c_m = check_cost(cost_review, "one review"), check_cost(cost_miss, "one missed error")
    c_ok = check_cost(cost_right, "reviewing a right answer")
    table, _rows = table_and_rows(data)
    has_cost = c_r is not None or c_m is not None
    b = routing.basis(table, calibration=calibration, reps=reps if has_cost else 0, seed=seed)
    limit = capacity_items(b.total, capacity, capacity_share)
    thr = routing.sweep_thresholds(b)
    rates = (c_r or 0.0, c_ok if c_ok is not None else (c_r or 0.0), c_m or 0.0)
    # every distinct score, then "review everything" (index = scores)
    exact = _per_item(b.cum_n[None, :], b.cum_k[None, :], np.arange(b.score.size + 1), rates)[0]
    cheapest = curve = lo = hi = None
    if has_cost and b.total > 0:
        curve = exact[np.searchsorted(b.score, thr, side="left")]
        cheapest, lo, hi = _cheapest(b, thr, exact, rates, level)
    cap = None if limit is None else _capacity(b, limit, exact if has_cost else None)
    return CostAnalysis(thr, curve, lo, hi, cheapest, cap, finite_or_none(exact[-1]) if has_cost else None,
                        b.total, b.on, level)


def cost_at(
    b: routing.Basis, threshold: float, *, cost_review: float | None = None, cost_miss: float | None = None,
    cost_right: float | None = None, level: float = 0.95,
) -> Estimate:
    """Expected cost per item at one threshold, with its percentile bootstrap interval
    from ``b``'s resamples (none without them): the cost curve's definition at a threshold
    set by hand. Value ``None`` without costs or items."""
    c_r, c_m = check_cost(cost_review, "one review"), check_cost(cost_miss, "one missed error")
    c_ok = check_cost(cost_right, "reviewing a right answer")
    if (c_r is None and c_m is None) or b.total == 0:
        return Estimate.point(None)
    rates = (c_r or 0.0, c_ok if c_ok is not None else (c_r or 0.0), c_m or 0.0)
    thr = np.asarray([float(threshold)])
    i = np.searchsorted(b.score, thr, side="left")
    exact = float(_per_item(b.cum_n[None, :], b.cum_k[None, :], i, rates)[0, 0])
    draws = _draws(b, thr, rates)
    if draws is None:
        return Estimate.point(finite_or_none(exact))
    lo, hi = np.nanquantile(draws[:, 0], [(1 - level) / 2, (1 + level) / 2])
    return Estimate(finite_or_none(exact), finite_or_none(lo), finite_or_none(hi), level, PERCENTILE)


def _cheapest(
    b: routing.Basis, thr: np.ndarray, exact: np.ndarray, rates: tuple[float, float, float], level: float,
) -> tuple[Cheapest, np.ndarray | None, np.ndarray | None]:
    """The argmin of the exact costs (lowest threshold on ties) with its intervals,
    and the curve's band."""
    i = int(np.argmin(exact))
    t = float(b.score[i]) if i < b.score.size else math.inf
    grid = np.append(thr, math.inf)
    draws = _draws(b, np.append(grid, t), rates)
    lo = hi = None
    cost_ci: tuple[float | None, float | None] = (None, None)
    t_ci: tuple[float | None, float | None] = (None, None)
    pointwise: tuple[float | None, float | None] = (None, None)
    if draws is not None:
        band = np.array([percentile_interval(draws[:, j], level) for j in range(thr.size)], dtype=float)
        lo, hi = band[:, 0], band[:, 1]
        pointwise = percentile_interval(draws[:, -1], level)
        at = np.append(exact[np.searchsorted(b.score, grid, side="left")], exact[i])
        cost_ci = simultaneous_interval(draws, at, level)
        t_ci = _quantile_threshold(grid[np.argmin(draws[:, :-1], axis=1)], level)
    n_person = int(b.cum_n[i])
    compared = int(grid.size) if draws is not None else 0
    lv, how = (level, PERCENTILE) if draws is not None else (None, NONE)
    cost = float(exact[i])
    cheap = Cheapest(
        None if i == b.score.size else t,
        Estimate.of(cost, cost_ci, lv, SIMULTANEOUS.format(m=compared) if compared else NONE), t_ci,
        float(exact[-1] - exact[i]), float(exact[0] - exact[i]), float(exact[i] * b.total), n_person,
        b.total - n_person, Estimate.of(cost, pointwise, lv, how), compared,
    )
    return cheap, lo, hi


def simultaneous_interval(draws: np.ndarray, exact: np.ndarray, level: float) -> tuple[float | None, float | None]:
    """The interval of the last column's cost from a simultaneous band over every column.

    Bootstrap max-t (Romano & Wolf 2005): ``T = max_j |draw_j - exact_j| / sd_j`` per
    resample, ``q`` its ``level`` quantile, the band ``exact_j +- q sd_j`` (columns with
    no spread are exact and left out of the max). The band covers every threshold's cost
    at once, so the one picked as cheapest on the same data keeps its coverage (a
    pointwise interval there missed it in 14% of datasets at n = 300: the winner's curse
    of the minimum, issue 22). Costs are never negative: the lower end is cut at 0."""
    sd = np.nanstd(draws, axis=0)
    live = np.isfinite(sd) & (sd > 1e-12 * np.maximum(1.0, np.abs(exact)))
    if not live[-1]:
        x = float(exact[-1])
        return finite_or_none(x), finite_or_none(x)
    with np.errstate(invalid="ignore"):
        t = np.nanmax(np.abs(draws[:, live] - exact[live]) / sd[live], axis=1)
    q = float(np.quantile(t[np.isfinite(t)], level))
    x, s = float(exact[-1]), float(sd[-1])
    return finite_or_none(max(0.0, x - q * s)), finite_or_none(x + q * s)


def _capacity(b: routing.Basis, limit: int, exact: np.ndarray | None) -> Capacity:
    """The best threshold with at most ``limit`` items to a person (module docstring)."""
    ok = np.flatnonzero(b.cum_n <= limit)  # column i: rows below score i go to a person
    i = int(ok[np.argmin(exact[ok])]) if exact is not None else int(ok[-1])
    acc = b.total - int(b.cum_n[i])
    err = acc - (b.total_correct - int(b.cum_k[i]))
    best = int(np.argmin(exact)) if exact is not None else b.score.size
    return Capacity(
        limit, float(b.score[i]) if i < b.score.size else None, int(b.cum_n[i]), acc,
        err / acc if acc else None, None if exact is None else float(exact[i]), binding=i != best,
    )
