"""Recalibration: fit a map from stated value to probability, scored on data it did not see."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from calib.errors import CalibError
from calib.hosting import view as views
from calib.present import explain, figures, questions, tables
from calib.present import format as fmt
from dashboard.chart import show_figure
from dashboard.layout import (
    METHOD_LABELS,
    SCORING_LABELS,
    md_escape,
    metric,
    page_question,
    safe_filename,
    show_error,
)
from dashboard.page import start
from dashboard.results import best_fit_for, fit_for
from dashboard.sharing import decision_first
from dashboard.state import bind, change_view, get_view

ctx = start("recalibration")
QUESTION = questions.QUESTIONS["recalibration"]

v = ctx.view
ds = ctx.focus
best, fits = best_fit_for(ctx, ds)
best_label = METHOD_LABELS[best] if best is not None else ""
page_question(QUESTION, questions.recalibration_answer(fits.get(best) if best else next(iter(fits.values()), None),
                                                       best_label) if fits else "No map can be fitted on this data.")
decision_first(ctx)  # a share's reviewer reads the owner's decision first

st.caption(
    "A recalibration map sends each stated value to the probability it turned out to mean. It is fitted on "
    "some answers and scored on others: a map scored on the answers it was fitted on looks better than it "
    "is. When the stated number carries nothing, the map is the base rate."
)
st.text(f"model: {ds.name}")

# the controls on the page (the sidebar mirrors them: both write the same view, and the URL)
c1, c2, c3 = st.columns(3)
with c1:
    st.selectbox("Map", views.METHODS, format_func=METHOD_LABELS.__getitem__, **bind("method", "p_method"),
                 help="Which map to fit; the table below scores every map on held-out data.")
v = get_view()
with c2:
    st.selectbox("Scored on", views.SCORINGS, format_func=SCORING_LABELS.__getitem__,
                 **bind("scoring", "p_scoring"), help="Which answers score the map: never the ones it was fitted on, "
                                                       "except in-sample (optimistic).")
with c3:
    if v.scoring == "kfold":
        st.number_input("Folds", min_value=views.FOLDS_RANGE[0], max_value=views.FOLDS_RANGE[1], step=1,
                        **bind("folds", "p_folds"))
    elif v.scoring == "file":
        others = [d.name for d in ctx.datasets if d.name != v.model]
        if others:
            if v.eval_model not in others:
                change_view(eval_model=others[0])
            st.selectbox("Second file", others, **bind("eval_model", "p_eval"))
ctx = replace(ctx, view=get_view())
v = ctx.view

if fits:
    scoring = next(iter(fits.values())).scoring
    st.subheader("Every map, scored on held-out data")
    st.dataframe(tables.maps_frame(fits, best, METHOD_LABELS), hide_index=True)
    st.caption(f"Scored on {SCORING_LABELS[scoring]}" + (" (in-sample scoring is replaced by the odd/even split "
               "here: it flatters the flexible maps)" if v.scoring == "insample" else "")
               + f". {explain.help_text('brier')}")
    if best is not None and v.method == "none":
        st.button(f"Use the best map: {best_label}", key="use_best_map", type="primary",
                  on_click=change_view, kwargs={"method": best})

if v.method == "none":
    st.info("Choose a map above (the best one by held-out score is marked in the table).")
    st.stop()
if v.scoring == "file" and ctx.by_name(v.eval_model) in (None, ds):
    st.info("Scoring on a second file: load another file of the same model on the Data page and pick it "
            "above.")
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


def ival(e) -> str | None:  # noqa: ANN001
    return fmt.level_interval(fit.level, e.lo, e.hi, lambda x: fmt.num(x, 4))


c1, c2, c3, c4 = st.columns(4)
metric(c1, "Brier before", fmt.num(fit.before.brier.value, 4), ival(fit.before.brier), help=explain.help_text("brier"))
ch_brier = fmt.estimate(fit.change.brier.value, fit.change.brier.lo, fit.change.brier.hi, lambda x: fmt.signed(x, 4))
ch_ece = fmt.estimate(fit.change.ece.value, fit.change.ece.lo, fit.change.ece.hi, fmt.signed)
metric(c2, "Brier after", fmt.num(fit.after.brier.value, 4), ival(fit.after.brier),
       help=f"{explain.help_text('brier')}  \nChange {ch_brier} (paired).")
metric(c3, "ECE before", fmt.num(fit.before.ece.value, 3), ival(fit.before.ece), help=explain.help_text("ece"))
metric(c4, "ECE after", fmt.num(fit.after.ece.value, 3), ival(fit.after.ece),
       help=f"{explain.help_text('ece')}  \nChange {ch_ece} (paired).")
st.caption(md_escape(explain.what_this_means("ece", fit.after.ece.value) + " (after the map, on the scored answers)"))

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
    st.text(tables.map_formula(cmap))
    st.caption("Temperature scaling divides every option's log-probability by T before the softmax "
               "(Guo et al. 2017); the map depends on all options, so it has no stated-value table.")
else:
    scale = ds.table.scale
    grid = np.linspace(scale.lo, scale.hi, 401)
    fig = figures.recalibration_map(
        ds.name, color, scale_lo=scale.lo, scale_hi=scale.hi, curve_x=grid, curve_y=cmap.apply(grid),
        table=fit.table, method_label=label if not fit.useless else "base-rate", useless=fit.useless,
    )
    show_figure(fig, key="fig_map")
    st.text("The map: " + tables.map_formula(cmap))
    st.subheader("Stated value → calibrated probability")
    st.dataframe(tables.map_table_frame(fit), hide_index=True)
for note in fit.notes:
    st.text(note)
if cmap.note and cmap.note not in fit.notes:
    st.text(cmap.note)

st.download_button(
    "Download the map (JSON, for calib apply)", data=cmap.to_json(), mime="application/json",
    file_name=safe_filename(ds.name, f"_{cmap.method}_map.json"), key="dl_map",
    on_click="ignore",  # a download changes nothing on the page: no rerun
)
