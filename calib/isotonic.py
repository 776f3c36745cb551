"""Isotonic regression by the pool-adjacent-violators algorithm (PAV), on cells.

Cells are distinct x values already pooled (ties pooled: one cell per distinct x),
so the fit is the one Dimitriadis, Gneiting & Jordan (2021) use for CORP.
"""

from __future__ import annotations

import sys

import numpy as np

from calib.solvers import isotonic_regression, isotonic_regression_rows

# Importing scipy.optimize costs a fresh process 0.15 to 0.2 s, more than a small audit's
# isotonic fits. Its PAVA and the ports of calib.solvers give the same bits (tests/
# test_solvers.py), so the switches below change no figure, only the time: the port while
# scipy.optimize is not imported and the input is small, SciPy's compiled loop otherwise
# (a long-lived process that has imported it, the dashboard's, pays the import once).
#: Longest table of more than 1,000 cells :func:`pav` fits by the port (~0.36 us a cell:
#: the import's cost at ~500,000 cells); a table that wide is audited with a bootstrap
#: that imports scipy.optimize anyway (resamples wider than ROWS_PORT_MAX_WIDTH).
PORT_MAX_CELLS = 100_000
#: Widest resamples (non-empty cells per row) :func:`pav_rows` fits by the lockstep port:
#: 2,000 resamples of a 0-100 scale's 101 cells take it 0.03 to 0.06 s; near 200 cells
#: one call costs about what the import does, and a report's bands make three calls.
ROWS_PORT_MAX_WIDTH = 128


def _optimize_imported() -> bool:
    return "scipy.optimize" in sys.modules


def pav(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted non-decreasing least-squares fit of ``y`` (ordered by increasing x).

    Minimises ``sum_i w_i (y_i - f_i)^2`` subject to ``f_1 <= f_2 <= ...``.
    Cells with zero weight take the value of the block they fall in.

    Parameters
    ----------
    y:
        Cell means (e.g. hit rate per distinct stated value), in increasing x order.
    w:
        Non-negative cell weights (e.g. counts).

    Returns
    -------
    numpy.ndarray
        The fitted value per cell.

    References
    ----------
    Ayer, Brunk, Ewing, Reid & Silverman (1955); Barlow et al. (1972).

    Examples
    --------
    The middle pair violates the order; pooled, it takes its weighted mean
    (0.6 + 0.4) / 2 = 0.5:

    >>> pav(np.array([0.2, 0.6, 0.4, 0.9]), np.array([1, 1, 1, 2]))
    array([0.2, 0.5, 0.5, 0.9])

    Weights count: with the 0.4 cell three times as heavy, (0.6 + 3 * 0.4) / 4 = 0.45:

    >>> pav(np.array([0.6, 0.4]), np.array([1, 3]))
    array([0.45, 0.45])
    """
    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n = y.shape[0]
    pos = w > 0
    if not pos.any():
        return np.full(n, np.nan)
    # SciPy's PAVA (Busing 2022) on many cells: the loop below costs ~0.7 s per million
    fitted = _scipy_pava(y[pos], w[pos]) if n > 1000 else _pav_positive(y[pos], w[pos])
    # a zero-weight cell carries no evidence: it takes the fitted value of the nearest
    # weighted cell to its left (to its right before the first one), which keeps the fit monotone
    idx = np.flatnonzero(pos)
    left = np.searchsorted(idx, np.arange(n), side="right") - 1
    return fitted[np.maximum(left, 0)]


def _pav_positive(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """PAV for strictly positive weights: a stack of blocks, merged while they violate order."""
    n = y.shape[0]
    sums = np.empty(n)
    wts = np.empty(n)
    sizes = np.empty(n, dtype=np.int64)
    top = -1
    for i in range(n):
        top += 1
        sums[top], wts[top], sizes[top] = y[i] * w[i], w[i], 1
        while top > 0 and sums[top - 1] / wts[top - 1] > sums[top] / wts[top]:
            sums[top - 1] += sums[top]
            wts[top - 1] += wts[top]
            sizes[top - 1] += sizes[top]
            top -= 1
    return np.repeat(sums[: top + 1] / wts[: top + 1], sizes[: top + 1])


def pav_rows(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Isotonic fit of the hit rate for each row of ``(reps, cells)`` counts at once.

    Row ``r`` is one table (e.g. one bootstrap resample) whose cells are ordered by
    increasing stated probability; its fit minimises
    ``sum_c n_rc (k_rc / n_rc - f_rc)^2`` over non-decreasing ``f_r``. Cells with no
    answers carry no weight and are returned as 0 (callers fill them as they need).

    One row uses :func:`pav`. Many rows are solved in a single call of SciPy's O(n)
    PAVA (``scipy.optimize.isotonic_regression``, Busing 2022) on all rows laid end
    to end, row ``r`` shifted up by ``2 r``: a hit rate lies in [0, 1], so a block can
    never pool across rows and each row gets exactly its own fit (up to the rounding
    of the shift, ~1e-12). Rows of at most :data:`ROWS_PORT_MAX_WIDTH` non-empty cells
    run the same computation by its port (:func:`_pav_rows_port`) while scipy.optimize is
    not imported: the same bits. Used by the CORP decomposition's bootstrap
    (:mod:`calib.metrics`) and the bands of the CORP curve (:mod:`calib.curves`).

    Parameters
    ----------
    n, k:
        Answers and right answers per cell, shape ``(reps, cells)``.

    Returns
    -------
    numpy.ndarray
        The fitted hit rate per cell, shape ``(reps, cells)``.
    """
    n = np.asarray(n)
    k = np.asarray(k)
    reps, cells = n.shape
    out = np.zeros((reps, cells))
    m = n > 0
    if reps == 1:
        if m.any():
            out[0, m[0]] = pav(k[0, m[0]] / n[0, m[0]], n[0, m[0]].astype(np.float64))
        return out
    width = int(m.sum(axis=1).max(initial=0))
    if width <= ROWS_PORT_MAX_WIDTH and not _optimize_imported():
        return _pav_rows_port(n, k, m, out)
    rep = np.broadcast_to(np.arange(reps)[:, None], n.shape)[m]
    y = k[m] / n[m]
    shift = 2.0 * rep
    # lazy: scipy.optimize costs a fresh process about 0.15 s to import (linprog, shgo,
    # scipy.sparse...), and importing calib.isotonic should not pay it
    from scipy import optimize

    fit = optimize.isotonic_regression(y + shift, weights=n[m].astype(np.float64)).x - shift
    out[m] = fit
    return out


def _pav_rows_port(n: np.ndarray, k: np.ndarray, m: np.ndarray, out: np.ndarray) -> np.ndarray:
    """:func:`pav_rows`'s SciPy call, bit for bit, by :func:`calib.solvers.isotonic_regression_rows`:
    SciPy fits the rows laid end to end, but a block never pools across rows (row ``r``
    lies in ``[2r, 2r + 1]``), so it is row ``r`` fitted alone on the same shifted values."""
    reps, cells = n.shape
    length = m.sum(axis=1)
    order = np.argsort(~m, axis=1, kind="stable")  # each row's non-empty cells first, in order
    shift = 2.0 * np.arange(reps, dtype=np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.take_along_axis(k / n + shift, order, axis=1)
    w = np.take_along_axis(n, order, axis=1).astype(np.float64)
    inside = np.arange(cells)[None, :] < length[:, None]
    fit = isotonic_regression_rows(np.where(inside, y, 0.0), np.where(inside, w, 1.0), length) - shift
    np.put_along_axis(out, order, np.where(inside, fit, 0.0), axis=1)
    return out


def _scipy_pava(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``scipy.optimize.isotonic_regression(y, weights=w).x``: by its port
    (:func:`calib.solvers.isotonic_regression`, the same bits) up to :data:`PORT_MAX_CELLS`
    cells while scipy.optimize is not imported."""
    if y.size <= PORT_MAX_CELLS and not _optimize_imported():
        return isotonic_regression(y, w)
    from scipy import optimize  # lazy: see pav_rows

    return optimize.isotonic_regression(y, weights=w).x
