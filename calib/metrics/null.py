"""What every calibration test shares: the hypothesis "the stated probability is the truth".

The answers it rules out (:func:`impossible`) and the data it makes certain, the
model-based variance from the cell sums (:func:`null_variance`), the Lyapunov ratio that
decides between the asymptotic and the Monte Carlo reference (:func:`lyapunov`,
:data:`LYAPUNOV_MAX`), the simulation under perfect calibration (:func:`null_groups`,
:func:`null_deviations`) and the adjustment for clustered rows (Rao & Scott 1981;
:func:`cluster_effect`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from calib.metrics.cells import single, test_prob
from calib.metrics.pvalues import Test
from calib.table import CountTable


def impossible(table: CountTable) -> tuple[int, int]:
    """Answers perfect calibration rules out: ``(wrong answers stated at probability 1,
    right answers stated at probability 0)``.

    Read from the cell sums: the wrong answers of a cell all sit at 1 exactly when
    their summed probability ``sum p - sum p y`` equals their number (a sum of 1.0s is
    exact), the right ones at 0 when ``sum p y = 0``. On a pooled table a wrong answer
    at 1 that shares its cell with wrong answers below 1 is not seen."""
    t = single(table)
    w = t.wrong
    at_one = (w > 0) & (t.prob * t.n - t.py_sum >= w)
    at_zero = (t.correct > 0) & (t.py_sum <= 0)
    return int(w[at_one].sum()), int(t.correct[at_zero].sum())


def impossible_test(name: str, table: CountTable) -> Test | None:
    """The rejection (``p = 0``) of a table :func:`impossible` finds answers in, or ``None``."""
    one, zero = impossible(table)
    if not (one or zero):
        return None
    s = single(table).scale
    parts = [f"{c:,} {what} answer{'s' if c != 1 else ''} stated at {v:g}"
             for c, what, v in ((one, "wrong", s.hi), (zero, "right", s.lo)) if c]
    return Test(name, None, None, 0.0, None,
                " and ".join(parts) + ": impossible if the stated probabilities were the truth (p = 0)")



def decided_test(name: str, table: CountTable) -> Test | None:
    """The result of a test the data decide before any statistic: undefined without
    answers, a rejection (``p = 0``) when :func:`impossible` finds answers; else ``None``."""
    if single(table).total == 0:
        return Test(name, None, None, None, None, "no answers")
    return impossible_test(name, table)

def certain_test(name: str) -> Test:
    """Every answer stated at 0 or 100 and as stated: the only outcome calibration allows."""
    return Test(name, 0.0, None, 1.0, 0.0,
                "every answer is stated at an end of the scale and came out as stated: under perfect "
                "calibration no other outcome was possible (p = 1)")


def null_variance(ps: np.ndarray, sq: np.ndarray) -> float:
    """Variance of the number of right answers under perfect calibration, from cell sums.

    .. math:: \\mathrm{Var}\\Big(\\sum_i y_i\\Big) = \\sum_i p_i (1 - p_i) = \\sum_c \\Big(\\sum p - \\sum p^2\\Big)_c

    for independent answers; exact on a pooled table, 0 for cells at 0 or 1. This is
    the one place the tests' model-based variance is computed (``ps``, ``sq``: per
    cell, or per bin, sums of ``p`` and ``p^2``)."""
    return float(np.sum(np.maximum(np.asarray(ps, dtype=np.float64) - sq, 0.0)))


def lyapunov(w: np.ndarray, n: np.ndarray, p: np.ndarray, var: float) -> float:
    """Lyapunov ratio of ``S = sum_i w_i (y_i - p_i)`` under perfect calibration.

    .. math:: L = \\frac{\\sum_i |w_i|^3 \\, E|y_i - p_i|^3}{\\mathrm{Var}(S)^{3/2}}, \\quad
              E|y - p|^3 = p (1 - p) \\big(p^2 + (1 - p)^2\\big)

    By the Berry-Esseen theorem (Shevtsova 2010: constant 0.56) the distribution of
    ``S / sd(S)`` is within ``0.56 L`` of the normal one; ``L = 1 / sqrt(lambda)``
    for a Poisson(lambda)-like count of rare wrong answers. Per cell at its mean
    probability (``n, p``: cells; ``var``: ``Var(S)``). ``inf`` when ``var`` is 0."""
    if not var > 0:
        return math.inf
    q = p * (1 - p)
    return float(np.sum(n * np.abs(w) ** 3.0 * q * (p * p + (1 - p) ** 2)) / var**1.5)


#: Largest :func:`lyapunov` ratio at which a test uses its asymptotic (normal or
#: chi-square) reference; above it the p-value is a Monte Carlo one. At 0.2 (a
#: Poisson count with mean 25) the two-sided 5% normal test of such a count rejects
#: 4-6% of the time (``bench/sim_tests.py``).
LYAPUNOV_MAX = 0.2


#: Draws of the Monte Carlo p-values (fewer when a table has many cells: :data:`NULL_BUDGET`).
NULL_DRAWS = 4000


#: Fewest draws of a Monte Carlo p-value.
NULL_MIN_DRAWS = 199


#: Largest ``draws x groups`` of one simulation: bounds its cost (~1 s) on any table.
NULL_BUDGET = 20_000_000


#: Above this many cells with 0 < p < 1 the simulation groups cells (:func:`null_groups`).
NULL_CELLS = 2000


#: Width in logit of those groups: a group's binomial variance is then within
#: ~1e-5 (relative) of its cells' Poisson-binomial one.
NULL_LOGIT_STEP = 0.01


# simulated statistics within this of the observed one count as reaching it (ties of
# discrete statistics computed in a different order)
TIE = 1e-9


def far_from_normal(lyap: float) -> str:
    return f"a count far from normal: Lyapunov ratio {lyap:.2g} > {LYAPUNOV_MAX:g}"


def null_groups(table: CountTable, ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells a simulation under perfect calibration draws: ``(bin, n, p)`` per group.

    Cells at probability 0 or 1 are left out (their outcome is certain). Up to
    :data:`NULL_CELLS` cells each is its own group, exact for an unpooled table; a
    pooled cell is drawn at its mean probability (variance ``n pbar (1 - pbar)``,
    at least its rows' ``sum p (1 - p)``: conservative by the within-cell variance,
    at most ``(GRID / 2)^2`` per answer). Beyond, cells of the same bin (``ids``, one
    per cell; default one bin) are grouped on a :data:`NULL_LOGIT_STEP` grid of
    ``logit p``, which bounds the cost of a simulation on any table."""
    t = single(table)
    p = test_prob(t)
    ids = np.zeros(t.cells, dtype=np.int64) if ids is None else np.asarray(ids, dtype=np.int64)
    live = (t.n > 0) & (p > 0) & (p < 1)
    ids, n, p = ids[live], t.n[live], p[live]
    if n.size <= NULL_CELLS:
        return ids, n, p
    # |logit p| < 37 for 0 < p < 1 in double precision: slots fit in 8,000 per bin
    slot = np.rint((np.log(p) - np.log1p(-p)) / NULL_LOGIT_STEP).astype(np.int64) + 4000
    keys, inv = np.unique(ids * 8000 + slot, return_inverse=True)
    inv = inv.reshape(-1)
    ng = np.bincount(inv, weights=n).astype(np.int64)
    return keys // 8000, ng, np.bincount(inv, weights=n * p) / ng


def null_deviations(n: np.ndarray, p: np.ndarray, *, draws: int | None = None, seed: int = 0):  # type: ignore[no-untyped-def]
    """Simulated ``k - n p`` per group under perfect calibration (``k ~ Binomial(n, p)``),
    seeded, in chunks of shape ``(draws_in_chunk, groups)`` (:func:`null_draws_for` draws in all)."""
    rng = np.random.default_rng(seed)
    total = null_draws_for(n.size) if draws is None else int(draws)
    chunk = max(1, min(total, 2_000_000 // max(n.size, 1)))
    mean = n * p
    for start in range(0, total, chunk):
        yield rng.binomial(n, p, size=(min(chunk, total - start), n.size)) - mean


def null_draws_for(groups: int) -> int:
    """Draws of a Monte Carlo p-value over ``groups`` groups: :data:`NULL_DRAWS`, fewer
    (down to :data:`NULL_MIN_DRAWS`) when ``draws x groups`` would exceed :data:`NULL_BUDGET`."""
    return int(min(NULL_DRAWS, max(NULL_MIN_DRAWS, NULL_BUDGET // max(groups, 1))))


def cluster_effect(t: CountTable, right: np.ndarray, wrong: np.ndarray, info: np.ndarray | float,
                   *, centre: bool = False, coordinate: np.ndarray | None = None) -> float:
    """What a test divides its statistic by when rows are clustered (a chi-square by
    it, a z by its square root): the test's design effect, at least 1
    (:func:`calib.clusters.design_effect`, :func:`calib.clusters.test_adjustment`:
    the z becomes the cluster-robust sandwich z, a chi-square gets the first-order
    Rao-Scott correction); 1 when ``t`` has no clusters. ``right``/``wrong``: the
    statistic's per-row score of a right/wrong answer in each cell; ``info``: the
    variance of their sum under independence (the one the test uses); ``coordinate``:
    each cell's bin for a chi-square over bins."""
    if t.clusters is None:
        return 1.0
    from calib import clusters

    return clusters.test_adjustment(
        clusters.design_effect(t.clusters, right, wrong, info, centre=centre, coordinate=coordinate))


def clustered_note(test: Test, t: CountTable, d: float) -> Test:
    """``test`` with a note saying it allowed for the clusters of ``t`` (unchanged without)."""
    if t.clusters is None or test.statistic is None:
        return test
    how = (f"rows in {t.clusters.count:,} clusters ({t.clusters.how}): statistic divided by its design "
           f"effect {d:.3g} (Rao & Scott 1981; z: the cluster-robust sandwich variance)")
    return replace(test, note="; ".join(x for x in (test.note, how) if x))
