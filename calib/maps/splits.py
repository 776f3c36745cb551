"""Splits of the fitting data for honest scoring: the rows in file order cut into odd
and even halves, folds by item id for k-fold cross-fitting, and the random split of a
count table's cells (hypergeometric draws, as if its rows had been shuffled and cut).
"""

from __future__ import annotations

import numpy as np

from calib.errors import CalibError
from calib.rows import Judgments
from calib.table import CountTable


def split_counts(table: CountTable, parts: int, *, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split each cell's rows at random into ``parts`` near-equal parts.

    Cell sizes go to parts as evenly as possible (``n // parts`` each, the remainder
    to parts chosen at random); the right answers follow a multivariate
    hypergeometric draw (successive hypergeometric draws), which is exactly what
    shuffling the cell's rows and cutting them would give.

    Returns
    -------
    list of ``(n, correct)`` arrays, one pair per part, aligned with the table's cells.
    """
    if parts < 2:
        raise CalibError(f"a split needs at least 2 parts, got {parts}")
    rng = np.random.default_rng(seed)
    n = table.n.astype(np.int64)
    good = table.correct.astype(np.int64)
    bad = n - good
    base, rem = n // parts, n % parts
    rank = np.argsort(rng.random((n.size, parts)), axis=1).argsort(axis=1)
    sizes = base[:, None] + (rank < rem[:, None])
    out = []
    for j in range(parts):
        m = sizes[:, j]
        if j == parts - 1:
            k = good.copy()
        else:
            k = np.zeros_like(m)
            pos = m > 0
            k[pos] = rng.hypergeometric(good[pos], bad[pos], m[pos])
        out.append((m, k))
        good -= k
        bad -= m - k
    return out


def row_order_halves(rows: Judgments) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the 1st, 3rd, 5th... rows and the 2nd, 4th... rows in file order."""
    order = np.argsort(np.asarray(rows.line), kind="stable")
    pos = np.empty(len(rows), dtype=np.int64)
    pos[order] = np.arange(len(rows))
    return pos % 2 == 0, pos % 2 == 1


def item_folds(rows: Judgments, folds: int, *, seed: int = 0) -> np.ndarray:
    """Fold index per row; rows sharing a (non-empty) item id share a fold.

    Distinct items are shuffled (seeded) and dealt round-robin to the folds, so the
    folds differ in size by at most one item. Rows without an id are items of their own.
    """
    if folds < 2:
        raise CalibError(f"k-fold cross-fitting needs at least 2 folds, got {folds}")
    ids = np.asarray(rows.item_id, dtype=str)
    key = np.where(ids == "", np.char.add("\x00row", np.arange(len(rows)).astype(str)), ids)
    uniq, inv = np.unique(key, return_inverse=True)
    if uniq.size < folds:
        raise CalibError(f"k-fold cross-fitting with {folds} folds needs at least {folds} items, found {uniq.size}")
    rng = np.random.default_rng(seed)
    fold_of_item = np.empty(uniq.size, dtype=np.int64)
    fold_of_item[rng.permutation(uniq.size)] = np.arange(uniq.size) % folds
    return fold_of_item[inv]
