"""Several judges at the same target: one table, and a paired comparison on shared items.

Contract: :func:`compare_judges` returns a :class:`JudgeComparison` whose
``to_dict()`` has ``judges`` (per judge: ``name``, ``recommendation`` -- the keys of
:meth:`calib.decision.risk.Recommendation.to_dict` --, ``threshold``, ``accepted``,
``error_rate``, ``error_upper``, ``cheapest_threshold``, ``cheapest_cost``) and
``paired`` (per pair of judges whose rows share item ids).

Paired comparison
-----------------
Each judge keeps its own recommended threshold, fixed (``None``: accepts nothing).
On the item ids both datasets hold (non-empty ids; an id on several rows counts
all its rows), the statistic is the difference in items accepted unseen,
``A - B``, and, beside it, the difference in errors accepted. Its interval is the
paired percentile bootstrap: the shared ids are resampled with replacement
(weights ``w ~ Multinomial(S, 1/S)`` over the ``S`` shared ids, the same weights for
both judges), the statistic recomputed in each resample. One judge is "really"
better when the interval of the difference in items accepted excludes 0 (the
threshold choice itself is not resampled: this compares the two fixed policies).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from calib.bootstrap import percentile_interval
from calib.dataset import Dataset
from calib.decision.costs import costs
from calib.decision.risk import CONFIDENCE, TARGET, Recommendation, recommend
from calib.errors import CalibError
from calib.estimates import NONE, PERCENTILE, Estimate
from calib.numbers import finite_or_none
from calib.rows import Judgments
from calib.scale import snap
from calib.settings import REPS

#: Ids x resamples drawn per numpy call in the paired bootstrap.
CHUNK = 2_000_000


@dataclass(frozen=True)
class JudgeRow:
    """One judge at the target: its recommendation and its cheapest threshold."""

    name: str
    recommendation: Recommendation
    cheapest_threshold: float | None
    cheapest_cost: float | None

    def to_dict(self) -> dict[str, Any]:
        r = self.recommendation
        return {"name": self.name, "recommendation": r.to_dict(), "threshold": finite_or_none(r.threshold),
                "accepted": r.accepted, "error_rate": finite_or_none(r.error_rate),
                "error_upper": finite_or_none(r.error_upper),
                "cheapest_threshold": finite_or_none(self.cheapest_threshold),
                "cheapest_cost": finite_or_none(self.cheapest_cost)}


@dataclass(frozen=True)
class Paired:
    """Judges ``a`` and ``b`` on their shared items at their own fixed thresholds:
    ``difference`` (accepted by ``a`` minus by ``b``) and ``errors_difference`` (errors
    accepted, ``a`` minus ``b``) are :class:`~calib.estimates.Estimate` values with their
    paired percentile bootstrap intervals at ``level``."""

    a: str
    b: str
    shared: int
    accepted_a: int
    accepted_b: int
    errors_a: int
    errors_b: int
    difference: Estimate
    errors_difference: Estimate
    level: float

    @property
    def better(self) -> str | None:
        """The judge accepting more of the shared items, when the interval excludes 0."""
        lo, hi = self.difference.ci
        if lo is not None and lo > 0:
            return self.a
        if hi is not None and hi < 0:
            return self.b
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "shared": self.shared, "accepted_a": self.accepted_a,
                "accepted_b": self.accepted_b, "difference": self.difference.value,
                "difference_ci": self.difference.to_list(), "errors_a": self.errors_a, "errors_b": self.errors_b,
                "errors_difference": self.errors_difference.value,
                "errors_difference_ci": self.errors_difference.to_list(), "better": self.better,
                "level": self.level}


@dataclass(frozen=True)
class JudgeComparison:
    judges: tuple[JudgeRow, ...]
    paired: tuple[Paired, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"judges": [j.to_dict() for j in self.judges], "paired": [p.to_dict() for p in self.paired]}


def per_id(rows: Judgments, threshold: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct non-empty ids, and per id the rows accepted at ``threshold`` (stated
    values snapped as the count table counts them) and the errors among them."""
    ids = np.asarray(rows.item_id, dtype=str)
    keep = ids != ""
    uniq, inv = np.unique(ids[keep], return_inverse=True)
    acc = np.zeros(keep.sum(), dtype=bool) if threshold is None else \
        snap(rows.stated, rows.scale)[keep] >= threshold
    wrong = acc & ~np.asarray(rows.correct, dtype=bool)[keep]
    return (uniq, np.bincount(inv, weights=acc, minlength=uniq.size),
            np.bincount(inv, weights=wrong, minlength=uniq.size))


def paired(
    a: Judgments, threshold_a: float | None, b: Judgments, threshold_b: float | None, *, names: tuple[str, str] =
    ("a", "b"), reps: int = REPS, seed: int = 0, level: float = 0.95,
) -> Paired | None:
    """The paired comparison of the module docstring; ``None`` when no id is shared."""
    ia, acc_a, err_a = per_id(a, threshold_a)
    ib, acc_b, err_b = per_id(b, threshold_b)
    shared, pa, pb = np.intersect1d(ia, ib, assume_unique=True, return_indices=True)
    S = int(shared.size)
    if S == 0:
        return None
    d_acc, d_err = acc_a[pa] - acc_b[pb], err_a[pa] - err_b[pb]
    rng = np.random.default_rng(seed)
    draws = np.zeros((reps, 2))
    step = max(1, CHUNK // S)
    for start in range(0, reps, step):
        m = min(reps, start + step) - start
        w = rng.multinomial(S, np.full(S, 1.0 / S), size=m).astype(np.float64)
        draws[start:start + m] = np.column_stack([w @ d_acc, w @ d_err])
    accepted_a, accepted_b = int(acc_a[pa].sum()), int(acc_b[pb].sum())
    errors_a, errors_b = int(err_a[pa].sum()), int(err_b[pb].sum())
    at, how = (level, PERCENTILE) if reps else (None, NONE)
    return Paired(names[0], names[1], S, accepted_a, accepted_b, errors_a, errors_b,
                  Estimate.of(accepted_a - accepted_b, percentile_interval(draws[:, 0], level), at, how),
                  Estimate.of(errors_a - errors_b, percentile_interval(draws[:, 1], level), at, how), level)


def compare_judges(
    datasets: Sequence[Dataset], *, target: float = TARGET, confidence: float = CONFIDENCE,
    cost_review: float | None = None, cost_miss: float | None = None, cost_right: float | None = None,
    reps: int = REPS, seed: int = 0, level: float = 0.95,
) -> JudgeComparison:
    """Per judge the guaranteed recommendation at ``target`` (stated values) and,
    with costs, its cheapest threshold; per pair sharing ids, :func:`paired`."""
    if len(datasets) < 1:
        raise CalibError("compare needs at least one dataset")
    rows = []
    for ds in datasets:
        r = recommend(ds, target=target, confidence=confidence)
        t = c = None
        if cost_review is not None or cost_miss is not None:
            ch = costs(ds, cost_review=cost_review, cost_miss=cost_miss, cost_right=cost_right, reps=0).cheapest
            if ch is not None:
                t, c = ch.threshold, ch.cost.value
        rows.append(JudgeRow(ds.name, r, t, c))
    pairs = []
    for (i, da), (j, db) in combinations(enumerate(datasets), 2):
        if da.rows is None or db.rows is None:
            continue
        p = paired(da.rows, rows[i].recommendation.threshold, db.rows, rows[j].recommendation.threshold,
                   names=(da.name, db.name), reps=reps, seed=seed, level=level)
        if p is not None:
            pairs.append(p)
    return JudgeComparison(tuple(rows), tuple(pairs))
