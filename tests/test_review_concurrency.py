"""Five reviewers labelling at once under assignment, the server SIGKILLed in the middle
and restarted on the same data (issue 25's concurrency check, in miniature: the full two
minutes are ``bench/review_concurrency.py``).

A forked "server" process holds one store (as a dashboard process does) and runs five
reviewer threads; each asks for its next item, sometimes skips it, else labels it, and
writes one line to a pipe the moment the store acknowledged the label or skip (a line
under ``PIPE_BUF`` is written whole). The parent kills the server once enough labels
were acknowledged, starts another on the same data directory with the same reviewers,
and lets it run until no reviewer has an item left. Read with sqlite3: every acknowledged
label is stored, none twice, at most one label per reviewer thread more than was
acknowledged (written, the kill before the acknowledgement), every item has exactly the
labels planned (``round(0.3 * n)`` items two, counted here) and no hold is left over.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store
from calib.hosting.workflow import Workflow
from calib.labels import Label, review_plan
from calib.loading import load

pytestmark = pytest.mark.slow  # forks a server and kills it

CTX = multiprocessing.get_context("fork")
N, OVERLAP = 100, 0.3
REVIEWERS = [f"rev{i}" for i in range(5)]


def judge_data(n: int) -> bytes:
    """``n`` items, every one below the threshold 60 (all in the review queue)."""
    return "".join(json.dumps({"id": f"x{i:05d}", "confidence": 10 + i % 40, "correct": i % 2 == 0}) + "\n"
                   for i in range(n)).encode()


DATA = judge_data(N)
PLAN = review_plan(load("judge.jsonl", DATA, name="judge").rows, 60.0, sample_size=0, seed=0)
PLANS = {"judge": PLAN}
KEYS = [it.item for it in PLAN.items]


def serve(data_dir: str, token: str, fd: int, seconds: float, seed: int, plans: dict | None = None) -> None:
    """The server: five reviewer threads on one store, each acknowledging on ``fd``,
    until none has an item left or ``seconds`` passed."""
    plans = plans or PLANS
    keys = [it.item for it in plans["judge"].items]
    store = Store.open(data_dir)
    stop = time.monotonic() + seconds

    def reviewer(who: str) -> None:
        rng = random.Random(f"{seed}{who}")
        while time.monotonic() < stop:
            got = store.next_item(token, "", keys, who)
            assert got.ok
            if got.item is None:
                return
            if rng.random() < 0.03:
                assert store.skip_item(token, "", got.item, who).ok
                os.write(fd, f"skip\t{who}\t{got.item}\n".encode())
                continue
            label = Label(item=got.item, correct=rng.random() < 0.5, note="", reviewer=who, kind="queue")
            out = store.add_label(token, label, plans)
            assert out.ok, out.message
            os.write(fd, f"label\t{who}\t{got.item}\n".encode())

    threads = [threading.Thread(target=reviewer, args=(w,)) for w in REVIEWERS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    os._exit(0)


def acks_until(rfd: int, want: int, proc, timeout: float = 60.0) -> list[str]:
    """Lines read from the pipe until ``want`` labels were acknowledged or the server ended."""
    buf, lines = b"", []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        buf += chunk
        *done, buf = buf.split(b"\n")
        lines += [d.decode() for d in done]
        if sum(x.startswith("label") for x in lines) >= want or not proc.is_alive():
            break
    return lines


def drain_pipe(rfd: int) -> list[str]:
    out = b""
    while chunk := os.read(rfd, 65536):
        out += chunk
    return [x for x in out.decode().split("\n") if x]


def test_five_reviewers_a_sigkill_and_a_restart_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    store = Store.open(data_dir)
    share = store.share([DatasetSpec.from_upload("judge", "judge.jsonl", DATA)],
                        {"v": 1, "params": {"page": "review", "lo": "60"}})
    assert store.set_review(share.token, enabled=True, sample_size=0, owner_secret=share.owner_secret).ok
    assert store.set_workflow(share.token, Workflow(assign=True, overlap=OVERLAP), owner_secret=share.owner_secret).ok
    assert len(KEYS) == N
    acked: list[str] = []
    for phase in range(2):
        rfd, wfd = os.pipe()
        proc = CTX.Process(target=serve, args=(str(data_dir), share.token, wfd, 60.0, phase))
        proc.start()
        os.close(wfd)
        if phase == 0:  # killed in the middle: after a third of the planned labels
            acked += acks_until(rfd, int(N * (1 + OVERLAP) / 3), proc)
            os.kill(proc.pid, signal.SIGKILL)
            proc.join(30)
            assert proc.exitcode == -signal.SIGKILL
        else:
            proc.join(120)
            assert proc.exitcode == 0
        acked += drain_pipe(rfd)
        os.close(rfd)
    with sqlite3.connect(data_dir / "catalog.sqlite3") as con:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        rows = con.execute("SELECT reviewer, item FROM labels").fetchall()
        held = con.execute("SELECT COUNT(*) FROM assignments WHERE state = 'held'").fetchone()[0]
        skipped = set(con.execute("SELECT reviewer, item FROM assignments WHERE state = 'skipped'").fetchall())
    acked_labels = [tuple(x.split("\t")[1:]) for x in acked if x.startswith("label")]
    acked_skips = {tuple(x.split("\t")[1:]) for x in acked if x.startswith("skip")}
    assert len(set(acked_labels)) == len(acked_labels)  # no reviewer was handed an item twice
    assert len(set(rows)) == len(rows)  # no label stored twice
    assert set(acked_labels) <= set(rows)  # no acknowledged label lost
    assert len(rows) - len(acked_labels) <= len(REVIEWERS)  # written, killed before the acknowledgement
    assert acked_skips <= skipped
    per_item = Counter(item for _, item in rows)
    overlapped = round(OVERLAP * N)
    assert sorted(per_item[k] for k in KEYS) == [1] * (N - overlapped) + [2] * overlapped
    assert held == 0  # every hold was labelled or skipped, the killed server's too
