"""calib.runs.review and the Review page's traffic use cases (issue 23): what the Review
page composed by hand, asked of calib.runs once.

The disagreements are checked against a history worked out by hand; the labels so far
against the engine's five calls the page made one by one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from calib.labels import Label, item_keys
from calib.labels.plan import ReviewItem
from calib.loading import load
from calib.runs.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "judge_b_synthetic.jsonl"
T = "2026-01-01T00:00:00Z"


def _lab(item: str, who: str, verdict: str, kind: str = "queue") -> Label:
    return Label(item=item, correct=verdict == "right", reviewer=who, time=T, kind=kind, dataset="d",
                 unsure=verdict == "unsure")


def test_disagreements_by_hand() -> None:
    """a: right beside wrong; b: two rights; c: right beside unsure; d: split but
    adjudicated; e: one unsure alone; f: r1 changed wrong to right, beside r2's right;
    g: wrong beside wrong then r2 changes to right (a disagreement found late)."""
    from calib.runs.review import disagreements

    history = [
        _lab("a", "r1", "right"), _lab("a", "r2", "wrong"),
        _lab("b", "r1", "right"), _lab("b", "r2", "right"),
        _lab("c", "r1", "right"), _lab("c", "r2", "unsure"),
        _lab("d", "r1", "right"), _lab("d", "r2", "wrong"), _lab("d", "owner", "right", kind="adjudication"),
        _lab("e", "r1", "unsure"),
        _lab("f", "r1", "wrong"), _lab("f", "r2", "right"), _lab("f", "r1", "right"),
        _lab("g", "r1", "wrong"), _lab("g", "r2", "wrong"), _lab("g", "r2", "right"),
    ]
    assert disagreements(history) == ["a", "c", "g"]


def test_item_labels_are_each_reviewers_latest_without_adjudications() -> None:
    from calib.runs.review import item_labels

    history = [_lab("a", "r1", "wrong"), _lab("a", "r2", "right"), _lab("a", "r1", "unsure"),
               _lab("a", "owner", "right", kind="adjudication"), _lab("b", "r1", "right")]
    got = item_labels(history, "a")
    assert [(lab.reviewer, lab.unsure, lab.correct) for lab in got] == [("r1", True, False), ("r2", False, True)]


def test_a_click_and_an_adjudication_write_the_item_s_label() -> None:
    from calib.runs.review import OWNER, adjudication, new_label

    it = ReviewItem(item="q7", line=7, kind="audit", group="", stated=90.0, prob=0.9, correct=True, text="")
    click = new_label(it, "ann@example.org", "d", False, unsure=True, note="unclear")
    assert (click.item, click.kind, click.dataset, click.reviewer, click.correct, click.unsure, click.note) == (
        "q7", "audit", "d", "ann@example.org", False, True, "unclear")
    adj = adjudication(it, "d", True)
    assert (adj.item, adj.kind, adj.dataset, adj.reviewer, adj.correct, adj.unsure) == (
        "q7", "audit", "d", OWNER, True, False)


def test_labels_so_far_are_the_engine_s_calls_the_page_made() -> None:
    """The agreement, the accepted error, the outcomes, the audit on them and the
    recommendation, as the Review page computed them engine call by engine call."""
    from calib.audit import audit
    from calib.decision import recommend
    from calib.labels import accepted_error, agreement, with_human_outcomes
    from calib.runs.review import labels_so_far
    from calib.table import from_judgments

    ds = load(str(SAMPLE))
    assert ds.rows is not None
    history = [Label(item=str(i), correct=bool(k % 4), reviewer="r1", time=T, dataset="d")
               for k, i in enumerate(item_keys(ds.rows)[:40])]
    s = Settings(reps=30, seed=2, level=0.9, target=0.1, confidence=0.8)
    got = labels_so_far(ds, history, s, threshold=70.0, dataset="d")
    assert got.labelled.agreement.to_dict() == agreement(ds.rows, history, reps=30, seed=2, level=0.9,
                                                         dataset="d").to_dict()
    assert got.labelled.accepted_error.to_dict() == accepted_error(ds.rows, history, 70.0, level=0.9,
                                                                   dataset="d").to_dict()
    rows, summary = with_human_outcomes(ds.rows, history, dataset="d")
    assert got.labelled.outcomes.to_dict() == summary.to_dict() and summary.to_dict()["changed"] > 0
    a = audit(from_judgments(rows), reps=30, seed=2, level=0.9)
    assert got.audit.metrics == a.metrics and got.audit.ci == a.ci
    rec = recommend(rows, target=0.1, confidence=0.8, seed=2)
    assert (got.recommendation.threshold, got.recommendation.message) == (rec.threshold, rec.message)


def test_traffic_review_plan_and_bound_path_take_the_settings() -> None:
    """runs.traffic: the Review page's plan and bound path are the engine's with the
    settings' seed, target and confidence."""
    from calib.runs.traffic import (
        as_traffic,
        bound_path,
        is_review_plan,
        join_labels,
        review_plan,
        review_threshold,
    )
    from calib.traffic.certify import bound_path as engine_path
    from calib.traffic.review import traffic_review

    rng = np.random.default_rng(4)
    conf = rng.uniform(40, 100, 300).round()
    tr = as_traffic("".join(f'{{"id": "t{i}", "confidence": {c:g}}}\n' for i, c in enumerate(conf)).encode())
    assert review_threshold(None, tr.top) == pytest.approx(0.8 * tr.top)
    assert review_threshold(130.0, 100.0) == 100.0
    s = Settings(seed=5, target=0.1, confidence=0.8)
    got = review_plan(tr, 80.0, 40, s)
    want = traffic_review(tr, 80.0, 40, seed=5, target_error=0.1)
    assert [it.item for it in got.items] == [it.item for it in want.items] and is_review_plan(got)
    assert not is_review_plan(object())
    labels = [Label(item=it.item, correct=k % 5 != 0, reviewer="r1", time=T) for k, it in enumerate(got.items)]
    lab = join_labels(tr, labels)
    np.testing.assert_array_equal(bound_path(lab, s), engine_path(lab, 0.8)[1])
