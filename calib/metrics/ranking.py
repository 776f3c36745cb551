"""Ranking: the AUROC of the stated confidence for "the answer is right", the bound on
what pooling can change in it, and the Mann-Whitney test against chance (Lehmann 1975).
"""

from __future__ import annotations

import math

import numpy as np

from calib.metrics.cells import CellStats, safe_div, single
from calib.metrics.null import cluster_effect, clustered_note
from calib.metrics.pvalues import Test, z_test
from calib.numbers import finite_or_none
from calib.table import CountTable


def auroc_batch(s: CellStats) -> np.ndarray:
    w = s.n - s.k
    K = s.hits.astype(np.float64)
    W = w.sum(axis=-1).astype(np.float64)
    above = K[:, None] - np.cumsum(s.k, axis=-1)
    return safe_div((w * (above + 0.5 * s.k)).sum(axis=-1), K * W)


def auroc(table: CountTable) -> float | None:
    """Area under the ROC curve of the stated confidence for "the answer is right".

    .. math:: \\mathrm{AUROC} = P(p_{right} > p_{wrong}) + \\tfrac12 P(p_{right} = p_{wrong})

    over all (right, wrong) pairs, from the cells: each wrong answer in cell ``c``
    wins against the right answers in higher cells and ties with those in its own.
    0.5 means the number does not rank answers. ``None`` with one class only. On a
    pooled table pairs inside one cell count as ties; see :func:`auroc_grid_bound`.
    """
    return finite_or_none(auroc_batch(CellStats.of(table)))


def auroc_grid_bound(table: CountTable) -> float:
    """Largest change pooling can have made to :func:`auroc` of a pooled table (the
    coarse table of the bootstrap; 0 for the exact table of an audit).

    Only (right, wrong) pairs inside one pooled cell may be ordered differently in
    the rows; they count 1/2 and could each have counted 0 or 1:
    ``sum_c k_c w_c / (2 K W)``. 0 for an unpooled table (its ties are real)."""
    t = single(table)
    K, W = t.total_correct, int(t.wrong.sum())
    if not t.pooled or K == 0 or W == 0:
        return 0.0
    return float(np.sum(t.correct * t.wrong) / (2.0 * K * W))


def auroc_vs_chance(table: CountTable) -> Test:
    """Mann-Whitney test of "the number does not rank answers" (AUROC = 0.5).

    .. math:: z = \\frac{U - n_1 n_0 / 2}{\\sqrt{\\frac{n_1 n_0}{12}\\Big[(N + 1) -
              \\frac{\\sum_c (t_c^3 - t_c)}{N (N - 1)}\\Big]}}

    with ``U = AUROC n_1 n_0`` (:func:`auroc`), ``n_1, n_0`` the right and wrong
    answers and ``t_c`` the answers sharing stated value ``c`` (the tie correction;
    Lehmann 1975, eq. 1.53), two-sided; what ``scipy.stats.mannwhitneyu`` computes
    with ``method="asymptotic", use_continuity=False``. The verdict words the ranking
    from it when there are no bootstrap intervals."""
    t = single(table)
    name = "auroc_vs_chance"
    N, n1 = t.total, t.total_correct
    n0 = N - n1
    auc = auroc(t)
    if auc is None or n1 == 0 or n0 == 0:
        return Test(name, None, None, None, None, "needs both right and wrong answers")
    ties = float(np.sum(t.n.astype(np.float64) ** 3 - t.n)) / (N * (N - 1.0))
    var = n1 * n0 / 12.0 * ((N + 1) - ties)
    if not var > 0:
        return Test(name, None, None, None, None, "every answer has the same stated value")
    d = _rank_design_effect(t, n1 / N, var)
    return clustered_note(z_test(name, (auc - 0.5) * n1 * n0 / math.sqrt(var * d)), t, d)


def _rank_design_effect(t: CountTable, ybar: float, var: float) -> float:
    """The Mann-Whitney statistic's design effect with clustered rows (1 without).

    ``U - n_1 n_0 / 2 = sum_i (y_i - ybar) (R_i - (N + 1) / 2)`` with ``R_i`` the
    midrank of row ``i``'s stated value: a sum of per-row scores, whose cluster totals
    give the cluster-robust variance (:func:`calib.metrics.null.cluster_effect`, at least
    1) against ``var``, the variance under independence."""
    if t.clusters is None:
        return 1.0
    before = np.cumsum(t.n) - t.n
    r = before + (t.n + 1) / 2.0 - (t.total + 1) / 2.0  # each cell's midrank, centred
    return cluster_effect(t, (1 - ybar) * r, -ybar * r, var)
