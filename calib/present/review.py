"""The words of the review workflow (issue 25): the card's question and buttons, the
owner's workflow setting in a sentence, progress under assignment and adjudication.

A label is the reviewer's verdict on the **item's answer**, the meaning of the file's
outcome field; every sentence here says it in those words. User text (names, notes,
guidelines) never goes into these sentences: the pages show it with ``st.text``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from calib.present import format as fmt

if TYPE_CHECKING:
    from calib.labels.label_error import ErrorBound
    from calib.labels.reviewers import OutcomesVsFinal, ReviewerAgreement

#: The card's question: what a label answers.
CARD_QUESTION = "Is this answer right?"
RIGHT, WRONG, UNSURE, SKIP = "Right", "Wrong", "Unsure", "Skip"
#: Keyboard shortcuts of the card's buttons (Streamlit reserves C and R).
SHORTCUTS = {RIGHT: "Y", WRONG: "N", UNSURE: "U", SKIP: "K"}
BUTTON_HELP = {
    RIGHT: "This item's answer is right (stored as correct: true).",
    WRONG: "This item's answer is wrong (stored as correct: false).",
    UNSURE: "You cannot tell: stored as unsure, which counts as no vote.",
    SKIP: "Leave this item to others and go on (nothing is stored as a label).",
}
#: Titles of the card's fields, in the order shown.
CARD_FIELDS = {
    "question": "Question",
    "answer": "The answer under review",
    "reference": "Reference answer",
    "rationale": "The judge's rationale",
}
BLIND = (
    "Blind review: the judge's stated confidence and the file's outcome are hidden, so that they do not "
    "anchor your verdict. Other reviewers' labels are hidden from you; the owner sees them to adjudicate."
)
UNBLIND = "The owner shows the judge on this link: your labels are recorded as given with the judge shown."
#: The Routing page's review-queue download, in a blind reviewer's session.
QUEUE_WITHHELD = (
    "The review queue's download is withheld on this link: its owner runs a blind review, and the queue lists "
    "each item's stated confidence and the file's outcome."
)
#: The traffic certificate on the Review page, in a blind reviewer's session.
CERTIFICATE_WITHHELD = (
    "The progress toward the certificate is the owner's in a blind review: it counts the other reviewers' labels."
)
BLIND_WHY = "Why this item: the review plan chose it (the judge's score is hidden: blind review)."
DONE = "No item is left for you: every item has its planned labels, or you labelled or skipped it. Thank you."


def shortcuts_sentence() -> str:
    """The buttons and their keys, in one line."""
    return "Keys: " + ", ".join(f"{k} for {b}" for b, k in SHORTCUTS.items()) + "."


def workflow_sentence(assign: bool, overlap: float, k: int, reviewers: int, show_judge: bool) -> str:
    """The owner's workflow setting in one sentence."""
    who = f"the {reviewers:,} reviewers listed" if reviewers else "anyone with the link"
    if assign:
        text = (f"Assignment on: the server hands {who} their next item; {fmt.pct(overlap)} of the items are "
                f"planned for {k} labels each, the others for one")
    else:
        text = f"Assignment off: {who} move through the items freely"
    judge = "the judge is shown to reviewers (recorded with every label)" if show_judge else \
        "blind: the judge's confidence and the file's outcome are hidden from reviewers"
    return f"{text}; {judge}."


def progress_sentence(given: int, planned: int, complete: int, items: int) -> str:
    """Overall progress under assignment."""
    return f"{given:,} of {planned:,} planned labels given; {complete:,} of {items:,} items complete."


def disagreement_sentence(n: int) -> str:
    """How many items the owner may adjudicate."""
    if n == 0:
        return "No disagreement to adjudicate: every item with two or more verdicts has them all alike."
    return (f"{n:,} item(s) where reviewers disagree (or only said unsure): set the final label of each. "
            "An adjudication is appended to the history; the audit uses it in place of the majority.")


# ----------------------------------------------------------------- what the labels say (issue 25, items 6-7)
#: The agreement statistics' names on the owner's page, in output order.
AGREEMENT_NAMES = {
    "cohen_kappa": "Cohen's kappa (two reviewers)",
    "fleiss_kappa": "Fleiss' kappa",
    "krippendorff_alpha": "Krippendorff's alpha (nominal)",
    "percent_agreement": "Percent agreement",
}
AGREEMENT_CAPTION = (
    "Agreement among the reviewers, each reviewer's current label per item (unsure labels are no label); "
    "intervals from a Bayesian bootstrap over items with a Jeffreys prior."
)
OUTCOMES_CAPTION = (
    "The file's outcomes against the final labels (sensitivity: of the items the final labels call right, the "
    "share the file calls right; specificity: the same for wrong); Wilson intervals over items."
)
ERROR_CAPTION = (
    "The reviewers' own error, from the items labelled twice or more, and how far it could move the error "
    "among the accepted items of the audit sample."
)


def _stat_cell(key: str, value: float | None) -> str:
    return fmt.pct(value) if key == "percent_agreement" else fmt.num(value, 2)


def agreement_rows(agreement: ReviewerAgreement) -> list[dict[str, str]]:
    """One row per statistic of :class:`calib.labels.reviewers.ReviewerAgreement`:
    estimate, its interval with the level, and why it is missing or what it rests on."""
    level = agreement.level
    out = []
    for key, name in AGREEMENT_NAMES.items():
        s = getattr(agreement, key)
        out.append({"statistic": name, "estimate": _stat_cell(key, s.value),
                    "interval": fmt.level_interval(level, s.lo, s.hi, lambda x, k=key: _stat_cell(k, x)),
                    "note": s.note})
    return out


def per_reviewer_rows(agreement: ReviewerAgreement) -> list[dict[str, object]]:
    """Each reviewer's agreement with the final labels (user text: the name, shown in a table only)."""
    level = agreement.level
    return [{"reviewer": r.reviewer, "labels": r.labels, "compared with a final label": r.n, "agree": r.agree,
             "agreement": fmt.pct(r.share.value), "interval": fmt.level_interval(level, *r.share.ci, fmt.pct)}
            for r in agreement.per_reviewer]


def outcome_rows(outcomes: OutcomesVsFinal) -> tuple[list[dict[str, object]], list[dict[str, str]]]:
    """The confusion matrix (rows the file, columns the final label) and sensitivity,
    specificity and accuracy with their Wilson intervals, of
    :class:`calib.labels.reviewers.OutcomesVsFinal`."""
    (rr, rw), (wr, ww) = outcomes.confusion
    level = outcomes.level
    confusion = [{"file's outcome": "right", "final label: right": rr, "final label: wrong": rw},
                 {"file's outcome": "wrong", "final label: right": wr, "final label: wrong": ww}]
    stats = []
    for name in ("sensitivity", "specificity", "accuracy"):
        s = getattr(outcomes, name)
        stats.append({"figure": name.capitalize(), "estimate": fmt.pct(s.value),
                      "interval": fmt.level_interval(level, s.lo, s.hi, fmt.pct), "note": s.note})
    return confusion, stats


def certificate_line(bound: ErrorBound) -> str:
    """Whether the certificate holds at the upper end of the reviewers' error, or why it
    cannot be said."""
    holds, target = bound.holds, bound.target
    if target is None:
        return "No target error rate is set on the Routing page: no certificate to check."
    if holds is None:
        return f"Whether the certificate (at most {fmt.pct(target)}) holds cannot be said: no estimate above."
    return (f"The certificate (error among accepted at most {fmt.pct(target)}) "
            + ("still holds" if holds else "does not hold") + " at the upper end of the reviewers' error.")

#: The hand-off downloads of the owner's Review page, by kind (:data:`calib.labels.handoff.FIELDS`).
HANDOFF_KINDS = {
    "final": "Final labels (adjudicated, else the majority; ties and unsure-only without one)",
    "assignment": "Assignment (who labelled, holds, released or skipped which item; items nobody took)",
    "agreement": "Agreement (the figures of calib labels agreement --json)",
}
HANDOFF_CAPTION = (
    "The review's records for whoever takes it on; the same as `calib labels export --what final|assignment|"
    "agreement`. CSV cells that a spreadsheet would read as a formula start with an apostrophe. A final-labels "
    "file imports back (below, or with `calib audit FILE --labels final.csv`) as adjudications."
)
