"""calib.labels: kappa against scikit-learn, the stratified audit-sample estimate and its
Korn-Graubard interval against a direct computation written here (weights by hand,
scipy.stats.beta and scipy.stats.t), the review plan (deterministic, stratified sizes,
the queue in calib.routing.review_queue's order), export/import round trips with hostile
text, and the exact messages bad label files get."""

from __future__ import annotations

import csv
import io
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from calib.errors import CalibError
from calib.estimates import Estimate
from calib.labels import (
    Label,
    accepted_error,
    agreement,
    cohen_kappa,
    current,
    item_keys,
    label_problem,
    labels_to_csv,
    labels_to_jsonl,
    read_labels,
    review_plan,
    with_human_outcomes,
)
from calib.labels.agreement import KAPPA_BOOTSTRAP
from calib.labels.estimate import KORN_GRAUBARD
from calib.labels.plan import MAX_STRATA, allocate, strata
from calib.routing import FORMULA_STARTS, review_queue
from calib.rows import Judgments
from calib.scale import Scale

T0 = "2026-12-01T18:30:00Z"
SCALE = Scale(0.0, 100.0, "0-100")


def rows_of(stated, correct, ids=None, lines=None, text=None, group=None) -> Judgments:
    stated = np.asarray(stated, dtype=np.float64)
    n = stated.size
    return Judgments(
        stated=stated,
        prob=stated / 100,
        correct=np.asarray(correct, dtype=bool),
        line=np.arange(1, n + 1) if lines is None else np.asarray(lines),
        item_id=np.array([f"q{i}" for i in range(n)] if ids is None else ids, dtype=object),
        scale=SCALE,
        text=None if text is None else np.asarray(text, dtype=object),
        group=None if group is None else np.asarray(group, dtype=object),
    )


def lab(item, correct, reviewer="ann", kind="audit", time=T0, note="", dataset=""):
    return Label(
        item=item, correct=correct, note=note, reviewer=reviewer, time=time, kind=kind, dataset=dataset
    )


def sk_kappa(a, b) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(a, b))


# ------------------------------------------------------------------ kappa
@pytest.mark.parametrize("seed", range(60))
def test_kappa_equals_sklearn_on_random_labels(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    k = int(rng.integers(2, 5))
    a = rng.integers(0, k, n)
    # the second rater agrees with the first some of the time, else guesses
    b = np.where(rng.random(n) < rng.random(), a, rng.integers(0, k, n))
    assert cohen_kappa(a, b) == pytest.approx(sk_kappa(a, b), abs=1e-12, nan_ok=True)
    assert cohen_kappa(a.astype(bool), b.astype(bool)) == pytest.approx(
        sk_kappa(a.astype(bool), b.astype(bool)), abs=1e-12, nan_ok=True
    )


@pytest.mark.parametrize(
    "a, b",
    [
        ([True] * 5, [True] * 5),  # both one class, the same: p_e = 1, undefined
        ([False] * 3, [False] * 3),
        ([True] * 4, [False] * 4),  # both one class, different ones: p_o = p_e = 0, kappa 0
        ([True] * 4, [True, False, True, True]),  # one rater one class: kappa 0
        ([True], [True]),
        (["x", "y", "y"], ["y", "y", "x"]),
    ],
)
def test_kappa_degenerate_cases_match_sklearn(a, b):
    """Undefined kappa (both raters used one and the same label for everything) is nan,
    as scikit-learn returns; one rater of one class gives 0 or below, as it does."""
    mine, ref = cohen_kappa(a, b), sk_kappa(a, b)
    if math.isnan(ref):
        assert math.isnan(mine)
    else:
        assert mine == pytest.approx(ref, abs=1e-12)


def test_kappa_undefined_cases_are_nan():
    assert math.isnan(cohen_kappa([True] * 5, [True] * 5))
    assert math.isnan(cohen_kappa([], []))
    assert cohen_kappa([True] * 4, [False] * 4) == 0.0


def test_kappa_refuses_unequal_lengths():
    with pytest.raises(CalibError, match="equally long"):
        cohen_kappa([1, 0], [1])


def test_agreement_confusion_and_kappa_by_hand():
    rng = np.random.default_rng(3)
    n = 200
    file_ok = rng.random(n) < 0.7
    rows = rows_of(np.full(n, 90.0), file_ok)
    human = np.where(rng.random(n) < 0.85, file_ok, ~file_ok)
    labels = [lab(f"q{i}", bool(human[i])) for i in range(n)]
    # a second reviewer on the first 50 items, an unknown item, and an old label that is replaced
    second = np.where(rng.random(50) < 0.8, human[:50], ~human[:50])
    labels += [lab(f"q{i}", bool(second[i]), reviewer="bob") for i in range(50)]
    labels += [lab("nope", True), lab("q0", not human[0], time="2026-01-01T00:00:00Z")]
    a = agreement(rows, labels, reps=300, seed=1)
    f = np.concatenate([file_ok, file_ok[:50]])
    h = np.concatenate([human, second])
    assert a.pairs == 250 and a.items == 200 and a.unknown == 1
    assert a.confusion == (
        (int(np.sum(f & h)), int(np.sum(f & ~h))),
        (int(np.sum(~f & h)), int(np.sum(~f & ~h))),
    )
    assert a.kappa.value == pytest.approx(sk_kappa(f, h), abs=1e-12)
    assert a.agreement == pytest.approx(np.mean(f == h))
    assert a.reviewer_items == 50
    assert a.reviewer_kappa.value == pytest.approx(sk_kappa(human[:50], second), abs=1e-12)
    lo, hi = a.kappa.ci
    assert lo < a.kappa.value < hi and (a.kappa.level, a.kappa.method) == (0.95, KAPPA_BOOTSTRAP)
    assert agreement(rows, labels, reps=300, seed=1) == a  # seeded
    d = a.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["confusion"]["counts"] == [list(r) for r in a.confusion]


def test_agreement_kappa_undefined_is_none_in_json():
    rows = rows_of([90.0] * 4, [True] * 4)
    a = agreement(rows, [lab(f"q{i}", True) for i in range(4)], reps=50)
    assert a.kappa == Estimate.point(None) and a.to_dict()["kappa"] is None
    assert "undefined" in a.sentence()


def jeffreys_kappa_quantiles(cells, draws=200_000, seed=0):
    """The 2.5% and 97.5% quantiles of kappa under Dirichlet(cells + 1/2), by scipy."""
    p = stats.dirichlet.rvs(np.asarray(cells, float) + 0.5, size=draws, random_state=seed)
    po = p[:, 0] + p[:, 3]
    a, b = p[:, 0] + p[:, 1], p[:, 0] + p[:, 2]
    pe = a * b + (1 - a) * (1 - b)
    return np.quantile((po - pe) / (1 - pe), [0.025, 0.975])


def agreement_of(cells, reps=4000, seed=2):
    """agreement() of one label per item with confusion ``cells`` (rr, rw, wr, ww)."""
    f = np.repeat([True, True, False, False], cells)
    h = np.repeat([True, False, True, False], cells)
    rows = rows_of(np.full(f.size, 90.0), f)
    return agreement(rows, [lab(f"q{i}", bool(h[i])) for i in range(f.size)], reps=reps, seed=seed)


def test_kappa_interval_is_the_jeffreys_posterior_with_one_label_per_item():
    for cells in ((80, 10, 15, 45), (20, 3, 2, 5)):
        a = agreement_of(cells)
        lo, hi = jeffreys_kappa_quantiles(cells)
        assert a.kappa.lo == pytest.approx(lo, abs=0.02) and a.kappa.hi == pytest.approx(hi, abs=0.02)


def test_kappa_interval_at_30_labels_is_given_and_holds_its_estimate():
    # issue 22: with 30 labels the percentile bootstrap dropped every resample without a wrong
    # verdict (kappa undefined there) and gave no interval when over 10% did: 28 both right and
    # 2 both wrong lose both wrong answers in (28/30)^30 = 13% of resamples
    a = agreement_of((28, 0, 0, 2))
    assert a.kappa.value == 1.0
    lo, hi = a.kappa.ci
    assert lo == pytest.approx(jeffreys_kappa_quantiles((28, 0, 0, 2))[0], abs=0.02) and hi == 1.0
    assert "interval" in a.sentence()
    # a disputed item: both ends from the posterior, the estimate inside
    a = agreement_of((25, 1, 0, 4))
    lo, hi = jeffreys_kappa_quantiles((25, 1, 0, 4))
    assert a.kappa.lo == pytest.approx(lo, abs=0.02) and a.kappa.contains(a.kappa.value)


# ------------------------------------------------------------------ the audit-sample estimate
def kg_by_hand(N_h, m_h, x_h, level=0.95):
    """Korn-Graubard written out from the paper's definitions, for strata all labelled."""
    N_h, m_h, x_h = (np.asarray(v, dtype=float) for v in (N_h, m_h, x_h))
    W = N_h / N_h.sum()
    p_h = x_h / m_h
    p = float(np.sum(W * p_h))
    var = 0.0
    for W1, N1, m1, p1 in zip(W, N_h, m_h, p_h, strict=True):
        s2 = m1 / (m1 - 1) * p1 * (1 - p1) if m1 > 1 else p * (1 - p)
        var += W1**2 * (1 - m1 / N1) * s2 / m1
    m = m_h.sum()
    if p in (0.0, 1.0) or var == 0:
        n_eff = m
    else:
        n_eff = p * (1 - p) / var
        q = (1 + level) / 2
        n_eff *= (stats.t.ppf(q, m - 1) / stats.t.ppf(q, m - len(N_h))) ** 2
        n_eff = min(n_eff, m)
    x = n_eff * p
    a = 1 - level
    lo = 0.0 if x == 0 else stats.beta.ppf(a / 2, x, n_eff - x + 1)
    hi = 1.0 if x == n_eff else stats.beta.ppf(1 - a / 2, x + 1, n_eff - x)
    return p, lo, hi, n_eff


def strata_rows(sizes, values, error_rates, seed):
    rng = np.random.default_rng(seed)
    stated = np.repeat(values, sizes)
    correct = rng.random(stated.size) >= np.repeat(error_rates, sizes)
    below = np.full(40, 50.0)  # a queue below the threshold
    return rows_of(np.concatenate([below, stated]), np.concatenate([rng.random(40) < 0.5, correct]))


@pytest.mark.parametrize("seed", range(8))
def test_estimate_equals_direct_computation(seed):
    sizes, values = [600, 250, 120, 30], [80.0, 90.0, 95.0, 100.0]
    rows = strata_rows(sizes, values, [0.2, 0.1, 0.05, 0.02], seed)
    plan = review_plan(rows, 80, sample_size=60 + 20 * seed, seed=seed)
    rng = np.random.default_rng(100 + seed)
    # reviewers label a random part of the sample; their verdict differs from the file's now and then
    done = [it for it in plan.audit if rng.random() < 0.8]
    human = {it.item: bool(it.correct if rng.random() < 0.9 else not it.correct) for it in done}
    labels = [lab(k, v) for k, v in human.items()]
    labels += [lab(it.item, True, kind="queue") for it in plan.queue[:5]]  # queue labels are not audit
    est = accepted_error(rows, labels, 80)
    stated = dict(zip(item_keys(rows), rows.stated, strict=True))
    m_h = [sum(1 for k in human if stated[k] == v) for v in values]
    x_h = [sum(1 for k, ok in human.items() if stated[k] == v and not ok) for v in values]
    assert min(m_h) > 0  # these seeds label every stratum; a stratum without labels is tested on its own
    p, lo, hi, n_eff = kg_by_hand(sizes, m_h, x_h)
    assert est.accepted == sum(sizes) and est.labelled == sum(m_h) and est.errors == sum(x_h)
    assert [s.labelled for s in est.strata] == m_h and [s.errors for s in est.strata] == x_h
    assert [s.weight for s in est.strata] == pytest.approx(np.array(sizes) / sum(sizes))
    assert est.rate.value == pytest.approx(p, abs=1e-12) and est.rate.method == KORN_GRAUBARD
    assert est.rate.lo == pytest.approx(lo, abs=1e-9) and est.rate.hi == pytest.approx(hi, abs=1e-9)
    assert est.effective_n == pytest.approx(n_eff, rel=1e-9)
    assert est.complete and est.outside == 0


def test_estimate_zero_errors_is_clopper_pearson_on_the_labelled():
    rows = strata_rows([300, 100], [85.0, 95.0], [0.0, 0.0], 1)
    plan = review_plan(rows, 80, sample_size=40, seed=3)
    est = accepted_error(rows, [lab(it.item, True) for it in plan.audit], 80)
    assert est.rate.value == 0 and est.rate.lo == 0
    assert est.rate.hi == pytest.approx(stats.beta.ppf(0.975, 1, 40), abs=1e-12)  # CP upper at x = 0, n = 40
    assert est.rate.hi == pytest.approx(1 - 0.025 ** (1 / 40), abs=1e-12)


def test_estimate_single_label_stratum_borrows_the_overall_variance():
    sizes, values = [500, 100], [80.0, 90.0]
    rows = strata_rows(sizes, values, [0.3, 0.3], 2)
    keys = item_keys(rows)
    first = [i for i in range(len(rows)) if rows.stated[i] == 80.0][:30]
    one = [i for i in range(len(rows)) if rows.stated[i] == 90.0][:1]
    labels = [lab(keys[i], bool(rows.correct[i])) for i in first + one]
    est = accepted_error(rows, labels, 80)
    x_h = [int(np.sum(~rows.correct[first])), int(np.sum(~rows.correct[one]))]
    p, lo, hi, _ = kg_by_hand(sizes, [30, 1], x_h)
    assert est.rate.value == pytest.approx(p) and est.rate.ci == pytest.approx((lo, hi))


def test_estimate_unlabelled_stratum_widens_the_interval():
    sizes, values = [400, 100], [80.0, 95.0]
    rows = strata_rows(sizes, values, [0.1, 0.1], 4)
    keys = item_keys(rows)
    labelled = [i for i in range(len(rows)) if rows.stated[i] == 80.0][:50]
    est = accepted_error(rows, [lab(keys[i], bool(rows.correct[i])) for i in labelled], 80)
    x = int(np.sum(~rows.correct[labelled]))
    p, lo, hi, _ = kg_by_hand([400], [50], [x])
    W = 400 / 500
    assert not est.complete and est.labelled_weight == pytest.approx(W)
    assert est.rate.value == pytest.approx(p)
    assert est.rate.lo == pytest.approx(W * lo) and est.rate.hi == pytest.approx(W * hi + 1 - W)
    assert "no label" in est.sentence()


def test_estimate_counts_labels_outside_the_accepted_and_unknown_items():
    rows = strata_rows([100], [90.0], [0.1], 0)
    keys = item_keys(rows)
    labels = [lab(keys[0], True), lab(keys[50], False), lab("gone", True)]  # keys[0] is below 80
    est = accepted_error(rows, labels, 80)
    assert est.outside == 1 and est.unknown == 1 and est.labelled == 1 and est.errors == 1
    none = accepted_error(rows, [], 80)
    assert none.rate == Estimate.point(None) and "no estimate" in none.sentence()
    json.dumps(est.to_dict(), allow_nan=False)


# ------------------------------------------------------------------ the plan
def test_plan_is_deterministic_and_seeded():
    rows = strata_rows([300, 200, 100], [80.0, 90.0, 95.0], [0.2, 0.1, 0.05], 0)
    a = review_plan(rows, 80, sample_size=50, seed=7)
    assert review_plan(rows, 80, sample_size=50, seed=7) == a
    assert review_plan(rows, 80, sample_size=50, seed=8).audit != a.audit
    assert sorted(a.items, key=id) == sorted(a.queue + a.audit, key=id)  # every item once


@pytest.mark.parametrize(("queued", "sampled"), [(912, 50), (40, 5), (7, 3), (3, 7), (0, 4), (6, 0), (1, 1)])
def test_plan_interleaves_the_audit_sample_with_the_queue_in_proportion(queued, sampled):
    """Issue 22: the audit sample came after the whole queue (912 items at threshold 93), so
    the error among the accepted was never estimated. Now the first ``m`` items hold
    ``floor(m A / (Q + A))`` audit items (counted here prefix by prefix), each list in its order."""
    rng = np.random.default_rng(queued + 10 * sampled)
    stated = np.concatenate([rng.choice([30.0, 50.0, 70.0, 90.0], size=queued), np.full(400, 95.0)])
    rows = rows_of(stated, rng.random(stated.size) < 0.7)
    plan = review_plan(rows, 93, sample_size=sampled, seed=1)
    assert (len(plan.queue), len(plan.audit)) == (queued, sampled)
    items = plan.items
    n = queued + sampled
    assert len(items) == n
    audit_seen = 0
    for m, it in enumerate(items, start=1):
        audit_seen += it.kind == "audit"
        assert audit_seen == m * sampled // n, (m, audit_seen)
    assert tuple(it for it in items if it.kind == "queue") == plan.queue
    assert tuple(it for it in items if it.kind == "audit") == plan.audit
    if sampled:  # the first audit item comes within the first ceil(N / A) items
        first = next(i for i, it in enumerate(items) if it.kind == "audit")
        assert first < -(-n // sampled)


def test_plan_queue_order_equals_review_queue():
    rng = np.random.default_rng(0)
    n = 500
    stated = rng.choice([10.0, 35.0, 60.0, 70.0, 79.999, 80.0, 95.0], size=n)
    rows = rows_of(
        stated,
        rng.random(n) < 0.6,
        text=[f"question {i}" for i in range(n)],
        group=rng.choice(["a", "b"], size=n),
    )
    q = review_queue(rows, 80)
    plan = review_plan(rows, 80, sample_size=20)
    assert [it.line for it in plan.queue] == list(q["line"])
    assert [it.item for it in plan.queue] == list(q["id"])
    assert [it.text for it in plan.queue] == list(q["text"])
    assert [it.group for it in plan.queue] == list(q["group"])
    assert all(it.kind == "queue" and it.stated < 80 for it in plan.queue)
    assert all(it.kind == "audit" and it.stated >= 80 for it in plan.audit)


def test_plan_strata_sizes_are_proportional():
    sizes = [100, 300, 600]
    rows = strata_rows(sizes, [80.0, 90.0, 95.0], [0.1, 0.1, 0.1], 0)
    plan = review_plan(rows, 80, sample_size=50, seed=1)
    assert [(s.value, s.accepted, s.sampled) for s in plan.strata] == [
        (80.0, 100, 5),
        (90.0, 300, 15),
        (95.0, 600, 30),
    ]
    drawn = [sum(1 for it in plan.audit if it.stated == v) for v in (80.0, 90.0, 95.0)]
    assert drawn == [5, 15, 30]
    assert len({it.item for it in plan.audit}) == 50  # without replacement


def test_plan_small_strata_get_one_and_the_rest_is_proportional():
    sizes = [3, 997]
    rows = strata_rows(sizes, [80.0, 95.0], [0.1, 0.1], 0)
    plan = review_plan(rows, 80, sample_size=20)
    # one for the small stratum first, then 19 in proportion 3:997 (0.06 and 18.94: 0 and 19)
    assert [s.sampled for s in plan.strata] == [1, 19]
    assert allocate(np.array([3, 997]), 20).tolist() == [1, 19]
    assert allocate(np.array([5, 5, 5]), 2).tolist() == [
        1,
        1,
        0,
    ]  # fewer than strata: largest first, ties low
    assert allocate(np.array([5, 5]), 100).tolist() == [5, 5]


def test_plan_sample_larger_than_accepted_takes_all():
    rows = strata_rows([10, 5], [80.0, 90.0], [0.1, 0.1], 0)
    plan = review_plan(rows, 80, sample_size=100)
    assert len(plan.audit) == 15 and plan.sample_size == 100 and plan.accepted == 15


def test_strata_of_a_continuous_score_are_runs_of_values():
    rng = np.random.default_rng(0)
    stated = rng.uniform(0, 100, 5000)
    rows = rows_of(stated, rng.random(5000) < 0.8)
    index, st = strata(rows, 70)
    assert len(st) == MAX_STRATA
    acc = rows.stated >= 70
    assert sum(s.accepted for s in st) == acc.sum()
    for h, s in enumerate(st):
        inside = rows.stated[index == h]
        # strata hold snapped values (calib.scale.snap: 1e-10 on 0-100)
        assert inside.min() == pytest.approx(s.value, abs=1e-9) and inside.max() == pytest.approx(
            s.upper, abs=1e-9
        )
    assert all(a.upper < b.value for a, b in zip(st, st[1:], strict=False))  # no value split
    assert max(s.accepted for s in st) - min(s.accepted for s in st) <= 2


@pytest.mark.parametrize(
    "threshold, size, seed, message",
    [
        (float("nan"), 10, 0, "the review threshold must be a finite number, got nan"),
        ("x", 10, 0, "the review threshold must be a number, got 'x'"),
        (80, -1, 0, "the audit sample size must be between 0 and 100,000, got -1"),
        (80, 2.5, 0, "the audit sample size must be a whole number, got 2.5"),
        (80, True, 0, "the audit sample size must be a whole number, got True"),
        (80, 10, -3, "the seed must be between 0 and 9,223,372,036,854,775,807, got -3"),
    ],
)
def test_plan_refuses_bad_arguments(threshold, size, seed, message):
    rows = strata_rows([10], [90.0], [0.1], 0)
    with pytest.raises(CalibError) as exc:
        review_plan(rows, threshold, sample_size=size, seed=seed)
    assert str(exc.value) == message


# ------------------------------------------------------------------ keys, history, outcomes
def test_item_keys_ids_or_lines():
    assert list(item_keys(rows_of([90, 90], [1, 0], ids=["a", "b"]))) == ["a", "b"]
    assert list(item_keys(rows_of([90, 90], [1, 0], ids=["a", "a"], lines=[3, 7]))) == ["line 3", "line 7"]
    assert list(item_keys(rows_of([90, 90], [1, 0], ids=["a", ""], lines=[3, 7]))) == ["line 3", "line 7"]
    assert list(item_keys(rows_of([90, 90], [1, 0], ids=["a", "b\x00"], lines=[3, 7]))) == [
        "line 3",
        "line 7",
    ]
    assert list(item_keys(rows_of([90, 90], [1, 0], ids=["", ""], lines=[4, 4]))) == ["row 1", "row 2"]


def test_current_keeps_the_latest_per_reviewer():
    old = lab("q1", True, time="2026-12-01T10:00:00Z")
    new = lab("q1", False, time="2026-12-01T11:00:00.5Z")
    same_time = lab("q1", True, time="2026-12-01T11:00:00.500Z")  # the same instant, later in the list: wins
    other = lab("q1", True, reviewer="bob", time="2026-12-01T09:00:00Z")
    assert current([new, old, other]) == (new, other)
    assert current([old, new, same_time]) == (same_time,)
    assert current([lab("q1", True, dataset="A"), lab("q1", False, dataset="B")]) == (
        lab("q1", True, dataset="A"),
        lab("q1", False, dataset="B"),
    )


def test_human_outcomes_majority_ties_and_unknown():
    rows = rows_of([90.0] * 6, [True, True, False, False, True, True])
    labels = [
        lab("q0", False),  # one reviewer: right -> wrong
        lab("q2", True, kind="queue"),
        lab("q2", True, reviewer="bob", kind="queue"),  # two say right: wrong -> right
        lab("q4", False),
        lab("q4", True, reviewer="bob"),  # a tie: the file's outcome (right) stays
        lab("x1", True),
        lab("x2", True),
    ]
    new, s = with_human_outcomes(rows, labels)
    assert new.correct.tolist() == [False, True, True, False, True, True]
    assert rows.correct.tolist() == [True, True, False, False, True, True]  # the input is not changed
    assert (s.labelled, s.labels, s.reviewers, s.changed, s.ties) == (3, 5, 2, 2, 1)
    assert (s.right_to_wrong, s.wrong_to_right, s.from_queue, s.from_audit) == (1, 1, 1, 2)
    assert (s.unknown, s.unknown_items) == (2, ("x1", "x2"))
    assert "2 labels name items not in the file ('x1', 'x2')" in s.sentence()
    json.dumps(s.to_dict(), allow_nan=False)


def test_labels_of_several_datasets_need_a_choice():
    rows = rows_of([90.0], [True])
    labels = [lab("q0", False, dataset="judge A"), lab("q0", True, dataset="judge B")]
    with pytest.raises(
        CalibError, match=r"the labels are of 2 datasets \('judge A', 'judge B'\): say which one"
    ):
        with_human_outcomes(rows, labels)
    new, s = with_human_outcomes(rows, labels, dataset="judge A")
    assert new.correct.tolist() == [False] and s.labels == 1


# ------------------------------------------------------------------ export and import
HOSTILE = [
    '=HYPERLINK("http://x","y")',
    "+1",
    "-1",
    "@SUM(A1)",
    "\tx",
    "\r\n=1",
    " =1",
    "\uff1d1",  # fullwidth equals sign
    "'already quoted",
    "''",
    "'",
    "'=1",
    "line one\nline two\r\nthree",
    "emoji 😀👍🏽 and ünïcödé",
    '"quotes", commas; and <script>alert(1)</script>',
    "",
]


@pytest.mark.parametrize("to_bytes", [labels_to_csv, labels_to_jsonl])
def test_round_trip_is_identity_with_hostile_text(to_bytes):
    labels = [
        Label(
            item=t or "plain",
            correct=i % 2 == 0,
            note=t,
            reviewer=f"@reviewer {i} 😀",
            time=T0,
            kind=("queue", "audit")[i % 2],
            dataset=f"=judge {i}" if i % 3 else "",
        )
        for i, t in enumerate(HOSTILE)
    ]
    for x in labels:
        assert label_problem(x) is None, x
    back, messages = read_labels(to_bytes(labels), "labels")
    assert messages == ()
    assert back == tuple(labels)


def test_csv_export_is_spreadsheet_safe():
    labels = [
        Label(item=t or "x", correct=True, note=t, reviewer="r", time=T0, kind="audit") for t in HOSTILE
    ]
    text = labels_to_csv(labels).decode("utf-8")
    cells = [c for row in csv.reader(io.StringIO(text, newline="")) for c in row]
    for c in cells:
        assert not c.startswith(FORMULA_STARTS), c
        assert not c.lstrip().startswith(("=", "+", "-", "@")), c
    # every text cell quoted: a newline in a note stays in its cell
    assert '"line one\nline two\r\nthree"' in text


@pytest.mark.parametrize(
    "label, reason",
    [
        (lab("q1", True, note="x" * 10_000), "note is 10,000 characters, over the 500 allowed"),
        (
            lab("q1", True, note="a\x00b"),
            "note holds a NUL character or a lone surrogate, which labels may not carry",
        ),
        (
            lab("q1", True, note="\ud800"),
            "note holds a NUL character or a lone surrogate, which labels may not carry",
        ),
        (lab("", True), "item is empty"),
        (lab("q1", True, reviewer=" "), "reviewer is empty"),
        (lab("q1", True, reviewer="a\nb"), "the reviewer's name contains U+000A (a control character), a "
                                             "character that is not seen or changes how the text around it "
                                             "reads: type the name without it"),
        (lab("q1", True, kind="other"), "kind must be 'queue', 'audit' or 'adjudication', got 'other'"),
        (
            lab("q1", True, time="yesterday"),
            "time must be ISO-8601 UTC like 2026-12-01T18:30:00Z, got 'yesterday'",
        ),
        (
            lab("q1", True, time="2026-02-30T00:00:00Z"),
            "time is not a real date and time: '2026-02-30T00:00:00Z'",
        ),
        (lab("q1", 1), "correct must be true or false, got 1"),
    ],
)
def test_bad_labels_are_refused_with_the_reason(label, reason):
    assert label_problem(label) == reason
    with pytest.raises(CalibError) as exc:
        labels_to_jsonl([label])
    assert str(exc.value) == f"label of item {label.item!r}: {reason}"


def jsonl(*objs) -> bytes:
    return "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs).encode("utf-8")


GOOD = {"item": "q1", "correct": True, "reviewer": "ann", "time": T0, "kind": "audit"}


def test_bad_jsonl_lines_are_named():
    data = jsonl(
        GOOD,
        {**GOOD, "correct": "maybe"},
        "{not json",
        "[1, 2]",
        {k: v for k, v in GOOD.items() if k != "reviewer"},
        {**GOOD, "note": "n" * 10_000},
        {**GOOD, "item": 7},
        {**GOOD, "correct": "true"},
        {**GOOD, "note": "nul\u0000"},
    )
    labels, messages = read_labels(data, "labels.jsonl")
    assert labels == (Label(**GOOD),)
    assert messages == (
        "labels.jsonl line 2: correct must be true or false, got 'maybe'",
        "labels.jsonl line 3: not valid JSON: Expecting property name enclosed in double quotes (column 2)",
        "labels.jsonl line 4: expected a JSON object {...}, got list",
        "labels.jsonl line 5: reviewer is missing",
        "labels.jsonl line 6: note is 10,000 characters, over the 500 allowed",
        "labels.jsonl line 7: item must be text, got 7",
        "labels.jsonl line 8: correct must be true or false, got 'true'",
        "labels.jsonl line 9: note holds a NUL character or a lone surrogate, which labels may not carry",
    )


def test_bad_csv_lines_are_named():
    text = (
        '"dataset","item","correct","note","reviewer","time","kind"\n'
        '"","q1","true","","ann","2026-12-01T18:30:00Z","audit"\n'
        '"","q2","maybe","","ann","2026-12-01T18:30:00Z","audit"\n'
        '"","q3","FALSE","two\nlines","ann","2026-12-01T18:30:00Z","queue"\n'
        '"","q4","false","","ann","2026-12-01T18:30:00Z"\n'
        '"","q5","false","","ann","noon","audit"\n'
    )
    labels, messages = read_labels(text.encode(), "labels.csv")
    assert (
        [x.item for x in labels] == ["q1", "q3"] and labels[1].note == "two\nlines" and not labels[1].correct
    )
    assert messages == (
        "labels.csv line 3: correct must be true or false, got 'maybe'",
        "labels.csv line 6: 6 cells where the header has 7",
        "labels.csv line 7: time must be ISO-8601 UTC like 2026-12-01T18:30:00Z, got 'noon'",
    )


def test_unreadable_label_files_are_refused():
    with pytest.raises(CalibError) as exc:
        read_labels(b"a,b\n1,2\n", "labels.csv")
    assert str(exc.value) == (
        "labels.csv line 1: not a labels file: the header ['a', 'b'] lacks item, correct, reviewer, time "
        "(JSONL lines start with '{'; a CSV needs a header row)"
    )
    with pytest.raises(CalibError, match=r"labels.csv line 2: bytes that are not UTF-8"):
        read_labels(b"item,correct,reviewer,time\n\xff\xfe,true,a,b\n", "labels.csv")
    assert read_labels(b"", "empty.csv") == ((), ())


def test_limits_are_checked_before_parsing():
    from calib.readers.base import LoadOptions

    data = jsonl(*[GOOD] * 20)
    with pytest.raises(CalibError, match="labels.jsonl: more than 10 lines; refused"):
        read_labels(data, "labels.jsonl", options=LoadOptions(max_rows=10))
    long = json.dumps({**GOOD, "note": "x" * 400})
    _, messages = read_labels(jsonl(GOOD, long), "l.jsonl", options=LoadOptions(max_line_chars=300))
    assert messages == (f"l.jsonl line 2: line is {len(long.encode())} bytes, over the 300 limit",)


def test_many_bad_lines_are_capped():
    from calib.labels.records import MAX_MESSAGES

    data = jsonl(*[{**GOOD, "correct": None}] * (MAX_MESSAGES + 7))
    _, messages = read_labels(data, "l.jsonl")
    assert len(messages) == MAX_MESSAGES + 1 and messages[-1] == "l.jsonl: 7 more bad lines"


_TEXT = st.characters(exclude_categories=("Cs",), exclude_characters="\x00")
_LINE = st.characters(exclude_categories=("Cs", "Cc"))
#: a reviewer's name: no character that is not seen or reorders the text (issue 22)
_NAME = st.characters(exclude_categories=("Cs", "Cc", "Cf", "Zl", "Zp"))


@settings(max_examples=150, deadline=None)
@given(
    item=st.text(_TEXT, min_size=1, max_size=30),
    note=st.text(_TEXT, max_size=60),
    reviewer=st.text(_NAME, min_size=1, max_size=20).filter(str.strip),
    dataset=st.text(_LINE, max_size=20),
    correct=st.booleans(),
)
def test_round_trip_of_any_text(item, note, reviewer, dataset, correct):
    """Export then import is the identity for every label the rules allow (any text but NUL,
    lone surrogates and, in one-line fields, control characters; in a reviewer's name no
    format or separator character either), in both formats."""
    x = Label(
        item=item, correct=correct, note=note, reviewer=reviewer, time=T0, kind="queue", dataset=dataset
    )
    assert label_problem(x) is None
    for to_bytes in (labels_to_csv, labels_to_jsonl):
        assert read_labels(to_bytes([x, x]), "l") == ((x, x), ())


def test_a_label_files_reviewer_with_an_invisible_character_is_refused_as_the_hosted_store_does():
    """The command line's label files (read_labels, labels_to_jsonl) refuse the reviewer
    names the hosted store refuses (issue 22): the 24 characters of
    tests/test_labels_store.py's INVISIBLE, typed from the Unicode standard, each named on
    its line in the store's words; a name of visible letters of any script is kept."""
    from calib.labels import read_labels
    from tests.test_labels_store import INVISIBLE, invisible_message

    chars = sorted(INVISIBLE)
    good = ["Zoë Ørsted-Nuñez", "王芳", "דוד כהן", "Ann 🙂"]
    lines = [json.dumps({"item": f"q{i}", "correct": True, "reviewer": f"ann{c}evil", "time": T0})
             for i, c in enumerate(chars)]
    lines += [json.dumps({"item": f"g{i}", "correct": False, "reviewer": who, "time": T0})
              for i, who in enumerate(good)]
    kept, messages = read_labels(("\n".join(lines) + "\n").encode("utf-8"), "labels.jsonl")
    assert [k.reviewer for k in kept] == good
    assert len(messages) == len(chars) == 24
    for no, (c, m) in enumerate(zip(chars, messages, strict=True), start=1):
        assert f"line {no}" in m and m.endswith(invisible_message(INVISIBLE[c])), (no, m)
    # and a label made in Python is refused on writing, in the same words
    with pytest.raises(CalibError, match="U\\+202E"):
        labels_to_jsonl([lab("q1", True, reviewer="ann\u202eevil")])


@pytest.mark.parametrize("to_bytes", [labels_to_csv, labels_to_jsonl])
def test_judge_shown_and_reason_tags_round_trip(to_bytes):
    tags = [(), ("ambiguous",), ("=1+1", "'quoted", "reference wrong"), ("😀 emoji", "+x")]
    labels = [Label(item=f"i{i}", correct=True, reviewer="r", time=T0, judge_shown=i % 2 == 1, reasons=t)
              for i, t in enumerate(tags)]
    back, messages = read_labels(to_bytes(labels), "labels")
    assert messages == () and back == tuple(labels)
    assert [x.reasons for x in back] == tags and [x.judge_shown for x in back] == [False, True, False, True]


@pytest.mark.parametrize("reasons, why", [
    (("a,b",), "reason tag 'a,b': a tag cannot hold a comma"),
    ((" a",), "a reason tag must be non-empty text of at most 60 characters, got ' a'"),
    (("a", "a"), "a reason tag is given twice"),
    (("x" * 61,), "a reason tag must be non-empty text of at most 60 characters"),
])
def test_bad_reason_tags_are_refused(reasons, why):
    assert label_problem(Label(item="i", correct=True, reviewer="r", time=T0, reasons=reasons)).startswith(why)


def test_an_adjudication_records_no_judge_shown_or_reasons():
    adj = Label(item="i", correct=True, reviewer="owner", time=T0, kind="adjudication", reasons=("a",))
    assert label_problem(adj) == ("an adjudication is the owner's final label: it records no judge shown and "
                                  "no reason tags")


def test_a_jsonl_reasons_field_must_be_a_list_of_text():
    line = json.dumps({"item": "i", "correct": True, "reviewer": "r", "time": T0, "reasons": "ambiguous"})
    got, messages = read_labels(line.encode(), "l.jsonl")
    assert got == () and messages == ("l.jsonl line 1: reasons must be a list of tags, got 'ambiguous'",)
