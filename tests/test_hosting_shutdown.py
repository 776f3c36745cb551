"""A stopping server finishes its label writes, and tells the load balancer it is not
ready (issue 27, item 3): calib.hosting.shutdown and the readiness probe of
calib.hosting.webguard.

The shutdown test runs a real Python process the way Streamlit runs a page: the label is
written from a *daemon* thread (Streamlit's script threads are daemons), the main thread
ends on SIGTERM (Streamlit's handler stops the server and its main thread returns). The
label row is then read with the database's own driver.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.hosting import resident
from calib.hosting.shutdown import SHUTTING_DOWN_MESSAGE, WRITES, WriteTracker
from calib.hosting.store import Store
from calib.hosting.webguard import GuardMiddleware
from tests.pgtest import database_urls
from tests.test_catalog import label_rows
from tests.test_labels_store import PLAN, PLANS, lab, make_share
from tests.test_webguard import Backend, call

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import signal, sys, threading
from calib.hosting.store import Store
from tests.test_labels_store import PLAN, PLANS, lab

data_dir, url, token, pause = sys.argv[1], sys.argv[2] or None, sys.argv[3], float(sys.argv[4])

def hook(stage):
    if stage == "labels_before_commit":
        print("writing", flush=True)
        threading.Event().wait(pause)  # the commit comes after the SIGTERM

def write():
    out = Store.open(data_dir, database_url=url, on_stage=hook).add_label(
        token, lab(PLAN.queue[0].item, reviewer="mid-shutdown"), PLANS)
    print("saved" if out.ok else out.status, flush=True)

stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())  # as Streamlit's handler: the server stops
threading.Thread(target=write, daemon=True).start()  # a page script's thread is a daemon
stop.wait(60)
print("main thread done", flush=True)
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    yield from database_urls(request)


@pytest.mark.slow  # a Python process starts and stops: ~3 s
def test_sigterm_during_a_label_write_lets_it_commit(tmp_path: Path, database_url: str | None) -> None:
    store = Store.open(tmp_path / "data", database_url=database_url)
    r = make_share(store)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(store.data_dir), database_url or "", r.token, "1.0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert child.stdout.readline().strip() == "writing"
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    # the main thread returned first; the write finished before the process ended
    assert out.split() == ["main", "thread", "done", "saved"], err
    assert child.returncode == 0
    assert [row[4] for row in label_rows(store)] == ["mid-shutdown"]


def test_draining_waits_for_writes_under_way_and_refuses_new_ones() -> None:
    tracker = WriteTracker()
    entered, release = threading.Event(), threading.Event()

    def write() -> None:
        with tracker.writing():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=write)
    t.start()
    entered.wait(10)
    assert not tracker.drain(timeout=0.05)  # one still under way: not drained yet
    release.set()
    assert tracker.drain(timeout=10) and tracker.under_way == 0
    t.join(10)
    with pytest.raises(CalibError) as exc, tracker.writing():
        pass
    assert str(exc.value) == SHUTTING_DOWN_MESSAGE


def test_a_write_refused_while_draining_reaches_the_reviewer_as_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(tmp_path / "data")
    r = make_share(store)
    monkeypatch.setattr(WRITES, "draining", True)
    with pytest.raises(CalibError, match="^This server is restarting; nothing was saved"):
        store.add_label(r.token, lab(PLAN.queue[0].item), PLANS)
    monkeypatch.setattr(WRITES, "draining", False)
    assert label_rows(store) == []


# ------------------------------------------------------------------ readiness
def _raise() -> None:
    raise OSError("no database")


@pytest.mark.parametrize("path", ["/_calib/ready", "/base/_calib/ready", "/_calib/ready/"])
def test_the_readiness_probe_answers_from_the_check_without_reaching_streamlit(path: str) -> None:
    backend = Backend()
    status, headers, _ = call(GuardMiddleware(backend, headers=[], ready=lambda: None), "GET", path)
    assert status == 200 and headers[b"cache-control"] == b"no-store" and not backend.called
    assert call(GuardMiddleware(backend, headers=[], ready=_raise), "GET", path)[0] == 503
    assert not backend.called
    # lookalikes pass to the app
    assert call(GuardMiddleware(backend, headers=[], ready=_raise), "GET", path + "x")[0] == 204


def test_the_readiness_probe_says_503_once_the_server_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WRITES, "draining", True)
    assert call(GuardMiddleware(Backend(), headers=[], ready=lambda: None), "GET", "/_calib/ready")[0] == 503


@pytest.fixture()
def fresh_resident() -> Iterator[None]:
    resident.reset()
    yield
    resident.reset()


def test_the_default_probe_asks_the_share_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database_url: str | None, fresh_resident: None
) -> None:
    monkeypatch.setenv("CALIB_DATA_DIR", str(tmp_path / "data"))
    if database_url:
        monkeypatch.setenv("CALIB_DATABASE_URL", database_url)
    else:
        monkeypatch.delenv("CALIB_DATABASE_URL", raising=False)
    assert call(GuardMiddleware(Backend(), headers=[]), "GET", "/_calib/ready")[0] == 200
    resident.reset()
    monkeypatch.setenv("CALIB_DATABASE_URL", "postgresql://calib@127.0.0.1:1/none")  # nothing listens on port 1
    assert call(GuardMiddleware(Backend(), headers=[]), "GET", "/_calib/ready")[0] == 503
