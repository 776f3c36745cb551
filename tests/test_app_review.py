"""The Review page driven headless with AppTest: the one sentence outside a share and with
reviewing off; the owner's switch in the Share panel; a reviewer's name, a label through
the real buttons, the progress from the store (a second reviewer sees the same count),
item text shown as text only. Counts are checked against the store read with sqlite3 and
against a per-row count of the file written here."""

from __future__ import annotations

import json
import sqlite3

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.review import NOT_ENABLED, NOT_SHARED, PROGRESS_TEXT
from tests.apptest import app, clear_caches, ok, upload

XSS = "<script>alert(1)</script> [link](javascript:alert(2)) ![x](http://example.invalid/x.png)"


def judge_file() -> bytes:
    lines = []
    for i in range(30):
        conf = 40 + 10 * (i % 6)  # 40..90
        lines.append(
            json.dumps(
                {
                    "id": f"it{i:02d}",
                    "subject": "s",
                    "confidence": conf,
                    "correct": i % 3 != 0,
                    "question": f"{XSS} #{i}",
                }
            )
        )
    return ("\n".join(lines) + "\n").encode()


DATA = judge_file()
ROWS = [json.loads(x) for x in DATA.decode().splitlines()]
LO = 70  # the owner's threshold


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    for var in ("CALIB_PASSWORD", "CALIB_AUTH", "CALIB_ALLOWED_DOMAINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CALIB_DATA_DIR", str(tmp_path / "data"))
    clear_caches()
    yield
    clear_caches()


def owner_share() -> tuple[AppTest, str]:
    """The owner uploads, sets the threshold on the Routing page and shares."""
    at = upload(ok(app().run()), "judge.jsonl", DATA)
    at.switch_page("pages/5_Routing.py")
    ok(at.run())
    at.select_slider(key="w_lo").set_value(LO)
    ok(at.run())
    at.sidebar.button(key="calib_share").click()
    ok(at.run())
    return at, at.session_state["calib_last_share"]["token"]


def reviewer(token: str) -> AppTest:
    at = app()
    at.query_params["share"] = token
    ok(at.run())
    at.switch_page("pages/8_Review.py")
    return ok(at.run())


def test_outside_a_share_the_page_says_so_in_one_sentence():
    at = app()
    at.switch_page("pages/8_Review.py")
    ok(at.run())
    assert [i.value for i in at.info] == [
        "No data loaded yet. Upload a file or pick a sample on the Data page."
    ]
    at = upload(ok(app().run()), "judge.jsonl", DATA)
    at.switch_page("pages/8_Review.py")
    ok(at.run())
    assert [i.value for i in at.info] == [NOT_SHARED]
    assert [h.value for h in at.subheader][:1] == ["Which answers must a person check, and what did the reviewers find?"]
    assert not at.error and not at.get("progress")


def test_reviewing_off_then_on_labels_and_progress_from_the_store(tmp_path):
    owner, token = owner_share()
    off = reviewer(token)
    assert [i.value for i in off.info] == [NOT_ENABLED]
    assert not off.error
    # the owner turns reviewing on in the Share panel
    toggle = owner.sidebar.toggle(key="calib_review_on")
    assert toggle.value is False
    toggle.set_value(True)
    ok(owner.run())
    assert owner.sidebar.toggle(key="calib_review_on").value is True
    owner.sidebar.number_input(key="calib_review_size").set_value(5)
    ok(owner.run())
    notices = [x.value.replace("\\", "") for x in owner.sidebar.success]
    assert notices == ["Reviewing is on: reviewers with the link can label (audit sample of 5, seed 0)."]

    ann = reviewer(token)
    assert not ann.info or NOT_ENABLED not in [i.value for i in ann.info]
    ann.text_input(key="calib_reviewer_input").set_value("Ann")
    ann.button(key="FormSubmitter:calib_reviewer_form-Start reviewing").click()
    ok(ann.run())
    queue = [r for r in ROWS if r["confidence"] < LO]
    accepted = [r for r in ROWS if r["confidence"] >= LO]
    total = len(queue) + min(5, len(accepted))
    assert total == 20
    assert "Reviewing as Ann" in [t.value for t in ann.text]
    assert ann.query_params.get("reviewer") in (["Ann"], "Ann")
    bar = ann.get("progress")[0]
    assert bar.proto.text == PROGRESS_TEXT.format(done=0, total=total)
    # the first item is the most doubtful one: the lowest confidence, first line
    first = min(queue, key=lambda r: (r["confidence"], ROWS.index(r)))
    assert f"Item 1 of {total}: {first['id']}" in [t.value for t in ann.text]  # blind: no list named
    # its text is a code block, never markdown
    assert [c.value for c in ann.code] == [first["question"]]
    assert all(XSS not in m.value for m in ann.markdown)
    ann.text_input(key=f"calib_review_note_{''}_{first['id']}").set_value("looks off")
    ann.button(key="calib_review_wrong").click()
    ok(ann.run())
    with sqlite3.connect(tmp_path / "data" / "catalog.sqlite3") as con:
        rows = con.execute("SELECT item, correct, note, reviewer, kind FROM labels").fetchall()
    assert rows == [(first["id"], 0, "looks off", "Ann", "queue")]
    assert ann.get("progress")[0].proto.text == PROGRESS_TEXT.format(done=1, total=total)
    # a second reviewer's page counts the same label
    bob = reviewer(token)
    bob.text_input(key="calib_reviewer_input").set_value("Bob")
    bob.button(key="FormSubmitter:calib_reviewer_form-Start reviewing").click()
    ok(bob.run())
    assert bob.get("progress")[0].proto.text == PROGRESS_TEXT.format(done=1, total=total)
    # the page opens with its question and the answer counted by hand
    assert bob.subheader[0].value == "Which answers must a person check, and what did the reviewers find?"
    answer = next(m.value for m in bob.markdown if "labelled so far" in m.value).replace("\\", "")  # md-escaped
    assert answer == (f"The {len(queue)} items scored below the owner's threshold {LO:g}, and an audit sample of "
                      f"5 of the {len(accepted)} items accepted unseen; 1 of {total} labelled so far.")
    # blind (issue 25): a reviewer sees neither the judge nor the other reviewers' labels
    assert not bob.main.metric and "Labels so far" not in [h.value for h in bob.subheader]
    assert all(first["id"] not in t.value for t in bob.text)  # Ann's item is not Bob's card
    # the owner imports a labels file on the page (in the session that made the link)
    owner.switch_page("pages/8_Review.py")
    ok(owner.run())
    owner.text_input(key="calib_reviewer_input").set_value("Owner")
    owner.button(key="FormSubmitter:calib_reviewer_form-Start reviewing").click()
    ok(owner.run())
    # labels so far, the owner's: Ann called the first item wrong, and so does the file
    got = {m.label: m.value for m in owner.metric}
    assert first["correct"] is False
    assert got["Agreement, judge vs reviewers"] == "100.0%"
    second = sorted(queue, key=lambda r: (r["confidence"], ROWS.index(r)))[1]
    line = {
        "item": second["id"],
        "correct": True,
        "reviewer": "Carol",
        "time": "2026-03-04T05:06:07Z",
        "kind": "queue",
        "dataset": "",
        "note": "",
    }
    ghost = dict(line, item="ghost")
    owner.file_uploader[0].set_value(
        ("more.jsonl", (json.dumps(line) + "\n" + json.dumps(ghost) + "\n").encode(), "application/json")
    )
    ok(owner.run())
    warnings = [w.value.replace("\\", "") for w in owner.warning]
    assert warnings == [
        "Imported 1 label(s) from the file; 1 left out: label 2: item 'ghost' is not in this link's "
        "review queue or audit sample"
    ]
    with sqlite3.connect(tmp_path / "data" / "catalog.sqlite3") as con:
        assert con.execute("SELECT reviewer, item, time FROM labels ORDER BY id").fetchall() == [
            ("Ann", first["id"], con.execute("SELECT time FROM labels WHERE reviewer='Ann'").fetchone()[0]),
            ("Carol", second["id"], "2026-03-04T05:06:07Z"),
        ]
    assert owner.get("progress")[0].proto.text == PROGRESS_TEXT.format(done=2, total=total)
    # the audit again on the reviewers' outcomes: Carol's "right" replaces the file's outcome of
    # the second item, Ann's "wrong" agrees with the file's; accuracy counted by hand
    assert "The audit on the reviewers' outcomes" in [h.value for h in owner.subheader]
    right = sum(bool(r["correct"]) for r in ROWS) - bool(second["correct"]) + 1
    human = {m.label: m.value for m in owner.metric}
    assert human["Accuracy (reviewers' outcomes)"] == f"{100 * right / len(ROWS):.1f}%"


def test_the_owner_enables_reviewing_from_another_session_with_the_owner_key(tmp_path):
    from calib.hosting.shares import NOT_OWNER_MESSAGE

    owner, token = owner_share()
    secret = owner.session_state["calib_last_share"]["secret"]
    other = reviewer(token)  # the owner, later, in another browser: read-only until the key proves it
    other.sidebar.text_input(key="calib_owner_key").set_value("x" * 43)
    other.sidebar.toggle(key="calib_review_on").set_value(True)
    ok(other.run())
    assert [e.value.replace("\\", "") for e in other.sidebar.error] == [NOT_OWNER_MESSAGE]
    assert other.sidebar.toggle(key="calib_review_on").value is False
    other.sidebar.text_input(key="calib_owner_key").set_value(secret)
    other.sidebar.toggle(key="calib_review_on").set_value(True)
    ok(other.run())
    assert other.sidebar.toggle(key="calib_review_on").value is True
    with sqlite3.connect(tmp_path / "data" / "catalog.sqlite3") as con:
        assert con.execute("SELECT enabled, sample_size, seed FROM reviewing").fetchall() == [(1, 50, 0)]
    assert other.text_input(key="calib_reviewer_input")  # the Review page now asks for a name
