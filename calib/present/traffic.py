"""The words and the figure of the dashboard's traffic mode (issue 24): a file without
outcomes, labelled as reviewers go, with an estimate on the whole traffic and an
anytime-valid certificate of a threshold (:mod:`calib.traffic`).

Every sentence the Data, Review and Routing pages (and every page that needs outcomes)
print about traffic lives here once. User text (file names, item ids) never goes into
these sentences; the pages show it with ``st.text``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from calib.present import format as fmt
from calib.readers.base import more_bad_lines

if TYPE_CHECKING:  # plotly is imported when the figure is drawn: the sidebar's words need none of it
    import plotly.graph_objects as go

#: The Data page's choice of what a file holds, by mode.
MODES: dict[str, str] = {
    "audit": "Outcomes: every row says whether the answer was right (an audit)",
    "traffic": "Traffic: no outcomes yet (label as you go)",
}
MODE_QUESTION = "What is in this file?"
MODE_HELP = (
    "An audit needs each row's outcome: a row without one is dropped and reported, never accepted. "
    "Traffic is what a judge scored in production, without outcomes: reviewers label the items a plan "
    "picks, and calib estimates the error on the whole traffic from those labels."
)
#: What a traffic entry says on the Data page, under its load report.
TRAFFIC_NEXT = (
    "Traffic without outcomes: the pages that need outcomes (Overview, Scale, Reliability, Recalibration, "
    "Report, Drift) leave it out. To label it, share this view from the sidebar and enable reviewing: the "
    "Review page serves the items of a labelling plan and tracks the certificate of a threshold; the Routing "
    "page shows the error among the accepted on the whole traffic from the labels."
)
#: What a page that needs outcomes says when only traffic is loaded.
NEEDS_OUTCOMES = (
    "Only traffic without outcomes is loaded: this page needs each item's outcome. Label the traffic on the "
    "Review page (share the view with reviewing enabled), or load a file with outcomes on the Data page."
)
NEEDS_OUTCOMES_SHORT = "Only traffic without outcomes is loaded: this page needs outcomes."
#: The Routing page's traffic section.
ROUTING_TITLE = "On the traffic (from the reviewers' labels)"
ROUTING_NO_LINK = (
    "No labels yet: share this view from the sidebar and enable reviewing; the reviewers' labels of the "
    "traffic then give the error among the accepted on the whole traffic here."
)
REVIEW_CAPTION = (
    "Traffic without outcomes: the items of a labelling plan, in the plan's order. The plan is stratified by "
    "stated value with a Neyman allocation (more labels where the judge's right and wrong are most mixed, "
    "at least two per stratum), drawn once for the link (budget {budget:,}, seed {seed}), so every reviewer "
    "sees the same items; items under the owner's threshold {t} (the review queue) and items accepted "
    "unseen (the audit) come interleaved. For each item, say whether its answer is right: {right} for Right, "
    "{wrong} for Wrong, {next} for the next unlabelled item."
)
BUDGET_HELP = (
    "For traffic: how many items the labelling plan draws (stratified by stated value, Neyman allocation)."
)


def dropped_count(messages: tuple[str, ...]) -> int:
    """Lines a traffic file dropped, from the reader's messages (one a line, then
    ``"<name>: N more bad lines"``: :class:`calib.readers.base.BadLines`)."""
    more = more_bad_lines(messages[-1]) if messages else None
    return len(messages) - 1 + more if more is not None else len(messages)


def load_lines(name_items: int, dropped: int, top: float, strata: int) -> list[str]:
    """The load report of a traffic file, a fact a line."""
    return [
        f"Items kept: {name_items:,}; lines dropped: {dropped:,} (each with its reason below).",
        f"Stated confidence on a 0-{top:g} scale; {strata:,} strata by stated value for the labelling plan.",
        "No outcome is read: this file is traffic.",
    ]


def why_line(kind: str, stated: float, threshold: float, stratum: str, items: int, planned: int,
             inclusion: float) -> str:
    """Why a planned traffic item was chosen."""
    where = (f"under the owner's threshold {fmt.sig(threshold, 4)}, it goes to a person anyway"
             if kind == "queue" else
             f"at or above the owner's threshold {fmt.sig(threshold, 4)}, it is accepted unseen")
    return (f"Why this item: drawn at random in the plan's stratum {stratum} ({items:,} items, {planned:,} to "
            f"label; inclusion probability {fmt.sig(inclusion, 3)}); scored {fmt.sig(stated, 4)}, {where}.")


def labels_line(labels: int, items: int, ties: int) -> str:
    tie = f"; {ties:,} item(s) whose reviewers disagree evenly are left out" if ties else ""
    return f"{labels:,} labelled item(s) of {items:,} in the traffic{tie}."


def status_line(cert: Any) -> str:
    """The certificate in words: certified at T since label k, or not yet with the projection
    (:class:`calib.traffic.certify.Certificate`)."""
    target = fmt.pct(cert.target_error)
    if cert.certified:
        return (f"Certified at {fmt.sig(cert.threshold, 4)} since label {cert.since_label:,}: the error among the "
                f"items accepted at or above it is at most {fmt.pct(cert.bound)} (target {target}), at "
                f"{fmt.pct(cert.confidence)} confidence however often this page is looked at.")
    if cert.labels_needed is None:
        return (f"Not yet certified at any threshold (target {target}); the labels so far do not point to a "
                "number of labels that would do it.")
    return f"Not yet: about {cert.labels_needed:,} more labels at the current rate (target {target})."


def alarm_lines(cert: Any) -> list[str]:
    """One line per withdrawn threshold (an alarm: the judge or the traffic changed)."""
    return [f"ALARM: the certificate at {fmt.sig(t, 4)} is withdrawn: its bound rose above the target "
            f"{fmt.pct(cert.target_error)} with the latest labels (the judge or the traffic may have changed)."
            for t in cert.withdrawn_thresholds]


def estimate_line(err: dict[str, Any], threshold: float) -> str:
    """The error among accepted on the whole traffic (``calib estimate``'s ``error_accepted``)."""
    if err.get("estimate") is None:
        return (f"Error among the accepted (at {fmt.sig(threshold, 4)}) on the whole traffic: not yet "
                f"({err.get('reason', 'no label')}).")
    lo, hi = err["ci"]
    uniform = err.get("uniform_labels_equivalent")
    tight = "" if uniform is None else f"; as tight as about {uniform:,} labels drawn uniformly"
    return (f"Error among the accepted (at {fmt.sig(threshold, 4)}) on the whole traffic: "
            f"{fmt.pct(err['estimate'])} [{fmt.pct(lo)}, {fmt.pct(hi)}] from {err['labels']:,} label(s) "
            f"({err['method']}{tight}).")


def focus_candidate(cert: Any) -> int:
    """The candidate the figure follows: the certified one, else the first withdrawn, else
    the one whose last bound is lowest."""
    cands = list(cert.candidates)
    ths = [c["threshold"] for c in cands]
    if cert.certified:
        return ths.index(cert.threshold)
    if cert.withdrawn_thresholds:
        return ths.index(cert.withdrawn_thresholds[0])
    return int(np.argmin([c["bound"] for c in cands]))


def bound_figure(path: np.ndarray, target: float, threshold: float, confidence: float) -> go.Figure:
    """The upper bound on the error among accepted at ``threshold`` after each label
    (``path``, one value per label), beside the target."""
    import plotly.graph_objects as go

    from calib.present.plot_base import PALETTE, THRESHOLD_COLOR, _layout

    k = np.arange(1, path.size + 1)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=k, y=100 * path, mode="lines+markers", name=f"upper bound ({confidence:.0%})",
                             line={"color": PALETTE[0]}, marker={"size": 5},
                             hovertemplate="after label %{x}: at most %{y:.1f}%<extra></extra>"))
    fig.add_trace(go.Scatter(x=[0.5, max(path.size, 1) + 0.5], y=[100 * target] * 2, mode="lines",
                             name="target", line={"color": THRESHOLD_COLOR, "dash": "dash"}))
    return _layout(fig, title=f"Bound on the error among accepted at {fmt.sig(threshold, 4)}, label by label",
                   x="labels so far", y="error among accepted, upper bound (%)", height=380)


def review_answer(queue: int, audit: int, accepted: int, threshold: str, labelled: int) -> str:
    """The Review page's answer for traffic (``threshold`` already written)."""
    total = queue + audit
    return (f"The labelling plan's {total:,} items: {queue:,} scored under the owner's threshold {threshold} "
            f"and {audit:,} of the {accepted:,} accepted unseen, interleaved; {labelled:,} of {total:,} "
            "labelled so far.")
