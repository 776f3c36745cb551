"""The process-wide hosting state (password lock-out, memory ledger, heavy-work gate,
share store) outlives Streamlit's caches: any WebSocket client can empty those (a
``clear_cache`` BackMsg runs ``st.cache_resource.clear()`` before any page code), so
keeping the state there let one message reset every limit. The protocol-level attack
is in tests/e2e/test_attacks.py; this is the same reset, called directly."""

from __future__ import annotations

import pytest
import streamlit as st

from calib.errors import CalibError
from calib.limits import MB
from tests.apptest import clear_caches

CLIENT = "198.51.100.7"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    for var in ("CALIB_AUTH", "CALIB_ALLOWED_DOMAINS", "CALIB_LOGIN_GLOBAL_MAX_FAILURES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CALIB_PASSWORD", "open sesame")
    monkeypatch.setenv("CALIB_LOGIN_MAX_FAILURES", "2")
    monkeypatch.setenv("CALIB_SESSION_MEMORY_MB", "0")
    monkeypatch.setenv("CALIB_TOTAL_MEMORY_MB", "3")
    monkeypatch.setenv("CALIB_HEAVY_JOBS", "1")
    monkeypatch.setenv("CALIB_HEAVY_WAIT_SECONDS", "0.05")
    monkeypatch.setenv("CALIB_DATA_DIR", str(tmp_path / "data"))
    clear_caches()
    yield
    clear_caches()


def test_the_lockout_the_ledger_the_gate_and_the_store_survive_clearing_streamlits_caches():
    from dashboard.runtime import runtime, share_store

    rt, store = runtime(), share_store()
    assert rt.gate is not None
    for _ in range(2):
        assert not rt.gate.check(CLIENT, "wrong").ok
    assert not rt.gate.check(CLIENT, "open sesame").ok  # locked out
    held = rt.ledger.open_session()
    held.reserve("big.jsonl", 2 * MB, "big.jsonl")  # 2 of the server's 3 MB
    with rt.heavy.slot("someone's bootstrap"):
        st.cache_resource.clear()  # what any client's clear_cache message does
        after = runtime()
        # still locked out, right password or not
        verdict = after.gate.check(CLIENT, "open sesame")
        assert not verdict.ok and "Too many wrong passwords" in verdict.message
        # the other session's 2 MB still count: 2 MB more would exceed the 3 MB total
        with pytest.raises(CalibError, match="holding too much data"):
            after.ledger.open_session().reserve("more.jsonl", 2 * MB, "more.jsonl")
        # the one heavy slot is still taken
        with pytest.raises(CalibError, match="busy"), after.heavy.slot("another bootstrap"):
            pass
        assert share_store() is store
    assert held.used == 2 * MB
