"""Issue 25's concurrency check at full length (not part of CI; the CI miniature is
tests/test_review_concurrency.py): five reviewers labelling at once under assignment for
two minutes, the server SIGKILLed in the middle and restarted on the same data.

A forked server process holds one store and runs five reviewer threads (next item,
sometimes a skip, else a label; each acknowledged on a pipe the moment the store returns).
After half the time the parent kills it (SIGKILL) and starts another on the same data
directory with the same reviewers for the other half. Then, read with sqlite3 (or
psycopg): acknowledged labels lost (must be 0), labels stored twice (0), labels written
but not acknowledged (at most one per reviewer), items over their planned labels (0),
and the throughput.

    nice -n 10 python bench/bench_review_concurrency.py                  # 2 minutes, SQLite
    nice -n 10 python bench/bench_review_concurrency.py --seconds 30 --items 3000
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calib.hosting.assignment import planned_labels  # noqa: E402
from calib.hosting.shares import DatasetSpec  # noqa: E402
from calib.hosting.store import Store  # noqa: E402
from calib.hosting.workflow import Workflow  # noqa: E402
from calib.labels import review_plan  # noqa: E402
from calib.loading import load  # noqa: E402
from tests.test_review_concurrency import CTX, REVIEWERS, acks_until, drain_pipe, judge_data, serve  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--items", type=int, default=20_000, help="items in the plan (enough not to run out)")
    ap.add_argument("--overlap", type=float, default=0.3)
    args = ap.parse_args()
    data = judge_data(args.items)
    plans = {"judge": review_plan(load("judge.jsonl", data, name="judge").rows, 60.0, sample_size=0, seed=0)}
    keys = [it.item for it in plans["judge"].items]
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        store = Store.open(data_dir)
        share = store.share([DatasetSpec.from_upload("judge", "judge.jsonl", data)],
                            {"v": 1, "params": {"page": "review", "lo": "60"}})
        store.set_review(share.token, enabled=True, sample_size=0, owner_secret=share.owner_secret)
        flow = Workflow(assign=True, overlap=args.overlap)
        store.set_workflow(share.token, flow, owner_secret=share.owner_secret)
        acked: list[str] = []
        t0 = time.monotonic()
        for phase in range(2):
            rfd, wfd = os.pipe()
            proc = CTX.Process(target=serve, args=(str(data_dir), share.token, wfd, args.seconds / 2, phase, plans))
            proc.start()
            os.close(wfd)
            if phase == 0:
                acked += acks_until(rfd, 10**9, proc, timeout=args.seconds / 2 - 1)
                os.kill(proc.pid, signal.SIGKILL)
            proc.join()
            acked += drain_pipe(rfd)
            os.close(rfd)
        elapsed = time.monotonic() - t0
        with sqlite3.connect(data_dir / "catalog.sqlite3") as con:
            rows = con.execute("SELECT reviewer, item FROM labels").fetchall()
    labels = [tuple(x.split("\t")[1:]) for x in acked if x.startswith("label")]
    planned = planned_labels(keys, flow, 0, "")
    per_item = Counter(i for _, i in rows)
    table = [
        ("reviewers", len(REVIEWERS)),
        ("seconds", f"{elapsed:.0f}"),
        ("labels acknowledged", len(labels)),
        ("labels stored", len(rows)),
        ("acknowledged but lost (must be 0)", len(set(labels) - set(rows))),
        ("stored twice (must be 0)", len(rows) - len(set(rows))),
        (f"written, not acknowledged (at most {len(REVIEWERS)})", len(set(rows) - set(labels))),
        ("items over their planned labels (must be 0)", sum(per_item[k] > planned[k] for k in per_item)),
        ("labels per second", f"{len(rows) / elapsed:.1f}"),
    ]
    for name, value in table:
        print(f"{name:<48} {value}")


if __name__ == "__main__":
    main()
