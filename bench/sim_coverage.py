"""Simulation: coverage of every headline interval of ``calib audit``.

For each design (a known population of stated values and true hit rates) it draws
``--datasets`` datasets, runs the audit's bootstrap (:func:`calib.bootstrap.bootstrap`,
``--reps`` resamples) and the routing intervals (:func:`calib.routing.route` at the
threshold of probability 0.8), and counts how often each 95% interval contains the
population value:

- accuracy, mean confidence, Brier score, AUROC: population values in closed form
  (discrete judges) or by numerical integration on a 200,000-point grid (continuous);
- the ECE (``ece_ci``, :func:`calib.bootstrap.ece_interval`): for a discrete judge with
  per-value bins ``sum_v P(v) |v - pi(v)|``; with B bins ``sum_b |E[(p - pi(p)) 1{p in b}]|``
  (equal-width bins, or equal-mass bins at the population's quantiles), the bins the
  audit's "auto" scheme picks for the design (:func:`calib.metrics.choose_scheme`) unless
  the design names one;
- the accuracy among accepted answers at threshold 0.8 (``routing accuracy``).

Prints one table: coverage per design and interval, with its Monte Carlo standard error
``sqrt(c (1 - c) / datasets)``, and (for the ECE) the share of datasets whose old-style
percentile interval contained the truth. Designs: 7 stated values near-calibrated (true
ECE 0.010), mildly (0.040) and clearly (0.150) miscalibrated; 41 stated values
near-calibrated and mildly miscalibrated; a continuous Beta(5, 2) score, near-calibrated
and overconfident (P(right) = p^1.4), in width and mass bins; n from 200 to 5,000; and
(``--only "small n"``) 2 values (60 meaning 55%, 90 meaning 85%, half each) and 3 values
(50, 70, 90 each meaning 5 points less; 30/40/30%) at n = 30, 50 and 100, where the
audit warns that its percentile intervals run narrow.

Kappa (``--only kappa``): the interval of Cohen's kappa between the file's outcome and a
reviewer (:func:`calib.labels.agreement.kappa_interval`) at 30 and 50 labels, one per
item, for 2x2 populations given by the two raters' shares right and the population
kappa; beside it, the percentile bootstrap used before (resamples where kappa is
undefined dropped, no interval when over 10% are): how often an interval is given and
how often it covers.

Run: ``python bench/sim_coverage.py [--datasets 200] [--reps 500] [--only SUBSTRING]``
(about 10 minutes for every design on the 2-core machine at the defaults).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calib import metrics as m  # noqa: E402
from calib import routing  # noqa: E402
from calib.bootstrap import bootstrap, percentile_interval  # noqa: E402
from calib.labels.agreement import _kappa_cells, kappa_interval  # noqa: E402
from calib.rows import Judgments  # noqa: E402
from calib.scale import Scale  # noqa: E402
from calib.table import from_counts, from_judgments  # noqa: E402

PCT = Scale(0, 100, "0-100")
PROB = Scale(0.0, 1.0, "0-1")
THRESHOLD = 0.8
BINS = 10
FIGURES = ("accuracy", "mean_confidence", "brier", "auroc", "ece", "routing_accuracy")


@dataclass(frozen=True)
class Design:
    name: str
    n: int
    values: np.ndarray | None = None  # discrete: probabilities, their shares, true hit rates
    share: np.ndarray | None = None
    hit: np.ndarray | None = None
    truth_of: object = None  # continuous: pi(p); the score is Beta(5, 2)
    scheme: str = "auto"


def discrete_truth(d: Design, scheme: str) -> dict[str, float]:
    v, w, pi = d.values, d.share, d.hit
    assert v is not None and w is not None and pi is not None
    right, wrong = w * pi, w * (1 - pi)
    above = np.cumsum(right[::-1])[::-1] - right  # right answers stated higher
    acc = v >= THRESHOLD - 1e-12
    if scheme == "values":
        ece = float(np.sum(w * np.abs(v - pi)))
    else:  # width bins of the population (mass bins are not used on discrete designs)
        ids = np.maximum(np.ceil(np.round(v * BINS, 9)).astype(int) - 1, 0)
        ece = float(sum(abs(np.sum((w * (v - pi))[ids == b])) for b in np.unique(ids)))
    return {
        "accuracy": float(right.sum()), "mean_confidence": float(np.sum(w * v)),
        "brier": float(np.sum(right * (1 - v) ** 2 + wrong * v**2)),
        "auroc": float(np.sum(wrong * (above + right / 2)) / (right.sum() * wrong.sum())),
        "ece": ece, "routing_accuracy": float(right[acc].sum() / w[acc].sum()),
    }


def continuous_truth(d: Design, scheme: str) -> dict[str, float]:
    """Population figures of p ~ Beta(5, 2), P(right | p) = pi(p), on a fine grid."""
    grid = (np.arange(200_000) + 0.5) / 200_000
    w = stats.beta.pdf(grid, 5, 2)
    w /= w.sum()
    pi = d.truth_of(grid)  # type: ignore[operator]
    right, wrong = w * pi, w * (1 - pi)
    above = np.cumsum(right[::-1])[::-1] - right
    if scheme == "mass":
        edges = stats.beta.ppf(np.arange(1, BINS) / BINS, 5, 2)
        ids = np.searchsorted(edges, grid, side="left")
    else:
        ids = np.clip(np.ceil(grid * BINS).astype(int) - 1, 0, BINS - 1)
    gap = np.bincount(ids, weights=w * (grid - pi), minlength=BINS)
    acc = grid >= THRESHOLD
    return {
        "accuracy": float(right.sum()), "mean_confidence": float(np.sum(w * grid)),
        "brier": float(np.sum(right * (1 - grid) ** 2 + wrong * grid**2)),
        "auroc": float(np.sum(wrong * (above + right / 2)) / (right.sum() * wrong.sum())),
        "ece": float(np.abs(gap).sum()), "routing_accuracy": float(right[acc].sum() / w[acc].sum()),
    }


def draw_table(d: Design, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    if d.values is not None:
        n = rng.multinomial(d.n, d.share)
        return from_counts(d.values * 100, n, rng.binomial(n, d.hit), scale=PCT)
    p = np.round(rng.beta(5, 2, d.n), 7)
    y = rng.random(d.n) < d.truth_of(p)  # type: ignore[operator]
    return from_judgments(Judgments(stated=p, prob=p, correct=y, line=np.arange(d.n),
                                    item_id=np.full(d.n, ""), scale=PROB))


def designs() -> list[Design]:
    v7 = np.linspace(0.4, 1.0, 7)
    s7 = np.array([.05, .05, .1, .15, .25, .25, .15])
    v41 = np.linspace(0.6, 1.0, 41)
    s41 = np.linspace(1, 3, 41) / np.linspace(1, 3, 41).sum()
    out: list[Design] = []
    for n in (200, 500, 2000, 5000):
        out.append(Design("7 values, near-calibrated (ECE 0.010)", n, v7, s7, v7 - 0.01))
        out.append(Design("7 values, mildly miscalibrated (0.040)", n, v7, s7, v7 - 0.04))
    for n in (500, 5000):
        out.append(Design("7 values, clearly miscalibrated (0.150)", n, v7, s7, v7 - 0.15))
    for n in (500, 2000, 5000):
        out.append(Design("41 values, near-calibrated (0.010)", n, v41, s41, v41 - 0.01))
        out.append(Design("41 values, mildly miscalibrated (0.040)", n, v41, s41, v41 - 0.04))
    for n in (500, 5000):
        for scheme in ("width", "mass"):
            out.append(Design(f"continuous, near-calibrated, {scheme} bins", n,
                              truth_of=lambda p: np.maximum(p - 0.01, 0.0), scheme=scheme))
            out.append(Design(f"continuous, p^1.4 overconfident, {scheme} bins", n,
                              truth_of=lambda p: p**1.4, scheme=scheme))
    v2, v3 = np.array([0.6, 0.9]), np.array([0.5, 0.7, 0.9])
    for n in (30, 50, 100):  # issue 22: percentile intervals at small n with few stated values
        out.append(Design("small n, 2 values", n, v2, np.array([.5, .5]), np.array([.55, .85])))
        out.append(Design("small n, 3 values", n, v3, np.array([.3, .4, .3]), v3 - 0.05))
    return out


def run(d: Design, datasets: int, reps: int, seed: int) -> tuple[dict[str, float], float, float, str]:
    rng = np.random.default_rng(seed)
    hits = dict.fromkeys(FIGURES, 0)
    old = 0
    scheme_used = ""
    truth: dict[str, float] = {}
    for i in range(datasets):
        t = draw_table(d, rng)
        scheme = m.resolve_scheme(t, d.scheme)
        if not truth or scheme != scheme_used:  # the auto scheme is fixed by the design's n
            truth = (discrete_truth if d.values is not None else continuous_truth)(d, scheme)
            scheme_used = scheme
        b = bootstrap(t, scheme=scheme, reps=reps, seed=i)
        cis = {f: b.ci(f) for f in FIGURES[:-1]}
        basis = routing.basis(t, reps=reps, seed=i)
        cis["routing_accuracy"] = tuple(routing.route(basis, float(t.scale.to_stated(THRESHOLD))).estimates[
            "accuracy_accepted"].ci)  # type: ignore[assignment]
        for f in FIGURES:
            lo, hi = cis[f]
            hits[f] += lo is not None and hi is not None and lo - 1e-12 <= truth[f] <= hi + 1e-12
        lo, hi = percentile_interval(b.samples["ece"], b.level)
        old += lo is not None and hi is not None and lo <= truth["ece"] <= hi
    return {f: hits[f] / datasets for f in FIGURES}, old / datasets, truth["ece"], scheme_used


KAPPA_DESIGNS = ((0.8, 0.8, 0.6), (0.9, 0.85, 0.5), (0.7, 0.7, 0.8), (0.85, 0.8, 0.3), (0.9, 0.9, 0.7),
                 (0.95, 0.9, 0.6), (0.6, 0.6, 0.4))


def kappa_cells(a: float, b: float, kappa: float) -> np.ndarray:
    """Shares (both right, file right only, reviewer right only, both wrong) of raters right
    ``a`` and ``b`` of the time with Cohen's kappa ``kappa``: ``p11 = ab + kappa (1 - p_e) / 2``."""
    pe = a * b + (1 - a) * (1 - b)
    p11 = a * b + kappa * (1 - pe) / 2
    return np.array([p11, a - p11, b - p11, 1 - a - b + p11])


def kappa_table(datasets: int, reps: int, seed: int) -> None:
    print(f"\nkappa, 95% intervals, {datasets} datasets: % given and % covering when given")
    print("| file right | reviewer right | kappa | n | given | covers | old: given | old: covers |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for j, (a, b, kappa) in enumerate(KAPPA_DESIGNS):
        for n in (30, 50):
            rng = np.random.default_rng(seed + 100 * j + n)
            got, cov, old_got, old_cov = 0, 0, 0, 0
            for i in range(datasets):
                c = rng.multinomial(n, kappa_cells(a, b, kappa)).astype(np.float64)
                if not np.isfinite(_kappa_cells(c[None, :], 2)[0]):
                    continue  # kappa undefined: no interval either way
                live = c > 0
                lo, hi = kappa_interval(np.eye(4)[live], c[live], reps, i, 0.95)
                got += lo is not None
                cov += lo is not None and lo <= kappa <= hi
                draws = rng.multinomial(n, c / n, size=reps).astype(np.float64)
                lo, hi = percentile_interval(_kappa_cells(draws, 2), 0.95)
                old_got += lo is not None
                old_cov += lo is not None and lo <= kappa <= hi
            print(f"| {a:g} | {b:g} | {kappa:g} | {n} | {100 * got / datasets:.1f} | "
                  f"{100 * cov / max(got, 1):.1f} | {100 * old_got / datasets:.1f} | "
                  f"{100 * old_cov / max(old_got, 1):.1f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", type=int, default=200)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="run only designs whose name contains this")
    args = ap.parse_args()
    se = np.sqrt(0.95 * 0.05 / args.datasets)
    print(f"coverage of 95% intervals, {args.datasets} datasets per design, {args.reps} resamples; "
          f"Monte Carlo s.e. at 95%: {se:.3f}")
    head = "".join(f"{f:>17}" for f in ("accuracy", "mean conf", "Brier", "AUROC", "ECE", "routing acc"))
    print(f"{'design':<48}{'n':>6}{'bins':>8}{'true ECE':>9}{head}{'old ECE':>9}")
    t0 = time.perf_counter()
    if args.only == "kappa":
        kappa_table(args.datasets, args.reps, args.seed)
        print(f"({time.perf_counter() - t0:.0f} s)")
        return
    for j, d in enumerate(designs()):
        if args.only and args.only not in d.name:
            continue
        cov, old, ece, scheme = run(d, args.datasets, args.reps, args.seed + 1000 * j)
        cells = "".join(f"{100 * cov[f]:>11.1f} ± {100 * np.sqrt(cov[f] * (1 - cov[f]) / args.datasets):3.1f}"
                        for f in FIGURES)
        print(f"{d.name:<48}{d.n:>6}{scheme:>8}{ece:>9.3f}{cells}{100 * old:>8.1f}%", flush=True)
    if not args.only:
        kappa_table(args.datasets, args.reps, args.seed)
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
