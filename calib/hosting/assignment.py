"""Assignment (issue 25): the server hands each reviewer their next item, so that no item
gets more labels than planned and every reviewer's share of the overlap is balanced.

Contract
--------
- **The plan of labels.** :func:`planned_labels`: a seeded choice of
  ``round(overlap * n)`` of a plan's ``n`` items (by the SHA-256 of seed, dataset and item
  key, so it is the same for every reviewer, replica and restart) is planned for ``k``
  labels, every other item for one. Which items are in the plan is the review plan's (the
  queue and audit sample, or the traffic labelling plan): the plan decides which items,
  assignment decides who.
- **Who gets what.** :func:`choose`, given every item's takers (reviewers with a label
  on it, or an unexpired hold), offers ``who`` the first open item of the plan's order that
  they have not labelled or skipped and whose takers are fewer than planned. Balance: while
  the reviewer's overlapped labels are below the overlap's share of the planned labels
  times their labels (plus this one), an overlapped item comes first (one another
  reviewer started, first, so that pairs complete early), else a single one; so each
  reviewer's overlapped labels stay within one of that share of their labels.
- **Holds.** Handing out an item holds it for the reviewer (table ``assignments``); a
  hold older than :attr:`AssignmentCatalog.hold_seconds` (a reviewer who left) no longer
  counts and the item is offered to others. A skip is kept per reviewer and item: the
  item is not offered to them again and its slot is free.
- **Never over the plan.** A reviewer's label is written only while the item's other
  labelling reviewers are fewer than planned (:meth:`AssignmentCatalog._room_for`, in the
  label's own transaction): a hold is a promise, the write is the check, so concurrent
  reviewers, a released hold taken by another, or a restart never give an item one label
  too many. Every call is one serialised transaction (:mod:`calib.hosting.database`).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from calib.hosting.catalog import reported
from calib.hosting.database import Connection
from calib.hosting.labels import NOT_REVIEWABLE_MESSAGE, ReviewCatalog, ReviewSetting
from calib.hosting.shares import is_owner
from calib.hosting.workflow import Workflow

#: Seconds a handed-out item stays held for a reviewer who does not label it.
HOLD_SECONDS = 15 * 60
NOT_ON_LIST = "You are not on this link's reviewer list: ask its owner to add you."
NO_ROOM = "This item already has every label planned for it: go on to your next item."


def planned_labels(keys: Sequence[str], flow: Workflow, seed: int, dataset: str = "") -> dict[str, int]:
    """Labels planned per item of ``keys`` (see the module): ``flow.k`` for the overlapped
    share, one for the others (cached: every hand-out of a link asks for the same plan)."""
    return dict(_planned(tuple(keys), flow.overlap, flow.k, seed, dataset))


@functools.lru_cache(maxsize=64)
def _planned(keys: tuple[str, ...], overlap: float, k: int, seed: int, dataset: str) -> tuple[tuple[str, int], ...]:
    n = len(keys)
    m = int(overlap * n + 0.5)

    def rank(key: str) -> bytes:
        return hashlib.sha256(f"{seed}\x00{dataset}\x00{key}".encode("utf-8", "surrogatepass")).digest()

    chosen = set(sorted(keys, key=rank)[:m])
    return tuple((key, k if key in chosen else 1) for key in keys)


@dataclass
class ItemState:
    """Who has taken each item of one dataset: labelled it, holds it, or skipped it."""

    labelled: dict[str, set[str]] = field(default_factory=dict)
    held: dict[str, set[str]] = field(default_factory=dict)
    skipped: dict[str, set[str]] = field(default_factory=dict)

    def takers(self, item: str) -> set[str]:
        return self.labelled.get(item, set()) | self.held.get(item, set())

    def barred(self, who: str) -> set[str]:
        """Items ``who`` labelled or skipped: not offered to them again."""
        return {i for i, r in self.labelled.items() if who in r} | {i for i, r in self.skipped.items() if who in r}


def choose(keys: Sequence[str], planned: Mapping[str, int], state: ItemState, who: str) -> str | None:
    """The item to offer ``who`` next (see the module), or ``None`` when none is open."""
    barred = state.barred(who)
    for k in keys:
        if k not in barred and who in state.held.get(k, ()):
            return k  # asked again before labelling: the item they hold
    slots = sum(planned.values())
    share = sum(v for v in planned.values() if v > 1) / slots if slots else 0.0
    mine = [k for k, r in state.labelled.items() if who in r and k in planned]
    mine_overlap = sum(1 for k in mine if planned[k] > 1)
    started: str | None = None
    fresh: str | None = None
    single: str | None = None
    for k in keys:
        if k in barred:
            continue
        taken = len(state.takers(k))
        if taken >= planned[k]:
            continue
        if planned[k] == 1:
            single = single or k
        elif taken:
            started = started or k
        else:
            fresh = fresh or k
        if started and single:
            break
    multi = started or fresh
    if mine_overlap < share * (len(mine) + 1):
        return multi or single
    return single or multi



@dataclass(frozen=True)
class Progress:
    """Where the labelling of one dataset stands under assignment.

    Attributes
    ----------
    planned:
        Labels planned in all (the sum of :func:`planned_labels`).
    given:
        Labels given toward the plan (per item, its labelling reviewers, at most planned).
    complete:
        Items with every planned label.
    items:
        Items in the plan.
    per_reviewer:
        Per reviewer: ``(labels, of them on overlapped items, skips)``.
    """

    planned: int
    given: int
    complete: int
    items: int
    per_reviewer: dict[str, tuple[int, int, int]]


def progress(keys: Sequence[str], planned: Mapping[str, int], state: ItemState) -> Progress:
    """:class:`Progress` of ``state`` against ``planned``."""
    given = complete = 0
    per: dict[str, list[int]] = {}
    for k in keys:
        by = state.labelled.get(k, set())
        given += min(len(by), planned[k])
        complete += len(by) >= planned[k]
        for r in by:
            row = per.setdefault(r, [0, 0, 0])
            row[0] += 1
            row[1] += planned[k] > 1
        for r in state.skipped.get(k, set()):
            per.setdefault(r, [0, 0, 0])[2] += 1
    return Progress(sum(planned[k] for k in keys), given, complete, len(keys),
                    {r: (v[0], v[1], v[2]) for r, v in sorted(per.items())})


@dataclass(frozen=True)
class Assigned:
    """What :meth:`AssignmentCatalog.next_item` returns.

    Attributes
    ----------
    ok:
        Whether the call could be answered (``False``: :attr:`message` says why).
    item:
        The item handed out (held for the reviewer), or ``None`` when none is left for them.
    progress:
        The dataset's :class:`Progress` after the hand-out.
    message:
        Why not, when not ``ok``.
    """

    ok: bool
    item: str | None = None
    progress: Progress | None = None
    message: str = ""


class AssignmentCatalog(ReviewCatalog):
    """The assignment half of the share store (:class:`calib.hosting.store.Store` inherits it)."""

    hold_seconds: float = HOLD_SECONDS

    def _state(self, con: Connection, sid: str, stored: str) -> ItemState:
        state = ItemState()
        for item, reviewer in con.execute(
            "SELECT item, reviewer FROM labels WHERE share_id = ? AND dataset = ?", (sid, stored)
        ):
            state.labelled.setdefault(item, set()).add(reviewer)
        fresh = self.clock() - self.hold_seconds
        for item, reviewer, kind, at in con.execute(
            "SELECT item, reviewer, state, at FROM assignments WHERE share_id = ? AND dataset = ?", (sid, stored)
        ):
            if kind == "skipped":
                state.skipped.setdefault(item, set()).add(reviewer)
            elif at > fresh:
                state.held.setdefault(item, set()).add(reviewer)
        return state

    def _room_for(self, con: Connection, sid: str, setting: ReviewSetting, labels: list, keys: Mapping[str, list[str]]
                  ) -> str | None:
        flow = setting.flow
        for lab in labels:
            if not flow.allows(lab.reviewer):
                return NOT_ON_LIST
        if not flow.assign:
            return None
        for lab in labels:
            plan_keys = keys.get(lab.dataset, [])
            planned = planned_labels(plan_keys, flow, setting.seed, lab.dataset).get(lab.item, 1)
            others = {r for (r,) in con.execute(
                "SELECT DISTINCT reviewer FROM labels WHERE share_id = ? AND dataset = ? AND item = ?",
                (sid, lab.dataset, lab.item))} - {lab.reviewer}
            if len(others) >= planned:
                return NO_ROOM
            con.execute("DELETE FROM assignments WHERE share_id = ? AND dataset = ? AND item = ? AND reviewer = ?",
                        (sid, lab.dataset, lab.item, lab.reviewer))
        return None

    def _open(self, con: Connection, token: object, who: str) -> tuple[str, ReviewSetting] | str:
        row = self._share_row(con, token)
        setting = self._setting(con, row[0]) if row is not None else ReviewSetting()
        if row is None or not row[3] or not setting.enabled:
            return NOT_REVIEWABLE_MESSAGE
        if not setting.flow.allows(who):
            return NOT_ON_LIST
        return row[0], setting

    @reported
    def next_item(self, token: object, stored: str, keys: Sequence[str], who: str) -> Assigned:
        """Hand ``who`` their next item of the dataset stored as ``stored`` (``keys``: its
        plan's items in order) and hold it; ``item=None`` when none is left for them. A
        reviewer asking again before labelling gets the item they hold."""
        with self._transaction() as con:
            got = self._open(con, token, who)
            if isinstance(got, str):
                return Assigned(False, message=got)
            sid, setting = got
            planned = planned_labels(keys, setting.flow, setting.seed, stored)
            state = self._state(con, sid, stored)
            item = choose(keys, planned, state, who)
            if item is not None:
                self._put(con, sid, stored, item, who, "held")
                state.held.setdefault(item, set()).add(who)
        return Assigned(True, item, progress(keys, planned, state))

    @reported
    def skip_item(self, token: object, stored: str, item: str, who: str) -> Assigned:
        """Record that ``who`` skips ``item`` (not offered to them again; its slot is free)."""
        with self._transaction() as con:
            got = self._open(con, token, who)
            if isinstance(got, str):
                return Assigned(False, message=got)
            self._put(con, got[0], stored, item, who, "skipped")
        return Assigned(True)

    @reported
    def assignment_progress(self, token: object, stored: str, keys: Sequence[str]) -> Progress | None:
        """The dataset's :class:`Progress` (``None`` when the link does not open for reviewing)."""
        with self._connect() as con:
            row = self._share_row(con, token)
            if row is None:
                return None
            setting = self._setting(con, row[0])
            state = self._state(con, row[0], stored)
        return progress(keys, planned_labels(keys, setting.flow, setting.seed, stored), state)

    @reported
    def assignment_rows(self, token: object, stored: str, keys: Sequence[str], *, owner_secret: str | None = None,
                        user: str | None = None) -> tuple[tuple[str, int, str, str, str], ...] | None:
        """Who took what, for the owner's hand-off (``None`` for anyone else): per item of
        ``keys`` (the plan's order) its planned labels and each reviewer who took it,
        ``(item, planned, reviewer, state, time)`` with state ``labelled`` (their latest
        label's time), ``skipped``, ``held`` or ``released`` (a hold past
        :attr:`hold_seconds`; the hand-out's time); an item nobody took, one ``open`` row
        (reviewer and time ``""``). Planned labels are the link's current workflow's."""
        from calib.hosting.labels import now_iso

        with self._connect() as con:
            row = self._share_row(con, token)
            if row is None or not is_owner(row[1], row[2], owner_secret, user):
                return None
            sid = row[0]
            setting = self._setting(con, sid)
            took: dict[str, dict[str, tuple[str, str]]] = {}
            for item, reviewer, kind, at in con.execute(
                    "SELECT item, reviewer, state, at FROM assignments WHERE share_id = ? AND dataset = ?",
                    (sid, stored)):
                state = kind if kind == "skipped" else "held" if at > self.clock() - self.hold_seconds else "released"
                took.setdefault(item, {})[reviewer] = (state, now_iso(at))
            for item, reviewer, time in con.execute(
                    "SELECT item, reviewer, MAX(time) FROM labels WHERE share_id = ? AND dataset = ?"
                    " GROUP BY item, reviewer", (sid, stored)):
                took.setdefault(item, {})[reviewer] = ("labelled", time)
        planned = planned_labels(keys, setting.flow, setting.seed, stored)
        out: list[tuple[str, int, str, str, str]] = []
        for k in keys:
            who = took.get(k, {})
            out += [(k, planned[k], r, st, t) for r, (st, t) in sorted(who.items())] or [(k, planned[k], "", "open", "")]
        return tuple(out)

    def _put(self, con: Connection, sid: str, stored: str, item: str, who: str, kind: str) -> None:
        con.execute(
            "INSERT INTO assignments(share_id, dataset, item, reviewer, state, at) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(share_id, dataset, item, reviewer) DO UPDATE SET state = excluded.state, at = excluded.at",
            (sid, stored, item, who, kind, self.clock()),
        )
