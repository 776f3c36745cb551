"""The Review page's traffic mode (issue 24): the labelling plan of a file without
outcomes as the items reviewers meet, and the progress toward the threshold certificate.

Contract
--------
- **The plan.** One per link: :func:`calib.runs.traffic.review_plan` at the owner's
  threshold (:func:`traffic_threshold`), with the link's budget (the owner's "Audit sample
  size") and seed and the owner's target error, cached by content and settings. It draws
  from the traffic alone (no labels), so every reviewer sees the same items in the same
  order, whatever was labelled since.
- **The certificate.** The labels of the link joined to the traffic by item id
  (:func:`calib.runs.traffic.join_labels`), the owner's target and confidence, then
  :func:`calib.runs.traffic.certify` and its bound label by label
  (:func:`calib.runs.traffic.bound_path`); the words and the figure are
  :mod:`calib.present.traffic`'s. Read on every run: a reviewer's rerun shows the other
  reviewers' labels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from calib.errors import CalibError
from dashboard.chart import show_figure
from dashboard.entries import Entry, entry_bytes, traffic_entries
from dashboard.layout import md_escape, metric, show_error

if TYPE_CHECKING:
    from calib.hosting.labels import ReviewState
    from calib.hosting.view import View
    from calib.labels.records import Label
    from calib.runs.settings import Settings
    from calib.traffic.certify import Certificate
    from calib.traffic.read import Labelled, Traffic
    from calib.traffic.review import TrafficReview


def traffic_threshold(view: View, top: float) -> float:
    """The owner's review threshold for traffic on a ``top`` scale (:func:`calib.runs.traffic.review_threshold`)."""
    from calib.runs.traffic import review_threshold

    return review_threshold(view.lo if view.on == "stated" else None, top)


def is_traffic(plan: object) -> bool:
    """Whether a review plan is a traffic labelling plan (not a labelled file's queue and sample)."""
    from calib.runs.traffic import is_review_plan

    return is_review_plan(plan)


def entry_of(name: str) -> Entry | None:
    """The traffic entry named ``name``, if any."""
    return next((e for e in traffic_entries() if e.name == name), None)


@st.cache_data(max_entries=32, show_spinner="Drawing the labelling plan…")
def _plan_cached(key: str, threshold: float, budget: int, s: Settings, _entry: Entry) -> TrafficReview:
    from calib.runs.traffic import review_plan

    return review_plan(_entry.traffic, threshold, budget, s, data=entry_bytes(_entry))


def traffic_plans(state: ReviewState) -> dict[str, TrafficReview]:
    """The labelling plan of each traffic input of the link (see the module's contract)."""
    from calib.hosting.view import target_error
    from calib.runs.settings import Settings

    out = {}
    for e in traffic_entries():
        if e.name not in state.datasets or e.traffic is None:
            continue
        t = traffic_threshold(state.view, e.traffic.top)
        if state.setting.sample_size < 1:
            continue
        s = Settings(seed=state.setting.seed, target=target_error(state.view))
        out[e.name] = _plan_cached(f"{e.digest}:{e.overrides.key()!r}", t, state.setting.sample_size, s, e)
    return out


def joined(traffic: Traffic, history: list[Label]) -> Labelled:
    """The link's labels of this traffic joined to it by item id."""
    from calib.runs.traffic import join_labels

    return join_labels(traffic, history)


def certificate_of(lab: Labelled, view: View) -> Certificate:
    """The certificate at the owner's target error and confidence."""
    from calib.hosting.view import target_error
    from calib.runs.settings import Settings
    from calib.runs.traffic import certify

    return certify(lab, Settings(target=target_error(view), confidence=view.confidence))


def alarms(cert: Certificate) -> None:
    """One alarm box per withdrawn threshold (fixed words and numbers: escaped all the same)."""
    from calib.present import traffic as words

    for line in words.alarm_lines(cert):
        st.error(md_escape(line), icon=":material/notifications_active:")


def certificate_section(name: str, history: list[Label], view: View) -> None:
    """Progress toward the certificate: labels so far, the bound against the target, the
    sentence (certified since label k, or how many more), the alarm, the figure."""
    from calib.present import format as fmt
    from calib.present import traffic as words
    from calib.runs.settings import Settings
    from calib.runs.traffic import bound_path

    st.subheader("Toward the certificate")
    entry = entry_of(name)
    if entry is None or entry.traffic is None:
        return
    try:
        lab = joined(entry.traffic, history)
        cert = certificate_of(lab, view)
    except CalibError as exc:
        show_error(exc)
        return
    focus = words.focus_candidate(cert)
    cand = cert.candidates[focus]
    c1, c2, c3 = st.columns(3)
    c1.metric("Labels so far", f"{cert.labels:,}")
    metric(c2, f"Upper bound at {fmt.sig(cand['threshold'], 4)}", fmt.pct(cand["bound"]),
           help=f"The anytime-valid upper bound on the error among the items accepted at or above "
                f"{fmt.sig(cand['threshold'], 4)}, at {fmt.pct(cert.confidence)} confidence.")
    c3.metric("Target error", fmt.pct(cert.target_error))
    st.text(words.labels_line(cert.labels, len(entry.traffic), lab.ties))
    st.text(words.status_line(cert))
    alarms(cert)
    if cert.labels:
        bounds = bound_path(lab, Settings(confidence=cert.confidence))
        show_figure(words.bound_figure(bounds[:, focus], cert.target_error, cand["threshold"], cert.confidence),
                    key="calib_traffic_bound")
