"""Label as you go, on traffic without outcomes: the traffic and its labels read, the
labelling plan, the estimates on the whole traffic, the anytime-valid certificate, the
labels a plan needs, the plan as the Review page's items and its certificate label by
label (:mod:`calib.traffic`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from calib.runs.settings import Settings
from calib.traffic.certify import Certificate
from calib.traffic.plan import PLAN_FIELDS, Plan, plan_to_csv, plan_to_jsonl, strata
from calib.traffic.read import (
    Labelled,
    Traffic,
    as_labelled,
    as_traffic,
    join_labels,
    load_labels,
    load_traffic,
)

if TYPE_CHECKING:
    import numpy as np

    from calib.traffic.review import TrafficReview

__all__ = ["PLAN_FIELDS", "Certificate", "Labelled", "Plan", "Traffic", "as_labelled", "as_traffic", "bound_path",
           "budget", "certify", "estimate", "is_review_plan", "join_labels", "load_labels", "load_traffic",
           "plan", "plan_to_csv", "plan_to_jsonl", "review_plan", "review_threshold", "strata"]


def plan(tr: Traffic, lab: Labelled | None, budget: int, s: Settings, *, queue_below: float | None = None) -> Plan:
    """The next ``budget`` items to label (:func:`calib.traffic.plan.plan`), allocated for the
    settings' target when one is given, drawn with the settings' seed."""
    from calib.traffic.plan import plan as run

    return run(tr, lab, budget, target_error=s.target, seed=s.seed, queue_below=queue_below)


def estimate(lab: Labelled, s: Settings, *, threshold: float | None = None,
             queue_below: float | None = None) -> dict[str, Any]:
    """Accuracy and the error among the accepted on the whole traffic
    (:func:`calib.traffic.estimate.estimate`) at the settings' level."""
    from calib.traffic.estimate import estimate as run

    return run(lab, threshold, s.level, queue_below=queue_below)


def certify(lab: Labelled, s: Settings, *, queue_below: float | None = None) -> Certificate:
    """The anytime-valid certificate at the settings' target and confidence
    (:func:`calib.traffic.certify.certify`)."""
    from calib.traffic.certify import certify as run

    return run(lab, s.target_error, s.confidence, queue_below=queue_below)


def budget(data: Labelled | Traffic, s: Settings, *, planned: int | None = None, trials: int | None = None,
           max_labels: int | None = None) -> dict[str, Any]:
    """The labels a plan needs to certify (simulated) and the drift and kappa ``planned``
    labels can detect (:func:`calib.traffic.budget.budget`)."""
    from calib.traffic.budget import budget as run

    sizes = {k: v for k, v in (("trials", trials), ("max_labels", max_labels)) if v is not None}
    return run(data, s.target_error, s.confidence, planned=planned, seed=s.seed, **sizes)


def review_threshold(lo: float | None, top: float) -> float:
    """The owner's review threshold ``lo`` (``None``: not set on the stated scale) on the
    traffic's ``top`` scale (:func:`calib.traffic.review.review_threshold`)."""
    from calib.traffic.review import review_threshold as run

    return run(lo, top)


def review_plan(tr: Traffic, threshold: float, budget: int, s: Settings, *,
                data: bytes | None = None) -> TrafficReview:
    """The labelling plan as the Review page's items (:func:`calib.traffic.review.traffic_review`),
    drawn from the traffic alone with the settings' seed and target; ``data``, the file's
    bytes, gives the items their line and text."""
    from calib.traffic.review import traffic_review

    return traffic_review(tr, threshold, budget, seed=0 if s.seed is None else s.seed, target_error=s.target_error,
                          data=data)


def is_review_plan(plan: object) -> bool:
    """Whether a review plan is a traffic labelling plan (not a labelled file's queue and sample)."""
    from calib.traffic.review import TrafficReview

    return isinstance(plan, TrafficReview)


def bound_path(lab: Labelled, s: Settings) -> np.ndarray:
    """After each label, each candidate threshold's anytime-valid upper bound on the error
    among the accepted, at the settings' confidence (:func:`calib.traffic.certify.bound_path`),
    as ``(labels, candidates)``."""
    from calib.traffic.certify import bound_path as run

    return run(lab, s.confidence)[1]
