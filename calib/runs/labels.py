"""Reviewers' labels: read and written, the audit on them (their verdicts as outcomes), the
agreement among the reviewers and the error it implies (:mod:`calib.labels`)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from calib.dataset import Dataset
from calib.labels import (
    AcceptedError,
    Agreement,
    HumanOutcomes,
    Label,
    labels_to_csv,
    labels_to_jsonl,
    read_labels,
)
from calib.runs.settings import Settings

if TYPE_CHECKING:
    from calib.labels.label_error import ReviewerError
    from calib.labels.reviewers import ReviewerAgreement

__all__ = ["Label", "LabelledAudit", "Reviewers", "labels_to_csv", "labels_to_jsonl", "read_any_labels", "read_labels",
           "read_reviewer_labels", "reviewers",
           "with_labels"]


@dataclass(frozen=True, eq=False)
class LabelledAudit:
    """A dataset with the reviewers' labels as its outcomes, and what the labels say: how
    many labelled and changed, their agreement with the file's outcomes, the audit sample's
    estimate of the error among the accepted at ``threshold``."""

    dataset: Dataset
    outcomes: HumanOutcomes
    agreement: Agreement
    accepted_error: AcceptedError
    threshold: float


def with_labels(ds: Dataset, labels: Sequence[Label], s: Settings, *, threshold: float | None = None,
                dataset: str | None = None) -> LabelledAudit:
    """``ds`` with each labelled item's outcome replaced by the reviewers' verdict
    (:func:`calib.labels.with_human_outcomes`), the agreement of the labels with the file's
    outcomes (:func:`calib.labels.agreement`) and the error among the accepted at
    ``threshold`` (default: the scale's review threshold, :func:`calib.routing.default_thresholds`)
    (:func:`calib.labels.accepted_error`). ``ds`` must have rows."""
    from calib.labels import accepted_error, agreement, with_human_outcomes
    from calib.routing import default_thresholds
    from calib.table import from_judgments

    assert ds.rows is not None
    t = float(default_thresholds(ds.table.scale)[0]) if threshold is None else float(threshold)
    rows, outcomes = with_human_outcomes(ds.rows, labels, dataset=dataset)
    agree = agreement(ds.rows, labels, reps=s.reps, seed=s.seed, level=s.level, dataset=dataset)
    est = accepted_error(ds.rows, labels, t, level=s.level, dataset=dataset)
    return LabelledAudit(replace(ds, table=from_judgments(rows), rows=rows), outcomes, agree, est, t)


@dataclass(frozen=True, eq=False)
class Reviewers:
    """The agreement among the reviewers of a labels file and the reviewers' error rate it
    implies (from the double-coded items), with the file's bad-line messages."""

    agreement: ReviewerAgreement
    error: ReviewerError
    messages: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """What ``calib labels agreement --json`` prints (without the file's name)."""
        return {**self.agreement.to_dict(), "reviewer_error": self.error.to_dict(), "messages": list(self.messages)}


def read_reviewer_labels(labels: Any) -> tuple[tuple[Label, ...], tuple[str, ...]]:
    """Labels and bad-line messages of a labels file's path or bytes, or records as they are
    (:func:`calib.labels.reviewers.as_labels`)."""
    from calib.labels.reviewers import as_labels

    return as_labels(labels)


def reviewers(labels: Sequence[Label], s: Settings, *, messages: Sequence[str] = (),
              clusters: Mapping[str, Hashable] | None = None, dataset: str | None = None) -> Reviewers:
    """The reviewers' agreement with its bootstrap at the settings and the reviewers' error
    from the percent agreement: the labels-only part of the owner's review report
    (:func:`calib.labels.report.review_report`, the one composition of both)."""
    from calib.labels.report import review_report

    rep = review_report(labels, None, clusters=clusters, reps=s.reps, seed=s.seed, level=s.level, dataset=dataset)
    return Reviewers(rep.agreement, rep.reviewer_error, tuple(messages))


def read_any_labels(data: bytes, name: str, *, options: Any = None) -> tuple[tuple[Label, ...], tuple[str, ...]]:
    """Labels from a labels file, or from a final-labels file as adjudications (one per
    item with a final label): :func:`calib.labels.handoff.read_any_labels`."""
    from calib.labels.handoff import read_any_labels as run

    return run(data, name, options=options)
