"""Clustered items: interval coverage and test level, cluster-aware vs independent.

    python3 bench/sim_clusters.py [--datasets 1000] [--reps 2000] [--seed 0]

Population. Items ``i = 1..G`` are judged ``m`` times each (epochs). The judge
states a value from ``VALUES`` (7 values, 0.35 to 0.95): per item a value ``v_i``
uniform on ``VALUES``, and per epoch ``v_i`` again with probability 0.6, else a
fresh uniform value, so the stated values are uniform on ``VALUES`` marginally. The
outcome is ``y = [V < p]`` with ``V = U_i`` (one uniform per item) with probability
``lam`` and a fresh uniform otherwise: ``V`` is uniform, so ``P(y = 1 | p) = p``
exactly (calibrated, marginally over items), while the epochs of one item share
``U_i`` and their outcomes are positively correlated (``lam = 0``: independent).
The population values are then exact: accuracy = mean confidence = ``mean(VALUES)``,
Brier = ``mean(VALUES * (1 - VALUES))``.

For each design the script prints the coverage of the 95% percentile interval of the
accuracy, the Brier score and the mean confidence (and of each stated value's 95% Wilson
interval of its hit rate, :func:`calib.metrics.per_value`, and of the Cox slope's Wald
interval, with and without the item as cluster: each value's hit rate is the value, the
slope is 1), resampling clusters
(:func:`calib.clusters.draw`) and resampling rows (the same function on one-row
clusters, which is the row bootstrap), and the rejection rate at 5% of each
calibration test with and without the cluster adjustment
(:func:`calib.clusters.design_effect`: the z divided by the square root of the design
effect, a chi-square by it: the first-order Rao-Scott correction), each with its Monte
Carlo standard error ``sqrt(r (1 - r) / datasets)``. The tests are written out here in
closed form on the count table (cells = stated values; no value at 0 or 1, so no
continuity correction): calibration-in-the-large, Spiegelhalter's Z, the per-value
goodness of fit (df = cells) and Cox's LR test of intercept 0 and slope 1 (df = 2);
"verdict" rejects as the audit's does: one of calibration-in-the-large, goodness of
fit and Cox below 0.05 / 3 (Bonferroni). The last table runs the first ``--audits``
datasets through :func:`calib.audit.audit` itself (no resamples), the rows carrying
their item as cluster or not: the level of the tests as the audit computes them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import special, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calib import clusters  # noqa: E402
from calib.audit import CALIBRATION_TESTS, audit  # noqa: E402
from calib.metrics import cox, per_value  # noqa: E402
from calib.rows import Judgments  # noqa: E402
from calib.scale import PROBABILITY  # noqa: E402
from calib.table import from_judgments  # noqa: E402

VALUES = np.array([0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95])
STAY = 0.6
DESIGNS = ((200, 5, 0.7), (50, 20, 0.7), (200, 5, 0.0))
LEVEL = 0.95
ALPHA = 0.05
#: The tests the audit's verdict combines (Bonferroni, as in :mod:`calib.audit`).
VERDICT_TESTS = ("calibration-in-the-large", "goodness of fit", "Cox LR")
#: The per-value row of the coverage table: each stated value's Wilson interval of its hit rate.
PER_VALUE = "per-value hit rate (Wilson)"
#: The Cox slope's row: its Wald interval (the cluster-robust sandwich with clusters) covers 1.
COX_SLOPE = "Cox slope (Wald)"


def dataset(items: int, epochs: int, lam: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One dataset: per row its cluster (item), cell (index into VALUES) and outcome."""
    base = rng.integers(0, VALUES.size, size=(items, 1))
    cell = np.where(rng.random((items, epochs)) < STAY, base, rng.integers(0, VALUES.size, size=(items, epochs)))
    shared = rng.random((items, 1))
    v = np.where(rng.random((items, epochs)) < lam, shared, rng.random((items, epochs)))
    y = v < VALUES[cell]
    item = np.repeat(np.arange(items), epochs)
    return item, cell.ravel(), y.ravel()


def figures(n: np.ndarray, k: np.ndarray) -> dict[str, np.ndarray]:
    """Accuracy, Brier and mean confidence from counts per cell, ``(..., cells)``."""
    N = n.sum(axis=-1)
    brier = (k * (1 - VALUES) ** 2 + (n - k) * VALUES**2).sum(axis=-1) / N
    return {"accuracy": k.sum(axis=-1) / N, "brier": brier, "mean confidence": (n * VALUES).sum(axis=-1) / N}


TRUTH = {"accuracy": VALUES.mean(), "brier": float(np.mean(VALUES * (1 - VALUES))), "mean confidence": VALUES.mean()}


def p_values(cl: clusters.Clusters, adjust: bool) -> dict[str, float]:
    """Two-sided p-values of the four tests on one dataset."""
    n = np.asarray(cl.n.sum(axis=0)).ravel().astype(float)
    k = np.asarray(cl.k.sum(axis=0)).ravel().astype(float)
    p = VALUES
    live = n > 0
    var = p * (1 - p)

    def deff(right: np.ndarray, wrong: np.ndarray, info: np.ndarray | float) -> float:
        return clusters.test_adjustment(clusters.design_effect(cl, right, wrong, info)) if adjust else 1.0

    out = {}
    z = (k - n * p).sum() / np.sqrt((n * var).sum())
    z /= np.sqrt(deff(1 - p, -p, (n * var).sum()))
    out["calibration-in-the-large"] = 2 * stats.norm.sf(abs(z))
    w = 1 - 2 * p
    info = (n * w * w * var).sum()
    z = ((k - n * p) * w).sum() / np.sqrt(info)
    z /= np.sqrt(deff((1 - p) * w, -p * w, info))
    out["Spiegelhalter Z"] = 2 * stats.norm.sf(abs(z))
    eye = np.eye(p.size)[:, live]
    x2 = float(np.sum((k - n * p)[live] ** 2 / (n * var)[live]))
    x2 /= deff(eye * (1 - p)[:, None], eye * -p[:, None], (n * var)[live])
    out["goodness of fit"] = stats.chi2.sf(x2, int(live.sum()))
    x = special.logit(p)
    lr = 2 * (_loglik_max(x, n, k) - _loglik(x, n, k))
    X = np.stack([np.ones_like(x), x], axis=1)
    info2 = (X * (n * var)[:, None]).T @ X
    lr /= deff(X * (1 - p)[:, None], X * -p[:, None], info2)
    out["Cox LR"] = stats.chi2.sf(max(lr, 0.0), 2)
    return out


def _loglik(eta: np.ndarray, n: np.ndarray, k: np.ndarray) -> float:
    return float(np.sum(k * special.log_expit(eta) + (n - k) * special.log_expit(-eta)))


def _loglik_max(x: np.ndarray, n: np.ndarray, k: np.ndarray) -> float:
    """Maximised binomial log-likelihood of ``logit P(y) = a + b x`` (Newton)."""
    X = np.stack([np.ones_like(x), x], axis=1)
    beta = np.array([0.0, 1.0])
    for _ in range(50):
        q = special.expit(X @ beta)
        grad = X.T @ (k - n * q)
        hess = (X * (n * q * (1 - q))[:, None]).T @ X
        step = np.linalg.solve(hess, grad)
        beta += step
        if np.abs(step).max() < 1e-12:
            break
    return _loglik(X @ beta, n, k)


def audit_rejects(item: np.ndarray, cell: np.ndarray, y: np.ndarray, clustered: bool) -> dict[str, bool]:
    """What :func:`calib.audit.audit` (no resamples) decides on one dataset, its rows
    clustered by item or independent (``--cluster-key none``)."""
    p = VALUES[cell]
    label = item.astype(str) if clustered else None
    rows = Judgments(stated=p, prob=p, correct=y, line=np.arange(1, y.size + 1), item_id=item.astype(str),
                     scale=PROBABILITY, cluster=label, cluster_how="item" if clustered else "")
    a = audit(from_judgments(rows), reps=0)
    out = {name: bool(a.tests[name].rejects(ALPHA)) for name in CALIBRATION_TESTS}
    out["verdict"] = bool(a.miscalibrated)
    return out


def per_value_cover(item: np.ndarray, cell: np.ndarray, y: np.ndarray, clustered: bool) -> tuple[list[bool], bool]:
    """Whether each used value's 95% Wilson interval (:func:`calib.metrics.per_value`, on the
    audit's table with or without the item as cluster) covers its hit rate, the value itself;
    and whether the Cox slope's Wald interval (:func:`calib.metrics.cox`) covers 1."""
    rows = Judgments(stated=VALUES[cell], prob=VALUES[cell], correct=y, line=np.arange(1, y.size + 1),
                     item_id=item.astype(str), group=None, scale=PROBABILITY,
                     cluster=item.astype(str) if clustered else None, cluster_how="item" if clustered else "")
    table = from_judgments(rows)
    c = cox(table, LEVEL)
    slope = c.slope.lo is not None and c.slope.lo <= 1 <= c.slope.hi
    return [bool(r.hit_rate.contains(r.value)) for r in per_value(table, LEVEL)], slope


def interval(samples: np.ndarray) -> tuple[float, float]:
    lo, hi = np.quantile(samples, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(lo), float(hi)


def simulate(items: int, epochs: int, lam: float, datasets: int, reps: int, seed: int,
             audits: int = 0) -> dict[str, dict[str, float]]:
    """Coverage per figure and rejection rate per test, per method, over ``datasets``."""
    rng = np.random.default_rng([seed, items, epochs, int(lam * 1000)])
    cover: dict[str, list[bool]] = {}
    reject: dict[str, list[bool]] = {}
    deffs: list[float] = []
    for d in range(datasets):
        item, cell, y = dataset(items, epochs, lam, rng)
        by_item = clusters.build(item, cell, y, VALUES.size, "item")
        by_row = clusters.build(np.arange(y.size), cell, y, VALUES.size, "row")
        deffs.append(clusters.outcome_design_effect(by_item) or np.nan)
        for method, cl in (("cluster", by_item), ("independent", by_row)):
            nb, kb = clusters.draw(cl, reps, seed=d)
            for name, s in figures(nb, kb).items():
                lo, hi = interval(s)
                cover.setdefault(f"{name}|{method}", []).append(lo <= TRUTH[name] <= hi)
        for method, clustered in (("cluster", True), ("independent", False)):
            values, slope = per_value_cover(item, cell, y, clustered)
            cover.setdefault(f"{PER_VALUE}|{method}", []).extend(values)
            cover.setdefault(f"{COX_SLOPE}|{method}", []).append(slope)
        for method, adjust in (("cluster", True), ("independent", False)):
            ps = p_values(by_item, adjust)
            for name, pv in ps.items():
                reject.setdefault(f"{name}|{method}", []).append(pv < ALPHA)
            verdict = min(ps[k] for k in VERDICT_TESTS) < ALPHA / len(VERDICT_TESTS)
            reject.setdefault(f"verdict|{method}", []).append(verdict)
        if d < audits:
            for method, clustered in (("cluster", True), ("independent", False)):
                for name, r in audit_rejects(item, cell, y, clustered).items():
                    reject.setdefault(f"calib {name}|{method}", []).append(r)
    rate = {key: float(np.mean(v)) for key, v in {**cover, **reject}.items()}
    return {"cover": {k: rate[k] for k in cover}, "reject": {k: rate[k] for k in reject},
            "deff": {"median": float(np.nanmedian(deffs))}}


def _row(label: str, a: float, b: float, R: int) -> str:
    se = lambda r: np.sqrt(r * (1 - r) / R)  # noqa: E731
    cell = lambda r: f"{r:6.1%} ± {se(r):4.1%}".ljust(17)  # noqa: E731
    return f"| {label:<26} | {cell(a)} | {cell(b)} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=2000, help="bootstrap resamples per interval")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--audits", type=int, default=500,
                    help="datasets (the first ones) also run through calib.audit.audit, reps 0")
    args = ap.parse_args()
    for items, epochs, lam in DESIGNS:
        t0 = time.perf_counter()
        audits = min(args.audits, args.datasets)
        r = simulate(items, epochs, lam, args.datasets, args.reps, args.seed, audits)
        print(f"\n{items} items x {epochs} epochs, shared-uniform weight {lam:g} "
              f"(median design effect of the accuracy {r['deff']['median']:.2f}); "
              f"{args.datasets} datasets, {args.reps} resamples, {time.perf_counter() - t0:.0f} s\n")
        print("| 95% interval coverage      | cluster bootstrap | row bootstrap     |")
        print("|----------------------------|-------------------|-------------------|")
        for name in TRUTH:
            print(_row(name, r["cover"][f"{name}|cluster"], r["cover"][f"{name}|independent"], args.datasets))
        print(_row(PER_VALUE, r["cover"][f"{PER_VALUE}|cluster"], r["cover"][f"{PER_VALUE}|independent"],
                   args.datasets * VALUES.size))
        print(_row(COX_SLOPE, r["cover"][f"{COX_SLOPE}|cluster"], r["cover"][f"{COX_SLOPE}|independent"],
                   args.datasets))
        print("\n| rejection at 5%            | cluster-adjusted  | independent       |")
        print("|----------------------------|-------------------|-------------------|")
        for name in ("calibration-in-the-large", "Spiegelhalter Z", "goodness of fit", "Cox LR", "verdict"):
            print(_row(name, r["reject"][f"{name}|cluster"], r["reject"][f"{name}|independent"], args.datasets))
        if audits:
            head = f"calib.audit, {audits} datasets"
            print(f"\n| {head:<26} | clusters in table | cluster key none  |")
            print("|----------------------------|-------------------|-------------------|")
            for name in (*CALIBRATION_TESTS, "verdict"):
                key = f"calib {name}"
                print(_row(name, r["reject"][f"{key}|cluster"], r["reject"][f"{key}|independent"], audits))


if __name__ == "__main__":
    main()
