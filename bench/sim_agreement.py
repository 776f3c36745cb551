"""Simulation: coverage of the reviewer-agreement intervals (issue 25).

Agreement (``--only agreement``): for each design (reviewers r = 2, 3, 5; population
agreement kappa = 0.3, 0.6, 0.9; prevalence of "right" 0.7; 50 and 200 items; with no
missing label and with each label missing, or unsure, at 20%), it draws ``--datasets``
label matrices and runs :func:`calib.labels.reviewers.matrix_agreement` (the engine of
``calib labels agreement``; ``--reps`` resamples, 95%), counting how often each interval
holds the population value. The model: each item's truth is right with probability 0.7;
each label is the truth with probability ``s``, else an independent draw with the same
0.7. Two labels of an item then agree beyond chance exactly when both are the truth,
so the population Fleiss kappa, Krippendorff alpha and (equal margins) Cohen kappa are
all ``s^2``, and the percent agreement is ``s^2 + (1 - s^2) (0.7^2 + 0.3^2)``. A clustered
design (``cluster``: 40 clusters of 5 items sharing a cluster effect on the truth) checks
the cluster bootstrap against the item bootstrap.

Reviewer error (``--only error``): a file of 2,000 accepted items (stated 92, 95 or 98:
three strata) whose true error rate is ``p`` (0.03 or 0.10); an audit sample of 200 of
them labelled by one reviewer, 80 of those by a second; each label drawn with a known
error: ``symmetric`` (each label wrong with probability ``e`` = 0.02, 0.05 or 0.10, the
model of :mod:`calib.labels.label_error`) or ``misses`` (a wrong answer is labelled
right with probability 0.3 or 0.6, a right one always right: the errors hide errors). It
runs :func:`calib.labels.label_error.accepted_error_bound` (95%) and counts how often the
misclassification-adjusted interval (symmetric model) and the worst-case interval (any
direction) hold the true error rate of the 2,000 items, and how often the interval of the
labels taken as truth (``accepted_error``) does.

Prints tables: coverage with its Monte Carlo standard error ``sqrt(c (1 - c) / datasets)``.

Run: ``nice -n 10 python bench/sim_agreement.py [--datasets 400] [--reps 1000] [--only SUBSTRING]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calib.labels import Label  # noqa: E402
from calib.labels.estimate import accepted_error  # noqa: E402
from calib.labels.label_error import accepted_error_bound  # noqa: E402
from calib.labels.reviewers import STATS, matrix_agreement  # noqa: E402
from calib.rows import Judgments  # noqa: E402
from calib.scale import Scale  # noqa: E402

PREVALENCE = 0.7
PE = PREVALENCE**2 + (1 - PREVALENCE) ** 2


def draw_matrix(rng: np.random.Generator, n: int, r: int, kappa: float, missing: float,
                clusters: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Labels of ``n`` items by ``r`` reviewers under the model of the module (``-1``
    missing), and the items' clusters (with ``clusters``: the truth's prevalence varies
    by cluster, Beta-distributed around 0.7, so items of a cluster are alike)."""
    s = np.sqrt(kappa)
    unit = None
    if clusters:
        unit = np.repeat(np.arange(clusters), n // clusters)
        p = rng.beta(PREVALENCE * 4, (1 - PREVALENCE) * 4, size=clusters)[unit]
    else:
        p = np.full(n, PREVALENCE)
    truth = rng.random(n) < p
    informed = rng.random((n, r)) < s
    noise = rng.random((n, r)) < p[:, None]
    m = np.where(informed, truth[:, None], noise).astype(np.int8)
    m[rng.random((n, r)) < missing] = -1
    return m, unit


def truths(kappa: float, r: int) -> dict[str, float | None]:
    return {"cohen_kappa": kappa if r == 2 else None, "fleiss_kappa": kappa, "krippendorff_alpha": kappa,
            "percent_agreement": kappa + (1 - kappa) * PE}


def truth_clustered(kappa: float, r: int, rng: np.random.Generator) -> dict[str, float | None]:
    """Population values of the clustered design, by one very large sample."""
    m, _ = draw_matrix(rng, 400_000, r, kappa, 0.0, clusters=80_000)
    st, _ = matrix_agreement(m, reps=0)
    return {k: (v.value if k != "cohen_kappa" or r == 2 else None) for k, v in st.items()}


def coverage_table(datasets: int, reps: int) -> None:
    print("\nAgreement intervals: coverage of the 95% Bayesian bootstrap intervals over items (clusters where named)")
    head = f"{'design':<38}" + "".join(f"{k:>20}" for k in STATS)
    print(head)
    print("-" * len(head))
    worst = 1.0
    rng0 = np.random.default_rng(2026)
    for n, clustered in ((50, False), (200, False), (200, True)):
        for r in (2, 3, 5):
            for kappa in (0.3, 0.6, 0.9):
                for missing in (0.0, 0.2):
                    if clustered and missing:
                        continue
                    truth = truth_clustered(kappa, r, rng0) if clustered else truths(kappa, r)
                    hits = {k: 0 for k in STATS}
                    given = {k: 0 for k in STATS}
                    rng = np.random.default_rng([n, r, int(kappa * 10), int(missing * 10), clustered])
                    for _ in range(datasets):
                        m, unit = draw_matrix(rng, n, r, kappa, missing, clusters=40 if clustered else None)
                        st, _ = matrix_agreement(m, unit, reps=reps, seed=int(rng.integers(2**31)))
                        for k in STATS:
                            t = truth[k]
                            if t is None or not st[k].has_interval:
                                continue
                            given[k] += 1
                            hits[k] += bool(st[k].contains(t))
                    name = f"n={n} r={r} kappa={kappa} miss={missing:.0%}" + (" cluster" if clustered else "")
                    cells = []
                    for k in STATS:
                        if truth[k] is None:
                            cells.append(f"{'-':>20}")
                            continue
                        c = hits[k] / max(given[k], 1)
                        se = np.sqrt(c * (1 - c) / max(given[k], 1))
                        if k in ("fleiss_kappa", "krippendorff_alpha"):
                            worst = min(worst, c)
                        cells.append(f"{c:>11.1%} ±{se:.1%} {given[k] / datasets:>3.0%}"[-20:].rjust(20))
                    print(f"{name:<38}" + "".join(cells), flush=True)
    print(f"(each cell: coverage ± Monte Carlo SE, and the share of datasets with an interval)\n"
          f"lowest coverage of Fleiss' kappa and Krippendorff's alpha: {worst:.1%}")


T0 = "2026-12-01T18:30:00Z"


def error_dataset(rng: np.random.Generator, p: float, model: str, rate: float, n: int = 2000, m: int = 200,
                  double: int = 80) -> tuple[Judgments, list[Label], float]:
    """Rows, labels and the true error rate of one dataset of the reviewer-error design."""
    stated = rng.choice([92.0, 95.0, 98.0], size=n)
    right = rng.random(n) >= p
    rows = Judgments(stated=stated, prob=stated / 100, correct=right.copy(), line=np.arange(1, n + 1),
                     item_id=np.array([f"q{i}" for i in range(n)], dtype=object), scale=Scale(0.0, 100.0, "0-100"))
    sample = rng.choice(n, size=m, replace=False)
    labels = []
    for j, i in enumerate(sample):
        for who in ("ann", "bob") if j < double else ("ann",):
            if model == "symmetric":
                said = right[i] != (rng.random() < rate)
            else:  # misses: a wrong answer passes as right with probability rate
                said = True if right[i] else rng.random() < rate
            labels.append(Label(item=f"q{i}", correct=bool(said), reviewer=who, time=T0, kind="audit"))
    return rows, labels, float(1 - right.mean())


def error_table(datasets: int, reps: int) -> None:
    print("\nReviewer error: how often the bounds on the error among accepted hold the true rate (95%)")
    head = (f"{'labels drawn':<22}{'p':>6}{'e (mean)':>10}{'labels as truth':>17}{'adjusted':>17}{'worst case':>17}"
            f"{'holds 0.15':>12}")
    print(head)
    print("-" * len(head))
    worst_sym = 1.0
    for model, rates in (("symmetric", (0.02, 0.05, 0.10)), ("misses", (0.3, 0.6))):
        for p in (0.03, 0.10):
            for rate in rates:
                rng = np.random.default_rng([int(p * 100), int(rate * 100), model == "misses"])
                hit = {"naive": 0, "adjusted": 0, "worst": 0}
                given = {"naive": 0, "adjusted": 0, "worst": 0}
                est, holds = [], 0
                for _ in range(datasets):
                    rows, labels, truth = error_dataset(rng, p, model, rate)
                    naive = accepted_error(rows, labels, 90.0)
                    b = accepted_error_bound(rows, labels, 90.0, target=0.15, reps=reps,
                                             seed=int(rng.integers(2**31)))
                    for key, ci in (("naive", naive.rate.ci), ("adjusted", b.adjusted.ci),
                                    ("worst", b.worst_ci)):
                        if ci is None or ci[0] is None or ci[1] is None:
                            continue
                        given[key] += 1
                        hit[key] += ci[0] <= truth <= ci[1]
                    if b.reviewers.error.value is not None:
                        est.append(b.reviewers.error.value)
                    holds += bool(b.holds)
                cells = []
                for key in ("naive", "adjusted", "worst"):
                    c = hit[key] / max(given[key], 1)
                    se = np.sqrt(c * (1 - c) / max(given[key], 1))
                    cells.append(f"{c:>10.1%} ±{se:.1%}")
                if model == "symmetric":
                    worst_sym = min(worst_sym, hit["adjusted"] / max(given["adjusted"], 1),
                                    hit["worst"] / max(given["worst"], 1))
                name = f"{model} {rate:g}"
                print(f"{name:<22}{p:>6.2f}{np.mean(est):>10.3f}" + "".join(f"{c:>17}" for c in cells)
                      + f"{holds / datasets:>12.0%}", flush=True)
    print("(coverage ± Monte Carlo SE; 'e (mean)': the mean estimated reviewer error; 'holds 0.15': share of "
          "datasets where the certificate 'at most 15%' still holds at the upper end of the reviewers' error)\n"
          f"lowest coverage of the adjusted and worst-case bounds under symmetric errors: {worst_sym:.1%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", type=int, default=400)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    t0 = time.perf_counter()
    if a.only in "agreement":
        coverage_table(a.datasets, a.reps)
    if a.only in "error":
        error_table(a.datasets, a.reps)
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
