"""Audit one dataset; compare several models; compare the judges at the target."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from calib import audit as _audit
from calib import compare as _compare
from calib.audit import HEADLINE, Audit
from calib.compare import Comparison
from calib.dataset import Dataset
from calib.runs.settings import Settings
from calib.table import CountTable

if TYPE_CHECKING:
    import numpy as np

    from calib.covariate import CovariateCalibration
    from calib.curves import BinnedPoints, IsotonicCurve, ValuePoints
    from calib.decision.groups import PerGroup
    from calib.rows import Judgments

#: The settings an audit, a comparison and a reliability curve read.
AUDIT_FIELDS: tuple[str, ...] = ("scheme", "bins", "reps", "seed", "level", "below")

__all__ = ["AUDIT_FIELDS", "HEADLINE", "Audit", "brier_winner", "curve", "Comparison", "audit", "compare", "compare_groups", "covariate", "model_row", "renamed", "slice_thresholds"]


def audit(ds: Dataset, s: Settings, *, table: CountTable | None = None) -> Audit:
    """The audit (:func:`calib.audit.audit`) of ``ds`` (or of ``table``, one of its
    tables such as its groups pooled) at the settings' binning, bootstrap and ``below``."""
    t = ds.table if table is None else table
    return _audit.audit(t, scheme=s.ece_scheme, bins=s.bins, reps=s.reps, seed=s.seed, level=s.level,
                        below=s.below, name=ds.name, load_report=ds.report)


def compare(models: Sequence[Dataset] | Mapping[str, CountTable | Dataset], s: Settings, *,
            at: float = 0.9) -> Comparison:
    """One row per model (:func:`calib.compare.compare`) at the settings' binning and bootstrap."""
    return _compare.compare(models, at=at, scheme=s.ece_scheme, bins=s.bins, reps=s.reps, seed=s.seed,
                            level=s.level)


def compare_groups(table: CountTable, s: Settings) -> Comparison:
    """One row per group (subject, task) of a count table."""
    return compare({g: table.select(i) for i, g in enumerate(table.groups)}, s)


def renamed(a: Audit, name: str) -> Audit:
    """The same audit under another model name (a rename recomputes nothing)."""
    return replace(a, name=name)



def model_row(name: str, table: CountTable, s: Settings) -> _compare.ModelRow:
    """One model's row of the comparison (its figures with their intervals)."""
    return _compare.model_row(name, table, reps=s.reps, seed=s.seed, level=s.level)


def curve(table: CountTable, s: Settings) -> ValuePoints | BinnedPoints | IsotonicCurve:
    """The reliability curve of the settings' scheme (:func:`calib.curves.reliability`;
    ``auto`` resolved by :func:`calib.metrics.resolve_scheme`) with its bootstrap band."""
    from calib import curves, metrics

    kind = s.scheme if s.scheme != "auto" else metrics.resolve_scheme(table, "auto")
    return curves.reliability(table, kind, bins=s.bins, level=s.level, reps=s.reps, seed=s.seed)


def brier_winner(a: Audit) -> str | None:
    """Which forecast has the lower Brier score at the audit's level (the stated confidence or
    the constant base rate; :func:`calib.metrics.brier_winner`), ``None`` when undecided."""
    from calib import metrics

    return metrics.brier_winner(a.tests["brier_vs_constant"], 1 - a.level)


def covariate(rows: Judgments, values: np.ndarray, name: str, s: Settings) -> CovariateCalibration:
    """The calibration residual against a field's ``values`` per segment, cluster-robust and
    Holm-corrected (:func:`calib.covariate.covariate_calibration`) at the settings' level and seed."""
    from calib.covariate import covariate_calibration

    return covariate_calibration(rows, values, name, level=s.level, seed=s.seed)


def slice_thresholds(rows: Judgments, values: np.ndarray, name: str, s: Settings) -> PerGroup:
    """One certified review threshold per segment of a categorical field
    (:func:`calib.covariate.slice_thresholds`) at the settings' target and confidence."""
    from calib.covariate import slice_thresholds as run

    return run(rows, values, name, target=s.target_error, confidence=s.confidence)
