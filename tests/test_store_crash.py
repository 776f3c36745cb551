"""Crash safety of the share store: a process killed (SIGKILL) in the middle of a
share write leaves a catalog that opens, passes SQLite's integrity check and lists
only complete datasets; every link handed out before the kill still opens.

Each test forks a child that writes shares and is killed by the parent, either at
a chosen stage (through the store's ``on_stage`` instrumentation) or at random
times. The checks read the catalog with plain sqlite3 and hash the blob files with
hashlib, independently of the store's code.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store

pytestmark = pytest.mark.slow  # each test forks writers and kills them

CTX = multiprocessing.get_context("fork")
CSV = b"value,n,correct\n10,5,1\n50,10,5\n90,20,18\n"


def assert_consistent(data_dir: Path) -> int:
    """The catalog is sound and every listed thing is complete; returns the number of shares."""
    con = sqlite3.connect(data_dir / "catalog.sqlite3")
    try:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
        blobs = dict(con.execute("SELECT hash, size FROM blobs").fetchall())
        for digest, size in blobs.items():
            data = (data_dir / "blobs" / digest[:2] / digest).read_bytes()
            assert len(data) == size and hashlib.sha256(data).hexdigest() == digest
        for ds_id, spec in con.execute("SELECT id, spec FROM datasets"):
            rec = json.loads(spec)
            listed = [f["sha256"] for f in rec["files"]]
            linked = [r[0] for r in con.execute(
                "SELECT blob_hash FROM dataset_blobs WHERE dataset_id = ? ORDER BY position", (ds_id,))]
            assert listed == linked and listed and all(h in blobs for h in listed)
        shares = [r[0] for r in con.execute("SELECT id FROM shares")]
        for sid in shares:
            ds = [r[0] for r in con.execute("SELECT dataset_id FROM share_datasets WHERE share_id = ?", (sid,))]
            assert ds, f"share {sid} has no dataset"
            for d in ds:
                assert con.execute("SELECT 1 FROM datasets WHERE id = ?", (d,)).fetchone()
        return len(shares)
    finally:
        con.close()


def payload(i: int, size: int) -> bytes:
    """A distinct, valid count table of roughly ``size`` bytes."""
    head = b"value,n,correct\n"
    rows = b"".join(b"%d,%d,%d\n" % (v % 101, 10 + i, v % 7) for v in range(max(1, size // 12)))
    return head + rows


def _stage_child(data_dir: str, stage: str, conn, data: bytes) -> None:
    def hook(name: str) -> None:
        if name == stage:
            conn.send(name)
            time.sleep(120)  # killed here

    store = Store.open(data_dir, on_stage=hook)
    store.share([DatasetSpec.from_upload("victim", "victim.csv", data)], {"threshold": 0.5})
    conn.send("finished")  # never reached: the test fails if it is


def _kill_at(data_dir: Path, stage: str, data: bytes) -> None:
    parent, child = CTX.Pipe(duplex=False)
    proc = CTX.Process(target=_stage_child, args=(str(data_dir), stage, child, data))
    proc.start()
    try:
        assert parent.poll(60), "child never reached the stage"
        assert parent.recv() == stage
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(30)
    assert proc.exitcode == -signal.SIGKILL


@pytest.mark.parametrize("stage", ["blob_partial", "blobs_written", "before_commit"])
def test_kill_mid_write_leaves_only_complete_datasets(tmp_path: Path, stage: str) -> None:
    data_dir = tmp_path / "data"
    store = Store.open(data_dir)
    kept = store.share([DatasetSpec.from_upload("kept", "kept.csv", CSV)], {"threshold": 80})
    victim = payload(1, 300_000)

    _kill_at(data_dir, stage, victim)

    # As the crash left it: sound, and nothing of the victim is listed.
    assert assert_consistent(data_dir) == 1
    vh = hashlib.sha256(victim).hexdigest()
    con = sqlite3.connect(data_dir / "catalog.sqlite3")
    assert con.execute("SELECT COUNT(*) FROM blobs WHERE hash = ?", (vh,)).fetchone()[0] == 0
    con.close()
    temps = list((data_dir / "blobs").glob("*/.tmp-*"))
    assert bool(temps) == (stage == "blob_partial")

    # Restart: the leftovers of the dead writer are cleaned; the old link still works.
    reopened = Store.open(data_dir)
    assert reopened.integrity_check() == "ok"
    assert list((data_dir / "blobs").glob("*/.tmp-*")) == []
    assert assert_consistent(data_dir) == 1
    got = reopened.open_share(kept.token)
    assert got.available and got.share.datasets[0].files[0].data == CSV
    # The same upload can be shared after the crash (a complete orphan blob is reused).
    again = reopened.share([DatasetSpec.from_upload("victim", "victim.csv", victim)], {})
    assert reopened.open_share(again.token).share.datasets[0].files[0].data == victim
    assert assert_consistent(data_dir) == 2


def _loop_child(data_dir: str, conn, seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Payloads are built before the loop so that the kill lands in the store's work
    # (hashing, writing, fsync, commit), not in building test data.
    bases = [payload(seed * 100 + k, int(rng.integers(1_000, 2_000_000))) for k in range(4)]
    store = Store.open(data_dir)
    conn.send_bytes(b"ready")
    i = 0
    while True:
        i += 1
        specs = [
            DatasetSpec.from_upload(f"m{k}", f"f{k}.csv", bases[(i + k) % 4] + b"%d,1,%d\n" % (i % 101, i % 2))
            for k in range(1 + i % 2)
        ]
        # reuse an earlier upload now and then, so dedup paths are killed too
        if i % 3 == 0:
            specs.append(DatasetSpec.from_upload("common", "common.csv", CSV))
        r = store.share(specs, {"i": i})
        conn.send_bytes(r.token.encode())  # < PIPE_BUF: written atomically or not at all


def test_kill_at_random_times_then_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    Store.open(data_dir)
    rng = np.random.default_rng(20241130)
    handed_out: list[str] = []
    for round_ in range(6):
        parent, child = CTX.Pipe(duplex=False)
        proc = CTX.Process(target=_loop_child, args=(str(data_dir), child, round_))
        proc.start()
        child.close()
        assert parent.poll(60) and parent.recv_bytes() == b"ready"
        time.sleep(float(rng.uniform(0.05, 0.8)))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(30)
        while True:
            try:
                handed_out.append(parent.recv_bytes().decode())
            except (EOFError, OSError):
                break
        assert assert_consistent(data_dir) >= 0
        store = Store.open(data_dir)
        assert store.integrity_check() == "ok"
        assert list((data_dir / "blobs").glob("*/.tmp-*")) == []
        assert assert_consistent(data_dir) >= len(handed_out)
        # Every link returned before the kill survives it, with intact data.
        for token in handed_out:
            got = store.open_share(token)
            assert got.available, (round_, got.status)
    assert handed_out, "the writer never finished a share; lengthen the delays"
