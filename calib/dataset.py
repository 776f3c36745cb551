"""A loaded dataset: its name, its count table, its rows (when known) and its load report."""

from __future__ import annotations

from dataclasses import dataclass

from calib.loadreport import LoadReport
from calib.rows import Judgments
from calib.table import CountTable


@dataclass(frozen=True)
class Dataset:
    """What every face works on after loading.

    ``rows`` is ``None`` when a count table was imported directly (no per-item
    data: no review queue, no k-fold maps by item).
    """

    name: str
    table: CountTable
    report: LoadReport
    rows: Judgments | None = None
