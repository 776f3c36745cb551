"""Routing: where to put the review threshold, and what each choice costs."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import ui
from calib import figures, routing
from calib.errors import CalibError
from calib.scale import threshold_check

ctx = ui.page_setup("routing")
st.title(ui.PAGE_TITLES["routing"])
if not ctx.datasets:
    ui.no_data()
    st.stop()

st.caption(
    "Move the review threshold in the sidebar: items below it go to a person, items at or above it are accepted "
    "unseen. The numbers, the diagram and the curve follow at once. With an upper threshold, items between the "
    "two form a middle band, counted apart."
)


def _on_cost(field: str, key: str) -> None:
    ui.set_view(ui.views.with_changes(ui.get_view(), **{field: float(st.session_state[key] or 0.0)}))


def _on_target(key: str) -> None:
    x = st.session_state[key]
    ui.set_view(ui.views.with_changes(ui.get_view(), target=None if not x else float(x) / 100))


def detail(ctx: ui.Context, ds, r, axis: ui.ThresholdAxis, b, cmap) -> None:
    v = ui.get_view()
    color = ctx.colors.get(ds.name, figures.PALETTE[0])
    st.text(f"model: {ds.name}")
    where = f"below {ui.fmt_threshold(r.lower, axis)}{axis.unit} to a person"
    where += (f", {ui.fmt_threshold(r.upper, axis)}{axis.unit} and above accepted unseen" if r.upper is not None
              else ", the rest accepted unseen")
    st.text(where)
    if cmap is None:  # on the stated scale: a threshold beyond every stated value routes all one way
        check = threshold_check(ds.table.value[ds.table.n > 0], ds.table.scale, r.lower, flag="Review threshold")
        if check.message:
            st.warning(ui.md_escape(check.message))
    ui.routing_metrics(r)

    # figures: the threshold on the reliability diagram and on the risk-coverage curve
    left, right = st.columns(2)
    fig_key = (ui.cache_key(ds), b.on, ui.map_key(v) if cmap is not None else (), v.scheme, v.bins, v.level,
               v.reps, v.seed, color)
    with left:
        def build_rel():
            table = ds.table if cmap is None else cmap.apply_table(ds.table)
            vv = ui.views.with_changes(v, scheme="auto" if v.scheme == "corp" else v.scheme)
            curve = ui.curve_for(ds, vv, table, key_extra="" if cmap is None else f":map{ui.map_key(v)!r}")
            title = "Reliability diagram" + (" after the map" if cmap is not None else "")
            # built with both lines; moved (or hidden) on every threshold move
            return figures.reliability([(ds.name, curve)], {ds.name: color}, thresholds=[50.0, 60.0], title=title,
                                       calibrated=cmap is not None)

        xs = [axis.to_percent(r.lower, ds.table.scale)]
        if r.upper is not None:
            xs.append(axis.to_percent(r.upper, ds.table.scale))
        rel = figures.move_threshold_lines(ui.session_figure(("rel", *fig_key), build_rel), xs)
        st.plotly_chart(rel, config=figures.CONFIG, key="fig_route_rel")
    with right:
        def build_rc():
            return figures.risk_coverage(ds.name, color, routing.sweep(b, level=r.level), unit=axis.unit)

        # the marker's label names what the threshold does, not where it is: a move that routes
        # no item differently leaves this figure unchanged, and Streamlit then neither re-sends
        # nor redraws it (a redrawn Plotly chart is most of a threshold move's browser time)
        rc = figures.move_marker(ui.session_figure(("rc", *fig_key), build_rc), r.coverage, r.risk,
                                 f"review threshold: {r.accepted:,} of {r.total:,} accepted unseen")
        st.plotly_chart(rc, config=figures.CONFIG, key="fig_route_rc")

    # the numbers with their intervals, and costs (below the figures: at laptop height the
    # numbers and the two figures they move are on screen together)
    rows = []
    for label, field, pct in (
        ("Sent to a person", "to_person", False), ("Accepted unseen", "accepted", False),
        ("Accuracy among accepted", "accuracy_accepted", True), ("Errors slipping through", "errors_slipping", False),
        ("Errors caught", "errors_caught", False), ("Share accepted unseen", "coverage", True),
        ("Error rate among accepted", "risk", True),
    ):
        val = getattr(r, field)
        iv = r.ci.get(field)
        rows.append({
            "": label,
            "value": ui.fmt_pct(val) if pct else f"{val:,}",
            f"{100 * r.level:g}% interval": "" if iv is None or iv.lo is None else (
                f"{100 * iv.lo:.1f}% to {100 * iv.hi:.1f}%" if pct else f"{iv.lo:,.0f} to {iv.hi:,.0f}"),
        })
    st.table(pd.DataFrame(rows).set_index(""))
    if b.reps:
        st.caption(f"Intervals: percentile bootstrap of the items, {b.reps:,} resamples (seed {b.seed}).")

    c1, c2, c3 = st.columns(3)
    with c1:
        st.session_state["w_cost_review"] = float(v.cost_review)
        st.number_input("Cost per review", min_value=0.0, step=1.0, key="w_cost_review",
                        on_change=_on_cost, args=("cost_review", "w_cost_review"))
    with c2:
        st.session_state["w_cost_miss"] = float(v.cost_miss)
        st.number_input("Cost per missed error", min_value=0.0, step=1.0, key="w_cost_miss",
                        on_change=_on_cost, args=("cost_miss", "w_cost_miss"))
    with c3:
        if r.cost_total is not None:
            iv = r.ci.get("cost_total")
            st.metric("Total cost", f"{r.cost_total:,.2f}",
                      help=None if iv is None or iv.lo is None else
                      f"{100 * r.level:g}% interval {iv.lo:,.2f} to {iv.hi:,.2f}")
        else:
            st.caption("Give a cost per review and per missed error to see the total.")

    # the lowest threshold meeting a target error rate
    st.session_state["w_target"] = None if v.target is None else 100 * v.target
    target_col, _ = st.columns([1, 2])
    target_col.number_input("Target error rate among accepted (%)", min_value=0.0, max_value=100.0, step=0.5,
                    key="w_target", on_change=_on_target, args=("w_target",), placeholder="e.g. 5")
    if v.target is not None:
        choice = routing.lowest_threshold(b, v.target, level=r.level)
        st.text(choice.message)

    # the review queue
    st.subheader("Review queue")
    if ds.rows is None:
        st.caption("A count table has no items: there is no queue to download.")
    else:
        rows_, lower = ds.rows, r.lower
        st.download_button(
            f"Download the review queue (CSV, {r.to_person:,} items)",
            data=lambda: ui.review_queue_csv(rows_, lower, cmap), mime="text/csv",
            file_name=ui.safe_filename(ds.name, "_review_queue.csv"), key="dl_queue",
        )


try:
    ui.threshold_panel(ctx, detail)
except CalibError as exc:
    ui.show_error(exc)
