"""The Review page's use cases: the labels a click writes, each reviewer's current labels,
the owner's adjudication and the disagreements awaiting it, the final labels, the card's
fields, everything computed from the labels so far, and what the labels say of themselves
(agreement, the reviewers' error: :func:`review_report`) and the hand-off of final labels,
assignment and agreement (:func:`handoff`) (:mod:`calib.labels`).

The store that keeps the labels is :mod:`calib.hosting.labels`; the plans the reviewers
label are :func:`calib.hosting.labels.plans_for`'s (a labelled file) and
:func:`calib.runs.traffic.review_plan`'s (traffic).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calib.dataset import Dataset
from calib.labels.records import ADJUDICATION, Label, current, labels_to_csv, labels_to_jsonl, read_labels
from calib.runs.settings import Settings

if TYPE_CHECKING:
    from calib.audit import Audit
    from calib.decision.risk import Recommendation
    from calib.labels.final import FinalLabels
    from calib.labels.plan import ReviewItem
    from calib.labels.report import ReviewReport
    from calib.runs.labels import LabelledAudit

__all__ = ["ADJUDICATION", "OWNER", "Label", "LabelsSoFar", "adjudication", "card_fields", "current",
           "disagreements", "final", "item_labels", "labels_so_far", "new_label", "labels_to_csv", "labels_to_jsonl",
           "read_labels", "review_report", "handoff", "handoff_file"]

#: Who an adjudication is by (the owner's final label of an item).
OWNER = "owner"


def new_label(item: ReviewItem, reviewer: str, dataset: str, correct: bool, *, unsure: bool = False,
              note: str = "") -> Label:
    """The label a Right / Wrong / Unsure click appends for ``item`` of ``dataset``."""
    return Label(item=item.item, correct=correct, note=note, reviewer=reviewer, kind=item.kind, dataset=dataset,
                 unsure=unsure)


def adjudication(item: ReviewItem, dataset: str, correct: bool) -> Label:
    """The owner's final label of ``item`` (appended: the history keeps every one)."""
    return Label(item=item.item, correct=correct, note="", reviewer=OWNER, kind=item.kind, dataset=dataset)


def final(history: Iterable[Label]) -> FinalLabels:
    """The final label of each item (:func:`calib.labels.final.final_labels`: adjudicated,
    else the majority; what the audit on the labels uses)."""
    from calib.labels.final import final_labels

    return final_labels(list(history))


def disagreements(history: Iterable[Label]) -> list[str]:
    """Items whose reviewers' current labels are not all alike (right beside wrong, or an
    unsure among two or more labels) and that have no adjudication, in the order they were
    first labelled."""
    fin = final(history)
    return [item for item, s, r, w, u in zip(fin.items, fin.status, fin.right, fin.wrong, fin.unsure, strict=True)
            if s != "adjudicated" and r + w + u >= 2 and (r and w or u)]


def item_labels(history: Iterable[Label], item: str) -> list[Label]:
    """Each reviewer's current label of ``item``, adjudications left out."""
    return [lab for lab in current(x for x in history if x.kind != ADJUDICATION) if lab.item == item]


def card_fields(data: bytes, filename: str, lines: Sequence[int], overrides: Mapping[str, str],
                exclude: Sequence[str]) -> dict[int, dict[str, str]]:
    """Question, answer, reference and rationale of the given lines of a file
    (:func:`calib.labels.card.card_fields`)."""
    from calib.labels.card import card_fields as run

    return run(data, filename, lines, dict(overrides), exclude)


@dataclass(frozen=True, eq=False)
class LabelsSoFar:
    """What the owner sees of the labels so far: the labelled audit (the agreement of the
    judge with the reviewers, the audit sample's estimate of the error among the accepted,
    the outcomes replaced), the audit on the reviewers' outcomes, and the threshold
    recommended on them."""

    labelled: LabelledAudit
    audit: Audit
    recommendation: Recommendation


def labels_so_far(ds: Dataset, history: Sequence[Label], s: Settings, *, threshold: float,
                  dataset: str) -> LabelsSoFar:
    """The reviewers' labels of ``dataset`` applied to ``ds`` (:func:`calib.runs.labels.with_labels`,
    what ``calib audit --labels`` computes), the audit on the reviewers' outcomes at the
    settings' bootstrap (:func:`calib.runs.audit.audit`) and the recommendation at the
    settings' target and confidence (:func:`calib.decision.recommend`). ``ds`` must have rows."""
    from calib.decision import recommend
    from calib.runs.audit import audit
    from calib.runs.labels import with_labels

    got = with_labels(ds, history, s, threshold=threshold, dataset=dataset)
    rows = got.dataset.rows
    assert rows is not None
    rec = recommend(rows, target=s.target_error, confidence=s.confidence, seed=s.seed or 0)
    return LabelsSoFar(got, audit(got.dataset, s), rec)


def review_report(history: Sequence[Label], s: Settings, ds: Dataset | None = None, *,
                  threshold: float | None = None, dataset: str = "") -> ReviewReport:
    """What the labels of ``dataset`` say (:func:`calib.labels.report.review_report`):
    agreement among the reviewers and each against the final labels, the reviewers' error
    rate, at the settings' bootstrap; with ``ds`` (a labelled file with rows, not traffic)
    the file's outcomes against the final labels and, at ``threshold``, the error among
    accepted under the reviewers' error with the certificate at the settings' target."""
    from calib.labels.report import review_report as run

    rows = ds.rows if ds is not None else None
    return run(list(history), rows, threshold=threshold if rows is not None else None,
               target=s.target_error if rows is not None else None, reps=s.reps, seed=s.seed or 0, level=s.level,
               dataset=dataset)


def handoff(kind: str, history: Sequence[Label], s: Settings, *, dataset: str = "",
            report: ReviewReport | None = None,
            assignment: Sequence[tuple[str, int, str, str, str]] = ()) -> list[dict[str, Any]]:
    """The hand-off records of ``kind`` (:mod:`calib.labels.handoff`): ``final`` from the
    labels of ``dataset``; ``agreement`` from ``report`` (else :func:`review_report` of the
    labels alone at the settings' bootstrap); ``assignment`` from the share store's rows
    (:meth:`calib.hosting.assignment.AssignmentCatalog.assignment_rows`)."""
    from calib.errors import CalibError
    from calib.labels import handoff as ho

    if kind == "final":
        return ho.final_records([lab for lab in history if lab.dataset == dataset], dataset=dataset)
    if kind == "agreement":
        return ho.agreement_records(report or review_report(history, s, dataset=dataset), dataset=dataset)
    if kind == "assignment":
        return ho.assignment_records(assignment, dataset)
    raise CalibError(f"no hand-off called {kind!r}: final, assignment or agreement")


def handoff_file(records: Sequence[dict[str, Any]], kind: str, fmt: str) -> bytes:
    """``records`` of ``kind`` as JSONL or spreadsheet-safe CSV (``fmt``: ``"jsonl"`` or
    ``"csv"``; :func:`calib.labels.handoff.to_jsonl`, :func:`~calib.labels.handoff.to_csv`)."""
    from calib.labels import handoff as ho

    return (ho.to_csv if fmt == "csv" else ho.to_jsonl)(records, kind)
