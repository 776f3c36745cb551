"""The owner's part of the Review page (issue 25): the workflow setting of the link,
progress per reviewer, adjudication of the disagreements, and what the labels say
(agreement, the file against the final labels, the reviewers' own error:
:func:`calib.runs.review.review_report`, computed once, worded by :mod:`calib.present.review`).

Contract
--------
Shown only in the session that made the link (its owner key). The workflow is saved with
:meth:`calib.hosting.labels.ReviewCatalog.set_workflow`; an adjudication with
:meth:`calib.hosting.labels.ReviewCatalog.adjudicate` (appended: the history keeps every
one). A disagreement is an item whose reviewers' current labels are not all alike (right
beside wrong, or an unsure) and that has no adjudication yet; the labels and notes are
shown side by side in a table (user text: ``st.dataframe`` only). The final label is
:func:`calib.runs.review.final`'s (what the audit on the labels uses); the disagreements are
:func:`calib.runs.review.disagreements`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from calib.errors import CalibError
from dashboard.layout import md_escape, show_error
from dashboard.runtime import share_store

if TYPE_CHECKING:
    from calib.dataset import Dataset
    from calib.hosting.workflow import Workflow
    from calib.labels.plan import ReviewItem, ReviewPlan
    from calib.labels.records import Label
    from calib.runs.review import ReviewReport
    from calib.runs.settings import Settings
    from dashboard.context import Context

_ADJ_NOTICE = "calib_adjudication_notice"


def owner_panel(token: str, secret: str | None, plan: ReviewPlan, stored: str, history: list[Label],
                all_plans: dict[str, ReviewPlan], flow: Workflow) -> None:
    """The workflow form, progress per reviewer and adjudication."""
    st.subheader("Workflow (owner)")
    _workflow_form(token, secret, flow)
    if flow.assign:
        _per_reviewer(token, plan, stored)
    st.subheader("Adjudication")
    _adjudication(token, secret, plan, stored, history, all_plans)


def _workflow_form(token: str, secret: str | None, flow: Workflow) -> None:
    from calib.hosting.workflow import Workflow

    with st.form("calib_workflow_form"):
        assign = st.checkbox("Assign items (the server hands each reviewer their next item)", value=flow.assign,
                             key="calib_flow_assign")
        overlap = st.number_input("Overlap: share of items labelled by several reviewers (%)", 0, 100,
                                  int(round(flow.overlap * 100)), key="calib_flow_overlap")
        k = st.number_input("Reviewers per overlapped item", 2, 5, flow.k, key="calib_flow_k")
        names = st.text_area("Reviewers (one per line; empty: anyone with the link)", "\n".join(flow.reviewers),
                             key="calib_flow_reviewers")
        show = st.checkbox("Show the judge (stated confidence and the file's outcome) to reviewers",
                           value=flow.show_judge, key="calib_flow_show")
        text = st.text_area("Guidelines (Markdown; no HTML)", flow.guidelines, max_chars=10_000,
                            key="calib_flow_guidelines")
        tags = st.text_input("Reason tags (comma-separated)", ", ".join(flow.reason_tags), key="calib_flow_tags")
        keys = _field_inputs(flow)
        go = st.form_submit_button("Save the workflow")
    if not go:
        return
    new = Workflow(assign=assign, overlap=overlap / 100, k=int(k),
                   reviewers=tuple(n for n in names.splitlines() if n.strip()), show_judge=show,
                   guidelines=text, reason_tags=tuple(t for t in tags.split(",") if t.strip()),
                   card_fields=tuple((f, k) for f, k in keys.items() if k.strip()))
    try:
        out = share_store().set_workflow(token, new, owner_secret=secret)
    except CalibError as exc:
        show_error(exc)
        return
    (st.success if out.ok else st.warning)(md_escape(out.message))


def _field_inputs(flow: Workflow) -> dict[str, str]:
    """The card's field overrides (empty: detected), four inputs in a row."""
    from calib.present.review import CARD_FIELDS

    st.caption("The card's fields: the key of each in the file (empty: detected; a dotted path for a nested one).")
    given = dict(flow.card_fields)
    cols = st.columns(len(CARD_FIELDS))
    return {name: col.text_input(title, given.get(name, ""), max_chars=240, key=f"calib_flow_field_{name}")
            for col, (name, title) in zip(cols, CARD_FIELDS.items(), strict=True)}


def _per_reviewer(token: str, plan: ReviewPlan, stored: str) -> None:
    from calib.present.review import progress_sentence

    prog = share_store().assignment_progress(token, stored, [it.item for it in plan.items])
    if prog is None:
        return
    st.text(progress_sentence(prog.given, prog.planned, prog.complete, prog.items))
    if prog.per_reviewer:
        st.dataframe({"reviewer": list(prog.per_reviewer),
                      "labels": [v[0] for v in prog.per_reviewer.values()],
                      "of them overlapped": [v[1] for v in prog.per_reviewer.values()],
                      "skipped": [v[2] for v in prog.per_reviewer.values()]}, hide_index=True)


def _adjudication(token: str, secret: str | None, plan: ReviewPlan, stored: str, history: list[Label],
                  all_plans: dict[str, ReviewPlan]) -> None:
    from calib.present.review import disagreement_sentence
    from calib.runs.review import disagreements, final, item_labels

    notice = st.session_state.pop(_ADJ_NOTICE, None)
    if notice:
        (st.success if notice[0] else st.warning)(md_escape(notice[1]))
    st.caption(final(history).sentence())
    items = disagreements(history)
    st.text(disagreement_sentence(len(items)))
    if not items:
        return
    item = st.selectbox("Item to adjudicate", items, key="calib_adjudicate_item")
    now = item_labels(history, item)
    st.dataframe({"reviewer": [lab.reviewer for lab in now],
                  "label": ["unsure" if lab.unsure else "right" if lab.correct else "wrong" for lab in now],
                  "note": [lab.note for lab in now]}, hide_index=True)
    ri = next(it for it in plan.items if it.item == item)
    c1, c2 = st.columns(2)
    for col, correct, name in ((c1, True, "Final: right"), (c2, False, "Final: wrong")):
        col.button(name, key=f"calib_adjudicate_{int(correct)}", on_click=_adjudicate,
                   args=(token, secret, ri, stored, correct, all_plans))


def _adjudicate(token: str, secret: str | None, item: ReviewItem, stored: str, correct: bool,
                all_plans: dict[str, ReviewPlan]) -> None:
    from calib.runs.review import adjudication

    label = adjudication(item, stored, correct)
    try:
        out = share_store().adjudicate(token, label, all_plans, owner_secret=secret)
    except CalibError as exc:
        st.session_state[_ADJ_NOTICE] = (False, str(exc))
        return
    st.session_state[_ADJ_NOTICE] = (out.ok, f"Final label set: {'right' if correct else 'wrong'}."
                                     if out.ok else out.message)


# ----------------------------------------------------------------- what the labels say
@st.cache_data(max_entries=32, show_spinner="Measuring the reviewers' agreement…")
def _report_cached(data_key: str, labels_key: str, stored: str, threshold: float, s: Settings,
                   _ds: Dataset | None, _history: tuple[Label, ...]) -> ReviewReport:
    from calib.runs.review import review_report

    return review_report(_history, s, _ds, threshold=threshold, dataset=stored)


def review_report_of(ctx: Context, ds: Dataset | None, plan: ReviewPlan, stored: str,
                     history: list[Label]) -> ReviewReport:
    """:func:`calib.runs.review.review_report` of the link's labels at the session's
    bootstrap settings and target (cached by data, labels and settings); the file's
    outcomes and the bound only for a labelled file (``ds`` with rows), not traffic."""
    import hashlib

    from calib.runs.review import labels_to_jsonl
    from dashboard.entries import cache_key
    from dashboard.results import settings_of

    ds = ds if ds is not None and ds.rows is not None else None
    labels_key = hashlib.sha256(labels_to_jsonl(history)).hexdigest()
    return _report_cached(cache_key(ds) if ds is not None else "", labels_key, stored, plan.threshold,
                          settings_of(ctx.view).only("reps", "seed", "level", "target"), ds, tuple(history))


def labels_section(report: ReviewReport) -> None:
    """Agreement among the reviewers, per reviewer against the final labels, the file's
    outcomes against them, and the reviewers' own error (the figures of ``report``)."""
    from calib.present import review as words

    st.subheader("Agreement and the labels' own error")
    st.caption(words.AGREEMENT_CAPTION)
    st.text(report.agreement.sentences()[0])
    st.dataframe(words.agreement_rows(report.agreement), hide_index=True, key="calib_agreement_table")
    if report.agreement.per_reviewer:
        st.dataframe(words.per_reviewer_rows(report.agreement), hide_index=True, key="calib_per_reviewer_table")
    if report.outcomes is not None:
        st.caption(words.OUTCOMES_CAPTION)
        confusion, stats = words.outcome_rows(report.outcomes)
        c1, c2 = st.columns(2)
        c1.dataframe(confusion, hide_index=True, key="calib_final_confusion")
        c2.dataframe(stats, hide_index=True, key="calib_final_stats")
    st.caption(words.ERROR_CAPTION)
    st.text(report.reviewer_error.sentence())
    if report.bound is not None:
        st.text(report.bound.sentence())
        st.text(words.certificate_line(report.bound))


def handoff_section(token: str, secret: str | None, plan: ReviewPlan, stored: str, history: list[Label],
                    report: ReviewReport, user: str | None) -> None:
    """The hand-off downloads: final labels, assignment, agreement, each as JSONL and CSV
    (:func:`calib.runs.review.handoff`, what ``calib labels export --what ...`` writes)."""
    from calib.present.review import HANDOFF_CAPTION, HANDOFF_KINDS
    from calib.runs.review import handoff, handoff_file
    from calib.runs.settings import Settings
    from dashboard.layout import safe_filename

    st.subheader("Hand-off")
    st.caption(HANDOFF_CAPTION)
    rows = share_store().assignment_rows(token, stored, [it.item for it in plan.items], owner_secret=secret, user=user)
    for kind, title in HANDOFF_KINDS.items():
        recs = handoff(kind, history, Settings(), dataset=stored, report=report, assignment=rows or ())
        c1, c2, c3 = st.columns([2, 1, 1])
        c1.text(f"{title} ({len(recs):,} records)")
        base = safe_filename(kind, "")
        for col, fmt, mime in ((c2, "jsonl", "application/jsonl"), (c3, "csv", "text/csv")):
            # the file is written when downloaded, not on every rerun
            col.download_button(fmt.upper(), lambda r=recs, k=kind, f=fmt: handoff_file(r, k, f),
                                file_name=f"{base}.{fmt}", mime=mime, key=f"calib_handoff_{kind}_{fmt}",
                                on_click="ignore", disabled=not recs)
