"""Calibration against a covariate: does the gap between outcome and stated confidence move
with a field of the rows (answer length, position, language, model version)?

The calibration residual of a row is ``r = y - p`` (outcome minus stated probability; its
mean is minus the overconfidence). :func:`covariate_calibration` reports, for the values of
a field:

- **categorical** field (text): each segment's mean residual with its cluster-robust
  interval, and the test of "calibrated in this segment": the audit's
  calibration-in-the-large test on the segment's rows
  (:func:`calib.metrics.calibration_in_the_large`: the variance calibration implies,
  ``sum p (1 - p)``, a Monte Carlo p-value where the count is far from normal, the
  cluster-robust (Rao-Scott) design effect with clusters). A t test on the empirical
  variance, tried first, flagged 10% of calibrated 500-row datasets at 5%: a segment of 40
  answers stated at 95 holds two or three wrong ones, and their sample variance runs low;
- **numeric** field: the slope of ``r`` on the field (OLS, cluster-robust standard error,
  t test of slope 0), and the same per-segment tests on :data:`QUANTILE_SEGMENTS` segments of
  equal count (ties kept together).

The intervals and the slope's test use cluster-robust standard errors (CR1, Liang & Zeger
1986, with the small-sample factor ``G/(G-1) (N-1)/(N-K)`` that Stata and statsmodels use;
Student's t with ``G - 1`` degrees of freedom): whole clusters (an item judged several
times, ``--cluster-key``) are the unit, each row its own cluster without them. The segment tests are corrected for
multiplicity by Holm's step-down method (Holm 1979): the family-wise rate of calling a
calibrated segment miscalibrated is at most ``1 - level``. A segment with fewer than
:data:`MIN_ANSWERS` answers, or fewer than :data:`MIN_CLUSTERS` clusters, is too thin to
certify: it is listed, not tested, and says so. Rows without the field are counted and left
out (a categorical field's missing rows form the segment ``(missing)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from calib.errors import CalibError
from calib.estimates import NONE, Estimate
from calib.numbers import finite_or_none, plain
from calib.rows import Judgments

if TYPE_CHECKING:
    from calib.decision.groups import PerGroup

#: Fewest answers of a segment that is tested.
MIN_ANSWERS = 30
#: Fewest clusters (rows, without clusters) of a segment that is tested.
MIN_CLUSTERS = 10
#: Segments of a numeric field (of equal count, ties together).
QUANTILE_SEGMENTS = 5
#: Most segments of a categorical field (the rest are pooled as "(other)").
MAX_SEGMENTS = 50
MISSING = "(missing)"
#: Longest segment label (a longer text value is cut; values sharing the cut share a segment).
LABEL_CHARS = 80
OTHER = "(other)"
#: :attr:`Estimate.method` of the residual's and the slope's intervals.
CR1 = "t interval, cluster-robust standard error (CR1)"


@dataclass(frozen=True)
class Segment:
    """One segment: its label, answers, clusters, accuracy, mean stated probability, mean
    residual with its interval (an :class:`~calib.estimates.Estimate`), the t test's p-value
    and its Holm-adjusted value (``None`` when too thin: ``thin``)."""

    label: str
    n: int
    clusters: int
    accuracy: float
    mean_confidence: float
    residual: Estimate
    p_value: float | None
    p_holm: float | None
    thin: bool

    def to_dict(self) -> dict[str, Any]:
        return {"segment": self.label, "n": self.n, "clusters": self.clusters, "accuracy": self.accuracy,
                "mean_confidence": self.mean_confidence, "residual": self.residual.value, "ci": self.residual.to_list(),
                "p_value": self.p_value, "p_holm": self.p_holm, "too_thin": self.thin}


@dataclass(frozen=True)
class CovariateCalibration:
    """The calibration residual against one field (see the module docstring)."""

    field: str
    kind: str
    n_used: int
    n_missing: int
    level: float
    segments: tuple[Segment, ...]
    #: the residual's slope per unit of a numeric field, with its interval (``None`` value: none)
    slope: Estimate = field(default_factory=lambda: Estimate.point(None))
    slope_p: float | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def flagged(self) -> tuple[Segment, ...]:
        """Segments miscalibrated at the level after Holm's correction."""
        return tuple(s for s in self.segments if s.p_holm is not None and s.p_holm < 1 - self.level)

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "field": self.field, "kind": self.kind, "n_used": self.n_used, "n_missing": self.n_missing,
            "level": self.level, "slope": self.slope.value, "slope_ci": self.slope.to_list(), "slope_p": self.slope_p,
            "segments": [s.to_dict() for s in self.segments], "flagged": [s.label for s in self.flagged],
            "min_answers": MIN_ANSWERS, "min_clusters": MIN_CLUSTERS, "multiplicity": "Holm",
            "notes": list(self.notes),
        })


def holm(p: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values: ``max_{j<=i} min(1, (m - j + 1) p_(j))`` in order."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def cluster_ols(x: np.ndarray, r: np.ndarray, cl: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """OLS of ``r`` on the columns of ``x`` with the CR1 cluster-robust covariance:
    ``(X'X)^-1 (sum_g X_g' e_g e_g' X_g) (X'X)^-1 G/(G-1) (N-1)/(N-K)``. Returns the
    coefficients, their covariance and ``G``."""
    n, k = x.shape
    xtx_inv = np.linalg.pinv(x.T @ x)
    beta = xtx_inv @ (x.T @ r)
    e = r - x @ beta
    _, g_idx = np.unique(cl, return_inverse=True)
    g = int(g_idx.max()) + 1 if n else 0
    scores = np.zeros((g, k))
    np.add.at(scores, g_idx.reshape(-1), x * e[:, None])
    meat = scores.T @ scores
    factor = g / (g - 1) * (n - 1) / (n - k) if g > 1 and n > k else math.inf
    return beta, xtx_inv @ meat @ xtx_inv * factor, g


def _segment(label: str, sub: Judgments, level: float, seed: int) -> Segment:
    """One segment's figures: the CR1 interval of its mean residual and the audit's
    calibration-in-the-large test on its rows (:func:`calib.metrics.calibration_in_the_large`)."""
    from calib import metrics as m
    from calib.table import from_judgments

    y = np.asarray(sub.correct, dtype=np.float64)
    p = np.asarray(sub.prob, dtype=np.float64)
    r = y - p
    cl = np.arange(len(sub)) if sub.cluster is None else np.asarray(sub.cluster)
    n = int(r.size)
    g = int(np.unique(cl).size)
    acc, conf, res = float(np.mean(y)), float(np.mean(p)), float(np.mean(r))
    if n < MIN_ANSWERS or g < MIN_CLUSTERS:
        return Segment(label, n, g, acc, conf, Estimate.point(res), None, None, True)
    _, cov, g = cluster_ols(np.ones((n, 1)), r, cl)
    se = math.sqrt(max(float(cov[0, 0]), 0.0))
    tq = float(stats.t.ppf(0.5 + level / 2, g - 1))
    pv = m.calibration_in_the_large(from_judgments(sub), seed=seed).p_value
    return Segment(label, n, g, acc, conf, Estimate(res, res - tq * se, res + tq * se, level, CR1), pv, None, False)


def _numeric(values: np.ndarray) -> np.ndarray | None:
    """The field as floats when every present value is a finite number (not a bool)."""
    present = [v for v in values if v is not None]
    if not present or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return None
    x = np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    return None if not np.all(np.isfinite(x[~np.isnan(x)])) else x


def _labels(values: np.ndarray) -> np.ndarray:
    import json

    # a label is printed and written back: at most LABEL_CHARS characters of the value
    return np.array([MISSING if v is None else (v if isinstance(v, str) else json.dumps(v, sort_keys=True))[:LABEL_CHARS]
                     for v in values], dtype=object)


def segment_labels(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Each row's segment of a categorical field: its value as text (:data:`MISSING` when
    absent), the :data:`MAX_SEGMENTS` commonest kept and the rest pooled as :data:`OTHER`;
    and the number of distinct values when some were pooled (else 0)."""
    labels = _labels(values)
    uniq, counts = np.unique(labels, return_counts=True)
    if len(uniq) <= MAX_SEGMENTS:
        return labels, 0
    keep = set(uniq[np.argsort(-counts, kind="stable")][:MAX_SEGMENTS].tolist())
    return np.array([v if v in keep else OTHER for v in labels], dtype=object), len(uniq)


def slice_thresholds(rows: Judgments, values: np.ndarray, name: str, *, target: float, confidence: float,
                     simultaneous: bool = False) -> PerGroup:
    """One certified review threshold per segment of a categorical field, by the per-group
    machinery (:func:`calib.decision.groups.per_group`: each segment's threshold certified on
    its own items by fixed-sequence Learn-then-Test; a segment too small, or whose items
    certify nothing, sends every item to a person and says why), on the stated value. The
    segments are :func:`segment_labels`' (those of :func:`covariate_calibration`)."""
    from dataclasses import replace

    from calib.decision.groups import per_group
    from calib.table import from_judgments

    if len(values) != len(rows):
        raise CalibError(f"--covariate {name}: {len(values):,} values for {len(rows):,} rows")
    if _numeric(values) is not None:
        raise CalibError(f"per-slice thresholds need a field of categories (language, model version); {name} is "
                         "numeric")
    labels, _ = segment_labels(values)
    if len(set(labels.tolist())) < 2:
        raise CalibError(f"per-slice thresholds need two segments or more; every row has the same {name}")
    table = from_judgments(replace(rows, group=np.asarray(labels, dtype=object)))
    return per_group(table, target=target, confidence=confidence, simultaneous=simultaneous)


def covariate_calibration(rows: Judgments, values: np.ndarray, name: str, *, level: float = 0.95,
                          seed: int = 0) -> CovariateCalibration:
    # long: both kinds of field, their segments and the Holm step in one place
    """The calibration residual against ``values`` (one per row: a number, a text or
    ``None`` when the row has no such field), named ``name``; see the module docstring."""
    if len(values) != len(rows):
        raise CalibError(f"--covariate {name}: {len(values):,} values for {len(rows):,} rows")
    y = np.asarray(rows.correct, dtype=np.float64)
    p = np.asarray(rows.prob, dtype=np.float64)
    r = y - p
    cl = np.arange(len(rows)) if rows.cluster is None else np.asarray(rows.cluster)
    x = _numeric(values)
    notes: list[str] = []
    slope: float | None = None
    slope_ci: tuple[float | None, float | None] = (None, None)
    slope_p: float | None = None
    if x is not None:
        kind = "numeric"
        used = ~np.isnan(x)
        xs, rs, cs = x[used], r[used], cl[used]
        if xs.size >= MIN_ANSWERS and np.unique(xs).size > 1:
            beta, cov, g = cluster_ols(np.column_stack([np.ones(xs.size), xs]), rs, cs)
            se = math.sqrt(max(float(cov[1, 1]), 0.0))
            if g > 1 and se > 0:
                tq = float(stats.t.ppf(0.5 + level / 2, g - 1))
                slope, slope_ci = float(beta[1]), (float(beta[1] - tq * se), float(beta[1] + tq * se))
                slope_p = float(2 * stats.t.sf(abs(beta[1]) / se, g - 1))
        else:
            notes.append(f"too few answers with distinct values of {name} for a slope (at least {MIN_ANSWERS})")
        # segments of equal count, cut between distinct values (ties together)
        order = np.argsort(xs, kind="stable")
        cuts = sorted({int(np.searchsorted(xs[order], xs[order][min(xs.size - 1, (i * xs.size) // QUANTILE_SEGMENTS)],
                                           side="left")) for i in range(1, QUANTILE_SEGMENTS)} - {0})
        bounds = [0, *cuts, xs.size]
        segs = []
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            if b <= a:
                continue
            idx = np.flatnonzero(used)[order[a:b]]
            lo, hi = x[idx].min(), x[idx].max()
            segs.append(_segment(f"{lo:.6g} to {hi:.6g}", rows.take(idx), level, seed + len(segs)))
        n_missing = int((~used).sum())
    else:
        kind = "categorical"
        labels, pooled = segment_labels(values)
        if pooled:
            notes.append(f"{pooled:,} distinct values of {name}: the {MAX_SEGMENTS} most common are segments, the "
                         f"rest pooled as {OTHER}")
        segs = [_segment(str(lab), rows.take(labels == lab), level, seed + i)
                for i, lab in enumerate(sorted(set(labels.tolist())))]
        n_missing = int(np.sum(labels == MISSING))
    tested = [i for i, s in enumerate(segs) if s.p_value is not None]
    adj = holm([segs[i].p_value for i in tested])  # type: ignore[misc]
    from dataclasses import replace

    for i, a in zip(tested, adj, strict=True):
        segs[i] = replace(segs[i], p_holm=a)
    thin = [s.label for s in segs if s.thin]
    if thin:
        notes.append(f"{len(thin)} segment{'s' if len(thin) != 1 else ''} too thin to certify (fewer than "
                     f"{MIN_ANSWERS} answers or {MIN_CLUSTERS} clusters): {', '.join(thin[:5])}"
                     + (" ..." if len(thin) > 5 else ""))
    if rows.cluster is not None:
        notes.append("standard errors are cluster-robust (CR1) over the rows' clusters (the unit is the cluster)")
    n_used = len(rows) - (n_missing if kind == "numeric" else 0)
    return CovariateCalibration(name, kind, int(n_used), n_missing, float(level), tuple(segs),
                                Estimate.of(finite_or_none(slope), slope_ci, level if slope is not None else None,
                                            CR1 if slope is not None else NONE),
                                finite_or_none(slope_p), tuple(notes))
