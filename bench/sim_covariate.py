"""Calibration against a covariate by simulation: the family-wise level of the per-segment
tests (Holm) with and without clustered rows, and their power (prints a table; not a test).

    nice -n 10 python3 bench/sim_covariate.py            # 400 datasets per row, about a minute
    nice -n 10 python3 bench/sim_covariate.py --datasets 1000

Each dataset: items stated at 60, 80, 90 or 95, a categorical field with 5 segments (shares
40/25/15/12/8%). Calibrated: an item's answers are right with its stated probability on
average; ``clustered``: each item judged 4 times, its own chance of being right
``p + 0.25 (B - 0.5)`` for ``B`` uniform (calibrated on average, correlated within the
item). The share of datasets where any segment is flagged after Holm at 5% (the
family-wise rate; a valid procedure reads at most 5% + 2 s.e.), with the cluster-robust
errors (the item as unit, ``cluster``) and with each row as its own unit (``rows``).
Power: one segment 10 points overconfident.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calib.covariate import covariate_calibration  # noqa: E402
from calib.rows import Judgments  # noqa: E402
from calib.scale import Scale  # noqa: E402

PCT = Scale(0.0, 100.0, "0-100")
SEGMENTS = np.array(["a", "b", "c", "d", "e"])
SHARES = [.4, .25, .15, .12, .08]


def dataset(items: int, epochs: int, rng: np.random.Generator, bad: float) -> tuple[Judgments, np.ndarray]:
    v = rng.choice([60.0, 80.0, 90.0, 95.0], size=items)
    seg = rng.choice(SEGMENTS, size=items, p=SHARES)
    own = np.clip(v / 100 + (0.25 * (rng.random(items) - 0.5) if epochs > 1 else 0.0) - bad * (seg == "e"), 0, 1)
    v, seg, own = (np.repeat(a, epochs) for a in (v, seg, own))
    y = rng.random(v.size) < own
    n = v.size
    rows = Judgments(stated=v, prob=v / 100, correct=y, line=np.arange(1, n + 1), item_id=np.full(n, ""), scale=PCT,
                     cluster=np.repeat(np.arange(items), epochs) if epochs > 1 else None)
    return rows, np.array(seg.tolist(), dtype=object)


def rate(items: int, epochs: int, bad: float, datasets: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    robust = naive = 0
    for _ in range(datasets):
        rows, seg = dataset(items, epochs, rng, bad)
        robust += bool(covariate_calibration(rows, seg, "seg").flagged)
        if epochs > 1:
            from dataclasses import replace

            naive += bool(covariate_calibration(replace(rows, cluster=None), seg, "seg").flagged)
    return robust / datasets, naive / datasets


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=int, default=400)
    d = ap.parse_args().datasets
    print(f"Any segment flagged after Holm at 5%, {d} datasets per row (2 s.e. of 5%: "
          f"{200 * math.sqrt(0.05 * 0.95 / d):.1f} points)")
    print(f"{'items':>7}{'epochs':>8}  {'segment e':<22}{'cluster':>9}{'rows':>8}")
    for i, (items, epochs, bad) in enumerate([(500, 1, 0.0), (3000, 1, 0.0), (500, 4, 0.0), (2000, 4, 0.0),
                                              (1000, 1, 0.10), (1000, 4, 0.10)]):
        robust, naive = rate(items, epochs, bad, d, seed=50 + i)
        what = "calibrated" if bad == 0 else f"{100 * bad:g} points overconfident"
        print(f"{items:>7,}{epochs:>8}  {what:<22}{100 * robust:>8.1f}%" + (f"{100 * naive:>7.1f}%" if epochs > 1 else ""))


if __name__ == "__main__":
    main()
