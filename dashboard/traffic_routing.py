"""The Routing page's traffic section (issue 24): the error among the accepted on the whole
traffic, estimated from the reviewers' labels of the link (:func:`calib.traffic.estimate.estimate`),
beside the labelled file's own figure at the same threshold, and the alarm line of a
withdrawn certificate (:func:`calib.traffic.certify.certify` at the owner's target).

The labels are the link's this session reviews or made (:func:`dashboard.review.link_of`);
without a link, or before the first label, the section says what to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from calib.errors import CalibError
from dashboard.context import Context
from dashboard.entries import Entry, traffic_entries
from dashboard.layout import metric, show_error
from dashboard.review import link_of
from dashboard.runtime import share_store
from dashboard.traffic_view import alarms, certificate_of, joined, traffic_threshold

if TYPE_CHECKING:
    from calib.labels.records import Label
    from calib.routing import Routing


def _threshold(ctx: Context, r: Routing | None, top: float) -> float:
    """The Routing page's threshold when it is on the stated scale (the accepted start at the
    upper one when there are two), else the owner's review threshold for traffic."""
    if r is not None and r.on == "stated":
        return float(min(max(r.upper if r.upper is not None else r.lower, 0.0), top))
    return traffic_threshold(ctx.view, top)


def _history(ctx: Context, e: Entry) -> tuple[list[Label], object] | None:
    """The link's labels of ``e`` and the link's review state, or ``None`` (after saying why)."""
    from calib.present.traffic import ROUTING_NO_LINK

    link = link_of(ctx)
    if link is None:
        st.caption(ROUTING_NO_LINK)
        return None
    token, secret = link
    store = share_store()
    state = store.review_state(token)
    if state is None or e.name not in state.datasets:
        st.caption(ROUTING_NO_LINK)
        return None
    got = store.labels(token, owner_secret=secret, user=ctx.access.user)
    if not got.ok:
        st.caption(got.message)
        return None
    stored = state.stored_name(e.name)
    return [lab for lab in got.labels if lab.dataset == stored], state


def traffic_section(ctx: Context, r: Routing | None = None) -> None:
    """Each traffic input's estimate beside the labelled file's figure (``r``), and its alarm."""
    from calib.present import format as fmt
    from calib.present import traffic as words
    from calib.runs.settings import Settings
    from calib.runs.traffic import estimate

    items = traffic_entries()
    if not items:
        return
    st.subheader(words.ROUTING_TITLE)
    for e in items:
        st.text(f"Traffic: {e.name}")  # user text: plain
        try:
            got = _history(ctx, e)
            if got is None:
                continue
            history, state = got
            lab = joined(e.traffic, history)
            t = _threshold(ctx, r, e.traffic.top)
            err = estimate(lab, Settings(level=ctx.view.level), threshold=t)["error_accepted"]
            cert = certificate_of(lab, state.view) if lab.rows.size else None
        except CalibError as exc:
            show_error(exc)
            continue
        left, right = st.columns(2)
        if r is not None and ctx.focus is not None:
            iv = r.estimates.get("risk")
            metric(left, "Error among accepted, labelled file", fmt.pct(r.risk),
                   None if iv is None else fmt.level_interval(r.level, iv.lo, iv.hi, fmt.pct))
        ci = err.get("ci")
        metric(right, "Error among accepted, traffic", fmt.pct(err.get("estimate")),
               None if ci is None else fmt.level_interval(ctx.view.level, ci[0], ci[1], fmt.pct))
        st.text(words.estimate_line(err, t))
        if cert is not None:
            alarms(cert)
