"""Exact point estimates at any size, intervals that cover, binning that fits (issue 9).

Every figure of the count table is checked against an independent row-level
computation (scikit-learn, scipy.optimize, brute force) on 100,000 rows of
continuous confidences and of integer ones; then fixed-seed miniatures of the cases
the old engine got wrong (pooled routing counts, per-value bins on a continuous
score, ECE intervals that excluded the population ECE of a near-calibrated judge).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit, log_expit
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score

from calib import metrics as m
from calib import routing
from calib.audit import audit
from calib.rows import Judgments
from calib.scale import Scale, snap
from calib.table import from_counts, from_judgments

PROB = Scale(0.0, 1.0, "0-1")
PCT = Scale(0, 100, "0-100")
N = 100_000


def rows_of(v: np.ndarray, y: np.ndarray, scale: Scale) -> Judgments:
    n = v.size
    return Judgments(stated=np.asarray(v, dtype=float), prob=scale.to_prob(np.asarray(v, dtype=float)),
                     correct=np.asarray(y, dtype=bool), line=np.arange(1, n + 1),
                     item_id=np.array([f"q{i}" for i in range(n)]), scale=scale)


def continuous(seed: int = 0, n: int = N) -> Judgments:
    """Softmax-like probabilities with 7 decimals (as log-prob files write them),
    overconfident: P(right) = p^1.4."""
    rng = np.random.default_rng(seed)
    p = np.round(np.clip(rng.beta(5, 2, n), 1e-7, 1 - 1e-7), 7)
    return rows_of(p, rng.random(n) < p**1.4, PROB)


def integers(seed: int = 1, n: int = N) -> Judgments:
    """A 0-100 judge stating 1..99 (no ends: the Cox fit then uses every row)."""
    rng = np.random.default_rng(seed)
    v = np.clip(np.round(rng.beta(6, 2, n) * 100), 1, 99)
    return rows_of(v, rng.random(n) < (v / 100) ** 1.3, PCT)


CASES = {"continuous": continuous, "integers": integers}


@pytest.fixture(scope="module", params=list(CASES))
def case(request: pytest.FixtureRequest) -> tuple[Judgments, object]:
    rows = CASES[request.param]()
    return rows, from_judgments(rows)


def row_bins(rows: Judgments, scheme: str, bins: int) -> np.ndarray:
    """Each row's bin, by brute force from the rows."""
    p = snap(rows.stated, rows.scale)
    if scheme == "values":
        return np.unique(p, return_inverse=True)[1].ravel()
    if scheme == "width":
        if rows.scale is PCT:  # integers: exact arithmetic, 30 is in (20, 30]
            return np.maximum((p.astype(np.int64) * bins + 99) // 100 - 1, 0)
        return np.clip(np.ceil(p * bins).astype(np.int64) - 1, 0, bins - 1)
    before = np.searchsorted(np.sort(p), p, side="left")  # answers stated strictly lower
    return np.minimum(bins - 1, before * bins // p.size)


def row_errors(rows: Judgments, ids: np.ndarray) -> tuple[float, float, float]:
    """ECE, MCE and debiased ECE from rows: per bin sums of r = p - y over the rows
    (one pass of bincounts, so that per-value bins of 100,000 rows stay cheap)."""
    p, y = np.asarray(rows.prob), np.asarray(rows.correct, dtype=float)
    r = p - y
    _, b = np.unique(ids, return_inverse=True)
    cnt = np.bincount(b).astype(float)
    s1, s2 = np.bincount(b, weights=r), np.bincount(b, weights=r * r)
    d = s1 / cnt
    ece = float(np.abs(s1).sum() / p.size)
    mce = float(np.abs(d).max())
    two = cnt >= 2
    v = (s2[two] - cnt[two] * d[two] ** 2) / (cnt[two] * (cnt[two] - 1))
    deb = float(np.sum(cnt[two] * np.sqrt(np.maximum(d[two] ** 2 - v, 0.0))) / p.size)
    return ece, mce, deb


def test_the_table_has_one_cell_per_distinct_value(case) -> None:  # type: ignore[no-untyped-def]
    rows, t = case
    assert not t.pooled and t.cells == np.unique(snap(rows.stated, rows.scale)).size


@pytest.mark.parametrize("scheme", ["values", "width", "mass"])
def test_binned_errors_equal_brute_force(case, scheme: str) -> None:  # type: ignore[no-untyped-def]
    rows, t = case
    ece, mce, deb = row_errors(rows, row_bins(rows, scheme, 10))
    assert m.ece(t, scheme) == pytest.approx(ece, abs=1e-9)
    assert m.mce(t, scheme) == pytest.approx(mce, abs=1e-9)
    assert m.ece_debiased(t, scheme) == pytest.approx(deb, abs=1e-9)


def test_auroc_brier_log_loss_equal_sklearn(case) -> None:  # type: ignore[no-untyped-def]
    rows, t = case
    p, y = np.asarray(rows.prob), np.asarray(rows.correct)
    assert m.auroc(t) == pytest.approx(roc_auc_score(y, p), abs=1e-9)
    assert m.auroc_grid_bound(t) == 0.0
    assert m.brier(t) == pytest.approx(brier_score_loss(y, p), abs=1e-9)
    assert m.log_loss(t) == pytest.approx(log_loss(y, p), abs=1e-9)


def test_corp_equals_sklearn_isotonic(case) -> None:  # type: ignore[no-untyped-def]
    rows, t = case
    p, y = np.asarray(rows.prob), np.asarray(rows.correct, dtype=float)
    fit = IsotonicRegression(increasing=True, out_of_bounds="clip").fit(p, y).predict(p)
    bs, cal = np.mean((p - y) ** 2), np.mean((fit - y) ** 2)
    unc = y.mean() * (1 - y.mean())
    c = m.corp(t)
    assert c.mcb == pytest.approx(bs - cal, abs=1e-6)
    assert c.dsc == pytest.approx(unc - cal, abs=1e-6)


def test_cox_equals_a_row_level_fit(case) -> None:  # type: ignore[no-untyped-def]
    rows, t = case
    p, y = np.asarray(rows.prob), np.asarray(rows.correct, dtype=float)
    x = np.log(p) - np.log1p(-p)

    def nll(ab: np.ndarray) -> float:
        eta = ab[0] + ab[1] * x
        return -float(np.sum(y * log_expit(eta) + (1 - y) * log_expit(-eta)))

    def grad(ab: np.ndarray) -> np.ndarray:
        r = y - expit(ab[0] + ab[1] * x)
        return -np.array([r.sum(), (r * x).sum()])

    ref = optimize.minimize(nll, np.array([0.0, 1.0]), jac=grad, method="BFGS", options={"gtol": 1e-10}).x
    c = m.cox(t)
    assert c.intercept.value == pytest.approx(ref[0], abs=1e-6)
    assert c.slope.value == pytest.approx(ref[1], abs=1e-6)


def test_per_value_table_equals_counting_rows() -> None:
    rows = integers(n=20_000)
    t = from_judgments(rows)
    v, y = np.asarray(rows.stated), np.asarray(rows.correct)
    table = m.per_value(t)
    assert [r.value for r in table] == np.unique(v).tolist()
    for r in table:
        at = v == r.value
        assert (r.n, r.correct) == (int(at.sum()), int(y[at].sum()))
        assert r.hit_rate.value == pytest.approx(y[at].mean(), abs=1e-12)


@pytest.mark.parametrize("maker", [continuous, integers])
def test_routing_counts_equal_the_review_queue_at_any_threshold(maker) -> None:  # type: ignore[no-untyped-def]
    rows = maker(n=20_000)
    t = from_judgments(rows)
    b = routing.basis(t, reps=200, seed=1)
    s = snap(rows.stated, rows.scale)
    rng = np.random.default_rng(3)
    lo, hi = rows.scale.lo, rows.scale.hi
    # random thresholds, and thresholds equal to stated values (at or above T is accepted)
    for thr in np.r_[rng.uniform(lo, hi, 15), rng.choice(s, 10)]:
        r = routing.route(b, float(thr))
        direct = int(np.sum(s < thr))
        assert r.to_person == direct == len(routing.review_queue(rows, float(thr)))
        assert r.accepted_correct == int(np.asarray(rows.correct)[s >= thr].sum())
        lo_ci, hi_ci = r.estimates["to_person"].ci
        assert lo_ci is not None and hi_ci is not None and lo_ci <= r.to_person <= hi_ci
    # the risk-coverage sweep (on the 0.001 grid for a continuous score) counts exactly too
    sw = routing.sweep(b)
    assert sw.threshold.size <= max(routing.SWEEP_POINTS, 1001) and sw.coverage[0] == 1.0
    for thr, accepted in zip(sw.threshold, sw.accepted, strict=True):
        assert accepted == int(np.sum(s >= thr))


# ----------------------------------------------------- what the old engine got wrong
def test_routing_on_continuous_scores_counts_rows_not_grid_points() -> None:
    # pooled on a 0.001 grid, 0.85 compared grid points (3,564 to a person, queue of 3,574)
    # and 0.9499 and 0.95 gave one count
    rng = np.random.default_rng(11)
    p = np.round(rng.beta(6, 2, 20_000), 7)
    rows = rows_of(p, rng.random(p.size) < p, PROB)
    b = routing.basis(from_judgments(rows))
    r = routing.route(b, 0.85)
    assert r.to_person == len(routing.review_queue(rows, 0.85)) == int(np.sum(p < 0.85))
    between = int(np.sum((p >= 0.9499) & (p < 0.95)))
    assert between > 0
    assert routing.route(b, 0.95).to_person - routing.route(b, 0.9499).to_person == between


def test_auto_bins_per_value_only_for_values_that_repeat() -> None:
    # an lm-eval subject: 80 distinct probabilities, each used once
    rng = np.random.default_rng(5)
    p = np.round(rng.beta(4, 2, 80), 6)
    t = from_judgments(rows_of(p, rng.random(80) < p, PROB))
    assert t.cells == 80
    choice = m.choose_scheme(t)
    assert choice.scheme == "width" and "80 distinct values" in choice.why
    a = audit(t, reps=0)
    assert a.scheme == "width" and a.per_value == () and a.to_dict()["scheme_why"] == choice.why
    mu = a.murphy
    assert mu.resolution is not None and mu.uncertainty is not None and mu.resolution < 0.5 * mu.uncertainty
    # a stated scale keeps one bin per value
    v = rng.choice([60, 70, 80, 90, 100], 500).astype(float)
    s = from_judgments(rows_of(v, rng.random(500) < v / 100, PCT))
    assert m.choose_scheme(s).scheme == "values" and len(audit(s, reps=0).per_value) == 5


VALUES7 = np.array([40, 50, 60, 70, 80, 90, 100], dtype=float)
SHARE7 = np.array([.05, .05, .1, .15, .25, .25, .15])


@pytest.mark.parametrize("seed", range(5))
def test_ece_interval_covers_a_near_calibrated_judge(seed: int) -> None:
    # 7 stated values, each right 1 point less often than stated: population ECE 0.010.
    # The old percentile interval lay above 0.010 in 0% of 200 simulated datasets.
    rng = np.random.default_rng(seed)
    n = rng.multinomial(500, SHARE7)
    k = rng.binomial(n, VALUES7 / 100 - 0.01)
    t = from_counts(VALUES7, n, k, scale=PCT)
    truth = float(np.sum(SHARE7 * 0.01))
    a = audit(t, reps=1000, seed=seed)
    lo, hi = a.ci["ece"]
    assert lo is not None and hi is not None and lo <= truth <= hi
    assert a.metrics["ece"] > truth  # the plug-in figure is biased upward: why the interval is built so
    assert a.to_dict()["ece_debiased_ci"] == [lo, hi]


@pytest.mark.parametrize("seed", range(3))
def test_ece_interval_covers_a_near_calibrated_41_value_judge(seed: int) -> None:
    values = np.arange(60, 101, dtype=float)
    share = np.linspace(1, 3, 41) / np.linspace(1, 3, 41).sum()
    rng = np.random.default_rng(100 + seed)
    n = rng.multinomial(2000, share)
    t = from_counts(values, n, rng.binomial(n, values / 100 - 0.01), scale=PCT)
    a = audit(t, reps=1000, seed=seed)
    assert a.scheme == "values"
    lo, hi = a.ci["ece"]
    assert lo is not None and hi is not None and lo <= 0.01 <= hi


# ------------------------------------------------------------ clusters carried along
def clustered_rows(groups: int) -> Judgments:
    rng = np.random.default_rng(8)
    items, epochs = 300, 4
    n = items * epochs
    skill = np.repeat(rng.beta(1, 1, items), epochs)  # outcomes correlated within an item (ICC 1/3)
    p = np.round(np.clip(np.repeat(rng.uniform(0.5, 1, items), epochs) + rng.normal(0, 0.01, n), 0, 1), 6)
    return Judgments(stated=p, prob=p, correct=rng.random(n) < skill, line=np.arange(1, n + 1),
                     item_id=np.full(n, ""), scale=PROB, group=np.array([f"g{i % groups}" for i in range(n)]),
                     cluster=np.repeat(np.arange(items), epochs), cluster_how="item id")


@pytest.mark.parametrize("groups", [2, 150])  # 150 groups: the sort path of from_judgments
def test_clusters_follow_every_table_of_the_data(groups: int) -> None:
    from calib.bootstrap import resample_counts

    t = from_judgments(clustered_rows(groups))
    for tab in (t, t.select(1), t.pooled_over_groups(), t.pooled_over_groups().coarse(), t.coarse()):
        cl = tab.clusters
        assert cl is not None and cl.n.shape[1] == tab.cells
        assert np.array_equal(np.asarray(cl.n.sum(axis=0)).ravel(), tab.n)
        assert np.array_equal(np.asarray(cl.k.sum(axis=0)).ravel(), tab.correct)
    assert t.with_counts(t.n, t.correct).clusters is None
    c = t.pooled_over_groups().coarse()
    n_b, _k = resample_counts(c, 400, seed=2)
    sizes = set(np.asarray(c.clusters.n.sum(axis=1)).ravel().tolist())  # type: ignore[union-attr]
    assert sizes == {4} and set(n_b.sum(axis=1).tolist()) == {c.total}  # whole items of 4 epochs drawn


def test_a_clustered_table_gets_a_wider_accuracy_interval() -> None:
    from dataclasses import replace

    t = from_judgments(clustered_rows(1))
    lo_c, hi_c = audit(t, reps=1000, seed=3).ci["accuracy"]
    lo_i, hi_i = audit(replace(t, clusters=None), reps=1000, seed=3).ci["accuracy"]
    assert None not in (lo_c, hi_c, lo_i, hi_i)
    assert hi_c - lo_c > 1.2 * (hi_i - lo_i)  # design effect 1 + (4 - 1) ICC = 2: width x 1.4


def test_intervals_of_a_continuous_score_sit_on_the_exact_figures() -> None:
    # resampled on the coarse table, moved by exact minus the resampling kernel's own
    # figure: the log loss of a pooled cell read at its mean p no longer drags the
    # interval off the exact value (it lay wholly below it, [0.860, 0.912] for 0.945)
    rng = np.random.default_rng(21)
    p = np.round(np.clip(0.55 + 0.5 * rng.beta(5, 2, 20_000) + rng.normal(0, 0.05, 20_000), 0.25, 0.9999999), 7)
    rows = rows_of(p, rng.random(p.size) < rng.beta(5, 2, p.size), PROB)
    a = audit(from_judgments(rows), reps=300, seed=0)
    for name in ("accuracy", "mean_confidence", "brier", "log_loss", "auroc", "ece", "ece_debiased"):
        lo, hi = a.ci[name]
        assert lo is not None and hi is not None and lo <= a.metrics[name] <= hi, name
    assert a.metrics["log_loss"] == pytest.approx(log_loss(np.asarray(rows.correct), p), abs=1e-9)
