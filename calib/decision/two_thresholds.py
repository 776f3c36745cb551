"""Two thresholds certified together (issue 28, item 4): below the lower one an item goes to a
person, at or above the upper one it is accepted unseen, in between (the middle band) it goes
to a second judge.

Contract
--------
:func:`two_thresholds` returns a :class:`TwoThresholds`: the pair ``(lower, upper)`` chosen,
and with probability at least ``1 - delta`` over the data, *both* the error among the items
accepted unseen (score at or above ``upper``) is at most ``alpha`` *and* the share of items
sent to a person (score below ``lower``) is at most ``beta``; the p-value of every pair of
the grid (for the map, :func:`calib.present.two_thresholds.pvalue_map`) and the valid region.

Multi-risk Learn-then-Test
--------------------------
Angelopoulos, Bates, Candes, Jordan & Lei (2021), *Learn then Test*, with two risks as
MAPIE's ``BinaryClassificationController`` does: the pair ``(l, u)`` is valid when both
``H_err(u): err(u) > alpha`` and ``H_share(l): share(l) > beta`` are rejected, its p-value
``max(p_err(u), p_share(l))`` with the exact binomial tails
``p_err(u) = P(Bin(n_acc(u), alpha) <= e(u))`` and ``p_share(l) = P(Bin(N, beta) <= m(l))``
(``m(l)`` the items below ``l``). A pair is declared valid wrongly only when one of its two
marginal hypotheses is true and rejected, so controlling the family-wise error over the
marginal hypotheses controls it over every pair. Two procedures:

- ``"fixed-sequence"`` (default): the upper thresholds tested strictest first at level
  ``delta / 2`` (:func:`calib.decision.risk.fixed_sequence`, from the first that could be
  rejected), the lower ones loosest first (fewest items to a person) at ``delta / 2``, each
  chain stopping at its first failure; Bonferroni over the two chains. The valid region is
  ``{l <= l*} x {u >= u*}`` (with ``l <= u``).
- ``"bonferroni"``: every pair of the grid tested at ``delta / m`` (``m`` pairs), the region
  the pairs whose p-value is at most that.

The pair chosen is the valid pair with the fewest items in the middle band (ties: the fewest
to a person): with fixed-sequence, ``u = u*`` and ``l = min(l*, u*)``. Candidates are the
distinct scores (more than :data:`calib.decision.risk.GRID_ABOVE`: :data:`GRID` quantiles of
the scores, fixed without outcomes). Independent rows only: clustered rows (Inspect epochs,
repeated ids) are refused with a message, as the binomial would not hold.
``bench/sim_judge_change.py`` (b) measures the share of datasets whose chosen pair breaks
either guarantee in the population (target at most ``delta``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from calib import routing
from calib.dataset import Data, table_and_rows
from calib.decision.risk import GRID_ABOVE, check_levels, cp_upper, tail_pvalue
from calib.errors import CalibError
from calib.numbers import finite_or_none, plain

#: Testing procedures.
PROCEDURES: tuple[str, ...] = ("fixed-sequence", "bonferroni")
#: Score quantiles tested when the score takes more than GRID_ABOVE distinct values.
GRID = 50


@dataclass(frozen=True)
class TwoThresholds:
    """The pair certified (``lower``/``upper`` ``None`` when no pair is valid: every item to a
    person), its counts and bounds, and the grid's p-values (``pvalues[i, j]`` for lower
    ``grid[i]`` and upper ``grid[j]``, NaN where ``lower > upper``) with the valid region."""

    lower: float | None
    upper: float | None
    total: int
    accepted: int
    errors: int
    middle: int
    to_person: int
    error_upper: float | None
    share_upper: float | None
    target_error: float
    max_review_share: float
    confidence: float
    procedure: str
    grid: np.ndarray
    pvalues: np.ndarray
    valid: np.ndarray
    level: float
    message: str

    @property
    def holds(self) -> bool:
        return self.lower is not None

    def to_dict(self) -> dict[str, Any]:
        n = self.total
        return plain({
            "lower": self.lower, "upper": self.upper, "holds": self.holds, "total": n,
            "accepted": self.accepted, "errors": self.errors, "error_rate": self.errors / self.accepted
            if self.accepted else None, "error_upper": self.error_upper, "middle": self.middle,
            "middle_share": self.middle / n if n else None, "to_person": self.to_person,
            "to_person_share": self.to_person / n if n else None, "to_person_upper": self.share_upper,
            "target_error": self.target_error, "max_review_share": self.max_review_share,
            "confidence": self.confidence, "procedure": self.procedure, "test_level": self.level,
            "valid_pairs": int(self.valid.sum()), "pairs": int(np.isfinite(self.pvalues).sum()),
            "grid": [float(x) for x in self.grid], "message": self.message,
            "method": "multi-risk Learn-then-Test (Angelopoulos et al. 2021), exact binomial p-values, "
                      + ("two fixed sequences, Bonferroni over them" if self.procedure == "fixed-sequence"
                         else "Bonferroni over the pair grid"),
        })


def _grid(score: np.ndarray, cum_n: np.ndarray) -> np.ndarray:
    """Indices into ``score`` of the candidate thresholds (see the module docstring)."""
    if score.size <= GRID_ABOVE:
        return np.arange(score.size)
    total = cum_n[-1]
    below = np.ceil(np.arange(GRID) * total / GRID)  # at the j-th, about j/GRID of the rows lie below
    return np.unique(np.searchsorted(cum_n[:-1], below, side="left").clip(0, score.size - 1))


def share_pvalue(below: np.ndarray, total: int, cap: float) -> np.ndarray:
    """``P(Bin(N, beta) <= m)``: the exact p-value of ``share > beta`` with ``m`` of ``N`` below."""
    m = np.asarray(below, np.float64)
    ok = m < total
    with np.errstate(invalid="ignore", divide="ignore"):
        p = special.betainc(np.where(ok, total - m, 1.0), m + 1.0, 1.0 - cap)
    return np.where(ok, p, 1.0)


def _chain(p: np.ndarray, level: float) -> int:
    """How many of ``p`` (in testing order) the fixed sequence rejects at ``level``."""
    fail = np.flatnonzero(p > level)
    return int(fail[0]) if fail.size else int(p.size)


def two_thresholds(
    data: Data, *, target_error: float, max_review_share: float, confidence: float = 0.95,
    procedure: str = "fixed-sequence",
) -> TwoThresholds:
    """The pair of thresholds of the module docstring, on the stated scale."""
    target_error, confidence = check_levels(target_error, confidence)
    max_review_share, _ = check_levels(max_review_share, confidence)
    if procedure not in PROCEDURES:
        raise CalibError(f"unknown procedure {procedure!r} for two thresholds: choose one of {', '.join(PROCEDURES)}")
    table, rows = table_and_rows(data)
    if table.clusters is not None or (rows is not None and rows.cluster is not None):
        raise CalibError("two thresholds: the rows are clustered (repeated ids or epochs); the joint certificate "
                         "needs independent items (give --cluster-key none if they are independent)")
    b = routing.basis(table)
    at = _grid(b.score, b.cum_n)
    score, below = b.score[at], b.cum_n[at].astype(np.float64)
    n = int(b.total)
    acc = n - below
    err = acc - (b.total_correct - b.cum_k[at])
    delta = 1.0 - confidence
    p_err = tail_pvalue(err, acc, target_error)
    p_share = share_pvalue(below, n, max_review_share)
    pairs = np.maximum(p_share[:, None], p_err[None, :])
    k = score.size
    pairs[np.tril_indices(k, -1)] = np.nan  # lower above upper: not a pair
    if procedure == "fixed-sequence":
        level = delta / 2
        testable = np.flatnonzero(acc * math.log1p(-target_error) <= math.log(level) + 1e-12)
        start = int(testable[-1]) if testable.size else -1
        ru = _chain(p_err[: start + 1][::-1], level) if start >= 0 else 0
        u_ok = np.zeros(k, bool)
        u_ok[start - ru + 1: start + 1] = ru > 0
        u_ok[start + 1:] = False
        rl = _chain(p_share, level)
        l_ok = np.arange(k) < rl
        valid = l_ok[:, None] & u_ok[None, :] & np.isfinite(pairs)
    else:
        m = int(np.isfinite(pairs).sum())
        level = delta / max(m, 1)
        valid = np.isfinite(pairs) & (np.nan_to_num(pairs, nan=2.0) <= level)
    return _choose(score, below, acc, err, n, pairs, valid, target_error, max_review_share, confidence, procedure,
                   level)


def _choose(score, below, acc, err, n, pairs, valid, alpha, beta, confidence, procedure, level
            ) -> TwoThresholds:  # noqa: ANN001 - internal: the pieces two_thresholds() computed
    """The valid pair with the fewest items in the middle band (ties: fewest to a person), in words."""
    if not valid.any():
        msg = (f"No pair of thresholds can be certified: with {confidence:.0%} confidence, at most "
               f"{alpha:.1%} wrong among the accepted and at most {beta:.1%} of the items to a person. "
               "Every item goes to a person.")
        return TwoThresholds(None, None, n, 0, 0, 0, n, None, None, alpha, beta, confidence, procedure, score,
                             pairs, valid, level, msg)
    i_idx, j_idx = np.nonzero(valid)
    middle = below[j_idx] - below[i_idx]
    best = np.lexsort((below[i_idx], middle))[0]
    i, j = int(i_idx[best]), int(j_idx[best])
    a, e, mid, person = int(acc[j]), int(err[j]), int(below[j] - below[i]), int(below[i])
    eu = finite_or_none(cp_upper(e, a, confidence)) if a else None
    su = finite_or_none(cp_upper(person, n, confidence))
    lo, up = float(score[i]), float(score[j])
    msg = (f"Below {lo:g}: to a person ({person:,} of {n:,}); from {up:g} up: accepted unseen ({a:,}); "
           f"in between: to the second judge ({mid:,}). With {confidence:.0%} confidence, at once, at most "
           f"{alpha:.1%} of the accepted are wrong and at most {beta:.1%} of the items go to a person.")
    return TwoThresholds(lo, up, n, a, e, mid, person, eu, su, alpha, beta, confidence, procedure, score, pairs,
                         valid, level, msg)
