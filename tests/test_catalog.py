"""The catalog's contract on both its databases (issue 27): the embedded SQLite file and a
real PostgreSQL (tests/pgtest.py), the same tests parametrised.

What is stored is read back with the database's own driver (sqlite3 or psycopg), not
through the store: the label rows, the schema version and the tables. Crash safety is a
SIGKILL of a writer process at the stage before its commit; concurrency is threads and
forked processes writing through their own store objects at once, counted against what
each writer itself was told.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.hosting import labels as hl
from calib.hosting.database import SQLiteDatabase, open_database
from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store
from tests.pgtest import database_urls
from tests.test_labels_store import DATA, OTHER, PLAN, PLANS, Clock, lab, make_share, plan_of

CTX = multiprocessing.get_context("fork")
BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """``None`` (SQLite in the data directory) or a fresh PostgreSQL schema's URL."""
    yield from database_urls(request)


@pytest.fixture()
def store(tmp_path: Path, database_url: str | None) -> Iterator[Store]:
    s = Store.open(tmp_path / "data", clock=Clock(), database_url=database_url)
    yield s
    close = getattr(s.db, "close", None)
    if close is not None:
        close()


def query(store: Store, sql: str, params: tuple = ()) -> list[tuple]:
    """``sql`` run with the database's own driver (``%s`` placeholders for both)."""
    if isinstance(store.db, SQLiteDatabase):
        with sqlite3.connect(store.catalog_path) as con:
            return [tuple(r) for r in con.execute(sql.replace("%s", "?"), params).fetchall()]
    import psycopg

    with psycopg.connect(store.db.url) as con:  # type: ignore[attr-defined]
        return [tuple(r) for r in con.execute(sql, params).fetchall()]


def label_rows(store: Store) -> list[tuple]:
    return query(store, "SELECT share_id, item, correct, note, reviewer, kind FROM labels ORDER BY id")


# ------------------------------------------------------------------ the contract
def test_labels_are_append_only_and_reached_only_through_their_own_link(store: Store) -> None:
    a, b = make_share(store), make_share(store, OTHER)
    item = PLAN.queue[0].item
    assert store.add_label(a.token, lab(item, True, note="first"), PLANS).ok
    assert store.add_label(a.token, lab(item, False, note="changed"), PLANS).ok
    plan_b = {"judge": plan_of(OTHER)}
    assert store.add_label(b.token, lab(plan_b["judge"].queue[0].item, reviewer="bob"), plan_b).ok
    # two rows for the changed label (history kept), in order; b's row under b's share id
    rows = label_rows(store)
    ids = {sid for (sid,) in query(store, "SELECT id FROM shares WHERE token_hash = %s",
                                   (__import__("hashlib").sha256(a.token.encode()).digest(),))}
    assert [(r[1], r[2], r[3]) for r in rows if r[0] in ids] == [(item, 1, "first"), (item, 0, "changed")]
    assert [r[4] for r in rows if r[0] not in ids] == ["bob"]
    # a's token reads a's rows only, oldest first; b's token b's only
    assert [(x.correct, x.note) for x in store.labels(a.token).labels] == [(True, "first"), (False, "changed")]
    assert [x.reviewer for x in store.labels(b.token).labels] == ["bob"]
    # revoking stops writes; the owner still reads; deleting removes the rows in the same step
    assert store.revoke(a.token, owner_secret=a.owner_secret).ok
    assert store.add_label(a.token, lab(item), PLANS).status == "not_available"
    assert store.sweep().shares == 0  # a revoked share with labels is kept
    assert len(store.labels(a.token, owner_secret=a.owner_secret).labels) == 2
    assert store.delete(a.token, owner_secret=a.owner_secret).ok
    assert [r[4] for r in label_rows(store)] == ["bob"]
    assert query(store, "SELECT COUNT(*) FROM reviewing") == [(1,)]


def test_a_share_round_trips_and_only_its_owner_changes_it(store: Store) -> None:
    r = store.share([DatasetSpec.from_upload("judge", "judge.jsonl", DATA)], {"v": 2}, owner_user="Ann@Example.com")
    got = store.open_share(r.token)
    assert got.available and got.share.datasets[0].files[0].data == DATA and got.share.view == {"v": 2}
    assert not store.update_view(r.token, {"v": 3}).ok  # no proof
    assert store.update_view(r.token, {"v": 3}, user="ann@example.com").ok
    assert store.open_share(r.token).share.view == {"v": 3}
    assert [s.share_id for s in store.list_owned("ann@example.com")] == [r.share_id]
    assert store.link_status(r.token) == "ok" and store.link_status("A" * 32) == "unknown"
    assert store.revoke_by_id(r.share_id, user="ann@example.com").ok
    assert store.link_status(r.token) == "revoked"
    assert store.integrity_check() == "ok"


def _stage_child(data_dir: str, url: str | None, token: str, conn) -> None:
    def hook(name: str) -> None:
        if name == "labels_before_commit":
            conn.send(name)
            threading.Event().wait(120)  # killed here

    Store.open(data_dir, on_stage=hook, database_url=url).add_label(
        token, lab(PLAN.queue[1].item, reviewer="victim"), PLANS)
    conn.send("finished")  # never reached


def test_a_label_killed_before_its_commit_is_not_stored(store: Store, database_url: str | None) -> None:
    r = make_share(store)
    assert store.add_label(r.token, lab(PLAN.queue[0].item), PLANS).ok
    parent, child = CTX.Pipe(duplex=False)
    proc = CTX.Process(target=_stage_child, args=(str(store.data_dir), database_url, r.token, child))
    proc.start()
    try:
        assert parent.poll(60) and parent.recv() == "labels_before_commit"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(30)
    assert proc.exitcode == -signal.SIGKILL
    assert [row[4] for row in label_rows(store)] == ["ann"]
    # the killed writer's lock is gone with it: the next write goes through at once
    assert store.add_label(r.token, lab(PLAN.queue[1].item, reviewer="after"), PLANS).ok
    assert [row[4] for row in label_rows(store)] == ["ann", "after"]


def _pause_before_commit(stage: str) -> None:
    if stage == "labels_before_commit":  # widen the window in which an unserialised writer would race
        threading.Event().wait(0.003)


def _writer(data_dir: str, url: str | None, token: str, who: str, items: list[str], out) -> None:
    store = Store.open(data_dir, database_url=url, on_stage=_pause_before_commit)
    audit = {i.item for i in PLAN.audit}
    ok = sum(store.add_label(token, lab(item, k % 2 == 0, who, kind="audit" if item in audit else "queue"),
                             PLANS).ok for k, item in enumerate(items))
    out.put(ok) if hasattr(out, "put") else out.append(ok)


@pytest.mark.slow  # forks two writer processes
def test_threads_and_processes_writing_at_once_lose_nothing_and_respect_the_cap(
    store: Store, database_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six writers (two processes, four threads) of 2 x 20 labels each, with the cap at 200:
    the cap is checked and the rows written in one serialised transaction, so exactly 200
    rows are stored, each writer's in its own order, and the writers were told "saved"
    exactly 200 times."""
    monkeypatch.setattr(hl, "MAX_LABELS_PER_SHARE", 200)  # forked children inherit it
    r = make_share(store)
    work = [i.item for i in PLAN.items][:20] * 2
    assert len(work) == 40
    queue = CTX.Queue()
    done: list[int] = []
    procs = [CTX.Process(target=_writer, args=(str(store.data_dir), database_url, r.token, f"p{k}", work, queue))
             for k in range(2)]
    threads = [threading.Thread(target=_writer, args=(str(store.data_dir), database_url, r.token, f"t{k}", work,
                                                      done)) for k in range(4)]
    for w in (*procs, *threads):
        w.start()
    for t in threads:
        t.join(120)
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    done += [queue.get(timeout=10) for _ in procs]
    rows = label_rows(store)
    assert len(rows) == 200 and sum(done) == 200
    for who in ["p0", "p1", "t0", "t1", "t2", "t3"]:
        mine = [(item, bool(c)) for _, item, c, _, w, _ in rows if w == who]
        assert mine == [(item, k % 2 == 0) for k, item in enumerate(work)][: len(mine)]


# ------------------------------------------------------------------ migrations
def _tables(store: Store) -> set[str]:
    if isinstance(store.db, SQLiteDatabase):
        return {r[0] for r in query(store, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {r[0] for r in query(store, "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                                       "current_schema()")}


def _version(store: Store) -> int:
    if isinstance(store.db, SQLiteDatabase):
        return query(store, "PRAGMA user_version")[0][0]
    return query(store, "SELECT version FROM calib_schema")[0][0]


#: The tables each schema version has (calib's own history, written out here).
TABLES_AT = {
    1: {"blobs", "datasets", "dataset_blobs", "shares", "share_datasets"},
    2: {"blobs", "datasets", "dataset_blobs", "shares", "share_datasets", "reviewing", "labels"},
    3: {"blobs", "datasets", "dataset_blobs", "shares", "share_datasets", "reviewing", "labels", "login_failures"},
    4: {"blobs", "datasets", "dataset_blobs", "shares", "share_datasets", "reviewing", "labels", "login_failures",
        "adjudications", "assignments"},
}
#: The columns version 4 added (issue 25), written out here.
V4_COLUMNS = {"labels": ("unsure", "judge_shown", "reasons"),
              "reviewing": ("assign", "overlap", "overlap_k", "reviewers", "show_judge", "guidelines", "reason_tags",
                            "card_fields")}


def _back_to_3(store: Store, con) -> None:
    """Undo version 4 in the open transaction ``con``: what calib before issue 25 left."""
    con.execute("DROP TABLE adjudications")
    con.execute("DROP TABLE assignments")
    for table, cols in V4_COLUMNS.items():
        for col in cols:
            con.execute(f"ALTER TABLE {table} DROP COLUMN {col}")
    store.db._set_version(con, 3)


@pytest.mark.parametrize("old", [0, 1, 2, 3])
def test_a_catalog_of_every_earlier_version_is_migrated_at_start(
    tmp_path: Path, database_url: str | None, old: int
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    db = open_database(database_url, data_dir / "catalog.sqlite3")
    assert db.migrate(upto=old) == 0
    store = Store.__new__(Store)
    Store.__init__(store, data_dir, database_url=database_url)
    if old:
        assert _tables(store) - {"calib_schema", "sqlite_sequence"} == TABLES_AT[old]
    store = Store.open(data_dir, database_url=database_url)
    assert _version(store) == 4
    assert _tables(store) - {"calib_schema", "sqlite_sequence"} == TABLES_AT[4]
    r = make_share(store)  # every table works at the new version
    assert store.add_label(r.token, lab(PLAN.queue[0].item), PLANS).ok
    assert Store.open(data_dir, database_url=database_url).labels(r.token).labels[0].item == PLAN.queue[0].item


def test_a_version_2_share_with_labels_survives_the_migration(tmp_path: Path, database_url: str | None) -> None:
    data_dir = tmp_path / "data"
    store = Store.open(data_dir, database_url=database_url)
    r = make_share(store)
    assert store.add_label(r.token, lab(PLAN.queue[0].item, note="kept"), PLANS).ok
    with store.db.transaction() as con:  # back to what calib before issue 27 left
        _back_to_3(store, con)
        con.execute("DROP TABLE login_failures")
        store.db._set_version(con, 2)
    again = Store.open(data_dir, database_url=database_url)
    assert _version(again) == 4 and "login_failures" in _tables(again)
    assert [x.note for x in again.labels(r.token).labels] == ["kept"]


def test_a_version_3_share_with_labels_reads_them_as_blind_sure_labels_after_the_migration(
    tmp_path: Path, database_url: str | None
) -> None:
    data_dir = tmp_path / "data"
    store = Store.open(data_dir, database_url=database_url)
    r = make_share(store)
    assert store.add_label(r.token, lab(PLAN.queue[0].item, correct=False, note="kept"), PLANS).ok
    with store.db.transaction() as con:
        _back_to_3(store, con)
    assert set(query(store, "SELECT kind, note FROM labels")) == {("queue", "kept")}
    again = Store.open(data_dir, database_url=database_url)
    assert _version(again) == 4 and _tables(again) - {"calib_schema", "sqlite_sequence"} == TABLES_AT[4]
    got = again.labels(r.token)
    assert [(x.note, x.correct, x.unsure) for x in got.labels] == [("kept", False, False)]
    assert got.judge_shown == (False,) and got.reasons == ((),)
    setting = again.review_setting(r.token)
    assert setting.enabled and setting.flow == hl.Workflow()  # no assignment, blind, no list


def test_a_catalog_of_a_newer_version_is_refused(tmp_path: Path, database_url: str | None) -> None:
    store = Store.open(tmp_path / "data", database_url=database_url)
    with store.db.transaction() as con:
        store.db._set_version(con, 5)
    with pytest.raises(CalibError, match=r"written by a newer calib \(schema 5\); upgrade calib$"):
        Store.open(tmp_path / "data", database_url=database_url)


def test_a_database_url_that_is_not_postgresql_is_refused_naming_the_setting(tmp_path: Path) -> None:
    for url in ("mysql://u@h/db", "/var/lib/calib.db", "sqlite:///x.db"):
        with pytest.raises(CalibError, match="CALIB_DATABASE_URL must be a postgresql://"):
            Store.from_env({"CALIB_DATA_DIR": str(tmp_path / "d"), "CALIB_DATABASE_URL": url})


def test_without_a_postgresql_the_postgresql_tests_fail_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """CI must not pass with the PostgreSQL half skipped: no URL and no initdb fail there."""
    import tests.pgtest as pgtest

    monkeypatch.delenv("CALIB_TEST_DATABASE_URL", raising=False)
    monkeypatch.setattr(pgtest, "_start_cluster", lambda: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no PostgreSQL"):
        pgtest.server_url()
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="no PostgreSQL"):
        pgtest.server_url()


def test_a_database_restart_costs_no_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server closes the store's pooled connections (as a restart or failover does): the
    next calls check an idle connection before use and reconnect, instead of failing."""
    import psycopg

    import calib.hosting.database as database
    from tests.pgtest import fresh_database

    for url in fresh_database():
        store = Store.open(tmp_path / "data", database_url=url)
        r = make_share(store)
        assert store.link_status(r.token) == "ok"  # a connection now waits in the pool
        with psycopg.connect(url, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                "AND datname = current_database() AND backend_type = 'client backend'").fetchone()[0]
        assert killed >= 1
        monkeypatch.setattr(database, "VALIDATE_AFTER_S", 0.0)
        assert store.link_status(r.token) == "ok"
        assert store.add_label(r.token, lab(PLAN.queue[0].item), PLANS).ok
        store.db.close()  # type: ignore[attr-defined]
