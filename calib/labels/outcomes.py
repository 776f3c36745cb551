"""Reviewers' labels as the outcome: each labelled item takes the reviewers' verdict.

Contract
--------
:func:`votes` joins the current labels (:func:`calib.labels.records.current`: the latest
per reviewer) to the rows by item key (:func:`calib.labels.records.item_keys`) and counts,
per item, the reviewers who say right and wrong; labels whose item is not in the rows are
counted and named, never dropped silently. :func:`with_human_outcomes` turns the votes into
outcomes: the majority of the reviewers' current labels, a tie keeping the file's outcome
(and counted). :func:`calib.labels.agreement` and :func:`calib.labels.estimate` build on the
same votes, so every face counts a label the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from calib.labels.records import Label, current, for_dataset, item_keys, parse_time
from calib.rows import Judgments

#: How many unknown item keys a summary names.
SHOW_UNKNOWN = 5


@dataclass(frozen=True, eq=False)
class Votes:
    """The current labels joined to the rows.

    Attributes
    ----------
    labels:
        The current labels whose item is in the rows, in order.
    row:
        Per label in :attr:`labels`, its row index.
    items:
        Row indices of the labelled items, increasing.
    right, wrong:
        Per labelled item, how many reviewers' current labels say right and wrong.
    kind:
        Per labelled item, the kind of its latest label (``"queue"`` or ``"audit"``).
    unknown:
        Labels whose item is not in the rows.
    unknown_items:
        The first :data:`SHOW_UNKNOWN` such item keys, in order.
    """

    labels: tuple[Label, ...]
    row: np.ndarray
    items: np.ndarray
    right: np.ndarray
    wrong: np.ndarray
    kind: np.ndarray
    unknown: int
    unknown_items: tuple[str, ...]

    @property
    def reviewers(self) -> int:
        return len({lab.reviewer for lab in self.labels})


def votes(rows: Judgments, labels: Sequence[Label], *, dataset: str | None = None) -> Votes:
    """Join the current labels of ``dataset`` (all, when the labels name one dataset
    only: :func:`calib.labels.records.for_dataset`) to ``rows`` by item key."""
    cur = current(for_dataset(labels, dataset))
    keys = item_keys(rows)
    where = {str(k): i for i, k in enumerate(keys)}
    known: list[Label] = []
    row: list[int] = []
    unknown: list[str] = []
    for lab in cur:
        i = where.get(lab.item)
        if i is None:
            unknown.append(lab.item)
        else:
            known.append(lab)
            row.append(i)
    r = np.asarray(row, dtype=np.int64)
    ok = np.asarray([lab.correct for lab in known], dtype=bool)
    items, inv = np.unique(r, return_inverse=True)
    right = np.bincount(inv, weights=ok, minlength=items.size).astype(np.int64)
    wrong = np.bincount(inv, weights=~ok, minlength=items.size).astype(np.int64)
    latest = {}
    for lab, i in sorted(zip(known, row, strict=True), key=lambda p: parse_time(p[0].time)):
        latest[i] = lab.kind  # sorted by time (a stable sort: a tie keeps the later label last)
    kind = np.array([latest[int(i)] for i in items], dtype=object)
    shown = tuple(dict.fromkeys(unknown))[:SHOW_UNKNOWN]
    return Votes(tuple(known), r, items, right, wrong, kind, len(unknown), shown)


@dataclass(frozen=True)
class HumanOutcomes:
    """What taking the reviewers' labels as outcomes changed.

    Attributes
    ----------
    labelled:
        Items with at least one current label (of a reviewer) in the file.
    labels:
        Current labels used (one per item and reviewer).
    reviewers:
        Distinct reviewers among them.
    from_queue, from_audit:
        Labelled items whose latest label came from the review queue / the audit sample.
    changed:
        Items whose outcome the labels changed; ``right_to_wrong`` + ``wrong_to_right``.
    right_to_wrong, wrong_to_right:
        Items the file calls right and the reviewers wrong, and the reverse.
    ties:
        Items whose reviewers are split evenly: the file's outcome is kept.
    unknown:
        Labels whose item is not in the file (not used).
    unknown_items:
        The first few of their item keys.
    """

    labelled: int
    labels: int
    reviewers: int
    from_queue: int
    from_audit: int
    changed: int
    right_to_wrong: int
    wrong_to_right: int
    ties: int
    unknown: int
    unknown_items: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["unknown_items"] = list(self.unknown_items)
        d["sentence"] = self.sentence()
        return d

    def sentence(self) -> str:
        """What the audit says about its outcomes, in one or two sentences."""
        if self.labelled == 0:
            text = "No label matches an item of the file: the outcomes are the file's."
        else:
            who = f"{self.reviewers} reviewer" + ("s" if self.reviewers != 1 else "")
            text = (
                f"Outcomes of {self.labelled:,} item{'s' if self.labelled != 1 else ''} are the reviewers' labels "
                f"({self.labels:,} current label{'s' if self.labels != 1 else ''} by {who}; "
                f"{self.from_queue:,} from the review queue, {self.from_audit:,} from the audit sample of items "
                f"accepted unseen): {self.changed:,} changed ({self.right_to_wrong:,} right to wrong, "
                f"{self.wrong_to_right:,} wrong to right)"
            )
            text += f"; {self.ties:,} tied between reviewers kept the file's outcome." if self.ties else "."
        if self.unknown:
            names = ", ".join(repr(k) for k in self.unknown_items)
            more = ", ..." if self.unknown > len(self.unknown_items) else ""
            one = self.unknown == 1
            text += (
                f" {self.unknown:,} label{'' if one else 's'} name{'s an item' if one else ' items'} not in the "
                f"file ({names}{more}) and {'was' if one else 'were'} not used."
            )
        return text


def human_correct(rows: Judgments, v: Votes) -> tuple[np.ndarray, np.ndarray]:
    """Per labelled item (``v.items``), the reviewers' verdict (majority; a tie keeps the
    file's outcome) and whether it was a tie."""
    tie = v.right == v.wrong
    file_ok = np.asarray(rows.correct, dtype=bool)[v.items]
    return np.where(tie, file_ok, v.right > v.wrong), tie


def with_human_outcomes(
    rows: Judgments, labels: Sequence[Label], *, dataset: str | None = None
) -> tuple[Judgments, HumanOutcomes]:
    """``rows`` with each labelled item's outcome replaced by the reviewers' verdict.

    Parameters
    ----------
    rows:
        The file's rows.
    labels:
        Labels, history included (the current one per reviewer is used).
    dataset:
        The dataset the labels are of (default: the one the labels name).

    Returns
    -------
    rows, summary:
        The rows with ``correct`` replaced where an item has labels (majority of its
        reviewers' current labels; a tie keeps the file's outcome), everything else
        unchanged; and :class:`HumanOutcomes`.
    """
    v = votes(rows, labels, dataset=dataset)
    ok, tie = human_correct(rows, v)
    before = np.asarray(rows.correct, dtype=bool)
    after = before.copy()
    after[v.items] = ok
    summary = HumanOutcomes(
        labelled=int(v.items.size),
        labels=len(v.labels),
        reviewers=v.reviewers,
        from_queue=int(np.sum(v.kind == "queue")),
        from_audit=int(np.sum(v.kind == "audit")),
        changed=int(np.sum(after != before)),
        right_to_wrong=int(np.sum(before & ~after)),
        wrong_to_right=int(np.sum(~before & after)),
        ties=int(tie.sum()),
        unknown=v.unknown,
        unknown_items=v.unknown_items,
    )
    return dataclasses.replace(rows, correct=after), summary
