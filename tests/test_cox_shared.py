"""The Cox fit of a whole table is made once per audit (issue 29), and sharing it changes
no figure: the shared fit is compared, bit for bit, with the fits the point metrics and the
Cox test make on their own."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from calib import metrics as m
from calib.audit import audit
from calib.rows import Judgments
from calib.scale import Scale
from calib.table import CountTable, from_judgments

PROB = Scale(0.0, 1.0, "0-1")
PCT = Scale(0.0, 100.0, "0-100")


def _table(n: int, continuous: bool, seed: int = 5) -> CountTable:
    """An overconfident judge: continuous probabilities (a table with a coarse version)
    or integer confidences 0-100 (one cell per value, no coarse version)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n)
    y = rng.random(n) < 1 / (1 + np.exp(-(0.3 + 0.6 * np.log(p / (1 - p)))))
    v, scale = (p, PROB) if continuous else (np.round(p * 100), PCT)
    rows = Judgments(stated=v, prob=scale.to_prob(v), correct=y, line=np.arange(1, n + 1),
                     item_id=np.full(n, ""), scale=scale)
    return from_judgments(rows)


def test_a_continuous_audit_fits_the_whole_table_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point metrics and the Cox test both read the fit of the exact table: one
    Newton fit on its cells (two before: 0.2-0.3 s each on a million cells)."""
    cox_module = sys.modules["calib.metrics.cox"]
    calls: list[int] = []
    newton = cox_module.newton

    def counted(X: np.ndarray, n: np.ndarray, *a: object, **kw: object) -> object:
        calls.append(n.shape[1])
        return newton(X, n, *a, **kw)

    monkeypatch.setattr(cox_module, "newton", counted)
    t = _table(20_000, continuous=True)
    assert t.coarse() is not t and t.cells > t.coarse().cells
    a = audit(t, reps=50, seed=1)
    assert a.cox.slope is not None
    assert calls.count(t.cells) == 1
    assert all(c == t.coarse().cells for c in calls if c != t.cells)  # the rest: the coarse table's


@pytest.mark.parametrize("continuous", [True, False])
def test_the_shared_fit_gives_the_figures_of_separate_fits(continuous: bool) -> None:
    t = _table(5_000, continuous)
    plan = m.Plan.of(t)
    fit = m.cox_point_fit(t)
    assert m.shares_cox_fit(t, plan) is continuous  # integer scores: no coarse table, fitted apart
    alone, shared = m.point_metrics(t, plan), m.point_metrics(t, plan, fit)
    assert alone["cox_slope"] is not None
    assert np.array_equal(np.array(list(shared.values()), dtype=float),
                          np.array(list(alone.values()), dtype=float), equal_nan=True)
    assert list(shared) == list(alone)
    assert m.cox(t, seed=3, fit=fit) == m.cox(t, seed=3)
