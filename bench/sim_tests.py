"""Type-I error and power of the audit's tests, by simulation (prints tables; not a test).

    python3 bench/sim_tests.py                  # 200 datasets per cell, a few minutes
    python3 bench/sim_tests.py --datasets 1000  # the manual's figures (docs/statistics.md)

Type I: datasets drawn perfectly calibrated (each answer right with exactly its stated
probability) in five shapes LLM judges produce, at n = 50 ... 20,000; for every test
the verdict uses (and Spiegelhalter's Z, reported only) the share of datasets rejected
at 5%, with its Monte Carlo standard error ``sqrt(r (1 - r) / datasets)``; ``verdict``
is the audit's decision (:func:`calib.audit.miscalibrated`, Bonferroni over the three
calibration tests at 5% overall). A valid 5% test reads 5% +- 2 standard errors.

- ``softmax``: continuous confidences near 1, ``p = 1 - 10^-U``, ``U ~ Uniform[1, 5]``
  (what option log-probs give);
- ``honest100``: 30% of answers stated 100 and always right, the rest an integer
  0-99 judge (values ``round(100 Beta(5, 2))``), calibrated;
- ``zero_half_one``: values 0, 0.5, 1 in equal shares (0 always wrong, 1 always right);
- ``beta``: continuous ``p ~ Beta(5, 2)``;
- ``seven``: values 40, 60, 70, 80, 90, 95, 100 (shares 5, 10, 10, 20, 25, 15, 15%),
  100 always right.

``brier_vs_constant`` tests "the stated confidence has the Brier score of the constant
base rate", not calibration; its null is simulated separately (``brier_null``: half the
answers right 95% of the time and stated 0.95, half right 45% and stated 0.8036, so
that both Brier scores are 0.21); its direction where the stated confidence is better
(``brier_skewed``: 80 meaning 55% and 99 meaning 99%, 41% and 59% of the answers;
Brier 0.136 vs the constant's 0.156), where Johnson's correction used before named the
constant.

Power: the blind spots of Spiegelhalter's Z at n = 500 and 2,000 (all stated at 100
with 70% right, which the verdict's tests reject with p = 0: a wrong answer at 100 is
impossible under calibration; 90 meaning 70% and 10 meaning 30%, half the answers each,
symmetric overconfidence, which calibration-in-the-large cannot see; 90 meaning 70%
with 60 meaning 95%, which cancel in Z) and near-1 softmax confidences read one notch
too sure (true ``1 - p`` three times the stated).

Datasets are count tables built directly (:func:`calib.table.from_counts` for stated
values, :func:`calib.table.from_judgments` for continuous ones); each test's Monte Carlo
fallback runs with a different seed per dataset.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calib import metrics as m  # noqa: E402
from calib.audit import miscalibrated  # noqa: E402
from calib.rows import Judgments  # noqa: E402
from calib.scale import PROBABILITY, Scale  # noqa: E402
from calib.table import CountTable, from_counts, from_judgments  # noqa: E402

S100 = Scale(0.0, 100.0, "0-100")
ALPHA = 0.05
TESTS = ("calibration_in_the_large", "goodness_of_fit", "cox_lr", "spiegelhalter")
SHORT = {"calibration_in_the_large": "citl", "goodness_of_fit": "gof", "cox_lr": "cox", "spiegelhalter": "spieg",
         "brier_vs_constant": "brier", "verdict": "verdict"}
SIZES = (50, 500, 5000, 20000)
SEVEN = (np.array([40.0, 60, 70, 80, 90, 95, 100]), np.array([.05, .10, .10, .20, .25, .15, .15]))


def continuous(p: np.ndarray, y: np.ndarray) -> CountTable:
    return from_judgments(Judgments(stated=p, prob=p, correct=y, line=np.arange(1, p.size + 1),
                                    item_id=np.full(p.size, ""), scale=PROBABILITY))


def stated(v: np.ndarray, truth: np.ndarray, rng: np.random.Generator, scale: Scale = S100) -> CountTable:
    """Count table of stated values ``v`` whose answers are right with probability ``truth``."""
    vals, inv = np.unique(v, return_inverse=True)
    n = np.bincount(inv)
    t = np.bincount(inv, weights=truth) / n  # one truth per value in every design here
    return from_counts(vals, n, rng.binomial(n, t), scale=scale)


def draw(shape: str, n: int, rng: np.random.Generator) -> CountTable:
    if shape == "softmax":
        p = 1 - 10.0 ** -rng.uniform(1, 5, n)
        return continuous(p, rng.random(n) < p)
    if shape == "beta":
        p = rng.beta(5, 2, n)
        return continuous(p, rng.random(n) < p)
    if shape == "honest100":
        top = rng.random(n) < 0.3
        v = np.where(top, 100.0, np.minimum(np.rint(100 * rng.beta(5, 2, n)), 99.0))
        return stated(v, v / 100, rng)
    if shape == "zero_half_one":
        v = rng.choice([0.0, 0.5, 1.0], n)
        return stated(v, v, rng, PROBABILITY)
    if shape == "seven":
        v = rng.choice(SEVEN[0], n, p=SEVEN[1])
        return stated(v, v / 100, rng)
    if shape == "brier_null":
        a = rng.binomial(n, 0.5)
        cnt = np.array([n - a, a])
        return from_counts(np.array([0.8036, 0.95]), cnt, rng.binomial(cnt, [0.45, 0.95]), scale=PROBABILITY)
    if shape == "brier_skewed":  # issue 22: 80 meaning 55%, 99 meaning 99%; the stated Brier is lower
        a = rng.binomial(n, 0.59)
        cnt = np.array([n - a, a])
        return from_counts(np.array([80.0, 99.0]), cnt, rng.binomial(cnt, [0.55, 0.99]), scale=S100)
    if shape == "all100_70":
        return from_counts(np.array([100.0]), np.array([n]), np.array([rng.binomial(n, 0.7)]), scale=S100)
    if shape == "symmetric":  # half the answers at each value, so the mean stated equals the hit rate
        cnt = np.array([n // 2, n - n // 2])
        return from_counts(np.array([10.0, 90.0]), cnt, rng.binomial(cnt, [0.3, 0.7]), scale=S100)
    if shape == "cancelling":  # shares for which Spiegelhalter's numerator is 0 in expectation
        cnt = np.array([round(n * 1600 / 2300), n - round(n * 1600 / 2300)])
        return from_counts(np.array([60.0, 90.0]), cnt, rng.binomial(cnt, [0.95, 0.7]), scale=S100)
    if shape == "softmax_too_sure":
        q = 10.0 ** -rng.uniform(1, 5, n)
        return continuous(1 - q, rng.random(n) < 1 - np.minimum(3 * q, 1))
    raise ValueError(shape)


def run_tests(t: CountTable, seed: int) -> dict[str, m.Test]:
    return {
        "calibration_in_the_large": m.calibration_in_the_large(t, seed=seed),
        "goodness_of_fit": m.goodness_of_fit(t, seed=seed),
        "cox_lr": m.cox(t, seed=seed).test,
        "spiegelhalter": m.spiegelhalter(t, seed=seed),
        "brier_vs_constant": m.brier_vs_constant(t),
    }


def rates(shape: str, n: int, datasets: int, seed: int, names: tuple[str, ...]) -> dict[str, tuple[float, int]]:
    """Share of datasets each test rejects at ALPHA (over those where it is defined)."""
    rng = np.random.default_rng(seed)
    hits = {k: 0 for k in names}
    defined = {k: 0 for k in names}
    for i in range(datasets):
        t = draw(shape, n, rng)
        tests = run_tests(t, seed=seed * 100_003 + i)
        for k in names:
            r = miscalibrated(tests, 1 - ALPHA) if k == "verdict" else tests[k].rejects(ALPHA)
            if r is not None:
                defined[k] += 1
                hits[k] += int(r)
    return {k: (hits[k] / defined[k] if defined[k] else math.nan, defined[k]) for k in names}


def direction(n: int, datasets: int) -> None:
    """Which forecast the paired Brier test names at 5% where the stated confidence's
    population Brier score (0.136) is lower than the constant's (0.156): every
    "constant" is a verdict pointing the wrong way."""
    rng = np.random.default_rng(n)
    said = {"stated": 0, "constant": 0, "neither": 0}
    for _ in range(datasets):
        w = m.brier_winner(m.brier_vs_constant(draw("brier_skewed", n, rng)), ALPHA)
        said[w or "neither"] += 1
    print(f"| brier_skewed | {n:,} | " + " | ".join(f"{100 * said[k] / datasets:5.1f}" for k in said) + " |",
          flush=True)


def cell(r: float, d: int) -> str:
    if d == 0 or math.isnan(r):
        return f"{'n/a':>13}"
    return f"{100 * r:5.1f} ± {100 * math.sqrt(max(r * (1 - r), 1e-12) / d):4.1f}"


def table(title: str, shapes: tuple[str, ...], sizes: tuple[int, ...], names: tuple[str, ...], datasets: int) -> None:
    print(f"\n{title} (% of {datasets} datasets rejected at 5%, ± Monte Carlo SE)")
    print("| shape | n | " + " | ".join(SHORT[k] for k in names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for s in shapes:
        for n in sizes:
            r = rates(s, n, datasets, seed=zlib.crc32(f"{s}/{n}".encode()) % 10_000, names=names)
            print(f"| {s} | {n:,} | " + " | ".join(cell(*r[k]) for k in names) + " |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=int, default=200, help="datasets per shape and size (default 200)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated n (default 50,...,20000)")
    ap.add_argument("--shapes", default="softmax,honest100,zero_half_one,beta,seven")
    ap.add_argument("--draws", type=int, default=499,
                    help="draws of each Monte Carlo p-value (default 499; the audit uses 4,000, Cox 1,000)")
    ap.add_argument("--only", choices=("type1", "brier", "power"), default=None, help="print one table only")
    args = ap.parse_args()
    # a Monte Carlo p-value is exact in level for any number of draws: fewer keep the run short
    m.NULL_DRAWS = args.draws
    m.COX_DRAWS = min(m.COX_DRAWS, args.draws)
    sizes = tuple(int(x) for x in args.sizes.split(","))
    shapes = tuple(args.shapes.split(","))
    t0 = time.perf_counter()
    if args.only in (None, "type1"):
        table("Type-I error on calibrated data", shapes, sizes, (*TESTS, "verdict"), args.datasets)
    if args.only in (None, "brier"):
        table("Type-I error of the paired Brier test (its own null: equal Brier scores)", ("brier_null",),
              sizes, ("brier_vs_constant",), args.datasets)
        print(f"\nDirection of the paired Brier test where the stated confidence is better "
              f"(% of {args.datasets} datasets naming each at 5%)")
        print("| shape | n | stated | constant (wrong way) | neither |\n|---|---:|---:|---:|---:|")
        for n in (50, 200, 1000):
            direction(n, args.datasets)
    if args.only in (None, "power"):
        table("Power in the blind spots of Spiegelhalter's Z", ("all100_70", "symmetric", "cancelling",
              "softmax_too_sure"), (500, 2000), (*TESTS, "verdict"), args.datasets)
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
