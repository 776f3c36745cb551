"""Level and power of the cumulative-differences test, and coverage of the failure-prediction
intervals, by simulation (prints tables; not a test).

    nice -n 10 python3 bench/sim_failure_prediction.py               # 400 datasets per row, a few minutes
    nice -n 10 python3 bench/sim_failure_prediction.py --datasets 1000

Level: datasets drawn perfectly calibrated (each answer right with exactly its stated
probability) in three shapes: ``five values`` (30, 60, 80, 90, 95: the Monte Carlo
p-value over the stated values), ``0-100 integers`` (``round(100 Beta(5, 2))`` capped at
99, about 60 values: Monte Carlo too) and ``continuous`` (``Beta(5, 2)``, n >= 3,000: more
than 2,000 values, the Brownian p-value). The share of datasets the Kuiper and the
Kolmogorov-Smirnov tests reject at 5%, with its Monte Carlo standard error ``sqrt(r (1 -
r) / datasets)``: a valid 5% test reads at most 5% + 2 standard errors.

Power: 90 meaning 74% and 10 meaning 26% (overconfidence symmetric around 0.5, which
calibration-in-the-large cannot see), and a judge 5 points overconfident above 80 only.

Coverage: the audit's 95% bootstrap intervals of AUPRC for errors, PRR and accuracy at
10% coverage against the population value (computed on 400,000 draws of the same judge),
``five values`` judge whose hit rate is ``0.2 + 0.7 p``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calib import metrics as m  # noqa: E402
from calib.bootstrap import bootstrap  # noqa: E402
from calib.rows import Judgments  # noqa: E402
from calib.scale import Scale  # noqa: E402
from calib.table import from_judgments  # noqa: E402

PCT = Scale(0.0, 100.0, "0-100")
PROB = Scale(0.0, 1.0, "0-1")
FIVE = np.array([30.0, 60.0, 80.0, 90.0, 95.0])


def table(v: np.ndarray, y: np.ndarray, scale: Scale = PCT):  # type: ignore[no-untyped-def]
    n = v.size
    return from_judgments(Judgments(stated=v.astype(float), prob=scale.to_prob(v.astype(float)),
                                    correct=np.asarray(y, dtype=bool), line=np.arange(1, n + 1),
                                    item_id=np.full(n, ""), scale=scale))


def draw(shape: str, n: int, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    if shape == "five values":
        v = rng.choice(FIVE, size=n, p=[.1, .2, .3, .2, .2])
        return table(v, rng.random(n) < v / 100)
    if shape == "0-100 integers":
        v = np.minimum(np.round(100 * rng.beta(5, 2, size=n)), 99.0)
        return table(v, rng.random(n) < v / 100)
    if shape == "continuous":
        p = rng.beta(5, 2, size=n)
        return table(p, rng.random(n) < p, PROB)
    if shape == "symmetric overconfidence":
        v = rng.choice([10.0, 90.0], size=n)
        return table(v, rng.random(n) < 0.5 + 0.6 * (v / 100 - 0.5))
    if shape == "overconfident above 80":
        v = rng.choice(FIVE, size=n, p=[.1, .2, .3, .2, .2])
        return table(v, rng.random(n) < np.where(v > 80, v / 100 - 0.05, v / 100))
    raise ValueError(shape)


def rates(shape: str, n: int, datasets: int, seed: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    ku = ks = 0
    t0 = time.perf_counter()
    for i in range(datasets):
        r = m.cumulative_differences(draw(shape, n, rng), seed=i)
        ku += bool(r.kuiper_test.rejects(0.05))
        ks += bool(r.ks_test.rejects(0.05))
    return ku / datasets, ks / datasets, (time.perf_counter() - t0) / datasets


def coverage(n: int, datasets: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)

    def judge(size: int):  # type: ignore[no-untyped-def]
        v = rng.choice(FIVE, size=size, p=[.1, .2, .3, .2, .2])
        return table(v, rng.random(size) < 0.2 + 0.7 * v / 100)

    big = m.point_metrics(t := judge(400_000), m.Plan.of(t))
    keys = ("auprc_errors", "prr", m.coverage_key(0.1))
    hits = dict.fromkeys(keys, 0)
    for i in range(datasets):
        t = judge(n)
        b = bootstrap(t, reps=500, seed=i)
        for k in keys:
            lo, hi = b.ci(k)
            hits[k] += lo is not None and hi is not None and lo <= big[k] <= hi  # type: ignore[operator]
    return {k: v / datasets for k, v in hits.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=int, default=400)
    args = ap.parse_args()
    d = args.datasets
    se = math.sqrt(0.05 * 0.95 / d)
    print(f"Cumulative differences at 5%, {d} datasets per row (2 s.e. of a 5% rate: {200 * se:.1f} points)")
    print(f"{'shape':<26}{'n':>7}{'Kuiper':>9}{'KS':>9}{'ms/dataset':>12}")
    rows = [("five values", 100), ("five values", 1000), ("0-100 integers", 300), ("0-100 integers", 3000),
            ("continuous", 3000), ("continuous", 20000),
            ("symmetric overconfidence", 300), ("overconfident above 80", 2000)]
    for i, (shape, n) in enumerate(rows):
        ku, ks, sec = rates(shape, n, d, seed=100 + i)
        print(f"{shape:<26}{n:>7}{100 * ku:>8.1f}%{100 * ks:>8.1f}%{1000 * sec:>12.1f}")
    print()
    cov_d = max(100, d // 2)
    for n in (300, 2000):
        c = coverage(n, cov_d, seed=7 + n)
        print(f"coverage of the 95% bootstrap intervals, n = {n}, {cov_d} datasets (2 s.e. "
              f"{200 * math.sqrt(0.05 * 0.95 / cov_d):.1f} points): "
              + ", ".join(f"{k} {100 * v:.1f}%" for k, v in c.items()))


if __name__ == "__main__":
    main()
