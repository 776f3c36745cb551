"""Does the recommended review threshold keep its guarantee? By simulation (prints a table; not a test).

    python3 bench/sim_threshold.py                   # 500 datasets per shape, about 15 s
    python3 bench/sim_threshold.py --datasets 2000 --seed 1

Datasets are drawn from known populations; on each, :func:`calib.decision.recommend`
picks a threshold at a target error ``alpha = 5%`` among the items accepted unseen,
with the guaranteed method (fixed-sequence Clopper-Pearson, confidence 95%, so
``delta = 5%``) and with the point-estimate search (no guarantee). The *population*
error rate among the items the population would accept at that threshold is computed
exactly, and a dataset *fails* when it exceeds ``alpha``. Printed per shape: the share
of datasets that fail (with its Monte Carlo standard error ``sqrt(f (1 - f) / datasets)``),
the share where a threshold was recommended, and the mean coverage (share accepted;
0 when nothing is). The guaranteed method's failure share must be at most ``delta``
within Monte Carlo error; the point estimate's is shown for contrast.

Shapes:

- ``5 values``: a judge stating 60, 70, 80, 90, 100 (shares 10, 15, 25, 30, 20%) right
  55, 66, 80, 92.5, 97.5% of the time, n = 1,000: the population error is 2.5% at
  100, 5.5% at 90 and above (just over the target), 10.1% at 80 and above;
- ``continuous``: confidence ``s ~ Beta(6, 1.2)``, right with probability
  ``s^1.3`` (overconfident), n = 2,000; the population error at ``t`` is
  ``1 - E[s^1.3 | s >= t]``, exact with the incomplete beta function;
- ``small``: the 5-value judge at n = 200;
- ``clustered``: 300 items judged 3 to 5 times each (uniformly), the stated value
  fixed per item (the 5-value shares), each item with its own propensity
  ``q ~ Beta(KAPPA h, KAPPA (1 - h))`` of being right (``h`` the hit rate of its
  value; ``KAPPA = 1``: an intraclass correlation of 1/2) shared by its repeats; certified with the
  items each counted once (the error per item; clusters from the item id), and, for contrast, with the clusters
  ignored (``clustered, ignored``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import betainc, betaln

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calib.decision import recommend  # noqa: E402
from calib.rows import Judgments  # noqa: E402
from calib.scale import PROBABILITY, Scale  # noqa: E402
from calib.table import CountTable, from_counts  # noqa: E402

S100 = Scale(0.0, 100.0, "0-100")
ALPHA, CONFIDENCE = 0.05, 0.95
VALUES = np.array([60.0, 70.0, 80.0, 90.0, 100.0])
SHARES = np.array([0.10, 0.15, 0.25, 0.30, 0.20])
HITS = np.array([0.55, 0.66, 0.80, 0.925, 0.975])
A, B, POWER = 6.0, 1.2, 1.3
#: Concentration of the clustered shape's per-item propensity: intraclass correlation 1 / (1 + KAPPA).
KAPPA = 1.0


def discrete_error(t: float) -> float:
    """Population error among the items stated at or above ``t`` (a weighted sum)."""
    m = t <= VALUES
    return float(np.sum(SHARES[m] * (1 - HITS[m])) / np.sum(SHARES[m])) if m.any() else 0.0


def continuous_error(t: float) -> float:
    """``1 - E[s^POWER | s >= t]`` for ``s ~ Beta(A, B)``: the integral of
    ``s^POWER f(s)`` over ``[t, 1]`` is ``B(A + POWER, B) / B(A, B)`` times the upper
    tail of Beta(A + POWER, B)."""
    mass = 1 - betainc(A, B, t)
    if mass <= 0:
        return 0.0
    hit = math.exp(betaln(A + POWER, B) - betaln(A, B)) * (1 - betainc(A + POWER, B, t))
    return float(1 - hit / mass)


def draw_discrete(n: int) -> Callable[[np.random.Generator], CountTable]:
    def draw(rng: np.random.Generator) -> CountTable:
        counts = rng.multinomial(n, SHARES)
        return from_counts(VALUES, counts, rng.binomial(counts, HITS), scale=S100)
    return draw


def draw_continuous(rng: np.random.Generator, n: int = 2000) -> Judgments:
    s = rng.beta(A, B, n)
    y = rng.random(n) < s**POWER
    return Judgments(stated=s, prob=s, correct=y, line=np.arange(1, n + 1), item_id=np.full(n, ""),
                     scale=PROBABILITY)


def draw_clustered(rng: np.random.Generator, items: int = 300, keep: bool = True) -> Judgments:
    m = rng.integers(3, 6, size=items)
    v = rng.choice(VALUES.size, size=items, p=SHARES)
    h = HITS[v]
    q = rng.beta(KAPPA * h, KAPPA * (1 - h))
    item = np.repeat(np.arange(items), m)
    y = rng.random(item.size) < q[item]
    s = VALUES[v][item]
    ids = np.char.add("item", item.astype(str))
    return Judgments(stated=s, prob=s / 100, correct=y, line=np.arange(1, item.size + 1), item_id=ids,
                     scale=S100, cluster=ids if keep else None, cluster_how="item id" if keep else "")


@dataclass(frozen=True)
class Shape:
    name: str
    draw: Callable[[np.random.Generator], object]
    error: Callable[[float], float]


def shapes() -> list[Shape]:
    return [
        Shape("5 values, n=1000", draw_discrete(1000), discrete_error),
        Shape("continuous, n=2000", draw_continuous, continuous_error),
        Shape("small, n=200", draw_discrete(200), discrete_error),
        Shape("clustered, 300 items x 3-5", draw_clustered, discrete_error),
        Shape("clustered, ignored", lambda rng: draw_clustered(rng, keep=False), discrete_error),
    ]


def run(shape: Shape, datasets: int, seed: int) -> dict[str, tuple[float, float, float]]:
    """Per method: failure share, share with a threshold, mean coverage."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[tuple[bool, bool, float]]] = {"guaranteed": [], "point": []}
    for _ in range(datasets):
        data = shape.draw(rng)
        for method, guarantee in (("guaranteed", True), ("point", False)):
            r = recommend(data, target=ALPHA, confidence=CONFIDENCE, guarantee=guarantee)  # type: ignore[arg-type]
            fails = r.threshold is not None and shape.error(r.threshold) > ALPHA
            out[method].append((fails, r.holds, r.coverage or 0.0))
    res = {}
    for method, rows in out.items():
        a = np.array(rows, dtype=float)
        res[method] = (float(a[:, 0].mean()), float(a[:, 1].mean()), float(a[:, 2].mean()))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    start = time.time()
    print(f"target error {ALPHA:.0%} among the accepted, confidence {CONFIDENCE:.0%} (delta {1 - CONFIDENCE:.0%}); "
          f"{args.datasets} datasets per shape, seed {args.seed}")
    head = (f"{'shape':<28} {'method':<12} {'datasets':>8} {'pop. error > target':>21} "
            f"{'threshold found':>15} {'mean coverage':>13}")
    print(head)
    print("-" * len(head))
    for k, shape in enumerate(shapes()):
        res = run(shape, args.datasets, args.seed + 1000 * k)
        for method, (fail, found, cov) in res.items():
            se = math.sqrt(fail * (1 - fail) / args.datasets)
            print(f"{shape.name:<28} {method:<12} {args.datasets:>8} {f'{fail:.1%} +- {se:.1%}':>21} "
                  f"{found:>15.1%} {cov:>13.1%}")
    print(f"({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
