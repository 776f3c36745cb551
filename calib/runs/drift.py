"""Drift between runs of a judge: two runs compared, a series of runs with its control chart."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from calib import drift as _drift
from calib.dataset import Dataset
from calib.drift import Drift, Series, date_order, order_runs
from calib.drift.answers import answers_from, answers_of
from calib.runs.settings import Settings

__all__ = ["Drift", "Series", "answers_from", "answers_of", "date_order", "drift", "order_runs", "series"]


def drift(old: Dataset, new: Dataset, s: Settings, *, threshold: float | None = None, pairing: str = "auto",
          answers: Any = None, anchors: Any = None) -> Drift:
    """Two runs of one judge compared (:func:`calib.drift.drift`) at the settings'
    bootstrap, binning, target (``None``: none) and confidence."""
    return _drift.drift(old, new, reps=s.reps, seed=s.seed, level=s.level, threshold=threshold, target=s.target,
                        confidence=s.confidence, pairing=pairing, scheme=s.scheme, bins=s.bins, answers=answers,
                        anchors=anchors)


def series(runs: Sequence[Dataset], s: Settings, *, threshold: float | None = None, reference: int = 1) -> Series:
    """Figures per run in time order and the two EWMA charts (:func:`calib.drift.series`)."""
    return _drift.series(runs, threshold=threshold, target=s.target, confidence=s.confidence, reference=reference)
