"""The Routing page's main area, drawn inside the threshold fragment
(:func:`dashboard.threshold.threshold_panel`): where the thresholds send items, the
routing numbers, the threshold on the reliability diagram and on the risk-coverage
curve, the numbers with their intervals, costs, the lowest threshold meeting a target,
and the review queue's download.

Figures are built once per session and key and only their threshold traces move
(:func:`dashboard.layout.session_figure`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from calib.dataset import Dataset
from calib.hosting import view as views
from calib.present import figures
from calib.present import format as fmt
from dashboard.context import Context
from dashboard.entries import cache_key
from dashboard.layout import md_escape, safe_filename, session_figure
from dashboard.results import curve_for, map_key
from dashboard.state import change_view, get_view
from dashboard.threshold import ThresholdAxis, fmt_threshold, review_queue_csv, routing_metrics

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from calib.maps import CalibrationMap
    from calib.routing import Basis, Routing

#: The rows of the numbers table: (label, Routing field, as a percentage).
NUMBERS: tuple[tuple[str, str, bool], ...] = (
    ("Sent to a person", "to_person", False), ("Accepted unseen", "accepted", False),
    ("Accuracy among accepted", "accuracy_accepted", True), ("Errors slipping through", "errors_slipping", False),
    ("Errors caught", "errors_caught", False), ("Share accepted unseen", "coverage", True),
    ("Error rate among accepted", "risk", True),
)


def detail(ctx: Context, ds: Dataset, r: Routing, axis: ThresholdAxis, b: Basis,
           cmap: CalibrationMap | None) -> None:
    """The Routing page's main area for ``ds`` routed as ``r``."""
    v = get_view()
    color = ctx.colors.get(ds.name, figures.PALETTE[0])
    _where(ds, r, axis, cmap)
    routing_metrics(r)
    # figures: the threshold on the reliability diagram and on the risk-coverage curve
    fig_key = (cache_key(ds), b.on, map_key(v) if cmap is not None else (), v.scheme, v.bins, v.level,
               v.reps, v.seed, color)
    left, right = st.columns(2)
    with left:
        _reliability(ds, v, r, axis, cmap, color, fig_key)
    with right:
        _risk_coverage(ds, r, axis, b, color, fig_key)
    # the numbers with their intervals, and costs (below the figures: at laptop height the
    # numbers and the two figures they move are on screen together)
    _numbers(r, b)
    _costs(v, r)
    _target(v, r, b)
    _queue(ds, r, cmap)


def _where(ds: Dataset, r: Routing, axis: ThresholdAxis, cmap: CalibrationMap | None) -> None:
    from calib.scale import threshold_check

    st.text(f"model: {ds.name}")
    where = f"below {fmt_threshold(r.lower, axis)}{axis.unit} to a person"
    where += (f", {fmt_threshold(r.upper, axis)}{axis.unit} and above accepted unseen" if r.upper is not None
              else ", the rest accepted unseen")
    st.text(where)
    if cmap is None:  # on the stated scale: a threshold beyond every stated value routes all one way
        check = threshold_check(ds.table.value[ds.table.n > 0], ds.table.scale, r.lower, flag="Review threshold")
        if check.message:
            st.warning(md_escape(check.message))


def _reliability(ds: Dataset, v: views.View, r: Routing, axis: ThresholdAxis, cmap: CalibrationMap | None,
                 color: str, fig_key: tuple[object, ...]) -> None:
    def build() -> go.Figure:
        table = ds.table if cmap is None else cmap.apply_table(ds.table)
        vv = views.with_changes(v, scheme="auto" if v.scheme == "corp" else v.scheme)
        curve = curve_for(ds, vv, table, key_extra="" if cmap is None else f":map{map_key(v)!r}")
        title = "Reliability diagram" + (" after the map" if cmap is not None else "")
        # built with both lines; moved (or hidden) on every threshold move
        return figures.reliability([(ds.name, curve)], {ds.name: color}, thresholds=[50.0, 60.0], title=title,
                                   calibrated=cmap is not None)

    xs = [axis.to_percent(r.lower, ds.table.scale)]
    if r.upper is not None:
        xs.append(axis.to_percent(r.upper, ds.table.scale))
    rel = figures.move_threshold_lines(session_figure(("rel", *fig_key), build), xs)
    st.plotly_chart(rel, config=figures.CONFIG, key="fig_route_rel")


def _risk_coverage(ds: Dataset, r: Routing, axis: ThresholdAxis, b: Basis, color: str,
                   fig_key: tuple[object, ...]) -> None:
    from calib import routing

    def build() -> go.Figure:
        return figures.risk_coverage(ds.name, color, routing.sweep(b, level=r.level), unit=axis.unit)

    # the marker's label names what the threshold does, not where it is: a move that routes
    # no item differently leaves this figure unchanged, and Streamlit then neither re-sends
    # nor redraws it (a redrawn Plotly chart is most of a threshold move's browser time)
    rc = figures.move_marker(session_figure(("rc", *fig_key), build), r.coverage, r.risk,
                             f"review threshold: {r.accepted:,} of {r.total:,} accepted unseen")
    st.plotly_chart(rc, config=figures.CONFIG, key="fig_route_rc")


def _numbers(r: Routing, b: Basis) -> None:
    import pandas as pd

    rows = []
    for label, field, pct in NUMBERS:
        val = getattr(r, field)
        iv = r.ci.get(field)
        rows.append({
            "": label,
            "value": fmt.pct(val) if pct else f"{val:,}",
            f"{100 * r.level:g}% interval": "" if iv is None or iv.lo is None else (
                f"{100 * iv.lo:.1f}% to {100 * iv.hi:.1f}%" if pct else f"{iv.lo:,.0f} to {iv.hi:,.0f}"),
        })
    st.table(pd.DataFrame(rows).set_index(""))
    if b.reps:
        st.caption(f"Intervals: percentile bootstrap of the items, {b.reps:,} resamples (seed {b.seed}).")


def _on_cost(field: str, key: str) -> None:
    change_view(**{field: float(st.session_state[key] or 0.0)})


def _on_target(key: str) -> None:
    x = st.session_state[key]
    change_view(target=None if not x else float(x) / 100)


def _costs(v: views.View, r: Routing) -> None:
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


def _target(v: views.View, r: Routing, b: Basis) -> None:
    """The lowest threshold meeting a target error rate."""
    from calib import routing

    st.session_state["w_target"] = None if v.target is None else 100 * v.target
    target_col, _ = st.columns([1, 2])
    target_col.number_input("Target error rate among accepted (%)", min_value=0.0, max_value=100.0, step=0.5,
                            key="w_target", on_change=_on_target, args=("w_target",), placeholder="e.g. 5")
    if v.target is not None:
        choice = routing.lowest_threshold(b, v.target, level=r.level)
        st.text(choice.message)


def _queue(ds: Dataset, r: Routing, cmap: CalibrationMap | None) -> None:
    st.subheader("Review queue")
    if ds.rows is None:
        st.caption("A count table has no items: there is no queue to download.")
        return
    rows_, lower = ds.rows, r.lower
    st.download_button(
        f"Download the review queue (CSV, {r.to_person:,} items)",
        data=lambda: review_queue_csv(rows_, lower, cmap), mime="text/csv",
        file_name=safe_filename(ds.name, "_review_queue.csv"), key="dl_queue",
    )
