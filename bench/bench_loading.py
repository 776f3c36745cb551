"""Benchmark: loading a 1,000,000-line JSONL of stated confidences.

Writes ``{"id": "q123", "confidence": 95, "correct": true}`` lines (0-100 integers,
seeded) and prints wall-clock and CPU seconds (best of ``--repeat``) for:

- ``stated.read`` (the reader alone; pyarrow fast path),
- ``calib.loading.load`` (reader + count table),
- the same file with 1% bad lines scattered through it (the fast path splits around
  them and reads only those lines in Python),
- the same file with a question text per line and CRLF line ends,
- baselines: a per-line ``json.loads`` loop (no validation), ``orjson.loads`` if it
  happens to be installed (it is not a dependency), and with ``--per-line`` the
  reader's own per-line path (``fast=False``).

Usage: ``python bench/bench_loading.py [--rows N] [--repeat R] [--per-line]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calib.loading import load  # noqa: E402
from calib.readers import stated  # noqa: E402
from calib.readers.base import LoadOptions, Source  # noqa: E402


def make(rows: int, seed: int, *, bad_share: float = 0.0, question: bool = False, crlf: bool = False) -> bytes:
    rng = random.Random(seed)
    values = [50, 60, 70, 75, 80, 85, 90, 95, 99, 100]
    out = []
    for i in range(rows):
        c = rng.choice(values)
        y = "true" if rng.random() < 0.75 else "false"
        if question:
            line = f'{{"id": "q{i}", "question": "Which of these is the capital of country {i}?", "confidence": {c}, "correct": {y}}}'
        else:
            line = f'{{"id": "q{i}", "confidence": {c}, "correct": {y}}}'
        if bad_share and rng.random() < bad_share:
            line = rng.choice([line[:-3], f'{{"id": "q{i}", "confidence": "sure", "correct": true}}', "",
                               f'{{"id": "q{i}", "confidence": {c}, "correct": "maybe"}}'])
        out.append(line)
    sep = "\r\n" if crlf else "\n"
    return (sep.join(out) + sep).encode()


def best(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    wall = cpu = float("inf")
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - w)
        cpu = min(cpu, time.process_time() - c)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--per-line", action="store_true", help="also time the per-line reference path (slow)")
    args = ap.parse_args()
    opts = LoadOptions()
    print(f"{args.rows:,} lines, {os.cpu_count()} CPUs, best of {args.repeat}")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stated.jsonl"
        data = make(args.rows, 0)
        path.write_bytes(data)
        print(f"file: {len(data) / 1e6:.1f} MB")

        def report(label: str, fn: Callable[[], object], repeat: int = args.repeat) -> None:
            wall, cpu = best(fn, repeat)
            print(f"  {label:<52} {wall:6.3f} s wall  {cpu:6.3f} s CPU")

        report("stated.read (fast path)", lambda: stated.read(Source("stated.jsonl", data), opts))
        report("loading.load (read file + reader + count table)", lambda: load(path))
        dirty = make(args.rows, 0, bad_share=0.01)
        rows, rep = stated.read(Source("dirty.jsonl", dirty), opts)
        report(f"stated.read, 1% bad lines ({rep.dropped:,} dropped, {rep.blank:,} blank)",
               lambda: stated.read(Source("dirty.jsonl", dirty), opts))
        rich = make(args.rows, 0, question=True, crlf=True)
        report("stated.read, question text + CRLF", lambda: stated.read(Source("rich.jsonl", rich), opts))

        lines = data.splitlines()
        report("baseline: json.loads per line (no checks)", lambda: [json.loads(x) for x in lines], 1)
        try:
            import orjson  # type: ignore[import-not-found]
        except ImportError:
            print("  baseline: orjson not installed")
        else:
            report("baseline: orjson.loads per line (no checks)", lambda: [orjson.loads(x) for x in lines], 1)
        if args.per_line:
            report("stated.read per-line path (fast=False)",
                   lambda: stated.read(Source("stated.jsonl", data), opts, fast=False), 1)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of this process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
