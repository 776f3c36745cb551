"""Drift between runs, measured by simulation (issue 12, point 4): the manual's table (docs/drift.md).

(a) No drift: two runs of one unchanged judge (paired: the same items judged twice;
unpaired: fresh items), a judge stating 5 values of 0-100 and a continuous one (0-1),
n = 500 and 5,000 per run: the share of pairs where :func:`calib.drift.drift` reports
drift at alpha = 5% (Holm over the headline and per-value tests). It must be at most 5%
within Monte Carlo error (2 standard errors).
(b) Power: the hit rate of the stated 90 lowered by 15 points in the new run: the share
of pairs where drift is reported and 90 is named as moved, and where another value is
named (a false naming).
(c) The EWMA charts (calib.drift.series), on accuracy (two-sided) and on the error among
accepted (upper side): 1 or 5 reference runs then 20 in-control runs of n items: the
share of sequences with any alarm (false alarm); then a shift (accuracy -5 points, error
among accepted +5 points, from the 11th run after the reference on): the share detected
by run 20 and the median delay (runs from the shift to the alarm, 0 = at the first
shifted run).
(d) The CI gate (issue 22): two runs of an unchanged judge (fresh items; a quarter stated 90
with population error e among them, the rest stated 70), threshold 90, target 5%, confidence
95%: the share of pairs where ``calib drift --fail-on-drift`` fails: before, on drift *or* an
uncertified threshold; now (:func:`calib.cli.drift.exit_code`) on drift only (exit 1), and
the share where the new run does not certify the threshold (exit 4 with
``--fail-on-uncertified``: a bound, not a test of change).
(e) Paired runs with clusters (issue 22): the same items judged twice, in clusters of m items
whose hit rate moves by N(0, sd) afresh in each run; drift reported at alpha = 5%: before,
the pairing dropped the clusters (reproduced here by giving the rows without them: the
old code's units and tests exactly); now the clusters are the paired units.
(f) The series' upper chart in control (issue 22): (1) a threshold recommended on run 1
(target 10%) then 20 in-control runs: before, run 1 was also the error chart's reference
(the old chart, normal score, replicated here by :func:`old_chart`); now the reference is
run 2 and the score binomial; beside it the threshold fixed in advance. (2) About 10 errors
per run (100 accepted at 10%, 50 at 20%; 10,000 at 10% for many): the normal score
(before) against the binomial mid-p score (now), 20 runs after 1 or 5 reference runs.

Run: ``python3 bench/sim_drift.py [--sims N] [--reps R]`` ((a)-(c); the manual's table (docs/drift.md) is
``--sims 200 --reps 200``, about 30 minutes on 2 busy shared cores); ``--only gate|clusters|series``
runs (d), (e) or (f) alone (a few minutes each at ``--sims 200 --reps 200``).
``--write DIR`` writes the manual's example runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calib.cli.drift import exit_code  # noqa: E402
from calib.drift import drift, ewma_chart  # noqa: E402
from calib.errors import CalibError  # noqa: E402
from calib.rows import Judgments  # noqa: E402
from calib.scale import PROBABILITY, Scale  # noqa: E402

PERCENT = Scale(0.0, 100.0, "0-100")
VALUES = np.array([60.0, 70.0, 80.0, 90.0, 95.0])
USE = np.array([0.05, 0.10, 0.20, 0.40, 0.25])
HIT = np.array([0.55, 0.65, 0.75, 0.82, 0.88])


def items(n: int, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Latent items: a base stated value (index, or probability) and a probability of being right."""
    if kind == "values":
        b = rng.choice(VALUES.size, size=n, p=USE)
        return b, np.clip(HIT[b] + rng.normal(0, 0.1, n), 0.02, 0.98)
    p = rng.beta(8, 2, n)
    return p, np.clip(p - 0.05 + rng.normal(0, 0.05, n), 0.02, 0.98)


def run(base: np.ndarray, q: np.ndarray, kind: str, rng: np.random.Generator, shift: float = 0.0) -> Judgments:
    """One run over the items: the stated value is the item's base value 80% of the time
    (else any value); with ``shift`` the rows stated 90 are right ``shift`` less often."""
    n = q.size
    if kind == "values":
        b = np.where(rng.random(n) < 0.8, base, rng.choice(VALUES.size, size=n, p=USE))
        stated, scale = VALUES[b], PERCENT
        prob = stated / 100
        q = np.clip(q - shift * (stated == 90.0), 0, 1)
    else:
        stated = prob = np.clip(base + rng.normal(0, 0.03, n), 0.0, 1.0)
        scale = PROBABILITY
    correct = rng.random(n) < q
    return Judgments(stated=stated, prob=prob, correct=correct, line=np.arange(1, n + 1),
                     item_id=np.array([f"q{i}" for i in range(n)]), scale=scale)


def pair(n: int, kind: str, paired: bool, rng: np.random.Generator, shift: float = 0.0) -> tuple[Judgments, Judgments]:
    base, q = items(n, kind, rng)
    old = run(base, q, kind, rng)
    if not paired:
        base, q = items(n, kind, rng)
    return old, run(base, q, kind, rng, shift)


def null_and_power(sims: int, reps: int, seed: int) -> list[tuple]:
    out = []
    for kind in ("values", "continuous"):
        for paired in (True, False):
            for n in (500, 5000):
                for shift in ((0.0, 0.15) if kind == "values" else (0.0,)):
                    rng = np.random.default_rng([seed, n, paired, int(100 * shift), kind == "values"])
                    hits = named = wrong = 0
                    t0 = time.perf_counter()
                    for s in range(sims):
                        a, b = pair(n, kind, paired, rng, shift)
                        d = drift(a, b, reps=reps, seed=s, pairing="paired" if paired else "unpaired")
                        hits += d.drift
                        moved = {v.value for v in d.moved}
                        named += 90.0 in moved
                        wrong += bool(moved - {90.0})
                    out.append((kind, "paired" if paired else "unpaired", n, shift, sims, hits / sims,
                                named / sims, wrong / sims, time.perf_counter() - t0))
                    print(_row(out[-1]), flush=True)
    return out


def _row(r: tuple) -> str:
    kind, pairing, n, shift, sims, rate, named, wrong, secs = r
    se = np.sqrt(0.05 * 0.95 / sims)
    what = "no drift" if shift == 0 else "90: -15 pts"
    ok = ("ok" if rate <= 0.05 + 2 * se else "HIGH") if shift == 0 else ""
    return (f"| {kind:10} | {pairing:8} | {n:>5,} | {what:11} | {sims:>4} | {100 * rate:5.1f}% {ok:4} | "
            f"{100 * named:5.1f}% | {100 * wrong:4.1f}% | {secs:5.0f}s |")


def chart(sims: int, n: int, seed: int, reference: int = 1, shift: float = -0.05,
          p0: float = 0.8, side: str = "both") -> tuple[float, float, float]:
    """False-alarm share over 20 in-control runs after ``reference`` reference runs; detection
    share and median delay of a shift at the 11th run after the reference."""
    rng = np.random.default_rng([seed, n, reference])
    false = detected = 0
    delays = []
    total, at = reference + 20, reference + 10
    for _ in range(sims):
        ns = np.full(total, n)
        x = rng.binomial(n, p0, total) / n
        false += ewma_chart(x, ns, reference=reference, side=side).alarm is not None
        p = np.where(np.arange(total) >= at, p0 + shift, p0)
        y = rng.binomial(n, p) / n
        c = ewma_chart(y, ns, reference=reference, side=side)
        if c.alarm is not None and c.alarm >= at:
            detected += 1
            delays.append(c.alarm - at)
    return false / sims, detected / sims, float(np.median(delays)) if delays else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=200)
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--chart-sims", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--only-chart", action="store_true", help="(c) only")
    ap.add_argument("--only", choices=("gate", "clusters", "series"),
                    help="one part only: gate = (d), clusters = (e), series = (f)")
    ap.add_argument("--write", metavar="DIR", help="only write the manual's example runs into DIR")
    a = ap.parse_args()
    if a.write:
        write_examples(Path(a.write))
        return
    if a.only == "gate":
        gate(a.sims, a.reps, a.seed)
        return
    if a.only == "series":
        series_rows(a.sims, a.chart_sims, a.seed)
        return
    if a.only == "clusters":
        paired_clusters(a.sims, a.reps, a.seed)
        return
    if not a.only_chart:
        two_runs(a)
    print("\n(c) EWMA charts (lambda 0.2, L 3), 20 runs after the reference run(s): accuracy 80% (two-sided), "
          "shift -5 points; error among accepted 18% (upper side), shift +5 points; from the 11th run after "
          "the reference")
    print("| chart | n per run | reference runs | sequences | false alarm (20 in-control runs) "
          "| shift detected by run 20 | median delay (runs) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for what, p0, shift, side, sizes in (("accuracy", 0.8, -0.05, "both", (500, 2000)),
                                         ("error among accepted", 0.18, 0.05, "upper", (300, 1300))):
        for n in sizes:
            for ref in (1, 5):
                f, d, m = chart(a.chart_sims, n, a.seed, ref, shift, p0, side)
                print(f"| {what} | {n:,} | {ref} | {a.chart_sims:,} | {100 * f:.1f}% | {100 * d:.1f}% | {m:g} |",
                      flush=True)


def gate(sims: int, reps: int, seed: int, n: int = 2000) -> None:
    """(d): how often the CI gate fails two runs of an unchanged judge (see the module docstring)."""
    print("\n(d) --fail-on-drift on an unchanged judge, n = 2,000 per run (fresh items), threshold 90, target 5%, "
          f"confidence 95%, reps {reps}")
    print("| population error at 90 | sims | exit 1 before (drift or uncertified) | exit 1 now (drift) "
          "| exit 4 (uncertified, --fail-on-uncertified) | time |")
    print("|---:|---:|---:|---:|---:|---:|")
    for err in (0.03, 0.046):
        rng = np.random.default_rng([seed, int(1000 * err)])
        before = now = uncertified = 0
        t0 = time.perf_counter()
        for s in range(sims):
            runs = []
            for _ in range(2):
                stated = np.where(rng.random(n) < 0.25, 90.0, 70.0)
                right = rng.random(n) < np.where(stated == 90, 1 - err, 0.7)
                runs.append(Judgments(stated=stated, prob=stated / 100, correct=right, line=np.arange(1, n + 1),
                                      item_id=np.array([""] * n), scale=PERCENT))
            d = drift(runs[0], runs[1], reps=reps, seed=s, threshold=90.0, target=0.05, confidence=0.95)
            before += d.drift or d.certified is False
            now += exit_code(d.drift, d.certified, True, False)[0] == 1
            uncertified += exit_code(d.drift, d.certified, False, True)[0] == 4
        print(f"| {100 * err:.1f}% | {sims} | {100 * before / sims:.1f}% | {100 * now / sims:.1f}% | "
              f"{100 * uncertified / sims:.1f}% | {time.perf_counter() - t0:.0f}s |", flush=True)


def paired_clusters(sims: int, reps: int, seed: int) -> None:
    """(e): false drift of paired runs whose rows are clustered (see the module docstring)."""
    from dataclasses import replace

    print(f"\n(e) paired runs with clusters, unchanged judge, drift at alpha 5%, reps {reps}")
    print("| n | cluster size | sd of the cluster effect | sims | drift before (clusters dropped) | drift now | time |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, m, sd in ((1000, 20, 0.15), (1000, 20, 0.25)):
        rng = np.random.default_rng([seed, n, m, int(100 * sd)])
        before = now = 0
        t0 = time.perf_counter()
        for s in range(sims):
            base, q = items(n, "values", rng)
            cl = (np.arange(n) // m).astype(str)
            runs = []
            for _ in range(2):
                eff = rng.normal(0, sd, n // m + 1)[np.arange(n) // m]
                runs.append(replace(run(base, np.clip(q + eff, 0, 1), "values", rng), cluster=cl))
            now += drift(runs[0], runs[1], reps=reps, seed=s, pairing="paired").drift
            before += drift(*(replace(r, cluster=None) for r in runs), reps=reps, seed=s, pairing="paired").drift
        print(f"| {n:,} | {m} | {sd:g} | {sims} | {100 * before / sims:.1f}% | {100 * now / sims:.1f}% | "
              f"{time.perf_counter() - t0:.0f}s |", flush=True)


def old_chart(x: np.ndarray, n: np.ndarray, reference: int, side: str, lam: float = 0.2,
              width: float = 3.0) -> int | None:
    """The chart before issue 22 (normal score ``(x - mu0) / sigma``): its first alarm."""
    nref = n[:reference].sum()
    mu0 = np.clip((x[:reference] * n[:reference]).sum() / nref, 0.5 / nref, 1 - 0.5 / nref)
    tau2, e, w, sig = mu0 * (1 - mu0) / nref, 0.0, np.zeros(0), np.zeros(0)
    for k in range(reference, x.size):
        if n[k] == 0:
            continue
        s = np.sqrt(mu0 * (1 - mu0) / n[k])
        e = lam * (x[k] - mu0) / s + (1 - lam) * e
        w, sig = np.append((1 - lam) * w, lam), np.append(sig, s)
        half = width * np.sqrt(np.sum(w ** 2) + tau2 * np.sum(w / sig) ** 2)
        if e > half or (side == "both" and e < -half):
            return k
    return None


def series_rows(sims: int, chart_sims: int, seed: int, n: int = 1000) -> None:
    """(f): in-control alarms of the series' upper chart (see the module docstring)."""
    from calib.drift import series

    stated_values = np.arange(80.0, 101.0)  # 21 values: many candidate thresholds near the target
    wrong = 0.30 - 0.0125 * (stated_values - 80)
    print(f"\n(f1) error-among-accepted chart, threshold recommended on run 1 (target 10%, confidence 95%; "
          f"sequences where one qualifies), then 20 in-control runs of {n:,} answers stating 80-100")
    print("| threshold | sequences | alarm before (run 1 the reference, normal score) | alarm now | time |")
    print("|---|---:|---:|---:|---:|")
    rng = np.random.default_rng([seed, 61])
    charted = before = now = fixed = 0
    t0 = time.perf_counter()
    for _ in range(sims):
        runs = []
        for _ in range(22):
            v = rng.integers(0, stated_values.size, n)
            runs.append(Judgments(stated=stated_values[v], prob=stated_values[v] / 100,
                                  correct=rng.random(n) >= wrong[v], line=np.arange(1, n + 1),
                                  item_id=np.array([""] * n), scale=PERCENT))
        fixed += series(runs[1:], threshold=95.0).error_accepted.alarm is not None
        try:
            s = series(runs, target=0.10)
        except CalibError:  # no threshold qualifies on run 1: nothing to chart
            continue
        charted += 1
        err = np.array([p.error_accepted or 0.0 for p in s.runs])
        acc = np.array([p.accepted for p in s.runs], float)
        before += old_chart(err[:21], acc[:21], 1, "upper") is not None
        now += s.error_accepted.alarm is not None
    secs = time.perf_counter() - t0
    print(f"| recommended on run 1 | {charted} | {100 * before / max(charted, 1):.1f}% | "
          f"{100 * now / max(charted, 1):.1f}% | {secs:.0f}s |")
    print(f"| 95, fixed in advance (runs 2-22) | {sims} | | {100 * fixed / sims:.1f}% | |", flush=True)
    print("\n(f2) upper chart, 20 in-control runs after the reference: normal score (before) vs binomial mid-p "
          "score (now)")
    print("| accepted per run | error rate | errors per run | reference runs | sequences | alarm before | alarm now |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for m, p0 in ((100, 0.1), (50, 0.2), (10000, 0.1)):
        for ref in (1, 5):
            g = np.random.default_rng([seed, m, ref])
            b = c = 0
            for _ in range(chart_sims):
                x = g.binomial(m, p0, ref + 20) / m
                ns = np.full(ref + 20, float(m))
                b += old_chart(x, ns, ref, "upper") is not None
                c += ewma_chart(x, ns, reference=ref, side="upper").alarm is not None
            print(f"| {m:,} | {100 * p0:.0f}% | {m * p0:g} | {ref} | {chart_sims:,} | {100 * b / chart_sims:.1f}% | "
                  f"{100 * c / chart_sims:.1f}% |", flush=True)


def write_examples(folder: Path, n: int = 2000, seed: int = 2026) -> None:
    """The manual's example (docs/drift.md): old.jsonl; new_shift.jsonl (the same items, the stated 90 right
    15 points less often); new_same.jsonl (the same items judged again, nothing changed)."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    base, q = items(n, "values", rng)
    for name, shift in (("old", 0.0), ("new_shift", 0.15), ("new_same", 0.0)):
        r = run(base, q, "values", rng, shift)
        with (folder / f"{name}.jsonl").open("w") as f:
            for i, s, c in zip(r.item_id, r.stated, r.correct, strict=True):
                f.write(json.dumps({"id": str(i), "confidence": int(s), "correct": bool(c)}) + "\n")
    print(f"wrote {folder}/old.jsonl, new_shift.jsonl, new_same.jsonl ({n:,} items each)")


def two_runs(a: argparse.Namespace) -> None:
    print("(a, b) two runs, drift reported at alpha = 5% (Holm); 'named 90': 90 named as moved; "
          f"'other named': another value named; reps {a.reps}")
    print("| judge      | pairing  |     n | runs        | sims | drift reported | named 90 | other named | time |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|")
    null_and_power(a.sims, a.reps, a.seed)


if __name__ == "__main__":
    main()
