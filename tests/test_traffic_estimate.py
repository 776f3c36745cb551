"""Traffic without outcomes: the reader and the label join, the plan, the estimates, the certificate.

Every expected figure is computed here independently: by hand or by brute force (``bench/sim_traffic.py`` compares with ``ppi_py``).
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


def test_difference_estimator_is_ppi_plus_plus_for_a_mean() -> None:
    # PPI++ for a mean (Angelopoulos, Duchi & Zrnic 2024, example 6.1), written out here: labelled
    # (Y, f) of size n, predictions f on N items; lambda = Cov(Y, f) / ((1 + n/N) Var(f)),
    # estimate lambda mean(f_N) + mean(Y - lambda f), variance lambda^2 Var(f_N)/N + Var(Y - lambda f)/n.
    # bench/sim_traffic.py also prints the agreement with ppi_py itself (not a test dependency:
    # ppi-python 0.2.3 installs a top-level "tests" package that shadows this project's tests/)
    rng = np.random.default_rng(3)
    big, n = 200_000, 400
    g_all = rng.beta(5, 2, size=big)
    z_all = (rng.random(big) < g_all).astype(float)
    lab = rng.choice(big, size=n, replace=False)
    est, se, lam = difference(np.array([float(big)]), np.zeros(n, dtype=int), z_all[lab], g_all[lab],
                              np.array([g_all.sum()]), np.array([(g_all**2).sum()]), big)
    y, f = z_all[lab], g_all[lab]
    paper_lam = np.cov(y, f)[0, 1] / ((1 + n / big) * g_all.var(ddof=1))
    assert lam == pytest.approx(paper_lam, rel=0.01)
    assert est == pytest.approx(lam * g_all.mean() + (y - lam * f).mean(), rel=1e-9)
    paper_se = math.sqrt(lam**2 * g_all.var(ddof=1) / big + (y - lam * f).var(ddof=1) / n)
    assert se == pytest.approx(paper_se, rel=0.03)


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




@pytest.mark.parametrize("wrong", [0, 3, 20])
def test_uniform_labels_equivalent_of_a_uniform_sample_is_its_size(wrong: int) -> None:
    # one stratum, 60 labels drawn from 1,000 items: the estimate is a uniform sample's, so the
    # uniform labels giving the same standard error are those 60 (0 wrong: not "1 label", as
    # p(1-p) = 0 at the raw share would say)
    tr = _traffic([90.0] * 1000)
    labels = [_label(f"i{k}", k >= wrong, k) for k in range(0, 600, 10)]
    out = estimate(join_labels(tr, labels), threshold=50)
    # one stated value: the predictor is constant, lambda 0, the two methods tie and HT is reported
    assert out["accuracy"]["method"] == "stratified Horvitz-Thompson"
    assert out["accuracy"]["uniform_labels_equivalent"] in (59, 60, 61)
