"""The Routing page's traffic section driven headless with AppTest (issue 24): a labelled
file and a traffic file loaded together, the traffic labelled through the link's store; the
page shows the traffic's error among the accepted beside the labelled file's, both counted
here by hand, and follows a changed label. (The alarm is the browser test's:
tests/e2e/test_traffic_review.py.)"""

from __future__ import annotations

import json

import pytest

from calib.hosting.store import Store
from calib.labels.records import Label
from calib.traffic.read import read_traffic
from calib.traffic.review import traffic_review
from tests.apptest import app, clear_caches, ok, upload

LO = 90
JUDGE = [{"id": f"j{i}", "confidence": (50, 90, 95)[i % 3], "correct": i % 5 != 0} for i in range(30)]
TRAFFIC = [{"id": f"t{i:02d}", "confidence": 30 if i < 6 else 95} for i in range(30)]


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    for var in ("CALIB_PASSWORD", "CALIB_AUTH", "CALIB_ALLOWED_DOMAINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CALIB_DATA_DIR", str(tmp_path / "data"))
    clear_caches()
    yield
    clear_caches()


def test_the_routing_page_shows_the_traffic_estimate_beside_the_labelled_files(tmp_path):
    at = upload(ok(app().run()), "judge.jsonl", jsonl(JUDGE))
    at.file_uploader[0].set_value(("traffic.jsonl", jsonl(TRAFFIC), "application/json"))
    ok(at.run())
    at.radio(key="mode_1").set_value("traffic")
    ok(at.run())
    assert [m.value for m in at.metric if m.label == "Items kept"] == [f"{len(TRAFFIC)}"]
    at.switch_page("pages/5_Routing.py")
    ok(at.run())
    at.select_slider(key="w_lo").set_value(LO)
    ok(at.run())
    assert "No labels yet" in " ".join(c.value for c in at.caption)
    at.sidebar.button(key="calib_share").click()
    ok(at.run())
    token = at.session_state["calib_last_share"]["token"]
    at.sidebar.toggle(key="calib_review_on").set_value(True)
    ok(at.run())

    # labels through the store, on the plan the Review page serves (default budget 50, seed 0, target 5%)
    tr = read_traffic(jsonl(TRAFFIC), "traffic.jsonl")
    plan = traffic_review(tr, LO, 50, seed=0, target_error=0.05)
    store = Store.open(tmp_path / "data")
    high = [it for it in plan.items if it.stated >= LO]
    wrong = {high[0].item, high[1].item}
    for it in plan.items:  # every item, in the plan's order
        label = Label(item=it.item, correct=it.item not in wrong, reviewer="Ann", kind=it.kind, dataset="traffic")
        assert store.add_label(token, label, {"traffic": plan}).ok
    ok(at.run())
    got = {m.label: m.value for m in at.metric}
    accepted = [r for r in JUDGE if r["confidence"] >= LO]
    assert got["Error among accepted, labelled file"] == \
        f"{100 * sum(not r['correct'] for r in accepted) / len(accepted):.1f}%"
    # every accepted traffic item is labelled: the error is known, 2 of the 24 at 95
    assert got["Error among accepted, traffic"] == f"{100 * 2 / 24:.1f}%"
    assert not at.error  # nothing withdrawn: the wrong labels came first

    # a wrong label replacing a right one on the last accepted item: its stratum's error rises
    last = high[-1]
    assert store.add_label(token, Label(item=last.item, correct=False, reviewer="Ann", kind=last.kind,
                                        dataset="traffic"), {"traffic": plan}).ok
    ok(at.run())
    assert {m.label: m.value for m in at.metric}["Error among accepted, traffic"] == f"{100 * 3 / 24:.1f}%"


def reviewer(token: str, name: str):
    at = app()
    at.query_params["share"] = token
    ok(at.run())
    at.switch_page("pages/8_Review.py")
    ok(at.run())
    at.text_input(key="calib_reviewer_input").set_value(name)
    at.button(key="FormSubmitter:calib_reviewer_form-Start reviewing").click()
    return ok(at.run())


def shown(at) -> str:
    return next(t.value for t in at.text if t.value.startswith("Item ")).rsplit(": ", 1)[1]


def test_two_reviewers_at_once_go_on_in_the_plans_order_without_labelling_twice():
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
    tr = read_traffic(jsonl(TRAFFIC), "traffic.jsonl")
    order = [it.item for it in traffic_review(tr, 80.0, 50, seed=0, target_error=0.05).items]
    ann, bob = reviewer(token, "Ann"), reviewer(token, "Bob")
    assert shown(ann) == shown(bob) == order[0]
    ann.button(key="calib_review_right").click()
    ok(ann.run())
    assert shown(ann) == order[1]
    ok(bob.run())  # Bob's next run (any click): Ann labelled his item meanwhile, so he goes on
    assert shown(bob) == order[1]
    bob.button(key="calib_review_wrong").click()
    ok(bob.run())
    ok(ann.run())
    assert (shown(ann), shown(bob)) == (order[2], order[2])


def test_an_inspect_log_marked_as_traffic_is_read_by_its_own_reader():
    """Issue 24 item 1: the Data page's traffic choice reads every format an audit reads, not
    only JSONL and CSV (an Inspect .eval log was refused: 'no confidence field'). The count is
    the log's samples with a usable confidence, as the audit's own reader keeps them."""
    from pathlib import Path

    from calib.loading import load

    log = next(Path("tests/data/inspect-0.3.285").glob("*calib-mc-json*.eval"))
    data = log.read_bytes()
    audited = load(log.name, data)
    at = upload(ok(app().run()), log.name, data)
    at.radio(key="mode_0").set_value("traffic")
    ok(at.run())
    assert not any("no confidence field" in e.value for e in at.error), [e.value for e in at.error]
    assert [m.value for m in at.metric if m.label == "Items kept"] == [f"{audited.table.total:,}"]
