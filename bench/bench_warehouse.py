"""Benchmark: ``calib audit 'logs/*.parquet' --json`` on a folder of N rows (default 50M).

Generates the folder with DuckDB itself (seeded by row number: stated confidences 0-100
on a judge-like spread, outcomes right with probability value/120, three subjects;
``--files`` Parquet files), then runs, each ``--repeat`` times in a fresh process:

- the floors: DuckDB's own ``SELECT count(*)`` over the same files (a process that
  imports duckdb and scans them; for Parquet the row counts come from the metadata), and
  DuckDB's ``GROUP BY confidence, correct`` (the used columns read and grouped);
- ``calib audit`` on the glob, pooled and ``--group-key subject``, 2,000 resamples;
- a clustered glob (``--cluster-rows`` rows of ``--items`` items, 4M of 400k by default:
  each item judged 10 times): DuckDB's ``GROUP BY item, confidence, correct`` beside
  ``calib audit --cluster-key item`` without resamples (the read and the point
  estimates) and with 2,000 (resampling the items).

Prints the median wall time and the peak resident memory (the child's ``ru_maxrss``)
of each; the budget is peak memory under 1 GB. Asserts nothing.

Run: ``python bench/bench_warehouse.py [--rows N] [--files K] [--repeat R] [--dir DIR]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def generate(folder: Path, rows: int, files: int) -> float:
    """Write ``rows`` judgments as ``files`` Parquet files; returns the seconds taken."""
    import duckdb

    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET memory_limit = '1GB'")
    con.execute("SET preserve_insertion_order = false")
    per = -(-rows // files)
    for f in range(files):
        lo, hi = f * per, min(rows, (f + 1) * per)
        # hash(i) gives a fixed pseudo-random stream per row: the folder is the same on every run
        con.execute(f"""
            COPY (
              SELECT 'q' || i AS id,
                     ['biology', 'law', 'math'][CAST(1 + hash(i * 3) % 3 AS BIGINT)] AS subject,
                     CAST(LEAST(100, 40 + CAST(hash(i) % 61 AS BIGINT) + CAST(hash(i * 7) % 2 AS BIGINT) * 5) AS INTEGER) AS confidence,
                     (hash(i * 11) % 1000) / 1000.0
                       < LEAST(100, 40 + CAST(hash(i) % 61 AS BIGINT) + CAST(hash(i * 7) % 2 AS BIGINT) * 5) / 120.0 AS correct
              FROM range({lo}, {hi}) t(i)
            ) TO '{folder / f"part-{f:03d}.parquet"}' (FORMAT PARQUET)
        """)
    con.close()
    return time.perf_counter() - t0


def generate_clustered(folder: Path, rows: int, items: int) -> None:
    """``rows`` judgments of ``items`` items (each judged ``rows / items`` times) as 4
    Parquet files: an item's right answers depend on the item (its rows are a cluster)."""
    import duckdb

    folder.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET memory_limit = '1GB'")
    per = -(-rows // 4)
    for f in range(4):
        lo, hi = f * per, min(rows, (f + 1) * per)
        con.execute(f"""
            COPY (
              SELECT 'q' || (i % {items}) AS item,
                     [60, 70, 80, 90, 95][CAST(1 + hash(i * 7) % 5 AS BIGINT)] AS confidence,
                     CAST(hash(i * 13) % 100 AS BIGINT) < 50 + (i % {items}) % 40 AS correct
              FROM range({lo}, {hi}) t(i)
            ) TO '{folder / f"part-{f}.parquet"}' (FORMAT PARQUET)
        """)
    con.close()


def generate_jsonl(folder: Path, parquet: Path, rows: int) -> None:
    """The first ``rows`` rows of the Parquet folder as gzipped JSONL (4 files)."""
    import duckdb

    folder.mkdir(parents=True, exist_ok=True)
    per = -(-rows // 4)
    for f in range(4):
        duckdb.sql(f"COPY (SELECT * FROM read_parquet('{parquet}/*.parquet') LIMIT {per} OFFSET {f * per}) "
                   f"TO '{folder / f'part-{f}.jsonl.gz'}' (FORMAT JSON, COMPRESSION GZIP)")


def measured(cmd: list[str], repeat: int) -> tuple[float, float]:
    """Median wall time and largest peak RSS over ``repeat`` runs, each in a fresh
    ``python`` that reports its own child's peak (RUSAGE_CHILDREN is a running maximum)."""
    walls, peaks = [], []
    probe = ("import resource, subprocess, sys, time; t=time.perf_counter(); "
             "r=subprocess.run(sys.argv[1:], capture_output=True); "
             "print(time.perf_counter()-t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024, r.returncode); "
             "sys.stderr.write(r.stderr.decode()[-2000:])")
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True, cwd=ROOT)
        wall, peak, rc = out.stdout.split()
        if int(rc) not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed ({rc}): {out.stderr}")
        walls.append(float(wall))
        peaks.append(float(peak))
    return statistics.median(walls), max(peaks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000_000)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jsonl-rows", type=int, default=5_000_000, help="rows of the gzipped JSONL glob (0: none)")
    ap.add_argument("--cluster-rows", type=int, default=4_000_000,
                    help="rows of the clustered Parquet glob read with --cluster-key item (0: none)")
    ap.add_argument("--items", type=int, default=400_000, help="items (clusters) of the clustered glob")
    ap.add_argument("--dir", type=Path, default=None, help="keep the folder here (reused when it exists)")
    args = ap.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="calib-warehouse-"))
    if not any(folder.glob("*.parquet")):
        secs = generate(folder, args.rows, args.files)
        print(f"generated {args.rows:,} rows in {args.files} Parquet files in {secs:.1f} s ({folder})")
    size = sum(f.stat().st_size for f in folder.glob("*.parquet")) / 2**20
    print(f"folder: {folder}, {size:,.0f} MB on disk; cores: {os.cpu_count()}")
    pattern = str(folder / "*.parquet")
    floor = [sys.executable, "-c",
             f"import duckdb; print(duckdb.sql(\"SELECT count(*) FROM read_parquet('{pattern}')\").fetchone()[0])"]
    scan = [sys.executable, "-c",
            "import duckdb; print(duckdb.sql(\"SELECT confidence, correct, count(*) FROM "
            f"read_parquet('{pattern}') GROUP BY ALL\").fetchall()[:1])"]
    cases = [
        ("floor: duckdb SELECT count(*)", floor),
        ("floor: duckdb GROUP BY confidence, correct", scan),
        ("calib audit GLOB --json", [sys.executable, "-m", "calib", "audit", pattern, "--json"]),
        ("calib audit GLOB --group-key subject --json",
         [sys.executable, "-m", "calib", "audit", pattern, "--group-key", "subject", "--json"]),
    ]
    if args.jsonl_rows:
        jfolder = folder / "jsonl"
        if not any(jfolder.glob("*.jsonl.gz")):
            generate_jsonl(jfolder, folder, args.jsonl_rows)
        jpattern = str(jfolder / "*.jsonl.gz")
        cases += [
            (f"floor: duckdb count(*), JSONL.gz ({args.jsonl_rows / 1e6:g}M)", [sys.executable, "-c",
             f"import duckdb; print(duckdb.sql(\"SELECT count(*) FROM read_json('{jpattern}')\").fetchone()[0])"]),
            ("floor: duckdb GROUP BY conf, correct, JSONL.gz", [sys.executable, "-c",
             "import duckdb; print(duckdb.sql(\"SELECT confidence, correct, count(*) FROM "
             f"read_json('{jpattern}') GROUP BY ALL\").fetchall()[:1])"]),
            (f"calib audit JSONL.gz GLOB --json ({args.jsonl_rows / 1e6:g}M)",
             [sys.executable, "-m", "calib", "audit", jpattern, "--json"]),
        ]
    if args.cluster_rows:
        cfolder = folder / "clustered"
        if not any(cfolder.glob("*.parquet")):
            generate_clustered(cfolder, args.cluster_rows, args.items)
        cpattern = str(cfolder / "*.parquet")
        tag = f"({args.cluster_rows / 1e6:g}M rows, {args.items / 1e3:g}k items)"
        cases += [
            (f"floor: duckdb GROUP BY item, conf, correct {tag}", [sys.executable, "-c",
             "import duckdb; print(duckdb.sql(\"SELECT item, confidence, correct, count(*) FROM "
             f"read_parquet('{cpattern}') GROUP BY ALL\").fetchnumpy()['item'][:1])"]),
            ("calib audit GLOB --cluster-key item --reps 0 --json",
             [sys.executable, "-m", "calib", "audit", cpattern, "--cluster-key", "item", "--reps", "0", "--json"]),
            ("calib audit GLOB --cluster-key item --json",
             [sys.executable, "-m", "calib", "audit", cpattern, "--cluster-key", "item", "--json"]),
        ]
    w = max(len(label) for label, _ in cases)
    print(f"{'command':<{w}} {'median s':>9} {'peak RSS MB':>12}   (rows: {args.rows:,}, repeats: {args.repeat})")
    for label, cmd in cases:
        wall, peak = measured(cmd, args.repeat)
        print(f"{label:<{w}} {wall:9.1f} {peak:12.0f}")


if __name__ == "__main__":
    main()
