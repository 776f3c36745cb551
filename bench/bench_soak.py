"""Soak benchmark of a hosted dashboard: many browser sessions on one share link for
minutes (not part of CI; the CI test is tests/e2e/test_load.py, 20 sessions once).

Starts ``streamlit run app.py`` on a free loopback port with a fresh data directory,
stores a share of the judge sample (opening on the Routing page at threshold 88), and
runs WORKERS concurrent users in one headless Chromium: each opens the link, checks
the routing numbers against a per-row count, moves the review threshold with the
keyboard MOVES times (checking the numbers each time), closes, and starts again,
until the time is up. Prints the sessions run, failures, first-render and
threshold-move percentiles, the server's resident memory over time and its peak
(VmHWM), and the error lines of the server log; writes the same as JSON.

    python bench/bench_soak.py                       # 5 minutes, 30 users, 3 moves
    python bench/bench_soak.py --minutes 1 --workers 10 --json bench/out/soak.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.hosting import expected_routing, read_rows  # noqa: E402
from tests.e2e.loadrun import measured_run, resident_memory_mb, run_soak, write_json  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=5.0, help="how long to soak (default 5)")
    ap.add_argument("--workers", type=int, default=30, help="concurrent users (default 30)")
    ap.add_argument("--moves", type=int, default=3, help="threshold moves per visit (default 3)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds a page may take to show a number")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)

    rows = read_rows()
    rss: list[tuple[float, float]] = []

    def drive(srv, url):  # type: ignore[no-untyped-def]
        rss.append((0.0, resident_memory_mb(srv.proc.pid)))
        print(f"server {srv.url}, {args.workers} users for {args.minutes:g} min, "
              f"{args.moves} threshold moves per visit", flush=True)
        t0 = time.monotonic()
        out = run_soak(
            url, workers=args.workers, duration_s=60 * args.minutes, moves=args.moves,
            expected=lambda lo: expected_routing(rows, lo), timeout_s=args.timeout,
            on_sample=lambda t: rss.append((round(t, 1), resident_memory_mb(srv.proc.pid))),
        )
        rss.append((round(time.monotonic() - t0, 1), resident_memory_mb(srv.proc.pid)))
        return out

    with tempfile.TemporaryDirectory(prefix="calib-soak-") as tmp:
        figures, _results, bad = measured_run(Path(tmp), drive)
    wall, peak, server_cpu = figures["wall_s"], figures["peak_server_memory_mb"], figures["server_cpu_s"]
    figures.update({"workers": args.workers, "minutes": args.minutes, "moves_per_visit": args.moves,
                    "rss_mb_over_time": rss, "server_log_error_lines": bad[:50]})
    first, moves = figures["first_render_s"], figures["threshold_move_s"]
    print(f"sessions:              {figures['sessions']} ({figures['sessions_ok']} ok, "
          f"{figures['sessions'] - figures['sessions_ok']} failed) in {wall:.0f} s")
    if first:
        print(f"first render (s):      p50 {first['p50']:.2f}  p95 {first['p95']:.2f}  max {first['max']:.2f}")
    if moves:
        print(f"threshold move (s):    p50 {moves['p50']:.2f}  p95 {moves['p95']:.2f}  max {moves['max']:.2f}"
              f"  ({moves['count']} moves)")
    print(f"server memory (MB):    start {rss[0][1]:.0f}  end {rss[-1][1]:.0f}  peak (VmHWM) {peak:.0f}")
    print(f"CPU (s):               server {server_cpu:.0f}  browser {figures['browser_cpu_s']}  "
          f"(wall {wall:.0f} s; both share this machine's cores)")
    print(f"server log errors:     {len(bad)}")
    for line in bad[:10]:
        print("   ", line)
    for e in figures["errors"]:
        print(f"failed session {e['index']}: {e['error'][:300]}")
    if args.json:
        write_json(args.json, figures)
    return 0 if figures["sessions_ok"] == figures["sessions"] and not bad else 1


if __name__ == "__main__":
    raise SystemExit(main())
