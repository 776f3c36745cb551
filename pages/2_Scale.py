"""How the scale was used: which stated values the model chose, and what each one meant."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from calib.errors import CalibError
from calib.present import explain, figures, questions, tables
from calib.present import format as fmt
from dashboard.chart import show_figure
from dashboard.layout import md_escape, metric, page_question, show_error
from dashboard.page import start
from dashboard.results import audit_for
from dashboard.sharing import decision_first

ctx = start("scale")

st.caption(
    "A judge asked for a number from 0 to 100 rarely uses the whole range. The histogram shows which values "
    "it chose; the second figure what each value meant: the share of those answers that were right, with its "
    "Wilson interval. On the dashed line a value meant what it said."
)

focus = ctx.focus
v = ctx.view
try:
    audits = {d.name: audit_for(d, v) for d in ctx.datasets}
except CalibError as exc:
    show_error(exc)
    st.stop()
fa = audits[focus.name]
page_question(questions.QUESTIONS["scale"], f"{focus.name}: {questions.scale_answer(fa)}")
decision_first(ctx)  # a share's reviewer reads the owner's decision first


def ci_help(c) -> str | None:  # noqa: ANN001
    return fmt.level_interval(v.level, *c, fmt.pct) if c else None


# the focused model's headline numbers (stable labels for browser tests)
c1, c2, c3, c4 = st.columns(4)
c1.metric("Distinct values used", f"{fa.distinct_values:,}")
c2.metric("Most common value", fmt.MISSING if fa.top_value is None else f"{fa.top_value:g}")
top, below = fa.estimates["share_top"], fa.estimates["share_below"]
metric(c3, "Share at the most common value", fmt.pct(top.value), ci_help(top.ci),
       help=explain.help_text("share_top"))
metric(c4, f"Share stated below {fa.below:g}", fmt.pct(below.value),
       ci_help(below.ci), help=explain.help_text("share_below"))
st.text(f"model: {focus.name}")
st.caption(md_escape(explain.what_this_means("share_top", top.value)))

if len(ctx.datasets) > 1:
    rows = [{
        "model": name, "answers": a.n, "distinct values": a.distinct_values, "most common value": a.top_value,
        "answers at it": a.top_count,
        "share at it (%)": None if a.estimates["share_top"].value is None else 100 * a.estimates["share_top"].value,
        "below": a.below,
        "share below (%)": None if a.estimates["share_below"].value is None else 100 * a.estimates["share_below"].value,
    } for name, a in audits.items()]
    st.dataframe(
        pd.DataFrame(rows), hide_index=True,
        column_config={
            "share at it (%)": st.column_config.NumberColumn(format="%.1f"),
            "share below (%)": st.column_config.NumberColumn(format="%.1f"),
        },
    )

show_figure(
    figures.stated_histogram([(d.name, d.table) for d in ctx.datasets], ctx.colors), key="fig_hist",
)
series = [(d.name, d.table.pooled_over_groups(), audits[d.name].per_value) for d in ctx.datasets
          if audits[d.name].per_value]
if series:
    show_figure(figures.per_value(series, ctx.colors, level=v.level), key="fig_per_value")

st.subheader("Per stated value")
st.text(f"model: {focus.name}")
pv = fa.per_value
if not pv:
    st.caption("Continuous confidences (pooled on a 0.001 grid) have no per-value table: see the binned "
               "reliability diagram.")
st.dataframe(
    tables.per_value_frame(pv),
    hide_index=True,
    column_config={c: st.column_config.NumberColumn(format="%.1f") for c in tables.PER_VALUE_PERCENT_COLUMNS},
)

opts = focus.rows.options if focus.rows is not None else None
if opts is not None:
    from calib.options import letter_bias

    st.subheader("Per option letter (letter bias)")
    st.caption(
        "Top-label calibration hides a model that prefers one letter. Predicted share far from gold share, "
        "or a letter whose accuracy is far from its mean confidence, is letter bias."
    )
    lb = letter_bias(opts)
    show_figure(figures.letter_bias(lb, ctx.colors.get(focus.name, figures.PALETTE[0])), key="fig_letters")
    st.dataframe(tables.letter_bias_frame(lb.to_frame()), hide_index=True)
