"""The password lock-out shared by replicas (issue 27, item 3): its failures in the catalog
(calib.hosting.lockout), so that a client spreading wrong passwords over two replicas
meets one count.

Each "replica" is a Store object of its own on one catalog (and, in one test, a process
of its own); the counts are read back with the database's own driver. The reference is
the lock-out rule itself, written out here: a client is refused after ``max_failures``
wrong passwords within the window, everyone after ``global_max_failures``.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from pathlib import Path

import pytest

from calib.hosting.access import PasswordGate
from calib.hosting.catalog import Catalog
from calib.hosting.lockout import UNAVAILABLE_MESSAGE, CatalogFailures
from calib.hosting.store import Store
from tests.pgtest import database_urls
from tests.test_catalog import query

CTX = multiprocessing.get_context("fork")


class Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    yield from database_urls(request)


@pytest.fixture()
def replicas(tmp_path: Path, database_url: str | None) -> list[Store]:
    """Two store objects on one catalog, as two replicas have."""
    return [Store.open(tmp_path / "data", database_url=database_url) for _ in range(2)]


def gate(store: Store, clock: Clock, **kw) -> PasswordGate:
    kw.setdefault("max_failures", 3)
    kw.setdefault("window_s", 600)
    return PasswordGate("right", clock=clock, failures=CatalogFailures(store), **kw)


def test_wrong_passwords_spread_over_two_replicas_lock_the_client_out(replicas: list[Store]) -> None:
    clock = Clock()
    a, b = gate(replicas[0], clock), gate(replicas[1], clock)
    assert a.check("10.0.0.7", "guess1").message.startswith("Wrong password (2 more tries")
    assert b.check("10.0.0.7", "guess2").message.startswith("Wrong password (1 more try")
    third = a.check("10.0.0.7", "guess3")
    assert third.locked and not third.ok
    # refused unchecked on the other replica, even with the right password
    assert b.check("10.0.0.7", "right").locked
    # another client is not affected
    assert b.check("10.0.0.8", "right").ok
    assert query(replicas[0], "SELECT COUNT(*) FROM login_failures WHERE client = %s", ("10.0.0.7",)) == [(3,)]
    # after the window the oldest failure leaves: the client may try again, on either replica
    clock.t += 601
    assert a.check("10.0.0.7", "right").ok
    assert query(replicas[1], "SELECT COUNT(*) FROM login_failures") == [(0,)]  # pruned, and forgotten


def test_the_same_spread_over_two_processes_memories_does_not_lock(tmp_path: Path) -> None:
    """What the catalog fixes: two replicas with their own memory count separately, so the
    three wrong passwords above leave the client free on both."""
    clock = Clock()
    a = PasswordGate("right", max_failures=3, window_s=600, clock=clock)
    b = PasswordGate("right", max_failures=3, window_s=600, clock=clock)
    a.check("10.0.0.7", "guess1")
    b.check("10.0.0.7", "guess2")
    assert not a.check("10.0.0.7", "guess3").locked
    assert b.check("10.0.0.7", "right").ok


def test_the_global_lock_out_counts_every_replicas_failures(replicas: list[Store]) -> None:
    clock = Clock()
    a, b = (gate(s, clock, max_failures=10, global_max_failures=4) for s in replicas)
    for k in range(4):
        (a if k % 2 else b).check(f"10.1.0.{k}", "nope")
    verdict = a.check("10.9.9.9", "right")
    assert verdict.locked and "sign-in is paused" in verdict.message


def _guesser(data_dir: str, url: str | None, n: int, out) -> None:
    g = PasswordGate("right", max_failures=5, window_s=600, failures=CatalogFailures(Store.open(data_dir, database_url=url)))
    out.put([g.check("10.0.0.9", f"wrong{k}").locked for k in range(n)])


@pytest.mark.slow  # forks two processes
def test_two_processes_guessing_at_once_are_counted_exactly(replicas: list[Store], database_url: str | None) -> None:
    """Two processes, 4 wrong passwords each at once, limit 5: every check is one serialised
    transaction, so exactly 5 failures are recorded and the attempts after them are refused
    unchecked: of the 8 verdicts, 4 say "wrong" (attempts 1-4) and 4 "locked" (5-8)."""
    q = CTX.Queue()
    procs = [CTX.Process(target=_guesser, args=(str(replicas[0].data_dir), database_url, 4, q)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    verdicts = [v for _ in procs for v in q.get(timeout=10)]
    assert sorted(verdicts) == [False] * 4 + [True] * 4
    assert query(replicas[0], "SELECT COUNT(*) FROM login_failures") == [(5,)]


def test_a_catalog_that_does_not_answer_refuses_the_attempt_unchecked(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = Catalog(tmp_path / "d", database_url=f"postgresql://calib@127.0.0.1:{port}/postgres")
    g = PasswordGate("right", clock=Clock(), failures=CatalogFailures(dead))
    verdict = g.check("10.0.0.1", "right")
    assert not verdict.ok and verdict.message == UNAVAILABLE_MESSAGE


def test_the_dashboards_gate_uses_the_shared_catalog_when_a_database_url_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's own gate (dashboard.runtime) with CALIB_DATABASE_URL: a new process (the
    process-wide state dropped, as a second replica or a restart starts) finds the client
    still locked out."""
    from tests.apptest import clear_caches
    from tests.pgtest import fresh_database

    for var in ("CALIB_AUTH", "CALIB_ALLOWED_DOMAINS", "CALIB_LOGIN_GLOBAL_MAX_FAILURES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CALIB_PASSWORD", "open sesame")
    monkeypatch.setenv("CALIB_LOGIN_MAX_FAILURES", "2")
    monkeypatch.setenv("CALIB_DATA_DIR", str(tmp_path / "data"))
    databases = fresh_database()
    monkeypatch.setenv("CALIB_DATABASE_URL", next(databases))
    from dashboard.runtime import runtime

    try:
        clear_caches()
        assert isinstance(runtime().gate.failures, CatalogFailures)
        for _ in range(2):
            assert not runtime().gate.check("198.51.100.7", "wrong").ok
        clear_caches()  # another replica, or this one restarted
        verdict = runtime().gate.check("198.51.100.7", "open sesame")
        assert verdict.locked and "Too many wrong passwords" in verdict.message
    finally:
        clear_caches()
        databases.close()
