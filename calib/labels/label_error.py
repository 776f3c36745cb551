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
from calib.labels.estimate import AcceptedError, accepted_error
from calib.labels.outcomes import votes
from calib.labels.records import Label
from calib.labels.reviewers import _units, label_matrix, matrix_agreement
from calib.rows import Judgments

#: The model in words, output beside every figure of this module.
MODEL = (
    "each label is wrong with probability e, independently of the item's other labels; two labels "
    "disagree with probability 2e(1-e)"
)


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
    disagreement, disagreement_ci:
        ``d``, the share of disagreeing pairs of labels, and its interval.
    error, error_ci:
        ``e`` under the model, and its interval (``d``'s ends mapped).
    error_max:
        The upper end of ``d``'s interval: the per-label error rate at most, whatever the
        direction of the errors.
    level:
        The interval level.
    """

    items: int
    disagreement: float | None
    disagreement_ci: tuple[float, float] | None
    error: float | None
    error_ci: tuple[float, float] | None
    error_max: float | None
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "double_coded": self.items,
            "disagreement": {"estimate": self.disagreement, "ci": _list(self.disagreement_ci)},
            "error": {"estimate": self.error, "ci": _list(self.error_ci)},
            "error_max": self.error_max,
            "level": self.level,
            "model": MODEL,
            "sentence": self.sentence(),
        }

    def sentence(self) -> str:
        if self.error is None or self.error_ci is None or self.error_max is None:
            return "No item has two labels: no estimate of the reviewers' error rate."
        return (
            f"Reviewers' error rate {self.error:.1%} ({self.level:.0%} interval {self.error_ci[0]:.1%} to "
            f"{self.error_ci[1]:.1%}) from {self.items:,} double-coded items, if each label errs independently "
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
    pa = st["percent_agreement"]
    return error_of(pa.value, pa.ci if pa.has_interval else None, double, level)


def error_of(agree: float | None, agree_ci: tuple[float, float] | None, items: int, level: float) -> ReviewerError:
    """:class:`ReviewerError` from the percent agreement and its interval."""
    if agree is None:
        return ReviewerError(items, None, None, None, None, None, level)
    d = 1.0 - agree
    d_ci = None if agree_ci is None else (1.0 - agree_ci[1], 1.0 - agree_ci[0])
    e_ci = None if d_ci is None else (symmetric_error(d_ci[0]), symmetric_error(d_ci[1]))
    return ReviewerError(items, d, d_ci, symmetric_error(d), e_ci, None if d_ci is None else min(d_ci[1], 1.0),
                         level)


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
    adjusted, adjusted_ci:
        The Rogan-Gladen estimate and its interval at ``level`` (Bonferroni).
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
    adjusted: float | None
    adjusted_ci: tuple[float, float] | None
    worst_ci: tuple[float, float] | None
    target: float | None
    holds: bool | None
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "observed": {"estimate": self.observed.estimate, "ci": [self.observed.lower, self.observed.upper],
                         "level": self.observed.level},
            "reviewer_error": self.reviewers.to_dict(),
            "final_label_error": {"estimate": self.final_error, "max": self.final_error_max},
            "adjusted": {"estimate": self.adjusted, "ci": _list(self.adjusted_ci),
                         "method": "misclassification-adjusted (Rogan-Gladen), symmetric label errors"},
            "worst_case": {"ci": _list(self.worst_ci), "method": "any direction of the label errors"},
            "target": self.target,
            "holds_at_max_reviewer_error": self.holds,
            "level": self.level,
            "model": MODEL,
            "sentence": self.sentence(),
        }

    def sentence(self) -> str:
        if self.adjusted is None or self.adjusted_ci is None or self.worst_ci is None:
            return ("No estimate of how the reviewers' error moves the error among accepted items (no labelled "
                    "audit item, or no double-coded item).")
        lvl = f"{self.level:.0%}"
        text = (
            f"Allowing for the reviewers' error: error among accepted {self.adjusted:.1%} ({lvl} interval "
            f"{self.adjusted_ci[0]:.1%} to {self.adjusted_ci[1]:.1%}) if label errors are as likely either way; "
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
    none = ErrorBound(obs, rev, None, None, None, None, None, target, None, level)
    if obs.estimate is None or obs.lower is None or obs.upper is None or rev.error is None or rev.error_ci is None:
        return none
    v = votes(rows, [lab for lab in labels if lab.kind == "audit"], dataset=dataset)
    decided = (v.right != v.wrong) & (v.adjudicated < 0)
    k = (v.right + v.wrong)[decided]
    k = np.r_[k, np.ones(int((v.adjudicated >= 0).sum()), dtype=np.int64)]  # an adjudication: one label
    k = k if k.size else np.ones(1, dtype=np.int64)

    def f(e: float) -> float:
        return float(majority_error(min(e, 0.5), k).mean())

    f_max = min(float(rev.error_max if rev.error_max is not None else 1.0), 1.0)
    adj_ci = (_rg(obs.lower, f(rev.error_ci[1])), _rg(obs.upper, f(rev.error_ci[0])))
    adjusted = _rg(obs.estimate, f(rev.error))
    if not all(np.isfinite([adjusted, *adj_ci])):
        return none
    adj_ci = (min(adj_ci[0], adjusted), max(adj_ci[1], adjusted))
    worst = (max(obs.lower - f_max, 0.0), min(obs.upper + f_max, 1.0))
    return ErrorBound(
        observed=obs, reviewers=rev, final_error=f(rev.error), final_error_max=f_max, adjusted=adjusted,
        adjusted_ci=adj_ci, worst_ci=worst, target=target, holds=None if target is None else worst[1] <= target,
        level=float(level),
    )
