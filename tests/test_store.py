"""The share store: round trip, tokens, attack tokens, revoke, expiry, owner actions,
dedup, repair and concurrency.

The checks of what is on disk read the data directory and the SQLite catalog
directly (hashlib, os, sqlite3), not through the store's own code.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import sqlite3
import string
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from calib.errors import CalibError
from calib.hosting.shares import (
    NOT_OWNER_MESSAGE,
    UNAVAILABLE_MESSAGE,
    DatasetSpec,
    InputFile,
    options_from_dict,
    options_to_dict,
    valid_token,
)
from calib.hosting.store import Store
from calib.limits import Limits
from calib.readers.base import LoadOptions
from calib.scale import Scale
from tests.conftest import Clock  # the `clock` and `store` fixtures: tests/conftest.py

DAY = 86400.0
CSV = b"value,n,correct\n10,5,1\n50,10,5\n90,20,18\n"
CSV2 = b"value,n,correct\n0,4,0\n100,4,4\n"


def spec(name: str = "judge", data: bytes = CSV, filename: str = "judge.csv", **kw) -> DatasetSpec:
    return DatasetSpec.from_upload(name, filename, data, **kw)


def blob_files(data_dir: Path) -> dict[str, bytes]:
    """Every stored blob file, read straight from disk: {file name: bytes}."""
    return {p.name: p.read_bytes() for p in (data_dir / "blobs").glob("*/*") if not p.name.startswith(".")}


def catalog_rows(data_dir: Path, table: str) -> list[tuple]:
    con = sqlite3.connect(data_dir / "catalog.sqlite3")
    try:
        return con.execute(f"SELECT * FROM {table}").fetchall()  # noqa: S608 - fixed table names
    finally:
        con.close()


# ------------------------------------------------------------------ round trip
def test_round_trip_returns_same_bytes_options_view_and_dataset(store: Store) -> None:
    options = LoadOptions(
        confidence_key="meta.conf", outcome_key="ok", rescale=Scale(0.0, 100.0, "0-100", "given"),
        extra={"b": "2", "a": "1"}, normalisation="char",
    )
    view = {"threshold": 72.5, "upper": None, "map": "isotonic", "binning": {"kind": "mass", "bins": 10},
            "page": "Reliability", "models": ["judge", "other"]}
    receipt = store.share([spec(options=options, fmt="counts"), spec("other", CSV2, "b.csv")], view)

    got = store.open_share(receipt.token)
    assert got.available and got.status == "ok" and got.message == ""
    share = got.share
    assert share.view == view
    assert [s.name for s in share.datasets] == ["judge", "other"]
    first = share.datasets[0]
    assert first.files == (InputFile("judge.csv", CSV),)
    assert first.options == options
    assert first.fmt == "counts"
    assert share.datasets[1].files[0].data == CSV2

    # Reopening loads the same numbers the file holds (read independently here).
    ds = first.load()
    assert ds.name == "judge"
    assert sorted(zip(ds.table.value.tolist(), ds.table.n.tolist(), ds.table.correct.tolist(), strict=True)) == [
        (10.0, 5, 1), (50.0, 10, 5), (90.0, 20, 18)
    ]
    assert ds.table.scale.lo == 0.0 and ds.table.scale.hi == 100.0


def test_view_copy_is_independent(store: Store) -> None:
    r = store.share([spec()], {"threshold": 80})
    v = store.open_share(r.token).share.view
    v["threshold"] = 10
    assert store.open_share(r.token).share.view == {"threshold": 80}


def test_reopen_applies_current_server_limits(store: Store) -> None:
    r = store.share([spec(options=LoadOptions(max_rows=5))])
    opened = store.open_share(r.token).share.datasets[0]
    # The server's caps at share time are not part of what is stored...
    assert opened.options.max_rows == LoadOptions().max_rows
    # ...and today's caps are applied when the dataset is rebuilt.
    lim = Limits(max_rows=7, max_line_chars=500, max_decompressed_mb=3)
    applied = lim.load_options(opened.options)
    assert (applied.max_rows, applied.max_line_chars, applied.max_decompressed_bytes) == (7, 500, 3 * 1024 * 1024)


def test_options_serialisation_round_trip_and_tolerates_unknown_fields() -> None:
    o = LoadOptions(id_key="q", group_key="subject", rescale=Scale(1.0, 10.0, "1-10", "x"), strict=True,
                    variant="acc_norm", extra={"k": "v"})
    d = options_to_dict(o)
    assert "max_rows" not in d and "max_decompressed_bytes" not in d
    assert json.loads(json.dumps(d)) == d
    assert options_from_dict({**d, "field_from_a_newer_version": 1}) == o


def test_from_path_reads_a_file_and_a_folder(tmp_path: Path) -> None:
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "b.jsonl").write_bytes(b"2")
    (tmp_path / "f" / "a.jsonl").write_bytes(b"1")
    s = DatasetSpec.from_path(tmp_path / "f")
    assert [(f.name, f.data) for f in s.files] == [("a.jsonl", b"1"), ("b.jsonl", b"2")]
    assert DatasetSpec.from_path(tmp_path / "f" / "a.jsonl", name="x").files == (InputFile("a.jsonl", b"1"),)
    with pytest.raises(CalibError, match="cannot read"):
        DatasetSpec.from_path(tmp_path / "missing.jsonl")


# ---------------------------------------------------------------------- tokens
def test_tokens_are_long_random_and_distinct(store: Store) -> None:
    alphabet = set(string.ascii_letters + string.digits + "-_")
    receipts = [store.share([spec()], {"i": i}) for i in range(200)]
    tokens = [r.token for r in receipts]
    assert len(set(tokens)) == len(tokens)
    assert len({r.owner_secret for r in receipts}) == len(tokens)
    for r in receipts:
        assert len(r.token) == 32 and set(r.token) <= alphabet  # 32 base64 chars = 192 bits
        assert len(r.owner_secret) == 43 and r.owner_secret != r.token
    # 192 random bits spread over every position: each of 64 symbols shows up at
    # every position across 200 tokens far more often than zero (not a counter or a time).
    for pos in range(32):
        assert len({t[pos] for t in tokens}) > 40
    # The link never carries the content hash or a path.
    h = hashlib.sha256(CSV).hexdigest()
    assert all(h[:16] not in t and "/" not in t and "." not in t for t in tokens)


def test_catalog_keeps_no_plain_token_or_owner_secret(store: Store, tmp_path: Path) -> None:
    r = store.share([spec()], {"t": 1})
    raw = b"".join(p.read_bytes() for p in (tmp_path / "data").glob("catalog.sqlite3*"))
    assert r.token.encode() not in raw
    assert r.owner_secret.encode() not in raw
    assert hashlib.sha256(r.token.encode()).digest() in raw  # what is kept instead


ATTACKS = [
    "", "a", "../" * 11, "../../../../etc/passwd", "/etc/passwd", "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "blobs/00/" + "0" * 64, "0" * 64, "catalog.sqlite3",
    "A" * 31, "A" * 33, "A" * 10_000, "A" * 31 + "\x00", "A" * 16 + "\x00" + "A" * 15,
    "A" * 31 + "/", "A" * 31 + ".", " " + "A" * 31, "A" * 31 + "\n", "ＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡＡ",
    "A" * 31 + "=", "' OR '1'='1' --AAAAAAAAAAAAAAAAA", None, 12345, b"A" * 32, ["A" * 32],
]


@pytest.fixture
def file_access_log():
    """Records every file open and SQLite connect made while ``log.on`` is set
    (a Python audit hook: it sees builtins.open, os.open and sqlite3.connect)."""

    class Log:
        on = False
        events: list[tuple[str, str]] = []

    def hook(event: str, args: tuple) -> None:
        if Log.on and event in ("open", "sqlite3.connect", "os.listdir", "os.scandir"):
            Log.events.append((event, str(args[0]) if args else ""))

    sys.addaudithook(hook)  # cannot be removed; it is inert while Log.on is False
    yield Log
    Log.on = False


@pytest.mark.parametrize("token", ATTACKS, ids=lambda t: repr(t)[:40])
def test_malformed_tokens_are_refused_before_any_file_or_db_access(store: Store, file_access_log, token) -> None:
    store.share([spec()], {"t": 1})
    file_access_log.events.clear()
    file_access_log.on = True
    got = store.open_share(token)
    outcomes = [store.revoke(token, owner_secret="x" * 43), store.delete(token, owner_secret="x" * 43)]
    file_access_log.on = False
    assert not got.available and got.share is None
    assert got.status == "malformed"
    assert got.message == UNAVAILABLE_MESSAGE
    assert all(o.status == "not_available" and not o.ok for o in outcomes)
    assert file_access_log.events == []
    assert not valid_token(token)


def test_guessed_and_truncated_tokens_touch_only_the_data_dir(store: Store, file_access_log, tmp_path) -> None:
    real = store.share([spec()], {"t": 1}).token
    rng = np.random.default_rng(7)
    alphabet = np.array(list(string.ascii_letters + string.digits + "-_"))
    guesses = ["".join(rng.choice(alphabet, 32)) for _ in range(50)]
    # one character changed, and the real token cut and padded back to length
    guesses += [real[:-1] + ("A" if real[-1] != "A" else "B"), real[:16] + "A" * 16]
    data_dir = str((tmp_path / "data").resolve())
    file_access_log.events.clear()
    file_access_log.on = True
    results = [store.open_share(g) for g in guesses]
    file_access_log.on = False
    assert all(r.status == "unknown" and r.message == UNAVAILABLE_MESSAGE for r in results)
    assert file_access_log.events, "a well-formed token is looked up in the catalog"
    for _, path in file_access_log.events:
        assert os.path.realpath(path).startswith(data_dir), path
    assert store.open_share(real).available


# ------------------------------------------------------------------ revoke etc.
def test_owner_revokes_and_viewer_cannot(store: Store) -> None:
    r = store.share([spec()], {"threshold": 80})
    other = store.share([spec()], {"threshold": 80})
    for proof in ({}, {"owner_secret": other.owner_secret}, {"owner_secret": "x" * 43},
                  {"owner_secret": r.token}, {"user": "someone@example.com"}, {"owner_secret": r.owner_secret[:-1]}):
        o = store.revoke(r.token, **proof)
        assert (o.ok, o.status, o.message) == (False, "not_owner", NOT_OWNER_MESSAGE)
        assert store.open_share(r.token).available
    o = store.revoke(r.token, owner_secret=r.owner_secret)
    assert o.ok and o.status == "revoked"
    got = store.open_share(r.token)
    assert (got.available, got.status, got.message) == (False, "revoked", UNAVAILABLE_MESSAGE)
    assert store.revoke(r.token, owner_secret=r.owner_secret).ok  # idempotent
    assert store.open_share(other.token).available


def test_viewer_cannot_delete_or_overwrite(store: Store, tmp_path: Path) -> None:
    r = store.share([spec()], {"threshold": 80})
    before = blob_files(tmp_path / "data")
    assert store.delete(r.token).status == "not_owner"
    assert store.delete(r.token, owner_secret="A" * 43).status == "not_owner"
    assert store.update_view(r.token, {"threshold": 1}).status == "not_owner"
    assert store.open_share(r.token).share.view == {"threshold": 80}
    assert blob_files(tmp_path / "data") == before


def test_owner_updates_view(store: Store) -> None:
    r = store.share([spec()], {"threshold": 80})
    assert store.update_view(r.token, {"threshold": 60}, owner_secret=r.owner_secret).status == "updated"
    assert store.open_share(r.token).share.view == {"threshold": 60}


def test_owner_delete_removes_files_no_other_share_uses(store: Store, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    a = store.share([spec("a", CSV)], {})
    b = store.share([spec("b", CSV), spec("c", CSV2, "c.csv")], {})
    assert set(blob_files(data_dir)) == {hashlib.sha256(CSV).hexdigest(), hashlib.sha256(CSV2).hexdigest()}

    o = store.delete(b.token, owner_secret=b.owner_secret)
    assert o.ok and o.status == "deleted"
    assert store.open_share(b.token).status == "unknown"
    # CSV is still used by share a; CSV2 is gone from disk.
    assert set(blob_files(data_dir)) == {hashlib.sha256(CSV).hexdigest()}
    assert store.open_share(a.token).share.datasets[0].files[0].data == CSV
    assert store.delete(a.token, owner_secret=a.owner_secret).ok
    assert blob_files(data_dir) == {}
    assert catalog_rows(data_dir, "datasets") == [] and catalog_rows(data_dir, "blobs") == []


def test_logged_in_owner_manages_without_secret(store: Store) -> None:
    r = store.share([spec("judge")], {}, owner_user="Alice@Example.com ")
    store.share([spec("x")], {}, owner_user="bob@example.com")
    assert store.revoke(r.token, user="mallory@example.com").status == "not_owner"
    owned = store.list_owned("alice@example.com")
    assert [(i.share_id, i.dataset_names, i.status) for i in owned] == [(r.share_id, ("judge",), "ok")]
    assert store.list_owned("bob@example.com")[0].share_id != r.share_id
    assert store.revoke_by_id(r.share_id, user="bob@example.com").status == "not_owner"
    assert store.revoke_by_id(r.share_id, user="ALICE@example.com").status == "revoked"
    assert store.list_owned("alice@example.com")[0].status == "revoked"
    assert store.delete_by_id(r.share_id, user="alice@example.com").status == "deleted"
    assert store.list_owned("alice@example.com") == []
    assert store.revoke_by_id("../../etc", user="alice@example.com").status == "not_available"


# ---------------------------------------------------------------------- expiry
def test_expiry_with_injected_clock(store: Store, clock: Clock, tmp_path: Path) -> None:
    r = store.share([spec()], {})
    short = store.share([spec("s", CSV2, "s.csv")], {}, ttl_days=1)
    long = store.share([spec()], {}, ttl_days=365)  # capped at the 7-day retention
    assert r.expires_at == clock.t + 7 * DAY and long.expires_at == clock.t + 7 * DAY
    assert short.expires_at == clock.t + DAY

    clock.t += DAY - 1
    assert store.open_share(short.token).available
    clock.t += 1
    assert store.open_share(short.token).status == "expired"
    assert store.open_share(r.token).available
    clock.t += 6 * DAY - 1
    assert store.open_share(r.token).available
    clock.t += 1
    got = store.open_share(r.token)
    assert (got.status, got.message) == ("expired", UNAVAILABLE_MESSAGE)
    assert store.update_view(r.token, {"a": 1}, owner_secret=r.owner_secret).status == "not_available"

    report = store.sweep()
    assert report.shares == 3 and report.blobs == 2
    assert blob_files(tmp_path / "data") == {}
    assert store.open_share(r.token).status == "unknown"


def test_zero_retention_keeps_shares_until_revoked(tmp_path: Path, clock: Clock) -> None:
    s = Store.open(tmp_path / "d", retention_days=0, clock=clock)
    r = s.share([spec()], {})
    assert r.expires_at is None
    clock.t += 10_000 * DAY
    assert s.open_share(r.token).available
    assert s.share([spec()], {}, ttl_days=2).expires_at == clock.t + 2 * DAY
    with pytest.raises(CalibError, match="lifetime must be positive"):
        s.share([spec()], {}, ttl_days=0)


def test_from_env(tmp_path: Path) -> None:
    env = {"CALIB_DATA_DIR": str(tmp_path / "envdata"), "CALIB_RETENTION_DAYS": "2",
           "STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "1"}
    s = Store.from_env(env)
    assert s.data_dir == (tmp_path / "envdata").resolve() and s.retention_days == 2.0
    assert s.max_file_bytes == 1024 * 1024
    assert (tmp_path / "envdata" / "catalog.sqlite3").is_file()
    with pytest.raises(CalibError, match=r"CALIB_RETENTION_DAYS='two' is not a number"):
        Store.from_env({**env, "CALIB_RETENTION_DAYS": "two"})


# ----------------------------------------------------------------------- dedup
def test_same_bytes_are_stored_once(store: Store, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    tokens = [store.share([spec("judge", CSV, "a.csv")], {"i": i}).token for i in range(3)]
    tokens.append(store.share([spec("renamed", CSV, "other-name.csv")], {}).token)
    files = blob_files(data_dir)
    assert files == {hashlib.sha256(CSV).hexdigest(): CSV}
    assert len(catalog_rows(data_dir, "blobs")) == 1
    # same name + options + bytes = one dataset; a different name is another dataset over the same blob
    assert len(catalog_rows(data_dir, "datasets")) == 2
    assert len(catalog_rows(data_dir, "shares")) == 4
    assert all(store.open_share(t).available for t in tokens)


# ------------------------------------------------------------------ validation
def test_inputs_over_limits_are_refused_with_clear_messages(tmp_path: Path, clock: Clock) -> None:
    s = Store.open(tmp_path / "d", max_file_bytes=100, max_store_bytes=150, clock=clock)
    with pytest.raises(CalibError, match=r"big.csv: 0.0 MB is more than this server stores"):
        s.share([spec(data=b"x" * 101, filename="big.csv")])
    s.share([spec(data=b"x" * 90)])
    with pytest.raises(CalibError, match="share storage is full"):
        s.share([spec(data=b"y" * 90)])
    s.share([spec("again", data=b"x" * 90)])  # already stored: costs nothing
    with pytest.raises(CalibError, match="1 to 20 datasets"):
        s.share([])
    with pytest.raises(CalibError, match="view state cannot be stored as JSON"):
        s.share([spec(data=b"x" * 90)], {"t": float("nan")})
    with pytest.raises(CalibError, match="view state cannot be stored as JSON"):
        s.share([spec(data=b"x" * 90)], {"t": {1, 2}})
    with pytest.raises(CalibError, match="larger than 64 KB"):
        s.share([spec(data=b"x" * 90)], {"t": "x" * 70_000})
    with pytest.raises(CalibError, match="control characters"):
        s.share([spec(filename="a\x00b.csv", data=b"x" * 90)])
    with pytest.raises(CalibError, match="unknown format 'exe'"):
        s.share([spec(data=b"x" * 90, fmt="exe")])


# ------------------------------------------------------------------------ repair
def test_open_drops_shares_whose_blob_is_missing_or_truncated(tmp_path: Path, clock: Clock) -> None:
    data_dir = tmp_path / "data"
    s = Store.open(data_dir, clock=clock)
    gone = s.share([spec("a", CSV)], {})
    cut = s.share([spec("b", CSV2, "b.csv")], {})
    both = s.share([spec("a", CSV), spec("c", b"value,n,correct\n1,1,1\n", "c.csv")], {})
    h1, h2 = hashlib.sha256(CSV).hexdigest(), hashlib.sha256(CSV2).hexdigest()
    (data_dir / "blobs" / h1[:2] / h1).unlink()
    (data_dir / "blobs" / h2[:2] / h2).write_bytes(CSV2[:-3])

    # Before reopening, a read still refuses to hand out what does not hash right.
    assert s.open_share(gone.token).status == "damaged"
    assert s.open_share(cut.token).status == "damaged"

    s2 = Store.open(data_dir, clock=clock)
    for r in (gone, cut, both):
        assert s2.open_share(r.token).status == "unknown"
    assert s2.integrity_check() == "ok"
    listed = {row[0] for row in catalog_rows(data_dir, "blobs")}
    assert h1 not in listed and h2 not in listed


def test_open_share_refuses_a_blob_altered_in_place(store: Store, tmp_path: Path) -> None:
    r = store.share([spec()], {})
    h = hashlib.sha256(CSV).hexdigest()
    path = tmp_path / "data" / "blobs" / h[:2] / h
    path.write_bytes(CSV.replace(b"18", b"19"))  # same size, different content
    got = store.open_share(r.token)
    assert (got.status, got.message) == ("damaged", UNAVAILABLE_MESSAGE)
    # sharing the same bytes again rewrites the intact blob, and both links work
    r2 = store.share([spec()], {})
    assert path.read_bytes() == CSV
    assert store.open_share(r.token).available and store.open_share(r2.token).available


def _exited_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_open_removes_temp_files_of_dead_writers_only(tmp_path: Path, clock: Clock) -> None:
    from calib.hosting.catalog import _host_tag

    data_dir = tmp_path / "data"
    s = Store.open(data_dir, clock=clock)
    s.share([spec()], {})
    folder = next(p for p in (data_dir / "blobs").iterdir() if p.is_dir())
    dead = folder / f".tmp-{_host_tag()}-{_exited_pid()}-abc"
    alive = folder / f".tmp-{_host_tag()}-{os.getpid()}-def"
    other_host_recent = folder / ".tmp-00000000-1-ghi"
    other_host_old = folder / ".tmp-00000000-2-jkl"
    orphan_blob_old = folder / ("f" * 64)
    for p in (dead, alive, other_host_recent, other_host_old, orphan_blob_old):
        p.write_bytes(b"partial")
    old = time.time() - 2 * 3600
    os.utime(other_host_old, (old, old))
    os.utime(orphan_blob_old, (old, old))

    Store.open(data_dir, clock=clock)
    left = {p.name for p in folder.iterdir()}
    assert dead.name not in left and other_host_old.name not in left and orphan_blob_old.name not in left
    assert alive.name in left and other_host_recent.name in left


# ------------------------------------------------------------------ concurrency
def test_threads_share_and_open_concurrently(store: Store, tmp_path: Path) -> None:
    payloads = [CSV, CSV2, b"value,n,correct\n5,3,2\n"]
    receipts: list = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        try:
            for j in range(6):
                data = payloads[(i + j) % 3]
                r = store.share([spec(f"m{i % 2}", data, "x.csv")], {"i": i, "j": j})
                got = store.open_share(r.token)
                assert got.available and got.share.view == {"i": i, "j": j}
                assert got.share.datasets[0].files[0].data == data
                with lock:
                    receipts.append((r, data))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(receipts) == 48
    assert set(blob_files(tmp_path / "data")) == {hashlib.sha256(p).hexdigest() for p in payloads}
    assert store.integrity_check() == "ok"


def _process_worker(data_dir: str, n: int, conn) -> None:
    s = Store.open(data_dir, retention_days=7)
    out = []
    for i in range(n):
        r = s.share([DatasetSpec.from_upload("judge", "a.csv", CSV)], {"pid": os.getpid(), "i": i})
        out.append(r.token)
    conn.send(out)
    conn.close()


def test_processes_share_one_catalog(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    Store.open(data_dir)
    ctx = multiprocessing.get_context("fork")
    pipes, procs = [], []
    for _ in range(3):
        parent, child = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_process_worker, args=(str(data_dir), 8, child))
        p.start()
        pipes.append(parent)
        procs.append(p)
    tokens = [t for pipe in pipes for t in pipe.recv()]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    s = Store.open(data_dir)
    assert len(tokens) == 24 and len(set(tokens)) == 24
    assert all(s.open_share(t).available for t in tokens)
    assert blob_files(data_dir) == {hashlib.sha256(CSV).hexdigest(): CSV}
    assert s.integrity_check() == "ok"


def test_store_failures_become_a_clear_error_not_a_traceback(tmp_path: Path, clock: Clock, caplog) -> None:
    from calib.hosting.catalog import STORE_FAILED_MESSAGE

    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(CalibError) as err:
        Store.open(not_a_dir / "data")
    assert str(err.value) == STORE_FAILED_MESSAGE

    s = Store.open(tmp_path / "data", clock=clock)
    r = s.share([spec()], {})
    shutil.rmtree(tmp_path / "data")
    for call in (lambda: s.open_share(r.token), lambda: s.share([spec()], {}),
                 lambda: s.revoke(r.token, owner_secret=r.owner_secret)):
        with pytest.raises(CalibError) as err:
            call()
        assert str(err.value) == STORE_FAILED_MESSAGE
    assert "share store:" in caplog.text  # the details went to the log
