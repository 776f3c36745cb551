"""Benchmark: ``calib audit FILE --json`` end to end on 1,000,000-row JSONL files.

Writes two files (seeded, LLM-judge-like: overconfident, stated confidence
mostly 80-100) and times the full command line, loading included, with the
default 2,000 bootstrap resamples:

- ``int``: integer confidences 0-100 (at most 101 distinct values, exact table);
- ``continuous``: probabilities with 7 decimals, as from option log-probs
  (pooled on the 0.001 grid, ~1,000 cells).

Budgets (issue 2, on the project's 2-core machine): 3 s for ``int``, 6 s for
``continuous``, peak memory under 1 GB. It also times the audit alone (count
table in memory, no loading), including a worst case for the smooth ECE's
bootstrap: a well-calibrated model using all 101 values, whose fixed-point
kernel width is tiny. Prints figures; asserts nothing.

Run: ``python bench/bench_audit.py [--rows N] [--repeat K] [--dir DIR]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Runs one command and reports its wall time and its peak resident memory.
_TIMER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "dt = time.perf_counter() - t\n"
    "print(dt, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)\n"
)


def _judge(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Latent skill per item and a stated confidence that overshoots it."""
    rng = np.random.default_rng(seed)
    skill = rng.beta(5, 2, rows)  # P(right)
    right = rng.random(rows) < skill
    stated = np.clip(0.55 + 0.5 * skill + rng.normal(0, 0.05, rows), 0, 1)
    return stated, right


def write_int(path: Path, rows: int, seed: int = 1) -> None:
    stated, right = _judge(rows, seed)
    conf = np.round(stated * 100).astype(int)
    with path.open("w") as f:
        f.writelines(
            f'{{"id": "q{i}", "confidence": {c}, "correct": {"true" if r else "false"}}}\n'
            for i, (c, r) in enumerate(zip(conf.tolist(), right.tolist(), strict=True))
        )


def write_continuous(path: Path, rows: int, seed: int = 2) -> None:
    stated, right = _judge(rows, seed)
    p = np.clip(stated, 0.25, 0.9999999)
    with path.open("w") as f:
        f.writelines(
            f'{{"id": "q{i}", "p": {x:.7f}, "correct": {int(r)}}}\n'
            for i, (x, r) in enumerate(zip(p.tolist(), right.tolist(), strict=True))
        )


def time_cli(path: Path, repeat: int) -> tuple[list[float], int]:
    times, peak = [], 0
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", _TIMER, sys.executable, "-m", "calib", "audit", str(path), "--json"],
            capture_output=True, text=True, cwd=ROOT, check=True,
        ).stdout.split()
        if out[2] != "0":
            raise SystemExit(f"calib audit exited with {out[2]} on {path}")
        times.append(float(out[0]))
        peak = max(peak, int(out[1]))
    return times, peak


def time_audit_only(repeat: int) -> None:
    from calib import table as tb
    from calib.audit import audit
    from calib.rows import Judgments
    from calib.scale import Scale

    rng = np.random.default_rng(3)
    n = 1_000_000
    cases = {}
    stated, right = _judge(n, 4)
    cases["int (LLM-like)"] = (np.round(stated * 100), right, Scale(0, 100, "0-100"))
    v = rng.integers(0, 101, n).astype(float)
    cases["int, calibrated, all 101 values"] = (v, rng.random(n) < v / 100, Scale(0, 100, "0-100"))
    cases["continuous (LLM-like)"] = (np.clip(stated, 0.25, 1), right, Scale(0, 1, "0-1"))
    z = rng.normal(1.5, 1.2, n)
    p = 1 / (1 + np.exp(-z))
    cases["continuous, calibrated"] = (p, rng.random(n) < p, Scale(0, 1, "0-1"))
    for name, (vals, y, scale) in cases.items():
        rows = Judgments(stated=vals, prob=scale.to_prob(vals), correct=y, line=np.arange(n),
                         item_id=np.full(n, ""), scale=scale)
        table = tb.from_judgments(rows)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            a = audit(table)
            times.append(time.perf_counter() - t0)
        print(f"  audit only, {name:<34} {table.cells:>5} cells: median {statistics.median(times):.2f} s "
              f"(min {min(times):.2f}); smooth ECE {a.metrics['smooth_ece']:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None, help="where to write the files (default: a temp dir)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = args.dir or Path(tmp)
        d.mkdir(parents=True, exist_ok=True)
        files = {"int": d / "bench_int.jsonl", "continuous": d / "bench_continuous.jsonl"}
        t0 = time.perf_counter()
        write_int(files["int"], args.rows)
        write_continuous(files["continuous"], args.rows)
        print(f"wrote 2 x {args.rows:,} rows in {time.perf_counter() - t0:.1f} s")
        budget = {"int": 3.0, "continuous": 6.0}
        for kind, path in files.items():
            times, peak = time_cli(path, args.repeat)
            print(f"  calib audit --json, {kind:<10} ({path.stat().st_size / 1e6:.0f} MB): median "
                  f"{statistics.median(times):.2f} s, min {min(times):.2f} s (budget {budget[kind]:.0f} s); "
                  f"peak memory {peak / 1024:.0f} MB")
    time_audit_only(args.repeat)


if __name__ == "__main__":
    main()
