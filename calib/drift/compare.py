"""Drift between two runs of the same judge: what changed, by how much, and is it real.

Contract
--------
:func:`drift` takes two runs (datasets, rows or count tables) of one judge, ``old`` and
``new``, and returns a :class:`Drift`: for accuracy, mean stated confidence, calibration
error (ECE) and the signed overconfidence (mean confidence minus accuracy), and for the
hit rate of each stated value both runs use, the value in each run, the difference
``new - old`` with a bootstrap interval and a p-value; the values that moved; whether a
review threshold still meets its target error on the new run; and one verdict.

Pairing
-------
Two runs that judged the same items are *paired*: each item's old and new judgments
are kept together, which removes the between-item variance from every comparison.
``pairing="auto"`` pairs when both runs carry item ids on every row and at least half
of the smaller run's ids are shared; only the shared items are then compared (the
others are counted in ``dropped_old`` / ``dropped_new``). The resampling *unit* is the
item (all rows with its id, in both runs); with clusters (``--cluster-key``) it is the
connected group of items sharing a cluster in either run, so that a cluster whose rows
move together in one run is resampled and sign-flipped whole (pairing by the item alone
left that dependence out: 13.5-16.7% false drift, issue 22). Unpaired runs are compared as two
independent samples; their unit is the cluster when the rows carry one
(:mod:`calib.clusters`: Inspect epochs, repeated ids, ``--cluster-key``), else the row.
A run read from a count table has no ids: its rows are rebuilt from the counts.

Intervals and tests
-------------------
Intervals are percentile bootstrap intervals of the difference (but per-value hit rates
of independent rows: the score interval, below): paired, the shared
units are drawn with replacement once per resample and both runs' sums taken over the
same draw; unpaired, each run's units are drawn independently. Tests:

- accuracy, paired, one row per item: exact McNemar (1947) (the binomial test of the
  ``b`` old-right/new-wrong items among the ``b + c`` discordant ones, ``p = 1/2``);
- accuracy, unpaired, independent rows: Fisher's exact test;
- per-value hit rates, independent rows: the Miettinen-Nurminen (1985) score test of the
  difference, and as its interval the inversion of the same test
  (:mod:`calib.drift.score`), so the interval excludes 0 exactly when ``p < alpha``
  (issue 22: a bootstrap interval beside Fisher's p-value contradicted it for small
  values; Fisher's test is conservative, the score test's exact size for 10-50 answers
  per run is 2.4-5.3% at 5%); paired too (the rows of one stated value differ between
  runs, so there are no pairs to condition on; an item stated the same value twice makes
  the two hit rates positively correlated, which makes the test conservative). With
  units of several rows: the bootstrap test
  ``p = min(1, 2 min(#{D* <= 0} + 1, #{D* >= 0} + 1) / (R + 1))`` on the resampled
  differences (it targets this value's hit rate alone, so another value's move does
  not name this one);
- mean confidence, ECE and overconfidence (and accuracy when units hold several
  rows): a permutation test of exchangeability, ``p = (1 + #{|D*| >= |D|}) / (1 + R)``
  over ``R = reps`` relabellings (Phipson & Smyth 2010): paired, each unit's old and
  new rows swapped with probability 1/2 (a sign flip); unpaired, the pooled units
  split at random into two runs of the observed sizes. Under "the judge did not
  change" the labels are exchangeable, so each p-value is valid in finite samples.

The verdict
-----------
The family is the four headline tests plus the per-value tests (values with at least
:data:`MIN_VALUE_N` answers in each run). Holm's (1979) step-down procedure at
``alpha = 1 - level`` rejects a subset; *drift* is reported when it rejects any, and a
stated value is named as moved only when its own test is rejected. Holm controls the
family-wise error rate at ``alpha`` under any dependence between the tests, so two
runs of an unchanged judge report drift at most ``alpha`` of the time;
``bench/sim_drift.py`` measures it (and the power for a planted 15-point shift).

ECE
---
The binned ECE ``sum_b |sum_{i in b} (p_i - y_i)| / N`` on bins shared by both runs:
one per stated value when the audit would choose per-value bins for both runs
(:func:`calib.metrics.choose_scheme`), else ``bins`` equal-width bins, right-closed as
in :func:`calib.metrics.width_bins`. Each run's ECE is the audit's figure for it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import sparse, stats

from calib.bootstrap import percentile_interval
from calib.dataset import Data, Dataset, table_and_rows
from calib.drift.score import holm, score_interval, score_p
from calib.drift.units import codes, paired_units
from calib.errors import CalibError
from calib.estimates import NONE, PERCENTILE, WILSON, Estimate
from calib.numbers import finite_or_none, plain
from calib.settings import BINS, DEFAULT_CONFIDENCE, DEFAULT_TARGET, DRIFT_PAIRINGS, LEVEL, REPS
from calib.table import MAX_EXACT_CELLS, CountTable

#: The headline figures, in the order of :attr:`Drift.changes`.
HEADLINE: tuple[str, ...] = ("accuracy", "mean_confidence", "ece", "overconfidence")
#: A stated value is tested only with at least this many answers in each run.
MIN_VALUE_N = 10
#: How pairing is chosen.
PAIRINGS: tuple[str, ...] = DRIFT_PAIRINGS
#: The per-value test of independent rows (its interval inverts it).
SCORE_TEST = "Miettinen-Nurminen score"
#: Resamples computed at once (memory: CHUNK x units floats).
CHUNK = 200


@dataclass(frozen=True)
class Change:
    """One headline figure in both runs, its change ``new - old`` (an
    :class:`~calib.estimates.Estimate` with its percentile bootstrap interval), and its test."""

    name: str
    old: float | None
    new: float | None
    diff: Estimate
    p: float | None
    test: str
    rejected: bool = False

    def to_dict(self) -> dict[str, Any]:
        return plain({"name": self.name, "old": self.old, "new": self.new, "diff": self.diff.value,
                      "diff_ci": self.diff.to_list(), "p": self.p, "test": self.test, "rejected": self.rejected})


@dataclass(frozen=True)
class ValueChange:
    """The hit rate of one stated value in both runs; ``moved`` when Holm rejects its test.
    ``old`` / ``new``: each run's hit rate with its Wilson interval (for the figure; not
    paired); ``diff``: ``new - old`` with its bootstrap interval (an
    :class:`~calib.estimates.Estimate` each; value ``None`` when a run has no answer there)."""

    value: float
    n_old: int
    n_new: int
    right_old: int
    right_new: int
    diff: Estimate
    p: float | None
    test: str
    moved: bool
    old: Estimate
    new: Estimate

    @property
    def tested(self) -> bool:
        return self.p is not None

    def to_dict(self) -> dict[str, Any]:
        return plain({"value": self.value, "n_old": self.n_old, "n_new": self.n_new, "old": self.old.value,
                      "new": self.new.value, "diff": self.diff.value, "diff_ci": self.diff.to_list(), "p": self.p,
                      "test": self.test, "moved": self.moved,
                      "old_ci": self.old.to_list(), "new_ci": self.new.to_list()})


@dataclass(frozen=True)
class ThresholdCheck:
    """Error among the items accepted at ``threshold`` (stated value >= it) in each run,
    with its one-sided Clopper-Pearson upper bound at ``confidence`` (on the effective
    counts, Kish's design effect, when a run's rows are clustered:
    :func:`calib.decision.risk.bound_at`); ``holds`` when the
    bound on the new run is at most ``target``. ``recommended_new`` is the threshold
    :func:`calib.decision.recommend` picks on the new run."""

    threshold: float | None
    source: str
    target: float
    confidence: float
    accepted_old: int
    errors_old: int
    upper_old: float | None
    accepted_new: int
    errors_new: int
    upper_new: float | None
    recommended_new: float | None

    @property
    def error_old(self) -> float | None:
        return self.errors_old / self.accepted_old if self.accepted_old else None

    @property
    def error_new(self) -> float | None:
        return self.errors_new / self.accepted_new if self.accepted_new else None

    @property
    def holds_old(self) -> bool | None:
        return None if self.upper_old is None else bool(self.upper_old <= self.target)

    @property
    def holds(self) -> bool | None:
        return None if self.upper_new is None else bool(self.upper_new <= self.target)

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "threshold": self.threshold, "source": self.source, "target": self.target,
            "confidence": self.confidence, "accepted_old": self.accepted_old, "errors_old": self.errors_old,
            "error_old": self.error_old, "error_upper_old": self.upper_old, "holds_old": self.holds_old,
            "accepted_new": self.accepted_new, "errors_new": self.errors_new, "error_new": self.error_new,
            "error_upper_new": self.upper_new, "holds": self.holds, "recommended_new": self.recommended_new,
        })


@dataclass(frozen=True)
class Drift:
    """What :func:`drift` returns (see the module docstring)."""

    old_name: str
    new_name: str
    paired: bool
    pairing: str
    n_old: int
    n_new: int
    dropped_old: int
    dropped_new: int
    clustered: bool
    scheme: str
    bins: int
    reps: int
    seed: int
    level: float
    changes: tuple[Change, ...]
    values: tuple[ValueChange, ...]
    threshold: ThresholdCheck | None
    drift: bool
    rule: str
    notes: tuple[str, ...] = ()
    scale: tuple[float, float] = (0.0, 1.0)
    #: Stated values used in one run only, with their answers in that run (new / old): named,
    #: not tested (a value the judge stopped using is a change in its scale; its hit rate has
    #: nothing to compare with). Empty for a continuous score (more than MAX_EXACT_CELLS values).
    appeared: tuple[tuple[float, int], ...] = ()
    disappeared: tuple[tuple[float, int], ...] = ()
    attribution: Any = None  #: :class:`calib.drift.attribution.Attribution` (or ``None``: no shared item)

    @property
    def alpha(self) -> float:
        return 1.0 - self.level

    @property
    def moved(self) -> tuple[ValueChange, ...]:
        return tuple(v for v in self.values if v.moved)

    @property
    def certified(self) -> bool | None:
        """Whether the new run certifies the threshold (its bound at most the target); ``None``
        without a threshold check. Not a test of change: an unchanged judge whose error at the
        threshold is near the target fails it often (``bench/sim_drift.py``, (d))."""
        return None if self.threshold is None else self.threshold.holds

    def change(self, name: str) -> Change:
        return next(c for c in self.changes if c.name == name)

    def to_dict(self) -> dict[str, Any]:
        """Strict JSON, schema ``"calib.drift/1"`` (keys documented in the README)."""
        return plain({
            "schema": "calib.drift/1", "old": self.old_name, "new": self.new_name, "paired": self.paired,
            "pairing": self.pairing, "n_old": self.n_old, "n_new": self.n_new, "dropped_old": self.dropped_old,
            "dropped_new": self.dropped_new, "clustered": self.clustered, "scheme": self.scheme,
            "bins": self.bins, "reps": self.reps, "seed": self.seed, "level": self.level, "alpha": self.alpha,
            "changes": {c.name: c.to_dict() for c in self.changes},
            "values": [v.to_dict() for v in self.values], "moved": [v.value for v in self.moved],
            "threshold": None if self.threshold is None else self.threshold.to_dict(),
            "drift": self.drift, "rule": self.rule, "notes": list(self.notes), "scale": list(self.scale),
            # two separate questions: did the judge change (the test above, at alpha), and does the
            # new run certify the threshold (a bound, not a test of change)
            "judge_changed": self.drift, "threshold_certified": self.certified,
            "values_appeared": [{"value": v, "n_new": n} for v, n in self.appeared],
            "values_disappeared": [{"value": v, "n_old": n} for v, n in self.disappeared],
            "attribution": None if self.attribution is None else self.attribution.to_dict(),
        })


@dataclass(frozen=True)
class _Rows:
    """One run as rows: what the comparison reads."""

    stated: np.ndarray
    prob: np.ndarray
    correct: np.ndarray
    ids: np.ndarray | None
    cluster: np.ndarray | None


def _rows_of(x: Data) -> _Rows:
    """The rows of a run; a count table's rows rebuilt from its counts (no ids)."""
    table, rows = table_and_rows(x, "a run")
    if rows is not None:
        ids = np.asarray(rows.item_id).astype(str)
        return _Rows(np.asarray(rows.stated, float), np.asarray(rows.prob, float),
                     np.asarray(rows.correct, bool), None if (ids == "").any() else ids, rows.cluster)
    n = table.n.astype(np.int64)
    start = np.repeat(np.cumsum(n) - n, n)
    right = np.arange(int(n.sum())) - start < np.repeat(table.correct, n)
    return _Rows(np.repeat(table.value, n).astype(float), np.repeat(table.prob, n).astype(float), right, None, None)


def _name(x: Data, default: str) -> str:
    return x.name if isinstance(x, Dataset) else default


def _pair(a: _Rows, b: _Rows, pairing: str, names: tuple[str, str]) -> tuple[np.ndarray | None, str]:
    """The shared ids when the runs are compared paired (else ``None``), and why."""
    if pairing not in PAIRINGS:
        raise CalibError(f"unknown pairing {pairing!r}; choose one of {', '.join(PAIRINGS)}")
    if pairing == "unpaired":
        return None, "unpaired, as asked"
    for r, nm in ((a, names[0]), (b, names[1])):
        if r.ids is None:
            if pairing == "paired":
                raise CalibError(f"--paired: {nm} has no item id on every row (pairing needs one per row; "
                                 "--id-key names the field)")
            return None, f"unpaired: {nm} has no item id on every row"
    ua, ub = np.unique(a.ids), np.unique(b.ids)
    shared = np.intersect1d(ua, ub)
    if pairing == "paired" and shared.size < 2:
        raise CalibError(f"--paired: {names[0]} and {names[1]} share {shared.size} item id(s); pairing needs "
                         "the same items in both runs (or compare them unpaired)")
    if pairing == "auto" and shared.size < max(2, 0.5 * min(ua.size, ub.size)):
        return None, f"unpaired: only {shared.size:,} of {min(ua.size, ub.size):,} item ids are shared"
    return shared, f"paired by item id: {shared.size:,} items in both runs"


def _scheme(old: Data, new: Data, scheme: str, union: int) -> str:
    """Per-value bins when the audit would choose them for both runs (and they fit), else width."""
    from calib.metrics import choose_scheme

    if scheme not in ("auto", "values", "width"):
        raise CalibError(f"drift: the ECE scheme is auto, values or width, not {scheme!r}")
    if scheme == "auto":
        both = all(choose_scheme(table_and_rows(x)[0]).scheme == "values" for x in (old, new))
        scheme = "values" if both else "width"
    if scheme == "values" and union > MAX_EXACT_CELLS:
        raise CalibError(f"drift: {union:,} distinct stated values are too many for one bin each "
                         f"(at most {MAX_EXACT_CELLS}); use width bins")
    return scheme


@dataclass(frozen=True)
class _Layout:
    """Feature columns of the unit sums: n, right, sum p, then per bin (n, right, sum p),
    then per tested value (n, right)."""

    bins: int
    values: np.ndarray

    @property
    def width(self) -> int:
        return 3 + 3 * self.bins + 2 * self.values.size


def _features(r: _Rows, bin_id: np.ndarray, lay: _Layout) -> sparse.csr_matrix:
    """One sparse row of feature sums per judged row."""
    n, B, V = r.prob.size, lay.bins, lay.values.size
    y = r.correct.astype(np.float64)
    rows = [np.arange(n)] * 6
    cols = [np.zeros(n, int), np.ones(n, int), np.full(n, 2), 3 + bin_id, 3 + B + bin_id, 3 + 2 * B + bin_id]
    data = [np.ones(n), y, r.prob, np.ones(n), y, r.prob]
    vi = np.searchsorted(lay.values, r.stated)
    ok = (vi < V) & (lay.values[np.minimum(vi, max(V - 1, 0))] == r.stated) if V else np.zeros(n, bool)
    idx = np.flatnonzero(ok)
    rows += [idx, idx]
    cols += [3 + 3 * B + vi[idx], 3 + 3 * B + V + vi[idx]]
    data += [np.ones(idx.size), y[idx]]
    return sparse.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(n, lay.width))


def _unit_sums(f: sparse.csr_matrix, unit: np.ndarray, units: int) -> sparse.csr_matrix:
    ind = sparse.csr_matrix((np.ones(unit.size), (unit, np.arange(unit.size))), shape=(units, unit.size))
    return (ind @ f).tocsr()


def _figures(s: np.ndarray, lay: _Layout) -> np.ndarray:
    """``(reps, 4 + V)``: accuracy, mean confidence, ECE, overconfidence, then per-value hit rates."""
    s = np.atleast_2d(s)
    B, V = lay.bins, lay.values.size
    with np.errstate(invalid="ignore", divide="ignore"):
        n = s[:, 0]
        acc, conf = s[:, 1] / n, s[:, 2] / n
        ece = np.abs(s[:, 3 + 2 * B:3 + 3 * B] - s[:, 3 + B:3 + 2 * B]).sum(axis=1) / n
        hit = s[:, 3 + 3 * B + V:3 + 3 * B + 2 * V] / s[:, 3 + 3 * B:3 + 3 * B + V]
    return np.column_stack([acc, conf, ece, conf - acc, hit])


def _times(w: np.ndarray, m: sparse.csr_matrix) -> np.ndarray:
    """``w @ m`` for dense ``w`` (reps, units) and sparse ``m`` (units, features)."""
    return np.asarray((m.T @ w.T).T)


def _bootstrap(mo: sparse.csr_matrix, mn: sparse.csr_matrix, paired: bool, reps: int, lay: _Layout,
               rng: np.random.Generator) -> np.ndarray:
    """``(reps, 4 + V)`` resampled differences new - old (see the module docstring)."""
    out = []
    uo, un = mo.shape[0], mn.shape[0]
    for start in range(0, reps, CHUNK):
        k = min(CHUNK, reps - start)
        wo = rng.multinomial(uo, np.full(uo, 1.0 / uo), size=k).astype(np.float64)
        wn = wo if paired else rng.multinomial(un, np.full(un, 1.0 / un), size=k).astype(np.float64)
        out.append(_figures(_times(wn, mn), lay) - _figures(_times(wo, mo), lay))
    return np.concatenate(out) if out else np.empty((0, 4 + lay.values.size))


def _permutations(mo: sparse.csr_matrix, mn: sparse.csr_matrix, paired: bool, reps: int, lay: _Layout,
                  rng: np.random.Generator) -> np.ndarray:
    """``(reps, 4 + V)`` differences under relabelling (sign flips when paired)."""
    out = []
    to, tn = np.asarray(mo.sum(axis=0)).ravel(), np.asarray(mn.sum(axis=0)).ravel()
    d = (mn - mo).tocsr() if paired else None
    both = sparse.vstack([mo, mn]).tocsr()
    uo, ua = mo.shape[0], both.shape[0]
    for start in range(0, reps, CHUNK):
        k = min(CHUNK, reps - start)
        if paired:
            moved = _times(rng.integers(0, 2, size=(k, uo)).astype(np.float64), d)
            so, sn = to + moved, tn - moved
        else:
            pick = np.argpartition(rng.random((k, ua)), uo - 1, axis=1)[:, :uo]
            ind = np.zeros((k, ua))
            np.put_along_axis(ind, pick, 1.0, axis=1)
            so = _times(ind, both)
            sn = (to + tn) - so
        out.append(_figures(sn, lay) - _figures(so, lay))
    return np.concatenate(out) if out else np.empty((0, 4 + lay.values.size))


def _perm_p(obs: np.ndarray, null: np.ndarray) -> list[float | None]:
    """Two-sided permutation p-values ``(1 + #{|D*| >= |D|}) / (1 + R)`` per column (defined draws only)."""
    out: list[float | None] = []
    for j, d in enumerate(obs):
        col = null[:, j]
        col = col[np.isfinite(col)]
        if not np.isfinite(d) or col.size == 0:
            out.append(None)
            continue
        # a relative tolerance: a relabelling that reproduces the data must count as "as extreme"
        hits = int(np.count_nonzero(np.abs(col) >= abs(d) - 1e-12 * (1 + abs(d))))
        out.append((1 + hits) / (1 + col.size))
    return out


def _boot_p(diffs: np.ndarray) -> float | None:
    """Two-sided bootstrap p-value of "no change": twice the smaller tail share at 0 (see *Intervals and tests*)."""
    d = diffs[np.isfinite(diffs)]
    if d.size == 0:
        return None
    tail = min(np.count_nonzero(d <= 0), np.count_nonzero(d >= 0)) + 1
    return min(1.0, 2 * tail / (d.size + 1))


def _fisher(k1: int, n1: int, k2: int, n2: int) -> float:
    return float(stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)


def _mcnemar(yo: np.ndarray, yn: np.ndarray) -> float:
    """Exact McNemar: binomial test of the old-right/new-wrong pairs among the discordant ones."""
    b = int(np.count_nonzero(yo & ~yn))
    c = int(np.count_nonzero(~yo & yn))
    return 1.0 if b + c == 0 else float(stats.binomtest(b, b + c, 0.5).pvalue)


def _exact_tests(ro: _Rows, rn: _Rows, uo: np.ndarray, un: np.ndarray, paired: bool, clustered: bool,
                 lay: _Layout, so: np.ndarray, sn: np.ndarray) -> dict[int, tuple[float, str]]:
    """Exact p-values where one applies, by column of :func:`_figures` (else a permutation test)."""
    if clustered:
        return {}
    if paired:  # one row per item in each run: align them by unit
        yo = np.zeros(int(uo.max()) + 1, bool)
        yn = np.zeros_like(yo)
        yo[uo], yn[un] = ro.correct, rn.correct
        out = {0: (_mcnemar(yo, yn), "exact McNemar")}
    else:
        out = {0: (_fisher(int(so[1]), int(so[0]), int(sn[1]), int(sn[0])), "Fisher exact")}
    B, V = lay.bins, lay.values.size
    for j in range(V):
        n1, n2 = int(so[3 + 3 * B + j]), int(sn[3 + 3 * B + j])
        k1, k2 = int(so[3 + 3 * B + V + j]), int(sn[3 + 3 * B + V + j])
        out[4 + j] = (score_p(k1, n1, k2, n2), SCORE_TEST) if min(n1, n2) > 0 else (None, SCORE_TEST)
    return out


def _score_intervals(so: np.ndarray, sn: np.ndarray, lay: _Layout, level: float,
                     clustered: bool) -> dict[int, tuple[float, float]]:
    """Per-value intervals that invert the per-value score test, by column (independent rows only)."""
    if clustered:
        return {}
    B, V = lay.bins, lay.values.size
    out = {}
    for j in range(V):
        n1, n2 = int(so[3 + 3 * B + j]), int(sn[3 + 3 * B + j])
        if min(n1, n2) > 0:
            out[4 + j] = score_interval(int(so[3 + 3 * B + V + j]), n1, int(sn[3 + 3 * B + V + j]), n2, level)
    return out


def _units(ro: _Rows, rn: _Rows, shared: np.ndarray | None) -> tuple[_Rows, _Rows, np.ndarray, np.ndarray, int, int]:
    """Rows kept and the unit of each row (see *Pairing*); paired units are the shared ids' positions."""
    if shared is not None:
        ko, kn = np.isin(ro.ids, shared), np.isin(rn.ids, shared)
        ro, rn = (_Rows(r.stated[k], r.prob[k], r.correct[k], r.ids[k], None if r.cluster is None else r.cluster[k])
                  for r, k in ((ro, ko), (rn, kn)))
        io, in_ = np.searchsorted(shared, ro.ids), np.searchsorted(shared, rn.ids)
        unit, units = paired_units(io, in_, ro.cluster, rn.cluster, shared.size)
        return ro, rn, unit[io], unit[in_], units, units
    uo = codes(ro.cluster) if ro.cluster is not None else np.arange(ro.prob.size)
    un = codes(rn.cluster) if rn.cluster is not None else np.arange(rn.prob.size)
    return ro, rn, uo, un, int(uo.max()) + 1, int(un.max()) + 1


def _bin_ids(r: _Rows, scheme: str, grid: np.ndarray, bins: int) -> np.ndarray:
    if scheme == "values":
        return np.searchsorted(grid, r.stated)
    # right-closed equal-width bins, the first holding 0 (calib.metrics.width_bins); the
    # tolerance keeps 0.3 * 10 = 3.0000000000000004 in the bin ending at 0.3
    return np.clip(np.ceil(r.prob * bins - 1e-9).astype(np.int64) - 1, 0, bins - 1)


def _check(reps: int, level: float, bins: int) -> None:
    if int(reps) != reps or reps < 0:
        raise CalibError(f"--reps: a whole number >= 0, got {reps!r}")
    if not 0 < level < 1:
        raise CalibError(f"--level: the level must be between 0 and 1, got {level!r}")
    if int(bins) != bins or bins < 1:
        raise CalibError(f"--bins: a positive whole number, got {bins!r}")


def drift(
    old: Data, new: Data, *, reps: int = REPS, seed: int = 0, level: float = LEVEL,
    threshold: float | None = None, target: float | None = None, confidence: float = DEFAULT_CONFIDENCE,
    pairing: str = "auto", scheme: str = "auto", bins: int = BINS, answers: Any = None, anchors: Any = None,
) -> Drift:
    """Compare two runs of one judge (see the module docstring for every definition).

    Parameters
    ----------
    old, new:
        The two runs: datasets, rows or count tables on the same stated scale.
    reps, seed:
        Bootstrap resamples and permutation relabellings (each ``reps``), and their seed;
        ``reps=0``: no bootstrap intervals (the per-value score intervals remain) and only the exact tests.
    level:
        Interval level; the verdict's family-wise ``alpha`` is ``1 - level``.
    threshold, target, confidence:
        The review threshold (stated scale) and its target error among the accepted; with
        a target and no threshold, the threshold :func:`calib.decision.recommend` picks on
        the old run. Neither: no threshold check.
    pairing:
        ``"auto"``, ``"paired"`` (refused without shared ids) or ``"unpaired"``.
    scheme, bins:
        The ECE's bins: ``"auto"``, ``"values"`` or ``"width"`` with ``bins`` bins.
    """
    _check(reps, level, bins)
    names = (_name(old, "old"), _name(new, "new"))
    to, tn = table_and_rows(old, "the old run")[0], table_and_rows(new, "the new run")[0]
    if to.scale.lo != tn.scale.lo or to.scale.hi != tn.scale.hi:
        raise CalibError(f"{names[0]} is on the {to.scale.lo:g}-{to.scale.hi:g} scale and {names[1]} on "
                         f"{tn.scale.lo:g}-{tn.scale.hi:g}: runs of one judge share a scale (--rescale LO,HI)")
    ro0, rn0 = _rows_of(old), _rows_of(new)
    if ro0.prob.size == 0 or rn0.prob.size == 0:
        raise CalibError(f"{names[0 if ro0.prob.size == 0 else 1]}: no judged rows to compare")
    shared, why = _pair(ro0, rn0, pairing, names)
    ro, rn, uo, un, nuo, nun = _units(ro0, rn0, shared)
    clustered = bool(np.bincount(uo).max() > 1 or np.bincount(un).max() > 1)
    grid = np.unique(np.concatenate([ro.stated, rn.stated]))
    scheme = _scheme(old, new, scheme, grid.size)
    nb = grid.size if scheme == "values" else int(bins)
    per_value = np.intersect1d(ro.stated, rn.stated) if grid.size <= MAX_EXACT_CELLS else np.empty(0)
    lay = _Layout(nb, per_value)
    mo = _unit_sums(_features(ro, _bin_ids(ro, scheme, grid, nb), lay), uo, nuo)
    mn = _unit_sums(_features(rn, _bin_ids(rn, scheme, grid, nb), lay), un, nun)
    so, sn = np.asarray(mo.sum(axis=0)).ravel(), np.asarray(mn.sum(axis=0)).ravel()
    fo, fn = _figures(so, lay)[0], _figures(sn, lay)[0]
    rng = np.random.default_rng(seed)
    boot = _bootstrap(mo, mn, shared is not None, reps, lay, rng)
    null = _permutations(mo, mn, shared is not None, reps, lay, rng)
    perm = _perm_p(fn - fo, null) if reps else [None] * fo.size
    exact = _exact_tests(ro, rn, uo, un, shared is not None, clustered, lay, so, sn)
    word = "sign-flip permutation" if shared is not None else "permutation"
    tests = [exact.get(j, (perm[j], word) if j < 4 else (_boot_p(boot[:, j]), "bootstrap"))
             for j in range(fo.size)]
    score_cis = _score_intervals(so, sn, lay, level, clustered)
    cis = [score_cis.get(j, percentile_interval(boot[:, j], level) if reps else (None, None)) for j in range(fo.size)]
    d = _assemble(names, why, shared is not None, (ro, rn), (ro0, rn0), clustered, scheme, nb, reps, seed,
                  level, lay, (so, sn), (fo, fn), tests, cis, _threshold(old, new, to, tn, threshold, target, confidence))
    appeared, disappeared = _one_run_only(ro.stated, rn.stated) if grid.size <= MAX_EXACT_CELLS else ((), ())
    from calib.drift.attribution import for_drift  # answers/anchors: see calib.drift.attribution.attribute
    att = for_drift(old, new, d.threshold, answers=answers, anchors=anchors, reps=reps, seed=seed, level=level)
    return replace(d, scale=(float(to.scale.lo), float(to.scale.hi)), appeared=appeared, disappeared=disappeared,
                   attribution=att)


def _one_run_only(so: np.ndarray, sn: np.ndarray) -> tuple[tuple[tuple[float, int], ...], ...]:
    """Values stated in the new run only (with their answers there), then in the old run only."""
    vo, co = np.unique(so, return_counts=True)
    vn, cn = np.unique(sn, return_counts=True)
    new_only = ~np.isin(vn, vo)
    old_only = ~np.isin(vo, vn)
    return (tuple((float(v), int(c)) for v, c in zip(vn[new_only], cn[new_only], strict=True)),
            tuple((float(v), int(c)) for v, c in zip(vo[old_only], co[old_only], strict=True)))


def _assemble(names, why, paired, kept, whole, clustered, scheme, nb, reps, seed, level, lay, sums, figs,
              tests, cis, check) -> Drift:  # noqa: ANN001 - internal: the pieces drift() computed
    """The :class:`Drift` from the pieces, with Holm's step-down over the family (see *The verdict*)."""
    (so, sn), (fo, fn) = sums, figs
    B, V = lay.bins, lay.values.size
    alpha = 1.0 - level
    family = [j for j in range(4)] + [4 + j for j in range(V)
                                      if min(so[3 + 3 * B + j], sn[3 + 3 * B + j]) >= MIN_VALUE_N]
    family = [j for j in family if tests[j][0] is not None]
    adj = dict(zip(family, holm(np.array([tests[j][0] for j in family], dtype=float)), strict=True))
    rejected = {j for j, a in adj.items() if a <= alpha}
    lv, how = (level, PERCENTILE) if reps else (None, NONE)
    changes = tuple(Change(HEADLINE[j], finite_or_none(fo[j]), finite_or_none(fn[j]),
                           Estimate.of(finite_or_none(fn[j] - fo[j]), cis[j], lv, how), finite_or_none(tests[j][0]),
                           tests[j][1], j in rejected) for j in range(4))
    values = tuple(_value_change(float(lay.values[j]), (int(so[3 + 3 * B + j]), int(sn[3 + 3 * B + j])),
                                 (int(so[3 + 3 * B + V + j]), int(sn[3 + 3 * B + V + j])), cis[4 + j],
                                 tests[4 + j] if 4 + j in adj else None, 4 + j in rejected, level, reps)
                   for j in range(V))
    rule = (f"drift when Holm's step-down over the {len(family)} tests ({min(len(family), 4)} headline, "
            f"{max(len(family) - 4, 0)} per stated value) rejects any at family-wise alpha {alpha:g}")
    notes = [f"Pairing: {why}."]
    if clustered:
        notes.append("Units hold several rows (clusters or repeated ids): intervals resample units, the headline "
                     "tests are permutation tests over units and the per-value tests bootstrap tests.")
    if V == 0:
        notes.append("No stated value is used by both runs (or the score is continuous): no per-value hit rates.")
    (ro, rn), (ro0, rn0) = kept, whole
    if paired and (ro0.cluster is not None or rn0.cluster is not None):
        notes.append("Paired with clusters: the unit is the cluster (the items that share one in either run), "
                     "resampled and swapped between the runs whole, so the tests keep their level.")
    return Drift(names[0], names[1], paired, why, int(ro.prob.size), int(rn.prob.size),
                 int(ro0.prob.size - ro.prob.size), int(rn0.prob.size - rn.prob.size), clustered, scheme, nb,
                 int(reps), int(seed), float(level), changes, values, check, bool(rejected), rule, tuple(notes))


def _value_change(value: float, n: tuple[int, int], right: tuple[int, int], ci: tuple[float | None, float | None],
                  test: tuple[float | None, str] | None, moved: bool, level: float, reps: int) -> ValueChange:
    """One stated value's :class:`ValueChange` from its counts in the old and new run,
    the bootstrap interval of the change and its test (``None``: not tested)."""
    old, new = (_wilson(right[k], n[k], level) for k in (0, 1))
    diff = None if old.value is None or new.value is None else new.value - old.value
    return ValueChange(value, n[0], n[1], right[0], right[1],
                       Estimate.of(diff, ci, level if reps else None, PERCENTILE if reps else NONE),
                       None if test is None else finite_or_none(test[0]),
                       f"not tested (fewer than {MIN_VALUE_N} answers in a run)" if test is None else test[1],
                       moved, old, new)


def _wilson(k: int, n: int, level: float) -> Estimate:
    """The hit rate ``k / n`` with its Wilson interval (value ``None`` when ``n`` is 0)."""
    from calib.metrics.values import wilson_interval

    if not n:
        return Estimate.point(None)
    lo, hi = wilson_interval(k, n, level)
    return Estimate.of(k / n, (finite_or_none(lo), finite_or_none(hi)), level, WILSON)


def _threshold(old: Data, new: Data, to: CountTable, tn: CountTable, threshold: float | None,
               target: float | None, confidence: float) -> ThresholdCheck | None:
    """The threshold check (see :class:`ThresholdCheck`); ``None`` without threshold and target."""
    from calib.decision import recommend
    from calib.decision.risk import bound_at, check_levels

    if threshold is None and target is None:
        return None
    target, confidence = check_levels(DEFAULT_TARGET if target is None else target, confidence)
    source = "given"
    if threshold is None:
        threshold = recommend(old, target=target, confidence=confidence).threshold
        source = "recommended on the old run"
    rec_new = recommend(new, target=target, confidence=confidence).threshold
    if threshold is None:
        return ThresholdCheck(None, "no threshold qualifies on the old run", target, confidence, 0, 0, None,
                              0, 0, None, finite_or_none(rec_new))
    # the Clopper-Pearson bound on each run's effective counts when its rows are clustered
    ao, eo, uo = bound_at(to, float(threshold), confidence)
    an, en, un = bound_at(tn, float(threshold), confidence)
    return ThresholdCheck(float(threshold), source, target, confidence, ao, eo, uo, an, en, un,
                          finite_or_none(rec_new))
