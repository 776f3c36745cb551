"""The distinct stated values of a table (``calib.table.distinct``) are numpy's
``np.unique`` with its inverse, bit for bit, whether they are found by counting
(integer values, issue 29) or by sorting."""

from __future__ import annotations

import numpy as np
import pytest

from calib.table import COUNT_SPAN, distinct


def _cases() -> list[np.ndarray]:
    rng = np.random.default_rng(29)
    return [
        rng.integers(0, 101, 50_000).astype(np.float64),  # confidences 0-100: counted
        rng.integers(-7, 8, 1_000).astype(np.float64),  # negative integers: counted
        np.array([5.0]), np.array([2.0, 2.0, 2.0]), np.zeros(0),
        np.array([0.0, COUNT_SPAN - 1.0, 3.0]), np.array([0.0, float(COUNT_SPAN), 3.0]),  # span edge
        np.array([2.0**60, 1.0]), np.array([1.0, 2.5, 1.0]),  # too wide; not integers
        np.round(rng.random(10_000), 7),  # probabilities: sorted
        np.array([0.0, -0.0, 1.0]), np.array([-0.0, -0.0]),  # signed zeros: sorted, as numpy keeps them
        np.array([1.0, np.inf]), np.array([np.nan, 1.0, 1.0]),
    ]


@pytest.mark.parametrize("v", _cases())
def test_distinct_is_numpy_unique(v: np.ndarray) -> None:
    got, inv = distinct(v)
    want, want_inv = np.unique(v, return_inverse=True)
    assert got.dtype == np.float64 and inv.dtype == np.int64
    assert np.array_equal(got.view(np.int64), want.view(np.int64))  # the same bits, -0.0 included
    assert np.array_equal(inv, want_inv.reshape(-1))
