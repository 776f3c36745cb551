"""The reviewers' own error (issue 25, item 7): the error rate from double-coded items
against the closed form ``d = 2e(1-e)``, the majority's error against enumeration of every
label vector, the adjusted and worst-case bounds against the Rogan-Gladen formula and
the accepted-error interval worked out here, and a fixed-seed miniature of
bench/sim_agreement.py --only error: labels with a 10% reviewer error, where the interval
that takes labels as truth misses the true error rate and the bounds hold it."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from calib.estimates import Estimate
from calib.labels import Label
from calib.labels.estimate import accepted_error
from calib.labels.label_error import (
    MAPPED,
    ROGAN_GLADEN,
    accepted_error_bound,
    error_of,
    majority_error,
    reviewer_error,
    symmetric_error,
)
from calib.rows import Judgments
from calib.scale import Scale

T0 = "2026-12-01T18:30:00Z"


@pytest.mark.parametrize("d", [0.0, 0.01, 0.1, 0.3, 0.49, 0.5])
def test_symmetric_error_inverts_the_disagreement(d):
    e = symmetric_error(d)
    assert 2 * e * (1 - e) == pytest.approx(d, abs=1e-12) and 0 <= e <= 0.5
    assert symmetric_error(0.7) == 0.5


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("e", [0.05, 0.2, 0.45])
def test_majority_error_by_enumeration(k, e):
    wrong = tie = 0.0
    for v in itertools.product([0, 1], repeat=k):  # 1: this label is wrong
        p = math.prod(e if x else 1 - e for x in v)
        if 2 * sum(v) > k:
            wrong += p
        elif 2 * sum(v) == k:
            tie += p
    assert majority_error(e, np.array([k]))[0] == pytest.approx(wrong / (1 - tie), abs=1e-12)


def test_reviewer_error_from_pairs_by_hand():
    # q0..q3 two labels (one disagreement), q4 three labels (one of three pairs agrees), q5 one label
    said = {"q0": [1, 1], "q1": [0, 0], "q2": [1, 0], "q3": [1, 1], "q4": [1, 1, 0], "q5": [1]}
    labels = [Label(item=i, correct=bool(v), reviewer=f"r{j}", time=T0) for i, vs in said.items()
              for j, v in enumerate(vs)]
    r = reviewer_error(labels, reps=500)
    d = (0 + 0 + 1 + 0 + 2 / 3) / 5
    assert r.items == 5 and r.disagreement.value == pytest.approx(d, abs=1e-12)
    assert r.error.value == pytest.approx((1 - math.sqrt(1 - 2 * d)) / 2, abs=1e-12)
    assert r.error.contains(r.error.value) and r.error_max == pytest.approx(r.disagreement.hi)
    assert "independently" in r.to_dict()["model"]
    assert error_of(Estimate.point(None), 0, 0.95).sentence().startswith("No item has two labels")


def dataset(seed: int, p: float = 0.03, e: float = 0.10, n: int = 2000, m: int = 200, double: int = 80):
    rng = np.random.default_rng(seed)
    stated = rng.choice([92.0, 95.0, 98.0], size=n)
    right = rng.random(n) >= p
    rows = Judgments(stated=stated, prob=stated / 100, correct=right.copy(), line=np.arange(1, n + 1),
                     item_id=np.array([f"q{i}" for i in range(n)], dtype=object), scale=Scale(0.0, 100.0, "0-100"))
    labels = []
    for j, i in enumerate(rng.choice(n, size=m, replace=False)):
        for who in ("ann", "bob") if j < double else ("ann",):
            labels.append(Label(item=f"q{i}", correct=bool(right[i] != (rng.random() < e)), reviewer=who,
                                time=T0, kind="audit"))
    return rows, labels, float(1 - right.mean())


def test_bounds_by_the_formulas():
    rows, labels, _ = dataset(1)
    b = accepted_error_bound(rows, labels, 90.0, target=0.2, reps=400, seed=3)
    obs = accepted_error(rows, labels, 90.0, level=0.975)
    rev = reviewer_error(labels, reps=400, seed=3, level=0.975)
    assert (b.observed, b.reviewers) == (obs, rev)
    # final labels: 120 single labels (error e), the double-coded items that agree (error e^2/(e^2+(1-e)^2))
    agree = sum(1 for i in {x.item for x in labels}
                if len({x.correct for x in labels if x.item == i}) == 1 and sum(x.item == i for x in labels) == 2)

    def f(e):
        return (120 * e + agree * e * e / (e * e + (1 - e) ** 2)) / (120 + agree)

    def rg(q, ee):
        return min(max((q - f(ee)) / (1 - 2 * f(ee)), 0.0), 1.0)

    assert b.adjusted.value == pytest.approx(rg(obs.rate.value, rev.error.value), abs=1e-12)
    assert b.adjusted.lo == pytest.approx(min(rg(obs.rate.lo, rev.error.hi), b.adjusted.value), abs=1e-12)
    assert b.adjusted.hi == pytest.approx(max(rg(obs.rate.hi, rev.error.lo), b.adjusted.value), abs=1e-12)
    d_hi = rev.disagreement.hi
    assert b.worst_ci == pytest.approx((max(obs.rate.lo - d_hi, 0), min(obs.rate.hi + d_hi, 1)), abs=1e-12)
    assert b.holds == (b.worst_ci[1] <= 0.2)
    out = b.to_dict()
    assert out["holds_at_max_reviewer_error"] is b.holds and "Rogan-Gladen" in out["adjusted"]["method"]
    assert (b.adjusted.level, b.adjusted.method, rev.error.method) == (0.95, ROGAN_GLADEN, MAPPED)


def test_miniature_labels_with_reviewer_error_move_the_error_rate():
    """True error 2.8% among 2,000 accepted items; labels each wrong 10% of the time make
    the audit sample say 9.0% (interval 5.3% to 14.0%, excluding the truth); the adjusted
    estimate is 3.9% and both bounds hold the truth."""
    rows, labels, truth = dataset(7)
    naive = accepted_error(rows, labels, 90.0)
    b = accepted_error_bound(rows, labels, 90.0, target=0.05, reps=1000, seed=0)
    assert not naive.rate.contains(truth)
    assert b.adjusted.contains(truth)
    assert b.worst_ci[0] <= truth <= b.worst_ci[1]
    assert b.adjusted.value < naive.rate.value
    assert b.holds is False and "does not hold at the upper end of the reviewers' error" in b.sentence()


def test_no_double_coded_item_gives_no_bound():
    rows, labels, _ = dataset(2, double=0)
    b = accepted_error_bound(rows, labels, 90.0, reps=100)
    assert b.adjusted == Estimate.point(None) and b.worst_ci is None and b.holds is None
    assert b.sentence().startswith("No estimate of how the reviewers' error moves")


def test_review_report_is_the_engine_functions_composed_once():
    """:func:`calib.labels.report.review_report` reports what each engine function gives
    on its own, and without judgments no outcome or bound (traffic)."""
    from calib.labels.label_error import accepted_error_bound, error_of
    from calib.labels.report import review_report
    from calib.labels.reviewers import outcomes_vs_final, reviewer_agreement

    rng = np.random.default_rng(3)
    n = 60
    stated = np.round(rng.uniform(0, 100, n))
    rows = Judgments(stated=stated, prob=stated / 100, correct=rng.random(n) < 0.7, line=np.arange(1, n + 1),
                     item_id=np.array([f"q{i}" for i in range(n)], dtype=object), scale=Scale(0.0, 100.0, "0-100"))
    labels = [Label(item=f"q{i}", correct=bool(rng.random() < 0.7), reviewer=who, time=T0, kind="audit")
              for i in range(n) for who in ("a", "b") if who == "a" or i % 2 == 0]
    got = review_report(labels, rows, threshold=50.0, target=0.1, reps=300, seed=4, level=0.9)
    ag = reviewer_agreement(labels, reps=300, seed=4, level=0.9)
    assert got.agreement == ag
    assert got.reviewer_error == error_of(ag.percent_agreement, ag.double_coded, 0.9)
    assert got.outcomes == outcomes_vs_final(rows, labels, level=0.9)
    assert got.bound == accepted_error_bound(rows, labels, 50.0, target=0.1, reps=300, seed=4, level=0.9)
    bare = review_report(labels, reps=300, seed=4, level=0.9)
    assert bare.outcomes is None and bare.bound is None and bare.agreement == ag
