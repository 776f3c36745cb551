"""Labels kept in the share store (calib.hosting.labels): history, scoping by the link
token, the owner's setting, validation at the boundary, concurrency (threads and two
processes), migration of a version-1 catalog, crash safety (SIGKILL mid-write) and
permissions.

Everything the store keeps is checked with plain sqlite3 (or against the labels the test
itself wrote), never through the code under test alone; messages are checked word for word.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from calib.errors import CalibError
from calib.hosting import labels as hl
from calib.hosting.shares import NOT_OWNER_MESSAGE, DatasetSpec
from calib.hosting.store import Store
from calib.labels import Label, current, review_plan
from calib.loading import load
from tests.test_store_crash import assert_consistent
from tests.test_store_permissions import assert_private

CTX = multiprocessing.get_context("fork")
THRESHOLD = 60.0


def judge_file(n: int = 60, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        conf = int(rng.integers(1, 11)) * 10
        lines.append(
            json.dumps(
                {
                    "id": f"q{i:03d}",
                    "subject": ["law", "math"][i % 2],
                    "confidence": conf,
                    "correct": bool(rng.random() < conf / 100),
                    "question": f"question {i}",
                }
            )
        )
    return ("\n".join(lines) + "\n").encode()


DATA = judge_file()
OTHER = judge_file(40, seed=1)


def plan_of(data: bytes, name: str = "judge.jsonl", size: int = 10, seed: int = 0):
    return review_plan(load(name, data, name=name).rows, THRESHOLD, sample_size=size, seed=seed)


PLAN = plan_of(DATA)
PLANS = {"judge": PLAN}


def make_share(store: Store, data: bytes = DATA, *, enable: bool = True, ttl_days: float | None = None):
    view = {"v": 1, "params": {"page": "routing", "lo": "60"}}  # the owner's threshold: THRESHOLD
    r = store.share([DatasetSpec.from_upload("judge", "judge.jsonl", data)], view, ttl_days=ttl_days)
    if enable:
        assert store.set_review(r.token, enabled=True, sample_size=10, owner_secret=r.owner_secret).ok
    return r


def lab(item: str, correct: bool = True, reviewer: str = "ann", kind: str = "queue", note: str = "") -> Label:
    return Label(item=item, correct=correct, note=note, reviewer=reviewer, kind=kind)


def rows_of(data_dir: Path) -> list[tuple]:
    """Every label row, read with plain sqlite3."""
    with sqlite3.connect(data_dir / "catalog.sqlite3") as con:
        return con.execute(
            "SELECT share_id, dataset, item, correct, note, reviewer, kind FROM labels ORDER BY id"
        ).fetchall()


class Clock:
    """A clock the test moves; it starts at the real time (whole seconds), so that a
    store opened with the real clock in another process agrees on what has expired."""

    def __init__(self) -> None:
        self.t = float(int(time.time()))

    def __call__(self) -> float:
        return self.t


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    return Store.open(tmp_path / "data", clock=Clock())


# ------------------------------------------------------------------ history
def test_a_changed_label_keeps_its_history_and_current_is_the_latest(store: Store) -> None:
    r = make_share(store)
    a, b = PLAN.queue[0].item, PLAN.queue[1].item
    clock = store.clock
    t0 = int(clock.t)
    for item, correct, who in [(a, True, "ann"), (a, False, "bob"), (b, True, "ann")]:
        assert store.add_label(r.token, lab(item, correct, who), PLANS).status == "saved"
        clock.t += 1
    assert store.add_label(
        r.token, lab(a, False, "ann", note="second look"), PLANS
    ).ok  # ann changes her mind
    got = store.labels(r.token).labels
    assert [(g.item, g.correct, g.reviewer, g.note) for g in got] == [
        (a, True, "ann", ""),
        (a, False, "bob", ""),
        (b, True, "ann", ""),
        (a, False, "ann", "second look"),
    ]
    # times are the server's clock, ISO-8601 UTC, one second apart
    assert [g.time for g in got] == [
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0 + k)) for k in range(4)
    ]
    now = {(g.item, g.reviewer): g.correct for g in current(got)}
    assert now == {(a, "ann"): False, (a, "bob"): False, (b, "ann"): True}
    assert len(rows_of(store.data_dir)) == 4  # nothing overwritten


def test_the_reviewer_name_is_trimmed_and_a_single_dataset_is_stored_as_empty(store: Store) -> None:
    r = make_share(store)
    item = PLAN.audit[0].item
    assert store.add_label(
        r.token, Label(item, False, reviewer="  Ann  ", kind="audit", dataset="judge"), PLANS
    ).ok
    assert rows_of(store.data_dir)[0][1:] == ("", item, 0, "", "Ann", "audit")


# ------------------------------------------------------------------ scoping
def test_a_token_reaches_only_its_own_share(store: Store) -> None:
    x, y = make_share(store), make_share(store, OTHER)
    plan_y = {"judge": plan_of(OTHER)}
    assert store.add_label(x.token, lab(PLAN.queue[0].item), PLANS).ok
    assert store.add_label(y.token, lab(plan_y["judge"].queue[0].item, reviewer="yves"), plan_y).ok
    assert [g.reviewer for g in store.labels(x.token).labels] == ["ann"]
    assert [g.reviewer for g in store.labels(y.token).labels] == ["yves"]
    # x's token with y's plan (an item only y has) is refused: the catalog checks x's datasets,
    # and the row would land under x anyway (the token decides the share, never the caller)
    only_y = next(i.item for i in plan_y["judge"].queue if i.item not in {j.item for j in PLAN.items})
    out = store.add_label(x.token, lab(only_y), {"judge": PLAN})
    assert (out.ok, out.message) == (
        False,
        f"item {only_y!r} is not in this link's review queue or audit sample",
    )
    with sqlite3.connect(store.catalog_path) as con:
        per_share = dict(con.execute("SELECT share_id, COUNT(*) FROM labels GROUP BY share_id").fetchall())
    assert per_share == {x.share_id: 1, y.share_id: 1}
    # the owner secret of y does not read x through x's token being wrong, nor does a bad token
    for bad in ["", "x" * 32, x.token[:-1], y.share_id, "../" + x.token]:
        assert store.labels(bad).message == hl.NOT_REVIEWABLE_MESSAGE
        assert store.add_label(bad, lab(PLAN.queue[0].item), PLANS).status == "not_available"


def test_reviewing_is_off_by_default_and_only_the_owner_turns_it_on(store: Store) -> None:
    r = make_share(store, enable=False)
    assert store.review_setting(r.token) == hl.ReviewSetting(False, hl.DEFAULT_SAMPLE_SIZE, 0)
    refused = store.add_label(r.token, lab(PLAN.queue[0].item), PLANS)
    assert (refused.ok, refused.status, refused.message) == (
        False,
        "not_available",
        hl.NOT_REVIEWABLE_MESSAGE,
    )
    other = make_share(store)
    for secret, user in [(None, None), (other.owner_secret, None), ("x" * 43, None), (None, "someone@x.org")]:
        out = store.set_review(r.token, enabled=True, owner_secret=secret, user=user)
        assert (out.ok, out.status, out.message) == (False, "not_owner", NOT_OWNER_MESSAGE)
    assert store.review_setting(r.token).enabled is False
    out = store.set_review(r.token, enabled=True, sample_size=25, seed=7, owner_secret=r.owner_secret)
    assert out.message == "Reviewing is on: reviewers with the link can label (audit sample of 25, seed 7)."
    assert store.review_setting(r.token) == hl.ReviewSetting(True, 25, 7)
    # a logged-in owner needs no secret
    mine = store.share([DatasetSpec.from_upload("judge", "judge.jsonl", DATA)], {}, owner_user="Owner@X.org")
    assert store.set_review(mine.token, enabled=True, user="owner@x.org").ok
    with pytest.raises(
        CalibError, match=r"^the audit sample size must be a whole number from 0 to 5,000, got 5001$"
    ):
        store.set_review(r.token, enabled=True, sample_size=5001, owner_secret=r.owner_secret)
    with pytest.raises(CalibError, match=r"^the seed must be a whole number from 0 to 4294967295, got -1$"):
        store.set_review(r.token, enabled=True, seed=-1, owner_secret=r.owner_secret)


def test_reviewing_off_again_stops_labels_but_the_owner_still_reads_them(store: Store) -> None:
    r = make_share(store)
    assert store.add_label(r.token, lab(PLAN.queue[0].item), PLANS).ok
    off = store.set_review(r.token, enabled=False, owner_secret=r.owner_secret)
    assert off.message == "Reviewing is off: the link is read-only again; the labels are kept."
    assert store.add_label(r.token, lab(PLAN.queue[1].item), PLANS).status == "not_available"
    assert store.labels(r.token).status == "not_available"
    assert len(store.labels(r.token, owner_secret=r.owner_secret).labels) == 1


def test_revoked_expired_and_deleted_shares(tmp_path: Path) -> None:
    clock = Clock()
    store = Store.open(tmp_path / "data", clock=clock)
    revoked, expired, deleted = make_share(store), make_share(store, ttl_days=1), make_share(store)
    for r in (revoked, expired, deleted):
        assert store.add_label(r.token, lab(PLAN.queue[0].item), PLANS).ok
    assert store.revoke(revoked.token, owner_secret=revoked.owner_secret).ok
    clock.t += 2 * 86400
    for r in (revoked, expired):
        assert store.add_label(r.token, lab(PLAN.queue[1].item), PLANS).status == "not_available"
        assert store.labels(r.token).message == hl.NOT_REVIEWABLE_MESSAGE
        assert store.review_setting(r.token) is None
        assert len(store.labels(r.token, owner_secret=r.owner_secret).labels) == 1  # the owner may still read
        assert store.set_review(r.token, enabled=True, owner_secret=r.owner_secret).status == "not_available"
    # deleting removes the labels and the setting in the same transaction (checked with sqlite3)
    assert store.delete(deleted.token, owner_secret=deleted.owner_secret).ok
    with sqlite3.connect(store.catalog_path) as con:
        left = {r[0] for r in con.execute("SELECT share_id FROM labels")}
        settings = {r[0] for r in con.execute("SELECT share_id FROM reviewing")}
    assert deleted.share_id not in left | settings and revoked.share_id in left
    assert store.labels(deleted.token, owner_secret=deleted.owner_secret).status == "not_available"
    # the sweep removes the expired share with its labels; the revoked one keeps its labels for its owner
    store.sweep()
    assert [r[0] for r in rows_of(store.data_dir)] == [revoked.share_id]
    assert len(store.labels(revoked.token, owner_secret=revoked.owner_secret).labels) == 1
    assert store.labels(expired.token, owner_secret=expired.owner_secret).status == "not_available"
    # and goes when its owner deletes it
    assert store.delete(revoked.token, owner_secret=revoked.owner_secret).ok
    assert rows_of(store.data_dir) == []


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    ("label", "message"),
    [
        (lab("nope"), "item 'nope' is not in this link's review queue or audit sample"),
        (
            lab(PLAN.queue[0].item, kind="audit"),
            f"item {PLAN.queue[0].item!r} is in the queue list, not the audit list",
        ),
        (lab(PLAN.queue[0].item, reviewer="   "), f"item {PLAN.queue[0].item!r}: reviewer is empty"),
        (
            lab(PLAN.queue[0].item, reviewer="a\nb"),
            f"item {PLAN.queue[0].item!r}: the reviewer's name contains U+000A (a control character), a "
            "character that is not seen or changes how the text around it reads: type the name without it",
        ),
        (
            lab(PLAN.queue[0].item, reviewer="r" * 201),
            f"item {PLAN.queue[0].item!r}: reviewer is 201 characters, over the 200 allowed",
        ),
        (
            lab(PLAN.queue[0].item, note="n" * 501),
            f"item {PLAN.queue[0].item!r}: note is 501 characters, over the 500 allowed",
        ),
        (
            lab(PLAN.queue[0].item, kind="other"),
            f"item {PLAN.queue[0].item!r}: kind must be 'queue', 'audit' or 'adjudication', got 'other'",
        ),
        (
            Label(PLAN.queue[0].item, 1, reviewer="ann"),
            f"item {PLAN.queue[0].item!r}: correct must be true or false, got 1",
        ),
        (
            Label(PLAN.queue[0].item, True, reviewer="ann", dataset="another"),
            f"item {PLAN.queue[0].item!r}: dataset 'another' is not in this link",
        ),
    ],
)
def test_a_bad_label_is_refused_with_its_reason_and_nothing_is_written(
    store: Store, label: Label, message: str
) -> None:
    r = make_share(store)
    out = store.add_label(r.token, label, PLANS)
    assert (out.ok, out.status, out.message) == (False, "invalid", message)
    assert rows_of(store.data_dir) == []


def test_a_share_holds_at_most_the_cap(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hl, "MAX_LABELS_PER_SHARE", 3)
    r, other = make_share(store), make_share(store)
    for k in range(3):
        assert store.add_label(r.token, lab(PLAN.queue[0].item, k % 2 == 0), PLANS).ok
    out = store.add_label(r.token, lab(PLAN.queue[0].item), PLANS)
    assert (out.ok, out.status, out.message) == (False, "full", hl.FULL_MESSAGE)
    assert hl.FULL_MESSAGE.startswith("This link holds the most labels it can keep (100,000)")
    assert len(rows_of(store.data_dir)) == 3
    assert store.add_label(other.token, lab(PLAN.queue[0].item), PLANS).ok  # per share, not per server


def test_import_is_owner_only_keeps_times_and_names_each_refused_label(store: Store) -> None:
    r = make_share(store)
    good = [
        Label(PLAN.queue[0].item, True, reviewer="imp", time="2026-01-02T03:04:05Z"),
        Label(PLAN.audit[0].item, False, reviewer="imp", time="2026-01-02T03:04:06Z", kind="audit"),
    ]
    bad = Label("ghost", True, reviewer="imp", time="2026-01-02T03:04:07Z")
    refused = store.import_labels(r.token, [*good, bad], PLANS)
    assert (refused.ok, refused.status) == (False, "not_owner") and rows_of(store.data_dir) == []
    out = store.import_labels(r.token, [good[0], bad, good[1]], PLANS, owner_secret=r.owner_secret)
    assert (out.ok, out.written, out.message) == (True, 2, "Imported 2 label(s); 1 left out:")
    assert out.rejected == ("label 2: item 'ghost' is not in this link's review queue or audit sample",)
    assert store.labels(r.token).labels == tuple(good)


# ------------------------------------------------------------------ concurrency
def _writer(data_dir: str, token: str, who: str, items: list[str], out) -> None:
    store = Store.open(data_dir)
    ok = 0
    for k, item in enumerate(items):
        kind = "audit" if item in {i.item for i in PLAN.audit} else "queue"
        ok += store.add_label(token, lab(item, k % 2 == 0, who, kind=kind), PLANS).ok
    out.put(ok) if hasattr(out, "put") else out.append(ok)


@pytest.mark.slow  # forks two writer processes: 3 s
def test_threads_and_two_processes_writing_at_once_lose_nothing(store: Store) -> None:
    r = make_share(store)
    items = [i.item for i in PLAN.items]
    per = 3 * len(items)
    work = items * 3
    results: list[int] = []
    queue = CTX.Queue()
    procs = [
        CTX.Process(target=_writer, args=(str(store.data_dir), r.token, f"proc{p}", work, queue))
        for p in range(2)
    ]
    threads = [
        threading.Thread(target=_writer, args=(str(store.data_dir), r.token, f"thread{t}", work, results))
        for t in range(4)
    ]
    for p in procs:
        p.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    results += [queue.get(timeout=10) for _ in procs]
    assert results == [per] * 6
    rows = rows_of(store.data_dir)
    assert len(rows) == 6 * per
    for who in [f"proc{p}" for p in range(2)] + [f"thread{t}" for t in range(4)]:
        mine = [(item, bool(c)) for _, _, item, c, _, w, _ in rows if w == who]
        assert mine == [(item, k % 2 == 0) for k, item in enumerate(work)]  # every one, in its order


# ------------------------------------------------------------------ migration
def test_a_version_1_catalog_is_migrated_in_place(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    store = Store.open(data_dir)
    old = store.share([DatasetSpec.from_upload("judge", "judge.jsonl", DATA)], {"v": 1})
    # make it exactly what calib before reviewing left: no review tables, user_version 1
    with sqlite3.connect(store.catalog_path) as con:
        con.execute("DROP TABLE labels")
        con.execute("DROP TABLE reviewing")
        con.execute("DROP TABLE login_failures")
        con.execute("DROP TABLE adjudications")
        con.execute("DROP TABLE assignments")
        con.execute("PRAGMA user_version=1")
    store = Store.open(data_dir)
    with sqlite3.connect(store.catalog_path) as con:
        assert con.execute("PRAGMA user_version").fetchone() == (4,)
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"shares", "labels", "reviewing", "login_failures", "adjudications", "assignments"} <= tables
    assert store.open_share(old.token).available  # the old link still opens...
    assert store.review_setting(old.token) == hl.ReviewSetting()  # ...with reviewing off
    assert store.set_review(old.token, enabled=True, sample_size=10, owner_secret=old.owner_secret).ok
    assert store.add_label(old.token, lab(PLAN.queue[0].item), PLANS).ok
    assert Store.open(data_dir).labels(old.token).labels[0].item == PLAN.queue[0].item  # reopening is a no-op
    with sqlite3.connect(store.catalog_path) as con:
        con.execute("PRAGMA user_version=5")
    with pytest.raises(CalibError, match=r"written by a newer calib \(schema 5\); upgrade calib$"):
        Store.open(data_dir)


# ------------------------------------------------------------------ crash safety
def _stage_child(data_dir: str, token: str, conn) -> None:
    def hook(name: str) -> None:
        if name == "labels_before_commit":
            conn.send(name)
            time.sleep(120)  # killed here

    Store.open(data_dir, on_stage=hook).add_label(token, lab(PLAN.queue[1].item, reviewer="victim"), PLANS)
    conn.send("finished")  # never reached


def test_a_label_killed_before_its_commit_leaves_nothing(store: Store) -> None:
    r = make_share(store)
    assert store.add_label(r.token, lab(PLAN.queue[0].item), PLANS).ok
    parent, child = CTX.Pipe(duplex=False)
    proc = CTX.Process(target=_stage_child, args=(str(store.data_dir), r.token, child))
    proc.start()
    try:
        assert parent.poll(60) and parent.recv() == "labels_before_commit"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(30)
    assert proc.exitcode == -signal.SIGKILL
    assert assert_consistent(store.data_dir) == 1
    assert [w for *_, w, _ in rows_of(store.data_dir)] == ["ann"]
    again = Store.open(store.data_dir)
    assert again.integrity_check() == "ok"
    assert again.add_label(r.token, lab(PLAN.queue[1].item, reviewer="after"), PLANS).ok


def _loop_child(data_dir: str, token: str, conn) -> None:
    store = Store.open(data_dir)
    items = [i.item for i in PLAN.queue]
    conn.send_bytes(b"ready")
    k = 0
    while True:
        item = items[k % len(items)]
        if store.add_label(token, lab(item, k % 3 == 0, reviewer="loop", note=f"n{k}"), PLANS).ok:
            conn.send_bytes(f"n{k}".encode())  # acknowledged only after the commit
        k += 1


def test_labels_acknowledged_before_a_sigkill_survive_it(store: Store) -> None:
    r = make_share(store)
    rng = np.random.default_rng(12)
    acknowledged: list[str] = []
    for _ in range(4):
        parent, child = CTX.Pipe(duplex=False)
        proc = CTX.Process(target=_loop_child, args=(str(store.data_dir), r.token, child))
        proc.start()
        child.close()
        assert parent.poll(60) and parent.recv_bytes() == b"ready"
        time.sleep(float(rng.uniform(0.1, 0.6)))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(30)
        while True:
            try:
                acknowledged.append(parent.recv_bytes().decode())
            except (EOFError, OSError):
                break
        again = Store.open(store.data_dir)
        assert again.integrity_check() == "ok" and assert_consistent(store.data_dir) == 1
        notes = [note for _, _, _, _, note, w, _ in rows_of(store.data_dir) if w == "loop"]
        assert set(acknowledged) <= set(notes)
        assert len(notes) <= len(acknowledged) + 4  # at most the one in flight per kill was committed unsent
    assert len(acknowledged) > 4, "the writer never committed; lengthen the delays"


# ------------------------------------------------------------------ permissions
def test_label_writes_keep_the_data_directory_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        store = Store.open(tmp_path / "data")
        r = make_share(store)
        assert store.add_label(r.token, lab(PLAN.queue[0].item), PLANS).ok
        with sqlite3.connect(store.catalog_path) as con:  # a reader holds the WAL open
            assert con.execute("SELECT COUNT(*) FROM labels").fetchone() == (1,)
            got = assert_private(store.data_dir)
    finally:
        os.umask(old)
    assert {"catalog.sqlite3", "catalog.sqlite3-wal", "catalog.sqlite3-shm"} <= set(got)


# ------------------------------------------------------------------ calib labels
def test_cli_export_and_import_through_the_data_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.cli_run import run

    data_dir = tmp_path / "data"
    store = Store.open(data_dir)
    r = make_share(store)
    assert store.add_label(r.token, lab(PLAN.queue[0].item, note='=HYPERLINK("x")'), PLANS).ok
    assert store.add_label(r.token, lab(PLAN.audit[0].item, False, "bob", kind="audit"), PLANS).ok
    monkeypatch.delenv("CALIB_SHARE_TOKEN", raising=False)
    monkeypatch.delenv("CALIB_OWNER_SECRET", raising=False)
    monkeypatch.setenv("CALIB_DATA_DIR", str(data_dir))
    link = f"http://host:8501/Review?share={r.token}&page=review"
    # export, both formats, the token given as the whole link
    code, _, err = run(["labels", "export", "--token", link, "-o", tmp_path / "l.csv"], capsys)
    assert (code, err) == (0, f"calib: wrote 2 label(s) to {tmp_path / 'l.csv'}\n")
    lines = (tmp_path / "l.csv").read_text().splitlines()
    assert lines[0] == '"dataset","item","correct","note","reviewer","time","kind","unsure","judge_shown","reasons"'
    assert "'=HYPERLINK" in lines[1]  # spreadsheet-safe
    code, _, _ = run(["labels", "export", "--token", r.token, "-o", tmp_path / "l.jsonl"], capsys)
    back = [json.loads(x) for x in (tmp_path / "l.jsonl").read_text().splitlines()]
    assert [(b["item"], b["correct"], b["reviewer"], b["note"]) for b in back] == [
        (PLAN.queue[0].item, True, "ann", '=HYPERLINK("x")'),
        (PLAN.audit[0].item, False, "bob", ""),
    ]
    # import: owner only; the good lines are appended, the bad ones named
    extra = tmp_path / "more.jsonl"
    extra.write_text(
        json.dumps(
            {
                "item": PLAN.queue[1].item,
                "correct": False,
                "reviewer": "cli",
                "time": "2026-02-03T04:05:06Z",
                "kind": "queue",
                "dataset": "",
                "note": "",
            }
        )
        + "\n"
        + json.dumps({"item": "ghost", "correct": True, "reviewer": "cli", "time": "2026-02-03T04:05:06Z"})
        + "\n"
        + '{"item": "q001", "correct": "maybe", "reviewer": "cli", "time": "2026-02-03T04:05:06Z"}\n'
    )
    code, _, err = run(["labels", "import", extra, "--token", r.token], capsys)
    assert (code, err) == (
        2,
        "calib: --owner-secret: importing labels is the link owner's (or set CALIB_OWNER_SECRET)\n",
    )
    code, _, err = run(["labels", "import", extra, "--token", r.token, "--owner-secret", "y" * 43], capsys)
    assert (code, err) == (2, "calib: Only the owner of this link can import labels.\n")
    monkeypatch.setenv("CALIB_OWNER_SECRET", r.owner_secret)
    code, _, err = run(["labels", "import", extra, "--token", r.token], capsys)
    assert code == 1
    assert err.splitlines() == [
        "calib: more.jsonl line 3: correct must be true or false, got 'maybe'",
        "calib: label 2: item 'ghost' is not in this link's review queue or audit sample",
        "calib: imported 1 label(s) from more.jsonl; 2 left out",
    ]
    assert [w for *_, w, _ in rows_of(data_dir)] == ["ann", "bob", "cli"]
    # the exported file imports back: the history doubles, nothing else changes
    code, _, err = run(["labels", "import", tmp_path / "l.csv", "--token", r.token], capsys)
    assert (code, err) == (0, "calib: imported 2 label(s) from l.csv\n"), err
    assert store.labels(r.token).labels[3:] == store.labels(r.token).labels[:2]
    # reviewing off: the owner still exports, nobody else
    assert store.set_review(r.token, enabled=False, owner_secret=r.owner_secret).ok
    code, _, _ = run(["labels", "export", "--token", r.token, "-o", tmp_path / "after.jsonl"], capsys)
    assert code == 0 and len((tmp_path / "after.jsonl").read_text().splitlines()) == 5
    monkeypatch.delenv("CALIB_OWNER_SECRET")
    code, _, err = run(["labels", "export", "--token", r.token, "-o", tmp_path / "x.jsonl"], capsys)
    assert (code, err) == (2, f"calib: {hl.NOT_REVIEWABLE_MESSAGE}\n")
    # revoked: opening the data directory sweeps, and keeps the labelled share for its owner
    assert store.revoke(r.token, owner_secret=r.owner_secret).ok
    code, _, err = run(["labels", "export", "--token", r.token, "-o", tmp_path / "revoked.jsonl",
                        "--owner-secret", r.owner_secret], capsys)
    assert code == 0, err
    assert len((tmp_path / "revoked.jsonl").read_text().splitlines()) == 5
    code, _, err = run(["labels", "export", "--token", r.token, "-o", tmp_path / "y.jsonl"], capsys)
    assert (code, err) == (2, f"calib: {hl.NOT_REVIEWABLE_MESSAGE}\n")
    assert store.delete(r.token, owner_secret=r.owner_secret).ok
    assert rows_of(data_dir) == []
    code, _, err = run(["labels", "export", "--token", r.token, "--data-dir", tmp_path / "nowhere"], capsys)
    assert (code, err) == (2, f"calib: --data-dir {tmp_path / 'nowhere'}: no such folder\n")


def test_new_tokens_and_owner_secrets_never_begin_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value beginning with "-" broke ``--token VALUE`` one paste in 64 (it failed CI once)."""
    from calib.hosting import shares

    drawn = iter(["-" + "a" * 31, "--" + "b" * 30, "c" * 32])
    monkeypatch.setattr(shares.secrets, "token_urlsafe", lambda n: next(drawn))
    assert shares.new_secret(24) == "c" * 32  # drawn again until it does not start with "-"
    monkeypatch.undo()
    tokens = [shares.new_secret(shares.TOKEN_BYTES) for _ in range(20_000)]
    assert all(shares.valid_token(t) for t in tokens)
    assert not [t for t in tokens if t.startswith("-")]
    # every other first character still occurs: 63 of the 64
    assert len({t[0] for t in tokens}) == 63
    assert len(set(tokens)) == len(tokens)
    secret = shares.new_secret(shares.OWNER_SECRET_BYTES)
    assert len(secret) == shares.OWNER_SECRET_CHARS and not secret.startswith("-")


def test_cli_reads_a_token_and_an_owner_secret_that_begin_with_a_dash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shares made before new_secret may have such values: ``--token -Xy…`` still works,
    with a space or with ``=``; a word of another shape after the flag is left to argparse."""
    from calib.hosting import store as store_module
    from tests.cli_run import run

    token, secret = "-" + "T" * 31, "-" + "S" * 42
    drawn = iter([token, secret])
    monkeypatch.setattr(store_module, "new_secret", lambda n: next(drawn))
    data_dir = tmp_path / "data"
    store = Store.open(data_dir)
    r = make_share(store)
    assert (r.token, r.owner_secret) == (token, secret)
    assert store.add_label(r.token, lab(PLAN.queue[0].item), PLANS).ok
    assert store.set_review(r.token, enabled=False, owner_secret=secret).ok  # export is the owner's now
    for var in ("CALIB_SHARE_TOKEN", "CALIB_OWNER_SECRET"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CALIB_DATA_DIR", str(data_dir))
    for i, flags in enumerate([["--token", token, "--owner-secret", secret],
                               [f"--token={token}", f"--owner-secret={secret}"]]):
        out = tmp_path / f"l{i}.jsonl"
        code, _, err = run(["labels", "export", *flags, "-o", out], capsys)
        assert (code, err) == (0, f"calib: wrote 1 label(s) to {out}\n")
        assert json.loads(out.read_text())["item"] == PLAN.queue[0].item
    # the owner secret with the wrong shape stays argparse's error, word for word
    with pytest.raises(SystemExit) as exc:
        run(["labels", "export", "--token", token, "--owner-secret", "-" + "S" * 41], capsys)
    assert exc.value.code == 2
    assert capsys.readouterr().err.endswith("error: argument --owner-secret: expected one argument\n")


def test_attach_dash_values_joins_only_a_value_of_the_flags_own_shape() -> None:
    from calib.cli.labels import attach_dash_values
    from calib.hosting.shares import OWNER_SECRET_CHARS, TOKEN_CHARS

    # the CLI writes the shapes out (no engine import): they must stay those of the store
    token, secret = "-" + "a" * (TOKEN_CHARS - 1), "-" + "b" * (OWNER_SECRET_CHARS - 1)
    assert attach_dash_values(["labels", "export", "--token", token, "--owner-secret", secret, "-o", "x"]) == [
        "labels", "export", f"--token={token}", f"--owner-secret={secret}", "-o", "x"]
    unchanged = [
        ["labels", "export", "--token", secret],  # a secret's length after --token
        ["labels", "export", "--owner-secret", token],
        ["labels", "export", "--token", "-o", "x"],
        ["labels", "export", "--token"],
        ["audit", "--token", "a" * 32],  # no dash: argparse reads it already
        ["labels", "export", "--token", "-" + "a" * 30 + "!"],
    ]
    for argv in unchanged:
        assert attach_dash_values(argv) == argv
    path = Path("-" + "a" * 31)
    assert attach_dash_values(["--token", path]) == ["--token", path]  # only strings are read


# --------------------------------------------------- reviewer names: no invisible characters
#: Characters that change how a name reads (or where a line ends) without being seen, typed
#: from the Unicode standard: line and paragraph separators, C1 controls (NEL), the bidi
#: embeddings, overrides, isolates and marks, zero-width characters, the soft hyphen, the BOM.
INVISIBLE = {
    "\u2028": "U+2028 (LINE SEPARATOR)", "\u2029": "U+2029 (PARAGRAPH SEPARATOR)",
    "\u0085": "U+0085 (a control character)", "\u009b": "U+009B (a control character)",
    "\u202a": "U+202A (LEFT-TO-RIGHT EMBEDDING)", "\u202b": "U+202B (RIGHT-TO-LEFT EMBEDDING)",
    "\u202c": "U+202C (POP DIRECTIONAL FORMATTING)", "\u202d": "U+202D (LEFT-TO-RIGHT OVERRIDE)",
    "\u202e": "U+202E (RIGHT-TO-LEFT OVERRIDE)", "\u2066": "U+2066 (LEFT-TO-RIGHT ISOLATE)",
    "\u2067": "U+2067 (RIGHT-TO-LEFT ISOLATE)", "\u2068": "U+2068 (FIRST STRONG ISOLATE)",
    "\u2069": "U+2069 (POP DIRECTIONAL ISOLATE)", "\u200e": "U+200E (LEFT-TO-RIGHT MARK)",
    "\u200f": "U+200F (RIGHT-TO-LEFT MARK)", "\u061c": "U+061C (ARABIC LETTER MARK)",
    "\u200b": "U+200B (ZERO WIDTH SPACE)", "\u200d": "U+200D (ZERO WIDTH JOINER)",
    "\u2060": "U+2060 (WORD JOINER)", "\u00ad": "U+00AD (SOFT HYPHEN)",
    "\ufeff": "U+FEFF (ZERO WIDTH NO-BREAK SPACE)", "\x1b": "U+001B (a control character)",
    "\x7f": "U+007F (a control character)", "\t": "U+0009 (a control character)",
}


def invisible_message(name: str) -> str:
    return (f"the reviewer's name contains {name}, a character that is not seen or changes how "
            "the text around it reads: type the name without it")


@pytest.mark.parametrize("char", sorted(INVISIBLE))
def test_a_reviewer_name_with_an_invisible_character_is_refused_naming_it(store: Store, char: str) -> None:
    typed = f"ann{char}evil"
    with pytest.raises(ValueError) as refused:
        hl.check_reviewer(typed)
    assert str(refused.value) == invisible_message(INVISIBLE[char])
    if char < " " or char == "\x7f":
        return  # the store's own rule refuses these first (a newline or a tab: tested above)
    # the store refuses it too, whatever path the label takes (a reviewer's, an import)
    r = make_share(store)
    out = store.add_label(r.token, lab(PLAN.queue[0].item, reviewer=typed), PLANS)
    assert (out.ok, out.status) == (False, "invalid")
    assert out.message == f"item {PLAN.queue[0].item!r}: {invisible_message(INVISIBLE[char])}"
    imported = Label(PLAN.queue[0].item, True, reviewer=typed, time="2026-01-02T03:04:05Z")
    out = store.import_labels(r.token, [imported], PLANS, owner_secret=r.owner_secret)
    assert out.written == 0 and out.rejected == (
        f"label 1: item {PLAN.queue[0].item!r}: {invisible_message(INVISIBLE[char])}",)
    assert rows_of(store.data_dir) == []


@pytest.mark.parametrize("name", ["Zoë Ørsted-Nuñez", "王芳", "דוד כהן", "زهراء", "Ann 🙂", "O'Brien, J.",
                                  "ann@example.com", "Анна"])
def test_names_in_any_script_are_kept(store: Store, name: str) -> None:
    assert hl.check_reviewer(f"  {name} ") == name
    r = make_share(store)
    assert store.add_label(r.token, lab(PLAN.queue[0].item, reviewer=name), PLANS).ok
    assert [g.reviewer for g in store.labels(r.token).labels] == [name]
