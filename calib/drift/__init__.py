"""Drift between runs of the same judge (issue 12, point 4).

:mod:`calib.drift.compare` compares two runs (:func:`drift`): the change in accuracy,
mean stated confidence, calibration error, overconfidence and the per-value hit rates,
with bootstrap intervals of the differences, tests, which stated values moved (Holm),
whether a review threshold still meets its target on the new run, and one verdict.
:mod:`calib.drift.series` follows a list of runs over time with an EWMA control chart
(:func:`series`). :mod:`calib.drift.score` holds the score test of a difference of two
rates and the interval inverting it; :mod:`calib.drift.attribution` says who moved, the
judge or the system, on shared items, with the anchor test of the stated values' meaning
(the answers read by :mod:`calib.drift.answers`); :mod:`calib.drift.units` the paired
resampling units of both.
"""

from __future__ import annotations

from calib.drift.compare import Change, Drift, ThresholdCheck, ValueChange, drift, holm
from calib.drift.series import Chart, RunPoint, Series, date_order, ewma_chart, order_runs, series

__all__ = ["Change", "Chart", "Drift", "RunPoint", "Series", "ThresholdCheck", "ValueChange", "drift",
           "date_order", "ewma_chart", "holm", "order_runs", "series"]
