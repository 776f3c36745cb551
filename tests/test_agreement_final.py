"""Final labels (issue 25, item 5's rule): the ``unsure`` field of a label record (old
exports still import, the round trip keeps it), adjudications as an append-only record
kind, and the rule (adjudicated, else the majority; ties and unsure not counted) checked
against verdicts worked out by hand here and against a brute-force rule on random labels."""

from __future__ import annotations

import json

import numpy as np
import pytest

from calib.labels import (
    Label,
    accepted_error,
    labels_to_csv,
    labels_to_jsonl,
    read_labels,
    with_human_outcomes,
)
from calib.labels.final import final_labels
from calib.labels.records import label_problem
from calib.rows import Judgments
from calib.scale import Scale

T0 = "2026-12-01T18:30:00Z"
T1 = "2026-12-01T19:30:00Z"


def lab(item, correct, reviewer="ann", kind="audit", time=T0, unsure=False, note=""):
    return Label(item=item, correct=correct, note=note, reviewer=reviewer, time=time, kind=kind, unsure=unsure)


def adj(item, correct, time=T1, who="owner"):
    return lab(item, correct, reviewer=who, kind="adjudication", time=time)


def rows_of(stated, correct) -> Judgments:
    stated = np.asarray(stated, dtype=np.float64)
    n = stated.size
    return Judgments(
        stated=stated, prob=stated / 100, correct=np.asarray(correct, dtype=bool), line=np.arange(1, n + 1),
        item_id=np.array([f"q{i}" for i in range(n)], dtype=object), scale=Scale(0.0, 100.0, "0-100"),
    )


# ------------------------------------------------------------------ the record
def test_unsure_round_trips_through_jsonl_and_csv():
    labels = [lab("q1", True), lab("q2", False, unsure=True, note="=1+1"), adj("q2", True)]
    for data, name in ((labels_to_jsonl(labels), "l.jsonl"), (labels_to_csv(labels), "l.csv")):
        back, msgs = read_labels(data, name)
        assert back == tuple(labels) and msgs == ()
    assert json.loads(labels_to_jsonl(labels[1:2]))["unsure"] is True
    assert labels_to_csv(labels[1:2]).decode().splitlines() == [
        '"dataset","item","correct","note","reviewer","time","kind","unsure","judge_shown","reasons"',
        '"","q2","false","\'=1+1","ann","2026-12-01T18:30:00Z","audit","true","false",""',
    ]


def test_old_exports_without_unsure_still_import():
    old_csv = (
        '"dataset","item","correct","note","reviewer","time","kind"\n'
        '"","q1","true","","ann","2026-12-01T18:30:00Z","audit"\n'
    )
    old_jsonl = '{"item": "q1", "correct": true, "reviewer": "ann", "time": "2026-12-01T18:30:00Z", "kind": "audit"}\n'
    for text, name in ((old_csv, "old.csv"), (old_jsonl, "old.jsonl")):
        back, msgs = read_labels(text.encode(), name)
        assert back == (lab("q1", True),) and msgs == () and back[0].unsure is False


def test_bad_unsure_and_unsure_adjudications_are_refused_naming_the_line():
    text = (
        '{"item": "q1", "correct": true, "reviewer": "a", "time": "2026-12-01T18:30:00Z", "unsure": "yes"}\n'
        '{"item": "q2", "correct": true, "reviewer": "a", "time": "2026-12-01T18:30:00Z", "unsure": true, '
        '"kind": "adjudication"}\n'
        '{"item": "q3", "correct": false, "reviewer": "a", "time": "2026-12-01T18:30:00Z", "unsure": true}\n'
    )
    back, msgs = read_labels(text.encode(), "l.jsonl")
    assert [b.item for b in back] == ["q3"]
    assert msgs == (
        "l.jsonl line 1: unsure must be true or false, got 'yes'",
        "l.jsonl line 2: an adjudication is the final label: it says right or wrong, it cannot be unsure",
    )
    assert label_problem(lab("q", True, unsure=1)) == "unsure must be true or false, got 1"


# ------------------------------------------------------------------ the rule
def test_final_labels_by_hand():
    labels = [
        lab("a", True), lab("a", True, "bob"), lab("a", False, "cy"),  # majority right
        lab("b", True), lab("b", False, "bob"),  # tie
        lab("c", True), lab("c", False, "bob"), adj("c", False, T0), adj("c", True, T1),  # latest adjudication
        lab("d", True, unsure=True), lab("d", False, "bob", unsure=True),  # only unsure
        lab("e", True), lab("e", False, "bob", unsure=True),  # unsure is no vote: 1-0
        lab("f", False, time=T0), lab("f", True, unsure=True, time=T1),  # a later unsure replaces the vote
        adj("g", False),  # adjudicated without reviewers
        lab("h", False), lab("h", False, "bob"), adj("h", True),  # the adjudication overrides the majority
    ]
    f = final_labels(labels)
    assert dict(zip(f.items, zip(f.correct, f.status, strict=True), strict=True)) == {
        "a": (True, "majority"), "b": (None, "tie"), "c": (True, "adjudicated"), "d": (None, "unsure"),
        "e": (True, "majority"), "f": (None, "unsure"), "g": (False, "adjudicated"), "h": (True, "adjudicated"),
    }
    assert f.of() == {"a": True, "c": True, "e": True, "g": False, "h": True}
    d = f.to_dict()
    assert (d["adjudicated"], d["majority"], d["tie"], d["unsure"]) == (3, 2, 1, 2)
    assert "1 tied and 2 only unsure have none and are not counted" in d["sentence"]
    assert "ties" in d["rule"] and "unsure" in d["rule"]


def brute_final(labels: list[Label]) -> dict[str, bool | None]:
    """The rule written directly: the last adjudication in time, else a count of each
    reviewer's last label (unsure: no vote), a tie or no vote None."""
    out: dict[str, bool | None] = {}
    for item in {x.item for x in labels}:
        mine = sorted((x for x in labels if x.item == item), key=lambda x: x.time)  # stable: a tie keeps order
        adjs = [x for x in mine if x.kind == "adjudication"]
        if adjs:
            out[item] = adjs[-1].correct
            continue
        last = {x.reviewer: x for x in mine}
        votes = [x.correct for x in last.values() if not x.unsure]
        r, w = sum(votes), len(votes) - sum(votes)
        out[item] = None if r == w else r > w
    return out


@pytest.mark.parametrize("seed", range(20))
def test_final_labels_equal_the_rule_written_directly(seed):
    rng = np.random.default_rng(seed)
    labels = []
    for _ in range(rng.integers(1, 60)):
        item, who = f"q{rng.integers(8)}", f"r{rng.integers(4)}"
        t = f"2026-12-01T1{rng.integers(10)}:00:00Z"
        if rng.random() < 0.1:
            labels.append(adj(item, bool(rng.integers(2)), time=t, who=who))
        else:
            labels.append(lab(item, bool(rng.integers(2)), who, time=t, unsure=bool(rng.random() < 0.2)))
    f = final_labels(labels)
    assert dict(zip(f.items, f.correct, strict=True)) == brute_final(labels)


def test_the_audit_takes_adjudications_and_does_not_count_unsure():
    rows = rows_of([90.0] * 5, [True, True, True, False, False])
    labels = [
        lab("q0", False), lab("q0", False, "bob"), adj("q0", True),  # adjudicated right: unchanged
        lab("q1", False, unsure=True), lab("q1", True, "bob", unsure=True),  # only unsure: the file's
        lab("q2", True, unsure=True), lab("q2", False, "bob"),  # one vote, wrong
        lab("q3", True), lab("q3", False, "bob"),  # tie: the file's
        adj("q4", True),
    ]
    new, s = with_human_outcomes(rows, labels)
    assert new.correct.tolist() == [True, True, False, False, True]
    assert (s.labelled, s.adjudicated, s.ties, s.unsure_only, s.unsure, s.changed) == (5, 2, 1, 1, 3, 2)
    assert "2 adjudicated" in s.sentence() and "1 labelled only unsure kept the file's outcome" in s.sentence()


def test_accepted_error_counts_neither_ties_nor_unsure_and_takes_adjudications():
    rows = rows_of([95.0] * 6, [True] * 6)
    labels = [
        lab("q0", False), lab("q0", True, "bob"),  # tie: not counted
        lab("q1", False, unsure=True),  # only unsure: not counted
        lab("q2", False), lab("q2", False, "bob"), adj("q2", True),  # adjudicated right
        lab("q3", False),
        lab("q4", True),
        adj("q5", False),  # an adjudication of an item outside the audit sample: not an audit label
    ]
    e = accepted_error(rows, labels, 90.0)
    assert (e.labelled, e.errors, e.no_final) == (3, 1, 2)
    assert "2 tied or only unsure items have no final label" in e.sentence()
