"""The Review page's workflow driven headless with AppTest (issue 25), on a traffic file:
the owner sets the workflow in the page's form (assignment on, a reason tag, guidelines
with HTML in them); two reviewers then get different items in the traffic plan's order
(the plan decides which items, assignment who), an Unsure with a reason and a Skip are
stored as such (read with sqlite3), and the guidelines reach ``st.markdown`` without a tag.
"""

from __future__ import annotations

import sqlite3

import pytest

from calib.traffic.read import read_traffic
from calib.traffic.review import traffic_review
from tests.apptest import app, clear_caches, ok, upload
from tests.test_app_traffic import TRAFFIC, jsonl, reviewer, shown

GUIDELINES = "**Be strict.**\n\n<script>window.__x=1</script> <img src=x onerror=alert(1)>"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    for var in ("CALIB_PASSWORD", "CALIB_AUTH", "CALIB_ALLOWED_DOMAINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CALIB_DATA_DIR", str(tmp_path / "data"))
    clear_caches()
    yield
    clear_caches()


def test_the_owner_sets_assignment_and_reviewers_get_the_traffic_plan_in_turn(tmp_path):
    at = upload(ok(app().run()), "traffic.jsonl", jsonl(TRAFFIC))
    at.radio(key="mode_0").set_value("traffic")
    ok(at.run())
    at.switch_page("pages/8_Review.py")
    ok(at.run())
    at.sidebar.button(key="calib_share").click()
    ok(at.run())
    token = at.session_state["calib_last_share"]["token"]
    at.sidebar.toggle(key="calib_review_on").set_value(True)
    ok(at.run())
    # the owner's form on the Review page (no reviewer name needed)
    at.checkbox(key="calib_flow_assign").check()
    at.text_area(key="calib_flow_guidelines").input(GUIDELINES)
    at.text_input(key="calib_flow_tags").input("ambiguous, reference wrong")
    at.button(key="FormSubmitter:calib_workflow_form-Save the workflow").click()
    ok(at.run())
    assert [s.value.replace("\\", "") for s in at.main.success] == [
        "Assignment on: the server hands anyone with the link their next item; 0.0% of the items are planned "
        "for 2 labels each, the others for one; blind: the judge's confidence and the file's outcome are hidden "
        "from reviewers."]
    with sqlite3.connect(tmp_path / "data" / "catalog.sqlite3") as con:
        assert con.execute("SELECT assign, reason_tags FROM reviewing").fetchall() == [
            (1, '["ambiguous", "reference wrong"]')]

    tr = read_traffic(jsonl(TRAFFIC), "traffic.jsonl")
    order = [it.item for it in traffic_review(tr, 80.0, 50, seed=0, target_error=0.05).items]
    ann, bob = reviewer(token, "Ann"), reviewer(token, "Bob")
    assert (shown(ann), shown(bob)) == (order[0], order[1])  # held: never the same item
    assert all("<" not in m.value for m in ann.markdown)  # the guidelines, as Markdown without a tag
    assert any("**Be strict.**" in m.value for m in ann.markdown)
    ann.multiselect(key=f"calib_review_reasons__{order[0]}").select("ambiguous")
    ann.button(key="calib_review_unsure").click()
    ok(ann.run())
    assert shown(ann) == order[2]
    bob.button(key="calib_review_next").click()  # Skip
    ok(bob.run())
    assert shown(bob) == order[3]
    with sqlite3.connect(tmp_path / "data" / "catalog.sqlite3") as con:
        assert con.execute("SELECT item, reviewer, unsure, judge_shown, reasons FROM labels").fetchall() == [
            (order[0], "Ann", 1, 0, '["ambiguous"]')]
        assert con.execute("SELECT item, reviewer FROM assignments WHERE state = 'skipped'").fetchall() == [
            (order[1], "Bob")]


def page_text(at) -> str:
    """Every element's content on the page (its protobuf as text: values, labels, help,
    captions, table data), what a reviewer could read or download."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


def test_a_second_reviewer_sees_neither_the_first_ones_label_nor_the_judge_when_blind(tmp_path):
    from calib.present.review import QUEUE_WITHHELD
    from tests.test_app_review import ROWS, owner_share

    owner, token = owner_share()
    owner.sidebar.toggle(key="calib_review_on").set_value(True)
    ok(owner.run())
    owner.switch_page("pages/8_Review.py")
    ok(owner.run())
    owner.checkbox(key="calib_flow_assign").check()
    owner.number_input(key="calib_flow_overlap").set_value(100)  # every item for two reviewers
    owner.text_input(key="calib_flow_tags").input("ambiguous")
    owner.button(key="FormSubmitter:calib_workflow_form-Save the workflow").click()
    ok(owner.run())
    ann = reviewer(token, "Ann")
    item = shown(ann)
    ann.text_input(key=f"calib_review_note__{item}").set_value("ANN-SECRET-NOTE")
    ann.multiselect(key=f"calib_review_reasons__{item}").select("ambiguous")
    ann.button(key="calib_review_wrong").click()
    ok(ann.run())
    with sqlite3.connect(tmp_path / "data" / "catalog.sqlite3") as con:
        assert con.execute("SELECT item, reviewer, correct, judge_shown, reasons FROM labels").fetchall() == [
            (item, "Ann", 0, 0, '["ambiguous"]')]
    bob = reviewer(token, "Bob")
    assert shown(bob) == item  # the same item, planned for two labels
    text = page_text(bob)
    for leak in ("ANN-SECRET-NOTE", "Ann", "Your label", "Stated confidence", "As a probability",
                 "Outcome in the file", "(review queue)", "(audit sample)", "Labels so far", "Adjudication"):
        assert leak not in text, leak
    row = next(r for r in ROWS if r["id"] == item)
    card = [t.value for t in bob.text]
    assert not any(f" {row['confidence']}" in t or t.endswith(str(row["confidence"])) for t in card), card
    assert not bob.main.metric and not bob.get("arrow_data_frame") and not bob.get("download_button")
    # another page of the reviewer's session: the review queue (each item's confidence) is withheld
    bob.switch_page("pages/5_Routing.py")
    ok(bob.run())
    assert QUEUE_WITHHELD in [c.value for c in bob.caption]
    assert not [d for d in bob.get("download_button") if "review queue" in str(d.proto)]
    owner.switch_page("pages/5_Routing.py")
    ok(owner.run())
    assert [d for d in owner.get("download_button") if "review queue" in str(d.proto)]
