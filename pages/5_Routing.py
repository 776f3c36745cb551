"""Routing: where to put the review threshold (the recommendation first), and what each choice costs."""

from __future__ import annotations

import streamlit as st

from calib.errors import CalibError
from calib.present import questions
from dashboard.layout import no_data, nothing_loaded, page_question, show_error
from dashboard.page import start
from dashboard.results import decision_for
from dashboard.routing_detail import beyond_threshold, decision_section, detail
from dashboard.threshold import threshold_panel
from dashboard.traffic_routing import traffic_section

ctx = start("routing", needs_data=False)  # with traffic only, its estimate shows
QUESTION = questions.QUESTIONS["routing"]
if not ctx.datasets:
    page_question(QUESTION, nothing_loaded())
    no_data()
    traffic_section(ctx)  # traffic without outcomes: its estimate from the labels (issue 24)
    st.stop()
try:
    answer = questions.routing_answer(decision_for(ctx, ctx.focus, ctx.view))
except CalibError as exc:
    answer = f"No decision for these settings: {exc}"
page_question(QUESTION, f"{ctx.focus.name}: {answer}")

st.caption(
    "First the recommended review threshold for your target error rate, with its guarantee; a \"Use the …\" "
    "button moves the slider to the recommended or the cheapest threshold. Move the review threshold below the "
    "card: items below it go to a person, items at or above it are accepted unseen. Each "
    "position is a threshold that routes the items differently. The numbers, the diagram and the curve follow "
    "at once. "
    "With an upper threshold, items between the two form a middle band, counted apart."
)

try:
    decision = decision_section(ctx)  # what a threshold move leaves alone is drawn outside its fragment
    threshold_panel(ctx, detail)
    beyond_threshold(ctx, decision)
except CalibError as exc:
    show_error(exc)
