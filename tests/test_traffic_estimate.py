"""Traffic without outcomes: the reader and the label join, the plan, the estimates, the certificate.

Every expected figure is computed here independently: by hand, by brute force, or by ``ppi_py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from calib.labels.records import Label
from calib.traffic.estimate import difference, estimate, horvitz_thompson
from calib.traffic.plan import plan
from calib.traffic.read import Traffic, join_labels


def _traffic(values: list[float], top: float = 100.0) -> Traffic:
    n = len(values)
    return Traffic("t", np.array([f"i{k}" for k in range(n)], dtype=object), np.asarray(values, float), top)


def _label(item: str, correct: bool, k: int, reviewer: str = "a") -> Label:
    return Label(item, correct, reviewer=reviewer, time=f"2026-12-01T10:{k // 60:02d}:{k % 60:02d}Z", kind="audit")


# ------------------------------------------------------------------ estimates
def test_horvitz_thompson_by_hand() -> None:
    # two strata: N = 10 and 30; labels 2 (1 right) and 3 (3 right); domain = all 40 items
    est, se = horvitz_thompson(np.array([10.0, 30.0]), np.array([0, 0, 1, 1, 1]), np.array([1.0, 0, 1, 1, 1]), 40)
    assert est == pytest.approx((10 * 0.5 + 30 * 1.0) / 40)
    q0, q1 = 2 / 4, 4 / 5  # smoothed shares (k+1)/(n+2)
    v = 10**2 * (1 - 2 / 10) * q0 * (1 - q0) * 2 / 1 / 2 + 30**2 * (1 - 3 / 30) * q1 * (1 - q1) * 3 / 2 / 3
    assert se == pytest.approx(math.sqrt(v) / 40)


def test_difference_estimator_agrees_with_ppi_py() -> None:
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(3)
    big, n = 200_000, 400
    g_all = rng.beta(5, 2, size=big)
    z_all = (rng.random(big) < g_all).astype(float)
    lab = rng.choice(big, size=n, replace=False)
    est, se, lam = difference(np.array([float(big)]), np.zeros(n, dtype=int), z_all[lab], g_all[lab],
                              np.array([g_all.sum()]), big)
    y, yhat = z_all[lab], g_all[lab]
    assert est == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, yhat, g_all, lam=lam)[0]), rel=1e-9)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, g_all, alpha=0.05, lam=lam)
    assert 1.96 * se == pytest.approx((float(hi[0]) - float(lo[0])) / 2, rel=0.03)
    ppi_lam = float(ppi_py.ppi_mean_ci.__globals__["_calc_lam_glm"](
        y - est, yhat - est, g_all - est, np.eye(1), coord=None, clip=False, optim_mode="overall"))
    assert lam == pytest.approx(ppi_lam, rel=0.05)


def _verbal(n: int, seed: int) -> tuple[Traffic, np.ndarray]:
    rng = np.random.default_rng(seed)
    v = rng.choice(5, size=n, p=[0.1, 0.15, 0.25, 0.3, 0.2])
    y = rng.random(n) < np.array([0.5, 0.65, 0.8, 0.93, 0.985])[v]
    return _traffic(list(np.array([60, 70, 80, 90, 95])[v])), y


def test_estimate_keys_and_never_wider_than_labels_alone() -> None:
    tr, y = _verbal(3000, 1)
    p = plan(tr, None, 150, seed=2)
    idx = [int(i[1:]) for i in p.ids]
    lab = join_labels(tr, [_label(f"i{i}", bool(y[i]), k) for k, i in enumerate(idx)])
    out = estimate(lab, 90)
    for key in ("accuracy", "error_accepted"):
        e = out[key]
        assert set(e) >= {"estimate", "ci", "method", "labels", "uniform_labels_equivalent"}
        assert e["ci"][0] <= e["estimate"] <= e["ci"][1]
        assert e["se"] <= e["alternative"]["se"]
    assert out["error_accepted"]["labels"] == sum(tr.stated[i] >= 90 for i in idx)
    assert len(out["per_value"]) == 5


