"""Routing: where to put the review threshold (the recommendation first), and what each choice costs."""

from __future__ import annotations

import streamlit as st

from calib.errors import CalibError
from dashboard.layout import PAGE_TITLES, no_data, show_error
from dashboard.page import page_setup
from dashboard.routing_detail import detail
from dashboard.threshold import threshold_panel

ctx = page_setup("routing")
st.title(PAGE_TITLES["routing"])
if not ctx.datasets:
    no_data()
    st.stop()

st.caption(
    "First the recommended review threshold for your target error rate, with its guarantee; \"Use this "
    "threshold\" moves the slider there. Move the review threshold in the sidebar: items below it go to a "
    "person, items at or above it are accepted unseen. The numbers, the diagram and the curve follow at once. "
    "With an upper threshold, items between the two form a middle band, counted apart."
)

try:
    threshold_panel(ctx, detail)
except CalibError as exc:
    show_error(exc)
