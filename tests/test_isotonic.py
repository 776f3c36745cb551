"""PAV, one table and many at once, against scikit-learn's IsotonicRegression."""

from __future__ import annotations

import numpy as np
from sklearn.isotonic import IsotonicRegression

from calib.isotonic import pav, pav_rows


def _sklearn_rows(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Per row: sklearn's weighted isotonic fit of k/n on the cell index, empty cells 0."""
    out = np.zeros(n.shape)
    for r in range(n.shape[0]):
        m = n[r] > 0
        if m.any():
            x = np.flatnonzero(m).astype(float)
            out[r, m] = IsotonicRegression().fit(x, k[r, m] / n[r, m], sample_weight=n[r, m]).predict(x)
    return out


def test_pav_matches_sklearn() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        c = int(rng.integers(1, 40))
        w = rng.integers(1, 30, size=c).astype(float)
        y = rng.random(c)
        ref = IsotonicRegression().fit(np.arange(c), y, sample_weight=w).predict(np.arange(c))
        assert np.allclose(pav(y, w), ref, atol=1e-12)


def test_pav_rows_matches_sklearn_row_by_row() -> None:
    rng = np.random.default_rng(1)
    n = rng.integers(0, 12, size=(50, 30))  # many empty cells
    k = rng.binomial(n, np.linspace(0.2, 0.9, 30) ** 0.5)
    fit = pav_rows(n, k)
    assert fit.shape == n.shape
    assert np.allclose(fit, _sklearn_rows(n, k), atol=1e-9)
    # one row takes the single-table path; same answer
    assert np.allclose(pav_rows(n[3:4], k[3:4]), _sklearn_rows(n[3:4], k[3:4]), atol=1e-12)


def test_pav_rows_never_pools_across_rows() -> None:
    # row 0 all right, row 1 all wrong: concatenated without the shift, PAV would pool them
    n = np.array([[5, 5, 5], [5, 5, 5]])
    k = np.array([[5, 5, 5], [0, 0, 0]])
    assert np.allclose(pav_rows(n, k), [[1, 1, 1], [0, 0, 0]], atol=1e-12)
