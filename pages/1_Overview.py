"""Overview: does the stated confidence mean anything? Headline figures and the plain verdict."""

from __future__ import annotations

import streamlit as st

import ui
from calib import audit as audit_mod
from calib import compare, figures
from calib.errors import CalibError

ctx = ui.page_setup("overview")
st.title(ui.PAGE_TITLES["overview"])
if not ctx.datasets:
    ui.no_data()
    st.stop()

v = ctx.view
focus = ctx.focus
try:
    a = ui.audit_for(focus, v)
except CalibError as exc:
    ui.show_error(exc)
    st.stop()

st.text(f"model: {focus.name}  ({a.n:,} answers)")
cols = st.columns(3) + st.columns(3)
for col, (label, value, interval) in zip(cols, ui.headline(a), strict=True):
    ui.metric(col, label, value, f"{100 * v.level:g}% interval {interval}" if interval else None)

winner = ui.better_forecast(a)
if winner is not None:
    bt = a.tests["brier_vs_constant"]
    st.metric("Better forecast", winner,
              help="Brier score of the stated confidence against the constant forecast that gives every answer "
                   f"the model's own hit rate; paired test {audit_mod.fmt_p(bt.p_value, bt.log10_p, bound=bt.p_bound)}.")

if a.verdict:
    st.info(ui.md_escape("\n".join(f"• {s}" for s in a.verdict)))
for note in a.notes:
    st.caption(ui.md_escape(note))

groups = ui.group_comparison(focus, v)
if groups is not None:
    st.subheader("Per group")
    st.text(f"model: {focus.name}, {len(groups.rows)} groups (subjects or tasks)")
    st.dataframe(groups.to_table().rename(columns={"Model": "Group"}), hide_index=True)

if len(ctx.datasets) > 1:
    st.subheader("Models side by side")
    try:
        cmp = ui.comparison_for(ctx, v)
    except CalibError as exc:
        ui.show_error(exc)
    else:
        st.dataframe(cmp.to_table(), hide_index=True)
        st.caption(f"Calibration error: ECE with a {100 * v.level:g}% bootstrap interval ({v.reps:,} resamples). "
                   "Brier vs constant: the constant forecast is the model's own hit rate.")
        st.plotly_chart(figures.brier_vs_constant(cmp.rows, ctx.colors), config=figures.CONFIG, key="fig_brier")
else:
    row = compare.model_row(focus.name, focus.table, reps=0)
    st.plotly_chart(figures.brier_vs_constant([row], ctx.colors), config=figures.CONFIG, key="fig_brier")
