"""Timings of curves, maps, routing and comparison (prints figures; not a test).

    python3 bench/bench_models.py

Each line is the median of several runs on this machine. What the numbers are for:

- routing: the dashboard's threshold slider calls ``routing.route`` on a cached
  ``routing.basis``; one threshold must take well under 10 ms on 2,000 cells;
- the CORP curve's two bands: 2,000 PAV refits each;
- maps: ``maps.fit`` with its honest scoring and 2,000 bootstrap resamples;
- comparison: three blog-sized models.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calib import compare, curves, maps, routing  # noqa: E402
from calib.rows import Judgments, OptionScores  # noqa: E402
from calib.scale import PROBABILITY, Scale  # noqa: E402
from calib.table import from_counts, from_judgments  # noqa: E402

S100 = Scale(0.0, 100.0, "0-100")


def timeit(label: str, fn, runs: int = 5) -> None:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    unit, scale = ("ms", 1e3) if med >= 1e-3 else ("µs", 1e6)
    print(f"{label:<62} {med * scale:9.2f} {unit}")


def stated_rows(n: int, seed: int = 0) -> Judgments:
    rng = np.random.default_rng(seed)
    s = rng.choice([60, 70, 80, 85, 90, 95, 100], size=n, p=[0.02, 0.05, 0.2, 0.1, 0.25, 0.3, 0.08]).astype(float)
    y = rng.random(n) < s / 100 - 0.2
    return Judgments(stated=s, prob=s / 100, correct=y, line=np.arange(1, n + 1),
                     item_id=np.array([f"q{i}" for i in range(n)]), scale=S100)


def option_rows(n: int, k: int = 4, seed: int = 0) -> Judgments:
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 3, size=(n, k))
    p = np.exp(logits / 2 - np.logaddexp.reduce(logits / 2, axis=1, keepdims=True))
    gold = (rng.random((n, 1)) < p.cumsum(1)).argmax(1)
    top = np.exp(logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)).max(1)
    return Judgments(stated=top, prob=top, correct=logits.argmax(1) == gold, line=np.arange(1, n + 1),
                     item_id=np.array([f"q{i}" for i in range(n)]), scale=PROBABILITY,
                     options=OptionScores(logits, gold, tuple("ABCD"[:k])))


def main() -> None:
    rng = np.random.default_rng(1)
    # ---------------------------------------------------------------- routing
    v = np.repeat(np.arange(101.0), 20)
    g = np.tile(np.arange(20).astype(str), 101)
    n = rng.integers(1, 500, v.size)
    t2000 = from_counts(v, n, rng.binomial(n, v / 100), scale=S100, group=g)
    print(f"routing on a table of {t2000.cells} cells ({t2000.total:,} rows)")
    b0 = routing.basis(t2000)
    timeit("  basis, no resamples", lambda: routing.basis(t2000))
    timeit("  route(one threshold), no intervals", lambda: routing.route(b0, 80.0), runs=200)
    timeit("  route(two thresholds + costs), no intervals",
           lambda: routing.route(b0, 80.0, 95.0, cost_review=1, cost_miss=5), runs=200)
    timeit("  basis with 2,000 resamples (once per dataset/map)", lambda: routing.basis(t2000, reps=2000), runs=3)
    bb = routing.basis(t2000, reps=2000)
    timeit("  route(two thresholds + costs) with intervals (cached basis)",
           lambda: routing.route(bb, 80.0, 95.0, cost_review=1, cost_miss=5), runs=50)
    timeit("  sweep (risk-coverage curve)", lambda: routing.sweep(b0), runs=50)
    # ----------------------------------------------------------------- curves
    for cells in (101, 1001):
        p = np.linspace(0, 1, cells)
        nn = rng.integers(1, 40, cells)
        t = from_counts(p, nn, rng.binomial(nn, p**1.3), scale=PROBABILITY)
        timeit(f"isotonic_curve, {cells} cells, 2,000 resamples per band",
               lambda t=t: curves.isotonic_curve(t, reps=2000), runs=3)
    # ------------------------------------------------------------------- maps
    r1000 = stated_rows(1000)
    for method in maps.METHODS:
        timeit(f"fit {method}, 1,000 stated rows, odd/even, 2,000 resamples",
               lambda m=method: maps.fit(r1000, m, scoring="oddeven", reps=2000), runs=3)
    timeit("fit platt, 1,000 stated rows, 5-fold, 2,000 resamples",
           lambda: maps.fit(r1000, "platt", scoring="kfold", reps=2000), runs=3)
    big = from_judgments(stated_rows(1_000_000))
    timeit("fit isotonic, count table of 1,000,000 rows, 5-fold, 2,000 resamples",
           lambda: maps.fit(big, "isotonic", scoring="kfold", reps=2000), runs=3)
    opt = option_rows(14_042)
    timeit("fit softmax temperature, 14,042 x 4 options, 5-fold, 2,000 resamples",
           lambda: maps.fit(opt, "temperature", scoring="kfold", reps=2000), runs=3)
    # ------------------------------------------------------------- comparison
    tables = {f"m{i}": from_judgments(stated_rows(1000, seed=i)) for i in range(3)}
    timeit("compare 3 models of 1,000 rows, 2,000 resamples", lambda: compare.compare(tables), runs=3)


if __name__ == "__main__":
    main()
