"""Reliability: what each stated confidence meant, binned or as the CORP curve, and how far off it is."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from calib.errors import CalibError
from calib.hosting import view as views
from calib.present import figures, tables
from calib.present import format as fmt
from dashboard.layout import PAGE_TITLES, SCHEME_LABELS, metric, no_data, show_error
from dashboard.page import page_setup
from dashboard.results import audit_for, curve_for
from dashboard.sharing import decision_first
from dashboard.state import bind, get_view

ctx = page_setup("reliability")
st.title(PAGE_TITLES["reliability"])
if not ctx.datasets:
    no_data()
    st.stop()
decision_first(ctx)  # a share's reviewer reads the owner's decision first

st.caption(
    "Each point is the share of answers that were right at a stated confidence (per stated value, or pooled in "
    "bins); on the dashed line a confidence meant what it said. The CORP curve (Dimitriadis, Gneiting & Jordan "
    "2021) is the monotone fit of the same data, with a bootstrap confidence band (the model's colour) and a "
    "consistency band (grey: where a calibrated model's curve would fall by chance)."
)

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
st.plotly_chart(figures.reliability(series, ctx.colors, consistency_for=[ctx.focus.name]),
                config=figures.CONFIG, key="fig_reliability")

focus = ctx.focus
st.subheader("How far off")
st.text(f"model: {focus.name}")
try:
    a = audit_for(focus, v)
except CalibError as exc:
    show_error(exc)
    st.stop()
lvl = f"{100 * v.level:g}%"


def ci_help(key: str, digits: int = 3) -> str | None:
    c = a.ci.get(key)
    return None if not c or c[0] is None else f"{lvl} interval {fmt.ci_text(c, digits)}"


m1, m2, m3, m4 = st.columns(4)
metric(m1, "ECE", fmt.num(a.metrics["ece"]), ci_help("ece"))
metric(m2, "MCE", fmt.num(a.metrics["mce"]), ci_help("mce"))
metric(m3, "Smooth ECE", fmt.num(a.metrics["smooth_ece"]), ci_help("smooth_ece"))
metric(m4, "Debiased L2 error", fmt.num(a.metrics["ece_l2_debiased"]), ci_help("ece_l2_debiased"))
st.caption(
    f"Binning: {SCHEME_LABELS.get(a.scheme, a.scheme)}"
    + (f", {a.bins} bins" if a.scheme in ("width", "mass") else "")
    + f"; intervals: {lvl} percentile bootstrap, {a.reps:,} resamples (the ECE's: an interval for the population "
    "ECE, its lower end from the debiased ECE). ECE: mean |stated − hit rate| weighted by "
    "answers (Guo et al. 2017); MCE: the largest bin gap; smooth ECE: kernel-smoothed, no bins (Błasiok & "
    "Nakkiran 2023); debiased L2 (Kumar, Liang & Ma 2019)."
)

st.subheader("Brier score, decomposed")
decomp = [
    ("Brier score", "brier"),
    ("Murphy reliability (lower is better)", "murphy_reliability"),
    ("Murphy resolution (higher is better)", "murphy_resolution"),
    ("Uncertainty", "murphy_uncertainty"),
    ("CORP miscalibration MCB", "corp_mcb"),
    ("CORP discrimination DSC", "corp_dsc"),
    ("CORP uncertainty UNC", "corp_unc"),
]
rows = []
for label, key in decomp:
    c = a.ci.get(key)
    rows.append({"": label, "value": a.metrics.get(key),
                 f"{lvl} interval": fmt.ci_text(c, 4) if c and c[0] is not None else ""})
st.dataframe(pd.DataFrame(rows), hide_index=True, width="content",
             column_config={"value": st.column_config.NumberColumn(format="%.4f")})
st.caption("Brier = reliability − resolution + uncertainty (Murphy 1973); Brier = MCB − DSC + UNC (CORP, "
           "Dimitriadis, Gneiting & Jordan 2021, isotonic with ties pooled).")

st.subheader("Tests")
st.dataframe(tables.tests_frame(a), hide_index=True,
             column_config={"statistic": st.column_config.NumberColumn(format="%.3f")})
decision = {True: "miscalibrated", False: "no evidence of miscalibration", None: "undefined"}[a.miscalibrated]
cox = a.cox
st.caption(
    f"Verdict at the {lvl} level (Bonferroni over the first three tests): {decision}. "
    + ("" if cox.slope is None else f"Cox slope {cox.slope:.2f}, intercept {cox.intercept:.2f}.")
)

st.subheader("Bins")
st.dataframe(
    pd.DataFrame([{"from": r.lo, "to": r.hi, "answers": r.n, "right": r.correct,
                   "mean stated (%)": 100 * r.mean_prob, "hit rate (%)": 100 * r.hit_rate,
                   "CI low (%)": 100 * r.ci_lo, "CI high (%)": 100 * r.ci_hi, "gap (percentage points)": 100 * r.gap}
                  for r in a.bin_table]),
    hide_index=True,
    column_config={c: st.column_config.NumberColumn(format="%.1f")
                   for c in ("mean stated (%)", "hit rate (%)", "CI low (%)", "CI high (%)", "gap (percentage points)")},
)
