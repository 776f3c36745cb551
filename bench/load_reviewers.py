"""Load test of the scale-out deployment (issue 27; not part of CI, whose miniature is
tests/test_hosting_failover.py): N reviewers label one share link through nginx
(``deploy/nginx.conf``) across two real replicas (``streamlit run app.py``) on one
PostgreSQL catalog, for a bounded time, on loopback only.

Each reviewer is a protocol-level client (tests/replicaset.py on tests/wsclient.py): the
proxy's sticky cookie, a distinct client address in ``X-Forwarded-For`` (the replicas trust
the proxy on 127.0.0.1), the password, the Review page of the link, then Right / Wrong
after a random think time, a unique click id in each label's note. In the middle one
replica is killed with SIGKILL and restarted at once on its port; its reviewers lose
their WebSocket, reconnect through the proxy (to the other replica while it is down) and
carry on. Before the kill an attacker spreads wrong passwords over both replicas (route
cookies chosen from the proxy's log); after the restart the right password is refused on
both, the restarted one included.

Printed: labels per second, click-to-stored (the click sent until the page's "Saved"
arrives) and click-to-page (until the run's end) percentiles, errors by kind, the label
check (the clients' logs against the catalog: every "Saved" click stored exactly once, no
click stored twice, no row nobody clicked), who resumed after the kill, the lock-out, the
machine's load average. Exit status 1 when a label is lost or duplicated, a reviewer did
not resume, or the lock-out failed.

``--capacity 10,20,40`` instead measures one replica (no proxy, no kill): each count of
reviewers for ``--seconds`` on a fresh catalog, stopping at the first whose p95
click-to-stored passes ``--bound`` seconds or that has an error.

    nice -n 10 python bench/load_reviewers.py                   # 50 reviewers, 300 s
    nice -n 10 python bench/load_reviewers.py --seconds 60 --reviewers 20
    nice -n 10 python bench/load_reviewers.py --capacity 20,40,60,80 --seconds 60
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.replicaset import (  # noqa: E402
    Deployment,
    LabelCheck,
    Reviewer,
    Trouble,
    attempt,
    catalog_labels,
    check_labels,
    cookies_per_replica,
    deployment,
    judge_file,
    nginx_binary,
    review,
)

PASSWORD = "load test password"
ATTACKER = "203.0.113.66"  # TEST-NET-3: the guesser's address as the proxy reports it


def pct(xs: list[float], q: float) -> float:
    """The ``q``-quantile by the nearest-rank rule (``nan`` for no data)."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(q * len(s) + 0.999999) - 1))]


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process so far (``/proc/PID/stat``), ``None`` once gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class LoadSampler(threading.Thread):
    """Every 2 s: the machine's 1-minute load average (the machine is shared) and the CPU
    seconds of each replica process (a killed one keeps its last reading)."""

    def __init__(self, d: Deployment) -> None:
        super().__init__(daemon=True)
        self.d = d
        self.samples: list[float] = []
        self.cpu: dict[int, float] = {}
        self.stop = threading.Event()

    def sample(self) -> None:
        for r in self.d.replicas:
            pid = r.server.proc.pid
            self.cpu.setdefault(pid, cpu_seconds(pid) or 0.0)  # the first reading: the start's cost
            if (now := cpu_seconds(pid)) is not None:
                self.cpu[pid] = now
        self.samples.append(os.getloadavg()[0])

    def run(self) -> None:
        self.sample()
        self.base = dict(self.cpu)
        while not self.stop.wait(2):
            self.sample()

    def replica_cpu(self) -> float:
        """CPU seconds the replicas used since the sampler started."""
        return sum(v - self.base.get(pid, 0.0) for pid, v in self.cpu.items())


def run_reviewers(base_url: str, token: str, n: int, until: float, think: tuple[float, float],
                  troubles: list[Trouble], direct: bool = False) -> list[Reviewer]:
    """``n`` reviewer threads labelling until ``until``; started 0.1 s apart (a campaign
    opening the link, not one instant). ``direct``: ``base_url`` is a replica, not the
    proxy (no route cookie to fetch)."""
    reviewers = [Reviewer(base_url, token, f"r{k:03d}", PASSWORD, f"198.51.100.{k % 250 + 1}",
                          cookie="direct" if direct else "") for k in range(n)]
    threads = [threading.Thread(target=review, args=(rv, lambda: until, think, k, troubles), daemon=True)
               for k, rv in enumerate(reviewers)]
    for t in threads:
        t.start()
        time.sleep(0.1)
    for t in threads:
        t.join(timeout=max(0.0, until - time.monotonic()) + 300)
    return reviewers


def lockout_spread(d: Deployment, max_failures: int) -> dict[str, object]:
    """Wrong passwords from one address alternating between the replicas: the last one
    locks the address out (the count is shared)."""
    cookies = cookies_per_replica(d, per=1)
    got = [attempt(d.proxy.url, f"guess {k}", cookies[k % 2][0], ATTACKER) for k in range(max_failures)]
    return {"cookies": [c[0] for c in cookies], "wrong_guesses": got}


def lockout_after(d: Deployment, cookies: list[str]) -> list[str]:
    """The right password from the locked address, on each replica."""
    return [attempt(d.proxy.url, PASSWORD, c, ATTACKER) for c in cookies]


def summary(reviewers: list[Reviewer], troubles: list[Trouble], seconds: float, check: LabelCheck) -> dict:
    clicks = [c for rv in reviewers for c in rv.clicks]
    saved = [c for c in clicks if c.outcome == "saved"]
    stored_s = [c.answered - c.sent for c in saved if c.answered is not None]
    kinds = {k: sum(t.what == k for t in troubles) for k in ("closed", "dropped", "connect", "refused")}
    return {
        "reviewers": len(reviewers),
        "seconds": round(seconds, 1),
        "clicks": len(clicks),
        "saved": len(saved),
        "labels_per_s": round(len(saved) / seconds, 2),
        "click_to_stored_p50_s": round(pct(stored_s, 0.5), 3),
        "click_to_stored_p95_s": round(pct(stored_s, 0.95), 3),
        "click_to_stored_max_s": round(max(stored_s, default=float("nan")), 3),
        "errors": kinds,
        "check": {
            "rows": check.rows, "saved": check.saved, "lost": len(check.lost), "duplicated": len(check.duplicated),
            "mismatched": len(check.mismatched), "strangers": len(check.strangers), "unknown": check.unknown,
            "unknown_stored": check.unknown_stored, "refused": check.refused,
        },
    }


def tracebacks(log: str) -> list[str]:
    """Each distinct traceback of a log (up to 40 lines each), by its last line."""
    out: dict[str, str] = {}
    lines = log.splitlines()
    for k, line in enumerate(lines):
        if line.lstrip().startswith("Traceback"):
            block = lines[k:k + 40]
            end = next((j for j, x in enumerate(block[1:], 1) if x and not x.startswith((" ", "\t"))), len(block) - 1)
            out.setdefault(block[end], "\n".join(block[:end + 1]))
    return list(out.values())


def print_table(s: dict, extra: list[tuple[str, str]]) -> None:
    e, c = s["errors"], s["check"]
    rows = [
        ("reviewers, seconds", f"{s['reviewers']}, {s['seconds']:g}"),
        ("clicks sent / saved", f"{s['clicks']:,} / {s['saved']:,}"),
        ("labels per second", f"{s['labels_per_s']:.2f}"),
        ("click to stored p50 / p95 / max (s)",
         f"{s['click_to_stored_p50_s']:.3f} / {s['click_to_stored_p95_s']:.3f} / {s['click_to_stored_max_s']:.3f}"),
        ("errors: clicks refused", f"{e['refused']}"),
        ("connections lost between clicks / with a click under way", f"{e['closed']} / {e['dropped']}"),
        ("errors: (re)connections failed", f"{e['connect']}"),
        ("catalog rows / 'Saved' clicks", f"{c['rows']:,} / {c['saved']:,}"),
        ("lost / duplicated / changed / rows nobody clicked",
         f"{c['lost']} / {c['duplicated']} / {c['mismatched']} / {c['strangers']}"),
        ("clicks unanswered (connection lost), of them stored", f"{c['unknown']} / {c['unknown_stored']}"),
        *extra,
    ]
    width = max(len(k) for k, _ in rows)
    print(f"| {'what':<{width}} | value |\n|{'-' * (width + 2)}|-------|")
    for k, v in rows:
        print(f"| {k:<{width}} | {v} |")


def failover_run(args: argparse.Namespace, database_url: str, work: Path) -> int:
    """50 reviewers through the proxy over two replicas, one killed in the middle."""
    think = (args.think_min, args.think_max)
    kill_at = args.kill_at if args.kill_at is not None else args.seconds / 2
    env = {"CALIB_LOGIN_MAX_FAILURES": str(args.max_failures)}
    with deployment(work, database_url, judge_file(args.items), password=PASSWORD, sample_size=50, env=env) as d:
        spread = lockout_spread(d, args.max_failures)
        print(f"proxy {d.proxy.url}, replicas {[r.port for r in d.replicas]}; {args.reviewers} reviewers for "
              f"{args.seconds:g} s, think {think[0]:g}-{think[1]:g} s; SIGKILL of replica 0 at {kill_at:g} s",
              flush=True)
        troubles: list[Trouble] = []
        loads = LoadSampler(d)
        loads.start()
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.monotonic()
        until = t0 + args.seconds
        box: dict[str, list[Reviewer]] = {}
        runner = threading.Thread(target=lambda: box.update(
            r=run_reviewers(d.proxy.url, d.token, args.reviewers, until, think, troubles)))
        runner.start()
        time.sleep(max(0.0, t0 + kill_at - time.monotonic()))
        kill_t = time.monotonic()
        d.replicas[0].kill()
        restart_s = d.replicas[0].restart()
        print(f"replica 0 killed at {kill_t - t0:.1f} s, ready again {restart_s:.1f} s later", flush=True)
        after = lockout_after(d, spread["cookies"])  # type: ignore[arg-type]
        runner.join()
        wall = time.monotonic() - t0
        loads.stop.set()
        loads.join()
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        reviewers = box["r"]
        check = check_labels([c for rv in reviewers for c in rv.clicks], catalog_labels(database_url))
        logs = "".join(r.logs() for r in d.replicas)
    for what, text in [("refused click", t.detail) for t in troubles if t.what == "refused"][:3] + [
            ("replica log", tb) for tb in tracebacks(logs)[:3]]:
        print(f"--- {what}:\n{text}", flush=True)
    s = summary(reviewers, troubles, wall, check)
    # who was on the killed replica (lost a connection at the kill), and did everyone label afterwards?
    hit = sorted({t.reviewer for t in troubles if t.what in ("closed", "dropped") and t.at >= kill_t})
    back = [min((c.sent for c in rv.clicks if c.sent > kill_t and c.outcome == "saved"), default=None)
            for rv in reviewers if rv.name in hit]
    gaps = [b - kill_t for b in back if b is not None]
    before = [c.answered - c.sent for rv in reviewers for c in rv.clicks
              if c.outcome == "saved" and c.answered is not None and c.sent < kill_t]
    resumed = sum(any(c.sent > kill_t and c.outcome == "saved" for c in rv.clicks) for rv in reviewers)
    load = loads.samples or [os.getloadavg()[0]]
    s.update({
        "kill_at_s": round(kill_t - t0, 1), "restart_ready_s": round(restart_s, 1),
        "reviewers_on_killed_replica": len(hit), "resumed_after_kill": resumed,
        "first_saved_after_kill_p50_s": round(pct(gaps, 0.5), 1), "first_saved_after_kill_max_s": round(max(gaps, default=0), 1),
        "lockout_wrong_guesses": spread["wrong_guesses"], "lockout_right_password_after_restart": after,
        "load_avg_1min_mean": round(sum(load) / len(load), 2), "load_avg_1min_max": round(max(load), 2),
        "bench_cpu_s": round(cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime, 1),
        "replicas_cpu_s": round(loads.replica_cpu(), 1),
        "tracebacks_in_replica_logs": logs.count("Traceback"),
    })
    lock_ok = (spread["wrong_guesses"][-1] == "locked" and all(g == "wrong" for g in spread["wrong_guesses"][:-1])
               and after == ["locked", "locked"])
    print_table(s, [
        ("click to stored before the kill p50 / p95 (s)", f"{pct(before, 0.5):.3f} / {pct(before, 0.95):.3f}"),
        ("SIGKILL of replica 0 at / ready again after (s)", f"{s['kill_at_s']:g} / {s['restart_ready_s']:g}"),
        ("reviewers cut off by the kill; all reviewers saving after it",
         f"{len(hit)}; {resumed} of {len(reviewers)}"),
        ("first 'Saved' after the kill, cut-off reviewers p50 / max (s)",
         f"{s['first_saved_after_kill_p50_s']:g} / {s['first_saved_after_kill_max_s']:g}"),
        (f"lock-out: {args.max_failures} wrong passwords over both replicas",
         ", ".join(spread["wrong_guesses"])),  # type: ignore[arg-type]
        ("lock-out: right password after the restart, replica 0 / 1", " / ".join(after)),
        ("load average (1 min) mean / max", f"{s['load_avg_1min_mean']:.2f} / {s['load_avg_1min_max']:.2f}"),
        ("CPU of the replicas / of the clients' process (s)", f"{s['replicas_cpu_s']:g} / {s['bench_cpu_s']:g}"),
        ("replicas' CPU per saved label (s)", f"{s['replicas_cpu_s'] / max(1, s['saved']):.3f}"),
        ("tracebacks in the replicas' logs", f"{s['tracebacks_in_replica_logs']}"),
    ])
    if args.json:
        args.json.write_text(json.dumps(s, indent=2))
    ok = check.ok and check.saved > 0 and resumed == len(reviewers) and lock_ok
    print("PASS" if ok else "FAIL: " + "; ".join(
        w for w, bad in [("labels lost or duplicated", not check.ok), ("a reviewer did not resume", resumed < len(reviewers)),
                         ("the lock-out did not hold", not lock_ok)] if bad))
    return 0 if ok else 1


def capacity_run(args: argparse.Namespace, work: Path) -> int:
    """Reviewers on one replica, stepped until p95 click-to-stored passes the bound."""
    from tests.pgtest import fresh_database

    think = (args.think_min, args.think_max)
    print(f"one replica, think {think[0]:g}-{think[1]:g} s, {args.seconds:g} s per step, "
          f"bound: p95 click to stored <= {args.bound:g} s and no error", flush=True)
    print("| reviewers | labels/s | p50 (s) | p95 (s) | max (s) | errors | replica CPU s per label "
          "| load avg 1 min |\n|---|---|---|---|---|---|---|---|")
    held = 0
    for n in [int(x) for x in args.capacity.split(",")]:
        databases = fresh_database()
        url = next(databases)
        try:
            with deployment(work / f"cap{n}", url, judge_file(args.items), password=PASSWORD, sample_size=50) as d:
                troubles: list[Trouble] = []
                loads = LoadSampler(d)
                loads.start()
                t0 = time.monotonic()
                # replica 0 directly: one replica's capacity (the proxy and replica 1 idle)
                reviewers = run_reviewers(d.replicas[0].server.url, d.token, n, t0 + args.seconds, think, troubles,
                                          direct=True)
                wall = time.monotonic() - t0
                loads.stop.set()
                loads.join()
                check = check_labels([c for rv in reviewers for c in rv.clicks], catalog_labels(url))
        finally:
            databases.close()
        s = summary(reviewers, troubles, wall, check)
        errors = sum(s["errors"].values()) + (0 if check.ok else 1)  # no kill here: any lost connection counts
        load = loads.samples or [os.getloadavg()[0]]
        print(f"| {n} | {s['labels_per_s']:.2f} | {s['click_to_stored_p50_s']:.3f} | {s['click_to_stored_p95_s']:.3f} "
              f"| {s['click_to_stored_max_s']:.3f} | {errors} | {loads.replica_cpu() / max(1, s['saved']):.3f} "
              f"| {sum(load) / len(load):.2f} |", flush=True)
        if errors or not s["click_to_stored_p95_s"] <= args.bound:
            break
        held = n
    print(f"one replica held {held} concurrent reviewers within the bound" if held else "not even the first step")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reviewers", type=int, default=50, help="concurrent reviewers (default 50; at most 200)")
    ap.add_argument("--seconds", type=float, default=300.0, help="how long they label (default 300; at most 1800)")
    ap.add_argument("--think-min", type=float, default=2.0, help="shortest think time between clicks (s)")
    ap.add_argument("--think-max", type=float, default=8.0, help="longest think time between clicks (s)")
    ap.add_argument("--kill-at", type=float, default=None, help="second of the SIGKILL (default: the middle)")
    ap.add_argument("--items", type=int, default=2000, help="rows of the shared judge file (default 2000)")
    ap.add_argument("--max-failures", type=int, default=5, help="CALIB_LOGIN_MAX_FAILURES of the replicas")
    ap.add_argument("--capacity", default=None, help="comma-separated reviewer counts: measure one replica")
    ap.add_argument("--bound", type=float, default=1.0, help="p95 click-to-stored bound of --capacity (s)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)
    if not (1 <= args.reviewers <= 200 and 10 <= args.seconds <= 1800 and 0 < args.think_min <= args.think_max):
        ap.error("--reviewers 1..200, --seconds 10..1800, 0 < --think-min <= --think-max")
    if nginx_binary() is None:
        print("nginx is missing: apt-get install nginx-light (tests/run.sh does)", file=sys.stderr)
        return 2
    from tests.pgtest import _start_cluster, fresh_database

    if not (os.environ.get("CALIB_TEST_DATABASE_URL") or _start_cluster()):
        print("PostgreSQL is missing: apt-get install postgresql (tests/run.sh does)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="calib-load-") as tmp:
        if args.capacity:
            return capacity_run(args, Path(tmp))
        databases = fresh_database()
        try:
            return failover_run(args, next(databases), Path(tmp))
        finally:
            databases.close()


if __name__ == "__main__":
    sys.exit(main())
