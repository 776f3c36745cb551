"""Ranking: the AUROC of the stated confidence for "the answer is right", the bound on
what pooling can change in it, and the Mann-Whitney test against chance (Lehmann 1975);
the failure-prediction figures: the average precision of flagging the wrong answers
(AUPRC for errors), the prediction rejection ratio and the accuracy at fixed coverage.

Ties (a judge states few values): answers tied at one stated value cannot be separated by
any threshold. AUROC counts a tied (right, wrong) pair as 1/2; AUPRC takes a tied block
together (one threshold, as scikit-learn does); the AURC of the
PRR its expectation over the orders of tied answers; accuracy at a coverage that cuts a tied
block takes the block's share at random (its expected accuracy).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from calib.estimates import Estimate
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
    ties = float(np.sum(t.n.astype(np.float64) ** 3.0 - t.n)) / (N * (N - 1.0))
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


# ------------------------------------------------------------------ failure prediction
#: Coverages of :func:`accuracy_at_coverage`: HELM's selective accuracy at 10% (Liang et
#: al. 2023, "Holistic Evaluation of Language Models", sect. 4.5), half, and 80%.
COVERAGES: tuple[float, ...] = (0.1, 0.5, 0.8)


def auprc_errors_batch(s: CellStats) -> np.ndarray:
    """Average precision with the wrong answers as the positive class, ranked by
    increasing confidence, per rep (shape ``(reps,)``; NaN without a wrong answer).

    .. math:: \\mathrm{AP} = \\sum_j \\frac{w_j}{W} \\, \\frac{\\sum_{i \\le j} w_i}{\\sum_{i \\le j} n_i}

    over the distinct stated values ``j`` in increasing order (``w_j`` wrong answers of
    ``n_j``): the recall step of each threshold times the precision of flagging every
    answer at or below it. Tied answers share one threshold, as in
    ``sklearn.metrics.average_precision_score`` (no interpolation); a judge that ranks
    no better than chance scores the error rate."""
    w = (s.n - s.k).astype(np.float64)
    W = w.sum(axis=-1)
    tp, flagged = np.cumsum(w, axis=-1), np.cumsum(s.n, axis=-1).astype(np.float64)
    return safe_div((w * safe_div(tp, flagged)).sum(axis=-1, where=w > 0), W)


def aurc_batch(s: CellStats) -> np.ndarray:
    """AURC per rep, ties broken at random (its expectation over the orders of tied answers).

    Answers are accepted by decreasing confidence; the risk at ``k`` accepted is their
    error rate, ``AURC = (1/N) sum_k risk(k)``. Inside block ``j`` of ``n_j`` tied
    answers (``w_j`` wrong; ``C, E`` answers and errors above it) the expected risk at
    ``C + t`` accepted is ``(E + t r) / (C + t)``, ``r = w_j / n_j``, so the block adds

    .. math:: w_j + (E - C r) (H_{C + n_j} - H_C)

    (``H`` the harmonic numbers): exact from the count table. Without ties it is the
    usual mean over ``k`` and :mod:`calib.decision.aurc`'s AURC; with ties that one
    gives every position of a block the block's risk (what a threshold realises), which
    keeps a judge that separates right from wrong perfectly but states its wrong answers
    at one value short of the oracle: the ratio :func:`prr_batch` needs the expectation."""
    counts = s.n[..., ::-1]
    n, w = counts.astype(np.float64), (s.n - s.k)[..., ::-1].astype(np.float64)
    after = np.cumsum(counts, axis=-1)
    C, E = (after - counts).astype(np.float64), np.cumsum(w, axis=-1) - w
    r = safe_div(w, n)
    # H_k for every count up to the largest total, once: a table lookup is 10 times
    # cheaper than two digamma calls per cell of 2,000 resamples
    h = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, int(after[..., -1].max(initial=0)) + 1))])
    gain = h[after] - h[after - counts]
    block = np.where(n > 0, w + (E - C * np.nan_to_num(r)) * gain, 0.0)
    return safe_div(block.sum(axis=-1), n.sum(axis=-1))


def oracle_aurc(total: np.ndarray, wrong: np.ndarray) -> np.ndarray:
    """AURC of the perfect ordering, ``(W - R (H_N - H_R)) / N`` (``H`` harmonic numbers)."""
    from scipy.special import digamma

    N, W = np.asarray(total, dtype=np.float64), np.asarray(wrong, dtype=np.float64)
    R = N - W
    return safe_div(W - R * (digamma(N + 1.0) - digamma(R + 1.0)), N)


def prr_batch(s: CellStats) -> np.ndarray:
    """Prediction rejection ratio per rep (NaN with one class only).

    .. math:: \\mathrm{PRR} = \\frac{\\mathrm{AURC}_{rand} - \\mathrm{AURC}}
              {\\mathrm{AURC}_{rand} - \\mathrm{AURC}_{oracle}}, \\quad \\mathrm{AURC}_{rand} = W / N

    the share of the oracle's gain over random rejection that the stated confidence
    achieves (Malinin, Mlodozeniec & Gales 2020, "Ensemble Distribution Distillation",
    ICLR, sect. 5; on the curve of the mean quality of the answers kept, as LM-Polygraph
    computes it: Fadeeva et al. 2023, Vashurin et al. 2025). 1 is the oracle, 0 is
    chance, negative is worse than chance. On Malinin's own curve (rejected answers
    replaced by right ones, the error counted over all ``N``) the PRR of 0/1 errors is
    exactly ``2 AUROC - 1`` when ties are broken at random, no new information; on the
    risk of the answers kept it weighs the most confident answers most. AURC with
    ties broken at random (:func:`aurc_batch`): a judge stating one value scores 0, one
    separating right from wrong at two values scores 1."""
    N = s.total.astype(np.float64)
    W = N - s.hits
    rand = safe_div(W, N)
    # at most 1 (AURC >= the oracle's): the two sums differ in the last bits at the oracle
    return np.minimum(safe_div(rand - aurc_batch(s), rand - oracle_aurc(N, W)), 1.0)


def accuracy_at_coverage_batch(s: CellStats, coverage: float) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy of the most confident ``coverage`` share of the answers, per rep, and the
    index of the cell the cut falls in.

    With ``m = coverage N`` answers accepted by decreasing confidence, the cell the cut
    falls in (``n_j`` answers tied at one value) contributes ``f = (m - N_above) / n_j``
    of its answers: ``(K_above + f k_j) / m``, the expected accuracy when the tie is
    broken at random. No threshold accepts exactly that share when the cut falls inside
    a tie; :func:`accuracy_at_coverage` says how many answers were split."""
    return accuracy_at_coverages_batch(s, (coverage,))[0]


def accuracy_at_coverages_batch(s: CellStats, coverages: tuple[float, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`accuracy_at_coverage_batch` at several coverages, the cumulative sums once."""
    n, k = s.n[..., ::-1].astype(np.float64), s.k[..., ::-1].astype(np.float64)
    cum_n, cum_k = np.cumsum(n, axis=-1), np.cumsum(k, axis=-1)
    out = []
    for coverage in coverages:
        m = coverage * cum_n[..., -1:]
        j = np.minimum((cum_n < m - 1e-9 * np.maximum(m, 1)).sum(axis=-1, keepdims=True), n.shape[-1] - 1)
        nj, kj = np.take_along_axis(n, j, -1), np.take_along_axis(k, j, -1)
        above_n, above_k = np.take_along_axis(cum_n, j, -1) - nj, np.take_along_axis(cum_k, j, -1) - kj
        acc = safe_div(above_k + safe_div(m - above_n, nj) * kj, m)
        out.append((acc[..., 0], (n.shape[-1] - 1 - j)[..., 0]))
    return out


@dataclass(frozen=True)
class CoverageRow:
    """Accuracy among the most confident ``coverage`` share of answers (see
    :func:`accuracy_at_coverage_batch`) with its interval (an
    :class:`~calib.estimates.Estimate`): ``value`` the stated value at the cut,
    ``split`` how many answers tied at it (0 when the cut falls between two values)."""

    coverage: float
    accuracy: Estimate
    value: float | None
    split: int

    def to_dict(self) -> dict[str, Any]:
        return {"coverage": self.coverage, "accuracy": self.accuracy.value, "ci": self.accuracy.to_list(),
                "value": self.value, "tied_at_cut": self.split}


def coverage_key(c: float) -> str:
    """The batch metric's name of accuracy at coverage ``c`` (``accuracy_at_10``)."""
    return f"accuracy_at_{round(100 * c):d}"


def accuracy_at_coverage(table: CountTable, estimates: Mapping[str, Estimate] | None = None,
                         coverages: tuple[float, ...] = COVERAGES) -> tuple[CoverageRow, ...]:
    """One :class:`CoverageRow` per coverage (intervals from ``estimates``, by
    :func:`coverage_key`; none without); the cut is inside a tie when its cell's answers are
    not all accepted or all refused."""
    t = single(table)
    s = CellStats.of(t)
    out = []
    for c in coverages:
        acc, j = accuracy_at_coverage_batch(s, c)
        cell = int(j[0])
        above = float(t.n[cell + 1:].sum())
        inside = 0 < c * t.total - above < t.n[cell] - 1e-9 if t.total else False
        e = (estimates or {}).get(coverage_key(c))
        value = finite_or_none(acc)
        out.append(CoverageRow(c, Estimate.point(value) if e is None else replace(e, value=value),
                               float(t.scale.to_stated(t.prob[cell])) if t.total else None,
                               int(t.n[cell]) if inside else 0))
    return tuple(out)


def auprc_errors(table: CountTable) -> float | None:
    """:func:`auprc_errors_batch` of the table (``None`` without a wrong answer)."""
    return finite_or_none(auprc_errors_batch(CellStats.of(table)))


def prr(table: CountTable) -> float | None:
    """:func:`prr_batch` of the table (``None`` with one class only)."""
    return finite_or_none(prr_batch(CellStats.of(table)))
