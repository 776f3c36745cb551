"""Reviewers' labels: what they are shown, what they say, and what that tells the audit.

- :mod:`~calib.labels.records`: the :class:`Label` record, the item key labels are joined
  on, JSONL/CSV export and import, the current label per reviewer.
- :mod:`~calib.labels.plan`: the review queue and the stratified audit sample of the
  items accepted unseen (:func:`review_plan`).
- :mod:`~calib.labels.outcomes`: the reviewers' verdicts as outcomes (:func:`with_human_outcomes`).
- :mod:`~calib.labels.final`: the final-label rule (adjudicated, else majority; ties and
  unsure not counted: :func:`final_labels`).
- :mod:`~calib.labels.agreement`: Cohen's kappa of the file's outcomes and the reviewers, and
  between reviewers (:func:`agreement`); Fleiss' kappa, Krippendorff's alpha, percent agreement.
- :mod:`~calib.labels.reviewers`: agreement among reviewers of a labels file with bootstrap
  intervals (:func:`reviewer_agreement`), the file's outcomes against the final labels.
- :mod:`~calib.labels.label_error`: the reviewers' error rate and its bound on the error
  among accepted (:func:`~calib.labels.label_error.accepted_error_bound`).
- :mod:`~calib.labels.estimate`: the error rate among items accepted unseen from the labelled
  audit sample, stratified, with a Korn-Graubard interval (:func:`accepted_error`).
- :mod:`~calib.labels.card`: what the review card shows of an item (question, answer,
  reference, rationale; detected or overridden).
- :mod:`~calib.labels.report`: all of the above on a share's labels in one call
  (:func:`~calib.labels.report.review_report`: the owner's Review page).
- :mod:`~calib.labels.handoff`: final labels, assignment and agreement as JSONL/CSV records,
  read back; a final-labels file read as adjudications.
"""

from calib.labels.agreement import Agreement, agreement, cohen_kappa
from calib.labels.estimate import AcceptedError, StratumError, accepted_error
from calib.labels.final import FinalLabels, final_labels
from calib.labels.outcomes import HumanOutcomes, with_human_outcomes
from calib.labels.plan import ReviewItem, ReviewPlan, Stratum, review_plan
from calib.labels.records import (
    ADJUDICATION,
    KINDS,
    MAX_NOTE_CHARS,
    Label,
    check_label,
    current,
    item_keys,
    label_problem,
    labels_to_csv,
    labels_to_jsonl,
    now,
    read_labels,
)

__all__ = [
    "ADJUDICATION",
    "AcceptedError",
    "FinalLabels",
    "final_labels",
    "Agreement",
    "HumanOutcomes",
    "StratumError",
    "accepted_error",
    "agreement",
    "cohen_kappa",
    "with_human_outcomes",
    "KINDS",
    "MAX_NOTE_CHARS",
    "Label",
    "ReviewItem",
    "ReviewPlan",
    "Stratum",
    "check_label",
    "current",
    "item_keys",
    "label_problem",
    "labels_to_csv",
    "labels_to_jsonl",
    "now",
    "read_labels",
    "review_plan",
]
