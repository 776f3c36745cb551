"""Fit and score a recalibration map; read, write and apply one; the best map by held-out score."""

from __future__ import annotations

from calib import maps as _maps
from calib.dataset import Dataset
from calib.maps import (
    METHODS,
    CalibrationMap,
    FitResult,
    best_method,
    cell_prob,
    held_out_scoring,
    read_map,
    write_map,
)
from calib.runs.settings import Settings
from calib.scale import CORRECTION

__all__ = ["METHODS", "CalibrationMap", "FitResult", "best_method", "cell_prob", "fit",
           "held_out_scoring", "read_map", "write_map"]


def fit(ds: Dataset, s: Settings, *, method: str | None = None, scoring: str | None = None,
        eval_data: Dataset | None = None, correction: float | None = None, logits: bool | None = None) -> FitResult:
    """The map of the settings' method (or ``method``) fitted on ``ds`` and scored as the
    settings (or ``scoring``) say (:func:`calib.maps.fit`), its before/after figures at the
    settings' binning and bootstrap. Raises :class:`~calib.errors.CalibError` for data the
    method cannot use."""
    return _maps.fit(ds, s.method if method is None else method, scoring=s.scoring if scoring is None else scoring,
                     eval_data=eval_data, folds=s.folds, seed=s.seed, reps=s.reps, level=s.level,
                     correction=CORRECTION if correction is None else correction, bins=s.hist_bins,
                     hist_scheme=s.hist_scheme, ece_scheme=s.ece_scheme, ece_bins=s.bins, logits=logits)
