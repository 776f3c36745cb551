"""Agreement among reviewers (issue 25, item 6): Fleiss' kappa against statsmodels and
Krippendorff's alpha against the ``krippendorff`` package on random label matrices (many
seeds, missing labels included), Fleiss' kappa with unequal numbers of labels against
Gwet's formula written out here, Cohen's kappa against scikit-learn, the per-reviewer and
file-vs-final figures against counts and statsmodels' Wilson interval, and the bootstrap's
behaviour (seeded, holds its estimate, clusters of one item are items, clusters widen)."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss
from statsmodels.stats.proportion import proportion_confint

from calib.errors import CalibError
from calib.estimates import WILSON
from calib.labels import Label
from calib.labels.agreement import fleiss_kappa, krippendorff_alpha, percent_agreement
from calib.labels.reviewers import BAYESIAN_BOOTSTRAP, matrix_agreement, outcomes_vs_final, reviewer_agreement
from calib.rows import Judgments
from calib.scale import Scale

T0 = "2026-12-01T18:30:00Z"


def lab(item, correct, reviewer, unsure=False, kind="queue", time=T0):
    return Label(item=item, correct=correct, reviewer=reviewer, time=time, unsure=unsure, kind=kind)


def counts_of(data: np.ndarray, k: int) -> np.ndarray:
    """Item-by-category counts of a raters-by-items matrix with NaN for missing."""
    return np.stack([(data == c).sum(axis=0) for c in range(k)], axis=1)


# ------------------------------------------------------------------ against the references
@pytest.mark.parametrize("seed", range(30))
def test_krippendorff_alpha_equals_the_krippendorff_package(seed):
    rng = np.random.default_rng(seed)
    raters, units, k = int(rng.integers(2, 7)), int(rng.integers(5, 80)), int(rng.integers(2, 5))
    agree = rng.random()
    truth = rng.integers(0, k, size=units)
    data = np.where(rng.random((raters, units)) < agree, truth, rng.integers(0, k, size=(raters, units)))
    data = data.astype(np.float64)
    data[rng.random(data.shape) < rng.uniform(0, 0.5)] = np.nan  # missing labels
    counts = counts_of(data, k)
    try:
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    except ValueError:  # one value in the domain: undefined
        ref = float("nan")
    assert krippendorff_alpha(counts) == pytest.approx(ref, abs=1e-10, nan_ok=True)


@pytest.mark.parametrize("seed", range(30))
def test_fleiss_kappa_equals_statsmodels(seed):
    """Equal numbers of labels per item (statsmodels' design), the labels given by any
    of the reviewers: some reviewers miss some items."""
    rng = np.random.default_rng(seed)
    items, per_item, k = int(rng.integers(5, 80)), int(rng.integers(2, 6)), int(rng.integers(2, 5))
    reviewers = per_item + int(rng.integers(0, 3))
    data = np.full((reviewers, items), np.nan)
    for i in range(items):
        who = rng.choice(reviewers, size=per_item, replace=False)
        base = rng.integers(0, k)
        data[who, i] = np.where(rng.random(per_item) < rng.random(), base, rng.integers(0, k, size=per_item))
    counts = counts_of(data, k)
    ref = sm_fleiss(counts)
    assert fleiss_kappa(counts) == pytest.approx(ref, abs=1e-10, nan_ok=True)


def gwet_fleiss(data: np.ndarray, k: int) -> tuple[float, float]:
    """Fleiss' kappa with unequal numbers of labels (Gwet 2014, ch. 2), item by item:
    items with two labels or more; p_a the mean share of agreeing pairs, p_e from the
    mean per-item category shares. Also the percent agreement."""
    pa, shares = [], []
    for col in data.T:
        vals = col[~np.isnan(col)]
        if vals.size < 2:
            continue
        pairs = [(a, b) for i, a in enumerate(vals) for j, b in enumerate(vals) if i != j]
        pa.append(sum(a == b for a, b in pairs) / len(pairs))
        shares.append([np.mean(vals == c) for c in range(k)])
    p, pe = float(np.mean(pa)), float(np.sum(np.mean(shares, axis=0) ** 2))
    return (p - pe) / (1 - pe), p


@pytest.mark.parametrize("seed", range(20))
def test_fleiss_kappa_with_unequal_labels_per_item_is_gwets(seed):
    rng = np.random.default_rng(100 + seed)
    raters, units = int(rng.integers(2, 6)), int(rng.integers(10, 50))
    data = rng.integers(0, 2, size=(raters, units)).astype(np.float64)
    data[rng.random(data.shape) < 0.3] = np.nan
    counts = counts_of(data, 2)
    kappa, p = gwet_fleiss(data, 2)
    assert fleiss_kappa(counts) == pytest.approx(kappa, abs=1e-12)
    assert percent_agreement(counts) == pytest.approx(p, abs=1e-12)


def test_undefined_cases_are_nan():
    assert math.isnan(fleiss_kappa(np.array([[3, 0], [2, 0]])))  # one category only
    assert math.isnan(krippendorff_alpha(np.array([[3, 0], [2, 0]])))
    assert math.isnan(fleiss_kappa(np.array([[1, 0], [0, 1]])))  # no item with two labels
    assert math.isnan(percent_agreement(np.zeros((0, 2))))
    assert fleiss_kappa(np.array([[2, 0], [0, 2]])) == 1.0


# ------------------------------------------------------------------ from label records
def random_labels(seed: int, reviewers: int, items: int = 40):
    rng = np.random.default_rng(seed)
    names = [f"r{j}" for j in range(reviewers)]
    labels, m = [], np.full((items, reviewers), -1)
    for i in range(items):
        truth = rng.random() < 0.6
        for j, who in enumerate(names):
            u = rng.random()
            if u < 0.15:
                continue  # not labelled
            said = bool(truth if rng.random() < 0.8 else not truth)
            unsure = u < 0.25  # unsure: counted nowhere
            labels.append(lab(f"q{i}", said, who, unsure=unsure))
            if not unsure:
                m[i, j] = int(said)
    return labels, m


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("reviewers", [2, 3, 5])
def test_reviewer_agreement_of_records_equals_the_references(seed, reviewers):
    labels, m = random_labels(seed, reviewers)
    # a later adjudication is not a reviewer's label, and an earlier label is replaced by the later one
    labels += [lab("q0", True, "owner", kind="adjudication", time="2026-12-02T00:00:00Z")]
    first = next(x for x in labels if x.item == "q1")
    labels = [lab("q1", not first.correct, first.reviewer, time="2026-11-01T00:00:00Z")] + labels
    a = reviewer_agreement(labels, reps=200, seed=seed)
    data = np.where(m >= 0, m, np.nan).T.astype(np.float64)
    kept = ~np.isnan(data).all(axis=0)
    assert a.items == int(kept.sum()) and a.labels == int((m >= 0).sum())
    assert a.double_coded == int(((m >= 0).sum(axis=1) >= 2).sum())
    assert a.krippendorff_alpha.value == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-10)
    kappa, p = gwet_fleiss(data, 2)
    assert a.fleiss_kappa.value == pytest.approx(kappa, abs=1e-12)
    assert a.percent_agreement.value == pytest.approx(p, abs=1e-12)
    if reviewers == 2:
        both = (m >= 0).all(axis=1)
        assert a.cohen_kappa.value == pytest.approx(cohen_kappa_score(m[both, 0], m[both, 1]), abs=1e-12)
    else:
        assert a.cohen_kappa.value is None and "two reviewers" in a.cohen_kappa.note
    for name in ("cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "percent_agreement"):
        s = getattr(a, name)
        if s.value is not None:
            assert s.contains(s.value) and (s.level, s.method) == (0.95, BAYESIAN_BOOTSTRAP)


def test_per_reviewer_agreement_with_the_final_labels_by_hand():
    labels = [
        lab("a", True, "ann"), lab("a", True, "bob"), lab("a", False, "cy"),  # final right
        lab("b", False, "ann"), lab("b", True, "bob"),  # tie: no final label
        lab("c", False, "ann"), lab("c", False, "bob", unsure=True),  # final wrong (one vote)
        lab("d", True, "bob"), lab("d", True, "cy"), lab("d", True, "owner", kind="adjudication"),
        lab("e", True, "cy"), lab("e", False, "owner", kind="adjudication"),
    ]
    a = reviewer_agreement(labels, reps=0)
    got = {r.reviewer: (r.labels, r.n, r.agree) for r in a.per_reviewer}
    assert got == {"ann": (3, 2, 2), "bob": (3, 2, 2), "cy": (3, 3, 1)}  # cy: a wrong, d right, e right
    cy = next(r for r in a.per_reviewer if r.reviewer == "cy")
    lo, hi = proportion_confint(1, 3, alpha=0.05, method="wilson")
    assert cy.share.ci == pytest.approx((lo, hi), abs=1e-12) and cy.share.value == pytest.approx(1 / 3)
    assert a.unsure == 1 and a.final.count("tie") == 1 and a.final.count("adjudicated") == 2


def test_outcomes_against_final_labels_by_hand():
    n = 8
    rows = Judgments(
        stated=np.full(n, 90.0), prob=np.full(n, 0.9), line=np.arange(1, n + 1),
        correct=np.array([True, True, True, False, False, True, False, True]),
        item_id=np.array([f"q{i}" for i in range(n)], dtype=object), scale=Scale(0.0, 100.0, "0-100"),
    )
    labels = [
        lab("q0", True, "ann"), lab("q1", True, "ann"),  # file right, final right (2)
        lab("q2", False, "ann"),  # file right, final wrong
        lab("q3", True, "ann"), lab("q3", False, "bob"), lab("q3", True, "o", kind="adjudication"),  # wrong/right
        lab("q4", False, "ann"),  # file wrong, final wrong
        lab("q5", True, "ann"), lab("q5", False, "bob"),  # tie: left out
        lab("q6", False, "ann", unsure=True),  # only unsure: left out
    ]
    o = outcomes_vs_final(rows, labels)
    assert o.items == 5 and o.confusion == ((2, 1), (1, 1))
    for stat, (k, m) in ((o.sensitivity, (2, 3)), (o.specificity, (1, 2)), (o.accuracy, (3, 5))):
        assert stat.value == pytest.approx(k / m) and stat.method == WILSON
        assert stat.ci == pytest.approx(proportion_confint(k, m, alpha=0.05, method="wilson"), abs=1e-12)
    d = o.to_dict()
    assert "share the file calls right" in d["sensitivity"]["definition"]


# ------------------------------------------------------------------ the bootstrap
def test_the_interval_is_seeded_and_clusters_of_one_item_are_items():
    labels, _ = random_labels(3, 3)
    a = reviewer_agreement(labels, reps=300, seed=5)
    assert reviewer_agreement(labels, reps=300, seed=5) == a
    items = {x.item for x in labels}
    b = reviewer_agreement(labels, reps=300, seed=5, clusters={i: i for i in items})
    assert b.fleiss_kappa == a.fleiss_kappa and b.krippendorff_alpha == a.krippendorff_alpha
    assert b.clusters == len(items) and a.clusters is None


def test_clusters_of_copied_items_widen_the_interval():
    """Each item copied five times under new keys: as items the copies look like 5x the
    data; as clusters (one per original) the interval is the original's width again."""
    rng = np.random.default_rng(0)
    m = np.where(rng.random((60, 3)) < 0.8, (rng.random(60) < 0.6)[:, None], rng.random((60, 3)) < 0.6)
    big = np.repeat(m.astype(np.int8), 5, axis=0)
    unit = np.repeat(np.arange(60), 5)
    width = {}
    for name, (mm, u) in {"orig": (m.astype(np.int8), None), "items": (big, None), "clusters": (big, unit)}.items():
        ci = matrix_agreement(mm, u, reps=2000, seed=1)[0]["fleiss_kappa"].ci
        width[name] = ci[1] - ci[0]
    assert width["items"] < 0.6 * width["orig"]
    assert width["clusters"] == pytest.approx(width["orig"], rel=0.15)


def test_an_item_without_a_cluster_is_refused_by_name():
    labels = [lab("q1", True, "a"), lab("q1", True, "b"), lab("q2", False, "a")]
    with pytest.raises(CalibError, match=r"1 labelled items have no cluster \('q2'\)"):
        reviewer_agreement(labels, clusters={"q1": "c"}, reps=10)


def test_no_disagreement_gives_an_interval_below_one():
    labels = [lab(f"q{i}", i % 3 == 0, r) for i in range(30) for r in ("a", "b")]
    a = reviewer_agreement(labels, reps=1000)
    assert a.fleiss_kappa.value == 1.0 and a.fleiss_kappa.hi == 1.0 and a.fleiss_kappa.lo < 0.95
