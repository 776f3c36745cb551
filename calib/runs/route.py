"""Routing at a threshold: what a review threshold (and an optional upper one) does to the
items, the risk-coverage sweep, the lowest threshold meeting a target, the review queue."""

from __future__ import annotations

from dataclasses import dataclass

from calib import routing as _routing
from calib.maps import CalibrationMap
from calib.routing import Basis, Routing, Sweep, ThresholdChoice, default_thresholds, threshold_refusal
from calib.rows import Judgments
from calib.runs.settings import Settings
from calib.table import CountTable

__all__ = ["Basis", "RouteRun", "Routing", "Sweep", "ThresholdChoice", "basis", "default_thresholds",
           "queue_csv", "route", "route_at", "sweep", "threshold_refusal"]


@dataclass(frozen=True, eq=False)
class RouteRun:
    """One routing run: the basis (cells by score, resamples drawn once), the figures at
    the threshold, the sweep of every threshold, and the lowest threshold meeting the
    settings' target (``None`` without a target)."""

    basis: Basis
    routing: Routing
    sweep: Sweep
    choice: ThresholdChoice | None


def basis(table: CountTable, s: Settings, *, calibration: CalibrationMap | None = None) -> Basis:
    """The routing basis of a count table (:func:`calib.routing.basis`) at the settings'
    resamples and seed."""
    return _routing.basis(table, calibration=calibration, reps=s.reps, seed=s.seed)


def route_at(b: Basis, s: Settings, lower: float, upper: float | None = None) -> Routing:
    """The routing figures at ``lower`` (and ``upper``) with the settings' costs and level."""
    return _routing.route(b, lower, upper, cost_review=s.cost_review, cost_miss=s.cost_miss, level=s.level)


def route(b: Basis, s: Settings, lower: float, upper: float | None = None, *, bound: str = "point") -> RouteRun:
    """Everything ``calib route`` prints of a threshold: the figures at ``lower`` and
    ``upper``, the sweep, and with :attr:`Settings.target` the lowest threshold whose
    error among the accepted meets it (judged by ``bound``)."""
    sw = sweep(b, s)
    choice = (_routing.lowest_threshold(b, s.target, bound=bound, level=s.level)
              if s.target is not None else None)
    return RouteRun(b, route_at(b, s, lower, upper), sw, choice)


def queue_csv(rows: Judgments, lower: float, *, calibration: CalibrationMap | None = None) -> tuple[bytes, int]:
    """The review queue (the rows below ``lower``, most doubtful first) as spreadsheet-safe
    CSV, and its number of rows."""
    q = _routing.review_queue(rows, lower, calibration=calibration)
    return _routing.queue_to_csv(q), len(q)


def sweep(b: Basis, s: Settings) -> Sweep:
    """The risk-coverage curve of every threshold (:func:`calib.routing.sweep`) at the
    settings' costs and level."""
    return _routing.sweep(b, cost_review=s.cost_review, cost_miss=s.cost_miss, level=s.level)
