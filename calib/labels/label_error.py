"""The reviewers' own error, and how far it could move the error among accepted items.

Contract
--------
The model (stated in every output): each reviewer's label is wrong with probability
``e``, independently of the other labels of the item. Two labels of one item then
disagree with probability

    d = 2 e (1 - e)        (the same error rate whether the answer is right or wrong)

so :func:`reviewer_error` estimates ``d`` from the double-coded items (one minus the
percent agreement of :func:`calib.labels.reviewers.matrix_agreement`, the share of
disagreeing pairs of labels per item averaged over the items with two labels or more,
with its bootstrap interval over items or clusters) and ``e = (1 - sqrt(1 - 2d)) / 2``
(``1/2`` when ``d >= 1/2``: labels no better than a coin). Without the symmetry (reviewers
miss wrong answers more often than they doubt right ones), with ``r_t`` the error rate on
items whose truth is ``t`` and each ``r_t <= 1/2``, ``d = 2 sum_t P(t) r_t (1 - r_t) >=
sum_t P(t) r_t``: the per-label error rate is at most ``d`` whatever its direction, and
``error_max`` is the upper end of ``d``'s interval.

:func:`accepted_error_bound` carries it into the audit sample's estimate of the error
among accepted items (:func:`calib.labels.estimate.accepted_error`, observed rate ``q``):

- the misclassification-adjusted estimate (Rogan & Gladen 1978, with sensitivity and
  specificity both ``1 - f``): ``p = (q - f) / (1 - 2 f)``, where ``f`` is the error rate
  of the audit items' final labels, the average over the labelled audit items of the
  chance that the majority of its ``k`` labels is wrong given no tie
  (``k = 1``: ``f = e``; an adjudicated item counts as one label); its interval takes ``q`` and ``e`` at the level
  ``1 - (1 - level)/2`` each (Bonferroni: both hold together at ``level`` or more), the
  lower end at ``(q_lo, e_hi)`` and the upper at ``(q_hi, e_lo)`` (``p`` falls as ``e``
  rises while ``q < 1/2``: symmetric label errors make the audit look worse, not better);
- the worst case, whatever the direction of the reviewers' errors:
  ``[q_lo - f_max, q_hi + f_max]`` (the true rate and the labelled one differ by at most
  the share of final labels that are wrong), ``f_max = error_max`` (a majority of labels
  each wrong at most half the time on either kind of item errs less than one label, so
  this holds for items labelled several times too); with a ``target``, the certificate "error among accepted at most
  target" holds at the upper end of the reviewers' error when ``q_hi + f_max <= target``.

Assumptions: the double-coded items' reviewers err as those of the audit sample do, and
a reviewer's mistakes are independent of the other reviewers' (two reviewers fooled by
the same item make ``d`` understate ``e``). ``bench/sim_agreement.py --only error``
measures how often the bounds hold the true rate.

Reference: W. J. Rogan and B. Gladen, "Estimating prevalence from the results of a
screening test", American Journal of Epidemiology 107 (1978) 71-76.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from calib.errors import CalibError
from calib.estimates import Estimate
from calib.labels.estimate import AcceptedError, accepted_error
from calib.labels.outcomes import votes
from calib.labels.records import Label
from calib.labels.reviewers import _units, label_matrix, matrix_agreement, stat_dict
from calib.rows import Judgments

#: The model in words, output beside every figure of this module.
MODEL = (
    "each label is wrong with probability e, independently of the item's other labels; two labels "
    "disagree with probability 2e(1-e)"
)
#: :attr:`Estimate.method` of ``e``'s interval: ``d``'s ends mapped (:func:`symmetric_error` rises with ``d``).
MAPPED = "the disagreement's interval, each end mapped by e = (1 - sqrt(1 - 2d)) / 2"
#: :attr:`Estimate.method` of the adjusted error's interval (see the module).
ROGAN_GLADEN = ("Rogan-Gladen at the ends of the observed rate's and the reviewers' error's intervals, each at "
                "1 - (1 - level)/2 (Bonferroni)")


def symmetric_error(d: float) -> float:
    """``e`` with ``2 e (1 - e) = d`` and ``e <= 1/2`` (``1/2`` for ``d >= 1/2``)."""
    d = min(max(float(d), 0.0), 0.5)
    return (1.0 - np.sqrt(1.0 - 2.0 * d)) / 2.0


def majority_error(e: float, k: np.ndarray) -> np.ndarray:
    """Per item with ``k`` counted labels, the chance its majority is wrong given no tie,
    each label wrong with probability ``e`` independently."""
    k = np.asarray(k, dtype=np.int64)
    out = np.empty(k.size)
    for kk in np.unique(k):
        j = np.arange(kk + 1)
        pmf = stats.binom.pmf(j, kk, e)
        wrong = pmf[j > kk / 2].sum()
        tie = pmf[j == kk / 2].sum() if kk % 2 == 0 else 0.0
        out[k == kk] = wrong / (1 - tie) if tie < 1 else 0.0
    return out


@dataclass(frozen=True)
class ReviewerError:
    """The reviewers' error rate from the double-coded items (see the module).

    Attributes
    ----------
    items:
        Double-coded items (two labels or more that say right or wrong).
    disagreement:
        ``d``, the share of disagreeing pairs of labels, with its interval (an
        :class:`~calib.estimates.Estimate`; value ``None`` without double-coded items).
    error:
        ``e`` under the model, with its interval (``d``'s ends mapped, :data:`MAPPED`).
    error_max:
        The upper end of ``d``'s interval: the per-label error rate at most, whatever the
        direction of the errors.
    level:
        The interval level.
    """

    items: int
    disagreement: Estimate
    error: Estimate
    error_max: float | None
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "double_coded": self.items,
            "disagreement": stat_dict(self.disagreement),
            "error": stat_dict(self.error),
            "error_max": self.error_max,
            "level": self.level,
            "model": MODEL,
            "sentence": self.sentence(),
        }

    def sentence(self) -> str:
        e = self.error
        if e.value is None or e.lo is None or e.hi is None or self.error_max is None:
            return "No item has two labels: no estimate of the reviewers' error rate."
        return (
            f"Reviewers' error rate {e.value:.1%} ({self.level:.0%} interval {e.lo:.1%} to "
            f"{e.hi:.1%}) from {self.items:,} double-coded items, if each label errs independently "
            f"and as often on right as on wrong answers; whatever the direction of the errors, at most "
            f"{self.error_max:.1%}."
        )


def _list(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else list(ci)


def reviewer_error(
    labels: Sequence[Label],
    *,
    clusters: Mapping[str, Hashable] | None = None,
    reps: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    dataset: str | None = None,
) -> ReviewerError:
    """The reviewers' error rate from the double-coded items of ``labels`` (see the module)."""
    items, _, m, _ = label_matrix(labels, dataset=dataset)
    unit, _ = _units(items, clusters)
    st, double = matrix_agreement(m, unit, reps=reps, seed=seed, level=level)
    return error_of(st["percent_agreement"], double, level)


def error_of(agree: Estimate, items: int, level: float) -> ReviewerError:
    """:class:`ReviewerError` from the percent agreement with its interval."""
    if agree.value is None:
        none = Estimate.point(None)
        return ReviewerError(items, none, none, None, level)
    d = 1.0 - agree.value
    if agree.lo is None or agree.hi is None:
        return ReviewerError(items, Estimate.point(d), Estimate.point(symmetric_error(d)), None, level)
    d_lo, d_hi = 1.0 - agree.hi, 1.0 - agree.lo
    return ReviewerError(items, Estimate(d, d_lo, d_hi, agree.level, agree.method),
                         Estimate(symmetric_error(d), symmetric_error(d_lo), symmetric_error(d_hi), agree.level, MAPPED),
                         min(d_hi, 1.0), level)


@dataclass(frozen=True)
class ErrorBound:
    """The error among accepted items under the reviewers' error (see the module).

    Attributes
    ----------
    observed:
        The audit sample's estimate (:class:`calib.labels.estimate.AcceptedError`) at the
        level ``1 - (1 - level)/2``.
    reviewers:
        :class:`ReviewerError` at that level too.
    final_error, final_error_max:
        ``f`` at ``e`` (the error rate of the audit items' final labels under the model)
        and ``f_max`` (at most, any direction).
    adjusted:
        The Rogan-Gladen estimate with its interval at ``level`` (Bonferroni,
        :data:`ROGAN_GLADEN`), an :class:`~calib.estimates.Estimate`.
    worst_ci:
        The worst-case interval, any direction of the errors.
    target, holds:
        The certificate's target error rate and whether it holds at the upper end of the
        reviewers' error (``worst_ci[1] <= target``); ``None`` without a target.
    level:
        The level the bounds hold at together.
    """

    observed: AcceptedError
    reviewers: ReviewerError
    final_error: float | None
    final_error_max: float | None
    adjusted: Estimate
    worst_ci: tuple[float, float] | None
    target: float | None
    holds: bool | None
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "observed": {"estimate": self.observed.rate.value, "ci": self.observed.rate.to_list(),
                         "level": self.observed.level},
            "reviewer_error": self.reviewers.to_dict(),
            "final_label_error": {"estimate": self.final_error, "max": self.final_error_max},
            "adjusted": {**stat_dict(self.adjusted),
                         "method": "misclassification-adjusted (Rogan-Gladen), symmetric label errors"},
            "worst_case": {"ci": _list(self.worst_ci), "method": "any direction of the label errors"},
            "target": self.target,
            "holds_at_max_reviewer_error": self.holds,
            "level": self.level,
            "model": MODEL,
            "sentence": self.sentence(),
        }

    def sentence(self) -> str:
        adj = self.adjusted
        if adj.value is None or adj.lo is None or adj.hi is None or self.worst_ci is None:
            return ("No estimate of how the reviewers' error moves the error among accepted items (no labelled "
                    "audit item, or no double-coded item).")
        lvl = f"{self.level:.0%}"
        text = (
            f"Allowing for the reviewers' error: error among accepted {adj.value:.1%} ({lvl} interval "
            f"{adj.lo:.1%} to {adj.hi:.1%}) if label errors are as likely either way; "
            f"whatever their direction, {self.worst_ci[0]:.1%} to {self.worst_ci[1]:.1%}"
        )
        if self.target is not None:
            text += (f"; the certificate (at most {self.target:.1%}) "
                     + ("still holds" if self.holds else "does not hold") + " at the upper end of the reviewers' error")
        return text + "."


def _rg(q: float, f: float) -> float:
    """Rogan-Gladen: the true rate whose labels, each wrong with probability ``f``, show ``q``."""
    return float(np.clip((q - f) / (1 - 2 * f), 0.0, 1.0)) if f < 0.5 else float("nan")


def accepted_error_bound(
    rows: Judgments,
    labels: Sequence[Label],
    threshold: float,
    *,
    target: float | None = None,
    clusters: Mapping[str, Hashable] | None = None,
    reps: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    dataset: str | None = None,
) -> ErrorBound:
    """The audit sample's error among accepted at ``threshold`` under the reviewers' own
    error (see the module); ``target`` the certificate's error rate, if any."""
    if not 0 < level < 1:
        raise CalibError(f"the interval level must be between 0 and 1, got {level!r}")
    if target is not None and not 0 <= target <= 1:
        raise CalibError(f"the target error rate must be between 0 and 1, got {target!r}")
    each = 1 - (1 - level) / 2
    obs = accepted_error(rows, labels, threshold, level=each, dataset=dataset)
    rev = reviewer_error(labels, clusters=clusters, reps=reps, seed=seed, level=each, dataset=dataset)
    none = ErrorBound(obs, rev, None, None, Estimate.point(None), None, target, None, level)
    e, q = rev.error, obs.rate
    if q.value is None or q.lo is None or q.hi is None or e.value is None or e.lo is None or e.hi is None:
        return none
    v = votes(rows, [lab for lab in labels if lab.kind == "audit"], dataset=dataset)
    decided = (v.right != v.wrong) & (v.adjudicated < 0)
    k = (v.right + v.wrong)[decided]
    k = np.r_[k, np.ones(int((v.adjudicated >= 0).sum()), dtype=np.int64)]  # an adjudication: one label
    k = k if k.size else np.ones(1, dtype=np.int64)

    def f(e: float) -> float:
        return float(majority_error(min(e, 0.5), k).mean())

    f_max = min(float(rev.error_max if rev.error_max is not None else 1.0), 1.0)
    adj_ci = (_rg(q.lo, f(e.hi)), _rg(q.hi, f(e.lo)))
    adjusted = _rg(q.value, f(e.value))
    if not all(np.isfinite([adjusted, *adj_ci])):
        return none
    adj_ci = (min(adj_ci[0], adjusted), max(adj_ci[1], adjusted))
    worst = (max(q.lo - f_max, 0.0), min(q.hi + f_max, 1.0))
    return ErrorBound(
        observed=obs, reviewers=rev, final_error=f(e.value), final_error_max=f_max,
        adjusted=Estimate(adjusted, adj_ci[0], adj_ci[1], level, ROGAN_GLADEN), worst_ci=worst, target=target, holds=None if target is None else worst[1] <= target,
        level=float(level),
    )
