"""The distinct stated values of a table (``calib.table.distinct``) are numpy's
``np.unique`` with its inverse, bit for bit, whether they are found by counting
(integer values, issue 29) or by sorting; a table's cells, found by one sort of
value-and-outcome keys for continuous values, are a brute-force count's; a table's
per-cell log losses (``calib.table.nll_right_wrong``) are ``nll``'s, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from calib.rows import Judgments
from calib.scale import Scale, snap
from calib.table import COUNT_SPAN, distinct, from_judgments, nll, nll_right_wrong


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


def test_nll_right_wrong_is_nll_of_each_outcome() -> None:
    rng = np.random.default_rng(7)
    p = np.concatenate([rng.random(100_001), [0.0, 1.0, 1e-300, 1e-16, 1 - 1e-16, 0.5, np.nextafter(1.0, 0.0)]])
    right, wrong = nll_right_wrong(p)
    assert np.array_equal(right.view(np.int64), nll(p, np.ones(p.size, dtype=bool)).view(np.int64))
    assert np.array_equal(wrong.view(np.int64), nll(p, np.zeros(p.size, dtype=bool)).view(np.int64))


def test_a_tables_log_loss_sums_are_the_rows_closed_form() -> None:
    """Per cell, ``k nll(p, 1) + (n - k) nll(p, 0)``, written out here with ``nll``."""
    rng = np.random.default_rng(8)
    v = np.round(rng.random(20_000), 4)
    y = rng.random(v.size) < v
    scale = Scale(0.0, 1.0, "0-1")
    t = from_judgments(Judgments(stated=v, prob=v, correct=y, line=np.arange(1, v.size + 1),
                                 item_id=np.full(v.size, ""), scale=scale))
    assert not t.pooled and t.cells > 5_000
    k, n, p = t.correct, t.n, scale.to_prob(t.value)
    want = k * nll(p, np.ones(p.size, dtype=bool)) + (n - k) * nll(p, np.zeros(p.size, dtype=bool))
    assert np.array_equal(t.nll_sum.view(np.int64), want.view(np.int64))


def _cell_cases() -> list[np.ndarray]:
    rng = np.random.default_rng(31)
    tiny = np.array([0.0, 5e-324, 1e-310, np.nextafter(0.0, 1.0) * 3, 1e-300])
    return [
        np.round(rng.random(20_000), 5),  # probabilities with repeats: one sort of keys
        np.round(rng.uniform(0, 100, 5_000), 2),  # 0-100 with decimals: the high bits used
        rng.choice(np.concatenate([tiny, [0.5, 1.0, 1.5]]), 3_000),  # zero, subnormals
        np.array([0.25]), np.array([0.0, 0.0, 0.5]),
        np.array([0.5, -0.0, 0.25]), np.round(rng.uniform(-1, 1, 3_000), 3),  # -0.0, negatives: np.unique
        rng.integers(0, 101, 4_000).astype(np.float64),  # integers: counted
    ]


@pytest.mark.parametrize("v", _cell_cases())
def test_table_cells_are_a_brute_force_count(v: np.ndarray) -> None:
    rng = np.random.default_rng(v.size)
    y = rng.random(v.size) < 0.6
    scale = Scale(float(min(v.min(), 0.0)), float(max(v.max(), 1.0)), "custom")
    t = from_judgments(Judgments(stated=v, prob=scale.to_prob(v), correct=y, line=np.arange(1, v.size + 1),
                                 item_id=np.full(v.size, ""), scale=scale))
    n: dict[float, int] = {}
    k: dict[float, int] = {}
    for x, r in zip(snap(v, scale).tolist(), y.tolist(), strict=True):  # the table's cells are snapped values
        x = x + 0.0  # -0.0 and 0.0 are one value
        n[x] = n.get(x, 0) + 1
        k[x] = k.get(x, 0) + r
    want = sorted(n)
    assert t.value.tolist() == want
    assert t.n.tolist() == [n[x] for x in want] and t.correct.tolist() == [k[x] for x in want]
    assert t.n.dtype == t.correct.dtype == t.group.dtype == np.int64 and not t.group.any()
    p = scale.to_prob(t.value)
    assert np.array_equal(t.prob, p) and np.array_equal(t.py_sum, p * t.correct)
