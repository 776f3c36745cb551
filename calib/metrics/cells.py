"""Per-cell sufficient statistics (:class:`CellStats`) and the simple scores computed
from them: accuracy, mean confidence, the overconfidence gap, the Brier score (Brier 1950)
and its skill against the base rate, and the log loss.

Each score is a vectorised kernel over ``(reps, cells)`` arrays (``*_batch`` and the
private kernels, shared with :mod:`calib.bootstrap`) and a point estimate: the kernel on
the table itself, one "rep", returned as a plain float or ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calib.numbers import finite_or_none
from calib.table import CountTable, nll


@dataclass(frozen=True)
class CellStats:
    """Per-cell sufficient statistics of one or many tables sharing their cells.

    ``n, k`` (int64) and ``ps, py, sq, nl`` (float64: sums of ``p``, ``p*y``,
    ``p^2`` and the clipped log loss) have shape ``(reps, cells)``; ``pos`` (the
    cell's mean probability), ``p1`` and ``p0`` (mean probability of its right and
    wrong answers) have shape ``(cells,)``. Cells are sorted by stated value.
    """

    n: np.ndarray
    k: np.ndarray
    ps: np.ndarray
    py: np.ndarray
    sq: np.ndarray
    nl: np.ndarray
    pos: np.ndarray
    p1: np.ndarray
    p0: np.ndarray

    @staticmethod
    def of(table: CountTable) -> CellStats:
        """The table's own (exact) statistics, as one rep."""
        t = single(table)
        return CellStats(
            n=t.n[None, :].astype(np.int64), k=t.correct[None, :].astype(np.int64),
            ps=(t.prob * t.n)[None, :], py=t.py_sum[None, :].astype(np.float64),
            sq=t.sq_sum[None, :].astype(np.float64), nl=t.nll_sum[None, :].astype(np.float64),
            pos=t.prob.astype(np.float64), p1=t.p_correct, p0=t.p_wrong,
        )

    @staticmethod
    def resampled(table: CountTable, n: np.ndarray, k: np.ndarray) -> CellStats:
        """Statistics of resampled counts ``n, k`` of shape ``(reps, cells)``.

        The right and wrong answers of a cell keep their mean probability
        (exact for an unpooled table, where every row of a cell has the same p)."""
        t = single(table)
        p1, p0 = t.p_correct, t.p_wrong
        with np.errstate(invalid="ignore", divide="ignore"):
            m2 = np.where(t.n > 0, t.sq_sum / np.maximum(t.n, 1), t.prob**2)
        w = n - k
        l1 = nll(p1, np.ones_like(p1, dtype=bool))
        l0 = nll(p0, np.zeros_like(p0, dtype=bool))
        return CellStats(
            n=n, k=k, ps=p1 * k + p0 * w, py=p1 * k, sq=m2 * n, nl=l1 * k + l0 * w,
            pos=t.prob.astype(np.float64), p1=p1, p0=p0,
        )

    @property
    def reps(self) -> int:
        return int(self.n.shape[0])

    @property
    def total(self) -> np.ndarray:
        return self.n.sum(axis=-1)

    @property
    def hits(self) -> np.ndarray:
        return self.k.sum(axis=-1)


def single(table: CountTable) -> CountTable:
    """The table with its groups pooled (metrics describe one population)."""
    return table.pooled_over_groups() if len(table.groups) > 1 else table


def safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), np.nan)


def test_prob(table: CountTable) -> np.ndarray:
    """Per-cell probability the calibration tests and the Cox fit read: the stated
    probability itself (the cell's mean on a pooled table), never continuity-corrected.

    A stated 0 or 100 keeps probability 0 or 1: under perfect calibration its outcome
    is certain (see :func:`impossible` for the outcomes it rules out)."""
    return np.clip(single(table).prob.astype(np.float64), 0.0, 1.0)


def accuracy_batch(s: CellStats) -> np.ndarray:
    return safe_div(s.hits.astype(np.float64), s.total.astype(np.float64))


def mean_confidence_batch(s: CellStats) -> np.ndarray:
    return safe_div(s.ps.sum(axis=-1), s.total.astype(np.float64))


def brier_batch(s: CellStats) -> np.ndarray:
    """Brier score (Brier 1950) per rep of :class:`CellStats`, from the cell sums.

    .. math:: \\mathrm{BS} = \\frac{1}{N} \\sum_i (p_i - y_i)^2
              = \\frac{1}{N} \\sum_c \\Big( \\sum p^2 - 2 \\sum p y + k \\Big)_c

    (``y^2 = y``), exact on a pooled table. Shape ``(reps,)``; NaN for an empty rep.
    """
    return safe_div((s.sq - 2 * s.py + s.k).sum(axis=-1), s.total.astype(np.float64))


def log_loss_batch(s: CellStats) -> np.ndarray:
    """Mean log loss per rep, ``-(1/N) sum_i [y_i ln p_i + (1 - y_i) ln(1 - p_i)]``,
    ``p`` clipped as in :func:`calib.table.nll`. Shape ``(reps,)``; NaN for an empty rep."""
    return safe_div(s.nl.sum(axis=-1), s.total.astype(np.float64))


def accuracy(table: CountTable) -> float | None:
    """Share of right answers, ``K / N``."""
    return finite_or_none(accuracy_batch(CellStats.of(table)))


def mean_confidence(table: CountTable) -> float | None:
    """Mean stated probability, ``sum p / N`` (exact on pooled tables)."""
    return finite_or_none(mean_confidence_batch(CellStats.of(table)))


def overconfidence(table: CountTable) -> float | None:
    """Calibration-in-the-large gap: mean stated probability minus accuracy.

    Positive when the model states more confidence than it earns."""
    s = CellStats.of(table)
    return finite_or_none(mean_confidence_batch(s) - accuracy_batch(s))


def brier(table: CountTable) -> float | None:
    """Brier score ``mean (p - y)^2`` (Brier 1950), exact from the cell sums."""
    return finite_or_none(brier_batch(CellStats.of(table)))


def brier_base_rate(table: CountTable) -> float | None:
    """Brier score of the constant forecast ``ybar`` (the data's own hit rate):
    ``ybar (1 - ybar)``."""
    a = accuracy(table)
    return None if a is None else a * (1 - a)


def brier_skill(table: CountTable) -> float | None:
    """Brier skill score against the base rate, ``1 - BS / (ybar (1 - ybar))``.

    Negative when the constant hit rate is the better forecast; ``None`` with one
    class only (the base rate is then perfect)."""
    s = CellStats.of(table)
    return finite_or_none(_skill(s))


def _skill(s: CellStats) -> np.ndarray:
    a = accuracy_batch(s)
    base = a * (1 - a)
    return 1 - safe_div(brier_batch(s), base)


def log_loss(table: CountTable) -> float | None:
    """Mean negative log-likelihood ``-mean(y log p + (1-y) log(1-p))``.

    ``p`` is clipped to ``[EPS, 1 - EPS]`` with :data:`calib.table.EPS` = 1e-15, so a
    wrong answer stated at 100 costs ``-log(1e-15) = 34.5`` nats instead of infinity
    (scikit-learn's ``log_loss`` clips the same way)."""
    return finite_or_none(log_loss_batch(CellStats.of(table)))
