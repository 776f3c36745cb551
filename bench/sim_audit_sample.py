"""Does the audit sample's interval cover the error rate among items accepted unseen? By simulation.

    python3 bench/sim_audit_sample.py                  # 500 datasets per design, a few minutes
    python3 bench/sim_audit_sample.py --datasets 2000 --seed 1
    python3 bench/sim_audit_sample.py --kappa-only

Each dataset is a fresh population of judged items drawn from a known shape; the items at
or above the threshold are accepted unseen, and their error rate (the share of them that
are wrong, a finite-population figure) is what the audit estimates. The audit sample is
drawn as the Review page draws it (:func:`calib.labels.review_plan`: stratified by stated
value, proportional with one per stratum); a reviewer labels its items truthfully
(all of them, or in the ``70% labelled`` rows the first 70% of the sample's random order, as
a reviewer who stops early); :func:`calib.labels.accepted_error` gives the stratified estimate
and its Korn-Graubard 95% interval. Printed per design: the share of datasets whose interval
holds the population error rate (with its Monte Carlo standard error
``sqrt(c (1 - c) / datasets)``), the share whose upper bound is at or above it, the mean
width, and the mean population error rate. The target: coverage at least 93% everywhere.

Shapes (threshold 80 on 0-100 unless said):

- ``5 values``: 2,000 accepted items stated 80, 85, 90, 95, 100 (shares 40, 10, 25, 15,
  10%) wrong 20, 15, 8, 4, 1% of the time (about 12% overall);
- ``rare errors``: 2,000 accepted at 90, 95, 100 (20, 30, 50%) wrong 3, 1, 0.2% (about 1%);
- ``tiny strata``: 1,000 accepted like ``sample_data/judge_b``: 95 holds 88%, 100 5%, 85 4%,
  and 80, 88, 90, 98 a few items each (strata of 2 to 15 items), wrong 20-55% below 95,
  21% at 95, 10% at 100;
- ``21 values``: 3,000 accepted at 80, 81, ..., 100 (shares rising to 100), wrong 30%
  falling linearly to 1%, merged into 10 runs of values;
- ``continuous``: confidence ``s ~ Beta(6, 1.2)`` on 0-1, threshold 0.8, wrong with
  probability ``1 - s^1.3``, 4,000 items (about 2,400 accepted), 10 runs of values.

The kappa part (``--kappa``, on by default): the file's outcome is right with probability
0.7, a reviewer's label agrees with it with probability 0.9 (else the opposite), so the
population kappa is known in closed form; the coverage of
:func:`calib.labels.agreement`'s percentile-bootstrap 95% interval (1,000 resamples) is
printed for 30, 100 and 400 labelled items.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calib.labels import Label, accepted_error, agreement, item_keys, review_plan  # noqa: E402
from calib.rows import Judgments  # noqa: E402
from calib.scale import PROBABILITY, Scale  # noqa: E402

S100 = Scale(0.0, 100.0, "0-100")
T0 = "2026-12-01T18:30:00Z"
SIZES = (30, 60, 100, 200, 400)
LEVEL = 0.95


@dataclass(frozen=True)
class Shape:
    """A population: ``draw(rng)`` gives stated values and outcomes; threshold and scale."""

    name: str
    draw: Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]]
    threshold: float
    scale: Scale


def discrete(
    values, shares, wrong, n, below=200
) -> Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]]:
    """``n`` accepted items at ``values`` in exact ``shares`` (a multinomial would make the
    strata's sizes vary too; both are fine), each wrong with its value's rate, plus ``below``
    items under the threshold (the review queue)."""
    values, shares, wrong = (np.asarray(v, dtype=np.float64) for v in (values, shares, wrong))
    counts = np.floor(shares / shares.sum() * n).astype(np.int64)
    counts[np.argmax(counts)] += n - counts.sum()

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        stated = np.concatenate([np.repeat(values, counts), np.full(below, 50.0)])
        p_wrong = np.concatenate([np.repeat(wrong, counts), np.full(below, 0.5)])
        return stated, rng.random(stated.size) >= p_wrong

    return draw


def continuous(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    s = rng.beta(6.0, 1.2, 4000)
    return s, rng.random(s.size) < s**1.3


V21 = np.arange(80.0, 101.0)
SHAPES = (
    Shape(
        "5 values",
        discrete([80, 85, 90, 95, 100], [40, 10, 25, 15, 10], [0.20, 0.15, 0.08, 0.04, 0.01], 2000),
        80.0,
        S100,
    ),
    Shape("rare errors", discrete([90, 95, 100], [20, 30, 50], [0.03, 0.01, 0.002], 2000), 80.0, S100),
    Shape(
        "tiny strata",
        discrete(
            [80, 85, 88, 90, 95, 98, 100],
            [15, 38, 2, 8, 878, 2, 52],
            [0.55, 0.42, 0.5, 0.6, 0.21, 0.5, 0.10],
            995,
        ),
        80.0,
        S100,
    ),
    Shape("21 values", discrete(V21, np.linspace(1, 5, 21), np.linspace(0.30, 0.01, 21), 3000), 80.0, S100),
    Shape("continuous", continuous, 0.8, PROBABILITY),
)


def rows_of(stated: np.ndarray, correct: np.ndarray, scale: Scale) -> Judgments:
    n = stated.size
    return Judgments(
        stated=stated,
        prob=np.asarray(scale.to_prob(stated), dtype=np.float64),
        correct=correct,
        line=np.arange(1, n + 1),
        item_id=np.array([f"q{i}" for i in range(n)], dtype=object),
        scale=scale,
    )


def one(
    shape: Shape, size: int, share: float, rng: np.random.Generator, seed: int
) -> tuple[bool, bool, float, float]:
    """One dataset: (covered, upper bound holds, width, population error rate)."""
    stated, correct = shape.draw(rng)
    rows = rows_of(stated, correct, shape.scale)
    accepted = stated >= shape.threshold
    truth = float(np.mean(~correct[accepted]))
    plan = review_plan(rows, shape.threshold, sample_size=size, seed=seed)
    keys = item_keys(rows)
    where = {k: i for i, k in enumerate(keys)}
    done = plan.audit[: int(round(share * len(plan.audit)))]
    labels = [
        Label(item=it.item, correct=bool(correct[where[it.item]]), reviewer="r", time=T0, kind="audit")
        for it in done
    ]
    est = accepted_error(rows, labels, shape.threshold, level=LEVEL)
    lo, hi = est.rate.ci
    assert lo is not None and hi is not None
    return lo <= truth <= hi, truth <= hi, hi - lo, truth


def coverage_table(datasets: int, seed: int) -> list[str]:
    lines = [
        f"{'shape':<12} {'labelled':>9} {'n':>4} {'coverage':>9} {'± MC se':>8} {'upper ok':>9} "
        f"{'width':>7} {'error':>7}"
    ]
    for shape in SHAPES:
        for share in (1.0, 0.7):
            for size in SIZES:
                if share < 1 and size not in (60, 200):
                    continue
                rng = np.random.default_rng([seed, SIZES.index(size), int(share * 10), SHAPES.index(shape)])
                res = np.array([one(shape, size, share, rng, seed * 100_000 + d) for d in range(datasets)])
                cov, up = res[:, 0].mean(), res[:, 1].mean()
                se = np.sqrt(cov * (1 - cov) / datasets)
                lines.append(
                    f"{shape.name:<12} {share:>9.0%} {size:>4} {cov:>9.1%} {se:>8.1%} {up:>9.1%} "
                    f"{res[:, 2].mean():>7.3f} {res[:, 3].mean():>7.2%}"
                )
    return lines


def kappa_table(datasets: int, seed: int) -> list[str]:
    p, agree = 0.7, 0.9
    q = p * agree + (1 - p) * (1 - agree)  # the reviewer's share of "right"
    pe = p * q + (1 - p) * (1 - q)
    kappa = (agree - pe) / (1 - pe)
    lines = [
        f"kappa: file right {p:.0%}, reviewer agrees {agree:.0%}: population kappa {kappa:.3f}",
        f"{'labelled':>9} {'coverage':>9} {'± MC se':>8} {'width':>7}",
    ]
    for n in (30, 100, 400):
        rng = np.random.default_rng([seed, n, 99])
        hits, widths = [], []
        for d in range(datasets):
            f = rng.random(n) < p
            h = np.where(rng.random(n) < agree, f, ~f)
            rows = Judgments(
                stated=np.full(n, 90.0),
                prob=np.full(n, 0.9),
                correct=f,
                line=np.arange(1, n + 1),
                item_id=np.array([f"q{i}" for i in range(n)], dtype=object),
                scale=S100,
            )
            a = agreement(
                rows,
                [Label(f"q{i}", bool(h[i]), reviewer="r", time=T0, kind="audit") for i in range(n)],
                reps=1000,
                seed=d,
            )
            lo, hi = a.kappa.ci
            if lo is None or hi is None:
                hits.append(False)
                continue
            hits.append(lo <= kappa <= hi)
            widths.append(hi - lo)
        c = float(np.mean(hits))
        lines.append(f"{n:>9} {c:>9.1%} {np.sqrt(c * (1 - c) / datasets):>8.1%} {np.mean(widths):>7.3f}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", type=int, default=500, help="datasets per design (default 500)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kappa-only", action="store_true", help="only the kappa interval's coverage")
    ap.add_argument("--no-kappa", action="store_true", help="skip the kappa interval's coverage")
    args = ap.parse_args()
    start = time.perf_counter()
    print(
        f"Audit sample: {LEVEL:.0%} Korn-Graubard interval of the error rate among accepted, "
        f"{args.datasets} datasets per design"
    )
    if not args.kappa_only:
        print("\n".join(coverage_table(args.datasets, args.seed)))
    if not args.no_kappa:
        print()
        print("\n".join(kappa_table(args.datasets, args.seed)))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
