"""The Routing page's main area, in three parts: what a threshold move does not change
drawn once per page run, around what it does, drawn inside the threshold fragment
(:func:`dashboard.threshold.threshold_panel`).

- :func:`decision_section`, above the fragment: the decision (issue 11: target and
  confidence, the recommended threshold's card and a button per threshold on it; on a
  share link the owner's threshold before it).
- :func:`detail`, the fragment: the review threshold's widgets (here, not in the sidebar:
  a phone hides it), where the thresholds send items, the routing numbers, the threshold
  on the reliability diagram and on the risk-coverage curve (AURC with its interval),
  the costs beside the cost curve and its cheapest point, the numbers with their
  intervals, route stability when items are judged more than once, and the review
  queue's download.
- :func:`beyond_threshold`, below it: per-group thresholds, every loaded judge at the
  same target, two thresholds certified together and the cheapest chain of judges.

Why the split: a key press on the threshold reruns only the fragment, and the browser
redraws every element the fragment sends. The decision card and the sections below do
not depend on the threshold; inside the fragment they were redrawn on every move, which
cost a key press about 20-30 ms of the page's main thread (``bench/bench_speed.py``,
1,000,000 rows: median key press to numbers 109-133 -> 84-100 ms).

Figures are built once per session and key and only their threshold traces move
(:func:`dashboard.layout.session_figure`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.hosting import view as views
from calib.present import explain, figures
from calib.present import format as fmt
from dashboard.chart import show_figure
from dashboard.context import Context
from dashboard.decision_view import (
    at_threshold,
    decision_inputs,
    recommendation_card,
    shared_decision,
    short_threshold,
)
from dashboard.entries import cache_key
from dashboard.layout import md_escape, metric, safe_filename, session_figure, show_error
from dashboard.results import curve_for, decision_for, judges_for, map_key
from dashboard.stability_view import show_stability
from dashboard.state import change_view, get_view
from dashboard.threshold import ThresholdAxis, fmt_threshold, review_queue_csv, routing_metrics
from dashboard.traffic_routing import traffic_section
from dashboard.two_stage_view import show_cascade, show_two_thresholds

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from calib.decision import Decision
    from calib.maps import CalibrationMap
    from calib.routing import Basis, Routing

#: The figures of the numbers table (labelled and written by :mod:`calib.present.routing_table`).
NUMBERS: tuple[str, ...] = ("to_person", "middle", "accepted", "accuracy_accepted", "errors_slipping",
                            "errors_caught", "coverage", "risk")


def decision_section(ctx: Context) -> Decision | None:
    """Above the fragment: the decision for the focused judge (:func:`_decision`), which
    it returns for :func:`beyond_threshold`."""
    ds = ctx.focus
    return None if ds is None else _decision(ctx, ds, ctx.view)


def detail(ctx: Context, ds: Dataset, r: Routing, axis: ThresholdAxis, b: Basis,
           cmap: CalibrationMap | None, controls: Callable[[], object]) -> None:
    """The fragment's part of the Routing page for ``ds`` routed as ``r``; ``controls``
    draws the review threshold's widgets (below the decision card, which
    :func:`decision_section` drew above the fragment)."""
    v = get_view()
    color = ctx.colors.get(ds.name, figures.PALETTE[0])
    d = _decision_or_none(ctx, ds, v)  # drawn above; here for the figures' and costs' marks
    controls()  # the review threshold's widgets, here, not in the sidebar: a phone hides it
    _where(ctx, ds, v, r, axis, cmap)
    routing_metrics(r)
    traffic_section(ctx, r)  # the traffic's estimate at the same threshold, beside the file's (issue 24)
    # figures: the threshold on the reliability diagram and on the risk-coverage curve
    fig_key = (cache_key(ds), b.on, map_key(v) if cmap is not None else (), v.scheme, v.bins, v.level,
               v.reps, v.seed, color)
    left, right = st.columns(2)
    with left:
        _reliability(ds, v, r, axis, cmap, color, fig_key)
    with right:
        _risk_coverage(ds, r, axis, b, color, fig_key, d, v)
    # the costs beside their curve, then the numbers with their intervals (below the figures:
    # at laptop height the numbers and the two figures they move are on screen together)
    _costs(v, r, d, ds, axis, color, fig_key)
    _numbers(r, b)
    show_stability(ds, v, r, cmap)
    _queue(ds, r, cmap, ctx)


def beyond_threshold(ctx: Context, d: Decision | None) -> None:
    """Below the fragment: what does not depend on the review threshold's position;
    ``d`` is the decision :func:`decision_section` showed."""
    ds, v = ctx.focus, ctx.view
    if ds is None:
        return
    _groups(d)
    _judges(ctx, v)
    show_two_thresholds(ds, v)
    show_cascade(ctx, v)


def _decision_or_none(ctx: Context, ds: Dataset, v: views.View) -> Decision | None:
    """The decision :func:`_decision` shows, or ``None`` where it showed the refusal."""
    try:
        return decision_for(ctx, ds, v)
    except CalibError:
        return None


def _decision(ctx: Context, ds: Dataset, v: views.View) -> Decision | None:
    """(A share's reviewer: the owner's decision first.) Target and confidence, then
    the recommendation's card; ``None`` with the engine's message when it refuses."""
    if ctx.access.read_only:
        shared_decision(ctx, with_recommendation=False)
        st.subheader("The recommendation")
    decision_inputs(v)
    try:
        d = decision_for(ctx, ds, v)
    except CalibError as exc:
        show_error(exc)
        return None
    recommendation_card(d, ds, button=True)
    return d


def _where(ctx: Context, ds: Dataset, v: views.View, r: Routing, axis: ThresholdAxis,
           cmap: CalibrationMap | None) -> None:
    from calib.scale import threshold_check

    st.text(f"model: {ds.name}")
    where = f"below {fmt_threshold(r.lower, axis)}{axis.unit} to a person"
    where += (f", {fmt_threshold(r.upper, axis)}{axis.unit} and above accepted unseen" if r.upper is not None
              else ", the rest accepted unseen")
    st.text(where)
    try:  # the current threshold's own bound: valid for it alone, set beforehand
        at = at_threshold(ctx, ds, v, r.upper if r.upper is not None else r.lower)
    except CalibError:
        at = None
    if at is not None and at.error_upper is not None:
        st.text(f"At this threshold alone: {fmt.pct(at.errors / at.accepted)} wrong among the accepted, one-sided "
                f"{100 * at.confidence:g}% upper bound {fmt.pct(at.error_upper)} (valid for a threshold fixed "
                "beforehand, not for one picked on this data: the recommendation above is).")
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
    show_figure(rel, key="fig_route_rel")


def _decision_key(d: Decision | None, v: views.View) -> tuple[object, ...]:
    """What the decision's figures depend on beyond the data (their session-figure key)."""
    return () if d is None else (views.target_error(v), v.confidence, v.cost_review, v.cost_miss, v.cost_right,
                                 v.capacity)


def _risk_coverage(ds: Dataset, r: Routing, axis: ThresholdAxis, b: Basis, color: str,
                   fig_key: tuple[object, ...], d: Decision | None, v: views.View) -> None:
    from calib.present.decision_figures import risk_coverage_figure
    from calib.runs.route import sweep
    from calib.runs.settings import Settings

    def build() -> go.Figure:
        sw = sweep(b, Settings(level=r.level))
        if d is None:
            return figures.risk_coverage(ds.name, color, sw, unit=axis.unit)
        return risk_coverage_figure(ds.name, color, sw, aurc=d.aurc, recommendation=d.recommendation,
                                    unit=axis.unit)

    # the marker's label names what the threshold does, not where it is: a move that routes
    # no item differently leaves this figure unchanged, and Streamlit then neither re-sends
    # nor redraws it (a redrawn Plotly chart is most of a threshold move's browser time)
    rc = figures.move_marker(session_figure(("rc", *fig_key, *_decision_key(d, v)), build), r.coverage, r.risk,
                             f"review threshold: {r.accepted:,} of {r.total:,} accepted unseen")
    show_figure(rc, key="fig_route_rc")
    if d is not None:
        a = d.aurc
        ci = fmt.ci_text(a.aurc.ci, 4)
        c1, c2 = st.columns(2)
        metric(c1, "AURC", fmt.num(a.aurc.value, 4), f"{100 * v.level:g}% {ci}" if ci else None,
               help=f"{explain.help_text('aurc')}  \n{explain.what_this_means('aurc', a.aurc.value)}  \n"
                    f"Oracle {fmt.num(a.aurc_oracle, 4)} (the best any confidence could do on these outcomes), "
                    f"excess {fmt.estimate(a.eaurc.value, *a.eaurc.ci, lambda x: fmt.num(x, 4))}.")
        _prr(c2, ds, v)


def _prr(col: object, ds: Dataset, v: views.View) -> None:
    """PRR beside AURC, from the audit (cached), with AUPRC for errors in its help."""
    from calib.present.failure import prr_metric
    from dashboard.results import audit_for

    try:
        got = prr_metric(audit_for(ds, v))
    except CalibError:
        return
    if got is not None:
        metric(col, "PRR (prediction rejection ratio)", got[0], got[1], help=got[2])


def _numbers(r: Routing, b: Basis) -> None:
    import pandas as pd

    from calib.present.routing_table import routing_rows

    rows = [{"": row.label, "value": row.text, f"{100 * r.level:g}% interval": row.interval()}
            for row in routing_rows(r, NUMBERS)]
    st.table(pd.DataFrame(rows).set_index(""))
    if b.reps:
        st.caption(f"Intervals: percentile bootstrap of the items, {b.reps:,} resamples (seed {b.seed}).")


def _on_cost(field: str, key: str) -> None:
    change_view(**{field: float(st.session_state[key] or 0.0)})


def _on_cost_right(key: str) -> None:
    x = st.session_state[key]
    change_view(cost_right=None if x is None else float(x))


def _on_capacity(key: str) -> None:
    try:
        change_view(capacity=views.check_capacity(str(st.session_state[key] or "")))
    except ValueError as exc:  # kept out of the view; said under the box
        st.session_state["capacity_note"] = f"Capacity ignored: {exc}."
    else:
        st.session_state.pop("capacity_note", None)


def _cost_inputs(v: views.View) -> None:
    st.session_state["w_cost_review"] = float(v.cost_review)
    st.number_input("Cost per review", min_value=0.0, step=1.0, key="w_cost_review",
                    on_change=_on_cost, args=("cost_review", "w_cost_review"))
    st.session_state["w_cost_miss"] = float(v.cost_miss)
    st.number_input("Cost per missed error", min_value=0.0, step=1.0, key="w_cost_miss",
                    on_change=_on_cost, args=("cost_miss", "w_cost_miss"))
    st.session_state["w_cost_right"] = v.cost_right
    st.number_input("Cost of reviewing a right answer", min_value=0.0, step=1.0, key="w_cost_right",
                    on_change=_on_cost_right, args=("w_cost_right",), placeholder="same as a review",
                    help="Leave empty when reviewing a right answer costs the same as any review.")
    st.session_state["w_capacity"] = v.capacity
    st.text_input("Reviewers' capacity", key="w_capacity", on_change=_on_capacity, args=("w_capacity",),
                  placeholder="e.g. 200 or 20%", help="At most this many items (or this share) go to a person.")
    if st.session_state.get("capacity_note"):
        st.caption(str(st.session_state["capacity_note"]))


def _costs(v: views.View, r: Routing, d: Decision | None, ds: Dataset, axis: ThresholdAxis, color: str,
           fig_key: tuple[object, ...]) -> None:
    """The cost inputs and what they give (total at this threshold, the cheapest
    threshold as text, the capacity's choice) beside the cost curve."""
    from calib.present.decision import capacity_text
    from calib.present.decision_figures import cost_curve_figure

    left, right = st.columns(2)
    with left:
        _cost_inputs(v)
        if r.cost_total is not None:
            iv = r.estimates.get("cost_total")
            metric(st, "Total cost", fmt.money(r.cost_total),
                   None if iv is None else fmt.level_interval(r.level, iv.lo, iv.hi, fmt.money),
                   help=f"{explain.help_text('total_cost')}  \n{explain.what_this_means('total_cost', r.cost_total)}")
        else:
            st.caption("Give a cost per review and per missed error to see the total and the cost curve.")
        if d is not None:
            ch = d.costs.cheapest
            if ch is not None:
                where = "review everything" if ch.threshold is None else short_threshold(ch.threshold)
                st.text(f"Cheapest threshold: {where} ({fmt.num(ch.cost.value)} per item {fmt.ci_text(ch.cost.ci)})")
            cap = capacity_text(d.costs.capacity, d.costs.on, ds.table.scale)
            if cap:
                st.text(cap)
    if d is None or d.costs.cheapest is None:
        return
    with right:
        rec = d.recommendation.threshold

        def build() -> go.Figure:
            return cost_curve_figure(d.costs, name=ds.name, color=color, unit=axis.unit.strip(" ()") or "",
                                     recommended=rec)

        fig = session_figure(("cost", *fig_key, *_decision_key(d, v)), build)
        show_figure(fig, key="fig_route_cost")


def _groups(d: Decision | None) -> None:
    """Per-group thresholds (the data has a group field) as a table, and their gain."""
    if d is None or d.per_group is None:
        return
    import pandas as pd

    from calib.present.decision import CERTIFIED_LABEL, certified_text

    g = d.per_group
    st.subheader("Per group")
    rows = [{"group": row.group or "(no group)",
             "threshold": "review everything" if row.threshold is None else short_threshold(row.threshold),
             "accepted": row.accepted, "items": row.total, "errors": row.errors,
             "error bound": fmt.pct(row.error_upper), CERTIFIED_LABEL: certified_text(row)} for row in g.groups]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="df_groups")
    st.text(g.message)


def _judges(ctx: Context, v: views.View) -> None:
    """Every loaded judge at the same target, paired on shared item ids."""
    if len(ctx.datasets) < 2:
        return
    import pandas as pd

    from calib.present.decision import judge_rows, paired_lines

    st.subheader("Judges at the same target")
    try:
        c = judges_for(ctx, v)
    except CalibError as exc:
        show_error(exc)
        return
    costs = any(j.cheapest_cost is not None for j in c.judges)
    st.dataframe(pd.DataFrame(judge_rows(c, with_costs=costs)), hide_index=True, key="df_judges")
    lines = paired_lines(c)
    st.text("\n".join(lines) if lines else "The files share no item ids: no paired comparison.")


def _queue(ds: Dataset, r: Routing, cmap: CalibrationMap | None, ctx: Context) -> None:
    from calib.present.review import QUEUE_WITHHELD
    from dashboard.review_card import blind_reviewer

    st.subheader("Review queue")
    if ds.rows is None:
        st.caption("A count table has no items: there is no queue to download.")
        return
    if blind_reviewer(ctx.access):  # each item's confidence and outcome: not for a blind reviewer
        st.caption(QUEUE_WITHHELD)
        return
    rows_, lower = ds.rows, r.lower
    st.download_button(
        f"Download the review queue (CSV, {r.to_person:,} items)",
        data=lambda: review_queue_csv(rows_, lower, cmap), mime="text/csv",
        file_name=safe_filename(ds.name, "_review_queue.csv"), key="dl_queue", on_click="ignore",
    )
