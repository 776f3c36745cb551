"""Bootstrap resampling of the count table, and percentile intervals for every metric.

A row-level nonparametric bootstrap draws N rows with replacement. Since a row is
fully described by its (cell, right/wrong) pair, the number of draws falling in
each of the 2C sub-cells is Multinomial(N, counts / N): drawing those counts is
the same bootstrap, exactly, at a cost that grows with the number of cells, not
rows (Efron & Tibshirani 1993, ch. 6). When rows are few for the cells (at most
:data:`ROW_DRAW_RATIO` per non-empty sub-cell, as in a subject of a few hundred MMLU
questions with as many distinct probabilities), drawing the N rows of each resample
is cheaper than the multinomial's one binomial step per sub-cell, and is done instead:
the same distribution, another random stream.

All resamples are evaluated at once: the metric kernels of :mod:`calib.metrics`
work on arrays of shape ``(reps, cells)``, so 2,000 resamples cost a few
vectorised passes, not 2,000 Python-level audits. Intervals are percentile
intervals (Efron & Tibshirani 1993, ch. 13), except the ECE's (:func:`ece_interval`).

Clustered rows (a table with :attr:`~calib.table.CountTable.clusters`) are resampled
by cluster (:func:`calib.clusters.draw`): whole items with all their epochs.

Large tables: the coarse table
------------------------------
A table of continuous confidences has as many cells as rows. Resampling uses its
coarse table (:meth:`calib.table.CountTable.coarse`, at most 1,001 cells per group
on a 0.001 grid) and every resampled figure is moved by the difference of the point
estimates, exact minus coarse, so that each interval sits around the exact point
estimate: ``theta*_i + (theta_exact - theta_coarse)``, ``theta_coarse`` being the
resampling kernel at the coarse table's own counts. The shift is 0 for the figures
a resample keeps exact (accuracy, mean confidence, Brier); the log loss of a pooled
cell is read at the mean p of its right (and of its wrong) answers, and shifted;
for the others it is what pooling changes (see :mod:`calib.table`: rows within
0.0005 of a bin edge, AUROC ties inside a cell), and the spread of the resamples is
that of the coarse figure, which differs from the exact one's by the same order.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from calib.metrics import BATCH_METRICS, CellStats, Plan, batch_metrics, point_metrics, single
from calib.settings import BINS, LEVEL, REPS
from calib.table import CountTable

#: Resamples x cells evaluated per chunk (bounds memory on pooled tables).
CHUNK_CELLS = 400_000
#: An interval is reported only when the metric is defined in this share of resamples.
MIN_DEFINED = 0.9
#: Draws kept for reuse (see :func:`resample_counts`): entries, and elements per array.
DRAW_CACHE_ENTRIES = 2
DRAW_CACHE_MAX_ELEMENTS = 4_000_000

#: Numbers drawn per numpy call (see :func:`_draw`).
DRAW_SLICE = 200_000
#: Rows drawn one by one when there are at most this many per non-empty sub-cell (on two
#: cores the two ways cost the same at 25 to 30 rows per sub-cell).
ROW_DRAW_RATIO = 16

_draw_cache: OrderedDict[tuple[bytes, int, int], tuple[np.ndarray, np.ndarray]] = OrderedDict()
_draw_lock = threading.Lock()


def resample_counts(table: CountTable, reps: int = REPS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``reps`` bootstrap resamples of the table's rows.

    The draws depend only on the cells' counts, ``reps`` and ``seed``; the audit, the
    routing intervals, the reliability bands and the comparison all ask for the same
    ones, so the last :data:`DRAW_CACHE_ENTRIES` are kept (read-only) and handed out
    again. Multinomial draws cost about 75 ns per resample and sub-cell (0.4 s for
    2,000 resamples of a 1,000-cell table).

    With clusters (``table.clusters``) whole clusters are drawn with replacement
    (:func:`calib.clusters.draw`), and the cache key includes them.

    Returns
    -------
    n, correct:
        int64 arrays of shape ``(reps, cells)``: rows and right answers per cell in
        each resample. Read-only.
    """
    counts = np.concatenate([table.correct, table.n - table.correct]).astype(np.int64)
    h = hashlib.blake2b(counts.tobytes(), digest_size=16)
    cl = table.clusters
    if cl is not None:
        for part in (cl.n, cl.k):
            for a in (part.data, part.indices, part.indptr):
                h.update(np.ascontiguousarray(a).tobytes())
    key = (h.digest(), int(reps), int(seed))
    with _draw_lock:
        hit = _draw_cache.get(key)
        if hit is not None:
            _draw_cache.move_to_end(key)
            return hit
    if cl is not None:
        from calib import clusters

        n_b, k_b = (np.array(a, dtype=np.int64) for a in clusters.draw(cl, reps, seed))
    else:
        n_b, k_b = _draw(table, reps, seed)
    n_b.flags.writeable = False
    k_b.flags.writeable = False
    if n_b.size <= DRAW_CACHE_MAX_ELEMENTS:
        with _draw_lock:
            _draw_cache[key] = (n_b, k_b)
            while len(_draw_cache) > DRAW_CACHE_ENTRIES:
                _draw_cache.popitem(last=False)
    return n_b, k_b


def _draw(table: CountTable, reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    k = table.correct
    w = table.n - k
    counts = np.concatenate([k, w]).astype(np.float64)
    total = int(counts.sum())
    if total == 0:
        z = np.zeros((reps, table.cells), dtype=np.int64)
        return z, z.copy()
    rng = np.random.default_rng(seed)
    # empty sub-cells (cells with no wrong, or no right, answer) always draw 0: the
    # multinomial over the others is the same distribution, without their binomial steps
    live = np.flatnonzero(counts)
    pvals = counts[live] / total
    # in slices of about DRAW_SLICE numbers: one numpy call holds the GIL throughout, and
    # a dashboard server's event loop must get a turn to send the page what is ready.
    # Successive slices continue one stream, so the draws equal a single call's.
    draws = np.zeros((reps, counts.size), dtype=np.int64)
    if total <= ROW_DRAW_RATIO * live.size:
        # the textbook bootstrap: N row indices per resample, counted per sub-cell
        cell = np.repeat(np.arange(live.size), counts[live].astype(np.int64))
        step = max(1, DRAW_SLICE // total)
        for start in range(0, reps, step):
            m = min(reps, start + step) - start
            pick = cell[rng.integers(0, total, size=(m, total))] + (np.arange(m) * live.size)[:, None]
            draws[start:start + m, live] = np.bincount(pick.ravel(), minlength=m * live.size).reshape(m, live.size)
    else:
        step = max(1, DRAW_SLICE // live.size)
        for start in range(0, reps, step):
            stop = min(reps, start + step)
            draws[start:stop, live] = rng.multinomial(total, pvals, size=stop - start)
    c = table.cells
    k_b = np.ascontiguousarray(draws[:, :c])  # not a view: ``draws`` is freed
    return k_b + draws[:, c:], k_b


def percentile_interval(samples: np.ndarray, level: float = LEVEL) -> tuple[float | None, float | None]:
    """The ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of the defined samples.

    ``(None, None)`` when the metric is undefined (NaN) in more than
    ``1 - MIN_DEFINED`` of the resamples (e.g. AUROC when many resamples hold one
    class only): an interval over the rest would be conditional on an accident."""
    s = np.asarray(samples, dtype=np.float64)
    ok = s[np.isfinite(s)]
    if s.size == 0 or ok.size < MIN_DEFINED * s.size:
        return None, None
    lo, hi = np.quantile(ok, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def ece_interval(
    plain: np.ndarray, debiased: np.ndarray, debiased_point: float | None, level: float = LEVEL,
) -> tuple[float | None, float | None]:
    """Interval for the population ECE, ``sum_b P(b) |E[p - y | b]|``, that covers it
    when the model is nearly calibrated.

    The plug-in ECE is biased upward by the noise of each bin's gap (it is a sum of
    absolute values), most when the true gaps are small, so its percentile interval
    lies wholly above a small true ECE (0% coverage for a 7-value judge of true ECE
    0.010 at n = 500), and the basic interval ``2 theta - q`` still covers only 84-88%.
    The two ends are therefore one-sided bounds at ``(1 + level) / 2`` each:

    - upper: the ``(1 + level)/2`` quantile of the resampled plug-in ECE (upward
      bias only makes it safer);
    - lower: the basic-bootstrap bound of the debiased ECE
      (:func:`calib.metrics.ece_debiased`, biased down),
      ``max(0, 2 theta_deb - q_{(1+level)/2}(theta*_deb))``.

    Coverage of a 95% interval, by simulation (``bench/sim_coverage.py``, 200
    datasets per design): 94-100% in every design there (7 and 41 stated values
    near-calibrated, mildly and clearly miscalibrated, continuous scores in width and
    mass bins, n from 200 to 5,000), 99-100% where the true ECE is small: the price
    is an interval about 1.1-1.5 times as wide as the percentile one. ``(None,
    None)`` when either is undefined in too many resamples."""
    q = (1 + level) / 2
    d = np.asarray(debiased, dtype=np.float64)
    s = np.asarray(plain, dtype=np.float64)
    ok_d, ok_s = d[np.isfinite(d)], s[np.isfinite(s)]
    if debiased_point is None or s.size == 0 or min(ok_d.size, ok_s.size) < MIN_DEFINED * s.size:
        return None, None
    hi = float(np.quantile(ok_s, q))
    lo = max(0.0, 2 * float(debiased_point) - float(np.quantile(ok_d, q)))
    return min(lo, hi), hi


#: Below this many answers the audit warns that its percentile intervals run narrow: with
#: 2-3 stated values at n = 30-50 a 95% percentile interval of the Brier score covered
#: 91.5-93.0% and the AUROC's 90.0-92.5%, at n = 100 94.5-97.5% (``bench/sim_coverage.py
#: --only "small n"``, 200 datasets; issue 22 measured 90.7-92.3% and 87.3%): the
#: percentile interval's coverage error is O(1/n), and a few stated values add to it.
SMALL_SAMPLE = 100


#: Metrics whose interval is :func:`ece_interval` (an interval for the population ECE).
ECE_INTERVAL = ("ece", "ece_debiased")


@dataclass(frozen=True)
class Bootstrap:
    """Bootstrap samples of every metric of :data:`calib.metrics.BATCH_METRICS`.

    ``samples[name]`` has shape ``(reps,)``, NaN in resamples where the metric is
    undefined, already moved by ``shift[name]`` (exact minus coarse point estimate,
    0 when the table was resampled as it is); ``point`` holds the exact point
    estimates."""

    reps: int
    seed: int
    level: float
    samples: dict[str, np.ndarray] = field(repr=False)
    point: dict[str, float | None] = field(default_factory=dict, repr=False)
    shift: dict[str, float] = field(default_factory=dict, repr=False)

    def ci(self, name: str) -> tuple[float | None, float | None]:
        """Interval of one metric at :attr:`level`: percentile, or :func:`ece_interval`
        for the ECE (and the debiased ECE), an interval for the population ECE."""
        if name in ECE_INTERVAL:
            return ece_interval(self.samples["ece"], self.samples["ece_debiased"], self.point.get("ece_debiased"),
                                self.level)
        return percentile_interval(self.samples[name], self.level)


def bootstrap(
    table: CountTable,
    *,
    plan: Plan | None = None,
    scheme: str = "auto",
    bins: int = BINS,
    below: float | None = None,
    reps: int = REPS,
    seed: int = 0,
    level: float = LEVEL,
    point: dict[str, float | None] | None = None,
    draws: tuple[np.ndarray, np.ndarray] | None = None,
) -> Bootstrap:
    """Resample ``table`` ``reps`` times (seeded) and evaluate every metric on each.

    Metrics are computed as in the point estimate (same bins scheme, same
    ``below`` threshold; equal-mass bins are re-cut in every resample, since the
    cut is part of the estimator). ``plan`` (of ``table``) and ``point`` (its
    :func:`calib.metrics.point_metrics`) may be passed when already computed, and so may
    ``draws``, the resamples' counts (:func:`resample_counts` of the coarse table, ``reps``,
    ``seed``: the audit draws them on its second thread). A table with more than 101
    distinct values is resampled through its coarse table, each figure moved by exact
    minus coarse point estimate (see the module docstring).
    """
    t = single(table)
    plan = plan or Plan.of(t, scheme, bins, below)
    exact = point if point is not None else point_metrics(t, plan)
    c = t.coarse()
    shift: dict[str, float] = {}
    if c is not t:
        plan = Plan.of(c, plan.scheme, plan.bins, plan.below, smooth=plan.smooth)
        # the resampling kernel at the coarse table's own counts: what a resample computes
        # (each cell's right and wrong answers at their mean p, so the log loss of a
        # pooled cell is read at its mean), against which the exact figure is the shift
        own = CellStats.resampled(c, c.n[None, :], c.correct[None, :])
        rough = {k: float(v[0]) for k, v in batch_metrics(own, plan, smooth=False).items()}
        rough["smooth_ece"] = plan.smooth.value if plan.smooth.value is not None else float("nan")
        shift = {k: exact[k] - v for k, v in rough.items() if np.isfinite(v) and exact[k] is not None}  # type: ignore[operator]
    n, k = resample_counts(c, reps, seed) if draws is None else draws
    if n.shape != (reps, c.cells):
        raise ValueError(f"draws of shape {n.shape} for {reps} resamples of {c.cells} cells")
    chunk = max(1, CHUNK_CELLS // max(c.cells, 1))
    parts: dict[str, list[np.ndarray]] = {name: [] for name in BATCH_METRICS}
    for start in range(0, reps, chunk):
        stats = CellStats.resampled(c, n[start:start + chunk], k[start:start + chunk])
        for name, values in batch_metrics(stats, plan).items():
            parts[name].append(values)
    samples = {name: (np.concatenate(v) if v else np.zeros(0)) + shift.get(name, 0.0) for name, v in parts.items()}
    return Bootstrap(reps=reps, seed=seed, level=level, samples=samples, point=exact, shift=shift)
