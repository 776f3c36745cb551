"""Reliability: what each stated confidence meant, binned or as the CORP curve, and how far off it is."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from calib.errors import CalibError
from calib.hosting import view as views
from calib.present import explain, failure, figures, questions, tables
from calib.present import format as fmt
from calib.present.reliability_page import diagram_reading
from dashboard.chart import show_figure
from dashboard.covariate_view import show_covariate
from dashboard.layout import SCHEME_LABELS, md_escape, metric, page_question, show_error
from dashboard.page import start
from dashboard.results import audit_for, curve_for
from dashboard.sharing import decision_first
from dashboard.state import bind, get_view

ctx = start("reliability")
QUESTION = questions.QUESTIONS["reliability"]
focus = ctx.focus
try:
    a = audit_for(focus, ctx.view)
except CalibError as exc:
    page_question(QUESTION, "The audit could not be computed (see below).")
    show_error(exc)
    st.stop()
page_question(QUESTION, f"{focus.name}: {questions.reliability_answer(a)}")
decision_first(ctx)  # a share's reviewer reads the owner's decision first

REPS_CHOICES = (0, 200, 500, 1000, 2000, 5000)
c1, c2, c3, c4 = st.columns(4)
with c1:
    st.selectbox("Binning", views.SCHEMES, format_func=SCHEME_LABELS.__getitem__, **bind("scheme", "w_scheme"))
v = get_view()
with c2:
    st.slider("Bins", min_value=2, max_value=50, step=1, disabled=v.scheme not in ("width", "mass", "auto"),
              **bind("bins", "w_bins", to_widget=lambda b: min(int(b), 50)),
              help="For equal-width and equal-mass bins (and the automatic choice when values are many).")
with c3:
    reps_opts = tuple(sorted(set(REPS_CHOICES) | {v.reps}))
    st.selectbox("Resamples", reps_opts, format_func=lambda r: f"{r:,}" if r else "none (no intervals)",
                 **bind("reps", "w_reps"), help="Bootstrap resamples behind every interval on every page.")
with c4:
    lv_opts = tuple(sorted(set(views.LEVELS) | {v.level}))
    st.selectbox("Interval level", lv_opts, format_func=lambda x: f"{100 * x:g}%", **bind("level", "w_level"))
v = get_view()

try:
    series = [(d.name, curve_for(d, v)) for d in ctx.datasets]
except CalibError as exc:
    show_error(exc)
    st.stop()
show_figure(figures.reliability(series, ctx.colors, consistency_for=[ctx.focus.name]), key="fig_reliability")
# how to read it: what this binning draws, and nothing it does not (the CORP bands only with the CORP curve)
st.caption(md_escape(diagram_reading([c for _, c in series],
                                     no_bands="No bands: no resamples (choose some under Resamples).")))
st.subheader("How far off")
st.text(f"model: {focus.name}")
try:
    a = audit_for(focus, v)  # the controls above may have changed the binning or the resamples
except CalibError as exc:
    show_error(exc)
    st.stop()
lvl = f"{100 * v.level:g}%"


def ci_help(key: str, digits: int = 3) -> str | None:
    e = a.estimates.get(key)
    return fmt.level_interval(v.level, *e.ci, lambda x: fmt.num(x, digits)) if e else None


def unheld_captions(keys: tuple[str, ...]) -> None:
    """Why an interval shown here does not hold its figure (an interval never excludes its
    figure without saying why)."""
    for key, why in a.unheld_intervals().items():
        if key in keys:
            st.caption(md_escape(explain.unheld_interval(key, why)))


HEADLINE = ("ece", "mce", "smooth_ece", "ece_l2_debiased")
m1, m2, m3, m4 = st.columns(4)
for col, key in zip((m1, m2, m3, m4), HEADLINE, strict=True):
    x = a.estimates[key].value
    metric(col, explain.QUANTITIES[key].label, fmt.num(x), ci_help(key),
           help=f"{explain.help_text(key)}  \n{explain.what_this_means(key, x)}")
for key in ("ece", "mce"):
    st.caption(md_escape(explain.what_this_means(key, a.estimates[key].value)))
unheld_captions(HEADLINE)
st.caption(
    f"Binning: {SCHEME_LABELS.get(a.scheme, a.scheme)}"
    + (f", {a.bins} bins" if a.scheme in ("width", "mass") else "")
    + f"; intervals: {lvl} percentile bootstrap, {a.reps:,} resamples (the ECE's: an interval for the population "
    "ECE, its lower end from the debiased ECE). ECE: mean |stated − hit rate| weighted by "
    "answers (Guo et al. 2017); MCE: the largest bin gap; smooth ECE: kernel-smoothed, no bins (Błasiok & "
    "Nakkiran 2023); debiased L2 (Kumar, Liang & Ma 2019)."
)

if a.failure is not None:
    st.subheader("Cumulative differences (no bins)")
    show_figure(failure.cumulative_figure(a.failure.cumulative, name=focus.name, color=ctx.colors[focus.name],
                                          level=v.level, unit=""), key="fig_cumulative")
    st.caption(md_escape(f"{failure.cumulative_text(a)} {explain.help_text('cumulative_differences')} Tied answers "
                         "are read together: the path is drawn at the end of each stated value."))

decision = {True: "miscalibrated", False: "no evidence of miscalibration", None: "undefined"}[a.miscalibrated]
st.markdown(md_escape(f"Verdict at the {lvl} level: {decision}."))
st.caption(md_escape(explain.verdict_tests(a.level)))

with st.expander("For experts: the Brier score decomposed, the tests, the Cox fit"):
    st.subheader("Brier score, decomposed")
    decomp = ("brier", "murphy_reliability", "murphy_resolution", "murphy_uncertainty", "corp_mcb", "corp_dsc",
              "corp_unc")
    rows = []
    for key in decomp:
        e = a.estimates[key]
        q = explain.QUANTITIES[key]
        rows.append({"": f"{q.label} ({q.name})", "value": e.value,
                     f"{lvl} interval": fmt.ci_text(e.ci, 4) if e.lo is not None else "",
                     "in plain words": f"{q.what} {q.good}"})
    st.dataframe(pd.DataFrame(rows), hide_index=True,
                 column_config={"value": st.column_config.NumberColumn(format="%.4f")})
    unheld_captions(decomp)  # Murphy reliability and CORP MCB are biased upward too
    st.caption("Brier = reliability − resolution + uncertainty (Murphy 1973); Brier = MCB − DSC + UNC (CORP, "
               "Dimitriadis, Gneiting & Jordan 2021, isotonic with ties pooled).")
    for key in ("corp_mcb", "corp_dsc"):
        st.caption(md_escape(explain.what_this_means(key, a.metrics.get(key))))

    st.subheader("Tests")
    tf = tables.tests_frame(a)
    tf.insert(2, "in plain words", [explain.test_meaning(k, a.tests[k].p_value, a.level) for k, _, _ in tables.TESTS])
    st.dataframe(tf, hide_index=True, column_config={"statistic": st.column_config.NumberColumn(format="%.3f")})
    cox = a.cox
    if cox.slope.value is not None:
        st.caption(md_escape(f"{explain.meaning('cox_slope', cox.slope.value)} "
                             f"{explain.meaning('cox_intercept', cox.intercept.value)}"))

show_covariate(ctx, focus)

st.subheader("Bins")
st.dataframe(
    pd.DataFrame([{"from": r.lo, "to": r.hi, "answers": r.n, "right": r.correct,
                   "mean stated (%)": 100 * r.mean_prob, "hit rate (%)": 100 * r.hit_rate.value,
                   "CI low (%)": 100 * r.hit_rate.lo, "CI high (%)": 100 * r.hit_rate.hi,
                   "gap (percentage points)": 100 * r.gap}
                  for r in a.bin_table]),
    hide_index=True,
    column_config={c: st.column_config.NumberColumn(format="%.1f")
                   for c in ("mean stated (%)", "hit rate (%)", "CI low (%)", "CI high (%)", "gap (percentage points)")},
)
