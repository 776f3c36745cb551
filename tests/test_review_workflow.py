"""The hosted review workflow of issue 25 on both catalog databases (SQLite and a real
PostgreSQL, tests/pgtest.py): unsure labels, blind or not stamped by the server, reason
tags, the owner's workflow setting, adjudication, and assignment (overlap planned, never
exceeded, balanced; holds released after the timeout; skips).

What the store keeps is read back with the database's own driver (``query``); the counts
it must satisfy are computed here from the setting (``round(0.3 * n)`` overlapped items),
never taken from the code under test.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.hosting import assignment as ha
from calib.hosting.store import Store
from calib.hosting.workflow import Workflow
from calib.labels import Label, final_labels
from tests.pgtest import database_urls
from tests.test_catalog import query
from tests.test_labels_store import PLAN, PLANS, Clock, lab, make_share

KEYS = [it.item for it in PLAN.items]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    for url in database_urls(request):
        s = Store.open(tmp_path / "data", clock=Clock(), database_url=url)
        yield s
        close = getattr(s.db, "close", None)
        if close is not None:
            close()


def flow_on(store: Store, r, **kw) -> None:
    out = store.set_workflow(r.token, Workflow(**kw), owner_secret=r.owner_secret)
    assert out.ok, out.message


def test_unsure_blind_and_reasons_are_stored_as_given(store: Store) -> None:
    r = make_share(store)
    flow_on(store, r, reason_tags=("reference wrong", "ambiguous"))
    item = PLAN.queue[0].item
    unsure = Label(item=item, correct=False, note="", reviewer="ann", kind="queue", unsure=True)
    assert store.add_label(r.token, unsure, PLANS, reasons=["ambiguous"]).ok
    refused = store.add_label(r.token, lab(PLAN.queue[1].item), PLANS, reasons=["made up"])
    assert not refused.ok and refused.message == "A reason tag is not one of the owner's tags."
    flow_on(store, r, show_judge=True)
    assert store.add_label(r.token, lab(PLAN.queue[1].item, reviewer="bob"), PLANS).ok
    assert query(store, "SELECT item, unsure, judge_shown, reasons FROM labels ORDER BY id") == [
        (item, 1, 0, '["ambiguous"]'), (PLAN.queue[1].item, 0, 1, "")]
    got = store.labels(r.token)
    assert [x.unsure for x in got.labels] == [True, False] and got.judge_shown == (False, True)
    assert got.reasons == (("ambiguous",), ())


def test_the_workflow_is_the_owners_and_checked(store: Store) -> None:
    r = make_share(store)
    out = store.set_workflow(r.token, Workflow(assign=True), owner_secret="not the secret")
    assert not out.ok and out.status == "not_owner"
    with pytest.raises(CalibError, match="overlap share must be a number from 0 to 1, got 1.5"):
        store.set_workflow(r.token, Workflow(overlap=1.5), owner_secret=r.owner_secret)
    with pytest.raises(CalibError, match="labels per overlapped item must be a whole number from 2 to 5"):
        store.set_workflow(r.token, Workflow(k=9), owner_secret=r.owner_secret)
    with pytest.raises(CalibError, match="a card field is one of question, answer, reference, rationale"):
        store.set_workflow(r.token, Workflow(card_fields=(("verdict", "x"),)), owner_secret=r.owner_secret)
    flow_on(store, r, assign=True, overlap=0.2, k=3, reviewers=(" Ann ", "bob"), guidelines="# Be fair",
            card_fields=(("reference", " meta.ref "), ("answer", "")))
    flow = store.review_setting(r.token).flow
    assert (flow.assign, flow.overlap, flow.k, flow.reviewers, flow.guidelines, flow.card_fields) == (
        True, 0.2, 3, ("Ann", "bob"), "# Be fair", (("reference", "meta.ref"),))
    # the size and seed of the audit sample are left alone
    assert store.review_setting(r.token).sample_size == 10
    not_listed = store.add_label(r.token, lab(KEYS[0], reviewer="eve"), PLANS)
    assert not not_listed.ok and not_listed.message == ha.NOT_ON_LIST
    assert not store.next_item(r.token, "", KEYS, "eve").ok
    assert store.next_item(r.token, "", KEYS, "ann").ok  # names compared without case


def test_adjudication_is_owner_only_appended_and_final(store: Store) -> None:
    r = make_share(store)
    item = PLAN.queue[0].item
    assert store.add_label(r.token, lab(item, True, "ann"), PLANS).ok
    assert store.add_label(r.token, lab(item, False, "bob"), PLANS).ok
    by_reviewer = store.add_label(r.token, lab(item, True, "bob", kind="adjudication"), PLANS)
    assert not by_reviewer.ok and by_reviewer.message == "Only the link's owner adjudicates."
    assert not store.adjudicate(r.token, lab(item, True, "owner"), PLANS, owner_secret="wrong").ok
    assert store.adjudicate(r.token, lab(item, True, "owner", note="key is right"), PLANS,
                            owner_secret=r.owner_secret).ok
    assert store.adjudicate(r.token, lab(item, False, "owner"), PLANS, owner_secret=r.owner_secret).ok
    assert query(store, "SELECT item, correct, note, adjudicator FROM adjudications ORDER BY id") == [
        (item, 1, "key is right", "owner"), (item, 0, "", "owner")]
    labels = store.labels(r.token).labels
    assert [x.kind for x in labels] == ["queue", "queue", "adjudication", "adjudication"]
    fin = final_labels(labels)
    assert fin.of() == {item: False} and fin.status == ("adjudicated",)  # the latest adjudication


def drain(store: Store, r, reviewers: list[str], order: list[str] | None = None) -> None:
    """Reviewers ask for their next item and label it, in turn, until none is left."""
    order = order or reviewers
    left = set(reviewers)
    turn = 0
    while left:
        who = order[turn % len(order)]
        turn += 1
        if who not in left:
            continue
        got = store.next_item(r.token, "", KEYS, who)
        assert got.ok
        if got.item is None:
            left.remove(who)
            continue
        kind = next(it.kind for it in PLAN.items if it.item == got.item)
        out = store.add_label(r.token, lab(got.item, turn % 3 != 0, who, kind=kind), PLANS)
        assert out.ok, out.message


def test_assignment_gives_each_item_its_planned_labels_and_balances_the_overlap(store: Store) -> None:
    r = make_share(store)
    flow_on(store, r, assign=True, overlap=0.3)
    drain(store, r, ["ann", "bob", "cy"])
    per_item = Counter(i for i, _ in query(store, "SELECT DISTINCT item, reviewer FROM labels"))
    n = len(KEYS)
    assert set(per_item) == set(KEYS)  # every item labelled
    assert sorted(per_item.values()) == [1] * (n - round(0.3 * n)) + [2] * round(0.3 * n)
    assert query(store, "SELECT COUNT(*) FROM labels")[0][0] == n + round(0.3 * n)  # no label twice
    overlap = {i for i, c in per_item.items() if c == 2}
    by_reviewer: dict[str, int] = defaultdict(int)
    for item, who in query(store, "SELECT item, reviewer FROM labels"):
        by_reviewer[who] += item in overlap
    assert max(by_reviewer.values()) - min(by_reviewer.values()) <= 1, by_reviewer


def _hand(keys: list[str], planned: dict[str, int], state: ha.ItemState, who: str) -> str | None:
    item = ha.choose(keys, planned, state, who)
    if item is not None:
        state.held.setdefault(item, set()).add(who)
    return item


@pytest.mark.parametrize("n", [10, 12, 20, 30, 50])
def test_the_overlap_is_within_one_between_reviewers_whatever_order_they_arrive_in(n: int) -> None:
    """:func:`calib.hosting.assignment.choose` alone, three reviewers holding an item each
    from the start (in every arrival order, five seeds, three overlap shares) and labelling
    in turn: each item gets its planned labels, overlapped labels within one apart."""
    for share, order, seed in itertools.product((0.2, 0.3, 0.5), itertools.permutations(["a", "b", "c"]),
                                                range(5)):
        planned = ha.planned_labels([f"k{i}" for i in range(n)], Workflow(overlap=share), seed)
        keys = list(planned)
        state = ha.ItemState()
        holding = {w: _hand(keys, planned, state, w) for w in order}
        while any(holding.values()):
            for w in ("a", "b", "c"):
                if holding[w] is not None:
                    state.held[holding[w]].discard(w)
                    state.labelled.setdefault(holding[w], set()).add(w)
                    holding[w] = _hand(keys, planned, state, w)
        got = {k: len(state.labelled.get(k, ())) for k in keys}
        m = round(share * n)
        assert sorted(got.values()) == [1] * (n - m) + [2] * m
        over = Counter(w for k, ws in state.labelled.items() if got[k] == 2 for w in ws)
        assert max(over.get(w, 0) for w in "abc") - min(over.get(w, 0) for w in "abc") <= 1, (share, order, seed)


def test_a_hold_is_released_after_the_timeout_and_the_write_is_the_check(store: Store) -> None:
    r = make_share(store)
    flow_on(store, r, assign=True, overlap=0.0)
    first = store.next_item(r.token, "", KEYS, "ann").item
    assert store.next_item(r.token, "", KEYS, "ann").item == first  # asking again: the same hold
    assert store.next_item(r.token, "", KEYS, "bob").item != first  # held for ann
    store.clock.t += store.hold_seconds + 1  # ann left
    assert store.next_item(r.token, "", KEYS, "cy").item == first
    kind = PLAN.items[0].kind
    assert store.add_label(r.token, lab(first, True, "cy", kind=kind), PLANS).ok
    late = store.add_label(r.token, lab(first, True, "ann", kind=kind), PLANS)
    assert not late.ok and late.message == ha.NO_ROOM  # never over the plan
    assert query(store, "SELECT reviewer FROM labels") == [("cy",)]
    assert store.add_label(r.token, lab(first, False, "cy", kind=kind), PLANS).ok  # a changed mind is fine


def test_a_skipped_item_is_not_offered_again_and_its_slot_is_free(store: Store) -> None:
    r = make_share(store)
    flow_on(store, r, assign=True, overlap=0.0)
    first = store.next_item(r.token, "", KEYS, "ann").item
    assert store.skip_item(r.token, "", first, "ann").ok
    assert store.next_item(r.token, "", KEYS, "ann").item != first
    assert store.next_item(r.token, "", KEYS, "bob").item == first
    prog = store.assignment_progress(r.token, "", KEYS)
    assert prog.per_reviewer == {"ann": (0, 0, 1)} and prog.planned == len(KEYS) and prog.given == 0


def test_the_export_carries_unsure_and_adjudications_and_imports_back_to_the_same_final_labels(
    store: Store,
) -> None:
    from calib.labels.records import labels_to_csv, read_labels

    r = make_share(store)
    a, b = PLAN.queue[0].item, PLAN.queue[1].item
    assert store.add_label(r.token, lab(a, True, "ann"), PLANS).ok
    assert store.add_label(r.token, lab(a, False, "bob"), PLANS).ok
    unsure = Label(item=b, correct=False, note="", reviewer="bob", kind="queue", unsure=True)
    assert store.add_label(r.token, unsure, PLANS).ok
    assert store.adjudicate(r.token, lab(a, False, "owner"), PLANS, owner_secret=r.owner_secret).ok
    exported = store.labels(r.token).labels
    back, problems = read_labels(labels_to_csv(exported), "labels.csv")
    assert problems == ()
    other = make_share(store)
    out = store.import_labels(other.token, back, PLANS, owner_secret=other.owner_secret)
    assert out.ok and out.written == 4
    assert query(store, "SELECT item, correct, adjudicator FROM adjudications ORDER BY id") == [
        (a, 0, "owner"), (a, 0, "owner")]  # the first share's and its import
    again = store.labels(other.token).labels
    assert [(x.item, x.kind, x.unsure) for x in again] == [(a, "queue", False), (a, "queue", False),
                                                            (b, "queue", True), (a, "adjudication", False)]
    assert final_labels(again).of() == final_labels(exported).of() == {a: False}


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_judge_shown_and_reasons_go_out_in_the_export_and_come_back_with_an_import(store: Store, fmt: str) -> None:
    """Every label says whether the judge was shown and its reason tags; both reach the
    JSONL and CSV exports (written here from the store's rows read with SQL) and an
    import puts them back in the store as they were."""
    import csv
    import io
    import json

    from calib.labels.records import labels_to_csv, labels_to_jsonl, read_labels

    r = make_share(store)
    flow_on(store, r, reason_tags=("=reference wrong", "ambiguous"))
    a, b = PLAN.queue[0].item, PLAN.queue[1].item
    assert store.add_label(r.token, lab(a, True, "ann"), PLANS, reasons=["=reference wrong", "ambiguous"]).ok
    flow_on(store, r, show_judge=True, reason_tags=("ambiguous",))
    assert store.add_label(r.token, lab(b, False, "bob"), PLANS).ok
    rows = query(store, "SELECT item, reviewer, judge_shown, reasons FROM labels ORDER BY id")
    assert rows == [(a, "ann", 0, '["=reference wrong", "ambiguous"]'), (b, "bob", 1, "")]
    exported = store.labels(r.token).labels
    data = (labels_to_jsonl if fmt == "jsonl" else labels_to_csv)(exported)
    if fmt == "jsonl":
        out = [(d["item"], d["judge_shown"], d["reasons"]) for d in map(json.loads, data.decode().splitlines())]
        assert out == [(a, False, ["=reference wrong", "ambiguous"]), (b, True, [])]
    else:
        out = [(d["item"], d["judge_shown"], d["reasons"]) for d in csv.DictReader(io.StringIO(data.decode()))]
        assert out == [(a, "false", "'=reference wrong, ambiguous"), (b, "true", "")]  # formula cell neutralised
    back, problems = read_labels(data, f"labels.{fmt}")
    assert problems == () and back == exported
    other = make_share(store)  # tags of another link: an import keeps them, and keeps judge_shown
    assert store.import_labels(other.token, back, PLANS, owner_secret=other.owner_secret).written == 2
    assert store.labels(other.token).labels == exported
    assert query(store, "SELECT judge_shown, reasons FROM labels ORDER BY id")[2:] == [
        (0, '["=reference wrong", "ambiguous"]'), (1, "")]


def test_a_reviewer_cannot_claim_the_judge_was_shown(store: Store) -> None:
    r = make_share(store)
    claim = Label(item=PLAN.queue[0].item, correct=True, reviewer="ann", kind="queue", judge_shown=True)
    assert store.add_label(r.token, claim, PLANS).ok
    assert query(store, "SELECT judge_shown FROM labels") == [(0,)]  # the owner's setting: blind
