"""Reliability: what each stated confidence meant, binned or as the CORP curve, and how far off it is."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import ui
from calib import audit as audit_mod
from calib import figures
from calib import view as views
from calib.errors import CalibError

ctx = ui.page_setup("reliability")
st.title(ui.PAGE_TITLES["reliability"])
if not ctx.datasets:
    ui.no_data()
    st.stop()

st.caption(
    "Each point is the share of answers that were right at a stated confidence (per stated value, or pooled in "
    "bins); on the dashed line a confidence meant what it said. The CORP curve (Dimitriadis, Gneiting & Jordan "
    "2021) is the monotone fit of the same data, with a bootstrap confidence band (the model's colour) and a "
    "consistency band (grey: where a calibrated model's curve would fall by chance)."
)

REPS_CHOICES = (0, 200, 500, 1000, 2000, 5000)
c1, c2, c3, c4 = st.columns(4)
with c1:
    st.selectbox("Binning", views.SCHEMES, format_func=ui.SCHEME_LABELS.__getitem__, **ui.bind("scheme", "w_scheme"))
v = ui.get_view()
with c2:
    st.slider("Bins", min_value=2, max_value=50, step=1, disabled=v.scheme not in ("width", "mass", "auto"),
              **ui.bind("bins", "w_bins", to_widget=lambda b: min(int(b), 50)),
              help="For equal-width and equal-mass bins (and the automatic choice when values are many).")
with c3:
    reps_opts = tuple(sorted(set(REPS_CHOICES) | {v.reps}))
    st.selectbox("Resamples", reps_opts, format_func=lambda r: f"{r:,}" if r else "none (no intervals)",
                 **ui.bind("reps", "w_reps"), help="Bootstrap resamples behind every interval on every page.")
with c4:
    lv_opts = tuple(sorted(set(views.LEVELS) | {v.level}))
    st.selectbox("Interval level", lv_opts, format_func=lambda x: f"{100 * x:g}%", **ui.bind("level", "w_level"))
v = ui.get_view()

try:
    series = [(d.name, ui.curve_for(d, v)) for d in ctx.datasets]
except CalibError as exc:
    ui.show_error(exc)
    st.stop()
st.plotly_chart(figures.reliability(series, ctx.colors, consistency_for=[ctx.focus.name]),
                config=figures.CONFIG, key="fig_reliability")

focus = ctx.focus
st.subheader("How far off")
st.text(f"model: {focus.name}")
try:
    a = ui.audit_for(focus, v)
except CalibError as exc:
    ui.show_error(exc)
    st.stop()
lvl = f"{100 * v.level:g}%"


def ci_help(key: str, digits: int = 3) -> str | None:
    c = a.ci.get(key)
    return None if not c or c[0] is None else f"{lvl} interval {ui.fmt_ci(c, digits)}"


m1, m2, m3, m4 = st.columns(4)
ui.metric(m1, "ECE", ui.fmt_num(a.metrics["ece"]), ci_help("ece"))
ui.metric(m2, "MCE", ui.fmt_num(a.metrics["mce"]), ci_help("mce"))
ui.metric(m3, "Smooth ECE", ui.fmt_num(a.metrics["smooth_ece"]), ci_help("smooth_ece"))
ui.metric(m4, "Debiased L2 error", ui.fmt_num(a.metrics["ece_l2_debiased"]), ci_help("ece_l2_debiased"))
st.caption(
    f"Binning: {ui.SCHEME_LABELS.get(a.scheme, a.scheme)}"
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
                 f"{lvl} interval": ui.fmt_ci(c, 4) if c and c[0] is not None else ""})
st.dataframe(pd.DataFrame(rows), hide_index=True, width="content",
             column_config={"value": st.column_config.NumberColumn(format="%.4f")})
st.caption("Brier = reliability − resolution + uncertainty (Murphy 1973); Brier = MCB − DSC + UNC (CORP, "
           "Dimitriadis, Gneiting & Jordan 2021, isotonic with ties pooled).")

st.subheader("Tests")
test_names = {
    "calibration_in_the_large": "calibration-in-the-large (mean stated = accuracy)",
    "goodness_of_fit": "goodness of fit (every bin's hit rate = its stated value)",
    "cox_lr": "Cox recalibration (intercept 0, slope 1)",
    "brier_vs_constant": "Brier: stated vs the constant base rate",
    "spiegelhalter": "Spiegelhalter's Z (reported, never decides: blind to common LLM failures)",
}
trows = []
for key, label in test_names.items():
    t_ = a.tests[key]
    trows.append({"test": label, "statistic": t_.statistic, "p-value": audit_mod.fmt_p(t_.p_value, t_.log10_p, bound=t_.p_bound),
                  "note": t_.note})
st.dataframe(pd.DataFrame(trows), hide_index=True,
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
