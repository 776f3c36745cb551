"""Label as you go, by simulation: coverage of the traffic estimates, the certificate's failure
rate when checked after every label, and the labels needed to certify.

Designs (a population of ``N`` items is drawn afresh in each trial):

- ``verbal``: a verbal judge stating 60/70/80/90/95 (shares .10/.15/.25/.30/.20), true hit
  rates .50/.65/.80/.93/.985;
- ``softmax``: continuous confidence near 1, ``p = 1 - Beta(0.6, 12)``, true hit rate ``p^3``
  (overconfident); strata are 10 equal-size bins;
- ``rare``: the verbal judge with errors about 1% among the items stated 90 and 95.

Tables:

1. coverage of the 95% intervals of accuracy and of the error among accepted (at 90 / the
   softmax's top-half threshold) after ``n`` planned labels, against the population's true
   figures (a finite population: the truth is the mean over its ``N`` items);
2. the certificate's failure rate, checked after every single label: the fraction of trials in
   which *some* label certified a candidate whose true error among accepted is above the
   target (the target 0.9 times the true error of the candidate nearest :data:`NEAR`), beside the same
   figure for a per-stratum Clopper-Pearson bound re-run after every label in fixed sequence
   from the top candidate down (valid for one look only); and, to isolate the repeated looks,
   one stratum of true error 5%, target 0.98 of it, up to 2,000 labels;
3. labels until the first certification, the plan (allocated for the target) versus uniform
   sampling of the traffic, both through the same certificate.

Run: ``python bench/sim_traffic.py [--trials 100]`` (a few minutes on a loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import beta as beta_dist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calib.traffic.certify import betting_upper, bound_path  # noqa: E402
from calib.traffic.estimate import estimate  # noqa: E402
from calib.traffic.plan import plan, strata  # noqa: E402
from calib.traffic.read import Labelled, Traffic  # noqa: E402

N = 10_000
DELTA = 0.05
#: The failure table's target: 0.9 times the true error of the candidate whose error is nearest this.
NEAR = 0.08


def population(design: str, rng: np.random.Generator) -> tuple[Traffic, np.ndarray]:
    """The traffic and each item's true outcome."""
    if design == "softmax":
        p = 1 - rng.beta(0.6, 12, size=N)
        y = rng.random(N) < p**3
        stated = np.round(p, 4)
        top = 1.0
    else:
        hit = [0.5, 0.65, 0.8, 0.93, 0.985] if design == "verbal" else [0.5, 0.65, 0.8, 0.99, 0.995]
        v = rng.choice(5, size=N, p=[0.1, 0.15, 0.25, 0.3, 0.2])
        y = rng.random(N) < np.array(hit)[v]
        stated = np.array([60.0, 70, 80, 90, 95])[v]
        top = 100.0
    keys = np.array([f"i{k}" for k in range(N)], dtype=object)
    return Traffic(design, keys, stated, top), y


def threshold(tr: Traffic) -> float:
    return 90.0 if tr.top > 1 else float(np.median(tr.stated))


def labelled(tr: Traffic, y: np.ndarray, ids: tuple[str, ...] | np.ndarray) -> Labelled:
    rows = np.array([int(str(i)[1:]) for i in ids], dtype=int)
    return Labelled(tr, rows, y[rows])


def coverage(design: str, trials: int, n: int, rng: np.random.Generator) -> list[str]:
    hits = {"accuracy": 0, "error_accepted": 0}
    widths = {"accuracy": [], "error_accepted": []}
    methods: dict[str, int] = {}
    usable = 0
    for _ in range(trials):
        tr, y = population(design, rng)
        lab = labelled(tr, y, plan(tr, None, n, seed=int(rng.integers(2**31))).ids)
        t = threshold(tr)
        out = estimate(lab, t)
        truth = {"accuracy": y.mean(), "error_accepted": 1 - y[tr.stated >= t].mean()}
        if any(out[k]["estimate"] is None for k in hits):
            continue
        usable += 1
        for k in hits:
            lo, hi = out[k]["ci"]
            hits[k] += lo <= truth[k] <= hi
            widths[k].append(hi - lo)
            methods[out[k]["method"]] = methods.get(out[k]["method"], 0) + 1
    rows = []
    for k in hits:
        c = hits[k] / max(usable, 1)
        mc = 1.96 * math.sqrt(c * (1 - c) / max(usable, 1))
        rows.append(f"  {design:8s} {k:15s} n={n:4d}  coverage {c:6.1%} ± {mc:4.1%}  "
                    f"mean width {np.mean(widths[k]):.3f}  ({usable} trials)")
    rows.append(f"  {'':8s} methods reported: {methods}")
    return rows


def cp_upper(k: int, n: int, alpha: float) -> float:
    return 1.0 if k >= n else float(beta_dist.ppf(1 - alpha, k + 1, n - k))


def cp_path(tr: Traffic, lab: Labelled, target: float) -> np.ndarray:
    """Per label, which candidate fixed-sequence per-stratum Clopper-Pearson certifies (-1: none)."""
    st = strata(tr)
    h = len(st)
    of = st.of[lab.rows]
    size = st.size.astype(float)
    n = np.zeros(h, dtype=int)
    k = np.zeros(h, dtype=int)
    out = np.full(of.size, -1)
    u = np.ones(h)
    for j in range(of.size):
        s = of[j]
        n[s] += 1
        k[s] += int(not lab.correct[j])
        u[s] = cp_upper(int(k[s]), int(n[s]), DELTA / h)
        for c in range(h - 1, -1, -1):  # fixed sequence: from the top threshold down, stop at the first failure
            if (size[c:] * u[c:]).sum() / size[c:].sum() <= target:
                out[j] = c
            else:
                break
    return out


def failures(design: str, trials: int, n: int, rng: np.random.Generator) -> list[str]:
    """Certifying any candidate whose true error is above the target is a failure."""
    bet = cp = 0
    for _ in range(trials):
        tr, y = population(design, rng)
        st = strata(tr)
        true = np.array([1 - y[st.of >= c].mean() for c in range(len(st))])
        c_star = int(np.argmin(np.abs(true - NEAR)))
        target = true[c_star] * 0.9
        p = plan(tr, None, n, target_error=target, seed=int(rng.integers(2**31)))
        lab = labelled(tr, y, p.ids)
        _, b = bound_path(lab, 1 - DELTA)
        bad = true > target
        bet += bool(((b <= target) & bad[None, :]).any())
        cp += bool(any(c >= 0 and bad[c] for c in cp_path(tr, lab, target)))
    mc = lambda x: 1.96 * math.sqrt(max(x, 1) / trials * (1 - x / trials) / trials)  # noqa: E731
    return [f"  {design:8s} n={n:4d} target={target:.4f}  betting CS: {bet / trials:6.1%} ± {mc(bet):4.1%}   "
            f"Clopper-Pearson re-run: {cp / trials:6.1%} ± {mc(cp):4.1%}  (delta {DELTA:.0%}, {trials} trials)"]


def one_stratum(trials: int, n: int, error: float, rng: np.random.Generator) -> list[str]:
    """Repeated looks alone: one stratum of true error ``error``, target 0.98 of it; a failure is
    any label after which the bound is at or under the target."""
    target = 0.98 * error
    bet = cp = 0
    for _ in range(trials):
        x = (rng.random(n) < error).astype(float)
        bet += bool((betting_upper(x, DELTA) <= target).any())
        k = np.cumsum(x).astype(int)
        cp += bool((beta_dist.ppf(1 - DELTA, k + 1, np.arange(1, n + 1) - k) <= target).any())
    mc = lambda x: 1.96 * math.sqrt(max(x, 1) / trials * (1 - x / trials) / trials)  # noqa: E731
    return [f"  one stratum, error {error:.2f}, target {target:.4f}, n={n}:  betting CS {bet / trials:6.1%} "
            f"± {mc(bet):4.1%}   Clopper-Pearson re-run {cp / trials:6.1%} ± {mc(cp):4.1%}"]


def first_certified(lab: Labelled, target: float) -> int | None:
    _, b = bound_path(lab, 1 - DELTA)
    hit = np.flatnonzero((b <= target).any(axis=1))
    return int(hit[0]) + 1 if hit.size else None


def needed(design: str, trials: int, n: int, target: float, rng: np.random.Generator) -> list[str]:
    planned, uniform = [], []
    for _ in range(trials):
        tr, y = population(design, rng)
        seed = int(rng.integers(2**31))
        planned.append(first_certified(labelled(tr, y, plan(tr, None, n, target_error=target, seed=seed).ids), target))
        uniform.append(first_certified(labelled(tr, y, tr.keys[rng.permutation(N)[:n]]), target))

    def show(v: list[int | None]) -> str:
        got = [x for x in v if x is not None]
        med = f"{np.median(got):.0f}" if got else "-"
        return f"median {med:>5s} (certified within {n} in {len(got)}/{len(v)})"

    return [f"  {design:8s} target {target:.3f}  planned: {show(planned)}   uniform: {show(uniform)}"]


def ppi_agreement(rng: np.random.Generator) -> list[str]:
    """The difference estimator beside ``ppi_py`` (``pip install ppi-python``; not a test dependency:
    0.2.3 installs a top-level ``tests`` package that shadows this project's ``tests/``)."""
    try:
        import ppi_py
    except ImportError:
        return ["  ppi_py not installed: skipped"]
    from calib.traffic.estimate import difference

    big, n = 200_000, 400
    g = rng.beta(5, 2, size=big)
    z = (rng.random(big) < g).astype(float)
    lab = rng.choice(big, size=n, replace=False)
    est, se, lam = difference(np.array([float(big)]), np.zeros(n, dtype=int), z[lab], g[lab],
                              np.array([g.sum()]), np.array([(g**2).sum()]), big)
    lo, hi = ppi_py.ppi_mean_ci(z[lab], g[lab], g, alpha=0.05, lam=lam)
    pe = float(ppi_py.ppi_mean_pointestimate(z[lab], g[lab], g, lam=lam)[0])
    return [f"  N={big:,}, n={n}, lambda {lam:.3f}: estimate {est:.5f} (ppi_py {pe:.5f}), "
            f"half-width {1.96 * se:.5f} (ppi_py {(float(hi[0]) - float(lo[0])) / 2:.5f})"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    t0 = time.time()
    print("0. the PPI++ difference estimator beside ppi_py")
    for line in ppi_agreement(rng):
        print(line)
    print(f"\ntraffic N = {N:,}; trials per row = {a.trials}\n\n1. coverage of the 95% intervals")
    for design in ("verbal", "softmax", "rare"):
        for line in coverage(design, a.trials, 300, rng):
            print(line)
    print("\n2. certificate failure rate, checked after every label")
    for design in ("verbal", "softmax"):
        for line in failures(design, a.trials, 600, rng):
            print(line)
    for line in one_stratum(a.trials * 5, 2000, 0.05, rng):
        print(line)
    print("\n3. labels until the first certification (same certificate)")
    for line in needed("verbal", a.trials // 2, 1500, 0.05, rng):
        print(line)
    for line in needed("softmax", a.trials // 2, 1500, 0.05, rng):
        print(line)
    print(f"\n({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
