"""The dashboard's traffic mode below the browser (issue 24): the labelling plan as review
items (:mod:`calib.traffic.review`), the words of :mod:`calib.present.traffic`, and the
Data page's traffic choice as an entry keeps and restores it."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from calib.hosting.labels import _Index
from calib.labels.records import Label
from calib.present import traffic as words
from calib.traffic.plan import plan
from calib.traffic.read import read_traffic
from calib.traffic.review import item_texts, review_threshold, traffic_review

VALUES = [20] * 6 + [60] * 9 + [85] * 12 + [99] * 25


def traffic_bytes() -> bytes:
    rows = [{"id": f"x{i}", "confidence": v, "question": f"q{i}", "answer": f"a{i}"} for i, v in enumerate(VALUES)]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_the_review_serves_the_plan_in_its_order_with_kinds_and_inclusion_probabilities() -> None:
    data = traffic_bytes()
    tr = read_traffic(data, "t.jsonl")
    rv = traffic_review(tr, 80.0, 20, seed=3, target_error=0.1, data=data)
    assert [it.item for it in rv.items] == list(plan(tr, None, 20, target_error=0.1, seed=3).ids)
    by_id = {f"x{i}": v for i, v in enumerate(VALUES)}
    for it, why in zip(rv.items, rv.why, strict=True):
        stated = by_id[it.item]
        assert it.stated == stated and it.kind == ("queue" if stated < 80 else "audit")
        # the stratum is the item's value; inclusion = planned in it / its size (nothing labelled before)
        same = sum(1 for other in rv.items if by_id[other.item] == stated)
        assert (why.stratum, why.items, why.planned) == (f"{stated:g}", VALUES.count(stated), same)
        assert why.inclusion_probability == pytest.approx(same / VALUES.count(stated))
        i = int(it.item[1:])
        assert (it.line, it.text) == (i + 1, f"question: q{i}\nanswer: a{i}")
    assert set(rv.queue) | set(rv.audit) == set(rv.items) and not set(rv.queue) & set(rv.audit)
    assert rv.accepted == sum(v >= 80 for v in VALUES)
    assert {it.kind for it in rv.items} == {"queue", "audit"}  # interleaved: both lists are served


def test_items_without_an_id_are_keyed_by_their_line_as_labels_join_them() -> None:
    data = b"confidence,question\n90,first\n,dropped\n70,\"third, quoted\"\n"
    tr = read_traffic(data, "t.csv")
    assert list(tr.keys) == ["line 2", "line 4"]
    assert item_texts(data, "t.csv", set(tr.keys)) == {"line 2": (2, "question: first"),
                                                      "line 4": (4, "question: third, quoted")}
    rv = traffic_review(tr, 80.0, 2, data=data)
    assert sorted((it.item, it.line, it.kind) for it in rv.items) == [("line 2", 2, "audit"), ("line 4", 4, "queue")]


def test_a_label_of_a_planned_traffic_item_is_checked_like_any_other() -> None:
    data = traffic_bytes()
    rv = traffic_review(read_traffic(data, "t.jsonl"), 80.0, 10, seed=0)
    index = _Index(["traffic"], {"traffic": rv})
    it = rv.items[0]
    assert index.check(Label(item=it.item, correct=True, reviewer="Ann", time="2026-12-01T18:30:00Z", kind=it.kind)).dataset == ""
    other = "queue" if it.kind == "audit" else "audit"
    with pytest.raises(ValueError, match="list"):
        index.check(Label(item=it.item, correct=True, reviewer="Ann", time="2026-12-01T18:30:00Z", kind=other))
    unplanned = next(f"x{i}" for i in range(len(VALUES)) if f"x{i}" not in {x.item for x in rv.items})
    with pytest.raises(ValueError, match="not in this link"):
        index.check(Label(item=unplanned, correct=True, reviewer="Ann", time="2026-12-01T18:30:00Z", kind="audit"))


def test_the_review_threshold_is_the_owners_on_the_scale_else_the_default() -> None:
    assert review_threshold(None, 100.0) == pytest.approx(80.0)
    assert review_threshold(None, 1.0) == pytest.approx(0.8)
    assert review_threshold(120.0, 100.0) == 100.0 and review_threshold(-3.0, 1.0) == 0.0
    assert review_threshold(42.0, 100.0) == 42.0


def test_dropped_lines_are_counted_past_the_kept_messages() -> None:
    assert words.dropped_count(()) == 0
    assert words.dropped_count(("a line 2: x", "a line 3: y")) == 2
    assert words.dropped_count(tuple(f"a line {i}: x" for i in range(50)) + ("a: 7 more bad lines",)) == 57


def cert(**kw: object) -> SimpleNamespace:
    base = {"certified": False, "threshold": None, "bound": None, "since_label": None, "withdrawn": False,
            "labels_needed": None, "target_error": 0.05, "confidence": 0.95, "labels": 0,
            "candidates": ({"threshold": 80.0, "bound": 0.3}, {"threshold": 90.0, "bound": 0.2},
                           {"threshold": 99.0, "bound": 0.25}), "withdrawn_thresholds": ()}
    base.update(kw)
    return SimpleNamespace(**base)


def test_the_certificate_sentences_and_the_figures_candidate() -> None:
    yes = cert(certified=True, threshold=90.0, bound=0.0412, since_label=37)
    assert words.status_line(yes).startswith("Certified at 90 since label 37: ")
    assert "at most 4.1%" in words.status_line(yes) and "target 5.0%" in words.status_line(yes)
    assert words.status_line(cert(labels_needed=120)).startswith("Not yet: about 120 more labels at the current rate")
    assert words.status_line(cert()).startswith("Not yet certified at any threshold")
    gone = cert(withdrawn=True, withdrawn_thresholds=(99.0,))
    assert words.alarm_lines(gone) == [words.alarm_lines(gone)[0]]
    assert words.alarm_lines(gone)[0].startswith("ALARM: the certificate at 99 is withdrawn")
    assert words.alarm_lines(cert()) == []
    # the figure follows the certified candidate, else the withdrawn one, else the lowest bound
    assert [words.focus_candidate(c) for c in (yes, gone, cert())] == [1, 2, 1]


def test_the_bound_figure_has_one_point_per_label_and_the_target_line() -> None:
    path = np.array([1.0, 0.6, 0.4, 0.25])
    fig = words.bound_figure(path, 0.3, 95.0, 0.8)
    bound, target = fig.data
    assert list(bound.x) == [1, 2, 3, 4] and list(bound.y) == pytest.approx([100, 60, 40, 25])
    assert set(target.y) == {30.0}
    assert "95" in fig.layout.title.text


def test_the_data_pages_choice_is_kept_with_a_share_and_nothing_else_is_taken() -> None:
    from dashboard.entries import Overrides

    assert Overrides.from_stored({"mode": "traffic"}).mode == "traffic"
    assert Overrides.from_stored({"mode": "<script>"}).mode == "audit"
    assert Overrides.from_stored({"mode": 1}).mode == "audit"
    assert Overrides(mode="traffic").key() != Overrides().key()
    assert Overrides.from_stored(Overrides(mode="traffic").to_dict()) == Overrides(mode="traffic")


def test_the_estimate_line_with_and_without_a_uniform_equivalent() -> None:
    err = {"estimate": 0.0833, "ci": [0.0833, 0.0833], "labels": 24, "method": "stratified Horvitz-Thompson",
           "uniform_labels_equivalent": None}  # every accepted item labelled: the error is known, se 0
    assert words.estimate_line(err, 90.0) == (
        "Error among the accepted (at 90) on the whole traffic: 8.3% [8.3%, 8.3%] from 24 label(s) "
        "(stratified Horvitz-Thompson).")
    err.update(uniform_labels_equivalent=1234, ci=[0.02, 0.2])
    assert words.estimate_line(err, 90.0).endswith("(stratified Horvitz-Thompson; as tight as about 1,234 labels "
                                                   "drawn uniformly).")
    assert "not yet (no label yet)" in words.estimate_line({"estimate": None, "reason": "no label yet"}, 90.0)
