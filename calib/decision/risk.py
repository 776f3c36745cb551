"""A recommended review threshold with a finite-sample guarantee (risk control).

Contract: :func:`recommend` returns the threshold that accepts the most items unseen
while, with probability at least ``1 - delta`` over the data, the error rate among
the items accepted unseen is at most ``alpha`` -- or says that none qualifies and
what would. ``recommend(..., guarantee=False)`` is the point-estimate search of
:func:`calib.routing.lowest_threshold`, labelled as having no guarantee.

The procedure (Learn-then-Test: Angelopoulos, Bates, Candes, Jordan & Lei 2021;
Bates, Angelopoulos, Lei, Malik & Jordan 2021, distribution-free risk control)
--------------------------------------------------------------------------------
Candidate thresholds are the distinct scores (stated values, or calibrated
probabilities), an item being accepted when its score is at or above the threshold
(:mod:`calib.routing`); a score with more than :data:`GRID_ABOVE` distinct values
(a continuous score) is tested on the grid of its :data:`GRID_POINTS` quantiles
instead, fixed from the scores alone (:func:`candidates`: from the first accepting
enough items for half the target's error to pass; ``candidates`` says which). For each, the null hypothesis ``H0(t): risk(t) > alpha``
has the exact binomial (Clopper-Pearson) tail p-value

.. math:: p(t) = P(\\mathrm{Bin}(n_{acc}(t), \\alpha) \\le e(t)) = I_{1-\\alpha}(n_{acc} - e, e + 1)

(``e`` the errors among the ``n_acc`` accepted; the regularised incomplete beta
function ``I`` extends it to non-integer counts). Thresholds are
tested strictest (highest) first at level ``delta``; the sequence continues while
hypotheses are rejected and stops at the first failure; the recommendation is the
last (lowest) rejected threshold. Testing in a fixed order, each at the full level,
controls the family-wise error at ``delta`` (fixed-sequence testing), so the
threshold chosen on the data keeps its guarantee.

A threshold accepting so few items that even with no error its p-value
``(1 - alpha)^n`` exceeds ``delta`` (fewer than :func:`min_items`, 59 at
``alpha = delta = 0.05``) can never be rejected; the strictest thresholds of a
continuous score accept one item each, and a literal reading would stop there
on every continuous score. The sequence therefore starts at the strictest threshold
that could be rejected. Passing over hypotheses that cannot be rejected rejects
nothing. Where the sequence starts then depends on the data, but for independent items
only on the scores (how many items sit at or above each threshold), not on which
answers are right: the start never looks at the outcomes being tested (the textbook
order is fixed before any data is seen, so this is a departure, if a mild one); with
clusters, on the items accepted (not their outcomes either).
``bench/sim_threshold.py``
checks by simulation that the share of datasets whose population error at the
recommended threshold exceeds ``alpha`` stays at or under ``delta`` in every shape
there, clustered with informative sizes included.

Clusters
--------
The binomial assumes independent items. When rows are clustered (Inspect epochs,
repeated ids: :mod:`calib.clusters`) the unit is the item, and the population error
is defined per item: the share of an item's accepted answers that are wrong,
averaged over the items with an accepted answer (with one answer per item, the
error per answer). Each threshold is tested on the items it accepts, one accepted
answer per item drawn at random (seeded): the drawn errors are exactly binomial
whatever the items' sizes and correlation (:func:`per_item`). The Kish design effect
on rows used before failed when hard items are retried more often (informative
sizes: the error per answer then exceeds the error per item, and the effective
sample size misses it). ``error_rate`` is the error per item; ``design_effect`` the
accepted answers per accepted item.

A map fitted on the same rows
-----------------------------
``fit="platt"`` (any of :data:`calib.maps.METHODS`) fits the map on the 1st, 3rd,
5th... rows in file order and certifies the threshold on the 2nd, 4th... (a count
table without rows: each cell split in two at random, as :func:`calib.maps.fit`
does; clustered rows: the items split in two at random, an item's repeats on one
side, :func:`calib.maps.item_folds`); ``certified_on`` says which. A map given as ``calibration`` is taken as
fitted on other data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import special

from calib import routing
from calib.dataset import Data, table_and_rows
from calib.errors import CalibError
from calib.maps import METHODS, CalibrationMap, fit_map, item_folds, row_order_halves, split_counts
from calib.numbers import finite_or_none
from calib.settings import DEFAULT_CONFIDENCE, DEFAULT_TARGET, FALLBACK, FIXED_SEQUENCE, PROCEDURES
from calib.table import CountTable, from_judgments
from calib.wording import short_pct, threshold_text

#: ``method`` of a guaranteed recommendation.
GUARANTEED = "fixed-sequence Clopper-Pearson (Learn-then-Test)"
#: ``method`` of the point-estimate search.
POINT = "point estimate (no guarantee)"
#: Appended to ``method`` when the items are clustered.
CLUSTERED = (", clustered items each counted once (error per item; one accepted answer per item drawn at "
             "random)")
#: A score with more distinct values than this is certified on a grid (issue 22).
GRID_ABOVE = 101
#: Points of that grid: the scores accepting 1/GRID_POINTS, 2/GRID_POINTS, ... of the items.
GRID_POINTS = 100
#: Most thresholds the fallback procedure tests (its level is shared among them).
FALLBACK_POINTS = 10
#: ``method`` of a fallback recommendation.
FALLBACK_METHOD = "fallback procedure (Wiens 2003) over {m} thresholds, Clopper-Pearson (Learn-then-Test)"
#: Thresholds :func:`items_needed` compares, at most.
HINT_POINTS = 2001
#: Default target error among the accepted, and default confidence (calib.settings).
TARGET = DEFAULT_TARGET
CONFIDENCE = DEFAULT_CONFIDENCE



def check_levels(target: float, confidence: float) -> tuple[float, float]:
    """``(alpha, 1 - delta)`` as floats, refused unless both lie strictly in (0, 1)."""
    for name, v in (("target error rate", target), ("confidence", confidence)):
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise CalibError(f"the {name} must be a number, got {v!r}") from None
        if not (0 < x < 1):
            raise CalibError(f"the {name} must be strictly between 0 and 1, got {v!r}")
    return float(target), float(confidence)


def min_items(target: float, confidence: float) -> int:
    """Fewest accepted items that can certify ``target`` at ``confidence``: the
    smallest ``n`` with ``(1 - alpha)^n <= delta`` (no error among them)."""
    return int(math.ceil(math.log(1 - confidence) / math.log1p(-target) - 1e-12))


def tail_pvalue(errors: np.ndarray, n: np.ndarray, target: float) -> np.ndarray:
    """``P(Bin(n, alpha) <= e)`` (the Clopper-Pearson p-value of ``risk > alpha``),
    as ``I_{1-alpha}(n - e, e + 1)`` for real counts; 1 where ``e >= n`` or ``n = 0``."""
    e = np.asarray(errors, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    ok = (n > 0) & (e < n)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = special.betainc(np.where(ok, n - e, 1.0), e + 1.0, 1.0 - target)
    return np.where(ok, p, 1.0)


def cp_upper(errors: np.ndarray | float, n: np.ndarray | float, confidence: float) -> np.ndarray:
    """One-sided Clopper-Pearson (1934) upper bound at ``confidence`` of an error rate:
    the ``confidence`` quantile of Beta(e + 1, n - e); 1 when ``e >= n``, NaN when ``n = 0``.
    (``special.betaincinv`` is what ``scipy.stats.beta.ppf`` computes, bit for bit, without
    importing ``scipy.stats``: half a second of a fresh server's first page.)"""
    e = np.asarray(errors, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    ok = (n > 0) & (e < n)
    with np.errstate(invalid="ignore", divide="ignore"):
        hi = special.betaincinv(e + 1.0, np.where(ok, n - e, 1.0), confidence)
    return np.where(n > 0, np.where(ok, hi, 1.0), np.nan)


@dataclass(frozen=True, eq=False)
class Counts:
    """Per candidate threshold (the distinct scores, increasing): rows accepted
    (``score >= threshold``), errors among them, and the rows per unit tested (1
    without clusters). ``on`` is ``"stated"`` or ``"calibrated"``.

    With clusters the unit is the item (:func:`per_item`): ``accepted / deff`` items
    accepted, ``drawn`` errors among one accepted answer per item drawn at random, and
    ``item_error`` the sum over those items of the share of their accepted answers wrong."""

    score: np.ndarray
    accepted: np.ndarray
    errors: np.ndarray
    deff: np.ndarray
    total: int
    on: str
    clustered: bool
    drawn: np.ndarray | None = None
    item_error: np.ndarray | None = None
    units: np.ndarray | None = None

    @property
    def n_eff(self) -> np.ndarray:
        return self.accepted / self.deff if self.units is None else self.units

    @property
    def e_eff(self) -> np.ndarray:
        return self.errors / self.deff if self.drawn is None else self.drawn

    def rate(self, i: int) -> float:
        """The error rate at index ``i`` as certified: per row, or per item with clusters."""
        if self.item_error is None:
            return float(self.errors[i] / self.accepted[i])
        return float(self.item_error[i] / self.n_eff[i])

    def take(self, at: np.ndarray) -> Counts:
        """The counts at the candidate thresholds ``at`` (indices, increasing) only."""
        return Counts(self.score[at], self.accepted[at], self.errors[at], self.deff[at], self.total, self.on,
                      self.clustered, None if self.drawn is None else self.drawn[at],
                      None if self.item_error is None else self.item_error[at],
                      None if self.units is None else self.units[at])


def counts(table: CountTable, calibration: CalibrationMap | None = None, seed: int = 0) -> Counts:
    """Accepted rows and errors at every distinct score, from the count table's
    cumulative sums (:func:`calib.routing.basis`); with clusters, per item
    (:func:`per_item`, its random draw seeded by ``seed``)."""
    b = routing.basis(table, calibration=calibration)
    acc = (b.total - b.cum_n[:-1]).astype(np.float64)
    err = acc - (b.total_correct - b.cum_k[:-1])
    t, score, inv = routing.cell_scores(table, calibration)
    if t.clusters is None or not score.size:
        return Counts(b.score, acc, err, np.ones(score.size), b.total, b.on, t.clusters is not None)
    units, drawn, item_error = per_item(t.clusters.merge_cells(inv, score.size), score.size, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        deff = np.where(units > 0, acc / np.maximum(units, 1), 1.0)
    return Counts(b.score, acc, err, deff, b.total, b.on, True, drawn, item_error, units)


def per_item(clusters: Any, scores: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per threshold index: items (clusters) with an accepted row, the errors of one
    accepted answer per item drawn at random, and the sum of the items' error shares.

    The population error with clustered rows is defined per item: the share of an
    item's accepted answers that are wrong, ``r_g``, averaged over the items with an
    accepted answer. Item ``g`` draws ``U_g ~ Uniform(0, 1)`` once (seeded) and counts as
    wrong at a threshold when ``U_g < r_g``: a Bernoulli(``r_g``) draw, so over independent
    items the drawn errors are Binomial(items, population error) and the Clopper-Pearson
    test is exact whatever the items' sizes and correlation. The design-effect (Kish)
    test on rows it replaces failed when hard items are retried more often (informative
    sizes, issue 22: P(error <= 5%) = 84.5% at 90% confidence)."""
    coo = clusters.n.tocoo()
    g, s, n = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data.astype(np.float64)
    k = np.asarray(clusters.k[g, s], dtype=np.float64).ravel() if g.size else np.zeros(0)
    order = np.lexsort((-s, g))  # within an item, strictest score first
    g, s, n, e = g[order], s[order], n[order], (n - k)[order]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (_grouped_before(g, e) + e) / (_grouped_before(g, n) + n)  # the item's share wrong from here up
    r = np.nan_to_num(r)
    first = np.r_[True, g[1:] != g[:-1]] if g.size else np.zeros(0, dtype=bool)
    w = (np.random.default_rng(seed).random(clusters.n.shape[0])[g] < r).astype(np.float64)

    def change(x: np.ndarray) -> np.ndarray:  # each entry's change to its item's value
        return x - np.where(first, 0.0, np.r_[0.0, x[:-1]])

    def tail(x: np.ndarray) -> np.ndarray:  # summed over the scores at or above each index
        return np.cumsum(np.bincount(s, weights=x, minlength=scores)[::-1])[::-1]

    return tail(first.astype(np.float64)), tail(change(w)), tail(change(r))


def _grouped_before(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per entry, the sum of ``x`` over the earlier entries of its group (``g`` sorted)."""
    cs = np.cumsum(x)
    first = np.r_[True, g[1:] != g[:-1]]
    base = (cs - x)[first]
    return cs - x - base[np.cumsum(first) - 1]


def grid_start(target: float, confidence: float) -> int:
    """Fewest items at which a threshold whose error rate is half the target could be
    certified: the smallest ``n`` with Clopper-Pearson bound of ``n alpha / 2`` errors in
    ``n`` at most ``alpha`` (223 at ``alpha = delta = 5%``)."""
    def ok(n: float) -> bool:
        return float(cp_upper(n * target / 2, n, confidence)) <= target

    hi = 1
    while not ok(hi) and hi < 2**40:
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def candidates(c: Counts, target: float, confidence: float) -> tuple[np.ndarray, str]:
    """Indices (into ``c.score``, increasing) of the candidate thresholds and what they
    are, in words.

    Every distinct score when there are at most :data:`GRID_ABOVE`; else the
    :data:`GRID_POINTS` quantiles of the items' scores: for ``j = 1..GRID_POINTS`` the
    highest score accepting at least ``ceil(j N / GRID_POINTS)`` rows, from the first
    accepting :func:`grid_start` items (units) on. The grid is fixed by the scores, the
    target and the confidence alone (no outcome), so the fixed-sequence guarantee is
    untouched. On a continuous score every value accepts one item more than the last, and
    a sequence over all of them stops among the first few items, which must be almost
    all right (issue 22: no threshold in 37% of datasets of 20,000 items); the grid starts
    where a threshold with half the target's error can pass."""
    k = int(c.score.size)
    if k <= GRID_ABOVE:
        return np.arange(k), f"every distinct score ({k:,})"
    want = np.ceil(np.arange(1, GRID_POINTS + 1) * c.total / GRID_POINTS)
    at = np.unique(np.searchsorted(-c.accepted, -want, side="right") - 1)  # last index accepting >= want
    at = at[at >= 0]
    start = grid_start(target, confidence)
    big = at[c.n_eff[at] >= start - 1e-9]
    at = big if big.size else at
    return at, (f"{GRID_POINTS} score quantiles fixed without outcomes, from the first accepting {start:,} items "
                f"(the scores take {k:,} distinct values)")


def fixed_sequence(c: Counts, target: float, confidence: float) -> int | None:
    """Index (into ``c.score``) of the fixed-sequence recommendation, or ``None``.

    Starts at the strictest threshold whose p-value with no error could reach
    ``delta``, rejects while ``p <= delta``, stops at the first failure."""
    delta = 1 - confidence
    testable = np.flatnonzero(c.n_eff * math.log1p(-target) <= math.log(delta) + 1e-12)
    if testable.size == 0:
        return None
    start = int(testable[-1])
    p = tail_pvalue(c.e_eff[: start + 1], c.n_eff[: start + 1], target)[::-1]
    fail = np.flatnonzero(p > delta)
    run = int(fail[0]) if fail.size else start + 1
    return None if run == 0 else start - run + 1


def fallback_candidates(c: Counts, target: float, confidence: float) -> np.ndarray:
    """Indices (into ``c.score``, increasing) the fallback procedure tests: the candidates
    that could be rejected at ``delta`` (enough items even with no error), at most
    :data:`FALLBACK_POINTS` of them, evenly spaced from the strictest down (no outcome used
    without clusters)."""
    ok = np.flatnonzero(c.n_eff * math.log1p(-target) <= math.log(1 - confidence) + 1e-12)[::-1]
    if ok.size > FALLBACK_POINTS:
        ok = ok[np.unique(np.round(np.linspace(0, ok.size - 1, FALLBACK_POINTS)).astype(np.int64))]
    return np.sort(ok)


def fallback(c: Counts, target: float, confidence: float) -> int | None:
    """Index (into ``c.score``) of the fallback procedure's recommendation, or ``None``.

    Wiens (2003); Wiens & Dmitrienko (2005): the ``m`` thresholds of
    :func:`fallback_candidates` are tested strictest first, each with its own share
    ``delta / m`` of the level plus the level of the one before when that one was
    rejected; a failure does not stop the walk. The family-wise error is at most ``delta``
    for any error curve, so a judge whose top value is worse than the next (the fixed
    sequence stops at the top) still gets the lower threshold. The recommendation is the
    lowest threshold rejected: every rejected one holds its guarantee at once."""
    at = fallback_candidates(c, target, confidence)[::-1]
    if at.size == 0:
        return None
    p = tail_pvalue(c.e_eff[at], c.n_eff[at], target)
    share, carry, best = (1 - confidence) / at.size, 0.0, None
    for i, pi in zip(at, p, strict=True):
        level = share + carry
        if pi <= level:
            best, carry = int(i), level
        else:
            carry = 0.0
    return best


@dataclass(frozen=True)
class Recommendation:
    """A recommended threshold and what it does.

    ``threshold`` is ``None`` when none qualifies (every item to a person).
    ``error_upper`` is the one-sided Clopper-Pearson bound at ``confidence`` of the
    error among the accepted (with clusters: the error per item, on one answer drawn per
    item; ``error_rate`` is then the error per item). ``design_effect`` (with clusters:
    accepted answers per accepted item),
    ``loosest_target`` (the strictest target that would qualify now) and
    ``items_needed`` (items in all that would certify ``target`` at the error rate
    seen) are extras outside :meth:`to_dict`'s keys (see :meth:`details`).
    ``candidates`` says which thresholds were tested (every distinct score, or a grid of
    score quantiles: :func:`candidates`) and ``procedure`` how (``"fixed-sequence"``,
    ``"fallback"``, or ``"point estimate"``).
    """

    threshold: float | None
    accepted: int
    to_person: int
    total: int
    error_rate: float | None
    error_upper: float | None
    target: float
    confidence: float
    method: str
    certified_on: str
    holds: bool
    message: str
    on: str = "stated"
    design_effect: float | None = None
    loosest_target: float | None = None
    items_needed: int | None = None
    calibration: CalibrationMap | None = None
    candidates: str = ""
    procedure: str = FIXED_SEQUENCE

    @property
    def coverage(self) -> float | None:
        return self.accepted / self.total if self.total else None

    def to_dict(self) -> dict[str, Any]:
        """The ``recommendation`` object of ``calib route --json`` (strict JSON)."""
        return {
            "threshold": finite_or_none(self.threshold), "accepted": self.accepted, "to_person": self.to_person,
            "coverage": finite_or_none(self.coverage), "error_rate": finite_or_none(self.error_rate),
            "error_upper": finite_or_none(self.error_upper), "target": self.target,
            "confidence": self.confidence, "method": self.method, "certified_on": self.certified_on,
            "holds": self.holds, "message": self.message, "candidates": self.candidates,
            "procedure": self.procedure,
        }

    def details(self) -> dict[str, Any]:
        """:meth:`to_dict` plus ``on``, ``total``, ``design_effect``, ``loosest_target``, ``items_needed``."""
        return {**self.to_dict(), "on": self.on, "total": self.total,
                "design_effect": finite_or_none(self.design_effect),
                "loosest_target": finite_or_none(self.loosest_target), "items_needed": self.items_needed}


def _where(t: float, on: str) -> str:
    return threshold_text(t) + (" (calibrated probability)" if on == "calibrated" else "")


def prepare(
    data: Data, calibration: CalibrationMap | None, fit: str | None, seed: int,
) -> tuple[CountTable, CalibrationMap | None, str]:
    """The table to certify on, the map (given, or fitted on the other part) and
    ``certified_on`` in words."""
    table, rows = table_and_rows(data)
    refusal = routing.threshold_refusal(calibration)
    if refusal:
        raise CalibError(f"cannot recommend a threshold on this map: {refusal}")
    if fit is None:
        return table, calibration, "all rows" + ("" if calibration is None else " (map fitted on other data)")
    if calibration is not None:
        raise CalibError("give either a fitted map or a method to fit, not both")
    if fit not in METHODS:
        raise CalibError(f"unknown recalibration method {fit!r}: choose one of {', '.join(METHODS)}")
    if rows is not None and rows.cluster is not None:  # an item's repeats stay on one side
        half = item_folds(rows, 2, seed=seed) == 0
        cmap = fit_map(from_judgments(rows.take(half)), fit)
        return (from_judgments(rows.take(~half)), cmap, "held-out half of the items (an item's repeats kept "
                f"together, random split, seed {seed}); map fitted on the other half")
    if rows is not None:
        odd, even = row_order_halves(rows)
        cmap = fit_map(from_judgments(rows.take(odd)), fit)
        return (from_judgments(rows.take(even)), cmap,
                "held-out half (the 2nd, 4th... rows in file order); map fitted on the 1st, 3rd... rows")
    (n0, k0), (n1, k1) = split_counts(table, 2, seed=seed)
    cmap = fit_map(table.with_counts(n0, k0), fit)
    return (table.with_counts(n1, k1), cmap,
            f"held-out half of each cell (random split, seed {seed}); map fitted on the other half")


def recommend(
    data: Data, *, target: float = TARGET, confidence: float = CONFIDENCE,
    calibration: CalibrationMap | None = None, fit: str | None = None, guarantee: bool = True, seed: int = 0,
    procedure: str = FIXED_SEQUENCE,
) -> Recommendation:
    """The review threshold accepting the most items with error among them at most
    ``target``, with probability ``confidence`` (see the module docstring).

    Parameters
    ----------
    data:
        A dataset, rows or a count table (groups pooled: one threshold for all).
    target, confidence:
        ``alpha`` and ``1 - delta``, each strictly in (0, 1).
    calibration:
        A map fitted on other data: thresholds are on its calibrated probability.
    fit:
        A method of :data:`calib.maps.METHODS` to fit here: fitted on one half,
        certified on the other (``certified_on`` says which).
    guarantee:
        ``False``: the point-estimate search (:func:`calib.routing.lowest_threshold`,
        no guarantee), for contrast.
    seed:
        Seeds the random split of a count table without rows, and with clusters the
        answer drawn per item (:func:`per_item`).
    procedure:
        ``"fixed-sequence"`` (default: the most power when the error falls as the score
        rises) or ``"fallback"`` (:func:`fallback`: valid and powerful for any error
        curve, e.g. a judge whose 100 is worse than its 95). The rule: choose before
        seeing the outcomes; ``"fallback"`` unless the error is known to fall with the score.
    """
    target, confidence = check_levels(target, confidence)
    table, cmap, where = prepare(data, calibration, fit, seed)
    return certify(table, cmap, where, target=target, confidence=confidence, guarantee=guarantee,
                   procedure=procedure, seed=seed)


def certify(
    table: CountTable, cmap: CalibrationMap | None, where: str, *, target: float = TARGET,
    confidence: float = CONFIDENCE, guarantee: bool = True, procedure: str = FIXED_SEQUENCE, seed: int = 0,
) -> Recommendation:
    """:func:`recommend` on what :func:`prepare` returned (the table to certify on,
    the map, ``certified_on``): for callers that reuse one split."""
    target, confidence = check_levels(target, confidence)
    if procedure not in PROCEDURES:
        raise CalibError(f"unknown procedure {procedure!r}: choose one of {', '.join(PROCEDURES)}")
    c = counts(table, cmap, seed)
    if guarantee:
        gridded, full = c.score.size > GRID_ABOVE, c
        at, what = candidates(c, target, confidence)
        c = c.take(at)
        if procedure == FALLBACK:
            i = fallback(c, target, confidence)
            method = FALLBACK_METHOD.format(m=fallback_candidates(c, target, confidence).size)
        else:
            i = fixed_sequence(c, target, confidence)
            method = GUARANTEED
        method += CLUSTERED if c.clustered else ""
        rec = _result(c, i, target, confidence, method, where, guarantee, cmap, procedure,
                      full if gridded else None)
        said = f" Thresholds tested: {what}." if gridded else ""
        if procedure == FALLBACK:
            said += f" Procedure: {method}."
        return replace(rec, candidates=what, procedure=procedure, message=rec.message + said)
    choice = routing.lowest_threshold(routing.basis(table, calibration=cmap), target)
    i = None if choice.threshold is None else int(np.searchsorted(c.score, choice.threshold))
    rec = _result(c, i, target, confidence, POINT, where, guarantee, cmap)
    return replace(rec, candidates=f"every distinct score ({c.score.size:,})", procedure="point estimate")


def _result(
    c: Counts, i: int | None, target: float, confidence: float, method: str, where: str, guarantee: bool,
    cmap: CalibrationMap | None, procedure: str = FIXED_SEQUENCE, grid_of: Counts | None = None,
) -> Recommendation:
    """The recommendation at score index ``i`` (``None``: nothing qualifies), in words
    (``grid_of``: the counts at every score, when the candidates are a grid)."""
    if i is None:
        loosest = None
        if guarantee:
            loosest = loosest_target(c, confidence, procedure) if grid_of is None else \
                grid_loosest(grid_of, confidence, procedure)
        needed = items_needed(c, target, confidence)
        return Recommendation(
            None, 0, c.total, c.total, None, None, target, confidence, method, where, False,
            _refusal(c, target, confidence, guarantee, loosest, needed), c.on, None, loosest, needed, cmap,
        )
    acc, d = int(c.accepted[i]), float(c.deff[i])
    rate = c.rate(i)
    upper = max(float(cp_upper(c.e_eff[i], c.n_eff[i], confidence)), rate)  # a drawn bound under the rate: the rate
    t = float(c.score[i])
    share = f"{acc:,} of {c.total:,} items ({acc / c.total:.0%}) would be accepted unseen, " \
            f"{c.total - acc:,} go to a person"
    if guarantee:
        msg = (f"Accept items at or above {_where(t, c.on)}. With {short_pct(confidence)} confidence, at most "
               f"{short_pct(target)} of the items accepted unseen are wrong: {share}.")
        if c.clustered:
            msg += (f" Repeated items: the error is per item (the share of its accepted answers that are wrong, "
                    f"averaged over {int(c.n_eff[i]):,} items), certified on one accepted answer per item drawn "
                    "at random.")
    else:
        msg = (f"Accept items at or above {_where(t, c.on)}: {short_pct(rate)} of the accepted were wrong in this "
               f"data, at or under the {short_pct(target)} target, but with no guarantee (the one-sided "
               f"{short_pct(confidence)} upper bound is {short_pct(upper)}): {share}.")
    return Recommendation(t, acc, c.total - acc, c.total, rate, upper, target, confidence, method, where,
                          True, msg, c.on, d, None, None, cmap)


def _refusal(c: Counts, target: float, confidence: float, guarantee: bool, loosest: float | None,
             needed: int | None) -> str:
    what = "be certified" if guarantee else "keep the observed error rate"
    msg = (f"No threshold can {what} at or under {short_pct(target)} of the items accepted unseen"
           + (f" with {short_pct(confidence)} confidence" if guarantee else "") + ": every item goes to a person.")
    if needed is not None and needed > c.total:
        msg += (f" At the error rate seen among the most confident items, about {needed:,} items in all "
                f"({needed - c.total:,} more) would certify it.")
    if loosest is not None:
        msg += f" The strictest target that qualifies with this data is {short_pct(loosest)}."
    elif guarantee:
        msg += " No target below 100% qualifies with this data."
    return msg


def loosest_target(c: Counts, confidence: float, procedure: str = FIXED_SEQUENCE) -> float | None:
    """The smallest target on a 0.1% grid for which :func:`fixed_sequence` recommends
    a threshold on these counts; ``None`` when none below 100% does.

    At target ``a`` the sequence starts at the strictest threshold with
    ``n_eff >= log(delta) / log(1 - a)`` and certifies something iff that threshold's
    Clopper-Pearson bound is at most ``a``: with the bounds computed once, each grid
    point is one binary search in the suffix maxima of ``n_eff`` (not monotone with
    clusters). The grid is scanned, as a looser target may start at a stricter
    threshold with fewer items."""
    if c.score.size == 0:
        return None
    if procedure == FALLBACK:  # at most 10 p-values per target: scanned directly
        return next((float(a) for a in np.arange(1, 1000) / 1000 if fallback(c, float(a), confidence) is not None),
                    None)
    reach = np.maximum.accumulate(c.n_eff[::-1])  # reach[k]: largest n_eff at index >= size-1-k
    grid = np.arange(1, 1000) / 1000
    need = np.log(1 - confidence) / np.log1p(-grid) - 1e-9
    k = np.searchsorted(reach, need, side="left")  # first k with reach >= need
    ok = k < reach.size
    start = np.where(ok, c.score.size - 1 - np.minimum(k, reach.size - 1), 0)
    at, where = np.unique(start, return_inverse=True)  # the bound at each distinct start only
    upper = cp_upper(c.e_eff[at], c.n_eff[at], confidence)[where.ravel()]
    good = np.flatnonzero(ok & (upper <= grid + 1e-12))
    for a in grid[good[:5]]:  # the bound and the p-value agree up to rounding: confirm
        if fixed_sequence(c, float(a), confidence) is not None:
            return float(a)
    return None


def grid_loosest(c: Counts, confidence: float, procedure: str) -> float | None:
    """:func:`loosest_target` when the candidates are a grid, which moves with the target
    (:func:`candidates`): each target on the 0.1% grid tried in turn (at most 100
    p-values each)."""
    test = fallback if procedure == FALLBACK else fixed_sequence
    for a in np.arange(1, 1000) / 1000:
        at, _ = candidates(c, float(a), confidence)
        if test(c.take(at), float(a), confidence) is not None:
            return float(a)
    return None


def items_needed(c: Counts, target: float, confidence: float) -> int | None:
    """Items in all that would certify ``target`` if the data grew at the error rate
    (and share accepted) seen at the threshold with the lowest upper bound (among at
    most :data:`HINT_POINTS` evenly spaced ones: the bound costs microseconds each);
    ``None`` when that error rate is not below the target (more data would not help)."""
    at = np.unique(np.linspace(0, c.score.size - 1, min(c.score.size, HINT_POINTS)).astype(np.int64))
    at = at[c.accepted[at] > 0]
    if at.size == 0:
        return None
    i = int(at[np.argmin(cp_upper(c.e_eff[at], c.n_eff[at], confidence))])
    rate, share = c.rate(i), c.accepted[i] / c.total
    if rate >= target:
        return None
    n = max(1.0, float(c.n_eff[i]))
    while float(cp_upper(rate * n, n, confidence)) > target and n < 1e12:
        n *= 2
    lo = n / 2
    while n - lo > 1:
        mid = (lo + n) / 2
        lo, n = (lo, mid) if float(cp_upper(rate * mid, mid, confidence)) <= target else (mid, n)
    return int(math.ceil(n * float(c.deff[i]) / share))


def bound_at(
    table: CountTable, threshold: float | None, confidence: float, calibration: CalibrationMap | None = None,
) -> tuple[int, int, float | None]:
    """Items accepted, errors among them and the Clopper-Pearson upper bound of the
    error (with clusters: per item, :func:`per_item`) at a given threshold (``None``: none accepted)."""
    c = counts(table, calibration)
    if threshold is None:
        return 0, 0, None
    i = int(np.searchsorted(c.score, threshold, side="left"))
    if i >= c.score.size:
        return 0, 0, None
    acc, err = int(c.accepted[i]), int(c.errors[i])
    return acc, err, finite_or_none(cp_upper(c.e_eff[i], c.n_eff[i], confidence))
