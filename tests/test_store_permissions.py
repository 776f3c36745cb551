"""The share store's data directory is private to the server's user: folders 0700, files
0600 (catalog, its WAL and shared-memory files, every blob), whatever the umask, and a
directory left world-readable is tightened when the store opens. Checked with os.stat."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store

VIEW = {"v": 1, "params": {"page": "routing"}, "datasets": [{"kind": "file", "filename": "a.jsonl"}]}
DATA = b'{"confidence": 80, "correct": true}\n{"confidence": 60, "correct": false}\n'


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def modes(root: Path) -> dict[str, int]:
    """Permission bits of the root and of everything below it."""
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = stat.S_IMODE(p.stat().st_mode)
    return out


def assert_private(root: Path) -> dict[str, int]:
    got = modes(root)
    for name, mode in got.items():
        want = 0o700 if (root / name).is_dir() else 0o600
        assert mode == want, f"{name}: {mode:o}, want {want:o}"
    return got


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o000])
def test_everything_the_store_writes_is_private_whatever_the_umask(tmp_path, mask):
    root = tmp_path / "calib-data"
    with umask(mask):
        store = Store.open(root)
        r = store.share([DatasetSpec.from_upload("a", "a.jsonl", DATA)], VIEW)
        store.share([DatasetSpec.from_upload("b", "b.jsonl", DATA + DATA)], VIEW)
        assert store.open_share(r.token).available
        # a reader holds the catalog open, as a server does: its -wal and -shm files exist now
        with contextlib.closing(sqlite3.connect(root / "catalog.sqlite3")) as con:
            assert con.execute("SELECT count(*) FROM shares").fetchone()[0] == 2
            got = assert_private(root)
    # the catalog, its WAL and shared-memory files, two blobs in their folders were all checked
    names = set(got)
    assert {"catalog.sqlite3", "catalog.sqlite3-wal", "catalog.sqlite3-shm", "blobs"} <= names, names
    assert sum(1 for n in names if n.startswith("blobs/") and (root / n).is_file()) == 2


def test_a_world_readable_data_directory_is_tightened_on_open(tmp_path):
    root = tmp_path / "calib-data"
    with umask(0o022):
        Store.open(root).share([DatasetSpec.from_upload("a", "a.jsonl", DATA)], VIEW)
    # as an older calib (or `docker volume create`) would have left it
    for p in [root, *root.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    assert modes(root)["catalog.sqlite3"] == 0o644
    with umask(0o022):
        Store.open(root)
    got = modes(root)
    assert got["."] == 0o700 and got["blobs"] == 0o700
    assert all(got[n] == 0o600 for n in ("catalog.sqlite3", "catalog.sqlite3-wal", "catalog.sqlite3-shm")
               if n in got), got


def test_the_catalog_is_created_private_before_sqlite_writes_it(tmp_path):
    root = tmp_path / "d"
    with umask(0o000):
        Store.open(root)
    assert stat.S_IMODE((root / "catalog.sqlite3").stat().st_mode) == 0o600
    with sqlite3.connect(root / "catalog.sqlite3") as con:  # a real SQLite database, not an empty file
        assert con.execute("PRAGMA user_version").fetchone()[0] >= 1


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o000])
@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_the_labels_export_file_is_private_whatever_the_umask(tmp_path, capsys, monkeypatch, mask, suffix):
    """``calib labels export -o FILE``: the reviewers' labels (names, notes) leave the store
    0600 like every file in it; an older export left readable is tightened when rewritten."""
    from tests.cli_run import run
    from tests.test_labels_store import PLAN, PLANS, lab, make_share

    data_dir = tmp_path / "data"
    store = Store.open(data_dir)
    r = make_share(store)
    assert store.add_label(r.token, lab(PLAN.queue[0].item, note="private note"), PLANS).ok
    for var in ("CALIB_SHARE_TOKEN", "CALIB_OWNER_SECRET", "CALIB_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    out = tmp_path / f"labels.{suffix}"
    args = ["labels", "export", "--token", r.token, "--data-dir", data_dir, "-o", out]
    with umask(mask):
        code, _, err = run(args, capsys)
        assert code == 0, err
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
        first = out.read_bytes()
        assert b"private note" in first
        out.chmod(0o644)
        assert run(args, capsys)[0] == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and out.read_bytes() == first
