"""Reviewing inside a share: the owner's review setting and the reviewers' labels, kept
in the share store's catalog (tables ``reviewing`` and ``labels``, schema version 2 of
:mod:`calib.hosting.schema`; the workflow of issue 25, version 4: ``unsure``, blind or
not, reason tags, the owner's workflow setting and the append-only ``adjudications``;
assignment is :mod:`calib.hosting.assignment`).

Contract
--------
- **Scoped by the link.** Every read and write names its share by the link token, never
  by a share id: a token of share X reaches only X's labels. A write needs a token that
  opens (not revoked, not expired) *and* whose share has reviewing enabled; a read too,
  except that the share's owner (owner secret or logged-in owner, as for revoking) may
  still read the labels of a share whose reviewing is off, of a revoked one (the sweep
  keeps a revoked share that has labels, :meth:`~calib.hosting.catalog.Catalog.sweep`,
  until its owner deletes it), and of an expired one until the sweep removes it
  (whenever a store is opened: a server start, ``calib labels``; and on a new share an
  hour after the last sweep): the server's lifetime of a share bounds its labels' too.
  A refused call gets one message for every cause (:data:`NOT_REVIEWABLE_MESSAGE`), so
  that probing tokens learns nothing.
- **Owner only.** Turning reviewing on or off, its audit sample size and seed
  (:meth:`ReviewCatalog.set_review`), the workflow (:meth:`ReviewCatalog.set_workflow`),
  importing a labels file (:meth:`ReviewCatalog.import_labels`) and adjudicating
  (:meth:`ReviewCatalog.adjudicate`) take the owner's proof (:func:`~calib.hosting.shares.is_owner`).
- **Blind by default.** Whether the judge (stated confidence, the file's outcome) was shown
  is the owner's setting, stamped by the server on every label (``judge_shown``), never
  taken from the reviewer; so the audit can tell blind labels from unblind ones.
- **Append-only.** A label is a new row; a changed label is a newer row for the same
  (dataset, item, reviewer), so the history is kept and the current label is the latest
  (:func:`calib.labels.records.current`). Rows leave only with their share: deleting a
  share deletes its labels in the same transaction (``ON DELETE CASCADE``); revoking
  stops labelling at once and keeps the labels for the owner; expiry removes them.
- **Checked at the boundary.** A label's dataset must be one of the share's datasets and
  its item one of that dataset's review plan (:class:`calib.labels.plan.ReviewPlan`,
  queue or audit sample, with the same kind); its fields pass
  :func:`calib.labels.records.label_problem` (reviewer non-empty and one line, note at
  most 500 characters, ...); a share holds at most :data:`MAX_LABELS_PER_SHARE` rows. A
  reviewer's label is stamped with the server's clock (an imported one keeps its time).
  (:mod:`calib.labels` is imported only when a label is read or written: it brings
  pandas, which a server that only opens links need not load.)
- **Crash safe as shares are.** Each write is one serialised transaction (SQLite's
  ``BEGIN IMMEDIATE`` in WAL mode with ``synchronous=FULL``, or PostgreSQL's with the
  catalog's advisory lock, :mod:`calib.hosting.database`): a label acknowledged to the
  reviewer survives a SIGKILL or a power cut, a write killed before its commit leaves
  nothing, and concurrent writers from several threads, processes or replicas are
  serialised by the database, losing nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from calib.hosting.catalog import Catalog, reported
from calib.hosting.database import Connection
from calib.hosting.shares import NOT_OWNER_MESSAGE, Outcome, is_owner, secret_digest, valid_token
from calib.hosting.workflow import Workflow, check_reviewer, check_workflow

if TYPE_CHECKING:
    from calib.dataset import Dataset
    from calib.hosting.shares import Share
    from calib.hosting.view import View
    from calib.labels.plan import ReviewPlan
    from calib.labels.records import Label
    from calib.limits import Limits
    from calib.scale import Scale

#: Most label rows one share holds (its whole history): a reviewer cannot fill the disk.
MAX_LABELS_PER_SHARE = 100_000
#: The audit sample size a share starts with, and the range the owner may set.
DEFAULT_SAMPLE_SIZE = 50
SAMPLE_SIZE_RANGE = (0, 5_000)
#: The range of the audit sample's seed.
SEED_RANGE = (0, 2**32 - 1)

NOT_REVIEWABLE_MESSAGE = (
    "Reviewing is not open on this link: it has expired, its owner revoked or deleted it, or its owner "
    "has not enabled reviewing. Ask the person who sent it."
)
FULL_MESSAGE = (
    f"This link holds the most labels it can keep ({MAX_LABELS_PER_SHARE:,}): export them and ask the owner "
    "for a new link to go on."
)


@dataclass(frozen=True)
class ReviewSetting:
    """The owner's review setting of one share.

    Attributes
    ----------
    enabled:
        Whether reviewers may label through the link (off by default).
    sample_size:
        Size of the audit sample of items accepted unseen (:func:`calib.labels.plan.review_plan`).
    seed:
        Seed of the audit sample: the same seed draws the same items for every reviewer.
    workflow:
        The owner's review workflow (issue 25: assignment, overlap, blind, guidelines, ...).
    """

    enabled: bool = False
    sample_size: int = DEFAULT_SAMPLE_SIZE
    seed: int = 0
    workflow: Workflow = Workflow()

    @property
    def flow(self) -> Workflow:
        """The workflow setting (short for :attr:`workflow`)."""
        return self.workflow


@dataclass(frozen=True)
class ReviewState:
    """What the Review page needs of a link, read in one query (no blob is read).

    Attributes
    ----------
    setting:
        The owner's review setting.
    view:
        The view the link opens with (:func:`share_view`): its threshold is the plan's.
    datasets:
        The share's dataset names, in order (labels name them; ``""`` when there is one).
    """

    setting: ReviewSetting
    view: View
    datasets: tuple[str, ...]

    def stored_name(self, name: str) -> str:
        """The dataset name a label of ``name`` keeps: ``""`` when the share has one dataset."""
        return "" if len(self.datasets) == 1 else name


@dataclass(frozen=True)
class LabelsResult:
    """What a labels call returns.

    Attributes
    ----------
    ok:
        Whether the call did what it was asked.
    status:
        ``"ok"``, ``"saved"``, ``"imported"``, or why not: ``"not_available"`` (the token
        does not open a reviewable share), ``"not_owner"``, ``"invalid"`` (a label
        failed a check; nothing was written), ``"full"`` (:data:`MAX_LABELS_PER_SHARE`).
    message:
        What to tell the user (fixed text, or the reason naming the label).
    labels:
        The share's labels, oldest first (every row: the history), for a read; the
        adjudications (kind ``"adjudication"``) after them, oldest first.
    judge_shown, reasons:
        Per label of :attr:`labels`, whether the judge was shown and its reason tags.
    written:
        Rows written, for a write.
    rejected:
        One message per label that was refused, for an import.
    """

    ok: bool
    status: str
    message: str
    labels: tuple[Label, ...] = ()
    written: int = 0
    rejected: tuple[str, ...] = ()
    judge_shown: tuple[bool, ...] = ()
    reasons: tuple[tuple[str, ...], ...] = ()


def _refused() -> LabelsResult:
    return LabelsResult(False, "not_available", NOT_REVIEWABLE_MESSAGE)


def now_iso(clock: float) -> str:
    """A Unix time as ISO-8601 UTC with a ``Z`` (the form :class:`~calib.labels.records.Label` keeps)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(clock))


def _check_setting(sample_size: object, seed: object) -> tuple[int, int]:
    lo, hi = SAMPLE_SIZE_RANGE
    if isinstance(sample_size, bool) or not isinstance(sample_size, int) or not lo <= sample_size <= hi:
        raise ValueError(
            f"the audit sample size must be a whole number from {lo} to {hi:,}, got {sample_size!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or not SEED_RANGE[0] <= seed <= SEED_RANGE[1]:
        raise ValueError(f"the seed must be a whole number from 0 to {SEED_RANGE[1]}, got {seed!r}")
    return sample_size, seed


# ------------------------------------------------------------------ the plans
def share_view(share: Share) -> View:
    """The view a share opens with (the owner's): its stored query parameters read as
    a link's are (:func:`calib.hosting.view.from_params`; bad values fall back)."""
    return _view_of(share.view)


def _view_of(state: object) -> View:
    from calib.hosting import view as views

    params = state.get("params") if isinstance(state, dict) else None
    return views.from_params(params if isinstance(params, dict) else {})[0]


def review_threshold(view: View, scale: Scale) -> float:
    """The threshold the review plan of a share uses, on the stated scale: the owner's
    review threshold (the share view's ``lo``, moved inside the scale) when it is set
    on the stated scale; otherwise the default lower threshold of the scale
    (:func:`calib.routing.default_thresholds`, what the Routing page starts at). One
    rule for the page and ``calib labels``, so that both check labels against the same
    items; it is the owner's, not a reviewer's slider, so that every reviewer of a link
    sees the same queue and sample."""
    from calib import routing

    if view.on == "stated" and view.lo is not None:
        return float(min(max(view.lo, float(scale.lo)), float(scale.hi)))
    return routing.default_thresholds(scale, "stated")[0]


def plans_for(datasets: Sequence[Dataset], view: View, setting: ReviewSetting) -> dict[str, ReviewPlan]:
    """The review plan of each dataset that has rows (a count table has no items to
    label), keyed by dataset name: :func:`calib.labels.plan.review_plan` at
    :func:`review_threshold`, with the share's sample size and seed."""
    from calib.labels.plan import review_plan

    out = {}
    for ds in datasets:
        if ds.rows is None:
            continue
        t = review_threshold(view, ds.table.scale)
        out[ds.name] = review_plan(ds.rows, t, sample_size=setting.sample_size, seed=setting.seed)
    return out


def share_plans(share: Share, setting: ReviewSetting, limits: Limits | None = None) -> dict[str, ReviewPlan]:
    """:func:`plans_for` of a share's datasets, loaded as a link reopens them (``calib labels``)."""
    return plans_for([spec.load(limits) for spec in share.datasets], share_view(share), setting)


class _Index:
    """The items labels may name in one share: ``(stored dataset, item) -> kind``, built
    from the share's dataset names and the review plans the caller computed."""

    def __init__(self, names: Sequence[str], plans: Mapping[str, ReviewPlan]) -> None:
        self.names = tuple(names)
        self.kinds: dict[tuple[str, str], str] = {}
        for name in self.names:
            plan = plans.get(name)
            if plan is None:
                continue
            for ri in (*plan.queue, *plan.audit):
                self.kinds[(self.stored(name), ri.item)] = ri.kind

    def stored(self, name: str) -> str:
        """The dataset name a label keeps: ``""`` when the share has one dataset."""
        return "" if len(self.names) == 1 else name

    def check(self, label: Label) -> Label:
        """``label`` with its dataset as stored, or a ``ValueError`` naming what is wrong."""
        from calib.labels.records import label_problem

        shown = repr(label.item[:80]) if isinstance(label.item, str) else repr(label.item)
        if isinstance(label.reviewer, str):
            label = replace(label, reviewer=label.reviewer.strip())
        why = label_problem(label)
        if why is not None:
            raise ValueError(f"item {shown}: {why}")
        try:
            check_reviewer(label.reviewer)
        except ValueError as exc:
            raise ValueError(f"item {shown}: {exc}") from None
        ds = label.dataset
        if ds == "" and len(self.names) == 1:
            ds = self.names[0]
        if ds not in self.names:
            raise ValueError(f"item {shown}: dataset {ds[:80]!r} is not in this link")
        kind = self.kinds.get((self.stored(ds), label.item))
        if kind is None:
            raise ValueError(f"item {shown} is not in this link's review queue or audit sample")
        if kind != label.kind and label.kind != "adjudication":
            raise ValueError(f"item {shown} is in the {kind} list, not the {label.kind} list")
        return replace(label, dataset=self.stored(ds))


class ReviewCatalog(Catalog):
    """The review half of the share store (:class:`calib.hosting.store.Store` inherits it):
    the owner's setting and the reviewers' labels, every call scoped by a link token."""

    # ------------------------------------------------------------ lookups
    def _share_row(self, con: Connection, token: object) -> tuple | None:
        """``(id, owner_hash, owner_user, opens)`` of the share ``token`` names, or ``None``."""
        if not valid_token(token):
            return None
        assert isinstance(token, str)
        row = con.execute(
            "SELECT id, owner_hash, owner_user, revoked, expires FROM shares WHERE token_hash = ?",
            (secret_digest(token),),
        ).fetchone()
        if row is None:
            return None
        sid, owner_hash, owner_user, revoked, expires = row
        opens = revoked is None and (expires is None or expires > self.clock())
        return sid, bytes(owner_hash), owner_user, opens

    @staticmethod
    def _setting(con: Connection, share_id: str) -> ReviewSetting:
        import json

        row = con.execute(
            "SELECT enabled, sample_size, seed, assign, overlap, overlap_k, reviewers, show_judge, guidelines,"
            " reason_tags, card_fields FROM reviewing WHERE share_id = ?", (share_id,)
        ).fetchone()
        if row is None:
            return ReviewSetting()
        flow = Workflow(bool(row[3]), float(row[4]), int(row[5]), tuple(json.loads(row[6] or "[]")),
                        bool(row[7]), str(row[8]), tuple(json.loads(row[9] or "[]")),
                        tuple((str(k), str(v)) for k, v in json.loads(row[10] or "[]")))
        return ReviewSetting(bool(row[0]), int(row[1]), int(row[2]), flow)

    @staticmethod
    def _dataset_names(con: Connection, share_id: str) -> list[str]:
        import json

        return [
            str(json.loads(r[0])["name"])
            for r in con.execute(
                "SELECT d.spec FROM share_datasets s JOIN datasets d ON d.id = s.dataset_id"
                " WHERE s.share_id = ? ORDER BY s.position",
                (share_id,),
            )
        ]

    @reported
    def review_setting(self, token: object) -> ReviewSetting | None:
        """The review setting of the share ``token`` opens; ``None`` when it does not open
        (malformed, unknown, revoked, expired: one answer for all)."""
        with self._connect() as con:
            row = self._share_row(con, token)
            if row is None or not row[3]:
                return None
            return self._setting(con, row[0])

    @reported
    def review_state(self, token: object) -> ReviewState | None:
        """The setting, view and dataset names of the share ``token`` opens; ``None`` when
        it does not open (one answer for every cause)."""
        import json

        with self._connect() as con:
            row = self._share_row(con, token)
            if row is None or not row[3]:
                return None
            view_json = con.execute("SELECT view FROM shares WHERE id = ?", (row[0],)).fetchone()[0]
            setting = self._setting(con, row[0])
            names = tuple(self._dataset_names(con, row[0]))
        try:
            state = json.loads(view_json)
        except ValueError:
            state = {}
        return ReviewState(setting, _view_of(state), names)

    @reported
    def owns(self, token: object, *, owner_secret: str | None = None, user: str | None = None) -> bool:
        """Whether the owner secret or logged-in user proves ownership of the share ``token``
        names (what decides that a Review page shows the owner's part)."""
        with self._connect() as con:
            row = self._share_row(con, token)
        return row is not None and is_owner(row[1], row[2], owner_secret, user)

    # ------------------------------------------------------- owner actions
    @reported
    def set_review(
        self,
        token: object,
        *,
        enabled: bool,
        sample_size: int = DEFAULT_SAMPLE_SIZE,
        seed: int = 0,
        owner_secret: str | None = None,
        user: str | None = None,
    ) -> Outcome:
        """Turn reviewing on or off for a share that opens, with its audit sample size and
        seed (owner only). Labels already given are kept either way.

        Raises
        ------
        CalibError
            A sample size or seed out of range (:data:`SAMPLE_SIZE_RANGE`, :data:`SEED_RANGE`).
        """
        from calib.errors import CalibError

        try:
            size, seed = _check_setting(sample_size, seed)
        except ValueError as exc:
            raise CalibError(str(exc)) from None
        with self._transaction() as con:
            row = self._share_row(con, token)
            if row is None or not row[3]:
                return Outcome(False, "not_available", NOT_REVIEWABLE_MESSAGE)
            sid, owner_hash, owner_user, _ = row
            if not is_owner(owner_hash, owner_user, owner_secret, user):
                return Outcome(False, "not_owner", NOT_OWNER_MESSAGE)
            con.execute(
                "INSERT INTO reviewing(share_id, enabled, sample_size, seed, changed) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(share_id) DO UPDATE SET enabled = excluded.enabled,"
                " sample_size = excluded.sample_size, seed = excluded.seed, changed = excluded.changed",
                (sid, int(bool(enabled)), size, seed, self.clock()),
            )
        if enabled:
            return Outcome(
                True,
                "updated",
                f"Reviewing is on: reviewers with the link can label "
                f"(audit sample of {size:,}, seed {seed}).",
            )
        return Outcome(True, "updated", "Reviewing is off: the link is read-only again; the labels are kept.")

    @reported
    def set_workflow(
        self, token: object, flow: Workflow, *, owner_secret: str | None = None, user: str | None = None
    ) -> Outcome:
        """Set the review workflow of a share that opens (owner only); the audit sample
        size, seed and on/off stay as they are (:meth:`set_review`).

        Raises
        ------
        CalibError
            A setting out of range (:func:`check_workflow`).
        """
        import json

        from calib.errors import CalibError

        try:
            flow = check_workflow(flow)
        except ValueError as exc:
            raise CalibError(str(exc)) from None
        with self._transaction() as con:
            row = self._share_row(con, token)
            if row is None or not row[3]:
                return Outcome(False, "not_available", NOT_REVIEWABLE_MESSAGE)
            if not is_owner(row[1], row[2], owner_secret, user):
                return Outcome(False, "not_owner", NOT_OWNER_MESSAGE)
            values = (int(flow.assign), flow.overlap, flow.k, json.dumps(list(flow.reviewers)),
                      int(flow.show_judge), flow.guidelines, json.dumps(list(flow.reason_tags)),
                      json.dumps([list(p) for p in flow.card_fields]))
            con.execute(
                "INSERT INTO reviewing(share_id, enabled, sample_size, seed, changed, assign, overlap, overlap_k,"
                " reviewers, show_judge, guidelines, reason_tags, card_fields)"
                " VALUES (?, 0, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(share_id) DO UPDATE SET assign = excluded.assign, overlap = excluded.overlap,"
                " overlap_k = excluded.overlap_k, reviewers = excluded.reviewers, show_judge = excluded.show_judge,"
                " guidelines = excluded.guidelines, reason_tags = excluded.reason_tags,"
                " card_fields = excluded.card_fields, changed = excluded.changed",
                (row[0], DEFAULT_SAMPLE_SIZE, self.clock(), *values),
            )
        from calib.present.review import workflow_sentence

        return Outcome(True, "updated", workflow_sentence(flow.assign, flow.overlap, flow.k, len(flow.reviewers),
                                                          flow.show_judge))

    # -------------------------------------------------------------- writes
    @reported
    def add_label(
        self, token: object, label: Label, plans: Mapping[str, ReviewPlan], *, reasons: Sequence[str] = ()
    ) -> LabelsResult:
        """Record one reviewer's label through a link that opens with reviewing on.

        ``plans`` maps each of the share's dataset names to its review plan (computed by
        the caller from the share's data): the label's item must be in it. The label is
        stamped with the server's clock and with whether the judge was shown; ``reasons``
        must be among the owner's reason tags. With assignment on, the reviewer must be
        on the reviewer list and the item must have room for their label (no item gets
        more labels than planned, :meth:`_room_for`).
        """
        if label.kind == "adjudication":
            return LabelsResult(False, "invalid", "Only the link's owner adjudicates.")
        return self._write(token, [replace(label, reasons=tuple(reasons) or label.reasons)], plans, stamp=True)

    def _room_for(self, con: Connection, sid: str, setting: ReviewSetting, labels: list[Label],
                  keys: Mapping[str, list[str]]) -> str | None:
        """Why a reviewer's labels cannot be written under the workflow, or ``None``
        (no assignment here: :class:`calib.hosting.assignment.AssignmentCatalog` checks it)."""
        return None

    @reported
    def adjudicate(
        self,
        token: object,
        label: Label,
        plans: Mapping[str, ReviewPlan],
        *,
        owner_secret: str | None = None,
        user: str | None = None,
    ) -> LabelsResult:
        """Set the final label of an item (owner only): an adjudication, appended to the
        history (a later one for the same item replaces it in the final labels,
        :func:`calib.labels.final.final_labels`). ``label.reviewer`` is the adjudicator."""
        adj = replace(label, kind="adjudication", unsure=False, judge_shown=False, reasons=())
        return self._write(token, [adj], plans, stamp=True, owner=(owner_secret, user))

    @reported
    def import_labels(
        self,
        token: object,
        labels: Iterable[Label],
        plans: Mapping[str, ReviewPlan],
        *,
        owner_secret: str | None = None,
        user: str | None = None,
    ) -> LabelsResult:
        """Append a labels file's labels (owner only; through a link that opens with reviewing
        on). Labels that fail a check are left out, each with a message; the others are
        written in one transaction, keeping their own times, ``judge_shown`` and reason tags
        (the tags need not be this link's: they were the labels' own link's)."""
        return self._write(token, list(labels), plans, stamp=False, owner=(owner_secret, user))

    def _write(
        self,
        token: object,
        labels: list[Label],
        plans: Mapping[str, ReviewPlan],
        *,
        stamp: bool,
        owner: tuple[str | None, str | None] | None = None,
    ) -> LabelsResult:  # long: one transaction from lookup to commit
        """The one write path: lookup, checks, the cap and the rows, in one transaction."""
        import json

        with self._transaction() as con:
            row = self._share_row(con, token)
            setting = self._setting(con, row[0]) if row is not None else ReviewSetting()
            if row is None or not row[3] or not setting.enabled:
                return _refused()
            sid, owner_hash, owner_user, _ = row
            if owner is not None and not is_owner(owner_hash, owner_user, *owner):
                return LabelsResult(False, "not_owner", "Only the owner of this link can import labels.")
            tags = setting.flow.reason_tags
            if stamp and any(r not in tags for lab in labels for r in lab.reasons):
                return LabelsResult(False, "invalid", "A reason tag is not one of the owner's tags.")
            index = _Index(self._dataset_names(con, sid), plans)
            if stamp:  # the server's clock, and whether the judge was shown: never the reviewer's say
                labels = [replace(lab, time=now_iso(self.clock()),
                                  judge_shown=setting.flow.show_judge and lab.kind != "adjudication")
                          for lab in labels]
            good, bad = [], []
            for n, lab in enumerate(labels, 1):
                try:
                    good.append(index.check(lab))
                except ValueError as exc:
                    bad.append(f"label {n}: {exc}" if owner is not None else str(exc))
            if owner is None and bad:
                return LabelsResult(False, "invalid", bad[0], rejected=tuple(bad))
            if owner is None:
                keys = {index.stored(n): [it.item for it in p.items] for n, p in plans.items()}
                why = self._room_for(con, sid, setting, good, keys)
                if why is not None:
                    return LabelsResult(False, "invalid", why)
            have = sum(con.execute(f"SELECT COUNT(*) FROM {t} WHERE share_id = ?", (sid,)).fetchone()[0]
                       for t in ("labels", "adjudications"))
            if have + len(good) > MAX_LABELS_PER_SHARE:
                return LabelsResult(False, "full", FULL_MESSAGE, rejected=tuple(bad))
            adj = [g for g in good if g.kind == "adjudication"]
            con.executemany(
                "INSERT INTO labels(share_id, dataset, item, correct, note, reviewer, time, kind, unsure,"
                " judge_shown, reasons) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(sid, g.dataset, g.item, int(g.correct), g.note, g.reviewer, g.time, g.kind, int(g.unsure),
                  int(g.judge_shown), json.dumps(list(g.reasons)) if g.reasons else "")
                 for g in good if g.kind != "adjudication"],
            )
            con.executemany(
                "INSERT INTO adjudications(share_id, dataset, item, correct, note, adjudicator, time)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(sid, g.dataset, g.item, int(g.correct), g.note, g.reviewer, g.time) for g in adj],
            )
            self._stage("labels_before_commit")
        if owner is None or (stamp and len(labels) == 1):
            return LabelsResult(True, "saved", "Saved.", written=len(good))
        msg = f"Imported {len(good):,} label(s)" + (f"; {len(bad):,} left out:" if bad else ".")
        return LabelsResult(True, "imported", msg, written=len(good), rejected=tuple(bad))

    # --------------------------------------------------------------- reads
    @reported
    def labels(
        self, token: object, *, owner_secret: str | None = None, user: str | None = None
    ) -> LabelsResult:
        """Every label of the share ``token`` names, oldest first (the whole history).

        A reviewer reads through a link that opens with reviewing on; the owner (with the
        owner secret or as the logged-in owner) also after revoking, expiry, or turning
        reviewing off, until the share is deleted or swept.
        """
        import json

        from calib.labels.records import Label

        with self._connect() as con:
            row = self._share_row(con, token)
            if row is None:
                return _refused()
            sid, owner_hash, owner_user, opens = row
            reviewable = opens and self._setting(con, sid).enabled
            if not reviewable and not is_owner(owner_hash, owner_user, owner_secret, user):
                return _refused()
            rows = con.execute(
                "SELECT item, correct, note, reviewer, time, kind, dataset, unsure, judge_shown, reasons"
                " FROM labels WHERE share_id = ? ORDER BY id",
                (sid,),
            ).fetchall()
            rows += con.execute(
                "SELECT item, correct, note, adjudicator, time, 'adjudication', dataset, 0, 0, ''"
                " FROM adjudications WHERE share_id = ? ORDER BY id",
                (sid,),
            ).fetchall()
        out = tuple(
            Label(item=r[0], correct=bool(r[1]), note=r[2], reviewer=r[3], time=r[4], kind=r[5], dataset=r[6],
                  unsure=bool(r[7]), judge_shown=bool(r[8]), reasons=tuple(json.loads(r[9])) if r[9] else ())
            for r in rows
        )
        return LabelsResult(True, "ok", f"{len(out):,} label(s).", labels=out,
                            judge_shown=tuple(lab.judge_shown for lab in out),
                            reasons=tuple(lab.reasons for lab in out))
