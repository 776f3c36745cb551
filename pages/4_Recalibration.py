"""Recalibration: fit a map from stated value to probability, scored on data it did not see."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from calib.errors import CalibError
from calib.present import figures
from calib.present import format as fmt
from dashboard.layout import (
    METHOD_LABELS,
    PAGE_TITLES,
    SCORING_LABELS,
    md_escape,
    metric,
    no_data,
    safe_filename,
    show_error,
)
from dashboard.page import page_setup
from dashboard.results import fit_for
from dashboard.sharing import decision_first

ctx = page_setup("recalibration")
st.title(PAGE_TITLES["recalibration"])
if not ctx.datasets:
    no_data()
    st.stop()
decision_first(ctx)  # a share's reviewer reads the owner's decision first

st.caption(
    "A recalibration map sends each stated value to the probability it turned out to mean. It is fitted on "
    "some answers and scored on others (choose how in the sidebar): a map scored on the answers it was fitted "
    "on looks better than it is. When the stated number carries nothing, the map is the base rate."
)

v = ctx.view
ds = ctx.focus
st.text(f"model: {ds.name}")
if v.method == "none":
    st.info("Choose a map in the sidebar (Platt, isotonic, temperature, beta or histogram binning).")
    st.stop()
if v.scoring == "file" and ctx.by_name(v.eval_model) in (None, ds):
    st.info("Scoring on a second file: load another file of the same model on the Data page and pick it "
            "in the sidebar.")
    st.stop()

try:
    fit = fit_for(ctx, ds)
except CalibError as exc:
    show_error(exc)
    st.stop()

label = METHOD_LABELS[v.method]
if fit.useless:
    st.warning(md_escape(f"The map is useless: {fit.reason}. It returns the base rate for every answer."))

ci = lambda e: fmt.ci_text((e.lo, e.hi), 4)  # noqa: E731
c1, c2, c3, c4 = st.columns(4)
metric(c1, "Brier before", fmt.num(fit.before.brier.value, 4), ci(fit.before.brier))
metric(c2, "Brier after", fmt.num(fit.after.brier.value, 4), ci(fit.after.brier),
          delta=fmt.num(fit.change.brier.value, 4), delta_color="inverse")
metric(c3, "ECE before", fmt.num(fit.before.ece.value, 3), ci(fit.before.ece))
metric(c4, "ECE after", fmt.num(fit.after.ece.value, 3), ci(fit.after.ece),
          delta=fmt.num(fit.change.ece.value, 3), delta_color="inverse")

scoring_text = SCORING_LABELS[fit.scoring] + (f" ({fit.folds} folds)" if fit.folds else "")
st.text(f"{label}; scored on {scoring_text}: fitted on {fit.n_fit:,} answers, scored on {fit.n_eval:,}")

rows = []
for name, key in (("Brier score", "brier"), ("log loss", "log_loss"), ("ECE", "ece")):
    b, a, r, d = (getattr(s, key) for s in (fit.before, fit.after, fit.base_rate, fit.change))
    rows.append({
        "metric": name,
        "stated confidence": b.value, "CI (stated)": ci(b),
        "after the map": a.value, "CI (after)": ci(a),
        "base rate": r.value, "CI (base rate)": ci(r),
        "change": d.value, "CI (change)": ci(d),
    })
st.dataframe(pd.DataFrame(rows), hide_index=True,
             column_config={c: st.column_config.NumberColumn(format="%.4f")
                            for c in ("stated confidence", "after the map", "base rate", "change")})
st.caption(f"Intervals: {100 * fit.level:g}% percentile bootstrap, {fit.reps:,} resamples of the scored answers "
           f"(paired: the same resamples for every column); ECE binning: {fit.ece_scheme}.")

cmap = fit.map
color = ctx.colors.get(ds.name, figures.PALETTE[0])
if cmap.method == "softmax_temperature":
    st.metric("Temperature T", fmt.num(float(cmap.params["T"]), 3))
    st.caption("Temperature scaling divides every option's log-probability by T before the softmax "
               "(Guo et al. 2017); the map depends on all options, so it has no stated-value table.")
else:
    scale = ds.table.scale
    grid = np.linspace(scale.lo, scale.hi, 401)
    fig = figures.recalibration_map(
        ds.name, color, scale_lo=scale.lo, scale_hi=scale.hi, curve_x=grid, curve_y=cmap.apply(grid),
        table=fit.table, method_label=label if not fit.useless else "base-rate", useless=fit.useless,
    )
    st.plotly_chart(fig, config=figures.CONFIG, key="fig_map")
    st.subheader("Stated value → calibrated probability")
    st.dataframe(
        pd.DataFrame(list(fit.table)).rename(columns={
            "stated": "stated", "prob": "calibrated probability", "n_fit": "answers (fit)",
            "hit_rate_fit": "hit rate (fit)", "n_eval": "answers (scored)", "hit_rate_eval": "hit rate (scored)",
        }),
        hide_index=True,
        column_config={c: st.column_config.NumberColumn(format="%.3f")
                       for c in ("calibrated probability", "hit rate (fit)", "hit rate (scored)")},
    )
for note in fit.notes:
    st.text(note)
if cmap.note and cmap.note not in fit.notes:
    st.text(cmap.note)

st.download_button(
    "Download the map (JSON, for calib apply)", data=cmap.to_json(), mime="application/json",
    file_name=safe_filename(ds.name, f"_{cmap.method}_map.json"), key="dl_map",
)
