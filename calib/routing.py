"""Routing at a review threshold: who goes to a person, what is accepted unseen.

A judge's stated confidence (or a recalibrated probability) is compared with a threshold. The
rule, everywhere in calib:

- one threshold ``t``: an item with score ``< t`` goes to a person; ``>= t`` is
  accepted unseen. A threshold equal to a stated value accepts that value.
- two thresholds ``lower < upper``: ``< lower`` goes to a person, ``>= upper`` is accepted
  unseen, and ``lower <= score < upper`` is a *middle band* reported on its own (what happens to
  it is the user's policy: a second look, a cheaper check). It counts neither as reviewed nor as
  accepted; costs leave it out.

The score is the stated value (on its scale) or, given a map, the calibrated
probability of that value (in [0, 1]).

Speed
-----
:func:`basis` sorts the cells by score once and keeps cumulative counts, so a threshold is a
binary search and a few subtractions, independent of the number of rows (microseconds;
``bench/bench_models.py``). The table has one cell per distinct stated value, so the counts at
any threshold are exact: they equal :func:`review_queue`'s rows, for continuous scores too.

For intervals, :func:`basis` takes ``reps`` and draws the bootstrap
(:func:`calib.bootstrap.resample_counts`) once, of the table's coarse table
(:meth:`calib.table.CountTable.coarse`: itself up to 101 distinct values, else cells 0.001 wide
in probability), keeping cumulative counts per resample of shape ``(reps, coarse cells + 1)``;
each threshold is then one column lookup per resample and a percentile. On a coarse table the
threshold falls inside a cell whose rows the resamples count on one side: every resampled figure
is moved by exact minus coarse point figure, so the interval sits on the exact count, and the
rows of the grid cell holding the threshold (at most 0.001 wide in probability) bound what
pooling changes. A dashboard caches the basis and moves the threshold freely.
"""

from __future__ import annotations

import csv
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from calib import metrics
from calib.bootstrap import SMALL_SAMPLE, percentile_interval, resample_counts
from calib.errors import CalibError
from calib.estimates import PERCENTILE, Estimate
from calib.maps import CalibrationMap, cell_prob
from calib.rows import Judgments
from calib.scale import Scale, snap
from calib.settings import DEFAULT_LOWER_PROB, DEFAULT_UPPER_PROB
from calib.table import GRID, CountTable
from calib.thresholds import band_upper

if TYPE_CHECKING:  # pandas (and pyarrow) is imported by the calls that build a table
    import pandas as pd


def default_thresholds(scale: Scale, on: str = "stated") -> tuple[float, float]:
    """``(lower, upper)`` default thresholds: probability :data:`calib.settings.DEFAULT_LOWER_PROB` and
    :data:`~calib.settings.DEFAULT_UPPER_PROB` on the stated scale, or as they are on the calibrated
    probability (``on="calibrated"``)."""
    if on == "calibrated":
        return DEFAULT_LOWER_PROB, DEFAULT_UPPER_PROB
    return float(scale.to_stated(DEFAULT_LOWER_PROB)), float(scale.to_stated(DEFAULT_UPPER_PROB))


def threshold_refusal(cmap: CalibrationMap | None) -> str | None:
    """Why thresholds cannot be set on ``cmap``'s calibrated probability, or ``None`` when
    they can. A softmax-temperature map rescales each item's option scores, not stated
    values: there is no calibrated probability per stated value to threshold."""
    if cmap is not None and cmap.method == "softmax_temperature":
        return "a softmax temperature map rescales option scores, not stated values"
    return None


@dataclass(frozen=True, eq=False)
class Basis:
    """Cells sorted by score with cumulative counts (and, optionally, per resample).

    Attributes
    ----------
    score:
        Distinct scores, increasing (stated values, or calibrated probabilities).
    n, correct:
        Rows and right answers per score.
    cum_n, cum_k:
        ``cum_n[i]`` = rows with score below ``score[i]`` (length ``cells + 1``;
        ``cum_n[-1]`` is all rows); same for right answers.
    boot_n, boot_k:
        The same cumulative counts per bootstrap resample over the scores of the
        coarse table, shape ``(reps, coarse cells + 1)``, or ``None`` when built
        without intervals.
    boot_score, boot_cum_n, boot_cum_k:
        The coarse table's distinct scores and their cumulative counts (the point
        figures the resamples are compared with); equal to ``score``, ``cum_n`` and
        ``cum_k`` when the table is its own coarse table.
    on:
        ``"stated"`` or ``"calibrated"``.
    scale:
        The stated scale of the data.
    method:
        The map's method when ``on == "calibrated"``.
    reps, seed:
        How the bootstrap was drawn (``reps = 0``: none).
    """

    score: np.ndarray
    n: np.ndarray
    correct: np.ndarray
    cum_n: np.ndarray
    cum_k: np.ndarray
    boot_n: np.ndarray | None
    boot_k: np.ndarray | None
    on: str
    scale: Scale
    method: str | None
    reps: int
    seed: int
    boot_score: np.ndarray | None = None
    boot_cum_n: np.ndarray | None = None
    boot_cum_k: np.ndarray | None = None

    @property
    def total(self) -> int:
        return int(self.cum_n[-1])

    @property
    def total_correct(self) -> int:
        return int(self.cum_k[-1])


def basis(
    table: CountTable, *, calibration: CalibrationMap | None = None, reps: int = 0, seed: int = 0
) -> Basis:
    """Prepare a table for routing (groups pooled: one policy for every item).

    Parameters
    ----------
    table:
        The data.
    calibration:
        A map: thresholds are then on its calibrated probability. Cells it sends to
        the same probability are merged (a threshold cannot separate them).
    reps, seed:
        Bootstrap resamples drawn once for the intervals of every later threshold
        (0: no intervals), of the table's coarse table (clusters resampled whole when
        the table has them, :func:`calib.bootstrap.resample_counts`).
    """
    t = metrics.single(table)
    if calibration is not None:
        calibration.check_scale(t.scale)
        on, method = "calibrated", calibration.method
    else:
        on, method = "stated", None
    score, n, k, _inv = _scores(t, calibration)
    cum_n = np.concatenate([[0], np.cumsum(n)])
    cum_k = np.concatenate([[0], np.cumsum(k)])
    boot_n = boot_k = boot_score = boot_cum_n = boot_cum_k = None
    if reps > 0 and score.size > 0:
        c = t.coarse()
        if c is t:
            boot_score, cn, ck, inv = score, n, k, _inv
        else:
            boot_score, cn, ck, inv = _scores(c, calibration)
        boot_cum_n = np.concatenate([[0], np.cumsum(cn)])
        boot_cum_k = np.concatenate([[0], np.cumsum(ck)])
        nb, kb = resample_counts(c, reps, seed)
        order = np.argsort(inv, kind="stable")
        starts = np.flatnonzero(np.r_[True, inv[order][1:] != inv[order][:-1]])
        dtype = np.int32 if t.total < 2**31 else np.int64
        boot_n = np.zeros((reps, boot_score.size + 1), dtype=dtype)
        boot_k = np.zeros((reps, boot_score.size + 1), dtype=dtype)
        np.cumsum(np.add.reduceat(nb[:, order], starts, axis=1), axis=1, out=boot_n[:, 1:])
        np.cumsum(np.add.reduceat(kb[:, order], starts, axis=1), axis=1, out=boot_k[:, 1:])
    return Basis(score, n, k, cum_n, cum_k, boot_n, boot_k, on, t.scale, method, int(reps), int(seed),
                 boot_score, boot_cum_n, boot_cum_k)


def _scores(
    t: CountTable, calibration: CalibrationMap | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores of the cells (stated values, or calibrated probabilities),
    increasing; rows and right answers per score; each cell's score index."""
    if calibration is not None:
        raw = np.asarray(calibration.apply_prob(cell_prob(t)), dtype=np.float64)
    else:
        raw = t.value.astype(np.float64)
    score, inv = np.unique(raw, return_inverse=True)
    inv = inv.ravel()
    n = np.bincount(inv, weights=t.n, minlength=score.size).astype(np.int64)
    k = np.bincount(inv, weights=t.correct, minlength=score.size).astype(np.int64)
    return score, n, k, inv


def cell_scores(
    table: CountTable, calibration: CalibrationMap | None = None,
) -> tuple[CountTable, np.ndarray, np.ndarray]:
    """The table as :func:`basis` sees it (groups pooled), its distinct scores
    (increasing, as :attr:`Basis.score`) and each of its cells' index into them.

    For callers that need more per threshold than the basis keeps, e.g. the
    clusters' totals of the accepted items (:mod:`calib.decision`)."""
    t = metrics.single(table)
    if calibration is not None:
        calibration.check_scale(t.scale)
    score, _n, _k, inv = _scores(t, calibration)
    return t, score, inv


def _fin(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


@dataclass(frozen=True)
class Routing:
    """What a threshold does to the data.

    Attributes
    ----------
    lower, upper:
        The thresholds (``upper`` is ``None`` with one threshold).
    on:
        ``"stated"`` or ``"calibrated"``.
    total:
        Items.
    to_person, middle, accepted:
        Items below ``lower``; in ``[lower, upper)``; at or above ``upper`` (or ``lower``).
    accepted_correct:
        Right answers among the accepted.
    accuracy_accepted:
        ``accepted_correct / accepted`` (``None`` when nothing is accepted).
    errors_slipping:
        Wrong answers accepted unseen.
    errors_caught:
        Wrong answers sent to a person.
    reviewed_needlessly:
        Right answers sent to a person.
    middle_correct:
        Right answers in the middle band.
    coverage, risk:
        Share of items accepted, and share of the accepted that are wrong.
    cost_review, cost_miss, cost_total:
        Cost of one review and of one error accepted unseen, and
        ``cost_review * to_person + cost_miss * errors_slipping`` (``None`` when no
        cost was given).
    estimates:
        The figures with a bootstrap interval, by field name (``to_person``,
        ``accepted``, ``accuracy_accepted``, ``errors_slipping``, ``errors_caught``,
        ``coverage``, ``risk``, ``cost_total``), each an :class:`~calib.estimates.Estimate`
        (the field's value, its percentile interval at ``level``); empty without a
        bootstrap. The JSON's ``ci`` holds their ``[lo, hi]``.
    level:
        Interval level.
    """

    lower: float
    upper: float | None
    on: str
    total: int
    to_person: int
    middle: int
    accepted: int
    accepted_correct: int
    accuracy_accepted: float | None
    errors_slipping: int
    errors_caught: int
    reviewed_needlessly: int
    middle_correct: int
    coverage: float | None
    risk: float | None
    cost_review: float | None
    cost_miss: float | None
    cost_total: float | None
    estimates: dict[str, Estimate]
    level: float
    small_sample: bool = False  # intervals from under bootstrap.SMALL_SAMPLE items, which run narrow

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "lower": self.lower, "upper": self.upper, "on": self.on, "total": self.total,
            "to_person": self.to_person, "middle": self.middle, "accepted": self.accepted,
            "accepted_correct": self.accepted_correct, "accuracy_accepted": self.accuracy_accepted,
            "errors_slipping": self.errors_slipping, "errors_caught": self.errors_caught,
            "reviewed_needlessly": self.reviewed_needlessly, "middle_correct": self.middle_correct,
            "coverage": self.coverage, "risk": self.risk, "cost_review": self.cost_review,
            "cost_miss": self.cost_miss, "cost_total": self.cost_total, "level": self.level,
            "small_sample": self.small_sample,
        }
        out["ci"] = {k: v.to_list() for k, v in self.estimates.items()}
        return out


def check_threshold(x: float, name: str = "review") -> float:
    """A finite threshold as a float, else :class:`CalibError` naming it (``"review"``, ``"upper"``)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise CalibError(f"the {name} threshold must be a number, got {x!r}") from None
    if not math.isfinite(v):
        raise CalibError(f"the {name} threshold must be a finite number, got {x!r}")
    return v


def _cost(c: float | None, name: str) -> float | None:
    if c is None:
        return None
    v = float(c)
    if not math.isfinite(v) or v < 0:
        raise CalibError(f"the cost per {name} must be a non-negative number, got {c!r}")
    return v


def _div(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def route(
    b: Basis, lower: float, upper: float | None = None, *, cost_review: float | None = None,
    cost_miss: float | None = None, level: float = 0.95,
) -> Routing:
    """Evaluate a threshold (or a pair) on a prepared :class:`Basis`.

    Counts come from the cumulative sums: ``to_person = cum_n[i_lo]`` with
    ``i_lo`` the first score ``>= lower`` (binary search), ``accepted = N -
    cum_n[i_hi]``, exact at any threshold. The same search in the coarse scores
    indexes the per-resample cumulative counts, giving every resample's figures at
    once; each is moved by exact minus coarse point figure (0 when the table is its
    own coarse table) before the percentile intervals are taken.
    """
    lower = check_threshold(lower, "lower")
    if upper is not None:
        upper = check_threshold(upper, "upper")
        if upper < lower:
            raise CalibError(f"the upper threshold ({upper:g}) must not be below the lower one ({lower:g})")
        upper = band_upper(lower, upper)  # equal thresholds make no band: as with no upper one
    cr, cm = _cost(cost_review, "review"), _cost(cost_miss, "missed error")
    i_lo = int(np.searchsorted(b.score, lower, side="left"))
    i_hi = i_lo if upper is None else int(np.searchsorted(b.score, upper, side="left"))
    N, K = b.total, b.total_correct
    person, person_k = int(b.cum_n[i_lo]), int(b.cum_k[i_lo])
    acc_n, acc_k = N - int(b.cum_n[i_hi]), K - int(b.cum_k[i_hi])
    mid_n, mid_k = int(b.cum_n[i_hi] - b.cum_n[i_lo]), int(b.cum_k[i_hi] - b.cum_k[i_lo])
    slip = acc_n - acc_k
    caught = person - person_k
    accuracy = _div(acc_k, acc_n)
    total_cost = None
    if cr is not None or cm is not None:
        total_cost = (cr or 0.0) * person + (cm or 0.0) * slip
    ci: dict[str, tuple[float | None, float | None]] = {}
    if b.boot_n is not None and b.boot_k is not None and b.boot_score is not None:
        costs = (cr, cm) if total_cost is not None else None
        j_lo = int(np.searchsorted(b.boot_score, lower, side="left"))
        j_hi = j_lo if upper is None else int(np.searchsorted(b.boot_score, upper, side="left"))
        draws = _figures(b.boot_n, b.boot_k, j_lo, j_hi, costs)
        exact = _figures(b.cum_n[None, :], b.cum_k[None, :], i_lo, i_hi, costs)
        rough = _figures(b.boot_cum_n[None, :], b.boot_cum_k[None, :], j_lo, j_hi, costs)
        with np.errstate(invalid="ignore"):
            shift = {k: np.nan_to_num(exact[k][0] - rough[k][0]) for k in draws}
        ci = {name: _interval(x + shift[name], level) for name, x in draws.items()}
    coverage, risk = _div(acc_n, N), None if accuracy is None else 1 - accuracy
    point = {"to_person": person, "accepted": acc_n, "accuracy_accepted": accuracy, "errors_slipping": slip,
             "errors_caught": caught, "coverage": coverage, "risk": risk, "cost_total": total_cost}
    return Routing(
        lower=lower, upper=upper, on=b.on, total=N, to_person=person, middle=mid_n, accepted=acc_n,
        accepted_correct=acc_k, accuracy_accepted=accuracy, errors_slipping=slip, errors_caught=caught,
        reviewed_needlessly=person_k, middle_correct=mid_k, coverage=coverage, risk=risk, cost_review=cr,
        cost_miss=cm, cost_total=total_cost, level=level, small_sample=bool(ci) and N < SMALL_SAMPLE,
        estimates={k: Estimate.of(point[k], iv, level, PERCENTILE) for k, iv in ci.items()},
    )


def _figures(
    cn: np.ndarray, ck: np.ndarray, i_lo: int, i_hi: int, costs: tuple[float | None, float | None] | None,
) -> dict[str, np.ndarray]:
    """Routing figures per row of cumulative counts ``cn, ck`` (shape ``(reps, scores + 1)``)
    for the thresholds at score indices ``i_lo <= i_hi``."""
    tot_n, tot_k = cn[:, -1].astype(np.float64), ck[:, -1].astype(np.float64)
    p_n, p_k = cn[:, i_lo].astype(np.float64), ck[:, i_lo].astype(np.float64)
    a_n = tot_n - cn[:, i_hi]
    a_k = tot_k - ck[:, i_hi]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = {
            "to_person": p_n, "accepted": a_n, "accuracy_accepted": np.where(a_n > 0, a_k / a_n, np.nan),
            "errors_slipping": a_n - a_k, "errors_caught": p_n - p_k,
            "coverage": np.where(tot_n > 0, a_n / tot_n, np.nan),
            "risk": np.where(a_n > 0, 1 - a_k / a_n, np.nan),
        }
    if costs is not None:
        out["cost_total"] = (costs[0] or 0.0) * p_n + (costs[1] or 0.0) * (a_n - a_k)
    return out


def _interval(x: np.ndarray, level: float) -> tuple[float | None, float | None]:
    return percentile_interval(x, level)


@dataclass(frozen=True, eq=False)
class Sweep:
    """Every threshold at once: the risk-coverage curve (Geifman & El-Yaniv 2017).

    One entry per distinct score ``t`` (accept ``score >= t``), increasing, so
    ``coverage`` falls from 1 at the lowest threshold; above :data:`SWEEP_POINTS`
    distinct scores (a continuous score), one per 0.001 step of probability at or
    below a score instead (a curve to draw, not a million points), the counts exact
    at each. ``risk`` is the error rate among the accepted. The threshold above
    every score (accept nothing) is left out.

    Attributes
    ----------
    threshold, accepted, errors_slipping, to_person, errors_caught, coverage, risk:
        Per threshold.
    risk_upper:
        Top of the two-sided Wilson interval of ``risk`` at ``level`` (a one-sided
        upper bound at ``(1 + level) / 2``: 97.5% for 95%).
    cost_total:
        Per threshold, when costs were given.
    """

    threshold: np.ndarray
    accepted: np.ndarray
    errors_slipping: np.ndarray
    to_person: np.ndarray
    errors_caught: np.ndarray
    coverage: np.ndarray
    risk: np.ndarray
    risk_upper: np.ndarray
    cost_total: np.ndarray | None
    on: str
    level: float

    def columns(self) -> dict[str, np.ndarray]:
        """The sweep's columns by name, in the order of :meth:`to_frame`."""
        cols = {
            "threshold": self.threshold, "accepted": self.accepted, "errors_slipping": self.errors_slipping,
            "to_person": self.to_person, "errors_caught": self.errors_caught, "coverage": self.coverage,
            "risk": self.risk, "risk_upper": self.risk_upper,
        }
        if self.cost_total is not None:
            cols["cost_total"] = self.cost_total
        return cols

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd  # lazy: see the imports above

        return pd.DataFrame(self.columns())

    def to_dict(self) -> dict[str, Any]:
        """One record per threshold, Python numbers, NaN as ``None`` (built without
        pandas, which ``calib route --json`` would otherwise import for this alone)."""
        cols = {name: np.asarray(c).tolist() for name, c in self.columns().items()}
        rows = [dict(zip(cols, values, strict=True)) for values in zip(*cols.values(), strict=True)]
        return {"on": self.on, "level": self.level,
                "rows": [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
                         for r in rows]}


#: Distinct scores up to which :func:`sweep` has one threshold per score.
SWEEP_POINTS = 1001


def sweep_thresholds(b: Basis) -> np.ndarray:
    """The thresholds of :func:`sweep` (every distinct score, or at most one per 0.001
    of probability above :data:`SWEEP_POINTS` distinct scores), increasing."""
    return _sweep_thresholds(b)


def _sweep_thresholds(b: Basis) -> np.ndarray:
    """The scores themselves, or the 0.001 grid points in probability just at or
    below them (the first at or below the lowest score, so coverage starts at 1)."""
    if b.score.size <= SWEEP_POINTS:
        return b.score
    p = b.score if b.on == "calibrated" else np.asarray(b.scale.to_prob(b.score), dtype=np.float64)
    grid = np.unique(np.floor(np.round(p / GRID, 9))) * GRID
    thr = np.array(grid if b.on == "calibrated" else b.scale.to_stated(grid), dtype=np.float64)
    thr[0] = min(thr[0], b.score[0])  # rounding of to_stated must not leave the lowest score out
    return thr


def sweep(
    b: Basis, *, cost_review: float | None = None, cost_miss: float | None = None, level: float = 0.95
) -> Sweep:
    """The risk-coverage curve (:class:`Sweep`), counts from the cumulative sums at
    each threshold."""
    cr, cm = _cost(cost_review, "review"), _cost(cost_miss, "missed error")
    N, K = b.total, b.total_correct
    thr = _sweep_thresholds(b)
    at = np.searchsorted(b.score, thr, side="left")
    cn, ck = b.cum_n[at], b.cum_k[at]
    acc = N - cn
    acc_k = K - ck
    slip = acc - acc_k
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = acc / N if N else np.full(acc.shape, np.nan)
        risk = np.where(acc > 0, slip / np.maximum(acc, 1), np.nan)
    _, risk_hi = metrics.wilson_interval(slip, acc, level)
    cost = None
    if cr is not None or cm is not None:
        cost = (cr or 0.0) * cn + (cm or 0.0) * slip
    return Sweep(
        threshold=np.array(thr, dtype=np.float64), accepted=acc, errors_slipping=slip, to_person=cn.copy(),
        errors_caught=cn - ck, coverage=np.asarray(cov, dtype=np.float64), risk=risk,
        risk_upper=np.asarray(risk_hi, dtype=np.float64), cost_total=cost, on=b.on, level=level,
    )


@dataclass(frozen=True)
class ThresholdChoice:
    """The lowest threshold whose accepted items keep the error rate at or under a target.

    ``threshold`` is ``None`` when no threshold does; ``message`` says so in words.
    ``bound`` is ``"point"`` (the observed error rate) or ``"wilson"`` (its one-sided
    upper Wilson bound at ``level``, a conservative choice); ``risk_upper`` is that
    one-sided bound either way.
    """

    target: float
    bound: str
    threshold: float | None
    coverage: float | None
    risk: float | None
    risk_upper: float | None
    accepted: int
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "bound": self.bound, "threshold": self.threshold,
            "coverage": self.coverage, "risk": self.risk, "risk_upper": self.risk_upper,
            "accepted": self.accepted, "message": self.message,
        }


def lowest_threshold(b: Basis, target: float, *, bound: str = "point", level: float = 0.95) -> ThresholdChoice:
    """The lowest threshold ``t`` (a distinct score) with error rate among the items
    accepted (``score >= t``) at or under ``target``; the most items accepted unseen
    for that error rate. The error rate is not monotone in ``t``: a lower ``t``
    that misses the target can sit below one that meets it, and is skipped.

    With ``bound="wilson"`` the error rate compared with ``target`` is its one-sided
    upper Wilson bound at ``level`` (the top of the two-sided Wilson interval at
    ``2 level - 1``: with 95%, the error rate is below it with 95% confidence), which
    is also what :attr:`ThresholdChoice.risk_upper` and the message report. (Each
    threshold's bound holds on its own; choosing the lowest threshold that meets it
    is not corrected for having looked at many.)
    """
    if not (0 <= float(target) <= 1):
        raise CalibError(f"the target error rate must be between 0 and 1, got {target!r}")
    if bound not in ("point", "wilson"):
        raise CalibError(f"bound must be 'point' or 'wilson', got {bound!r}")
    s = sweep(b, level=level)
    # one-sided: the upper end of the two-sided interval at 2 level - 1
    upper = np.asarray(metrics.wilson_interval(s.errors_slipping, s.accepted, 2 * level - 1)[1], dtype=np.float64)
    r = s.risk if bound == "point" else upper
    ok = np.flatnonzero(np.isfinite(r) & (r <= target))
    what = "error rate" if bound == "point" else f"one-sided upper {level:.0%} Wilson bound of the error rate"
    if ok.size == 0:
        best = np.nanmin(r) if np.isfinite(r).any() else math.nan
        msg = (
            f"no threshold keeps the {what} among accepted items at or under {target:.1%}"
            + (f" (the lowest reached is {best:.1%})" if math.isfinite(best) else "")
            + "; every item would have to go to a person"
        )
        return ThresholdChoice(float(target), bound, None, None, None, None, 0, msg)
    i = int(ok[0])
    t = float(s.threshold[i])
    unit = "" if b.on == "stated" else " (calibrated probability)"
    msg = (
        f"accept items at or above {t:g}{unit}: {int(s.accepted[i])} of {b.total} "
        f"({s.coverage[i]:.1%}) accepted unseen with an error rate of {s.risk[i]:.1%} "
        f"(one-sided upper {level:.0%} bound {upper[i]:.1%})"
    )
    return ThresholdChoice(
        float(target), bound, t, _fin(float(s.coverage[i])), _fin(float(s.risk[i])),
        _fin(float(upper[i])), int(s.accepted[i]), msg,
    )


def review_queue(
    rows: Judgments, lower: float, *, calibration: CalibrationMap | None = None
) -> pd.DataFrame:
    """The items a person must review: rows with score ``< lower``.

    Columns ``line, id, stated, prob, correct, group, text``; ``prob`` is the
    calibrated probability when a map is given (and the threshold is on it), else
    the stated probability. Sorted by score (most doubtful first), then line.
    Text columns are user data: show them only through escaping elements.

    Stated values are compared after :func:`calib.scale.snap`, as the count table
    (and so :func:`route`) counts them: a softmax's 0.39999999999999997 is 0.4.
    """
    import pandas as pd  # lazy: see the imports above

    lower = check_threshold(lower, "lower")
    if calibration is not None:
        prob = calibration.apply_rows(rows).prob
        score = prob
    else:
        prob = np.asarray(rows.prob, dtype=np.float64)
        # compared as the count table counts it: 0.39999999999999997 is the cell 0.4
        score = snap(rows.stated, rows.scale)
    m = score < lower
    order = np.lexsort((np.asarray(rows.line)[m], score[m]))
    n = int(m.sum())
    df = pd.DataFrame({
        "line": np.asarray(rows.line)[m][order],
        "id": np.asarray(rows.item_id, dtype=object)[m][order] if len(rows.item_id) else np.full(n, "", dtype=object),
        "stated": np.asarray(rows.stated, dtype=np.float64)[m][order],
        "prob": prob[m][order],
        "correct": np.asarray(rows.correct, dtype=bool)[m][order],
        "group": (np.asarray(rows.group, dtype=object)[m][order] if rows.group is not None
                  else np.full(n, "", dtype=object)),
        "text": (np.asarray(rows.text, dtype=object)[m][order] if rows.text is not None
                 else np.full(n, "", dtype=object)),
    })
    return df.reset_index(drop=True)


#: Characters that make a spreadsheet run a cell as a formula (CSV injection) when they
#: come first, after any leading whitespace and once fullwidth and compatibility forms
#: (``＝ ＋ － ＠``, ``﹦``, ``⁼``) are folded by NFKC; the minus sign U+2212 (what NFKC makes
#: of ``⁻`` and ``₋``) counts as a minus. A cell that starts with a tab, CR or LF is
#: neutralised too, whatever follows (some importers drop them and then read on).
FORMULA_STARTS = ("=", "+", "-", "@", "\u2212", "\t", "\r", "\n")
_FORMULA_CHARS = frozenset("=+-@\u2212")
#: Unicode the CSV cannot carry faithfully: lone surrogates (not UTF-8) and NUL.
_UNWRITABLE = re.compile("[\ud800-\udfff\x00]")


def _skippable(ch: str) -> bool:
    """Leading characters a spreadsheet may skip before it looks for a formula:
    whitespace (any Unicode space) and invisible format characters (zero-width space,
    byte-order mark, direction marks)."""
    return ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp")


def formula_like(text: str) -> bool:
    """True when a spreadsheet could read ``text`` as a formula (see :data:`FORMULA_STARTS`)."""
    if text.startswith(("\t", "\r", "\n")):
        return True
    folded = unicodedata.normalize("NFKC", text)
    i = 0
    while i < len(folded) and _skippable(folded[i]):
        i += 1
    return i < len(folded) and folded[i] in _FORMULA_CHARS


def spreadsheet_cell(value: object) -> object:
    """A text cell made safe for a spreadsheet: unwritable characters become U+FFFD and
    a formula-like cell gets a leading apostrophe (the spreadsheet's "this is text"
    mark). Other values pass unchanged."""
    if not isinstance(value, str):
        return value
    text = _UNWRITABLE.sub("\ufffd", value)
    return "'" + text if formula_like(text) else text


def queue_to_csv(queue: pd.DataFrame) -> bytes:
    """The review queue as UTF-8 CSV bytes, safe to open in a spreadsheet.

    Ids, groups and question text are user data, and the file is meant to be opened by
    reviewers: every text cell goes through :func:`spreadsheet_cell`, and every text
    cell is quoted (``csv.QUOTE_NONNUMERIC``), so a carriage return or line feed inside
    an id stays inside its cell instead of starting a new row (Python's CSV writer
    leaves a bare CR unquoted when lines end in LF) whose first cell would escape the
    formula check. Numbers and booleans stay unquoted.
    """
    import pandas as pd  # lazy: see the imports above

    df = queue.copy()
    for c in df.columns:
        if df[c].dtype == object or pd.api.types.is_string_dtype(df[c]):
            df[c] = df[c].map(spreadsheet_cell)
    return df.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC).encode("utf-8")
