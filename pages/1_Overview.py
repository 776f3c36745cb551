"""Overview: can I trust this judge's confidence, and what should I do? Three lines with a
link to the decision, then the headline figures with their intervals, the verdict and the
models side by side."""

from __future__ import annotations

import streamlit as st

from calib.errors import CalibError
from calib.present import explain, failure, figures, questions, tables
from calib.runs.audit import model_row
from dashboard.chart import show_figure
from dashboard.decision_view import overview_decision
from dashboard.layout import link, md_escape, metric, page_question, show_error
from dashboard.page import start
from dashboard.results import audit_for, comparison_for, decision_for, group_comparison, settings_of
from dashboard.summary import better_forecast

ctx = start("overview")

v = ctx.view
focus = ctx.focus
try:
    a = audit_for(focus, v)
except CalibError as exc:
    show_error(exc)
    st.stop()
try:
    decision = decision_for(ctx, focus, v)
except CalibError:
    decision = None  # the decision block below says why
trust, ranking, action = questions.overview_lines(a, decision)
page_question(questions.QUESTIONS["overview"], f"{focus.name}: {trust}")
st.markdown(md_escape(ranking))
st.markdown(md_escape(action))
link("routing", "Open the decision on the Routing page", icon=":material/tune:")
overview_decision(ctx)  # then the decision card (a share's reviewer: the owner's), then the evidence

lvl = f"{100 * v.level:g}%"
st.text(f"model: {focus.name}  ({a.n:,} answers)")
figs = explain.headline(a)
cols = st.columns(3) + st.columns(3)
for col, h in zip(cols, figs, strict=True):
    metric(col, h.label, h.value, f"{lvl} {h.interval}" if h.interval else None, help=h.help)
rest, meanings = questions.overview_rest(a)  # each fact once: the lines above state the others
for sentence in meanings:
    st.caption(md_escape(f"What this means: {sentence}"))

winner = better_forecast(a)
if winner is not None:
    # the sentence with its numbers is in the verdict below; the help says what the p-value means
    bt = a.tests["brier_vs_constant"]
    st.metric("Better forecast", winner, help=explain.test_meaning("brier_vs_constant", bt.p_value, a.level))

if rest:
    st.info(md_escape("\n".join(f"• {s}" for s in rest)))
st.caption(md_escape(explain.verdict_tests(a.level)))
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
        st.caption(f"Calibration error: ECE with a {lvl} bootstrap interval ({v.reps:,} resamples). "
                   f"{explain.help_text('ece')} Brier vs constant: {explain.help_text('brier_base_rate')}")
        show_figure(figures.brier_vs_constant(cmp.rows, ctx.colors), key="fig_brier")
else:
    row = model_row(focus.name, focus.table, settings_of(v))  # bars' intervals
    show_figure(figures.brier_vs_constant([row], ctx.colors), key="fig_brier")

# beside AUROC: how well low confidence picks out the wrong answers (after the side-by-side tables)
fail = failure.failure_frame(a)
if len(fail):
    with st.expander("Failure prediction: does low confidence pick out the wrong answers?"):
        st.dataframe(fail, hide_index=True)
        st.text(failure.cumulative_text(a))
        st.caption(md_escape(f"{explain.help_text('auprc_errors')}  {explain.help_text('prr')}  "
                             f"{explain.help_text('accuracy_at_coverage')}  Cumulative differences: the plot "
                             "and how to read it are on the Reliability page."))
