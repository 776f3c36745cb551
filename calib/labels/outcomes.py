"""Reviewers' labels as the outcome: each labelled item takes the reviewers' verdict.

Contract
--------
:func:`votes` joins the current labels (:func:`calib.labels.records.current`: the latest
per reviewer) to the rows by item key (:func:`calib.labels.records.item_keys`) and counts,
per item, the reviewers who say right and wrong (an ``unsure`` label is no vote) and the
item's adjudication; labels whose item is not in the rows are counted and named, never
dropped silently. :func:`with_human_outcomes` turns the votes into outcomes by the final
rule (:func:`calib.labels.final.final_rule`: the adjudicated verdict, else the majority),
a tie or an item labelled only unsure keeping the file's outcome (and counted). :func:`calib.labels.agreement` and :func:`calib.labels.estimate` build on the
same votes, so every face counts a label the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from calib.labels.final import adjudications, final_rule
from calib.labels.records import ADJUDICATION, Label, current, for_dataset, item_keys, parse_time
from calib.rows import Judgments

#: How many unknown item keys a summary names.
SHOW_UNKNOWN = 5


@dataclass(frozen=True, eq=False)
class Votes:
    """The current labels joined to the rows.

    Attributes
    ----------
    labels:
        The current labels that say right or wrong (not unsure, not adjudications) whose
        item is in the rows, in order.
    row:
        Per label in :attr:`labels`, its row index.
    items:
        Row indices of the labelled items (a current label, unsure included, or an
        adjudication), increasing.
    right, wrong:
        Per labelled item, how many reviewers' current labels say right and wrong.
    kind:
        Per labelled item, the kind of its latest reviewer's label (``"queue"`` or
        ``"audit"``; ``"adjudication"`` for an item with an adjudication only).
    unknown:
        Labels whose item is not in the rows.
    unknown_items:
        The first :data:`SHOW_UNKNOWN` such item keys, in order.
    adjudicated:
        Per labelled item, its adjudication: ``1`` right, ``0`` wrong, ``-1`` none.
    unsure:
        Current labels of items in the rows that say unsure (no vote).
    """

    labels: tuple[Label, ...]
    row: np.ndarray
    items: np.ndarray
    right: np.ndarray
    wrong: np.ndarray
    kind: np.ndarray
    unknown: int
    unknown_items: tuple[str, ...]
    adjudicated: np.ndarray
    unsure: int

    @property
    def reviewers(self) -> int:
        return len({lab.reviewer for lab in self.labels})


def votes(rows: Judgments, labels: Sequence[Label], *, dataset: str | None = None) -> Votes:
    """Join the current labels of ``dataset`` (all, when the labels name one dataset
    only: :func:`calib.labels.records.for_dataset`) and its adjudications to ``rows`` by
    item key."""
    mine = for_dataset(labels, dataset)
    cur = current(lab for lab in mine if lab.kind != ADJUDICATION)
    adj = adjudications(mine)
    keys = item_keys(rows)
    where = {str(k): i for i, k in enumerate(keys)}
    known: list[Label] = []
    row: list[int] = []
    seen: list[tuple[Label, int]] = []  # every current label of an item in the rows, unsure included
    unknown: list[str] = []
    for lab in cur:
        i = where.get(lab.item)
        if i is None:
            unknown.append(lab.item)
            continue
        seen.append((lab, i))
        if not lab.unsure:
            known.append(lab)
            row.append(i)
    adj_row = {}
    for item, lab in adj.items():
        i = where.get(item)
        if i is None:
            unknown.append(item)
        else:
            adj_row[i] = int(lab.correct)
    r = np.asarray(row, dtype=np.int64)
    ok = np.asarray([lab.correct for lab in known], dtype=bool)
    items = np.unique(np.r_[np.asarray([i for _, i in seen], dtype=np.int64), list(adj_row)]).astype(np.int64)
    inv = np.searchsorted(items, r)
    right = np.bincount(inv, weights=ok, minlength=items.size).astype(np.int64)
    wrong = np.bincount(inv, weights=~ok, minlength=items.size).astype(np.int64)
    latest = dict.fromkeys(adj_row, ADJUDICATION)
    for lab, i in sorted(seen, key=lambda p: parse_time(p[0].time)):
        latest[i] = lab.kind  # sorted by time (a stable sort: a tie keeps the later label last)
    kind = np.array([latest[int(i)] for i in items], dtype=object)
    adjudicated = np.array([adj_row.get(int(i), -1) for i in items], dtype=np.int64)
    shown = tuple(dict.fromkeys(unknown))[:SHOW_UNKNOWN]
    return Votes(tuple(known), r, items, right, wrong, kind, len(unknown), shown, adjudicated,
                 len(seen) - len(known))


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
        Items whose reviewers are split evenly (and not adjudicated): the file's outcome is kept.
    unknown:
        Labels whose item is not in the file (not used).
    unknown_items:
        The first few of their item keys.
    adjudicated:
        Items whose outcome is an adjudication (the final label set by an adjudicator).
    unsure_only:
        Items whose current labels all say unsure (and not adjudicated): the file's outcome is kept.
    unsure:
        Current labels that say unsure (not counted as votes).
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
    adjudicated: int = 0
    unsure_only: int = 0
    unsure: int = 0

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
            if self.adjudicated:
                text += f"; {self.adjudicated:,} adjudicated"
            text += f"; {self.ties:,} tied between reviewers kept the file's outcome" if self.ties else ""
            if self.unsure_only:
                text += f"; {self.unsure_only:,} labelled only unsure kept the file's outcome"
            text += "."
            if self.unsure:
                text += f" {self.unsure:,} unsure label{'s' if self.unsure != 1 else ''} counted as no vote."
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
    """Per labelled item (``v.items``), the final verdict (:func:`calib.labels.final.final_rule`;
    a tie or an item labelled only unsure keeps the file's outcome) and its status."""
    ok, status = final_rule(v.right, v.wrong, v.adjudicated)
    file_ok = np.asarray(rows.correct, dtype=bool)[v.items]
    none = (status == "tie") | (status == "unsure")
    return np.where(none, file_ok, ok), status


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
        The rows with ``correct`` replaced where an item has a final label (its
        adjudication, else the majority of its reviewers' current labels; a tie or only
        unsure labels keep the file's outcome), everything else unchanged; and
        :class:`HumanOutcomes`.
    """
    v = votes(rows, labels, dataset=dataset)
    ok, status = human_correct(rows, v)
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
        ties=int(np.sum(status == "tie")),
        unknown=v.unknown,
        unknown_items=v.unknown_items,
        adjudicated=int(np.sum(status == "adjudicated")),
        unsure_only=int(np.sum(status == "unsure")),
        unsure=v.unsure,
    )
    return dataclasses.replace(rows, correct=after), summary
