"""Audit one dataset; compare several models; compare the judges at the target."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from calib import audit as _audit
from calib import compare as _compare
from calib.audit import HEADLINE, Audit
from calib.compare import Comparison
from calib.dataset import Dataset
from calib.runs.settings import Settings
from calib.table import CountTable

__all__ = ["HEADLINE", "Audit", "Comparison", "audit", "compare", "compare_groups", "model_row", "renamed"]


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
