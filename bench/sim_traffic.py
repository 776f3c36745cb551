"""Label as you go, by simulation: coverage of every traffic estimate, the certificate's failure
rate when checked after every label, and the labels needed to certify.

Designs (a population of ``N`` items is drawn afresh in each trial):

- ``verbal``: a verbal judge stating 60/70/80/90/95 (shares .10/.15/.25/.30/.20), true hit
  rates .50/.65/.80/.93/.985;
- ``softmax``: continuous confidence near 1, ``p = 1 - Beta(0.6, 12)``, true hit rate ``p^3``
  (overconfident); strata are 10 equal-size bins;
- ``rare``: the verbal judge with errors about 1% among the items stated 90 and 95;
- ``clustered``: the verbal judge's values and rates, items in clusters of :data:`CLUSTER` (one
  conversation) sharing the stated value and a hit rate drawn ``Beta`` around the value's rate
  (concentration :data:`CONCENTRATION`: within-cluster correlation about 0.2); the traffic
  knows the clusters (the estimates' design effect).

Tables:

1. coverage of the 95% intervals after ``n`` planned labels, against the population's true
   figures (a finite population: the truth is the mean over its ``N`` items): accuracy and the
   error among accepted (at 90 / the softmax's median), each by the reported method and by
   both methods (stratified Horvitz-Thompson, PPI++), and the per-value hit rates (Wilson,
   pooled over strata);
2. the certificate's failure rate, checked after every single label: the fraction of trials in
   which *some* label certified a candidate whose true error among accepted is above the
   target (the target 0.9 times the true error of the candidate nearest :data:`NEAR`), beside the same
   figure for a per-stratum Clopper-Pearson bound re-run after every label in fixed sequence
   from the top candidate down (valid for one look only); and, to isolate the repeated looks,
   one stratum of true error 5%, target 0.98 of it, up to 2,000 labels;
3. labels until the first certification, through the same certificate: the plan (allocated
   for the target, 50 labels at a time, refitted from the labels so far as a user re-plans), uniform sampling of the traffic, and today's proportional audit sample
   (:func:`calib.labels.plan.allocate` over the strata accepted at the design's threshold, in
   random order). Goal: the plan needs at most half of uniform's labels on the verbal design.

Run: ``nice -n 10 python bench/sim_traffic.py [--trials 100]`` (a few minutes on a loaded 2-core machine).
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

from calib.labels.plan import allocate as proportional  # noqa: E402
from calib.traffic.certify import betting_upper, bound_path  # noqa: E402
from calib.traffic.estimate import estimate  # noqa: E402
from calib.traffic.plan import plan, strata  # noqa: E402
from calib.traffic.read import Labelled, Traffic  # noqa: E402

N = 10_000
DELTA = 0.05
#: The failure table's target: 0.9 times the true error of the candidate whose error is nearest this.
NEAR = 0.08
#: Items per cluster, and the Beta concentration of a cluster's hit rate, in the clustered design.
CLUSTER, CONCENTRATION = 5, 4.0
DESIGNS = ("verbal", "softmax", "rare", "clustered")
#: Target error of the labels-needed table, per design.
TARGETS = {"verbal": 0.05, "softmax": 0.05, "rare": 0.02, "clustered": 0.05}


def population(design: str, rng: np.random.Generator) -> tuple[Traffic, np.ndarray]:
    """The traffic and each item's true outcome."""
    if design == "softmax":
        p = 1 - rng.beta(0.6, 12, size=N)
        y = rng.random(N) < p**3
        stated = np.round(p, 4)
        top = 1.0
    elif design == "clustered":
        hit = np.array([0.5, 0.65, 0.8, 0.93, 0.985])
        vc = rng.choice(5, size=N // CLUSTER, p=[0.1, 0.15, 0.25, 0.3, 0.2])
        pc = rng.beta(CONCENTRATION * hit[vc], CONCENTRATION * (1 - hit[vc]))
        y = rng.random(N) < np.repeat(pc, CLUSTER)
        stated = np.array([60.0, 70, 80, 90, 95])[np.repeat(vc, CLUSTER)]
        keys = np.array([f"i{k}" for k in range(N)], dtype=object)
        cluster = np.array([f"c{k // CLUSTER}" for k in range(N)], dtype=object)
        return Traffic(design, keys, stated, 100.0, cluster=cluster), y
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


def coverage(design: str, trials: int, n: int, rng: np.random.Generator) -> list[str]:  # long: one table
    keys = ("accuracy", "error_accepted")
    hits = {(k, m): 0 for k in keys for m in ("reported", "HT", "PPI++")}
    widths: dict[str, list[float]] = {k: [] for k in keys}
    pv_hit = pv_all = 0
    usable = 0
    for _ in range(trials):
        tr, y = population(design, rng)
        lab = labelled(tr, y, plan(tr, None, n, seed=int(rng.integers(2**31))).ids)
        t = threshold(tr)
        out = estimate(lab, t)
        truth = {"accuracy": y.mean(), "error_accepted": 1 - y[tr.stated >= t].mean()}
        if any(out[k]["estimate"] is None for k in keys):
            continue
        usable += 1
        for k in keys:
            e = out[k]
            both = {e["method"]: e["ci"], e["alternative"]["method"]: e["alternative"]["ci"]}
            for m, ci in (("reported", e["ci"]), ("HT", both["stratified Horvitz-Thompson"]),
                          ("PPI++", both["PPI++ (difference estimator)"])):
                hits[(k, m)] += ci[0] <= truth[k] <= ci[1]
            widths[k].append(e["ci"][1] - e["ci"][0])
        st = strata(tr)
        for h, row in enumerate(out["per_value"]):
            if row["ci"] is not None:
                pv_all += 1
                pv_hit += row["ci"][0] <= y[st.of == h].mean() <= row["ci"][1]

    def cov(h: int, m: int) -> str:
        c = h / max(m, 1)
        return f"{c:6.1%} ± {1.96 * math.sqrt(c * (1 - c) / max(m, 1)):4.1%}"

    rows = [f"  | {design} | {k} | {cov(hits[(k, 'reported')], usable)} | {cov(hits[(k, 'HT')], usable)} | "
            f"{cov(hits[(k, 'PPI++')], usable)} | {np.mean(widths[k]):.3f} |" for k in keys]
    rows.append(f"  | {design} | per-value hit rates (Wilson) | {cov(pv_hit, pv_all)} | | | |")
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
        lab = labelled(tr, y, planned(tr, y, n, target, rng))
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


def planned(tr: Traffic, y: np.ndarray, n: int, target: float, rng: np.random.Generator, step: int = 50) -> np.ndarray:
    """The ids the plan picks, ``step`` at a time, refitted from the labels so far (``calib plan
    --labels L --budget 50 --target-error A``, label them, plan again)."""
    ids: list[str] = []
    while len(ids) < n:
        lab = labelled(tr, y, ids) if ids else None
        more = plan(tr, lab, min(step, n - len(ids)), target_error=target, seed=int(rng.integers(2**31))).ids
        if not more:
            break
        ids.extend(more)
    return np.array(ids, dtype=object)


def audit_order(tr: Traffic, n: int, rng: np.random.Generator) -> np.ndarray:
    """Today's audit sample: proportional over the strata accepted at the design's threshold
    (:func:`calib.labels.plan.allocate`), drawn at random within strata, in random order."""
    st = strata(tr)
    t = threshold(tr)
    acc = np.array([h for h in range(len(st)) if st.low[h] >= t])
    take = proportional(st.size[acc], n)
    idx = np.concatenate([rng.choice(np.flatnonzero(st.of == h), size=int(k), replace=False)
                          for h, k in zip(acc, take, strict=True)])
    return tr.keys[rng.permutation(idx)]


def needed(design: str, trials: int, n: int, target: float, rng: np.random.Generator) -> list[str]:
    planned_, uniform, audit = [], [], []
    for _ in range(trials):
        tr, y = population(design, rng)
        planned_.append(first_certified(labelled(tr, y, planned(tr, y, n, target, rng)), target))
        uniform.append(first_certified(labelled(tr, y, tr.keys[rng.permutation(N)[:n]]), target))
        audit.append(first_certified(labelled(tr, y, audit_order(tr, n, rng)), target))

    def show(v: list[int | None]) -> str:
        x = np.array([math.inf if f is None else f for f in v], dtype=float)
        q = [float(np.quantile(x, p, method="inverted_cdf")) for p in (0.5, 0.1, 0.9)]
        f = [f"> {n:,}" if math.isinf(a) else f"{a:,.0f}" for a in q]
        return f"{f[0]} ({f[1]}–{f[2]}; {np.isfinite(x).sum()}/{len(v)})"

    got = [np.median([math.inf if f is None else f for f in v]) for v in (planned_, uniform)]
    ratio = f"{got[0] / got[1]:.2f}" if math.isfinite(got[1]) else f"< {got[0] / n:.2f}"
    return [f"  | {design} | {target:.2f} | {show(planned_)} | {show(uniform)} | {show(audit)} | {ratio} |"]


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
    print(f"\ntraffic N = {N:,}; trials per row = {a.trials}\n\n1. coverage of the 95% intervals after 300 planned labels")
    print("  | design | estimate | reported | Horvitz-Thompson | PPI++ | mean width (reported) |\n  |---|---|---|---|---|---|")
    for design in DESIGNS:
        for line in coverage(design, a.trials, 300, rng):
            print(line)
    print("\n2. certificate failure rate, checked after every label (600 planned labels)")
    for design in DESIGNS:
        for line in failures(design, a.trials, 600, rng):
            print(line)
    for line in one_stratum(a.trials * 5, 2000, 0.05, rng):
        print(line)
    print("\n3. labels until the first certification (same certificate; median (10–90%; certified/trials); "
          "cap 1,500)")
    print("  | design | target | plan | uniform | today's proportional audit | plan / uniform (medians) |\n"
          "  |---|---|---|---|---|---|")
    for design in DESIGNS:
        for line in needed(design, a.trials // 2, 1500, TARGETS[design], rng):
            print(line)
    print(f"\n({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
