"""Label as you go, on traffic without outcomes: the traffic and its labels read, the
labelling plan, the estimates on the whole traffic, the anytime-valid certificate, the
labels a plan needs (:mod:`calib.traffic`)."""

from __future__ import annotations

from typing import Any

from calib.runs.settings import Settings
from calib.traffic.certify import Certificate
from calib.traffic.plan import PLAN_FIELDS, Plan, plan_to_csv, plan_to_jsonl, strata
from calib.traffic.read import Labelled, Traffic, as_labelled, as_traffic, load_labels, load_traffic

__all__ = ["PLAN_FIELDS", "Certificate", "Labelled", "Plan", "Traffic", "as_labelled", "as_traffic", "budget",
           "certify", "estimate", "load_labels", "load_traffic", "plan", "plan_to_csv", "plan_to_jsonl", "strata"]


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
