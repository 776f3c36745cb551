"""Overview: does the stated confidence mean anything? Headline figures and the plain verdict."""

from __future__ import annotations

import streamlit as st

from calib import compare
from calib.errors import CalibError
from calib.present import figures, tables
from calib.present.format import p_value
from dashboard.decision_view import overview_decision
from dashboard.layout import PAGE_TITLES, md_escape, metric, no_data, show_error
from dashboard.page import page_setup
from dashboard.results import audit_for, comparison_for, group_comparison
from dashboard.summary import better_forecast, headline

ctx = page_setup("overview")
st.title(PAGE_TITLES["overview"])
if not ctx.datasets:
    no_data()
    st.stop()

v = ctx.view
focus = ctx.focus
overview_decision(ctx)  # the decision first (a share's reviewer: the owner's), then the evidence
try:
    a = audit_for(focus, v)
except CalibError as exc:
    show_error(exc)
    st.stop()

st.text(f"model: {focus.name}  ({a.n:,} answers)")
cols = st.columns(3) + st.columns(3)
for col, (label, value, interval) in zip(cols, headline(a), strict=True):
    metric(col, label, value, f"{100 * v.level:g}% interval {interval}" if interval else None)

winner = better_forecast(a)
if winner is not None:
    bt = a.tests["brier_vs_constant"]
    st.metric("Better forecast", winner,
              help="Brier score of the stated confidence against the constant forecast that gives every answer "
                   f"the model's own hit rate; paired test {p_value(bt.p_value, bt.log10_p, bound=bt.p_bound)}.")

if a.verdict:
    st.info(md_escape("\n".join(f"• {s}" for s in a.verdict)))
for note in a.notes:
    st.caption(md_escape(note))

groups = group_comparison(focus, v)
if groups is not None:
    st.subheader("Per group")
    st.text(f"model: {focus.name}, {len(groups.rows)} groups (subjects or tasks)")
    st.dataframe(tables.comparison_table(groups).rename(columns={"Model": "Group"}), hide_index=True)

if len(ctx.datasets) > 1:
    st.subheader("Models side by side")
    try:
        cmp = comparison_for(ctx, v)
    except CalibError as exc:
        show_error(exc)
    else:
        st.dataframe(tables.comparison_table(cmp), hide_index=True)
        st.caption(f"Calibration error: ECE with a {100 * v.level:g}% bootstrap interval ({v.reps:,} resamples). "
                   "Brier vs constant: the constant forecast is the model's own hit rate.")
        st.plotly_chart(figures.brier_vs_constant(cmp.rows, ctx.colors), config=figures.CONFIG, key="fig_brier")
else:
    row = compare.model_row(focus.name, focus.table, reps=0)
    st.plotly_chart(figures.brier_vs_constant([row], ctx.colors), config=figures.CONFIG, key="fig_brier")
