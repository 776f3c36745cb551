"""What a share's labels say, in one call: agreement, the file against the final labels,
and the reviewers' own error carried into the error among accepted items.

Contract
--------
:func:`review_report` composes the engine's functions once, so that the owner's Review
page, the hand-off export and ``calib labels agreement --json`` report the same figures:

- :func:`calib.labels.reviewers.reviewer_agreement`: Cohen's kappa (two reviewers),
  Fleiss' kappa, Krippendorff's alpha and the percent agreement with their bootstrap
  intervals, per-reviewer agreement with the final labels, the final labels;
- :func:`calib.labels.label_error.error_of` on that percent agreement: the reviewers'
  error rate and its interval at the same level (what ``calib labels agreement`` prints);
- with judgments that carry outcomes (``rows``): :func:`calib.labels.reviewers.outcomes_vs_final`
  (sensitivity, specificity, accuracy with Wilson intervals, the confusion matrix) and,
  with a ``threshold``, :func:`calib.labels.label_error.accepted_error_bound` (the error
  among accepted under the reviewers' error, and whether the certificate's ``target``
  holds at its upper end).

:meth:`ReviewReport.agreement_dict` is exactly the JSON object ``calib labels agreement
LABELS --json`` prints for the same labels, bootstrap settings and dataset (less the
``file`` and ``messages`` keys, which are the command's).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from calib.labels.label_error import ErrorBound, ReviewerError, accepted_error_bound, error_of
from calib.labels.records import Label
from calib.labels.reviewers import OutcomesVsFinal, ReviewerAgreement, outcomes_vs_final, reviewer_agreement
from calib.rows import Judgments


@dataclass(frozen=True)
class ReviewReport:
    """Agreement, the reviewers' error and (with a judgments file) the file against the
    final labels and the error bound (see the module).

    Attributes
    ----------
    agreement:
        :class:`calib.labels.reviewers.ReviewerAgreement`.
    reviewer_error:
        :class:`calib.labels.label_error.ReviewerError` at the agreement's level.
    outcomes:
        :class:`calib.labels.reviewers.OutcomesVsFinal`; ``None`` without outcomes.
    bound:
        :class:`calib.labels.label_error.ErrorBound`; ``None`` without outcomes or threshold.
    """

    agreement: ReviewerAgreement
    reviewer_error: ReviewerError
    outcomes: OutcomesVsFinal | None
    bound: ErrorBound | None

    def agreement_dict(self) -> dict[str, Any]:
        """What ``calib labels agreement --json`` prints (without ``file`` and ``messages``)."""
        return {**self.agreement.to_dict(), "reviewer_error": self.reviewer_error.to_dict()}

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.agreement_dict(),
            "outcomes_vs_final": None if self.outcomes is None else self.outcomes.to_dict(),
            "error_bound": None if self.bound is None else self.bound.to_dict(),
        }


def review_report(
    labels: Sequence[Label],
    rows: Judgments | None = None,
    *,
    threshold: float | None = None,
    target: float | None = None,
    clusters: Mapping[str, Hashable] | None = None,
    reps: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    dataset: str | None = None,
) -> ReviewReport:
    """Every figure of a share's labels (see the module). ``rows``, judgments with
    outcomes (not traffic), give the file against the final labels; with ``threshold`` too, the bound
    on the error among accepted under the reviewers' error (``target``: the certificate's
    error rate)."""
    agree = reviewer_agreement(labels, clusters=clusters, reps=reps, seed=seed, level=level, dataset=dataset)
    error = error_of(agree.percent_agreement, agree.double_coded, level)
    outcomes = bound = None
    if rows is not None:
        outcomes = outcomes_vs_final(rows, labels, level=level, dataset=dataset)
        if threshold is not None:
            bound = accepted_error_bound(rows, labels, threshold, target=target, clusters=clusters, reps=reps,
                                         seed=seed, level=level, dataset=dataset)
    return ReviewReport(agree, error, outcomes, bound)
