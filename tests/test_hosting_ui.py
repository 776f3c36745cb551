"""The dashboard's hosting wiring, driven headless with AppTest: configuration errors,
the per-session memory budget, the heavy-work gate, the password form, and the Share
action's round trip through the store (the browser tests in tests/e2e/ do the same
end to end). Messages are checked word for word against calib.hosting.budget / calib.hosting.access /
calib.hosting.store, numbers against a row count written here."""

from __future__ import annotations

import json
import threading

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import ROOT, app, clear_caches, ok, upload

JUDGE = ROOT / "sample_data" / "judge_a_synthetic.jsonl"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """Fresh process-wide caches (runtime, store) and a data directory per test."""
    for var in ("CALIB_PASSWORD", "CALIB_AUTH", "CALIB_ALLOWED_DOMAINS", "CALIB_SESSION_MEMORY_MB",
                "CALIB_HEAVY_JOBS", "CALIB_HEAVY_WAIT_SECONDS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CALIB_DATA_DIR", str(tmp_path / "data"))
    clear_caches()
    yield
    clear_caches()


def errors(at: AppTest) -> list[str]:
    # st.error bodies are markdown-escaped (dashboard.layout.md_escape): compare them unescaped
    return [e.value.replace("\\", "") for e in at.error]


def test_a_bad_setting_stops_the_app_with_a_message_naming_it(monkeypatch):
    monkeypatch.setenv("CALIB_AUTH", "saml")
    at = ok(app().run())
    assert errors(at) == ["This server is not configured correctly: CALIB_AUTH='saml': use 'oidc' "
                          "(log in with st.login) or leave it unset"]
    assert not at.file_uploader and not at.metric


def test_a_session_over_its_memory_budget_is_refused_and_removing_frees_it(monkeypatch):
    monkeypatch.setenv("CALIB_SESSION_MEMORY_MB", "1")
    big = "".join(json.dumps({"id": f"r{i}", "question": "q" * 150, "confidence": 50 + i % 51,
                              "correct": i % 2 == 0}) + "\n" for i in range(8000)).encode()
    assert len(big) > 1024 * 1024
    at = upload(ok(app().run()), "big.jsonl", big)
    msgs = errors(at)
    assert len(msgs) == 1 and msgs[0].startswith("big.jsonl: needs about ")
    assert msgs[0].endswith("over its budget of 1 MB; remove a file from this session, "
                            "or upload a count table instead of rows")
    assert not at.metric  # nothing loaded
    # a small file fits; removing the refused one leaves the budget to it
    at.button(key="remove_0").click()
    ok(at.run())
    at = upload(at, "judge.jsonl", JUDGE.read_bytes())
    assert errors(at) == [] and at.metric


def test_heavy_work_waits_for_a_slot_then_says_the_server_is_busy(monkeypatch):
    from dashboard.runtime import runtime

    monkeypatch.setenv("CALIB_HEAVY_JOBS", "1")
    monkeypatch.setenv("CALIB_HEAVY_WAIT_SECONDS", "0.2")
    at = ok(app().run())
    gate = runtime().heavy
    release = threading.Event()
    held = threading.Event()

    def hold() -> None:
        with gate.slot("someone else's bootstrap"):
            held.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert held.wait(10)
        at = upload(at, "judge.jsonl", JUDGE.read_bytes())
        assert errors(at) == ["loading judge.jsonl: the server is busy with other people's computations "
                              "(waited 0.2 s for one of 1 slots); try again in a moment"]
    finally:
        release.set()
        t.join()
    # once the slot is free, the same file loads (the failure was not cached)
    at.button(key="remove_0").click()
    ok(at.run())
    at = upload(at, "judge.jsonl", JUDGE.read_bytes())
    assert errors(at) == []


def test_password_form_unlocks_with_the_right_password_only(monkeypatch):
    monkeypatch.setenv("CALIB_PASSWORD", "open sesame")
    monkeypatch.setenv("CALIB_LOGIN_MAX_FAILURES", "2")
    at = ok(app().run())
    assert not at.file_uploader and at.text_input(key="calib_password_input").value == ""
    at.text_input(key="calib_password_input").input("nope")
    at.button[0].click()
    ok(at.run())
    assert errors(at) == ["Wrong password (1 more try before a pause)."]
    assert not at.file_uploader
    at.text_input(key="calib_password_input").input("open sesame")
    at.button[0].click()
    ok(at.run())
    assert errors(at) == [] and at.file_uploader and at.session_state["calib_unlocked"]


def routing_numbers(lo: float) -> dict[str, str]:
    rows = [json.loads(x) for x in JUDGE.read_text().splitlines() if x.strip()]
    acc = [r for r in rows if r["confidence"] >= lo]
    return {"Sent to a person": f"{len(rows) - len(acc):,}", "Accepted unseen": f"{len(acc):,}"}


def test_share_stores_the_upload_and_a_fresh_session_reopens_it_read_only():
    from calib.hosting.shares import UNAVAILABLE_MESSAGE

    at = upload(ok(app().run()), "mine.jsonl", JUDGE.read_bytes())
    at.switch_page("pages/5_Routing.py")
    ok(at.run())
    at.select_slider(key="w_lo").set_value(95)
    ok(at.run())
    at.sidebar.button(key="calib_share").click()
    ok(at.run())
    last = at.session_state["calib_last_share"]
    token, secret = last["token"], last["secret"]
    codes = [c.value for c in at.sidebar.code]
    # no browser: the link is relative; it names the page it was shared from (opened there at
    # once, without the Data page's run first)
    assert codes == [f"/Routing?share={token}", secret]

    viewer = app()
    viewer.query_params["share"] = token
    ok(viewer.run())
    # opened on the page it was shared from, with its threshold and numbers
    assert [t.value for t in viewer.title] == ["Routing"]
    assert viewer.select_slider(key="w_lo").value == 95
    got = {m.label: m.value for m in viewer.metric}
    assert {k: got[k] for k in routing_numbers(95)} == routing_numbers(95)
    assert "calib_share" not in [b.key for b in viewer.sidebar.button]
    viewer.switch_page("pages/0_Data.py")
    ok(viewer.run())
    assert all(u.disabled for u in viewer.file_uploader)
    assert viewer.text_input(key="name_0").value == "mine"

    # the owner revokes: a new session gets the dead-link page
    at.sidebar.button(key="calib_revoke_share").click()
    ok(at.run())
    assert [s.value.replace("\\", "") for s in at.success] == ["The link is revoked: it no longer opens."]
    gone = app()
    gone.query_params["share"] = token
    ok(gone.run())
    assert [t.value for t in gone.title] == ["This link is no longer available"]
    assert [m.value for m in gone.markdown] == [UNAVAILABLE_MESSAGE]
    assert not gone.metric and not gone.file_uploader


def test_a_samples_only_share_is_a_plain_link_and_stores_nothing(tmp_path):
    at = app()
    at.query_params.update({"sample": JUDGE.name, "lo": "90"})
    ok(at.run())
    at.sidebar.button(key="calib_share").click()
    ok(at.run())
    from urllib.parse import parse_qsl, urlsplit

    (link,) = [c.value for c in at.sidebar.code]
    assert link.startswith("/?") and dict(parse_qsl(urlsplit(link).query)) == {
        "page": "data", "sample": JUDGE.name, "model": "judge_a_synthetic", "lo": "90"}
    assert not (tmp_path / "data").exists()


def test_a_samples_only_link_names_its_page_and_opens_there():
    # samples only: nothing is stored, the link is the view in the URL, on the page's own path
    at = ok(app().run())
    at.multiselect(key="w_samples").set_value(["judge_a_synthetic.jsonl"])
    ok(at.run())
    at.switch_page("pages/3_Reliability.py")
    ok(at.run())
    at.sidebar.button(key="calib_share").click()
    ok(at.run())
    (code,) = [c.value for c in at.sidebar.code]
    path, _, query = code.partition("?")
    assert path == "/Reliability" and "sample=judge_a_synthetic.jsonl" in query and "page=reliability" in query

    from dashboard.sharing import page_path

    assert [page_path(p) for p in ("data", "routing", "review")] == ["", "Routing", "Review"]
