"""Drift: two runs of the same judge compared (what moved, is it real, does the threshold
still hold), and with three or more runs the chart over time with its control limit."""

from __future__ import annotations

import streamlit as st

from calib.errors import CalibError
from calib.present import questions
from calib.settings import DRIFT_PAIRINGS
from dashboard.drift_view import (
    anchor_ids,
    answer_field,
    drift_for,
    series_for,
    show_attribution,
    show_headline,
    show_series,
    show_threshold,
    show_values,
    show_verdict,
)
from dashboard.layout import page_question, show_error
from dashboard.page import start
from dashboard.transport_view import show_transport

ctx = start("drift")
QUESTION = questions.QUESTIONS["drift"]
top = st.container()  # the question and its answer, filled once the runs are chosen

st.caption(
    "Two runs of one judge (a new model version, a new prompt): the change in accuracy, stated confidence and "
    "calibration error, with bootstrap intervals and tests (paired by item id when both runs judged the same "
    "items), the stated values whose hit rate moved (Holm-corrected), and whether the review threshold in the "
    "sidebar still meets its target error on the new run."
)
names = [d.name for d in ctx.datasets]
if len(names) < 2:
    with top:
        page_question(QUESTION, "One run is loaded: load a second run of the same judge to compare them.")
    st.info("Load two or more runs of the same judge on the Data page (one file per run) to compare them.")
    st.stop()

c1, c2, c3 = st.columns(3)
old_name = c1.selectbox("Old run", names, index=0, key="drift_old")
new_name = c2.selectbox("New run", names, index=len(names) - 1, key="drift_new")
pairing = c3.radio("Pairing", DRIFT_PAIRINGS, horizontal=True, key="drift_pairing",
                   help="auto: paired by item id when at least half the ids are shared")
if old_name == new_name:
    with top:
        page_question(QUESTION, "Pick two different runs below.")
    st.info("Pick two different runs.")
    st.stop()
try:
    old, new = ctx.by_name(old_name), ctx.by_name(new_name)
    d = drift_for(old, new, ctx.view, pairing, anchor_ids(), answer_field(old, new))
except CalibError as exc:
    with top:
        page_question(QUESTION, "The runs could not be compared (see below).")
    show_error(exc)
    st.stop()
with top:
    page_question(QUESTION, f"{old_name} -> {new_name}: {questions.drift_answer(d)}")

show_verdict(d)
show_headline(d)
st.subheader("Which stated values moved")
show_values(d)
show_threshold(d)
show_attribution(d)
st.text("\n".join(d.notes))
show_transport(ctx, ctx.by_name(old_name), ctx.by_name(new_name))

if len(names) >= 3:
    st.subheader("Runs over time")
    st.caption("The runs in time order: by the dates in their names when every name has one, else as loaded. "
               "An EWMA chart of accuracy (lambda 0.2, limits at 3 "
               "standard deviations, the reference's own error included) against the first run(s).")
    reference = st.number_input("Reference runs", min_value=1, max_value=len(names) - 1, value=1, step=1,
                                key="drift_reference")
    try:
        show_series(*series_for(ctx.datasets, ctx.view, int(reference)))
    except CalibError as exc:
        show_error(exc)
