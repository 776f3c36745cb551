"""The Review page's body (issue 12): reviewers of a share link label the review queue
and the audit sample, one item at a time; the owner exports and imports the labels.

Contract
--------
- **Where.** A session opened from a share link (``?share=TOKEN``) whose owner enabled
  reviewing, or the session that made the link (the owner's, with its owner key). Anywhere
  else, or with reviewing off, the page says so in one sentence (:data:`NOT_SHARED`,
  :data:`NOT_ENABLED`).
- **What.** The plan of each dataset (:func:`calib.hosting.labels.plans_for`: the queue
  and the audit sample at the *owner's* threshold, so every reviewer sees the same items),
  the labels from the store (:meth:`calib.hosting.labels.ReviewCatalog.labels`), read on
  every run: the progress ("37 of 120 labelled", items with a label from anyone) agrees
  between reviewers after a rerun.
- **Who.** The logged-in (OIDC) e-mail; with a password only, a name the reviewer types
  once, kept in the URL as ``?reviewer=NAME`` (:data:`REVIEWER_PARAM`). The URL, not a
  cookie: Streamlit can read cookies (``st.context.cookies``) but not set them, and setting
  one from the page needs a script, which the app's Content-Security-Policy refuses
  (:mod:`calib.hosting.webguard`). A reload keeps the URL, so the name survives it; a new
  tab opened from the bare link asks again. The name is not a proof: with a password
  only, anyone with the link can type any name (the OIDC e-mail is verified).
- **Safe text.** Item ids, groups, question text, notes and names are user data: shown
  with ``st.text``, ``st.code`` and ``st.dataframe`` only, never markdown or HTML (the
  owner's guidelines: :func:`dashboard.review_card.safe_markdown`).
- **The workflow (issue 25).** The card (:mod:`dashboard.review_card`) is blind unless the
  owner shows the judge; a reviewer sees only their own labels (the count of labelled items
  on the progress bar aside; a traffic plan's certificate only when the owner shows the
  judge): the other reviewers' labels, the agreement,
  the audit on the labels and the export are the owner's, beside the workflow setting and adjudication
  (:mod:`dashboard.review_owner`). With assignment on, the server hands out the next item
  (:meth:`calib.hosting.assignment.AssignmentCatalog.next_item`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from dashboard.context import Context
from dashboard.entries import cache_key
from dashboard.keys import LAST_SHARE_KEY, OWNER_KEY, SHARED_KEY
from dashboard.layout import md_escape, metric, no_data, page_question, safe_filename, show_error
from dashboard.review_card import buttons, guidelines, item_card, reasons_of
from dashboard.runtime import share_store
from dashboard.traffic_view import certificate_section, is_traffic, traffic_plans

if TYPE_CHECKING:
    from calib.hosting.labels import ReviewSetting, ReviewState
    from calib.hosting.workflow import Workflow
    from calib.labels.plan import ReviewItem, ReviewPlan
    from calib.labels.records import Label
    from calib.runs.review import LabelsSoFar
    from calib.runs.settings import Settings

NOT_SHARED = (
    "Reviewing happens through a share link whose owner enabled it: share this view from the sidebar, "
    "enable reviewing, and send the link to the reviewers."
)
NOT_ENABLED = (
    "Reviewing is not enabled for this link: its owner can enable it in the Share panel of the sidebar."
)
#: The query parameter a password-only reviewer's name is kept in.
REVIEWER_PARAM = "reviewer"
#: Why an item is on the list, by its kind (:attr:`calib.labels.plan.ReviewItem.kind`).
WHY = {
    "queue": "below the threshold: scored {stated}, under the owner's threshold {t}, so it goes to a person",
    "audit": "audit sample of accepted items: scored {stated}, at or above the threshold {t}, accepted "
             "unseen; drawn at random to estimate the error among the accepted",
}
PROGRESS_TEXT = "{done:,} of {total:,} labelled"
_POS_KEY = "calib_review_pos"  # (token, dataset, item key) the reviewer is at
_NOTICE_KEY = "calib_review_notice"  # (ok, message) of the last label or import
_NAME_KEY = "calib_reviewer_name"  # a password-only reviewer's name, once typed
_IMPORT_ROUND_KEY = "calib_review_import_round"


# ----------------------------------------------------------------- who and where
def link_of(ctx: Context) -> tuple[str, str | None] | None:
    """``(token, owner secret or None)`` of the link this session reviews, or ``None``:
    the link it was opened from, else the last link it made (the owner's session)."""
    token = st.session_state.get(SHARED_KEY)
    if token:  # the owner key made here, or typed in the sidebar (checked by the store before use)
        typed = str(st.session_state.get("calib_owner_key") or "").strip()
        return str(token), st.session_state.get(OWNER_KEY, {}).get(token) or typed or None
    last = st.session_state.get(LAST_SHARE_KEY) or {}
    if last.get("token"):
        return str(last["token"]), last.get("secret")
    return None


def reviewer_name(ctx: Context) -> str | None:
    """Who labels: the OIDC e-mail, else the typed name (from the session or the URL);
    ``None`` after showing the form that asks for it."""
    from calib.hosting.labels import check_reviewer

    if ctx.access.user:
        return ctx.access.user
    for raw in (st.session_state.get(_NAME_KEY), st.query_params.get(REVIEWER_PARAM)):
        if not raw:
            continue
        try:
            name = check_reviewer(str(raw))
        except ValueError:
            continue
        st.session_state[_NAME_KEY] = name
        if st.query_params.get(REVIEWER_PARAM) != name:
            st.query_params[REVIEWER_PARAM] = name  # a reload keeps it
        return name
    with st.form("calib_reviewer_form"):
        typed = st.text_input("Your name (kept with your labels)", max_chars=200, key="calib_reviewer_input")
        go = st.form_submit_button("Start reviewing", type="primary")
    if go:
        try:
            st.session_state[_NAME_KEY] = check_reviewer(typed)
        except ValueError as exc:
            show_error(exc)
            return None
        st.rerun()
    st.caption(
        "Logged-in reviewers are named by their e-mail; here the name you type is kept in this page's "
        "address, so a reload keeps it."
    )
    return None


def _forget_name() -> None:
    st.session_state.pop(_NAME_KEY, None)
    st.query_params.pop(REVIEWER_PARAM, None)


# ----------------------------------------------------------------- the plans
@st.cache_data(max_entries=32, show_spinner="Drawing the review queue and the audit sample…")
def _plan_cached(key: str, threshold: float, size: int, seed: int, _ds: Dataset) -> ReviewPlan:
    from calib.hosting.labels import plans_for
    from calib.hosting.view import View

    return plans_for([_ds], View(lo=threshold), _setting(size, seed))[_ds.name]


def _setting(size: int, seed: int) -> ReviewSetting:
    from calib.hosting.labels import ReviewSetting

    return ReviewSetting(True, size, seed)


def plans(ctx: Context, state: ReviewState) -> dict[str, ReviewPlan]:
    """The review plan of each of the link's datasets that has rows (cached by content,
    threshold, sample size and seed)."""
    from calib.hosting.labels import review_threshold

    out = {}
    for ds in ctx.datasets:
        if ds.rows is None or ds.name not in state.datasets:
            continue
        t = review_threshold(state.view, ds.table.scale)
        out[ds.name] = _plan_cached(cache_key(ds), t, state.setting.sample_size, state.setting.seed, ds)
    out.update(traffic_plans(state))  # traffic without outcomes: its labelling plan (issue 24)
    return out


# ----------------------------------------------------------------- the page
def review_page(ctx: Context) -> None:
    """The whole Review page below its title."""
    from calib.present.questions import QUESTIONS, REVIEW_OFF

    link = link_of(ctx)
    if link is None:
        if ctx.datasets:
            page_question(QUESTIONS["review"], REVIEW_OFF["not_shared"])
            st.info(NOT_SHARED)
        else:
            no_data()  # as every page says before anything is loaded
        return
    token, secret = link
    try:
        state = share_store().review_state(token)
    except CalibError as exc:
        show_error(exc)
        return
    if state is None or not state.setting.enabled:
        page_question(QUESTIONS["review"], REVIEW_OFF["not_enabled"])
        st.info(NOT_ENABLED)
        return
    all_plans = plans(ctx, state)
    if not all_plans:
        st.info("This link's data has no per-item rows (a count table): there are no items to label.")
        return
    names = list(all_plans)
    question = st.container()  # first on the page, filled once the dataset is known
    got = share_store().labels(token, owner_secret=secret, user=ctx.access.user)
    if not got.ok:
        st.info(got.message)
        return
    who = reviewer_name(ctx)
    name = names[0] if len(names) == 1 or who is None else st.selectbox("Dataset", names,
                                                                          key="calib_review_dataset")
    plan = all_plans[name]
    stored = state.stored_name(name)
    history = [lab for lab in got.labels if lab.dataset == stored]
    with question:
        _question(plan, history)
    owner = share_store().owns(token, owner_secret=secret, user=ctx.access.user)
    flow = state.setting.flow
    if who is not None:
        _header(plan, who, typed=not ctx.access.user, flow=flow)
        _notice()
        if not plan.items:
            st.info("Nothing to label at this threshold: no item is below it and none is accepted to sample.")
        else:
            fields = _card_fields(name, plan, flow, ctx.by_name(name))
            if flow.assign:
                _assigned(token, plan, stored, history, who, all_plans, flow, fields)
            else:
                _labelling(token, plan, stored, history, who, all_plans, flow, owner, fields)
    if is_traffic(plan) and (owner or flow.show_judge):  # it counts every reviewer's labels: blind, the owner's
        certificate_section(name, history, state.view)
    elif is_traffic(plan):
        from calib.present.review import CERTIFICATE_WITHHELD

        st.caption(CERTIFICATE_WITHHELD)
    if not owner:
        return  # the other reviewers' labels, agreement and export are the owner's (who need not label)
    from dashboard.review_owner import handoff_section, labels_section, owner_panel, review_report_of

    owner_panel(token, secret, plan, stored, history, all_plans, flow)
    if history:
        report = review_report_of(ctx, None if is_traffic(plan) else ctx.by_name(name), plan, stored, history)
        labels_section(report)
        handoff_section(token, secret, plan, stored, history, report, ctx.access.user)
    if not is_traffic(plan):
        _so_far(ctx, ctx.by_name(name), plan, stored, history)
    _export_import(ctx, token, secret, got.labels, all_plans)


def _question(plan: ReviewPlan, history: list[Label]) -> None:
    """The page's question and its answer: what is to be labelled and how much is."""
    from calib.present import format as fmt
    from calib.present.questions import QUESTIONS, review_answer
    from calib.present.traffic import review_answer as traffic_answer
    from calib.runs.review import current

    labelled = {lab.item for lab in current(history)}
    done = sum(1 for it in plan.items if it.item in labelled)
    answer = traffic_answer if is_traffic(plan) else review_answer
    page_question(QUESTIONS["review"], answer(len(plan.queue), len(plan.audit), plan.accepted,
                                              fmt.sig(plan.threshold, 4), done))


def _header(plan: ReviewPlan, who: str, typed: bool, flow: Workflow) -> None:
    from calib.present import format as fmt
    from calib.present.review import BLIND, RIGHT, SHORTCUTS, SKIP, UNBLIND, WRONG, shortcuts_sentence

    c1, c2 = st.columns([4, 1])
    c1.text(f"Reviewing as {who}")
    if typed:  # a logged-in reviewer is their e-mail
        c2.button("Not you?", key="calib_review_forget", on_click=_forget_name)
    if is_traffic(plan):
        from calib.present.traffic import REVIEW_CAPTION

        st.caption(REVIEW_CAPTION.format(budget=plan.budget, seed=plan.seed, t=fmt.sig(plan.threshold, 4),
                                         right=SHORTCUTS[RIGHT], wrong=SHORTCUTS[WRONG], next=SHORTCUTS[SKIP]))
    else:
        _caption(plan)
    st.caption((UNBLIND if flow.show_judge else BLIND) + " " + shortcuts_sentence())
    guidelines(flow)


def _caption(plan: ReviewPlan) -> None:
    from calib.present import format as fmt

    st.caption(
        f"The review queue ({len(plan.queue):,} items scored below the owner's threshold "
        f"{fmt.sig(plan.threshold, 4)}, most doubtful first) and an audit sample of {len(plan.audit):,} of the "
        f"{plan.accepted:,} items accepted unseen (seeded, stratified by stated value), the audit items spread "
        "evenly through the queue. For each item, say whether its answer is right. The sidebar's "
        "threshold does not change these lists."
    )


def _notice() -> None:
    notice = st.session_state.pop(_NOTICE_KEY, None)
    if notice:
        ok, message = notice
        (st.success if ok else st.warning)(md_escape(message))


def _labelling(
    token: str,
    plan: ReviewPlan,
    stored: str,
    history: list[Label],
    who: str,
    all_plans: dict[str, ReviewPlan],
    flow: Workflow,
    owner: bool,
    fields: dict[int, dict[str, str]],
) -> None:
    """Progress, the current item with its buttons, and (for the owner) every item."""
    from calib.runs.review import current

    now = current(history)
    labelled = {lab.item for lab in now}
    mine = {lab.item: lab.correct for lab in now if lab.reviewer == who}
    keys = [it.item for it in plan.items]
    done = sum(1 for k in keys if k in labelled)
    st.progress(done / len(keys), text=PROGRESS_TEXT.format(done=done, total=len(keys)))
    st.caption(f"You labelled {sum(1 for k in keys if k in mine):,}.")
    pos = _position(token, stored, keys, labelled, mine, move_on=is_traffic(plan))
    item = plan.items[pos]
    _card(token, plan, pos, stored, who, all_plans, flow, _verdict(now, item.item, who), keys,
          lambda: _skip(token, stored, item.item, keys, labelled, mine), fields)
    if owner:
        _item_table(plan, now)


def _assigned(token: str, plan: ReviewPlan, stored: str, history: list[Label], who: str,
              all_plans: dict[str, ReviewPlan], flow: Workflow, fields: dict[int, dict[str, str]]) -> None:
    """Assignment on: the server hands out this reviewer's next item and holds it."""
    from calib.present.review import DONE, progress_sentence
    from calib.runs.review import current

    keys = [it.item for it in plan.items]
    try:
        got = share_store().next_item(token, stored, keys, who)
    except CalibError as exc:
        show_error(exc)
        return
    if not got.ok:
        st.info(got.message)
        return
    prog = got.progress
    st.progress(prog.given / max(prog.planned, 1),
                text=progress_sentence(prog.given, prog.planned, prog.complete, prog.items))
    n, _, skips = prog.per_reviewer.get(who, (0, 0, 0))
    st.caption(f"You labelled {n:,} and skipped {skips:,}.")
    if got.item is None:
        st.success(DONE)
        return
    pos = keys.index(got.item)
    _card(token, plan, pos, stored, who, all_plans, flow, _verdict(current(history), got.item, who), keys,
          lambda: _skip_assigned(token, stored, got.item, who), fields)


@st.cache_data(max_entries=16, show_spinner=False)
def _fields_cached(digest: str, filename: str, lines: tuple[int, ...], overrides: tuple[tuple[str, str], ...],
                   exclude: tuple[str, ...], _data: bytes) -> dict[int, dict[str, str]]:
    from calib.runs.review import card_fields

    return card_fields(_data, filename, lines, dict(overrides), exclude)


def _card_fields(name: str, plan: ReviewPlan, flow: Workflow, ds: Dataset | None) -> dict[int, dict[str, str]]:
    """Question, answer, reference and rationale of the plan's items, by line, from the
    file this session loaded (:func:`calib.runs.review.card_fields`; cached by content)."""
    from dashboard.entries import entries, entry_bytes

    entry = next((e for e in entries() if e.name == name and e.kind != "folder"), None)
    if entry is None:
        return {}
    shown = ds.report.fields if ds is not None else {}
    exclude = tuple(v for k, v in shown.items() if k in ("confidence", "outcome") and v)
    lines = tuple(sorted({it.line for it in plan.items}))
    return _fields_cached(entry.digest, entry.filename, lines, flow.card_fields, exclude, entry_bytes(entry))


def _verdict(now: tuple[Label, ...], item: str, who: str) -> str | None:
    for lab in now:
        if lab.item == item and lab.reviewer == who:
            return "unsure" if lab.unsure else "right" if lab.correct else "wrong"
    return None


def _card(token: str, plan: ReviewPlan, pos: int, stored: str, who: str, all_plans: dict[str, ReviewPlan],
          flow: Workflow, mine: str | None, keys: list[str], on_skip: Any,
          fields: dict[int, dict[str, str]]) -> None:
    """The card of the ``pos``-th item, its note and its buttons."""
    item = plan.items[pos]
    why = _why(plan, pos) if flow.show_judge else None
    item_card(item, pos, len(keys), mine, why, outcome=not is_traffic(plan), fields=fields.get(item.line, {}))
    note_key = f"calib_review_note_{stored}_{item.item}"
    st.text_input("Note (optional)", max_chars=500, key=note_key)
    card_key = f"{stored}_{item.item}"

    def on_label(correct: bool, unsure: bool) -> None:
        _record(token, stored, item, who, note_key, all_plans, keys, correct, unsure, reasons_of(card_key),
                move=not flow.assign)

    buttons(on_label, on_skip, flow.reason_tags, card_key)


def _position(token: str, stored: str, keys: list[str], labelled: set[str], mine: dict[str, bool],
              move_on: bool = False) -> int:
    """Where the reviewer is: the item kept in the session, else the first nobody labelled.
    With ``move_on`` (a traffic plan, labelled in its order by several reviewers at once), a
    kept item another reviewer labelled since gives way to the next one nobody labelled."""
    held = st.session_state.get(_POS_KEY)
    after = -1
    if held and held[0] == token and held[1] == stored and held[2] in keys:
        if not (move_on and held[2] in labelled and held[2] not in mine):
            return keys.index(held[2])
        after = keys.index(held[2])
    pos = _next_open(keys, after, labelled, mine)
    st.session_state[_POS_KEY] = (token, stored, keys[pos])
    return pos


def _next_open(keys: list[str], after: int, labelled: set[str], mine: dict[str, bool]) -> int:
    """The next item after ``after`` (wrapping) that nobody labelled, else one this
    reviewer did not, else the one after."""
    n = len(keys)
    order = [(after + k) % n for k in range(1, n + 1)]
    for pos in order:
        if keys[pos] not in labelled:
            return pos
    for pos in order:
        if keys[pos] not in mine:
            return pos
    return order[0]


def _why(plan: ReviewPlan, pos: int) -> str:
    """Why the plan chose its ``pos``-th item, with the judge's score (shown only when the
    owner shows the judge)."""
    from calib.present import format as fmt

    item = plan.items[pos]
    if not is_traffic(plan):
        return "Why this item: " + WHY[item.kind].format(stated=fmt.sig(item.stated, 4),
                                                         t=fmt.sig(plan.threshold, 4))
    from calib.present.traffic import why_line

    why = plan.why[pos]
    return why_line(item.kind, item.stated, plan.threshold, why.stratum, why.items, why.planned,
                    why.inclusion_probability)


def _item_table(plan: ReviewPlan, now: tuple[Label, ...]) -> None:
    import pandas as pd

    by_item: dict[str, list[Label]] = {}
    for lab in now:
        by_item.setdefault(lab.item, []).append(lab)
    rows = []
    traffic = is_traffic(plan)
    for it in plan.items:
        labs = by_item.get(it.item, [])
        rows.append(
            {
                "item": it.item,
                "list": it.kind,
                "group": it.group,
                "stated": it.stated,
                "file's outcome": "—" if traffic else "right" if it.correct else "wrong",
                "labels": len(labs),
                "right": sum(lab.correct for lab in labs),
                "text": it.text[:120],
            }
        )
    with st.expander(f"Every item ({len(rows):,})"):
        st.dataframe(pd.DataFrame(rows), hide_index=True)


def _record(
    token: str,
    stored: str,
    item: ReviewItem,
    who: str,
    note_key: str,
    all_plans: dict[str, ReviewPlan],
    keys: list[str],
    correct: bool,
    unsure: bool = False,
    reasons: list[str] | None = None,
    move: bool = True,
) -> None:
    """A Right / Wrong / Unsure click: append the label, then (without assignment) go to
    the next unlabelled item; with assignment the server hands out the next one."""
    from calib.runs.review import current, new_label

    note = str(st.session_state.get(note_key) or "")
    label = new_label(item, who, stored, correct, unsure=unsure, note=note)
    try:
        out = share_store().add_label(token, label, all_plans, reasons=reasons or [])
    except CalibError as exc:
        st.session_state[_NOTICE_KEY] = (False, str(exc))
        return
    if not out.ok:
        st.session_state[_NOTICE_KEY] = (False, out.message)
        return
    st.session_state[_NOTICE_KEY] = (True, f"Saved: {'unsure' if unsure else 'right' if correct else 'wrong'}.")
    if not move:
        return
    got = share_store().labels(token)
    now = current(lab for lab in got.labels if lab.dataset == stored) if got.ok else ()
    labelled = {lab.item for lab in now}
    mine = {lab.item: lab.correct for lab in now if lab.reviewer == who}
    st.session_state[_POS_KEY] = (
        token,
        stored,
        keys[_next_open(keys, keys.index(item.item), labelled, mine)],
    )


def _skip_assigned(token: str, stored: str, item: str, who: str) -> None:
    try:
        out = share_store().skip_item(token, stored, item, who)
    except CalibError as exc:
        st.session_state[_NOTICE_KEY] = (False, str(exc))
        return
    st.session_state[_NOTICE_KEY] = (out.ok, "Skipped." if out.ok else out.message)


def _skip(
    token: str, stored: str, item: str, keys: list[str], labelled: set[str], mine: dict[str, bool]
) -> None:
    st.session_state[_POS_KEY] = (token, stored, keys[_next_open(keys, keys.index(item), labelled, mine)])


# ----------------------------------------------------------------- labels so far
@st.cache_data(max_entries=32, show_spinner="Counting the labels…")
def _from_labels(key: str, labels_key: str, stored: str, threshold: float, s: Settings, _ds: Dataset,
                 _history: tuple[Label, ...]) -> LabelsSoFar:
    """Everything the page computes from the labels (kappa and its bootstrap, the audit
    sample's estimate, the audit and the recommendation on the reviewers' outcomes:
    :func:`calib.runs.review.labels_so_far`), once per (data, labels, settings): a rerun
    (each click) with no new label reuses them."""
    from calib.runs.review import labels_so_far

    return labels_so_far(_ds, _history, s, threshold=threshold, dataset=stored)


def _so_far(ctx: Context, ds: Dataset | None, plan: ReviewPlan, stored: str, history: list[Label]) -> None:
    """Agreement of the judge's verdicts with the reviewers (Cohen's kappa with its interval,
    the confusion matrix, between reviewers) and the audit sample's estimate of the error
    among the items accepted unseen, then the audit and the threshold decision again on the
    reviewers' outcomes, as ``calib audit --labels`` computes them (:func:`calib.runs.review.labels_so_far`)."""
    import hashlib

    from calib.present import explain
    from calib.present import format as fmt
    from calib.runs.review import labels_to_jsonl
    from dashboard.results import settings_of

    st.subheader("Labels so far")
    if not history or ds is None or ds.rows is None:
        st.caption("No labels yet.")
        return
    v = ctx.view
    labels_key = hashlib.sha256(labels_to_jsonl(history)).hexdigest()
    try:
        got = _from_labels(cache_key(ds), labels_key, stored, plan.threshold,
                           settings_of(v).only("reps", "seed", "level", "target", "confidence"), ds, tuple(history))
    except CalibError as exc:
        show_error(exc)
        return
    agree, err, summary = got.labelled.agreement, got.labelled.accepted_error, got.labelled.outcomes
    a, rec = got.audit, got.recommendation
    m1, m2, m3 = st.columns(3)
    metric(m1, "Cohen's kappa, judge vs reviewers", fmt.num(agree.kappa.value, 2),
           fmt.level_interval(v.level, *agree.kappa.ci, lambda x: fmt.num(x, 2)))
    m2.metric("Agreement, judge vs reviewers", fmt.pct(agree.agreement))
    metric(m3, "Error among accepted (audit sample)", fmt.pct(err.rate.value),
           fmt.level_interval(err.level, err.rate.lo, err.rate.hi, fmt.pct))
    st.text(agree.sentence())
    st.text(err.sentence())
    (rr, rw), (wr, ww) = agree.confusion
    st.dataframe(
        {
            "judge's verdict (file)": ["right", "wrong"],
            "reviewer: right": [rr, wr],
            "reviewer: wrong": [rw, ww],
        },
        hide_index=True,
    )
    st.subheader("The audit on the reviewers' outcomes")
    st.caption(summary.sentence())
    m1, m2, m3 = st.columns(3)
    acc, ece = a.estimates["accuracy"], a.estimates["ece"]
    metric(m1, "Accuracy (reviewers' outcomes)", fmt.pct(acc.value),
           fmt.level_interval(v.level, *acc.ci, fmt.pct), help=explain.help_text("accuracy"))
    metric(m2, "ECE (reviewers' outcomes)", fmt.num(ece.value), fmt.level_interval(v.level, *ece.ci),
           help=explain.help_text("ece"))
    metric(m3, "Recommended threshold (reviewers' outcomes)",
           "none qualifies" if rec.threshold is None else fmt.value(rec.threshold))
    st.text(rec.message)


# ----------------------------------------------------------------- export / import
def _export_import(
    ctx: Context, token: str, secret: str | None, labels: tuple[Label, ...], all_plans: dict[str, ReviewPlan]
) -> None:
    from calib.runs.review import labels_to_csv, labels_to_jsonl

    st.subheader("Export and import")
    c1, c2 = st.columns(2)
    base = safe_filename("labels", "")
    c1.download_button(
        "Download the labels (JSONL)",
        labels_to_jsonl(labels),
        file_name=f"{base}.jsonl",
        mime="application/jsonl",
        key="calib_labels_jsonl",
        on_click="ignore",
        disabled=not labels,
    )
    c2.download_button(
        "Download the labels (CSV)",
        labels_to_csv(labels),
        file_name=f"{base}.csv",
        mime="text/csv",
        key="calib_labels_csv",
        on_click="ignore",
        disabled=not labels,
    )
    st.caption(
        "Every label, with its changes, oldest first: `calib audit FILE --labels labels.jsonl` uses them."
    )
    if ctx.access.read_only or not (secret or ctx.access.user):
        st.caption(
            "Importing a labels file is for the link's owner, in the session that made the link "
            "(or with `calib labels import`)."
        )
        return
    round_ = st.session_state.get(_IMPORT_ROUND_KEY, 0)
    up = st.file_uploader(
        "Import a labels file (JSONL or CSV, as exported; a final-labels file imports as adjudications)",
        type=["jsonl", "csv", "json"],
        key=f"calib_labels_upload_{round_}",
    )
    if up is not None:
        _import(token, secret, ctx.access.user, up.name, up.getvalue(), all_plans)
        st.session_state[_IMPORT_ROUND_KEY] = round_ + 1
        st.rerun()


def _import(
    token: str, secret: str | None, user: str | None, name: str, data: bytes, all_plans: dict[str, ReviewPlan]
) -> None:
    from calib.runs.labels import read_any_labels

    try:
        labels, problems = read_any_labels(data, name)  # a final-labels file: as adjudications
        out = share_store().import_labels(token, labels, all_plans, owner_secret=secret, user=user)
    except CalibError as exc:
        st.session_state[_NOTICE_KEY] = (False, str(exc))
        return
    if not out.ok:
        st.session_state[_NOTICE_KEY] = (False, out.message)
        return
    left = [*problems, *out.rejected]
    text = f"Imported {out.written:,} label(s) from the file"
    if left:
        text += (
            f"; {len(left):,} left out: "
            + "; ".join(left[:5])
            + (f"; and {len(left) - 5:,} more" if len(left) > 5 else "")
        )
    st.session_state[_NOTICE_KEY] = (not left, text + ("" if left else "."))
