"""Fit and score a recalibration map; read, write and apply one; the best map by held-out score."""

from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from calib.maps.transport import Transport

__all__ = ["METHODS", "CalibrationMap", "FitResult", "best_method", "cell_prob", "fit",
           "held_out_scoring", "read_map", "read_uploaded_map", "transport", "write_map"]


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


def transport(cmap: CalibrationMap, ds: Dataset, s: Settings) -> Transport:
    """A saved map checked on new labelled data, keep / refit / retire
    (:func:`calib.maps.transport.transport`) at the settings' level and seed."""
    from calib.maps.transport import transport as run

    return run(cmap, ds, level=s.level, seed=s.seed)


def read_uploaded_map(data: bytes) -> CalibrationMap:
    """A map file's bytes, refused above the size limit before parsing
    (:func:`calib.maps.transport.read_uploaded_map`)."""
    from calib.maps.transport import read_uploaded_map as read

    return read(data)
