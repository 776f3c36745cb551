"""The whole threshold decision of one dataset in one call: what ``calib route --json`` prints.

Contract: :func:`decide` runs :func:`~calib.decision.risk.recommend` (guaranteed and,
for contrast, point estimate), :func:`~calib.decision.costs.costs`,
:func:`~calib.decision.groups.per_group` (when asked) and
:func:`~calib.decision.aurc.aurc` on the same data and returns a :class:`Decision`
whose ``to_dict()`` has the keys of issue 11's JSON: ``recommendation``,
``point_estimate``, ``cost_curve``, ``cheapest``, ``capacity``, ``per_group``,
``per_group_gain``, ``aurc``, ``aurc_ci``, ``aurc_oracle``, ``eaurc``, ``eaurc_ci``
(absent parts ``null``; ``cost_curve`` and ``per_group`` then ``[]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from calib.bootstrap import REPS
from calib.decision.aurc import AURC, aurc
from calib.decision.costs import CostAnalysis, costs
from calib.decision.groups import PerGroup, per_group
from calib.decision.risk import CONFIDENCE, TARGET, Data, Recommendation, certify, prepare
from calib.maps import CalibrationMap


@dataclass(frozen=True)
class Decision:
    """The recommendation, its point-estimate contrast, costs, per-group thresholds and AURC."""

    recommendation: Recommendation
    point_estimate: Recommendation
    costs: CostAnalysis
    per_group: PerGroup | None
    aurc: AURC

    def to_dict(self) -> dict[str, Any]:
        c = self.costs.to_dict()
        g = self.per_group.to_dict() if self.per_group is not None else {"per_group": [], "per_group_gain": None}
        return {"recommendation": self.recommendation.to_dict(), "point_estimate": self.point_estimate.to_dict(),
                **c, **g, **self.aurc.to_dict()}


def decide(
    data: Data, *, target: float = TARGET, confidence: float = CONFIDENCE, cost_review: float | None = None,
    cost_miss: float | None = None, cost_right: float | None = None, capacity: int | None = None,
    capacity_share: float | None = None, by_group: bool = False, simultaneous: bool = False,
    calibration: CalibrationMap | None = None, fit: str | None = None, reps: int = REPS, seed: int = 0,
    level: float = 0.95, procedure: str = "fixed-sequence",
) -> Decision:
    """Everything ``calib route`` shows. With ``fit`` the map is fitted on one half
    and every part (costs, groups, AURC) is computed on the held-out half, on the map's
    calibrated probability, as the recommendation is. ``procedure`` is the
    recommendation's testing procedure (:func:`~calib.decision.risk.recommend`)."""
    table, cmap, where = prepare(data, calibration, fit, seed)  # one split, one map, for every part
    rec = certify(table, cmap, where, target=target, confidence=confidence, procedure=procedure, seed=seed)
    point = certify(table, cmap, where, target=target, confidence=confidence, guarantee=False)
    cost = costs(table, cost_review=cost_review, cost_miss=cost_miss, cost_right=cost_right, capacity=capacity,
                 capacity_share=capacity_share, calibration=cmap, reps=reps, seed=seed, level=level)
    groups = per_group(table, target=target, confidence=confidence, simultaneous=simultaneous,
                       calibration=cmap) if by_group else None
    return Decision(rec, point, cost, groups, aurc(table, calibration=cmap, reps=reps, seed=seed, level=level))
