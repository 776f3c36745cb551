"""Peak memory of ``calib audit`` on every hostile input at its full size.

Each file of the hostile corpus (``tests/hostile.py``) is written at the size that
once cost gigabytes (:attr:`Case.full`; at most 5 MB on disk) and audited in a fresh
process, which reports its own peak resident set size (``ru_maxrss``) and exit code.
Each child runs under an address-space cap (``--cap-mb``, default 3,000 MB) so that a
regression fails there (a ``MemoryError``, exit 3) instead of taking the machine.

The floor is the same child on a 20-line valid file: the interpreter with numpy,
pandas, pyarrow and scipy imported (a bare ``import calib.cli`` is printed too).
The goal (issue 9): every input of at most 5 MB on disk stays under 1 GB.

Usage::

    python bench/bench_hostile_memory.py              # the whole corpus
    python bench/bench_hostile_memory.py gzip_bomb    # cases whose name contains this
    python bench/bench_hostile_memory.py --extra      # also valid rows from a small .gz
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import hostile  # noqa: E402

GOAL_MB = 1024
DISK_MB = 5

#: The child: cap its address space, run the command line in-process, report.
CHILD = """
import resource, sys
cap = int(sys.argv[1])
if cap:
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
import contextlib, io
code = 0
if sys.argv[2] != "--import-only":
    from calib.cli import main
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            code = main(["audit", sys.argv[2], "--reps", "0"])
        except MemoryError:
            code = 3
    last = (err.getvalue().strip().splitlines() or [""])[-1]
else:
    import calib.cli  # noqa: F401
    last = ""
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, code, last[:90], sep="\\t")
"""


def measure(path: str, cap_mb: int, root: Path = ROOT) -> tuple[int, int, str, float]:
    """(peak RSS MB, exit code, last stderr line, seconds) of one audit in a fresh process
    importing ``calib`` from ``root``."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", CHILD, str(cap_mb * 2**20), path],
                       capture_output=True, text=True, cwd=root, timeout=600)
    secs = time.perf_counter() - t
    fields = r.stdout.rstrip("\n").split("\t")
    if len(fields) != 3:  # the child died before reporting (killed, or a crash at start)
        return 0, r.returncode, r.stderr.strip()[-90:], secs
    return int(fields[0]), int(fields[1]), fields[2], secs


#: Writes one case's file in its own process: Linux keeps a process's peak RSS across
#: fork and exec, so a parent that had built a 200 MB file would lend it to every child.
WRITER = """
import sys
from tests import hostile
from bench.bench_hostile_memory import VALID, VALID_TEXT, text_rows_gz, valid_rows_gz
name, path = sys.argv[1], sys.argv[2]
data = valid_rows_gz() if name == VALID else text_rows_gz() if name == VALID_TEXT else hostile.BY_NAME[name].bytes(full=True)
open(path, "wb").write(data)
"""


def write(name: str, path: Path) -> None:
    subprocess.run([sys.executable, "-c", WRITER, name, str(path)], check=True, cwd=ROOT, timeout=600)


#: The largest valid input the row cap admits, from a small .gz (not hostile, but amplified).
VALID = "valid_rows_at_the_row_cap.jsonl.gz"


def valid_rows_gz(rows: int | None = None) -> bytes:
    """``rows`` valid lines (default: one fewer than :data:`calib.readers.base.MAX_ROWS`),
    repeated, gzipped: under 1 MB on disk, the most rows a loader accepts."""
    from calib.readers.base import MAX_ROWS

    rows = MAX_ROWS - 1 if rows is None else rows
    line = b'{"confidence": 90, "correct": true}\n'
    z = hostile.zlib_compressor()
    per = (1 << 20) // len(line)
    out = [z.compress(line * per) for _ in range(rows // per)]
    return b"".join(out) + z.compress(line * (rows % per)) + z.flush()


#: Valid rows with a question text as long as the review queue keeps, filling the
#: decompression cap (the most text a loader accepts from a small .gz).
VALID_TEXT = "text_rows_at_the_decompression_cap.jsonl.gz"


def text_rows_gz() -> bytes:
    """Lines with distinct ids and a 200-character question, up to just under
    :data:`calib.readers.base.MAX_DECOMPRESSED_BYTES` of text, gzipped (a few MB on disk)."""
    from calib.readers.base import MAX_DECOMPRESSED_BYTES

    z = hostile.zlib_compressor()
    out, size, i = [], 0, 0
    while True:
        block = b"".join(b'{"id": "q%08d", "question": "%s", "confidence": 90, "correct": true}\n'
                         % (i + j, b"x" * 200) for j in range(10_000))
        if size + len(block) >= MAX_DECOMPRESSED_BYTES:
            break
        out.append(z.compress(block))
        size, i = size + len(block), i + 10_000
    return b"".join(out) + z.flush()


# --------------------------------------------------------------- globs (issue 22)
def glob_cases(folder: Path) -> list[tuple[str, str, Path]]:
    """(name, pattern, its folder) of hostile globs built in ``folder``: two symbolic links back to
    the folder under a recursive ``**`` (glob.glob walked 2**40 paths: 2.1 GB after 180 s),
    file names holding glob characters (DuckDB re-read the siblings), and a ragged CSV
    among good ones (it refused the whole glob, naming no file)."""
    good = hostile.good_lines()
    loops = folder / "loops"
    (loops / "sub").mkdir(parents=True)
    (loops / "a.jsonl").write_bytes(good)
    (loops / "sub" / "b.jsonl").write_bytes(good)
    (loops / "loop1").symlink_to(loops, target_is_directory=True)
    (loops / "sub" / "loop2").symlink_to(loops, target_is_directory=True)
    names = folder / "names"
    names.mkdir()
    for name in ("run1.jsonl", "run1*.jsonl", "run12.jsonl", "run[12].jsonl", "run?.jsonl"):
        (names / name).write_bytes(good)
    csvs = folder / "csvs"
    csvs.mkdir()
    (csvs / "a.csv").write_text("confidence,correct\n" + "80,1\n70,0\n" * 10)
    (csvs / "b.csv").write_text("confidence,correct\n" + "80,1\n" * 30_000 + "90,0,extra\n")
    return [("glob_symlink_loops/**/*.jsonl", str(loops / "**" / "*.jsonl"), loops),
            ("glob_names_with_stars/*.jsonl", str(names / "*.jsonl"), names),
            ("glob_one_bad_csv/*.csv", str(csvs / "*.csv"), csvs)]


def run_globs(cap_mb: int, root: Path, floor: int) -> None:
    """One row per hostile glob (a few kB on disk each)."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, pattern, folder in glob_cases(Path(tmp)):
            disk = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())
            peak, code, last, secs = measure(pattern, cap_mb, root)
            ok = peak < GOAL_MB and code in (0, 2) and secs <= 30
            print(f"{name:<42} {disk / 2**20:>7.2f}MB {peak:>8,} {peak - floor:>+10,} {code:>4} {secs:>5.1f}  "
                  f"{'yes' if ok else 'NO'}" + (f"  ({last})" if code not in (0, 2) else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("only", nargs="?", default="", help="run the cases whose name contains this")
    ap.add_argument("--cap-mb", type=int, default=3000, help="address-space cap of each child (MB)")
    ap.add_argument("--extra", action="store_true",
                    help="also valid rows amplified by gzip (as many as the row cap admits, in a small .gz)")
    ap.add_argument("--calib-root", type=Path, default=ROOT,
                    help="run the audits with the calib package of another tree (e.g. an export of an "
                         "older commit: git archive HEAD | tar -x -C /tmp/old), to compare")
    args = ap.parse_args()
    root = args.calib_root.resolve()
    cases = [c for c in hostile.CASES if args.only in c.name and c not in hostile.ISSUE22]
    with tempfile.TemporaryDirectory() as tmp:
        good = Path(tmp) / "good.jsonl"
        good.write_bytes(hostile.good_lines())
        bare = measure("--import-only", args.cap_mb, root)[0]
        floor = measure(str(good), args.cap_mb, root)[0]
        if root != ROOT:
            print(f"calib from {root}")
        print(f"floor: {floor} MB (an audit of a 20-line file); bare `import calib.cli`: {bare} MB; "
              f"goal: under {GOAL_MB} MB for any input of at most {DISK_MB} MB on disk\n")
        print(f"{'input':<42} {'on disk':>9} {'peak MB':>8} {'over floor':>10} {'exit':>4} {'s':>5}  under 1 GB")
        worst = 0
        todo = [c.name for c in cases] + ([VALID, VALID_TEXT] if args.extra else [])
        for name in todo:
            path = Path(tmp) / name
            write(name, path)
            disk = path.stat().st_size
            peak, code, last, secs = measure(str(path), args.cap_mb, root)
            path.unlink()
            ok = peak < GOAL_MB and code in (0, 2)
            if disk <= DISK_MB * 2**20 and name in hostile.BY_NAME:
                worst = max(worst, peak)
            print(f"{name:<42} {disk / 2**20:>7.2f}MB {peak:>8,} {peak - floor:>+10,} {code:>4} {secs:>5.1f}  "
                  f"{'yes' if ok else 'NO'}" + (f"  ({last})" if code not in (0, 2) else ""))
        if "glob".startswith(args.only) or args.only in "glob_symlink_loops glob_names_with_stars glob_one_bad_csv":
            run_globs(args.cap_mb, root, floor)
        print(f"\nworst peak of a corpus input of at most {DISK_MB} MB on disk: {worst:,} MB "
              f"({'under' if worst < GOAL_MB else 'OVER'} the {GOAL_MB} MB goal)")
        issue22(Path(tmp), args.only, args.cap_mb, root, floor)
    return 0


# ---------------------------------------------------------------- issue 22: input forms and CPU
#: Seconds any input of at most :data:`DISK_MB` MB may take (issue 22: each holds a heavy-job slot).
GOAL_S = 30

#: :data:`CHILD` with the case's own ``calib audit`` options (``--group-key g``) after the path.
CHILD22 = CHILD.replace('main(["audit", sys.argv[2], "--reps", "0"])',
                        'main(["audit", sys.argv[2], "--reps", "0", *sys.argv[3:]])')


def measure22(path: str, extra: tuple[str, ...], cap_mb: int, root: Path) -> tuple[int, int, str, float]:
    """:func:`measure` with the case's options."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", CHILD22, str(cap_mb * 2**20), path, *extra],
                       capture_output=True, text=True, cwd=root, timeout=900)
    secs = time.perf_counter() - t
    fields = r.stdout.rstrip("\n").split("\t")
    if len(fields) != 3:
        return 0, r.returncode, r.stderr.strip()[-90:], secs
    return int(fields[0]), int(fields[1]), fields[2], secs


def issue22(tmp: Path, only: str, cap_mb: int, root: Path, floor: int) -> None:
    """Issue 22's cases at full size: peak memory and seconds against 1 GB and 30 s (the
    quadratic ones took 150 s, 165 s and over 600 s before)."""
    cases = [c for c in hostile.ISSUE22 if only in c.name]
    if not cases:
        return
    print(f"\nissue 22 (input forms, linear CPU): goal under {GOAL_MB} MB and {GOAL_S} s for at most {DISK_MB} MB")
    print(f"{'input':<42} {'on disk':>9} {'peak MB':>8} {'over floor':>10} {'exit':>4} {'s':>6}  within goal")
    for c in cases:
        path = tmp / c.name
        write(c.name, path)
        disk = path.stat().st_size
        peak, code, last, secs = measure22(str(path), c.args, cap_mb, root)
        path.unlink()
        ok = peak < GOAL_MB and secs <= GOAL_S and code == c.exit
        print(f"{c.name:<42} {disk / 2**20:>7.2f}MB {peak:>8,} {peak - floor:>+10,} {code:>4} {secs:>6.1f}  "
              f"{'yes' if ok else 'NO'}" + (f"  ({last})" if code not in (0, 2) else ""))


if __name__ == "__main__":
    raise SystemExit(main())
