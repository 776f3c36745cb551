"""The threshold decision on screen (issue 11): the target and confidence inputs, the
decision card (the recommended threshold with its guarantee, what it means per 1,000
items, its cost), a "Use the …" button per threshold it names (recommended, cheapest), and the owner's threshold with its
own bound, as a share link's reviewer reads it first.

Every number comes from the engine (:func:`dashboard.results.decision_for`, i.e.
:func:`calib.decision.decide`; the bound at a single threshold from
:func:`calib.decision.risk.bound_at`) and every sentence from
:mod:`calib.present.decision`. Card fields hold no user text (the module's contract),
but they are shown with ``st.text`` anyway; model names only ever through ``st.text``.
The metric labels are fixed: the browser tests look them up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.hosting import view as views
from calib.present import explain
from calib.present import format as fmt
from dashboard.context import Context
from dashboard.layout import metric, show_error
from dashboard.results import decision_for, routing_basis, settings_of
from dashboard.state import change_view, get_view

if TYPE_CHECKING:
    from calib.decision import Decision
    from calib.estimates import Estimate
    from calib.maps import CalibrationMap

#: Labels of the card's metrics (the browser tests read them).
RECOMMENDED_LABEL = "Recommended threshold"
CHEAPEST_LABEL = "Cheapest threshold"
OWNER_LABEL = "Owner's threshold"
OWNER_ACCEPTED_LABEL = "Accepted there"
OWNER_BOUND_LABEL = "Error bound there"
OWNER_COST_LABEL = "Expected cost per item"
#: The card's buttons, one per threshold it names (issue 22): each says which it applies.
USE_RECOMMENDED = "Use the recommended threshold ({t})"
USE_CHEAPEST = "Use the cheapest threshold ({t})"
#: Session key of ``(token, view)``: the view a share link opened with (the owner's
#: decision, kept while a reviewer moves the sliders; set by :mod:`dashboard.sharing`).
OWNER_VIEW_KEY = "calib_owner_view"
#: Confidence levels offered for the guarantee (the view accepts any in [0.5, 1)).
CONFIDENCES: tuple[float, ...] = (0.8, 0.9, 0.95, 0.99)


def short_threshold(t: float | None) -> str:
    """A threshold as the card's metric shows it: exact (``threshold_text`` of the
    decision wording), "none qualifies" when there is none."""
    from calib.present.decision import threshold_text

    return "none qualifies" if t is None else threshold_text(t).split(" (")[0]


# ----------------------------------------------------------------- inputs
def _on_target(key: str) -> None:
    x = st.session_state[key]
    change_view(target=None if x is None else float(x) / 100)


def _on_confidence(key: str) -> None:
    change_view(confidence=float(st.session_state[key]))


def decision_inputs(v: views.View) -> None:
    """The target error rate and the confidence, at the top of the Routing page."""
    c1, c2 = st.columns(2)
    st.session_state["w_target"] = 100 * views.target_error(v)
    c1.number_input("Target error rate among accepted (%)", min_value=0.0, max_value=100.0, step=0.5,
                    key="w_target", on_change=_on_target, args=("w_target",),
                    help=explain.help_text("target"))
    options = sorted({*CONFIDENCES, v.confidence})
    st.session_state["w_confidence"] = v.confidence
    c2.selectbox("Confidence of the guarantee", options, key="w_confidence", on_change=_on_confidence,
                 args=("w_confidence",), format_func=lambda x: f"{100 * x:g}%",
                 help="How sure the guarantee is: the chance, over the data, that the error among the items "
                      "accepted unseen really is at most the target. Technical name: 1 - delta.")


# ----------------------------------------------------------------- the card
def _use_threshold(threshold: float) -> None:
    """A card button: the slider (view.lo) goes to ``threshold``."""
    v = get_view()
    change_view(lo=float(threshold), hi=v.hi if v.hi is not None and v.hi > threshold else None)


def recommendation_card(d: Decision, ds: Dataset, *, button: bool) -> None:
    """The decision card of ``d`` (:func:`calib.present.decision.decision_card`) and,
    when ``button``, a button per threshold it names (the recommended one when it
    holds, the cheapest when there is one), each saying which it applies."""
    from calib.present.decision import decision_card

    card = decision_card(d, scale=ds.table.scale)
    r = d.recommendation
    ch = d.costs.cheapest
    with st.container(border=True):
        c1, c2, c3, c4 = st.columns(4)
        metric(c1, RECOMMENDED_LABEL, short_threshold(r.threshold) if r.holds else "none qualifies")
        metric(c2, "Accepted at it", f"{r.accepted:,} of {r.total:,}")
        metric(c3, "Error bound among accepted", fmt.pct(r.error_upper) if r.holds else fmt.MISSING,
               f"{fmt.interval(0.0, r.error_upper, fmt.pct)} one-sided" if r.holds else None,
               help=(f"Observed {fmt.pct(r.error_rate)}; one-sided {100 * r.confidence:g}% Clopper-Pearson bound.  \n"
                     + explain.help_text("error_bound") + "  \n"
                     + explain.what_this_means("error_bound", r.error_upper, confidence=r.confidence))
               if r.holds else explain.help_text("error_bound"))
        metric(c4, CHEAPEST_LABEL, "no costs given" if ch is None else (
            "review everything" if ch.threshold is None else short_threshold(ch.threshold)),
            None if ch is None else f"{fmt.estimate(ch.cost.value, *ch.cost.ci)} per item",
            help=explain.help_text("cost"))
        st.text(f"Target: {card.target}, {card.guarantee}.")
        st.text(card.message)
        st.text(card.per_1000)
        if card.cost:
            st.text("Cost: " + card.cost)
        st.caption(f"Certified on: {r.certified_on}.")
        with st.expander("For contrast: the point-estimate search (no guarantee)"):
            st.text(d.point_estimate.message)
        if not button:
            return
        b1, b2 = st.columns(2)
        if r.holds and r.threshold is not None:
            b1.button(USE_RECOMMENDED.format(t=short_threshold(r.threshold)), key="use_threshold",
                      on_click=_use_threshold, args=(float(r.threshold),),
                      help="Moves the review threshold to the recommended one (certified at the target).")
        if ch is not None and ch.threshold is not None:
            b2.button(USE_CHEAPEST.format(t=short_threshold(ch.threshold)), key="use_cheapest",
                      on_click=_use_threshold, args=(float(ch.threshold),),
                      help="Moves the review threshold to the cheapest one at the costs given (no guarantee on "
                           "the error rate).")


# ----------------------------------------------------------------- the owner's threshold
@dataclass(frozen=True)
class AtThreshold:
    """One fixed threshold, certified alone: items accepted at or above it, errors
    among them, the one-sided Clopper-Pearson bound (valid for this threshold chosen
    beforehand, not for a threshold picked on the data), and the cost per item."""

    threshold: float
    total: int
    accepted: int
    errors: int
    error_upper: float | None
    confidence: float
    cost: Estimate

    def per_1000(self) -> str:
        if not self.total:
            return "Per 1,000 items: no data"
        acc = 1000 * self.accepted / self.total
        wrong = 1000 * self.errors / self.total
        text = f"Per 1,000 items: {round(acc):,} accepted unseen, of which about {round(wrong):,} wrong"
        if self.error_upper is not None:
            text += f" (at most {math.ceil(acc * self.error_upper - 1e-9):,} at the bound)"
        return text + f"; {1000 - round(acc):,} reviewed by a person"


def at_threshold(ctx: Context, ds: Dataset, v: views.View, threshold: float) -> AtThreshold:
    """:class:`AtThreshold` of ``threshold`` (the accepting one: ``hi`` when set) on the
    view's basis: its own bound and its expected cost per item with its interval
    (:func:`calib.decision.costs.cost_at`, the cost curve's definition)."""
    from calib.runs.decide import at_threshold as run

    b, cmap, _ = routing_basis(ctx, ds, v)
    acc, err, upper, cost = run(b, ds.table, threshold, settings_of(v), calibration=cmap)
    return AtThreshold(float(threshold), b.total, acc, err, upper, v.confidence, cost)


def owner_card(ctx: Context, ds: Dataset, v: views.View, d: Decision | None, threshold: float,
               cmap: CalibrationMap | None = None) -> None:
    """The owner's threshold (as the link was shared) with its own bound, beside the
    recommendation when the two differ (said plainly, both shown)."""
    at = at_threshold(ctx, ds, v, threshold)
    with st.container(border=True):
        c1, c2, c3, c4 = st.columns(4)
        metric(c1, OWNER_LABEL, short_threshold(at.threshold) + (" (calibrated)" if cmap is not None else ""))
        metric(c2, OWNER_ACCEPTED_LABEL, f"{at.accepted:,} of {at.total:,}")
        metric(c3, OWNER_BOUND_LABEL, fmt.pct(at.error_upper),
               None if at.error_upper is None else f"{fmt.interval(0.0, at.error_upper, fmt.pct)} one-sided",
               help=f"Observed {fmt.pct(at.errors / at.accepted) if at.accepted else fmt.MISSING}; one-sided "
                    f"{100 * at.confidence:g}% Clopper-Pearson bound for this one threshold.  \n"
                    + explain.help_text("error_bound"))
        metric(c4, OWNER_COST_LABEL, "no costs given" if at.cost.value is None else fmt.num(at.cost.value),
               None if at.cost.lo is None else f"{100 * v.level:g}% {fmt.ci_text(at.cost.ci)}",
               help=explain.help_text("cost"))
        st.text(at.per_1000())
        target = views.target_error(v)
        if at.error_upper is not None:
            holds = at.error_upper <= target
            st.text(f"At the owner's threshold the bound is {fmt.pct(at.error_upper)}: "
                    + ("within" if holds else "above") + f" the {fmt.pct(target)} target.")
        if d is not None:
            r = d.recommendation
            same = r.threshold is not None and abs(r.threshold - at.threshold) < 1e-12
            st.text("The owner's threshold is the recommended one." if same else
                    "The owner's threshold is not the recommended one: both are shown, the recommendation "
                    "below.")


def owner_view(ctx: Context) -> views.View:
    """The view the share link was opened with: remembered on the first run of the
    shared session, so the owner's threshold stays the owner's."""
    from dashboard.keys import SHARED_KEY

    token = st.session_state.get(SHARED_KEY)
    kept = st.session_state.get(OWNER_VIEW_KEY)
    if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == token and isinstance(kept[1], views.View):
        return kept[1]
    st.session_state[OWNER_VIEW_KEY] = (token, ctx.view)
    return ctx.view


def shared_decision(ctx: Context, *, with_recommendation: bool = True) -> None:
    """What a share link's reviewer sees first: the owner's decision (threshold, target,
    guarantee, cost, per 1,000; at the view the link was opened with) and the
    recommendation at the owner's target, then the page's evidence."""
    from dashboard.threshold import current_thresholds, threshold_axis

    v = owner_view(ctx)
    ds = next((d for d in ctx.datasets if d.name == v.model), ctx.focus)
    if ds is None:
        return
    st.subheader("The owner's decision")
    st.text(f"model: {ds.name}")
    try:
        b, cmap, _ = routing_basis(ctx, ds, v)
        axis = threshold_axis(ds, b.on)
        lo, hi = current_thresholds(views.with_changes(v, on=b.on), axis)
        d = decision_for(ctx, ds, v)
        st.text(f"Target: at most {fmt.pct(views.target_error(v))} wrong among items accepted unseen, with "
                f"{100 * v.confidence:g}% confidence.")
        owner_card(ctx, ds, v, d, hi if hi is not None else lo, cmap)
        if with_recommendation:
            recommendation_card(d, ds, button=False)
    except CalibError as exc:
        show_error(exc)


def overview_decision(ctx: Context) -> None:
    """The Overview's first block: on a share link the owner's decision
    (:func:`shared_decision`), else the focused model's recommendation card."""
    ds = ctx.focus
    if ds is None:
        return
    if ctx.access.read_only:
        shared_decision(ctx)
        return
    st.subheader("The decision")
    st.text(f"model: {ds.name}")
    try:
        d = decision_for(ctx, ds, ctx.view)
    except CalibError as exc:
        show_error(exc)
        return
    recommendation_card(d, ds, button=False)
