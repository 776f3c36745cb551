"""The threshold decision: where the review threshold goes, what it costs, per group, the
judges compared at the target, two thresholds, route stability, the cheapest chain of
judges, and the decisions written back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from calib import decision as _decision
from calib.dataset import Dataset
from calib.decision import Decision, JudgeComparison, parse_capacity
from calib.maps import CalibrationMap
from calib.rows import Judgments
from calib.runs.settings import Settings
from calib.settings import FIXED_SEQUENCE

if TYPE_CHECKING:
    from calib.decision.cascade import Cascade
    from calib.decision.stability import Stability
    from calib.decision.two_thresholds import TwoThresholds
    from calib.estimates import Estimate
    from calib.routing import Basis
    from calib.table import CountTable
    from calib.writeback import Certificate, Decisions

__all__ = ["Decision", "JudgeComparison", "compare_judges", "decide", "parse_capacity", "written_decisions"]


def capacity_of(s: Settings) -> tuple[int | None, float | None]:
    """``(items, share)`` of the settings' capacity (:func:`calib.decision.parse_capacity`)."""
    return parse_capacity(s.capacity) if s.capacity else (None, None)


def decide(data: Dataset, s: Settings, *, calibration: CalibrationMap | None = None,
           fit: str | None = None) -> Decision:
    """The threshold decision (:func:`calib.decision.decide`, what ``calib route --json``
    prints) at the settings' target, confidence, costs, capacity, groups and procedure."""
    items, share = capacity_of(s)
    return _decision.decide(data, target=s.target_error, confidence=s.confidence, cost_review=s.cost_review,
                            cost_miss=s.cost_miss, cost_right=s.cost_right, capacity=items, capacity_share=share,
                            by_group=s.by_group, simultaneous=s.simultaneous, calibration=calibration, fit=fit,
                            procedure=s.procedure, **s.stats)  # type: ignore[arg-type]


def compare_judges(datasets: Sequence[Dataset], s: Settings) -> JudgeComparison:
    """Every judge at the settings' target (:func:`calib.decision.compare_judges`),
    paired on shared item ids."""
    return _decision.compare_judges(datasets, target=s.target_error, confidence=s.confidence,
                                    cost_review=s.cost_review, cost_miss=s.cost_miss, cost_right=s.cost_right,
                                    **s.stats)  # type: ignore[arg-type]


def two_thresholds(data: Dataset, s: Settings, *, max_review_share: float,
                   procedure: str = FIXED_SEQUENCE) -> TwoThresholds:
    """The two thresholds certified together (:mod:`calib.decision.two_thresholds`)."""
    from calib.decision.two_thresholds import two_thresholds as run

    return run(data, target_error=s.target_error, max_review_share=max_review_share, confidence=s.confidence,
               procedure=procedure)


def repeated(rows: Judgments | None) -> bool:
    """Some item is judged more than once (the engine's notion of an item,
    :func:`calib.decision.stability.item_codes`): route stability has something to say."""
    import numpy as np

    from calib.clusters import surely_distinct
    from calib.decision.stability import item_codes

    if rows is None or not len(rows):
        return False
    if rows.cluster is None and surely_distinct(np.asarray(rows.item_id)):
        # distinct ids (a row without one is an item of its own) proved without numbering
        # the items: 1,000,000 ids 0.012 s, against 0.58-3.9 s through strings and np.unique
        return False
    return bool(np.bincount(item_codes(rows)[0]).max() >= 2)


def stability(rows: Judgments, s: Settings, threshold: float | None) -> Stability:
    """Route stability of items judged several times (:mod:`calib.decision.stability`)."""
    from calib.decision.stability import stability as run

    return run(rows, threshold, target=s.target_error, confidence=s.confidence, level=s.level, seed=s.seed)


def cascade(runs: Sequence[Judgments], names: Sequence[str], prices: Sequence[float], person_price: float,
            s: Settings, *, max_stages: int | None = None) -> Cascade:
    """The cheapest certified chain of judges (:mod:`calib.decision.cascade`)."""
    from calib.decision.cascade import MAX_STAGES
    from calib.decision.cascade import cascade as run

    return run(runs, names, prices, person_price, target_error=s.target_error, confidence=s.confidence,
               max_stages=MAX_STAGES if max_stages is None else max_stages, **s.stats)  # type: ignore[arg-type]


def max_judges() -> int:
    """The most judges a cascade takes."""
    from calib.decision.cascade import MAX_JUDGES

    return MAX_JUDGES


def written_decisions(rows: Judgments, dec: Decision, threshold: float, routed_at: str, fmt: str, *, now: str,
                      calibration: CalibrationMap | None, name: str) -> tuple[bytes, Decisions, Certificate]:
    """Every item's probability and route at ``threshold`` with the certificate it came
    from (:mod:`calib.writeback`), as the bytes of ``fmt``."""
    from calib import writeback as _writeback

    cert = _writeback.certificate_of(dec.recommendation, threshold, routed_at)
    d = _writeback.decisions(rows, threshold, cert, calibration=calibration, name=name)
    return _writeback.write_bytes(d, fmt, now=now), d, cert


def at_threshold(b: Basis, table: CountTable, threshold: float, s: Settings, *,
                 calibration: CalibrationMap | None = None) -> tuple[int, int, float | None, Estimate]:
    """What one threshold (the owner's, not the recommendation) gives: items accepted,
    errors among them and their Clopper-Pearson upper bound at the settings' confidence
    (:func:`calib.decision.risk.bound_at`), and the expected cost per item with its interval
    (:func:`calib.decision.costs.cost_at`, the cost curve's definition)."""
    from calib.decision.costs import cost_at
    from calib.decision.risk import bound_at

    acc, err, upper = bound_at(table, threshold, s.confidence, calibration=calibration)
    cost = cost_at(b, threshold, cost_review=s.cost_review, cost_miss=s.cost_miss, cost_right=s.cost_right,
                   level=s.level)
    return acc, err, upper, cost
