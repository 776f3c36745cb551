"""Final labels: the one rule that turns reviewers' labels into an item's verdict.

Contract
--------
:func:`final_rule` is the rule, in one place (every face counts a label through it, by
way of :func:`calib.labels.outcomes.votes`):

1. an item with an adjudication (a label of kind ``"adjudication"``,
   :data:`calib.labels.records.ADJUDICATION`; the latest per item) takes the adjudicated
   verdict;
2. otherwise the majority of its reviewers' current labels (the latest per reviewer,
   :func:`calib.labels.records.current`), counting only the labels that say right or
   wrong: an ``unsure`` label is not a vote;
3. a tie (as many say right as wrong) and an item whose labels are all unsure have no
   final label: they are not counted (the audit keeps the file's outcome for them, and
   says how many).

:func:`final_labels` applies it to a labels file alone (no judgments needed), for the
agreement report and ``calib labels agreement``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from calib.labels.records import ADJUDICATION, Label, current, for_dataset, parse_time

#: Why an item has, or has not, a final label.
STATUSES = ("adjudicated", "majority", "tie", "unsure")
#: The rule in words (output beside every count of final labels).
RULE = (
    "final label: the adjudicated verdict where an item has one, else the majority of the reviewers' "
    "current labels; ties and items whose labels are all unsure have none and are not counted"
)


def final_rule(right: np.ndarray, wrong: np.ndarray, adjudicated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The final verdict per item and its status (see the module).

    Parameters
    ----------
    right, wrong:
        Per item, reviewers' current labels saying right / wrong (unsure ones excluded).
    adjudicated:
        Per item, ``1`` (adjudicated right), ``0`` (wrong) or ``-1`` (no adjudication).

    Returns
    -------
    correct, status:
        ``correct`` the verdict (meaningless where the status is ``"tie"`` or
        ``"unsure"``); ``status`` one of :data:`STATUSES` per item.
    """
    right, wrong = np.asarray(right), np.asarray(wrong)
    adj = np.asarray(adjudicated)
    has = adj >= 0
    correct = np.where(has, adj == 1, right > wrong)
    status = np.where(
        has, "adjudicated", np.where(right + wrong == 0, "unsure", np.where(right == wrong, "tie", "majority"))
    )
    return correct.astype(bool), status.astype(object)


def adjudications(labels: Iterable[Label]) -> dict[str, Label]:
    """The latest adjudication per item (by time; a tie goes to the later one in order)."""
    best: dict[str, tuple[Any, int, Label]] = {}
    for i, lab in enumerate(labels):
        if lab.kind != ADJUDICATION:
            continue
        t = parse_time(lab.time)
        held = best.get(lab.item)
        if held is None or (t, i) >= (held[0], held[1]):
            best[lab.item] = (t, i, lab)
    return {k: v[2] for k, v in best.items()}


@dataclass(frozen=True)
class FinalLabels:
    """The final label of every item of a labels file.

    Attributes
    ----------
    items:
        Item keys, in the order they first appear (every item with a reviewer's label or an
        adjudication).
    correct:
        Per item, the final verdict (``None`` where the status is ``"tie"`` or ``"unsure"``).
    status:
        Per item, one of :data:`STATUSES`.
    right, wrong, unsure:
        Per item, the reviewers' current labels saying right, wrong, unsure.
    """

    items: tuple[str, ...]
    correct: tuple[bool | None, ...]
    status: tuple[str, ...]
    right: tuple[int, ...]
    wrong: tuple[int, ...]
    unsure: tuple[int, ...]

    def count(self, status: str) -> int:
        return sum(s == status for s in self.status)

    def of(self) -> dict[str, bool]:
        """Item -> final verdict, for the items that have one."""
        return {i: c for i, c in zip(self.items, self.correct, strict=True) if c is not None}

    def to_dict(self) -> dict[str, Any]:
        return {
            "items": len(self.items),
            **{s: self.count(s) for s in STATUSES},
            "rule": RULE,
            "sentence": self.sentence(),
        }

    def sentence(self) -> str:
        """How many items have a final label, and why the others have none."""
        n, adj, maj = len(self.items), self.count("adjudicated"), self.count("majority")
        tie, uns = self.count("tie"), self.count("unsure")
        text = f"Final labels for {adj + maj:,} of {n:,} items ({adj:,} adjudicated, {maj:,} by majority)"
        left = ([f"{tie:,} tied"] if tie else []) + ([f"{uns:,} only unsure"] if uns else [])
        if left:
            text += "; " + " and ".join(left) + " have none and are not counted"
        return text + "."


def final_labels(labels: Sequence[Label], *, dataset: str | None = None) -> FinalLabels:
    """The final label of each item of ``labels`` (one dataset: see
    :func:`calib.labels.records.for_dataset`), by :func:`final_rule`."""
    mine = for_dataset(labels, dataset)
    order: dict[str, int] = {}
    right: dict[str, int] = {}
    wrong: dict[str, int] = {}
    unsure: dict[str, int] = {}
    for lab in mine:
        order.setdefault(lab.item, len(order))
    for lab in current(lab for lab in mine if lab.kind != ADJUDICATION):
        bucket = unsure if lab.unsure else right if lab.correct else wrong
        bucket[lab.item] = bucket.get(lab.item, 0) + 1
    adj = adjudications(mine)
    items = tuple(order)
    r = np.array([right.get(i, 0) for i in items], dtype=np.int64)
    w = np.array([wrong.get(i, 0) for i in items], dtype=np.int64)
    a = np.array([int(adj[i].correct) if i in adj else -1 for i in items], dtype=np.int64)
    ok, status = final_rule(r, w, a)
    return FinalLabels(
        items=items,
        correct=tuple(None if s in ("tie", "unsure") else bool(c) for c, s in zip(ok, status, strict=True)),
        status=tuple(str(s) for s in status),
        right=tuple(int(x) for x in r),
        wrong=tuple(int(x) for x in w),
        unsure=tuple(unsure.get(i, 0) for i in items),
    )
