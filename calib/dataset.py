"""A loaded dataset: its name, its count table, its rows (when known) and its load report;
:func:`table_and_rows` for functions that take any of a dataset, rows or a count table."""

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


#: What the engine's functions take as data: a loaded dataset, its rows, or a count table.
Data = Dataset | CountTable | Judgments


def table_and_rows(x: Data, what: str = "the data") -> tuple[CountTable, Judgments | None]:
    """The count table and (when known) the rows of a dataset, rows or table."""
    from calib.errors import CalibError
    from calib.table import from_judgments

    if isinstance(x, Dataset):
        return x.table, x.rows
    if isinstance(x, Judgments):
        return from_judgments(x), x
    if isinstance(x, CountTable):
        return x, None
    raise CalibError(f"{what} must be a dataset, a count table or rows, not {type(x).__name__}")
