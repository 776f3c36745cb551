"""Map transport by simulation: the advice on an unchanged judge (the level) and on planted
changes (the power), printed as tables; not a test.

    nice -n 10 python3 bench/sim_transport.py                # 300 repetitions per row, a few minutes
    nice -n 10 python3 bench/sim_transport.py --reps 1000

Each repetition draws fitting data from a judge (five stated values 60-95, stated v
meaning ``0.15 + 0.7 v / 100``: overconfident), fits a map on it (``calib.maps.fit_map``:
Platt or isotonic), draws new labelled data and runs :func:`calib.maps.transport.transport`
at level 0.95 (each of its two tests at 2.5%). Columns: the share of repetitions advised
"keep", "refit" and "retire"; and, for the unchanged judge, the share the Kuiper test alone
rejects at 2.5% with the fit's variance (what the advice uses) and without it (the test as
if the map were the truth), with the 2 standard errors of a 2.5% rate.

Changes planted: ``shift 0.05`` / ``shift 0.10`` (the judge right 5 or 10 points less often
at every value: the map should be refitted); ``now calibrated`` (the judge's stated values
became the truth: the map, which pulls them down, now hurts and should be retired).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calib import metrics as m  # noqa: E402
from calib.maps import fit_map  # noqa: E402
from calib.maps.transport import transport  # noqa: E402
from calib.scale import Scale  # noqa: E402
from calib.table import from_counts  # noqa: E402

PCT = Scale(0.0, 100.0, "0-100")
VALUES = np.array([60.0, 70.0, 80.0, 90.0, 95.0])
SHARES = np.array([.15, .15, .2, .3, .2])


def draw(n: int, rng: np.random.Generator, change: str = "none"):  # type: ignore[no-untyped-def]
    counts = rng.multinomial(n, SHARES)
    p = 0.15 + 0.7 * VALUES / 100
    if change.startswith("shift"):
        p = p - float(change.split()[1])
    elif change == "now calibrated":
        p = VALUES / 100
    return from_counts(VALUES, counts, rng.binomial(counts, p), scale=PCT)


def row(method: str, n_fit: int, n_new: int, change: str, reps: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    tally = {"keep": 0, "refit": 0, "retire": 0, "kuiper": 0, "naive": 0}
    for i in range(reps):
        cmap = fit_map(draw(n_fit, rng), method)
        new = draw(n_new, rng, change)
        t = transport(cmap, new, seed=i)
        tally[t.advice] += 1
        tally["kuiper"] += bool(t.calibration.kuiper_test.rejects(0.025))
        if change == "none":
            q = np.clip(cmap.apply(new.value), 0.5 / (n_fit + 1), 1 - 0.5 / (n_fit + 1))
            naive = m.cumulative_differences(from_counts(q, new.n, new.correct), seed=i)
            tally["naive"] += bool(naive.kuiper_test.rejects(0.025))
    return {k: v / reps for k, v in tally.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=300)
    args = ap.parse_args()
    r = args.reps
    print(f"Map transport, {r} repetitions per row, level 0.95 (each test at 2.5%; 2 s.e. of a 2.5% rate: "
          f"{200 * math.sqrt(0.025 * 0.975 / r):.1f} points)")
    head = f"{'map':<9}{'n fit':>7}{'n new':>7}  {'change':<15}{'keep':>7}{'refit':>7}{'retire':>7}"
    print(head + f"{'Kuiper':>9}{'naive':>8}")
    cases = [("platt", 500, 500, "none"), ("platt", 2000, 2000, "none"), ("platt", 500, 5000, "none"),
             ("isotonic", 500, 500, "none"), ("isotonic", 2000, 2000, "none"), ("isotonic", 500, 5000, "none"),
             ("platt", 2000, 1000, "shift 0.05"), ("platt", 2000, 1000, "shift 0.10"),
             ("isotonic", 2000, 1000, "shift 0.10"), ("platt", 2000, 1000, "now calibrated"),
             ("isotonic", 2000, 2000, "now calibrated")]
    for i, (method, nf, nn, change) in enumerate(cases):
        s = row(method, nf, nn, change, r, seed=1000 + i)
        extra = (f"{100 * s['kuiper']:>8.1f}%{100 * s['naive']:>7.1f}%" if change == "none" else "")
        print(f"{method:<9}{nf:>7,}{nn:>7,}  {change:<15}{100 * s['keep']:>6.1f}%{100 * s['refit']:>6.1f}%"
              f"{100 * s['retire']:>6.1f}%{extra}")


if __name__ == "__main__":
    main()
