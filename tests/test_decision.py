"""The threshold decision (issue 11) against brute force written out from rows.

Every reference here is computed per row with scipy.stats.binom / beta, independently of
calib.decision's helpers.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import beta, binom

from calib import decision
from calib.dataset import Dataset
from calib.decision import risk
from calib.errors import CalibError
from calib.estimates import PERCENTILE, Estimate
from calib.rows import Judgments
from calib.scale import Scale
from calib.table import from_counts, from_judgments

S100 = Scale(0.0, 100.0, "0-100")
PROB = Scale(0.0, 1.0, "0-1")
REC_KEYS = {"threshold", "accepted", "to_person", "coverage", "error_rate", "error_upper", "target", "confidence",
            "method", "certified_on", "holds", "message", "candidates", "procedure"}


def rows_of(stated, correct, *, scale=S100, ids=None, group=None, cluster=None):
    n = len(stated)
    stated = np.asarray(stated, dtype=float)
    return Judgments(
        stated=stated, prob=np.asarray(scale.to_prob(stated), dtype=float), correct=np.asarray(correct, bool),
        line=np.arange(1, n + 1), item_id=np.array(ids if ids is not None else [f"q{i}" for i in range(n)]),
        scale=scale, group=None if group is None else np.asarray(group),
        cluster=None if cluster is None else np.asarray(cluster).astype(str),
    )


def discrete(seed, n=800, values=(50, 60, 70, 80, 85, 90, 95, 100), slack=0.04):
    rng = np.random.default_rng(seed)
    s = rng.choice(values, size=n).astype(float)
    y = rng.random(n) < np.clip(s / 100 - slack * rng.random(), 0, 1)
    return s, y


def continuous(seed, n=1500):
    rng = np.random.default_rng(seed)
    p = np.round(rng.beta(8, 1.3, n), 6)
    return p, rng.random(n) < p**1.2


# ------------------------------------------------------------ brute force
def brute_fixed_sequence(score, y, alpha, delta):
    """Fixed-sequence Clopper-Pearson testing, per threshold from the rows: strictest
    first, thresholds that cannot be rejected even with no error passed over until the
    first that can; reject while P(Bin(n, alpha) <= e) <= delta; stop at the first failure."""
    best = None
    started = False
    for t in sorted(set(score.tolist()), reverse=True):
        acc = score >= t
        n, e = int(acc.sum()), int((~y[acc]).sum())
        if not started and (1 - alpha) ** n > delta:
            continue
        started = True
        if binom.cdf(e, n, alpha) <= delta:
            best = (t, n, e)
        else:
            break
    return best


def brute_upper(e, n, confidence):
    return 1.0 if e >= n else float(beta.ppf(confidence, e + 1, n - e))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("alpha,conf", [(0.05, 0.95), (0.1, 0.9), (0.15, 0.99), (0.08, 0.8)])
def test_recommendation_matches_brute_force(seed, alpha, conf):
    s, y = discrete(seed, slack=0.02 + 0.02 * (seed % 4))
    got = decision.recommend(rows_of(s, y), target=alpha, confidence=conf)
    want = brute_fixed_sequence(s, y, alpha, 1 - conf)
    if want is None:
        assert got.threshold is None and not got.holds and got.accepted == 0
        assert got.to_person == len(s)
        return
    t, n, e = want
    assert got.holds and got.threshold == t and got.accepted == n and got.to_person == len(s) - n
    assert got.error_rate == pytest.approx(e / n)
    assert got.error_upper == pytest.approx(brute_upper(e, n, conf), rel=1e-9)
    assert got.error_upper <= alpha + 1e-12  # a rejected null: the bound is under the target


def quantile_grid(score, alpha=0.05, conf=0.95, points=100):
    """The candidate thresholds of a continuous score, written out from the rows: for
    j = 1..points, the highest score at which at least ceil(j N / points) items are accepted
    (no outcome used), from the first accepting n0 items on: the fewest with which a
    Clopper-Pearson bound of n0 alpha / 2 errors is at most alpha."""
    n0 = next(n for n in range(1, 10**6) if beta.ppf(conf, n * alpha / 2 + 1, n - n * alpha / 2) <= alpha)
    desc = np.sort(score)[::-1]
    ts = {float(desc[math.ceil(j * score.size / points) - 1]) for j in range(1, points + 1)}
    big = {t for t in ts if int((score >= t).sum()) >= n0}
    return sorted(big or ts)


def brute_on_grid(score, y, alpha, delta, grid):
    """:func:`brute_fixed_sequence` over the thresholds ``grid`` only."""
    best, started = None, False
    for t in sorted(grid, reverse=True):
        acc = score >= t
        n, e = int(acc.sum()), int((~y[acc]).sum())
        if not started and (1 - alpha) ** n > delta:
            continue
        started = True
        if binom.cdf(e, n, alpha) > delta:
            break
        best = (t, n, e)
    return best


@pytest.mark.parametrize("seed", range(4))
def test_recommendation_continuous_matches_brute_force(seed):
    p, y = continuous(seed)
    got = decision.recommend(rows_of(p, y, scale=PROB), target=0.05)
    want = brute_on_grid(p, y, 0.05, 0.05, quantile_grid(p))
    assert (got.threshold is None) == (want is None)
    if want is not None:
        assert got.threshold == want[0] and got.accepted == want[1]
    assert "100 score quantiles" in got.candidates and "from the first accepting 223 items" in got.message


def test_continuous_scores_are_certified_on_an_outcome_free_grid():
    """Issue 22: testing every distinct value of a continuous score from the top stops among
    the first few items. Constructed: 20,000 distinct scores; the 200 highest hold 6 errors
    (3%), the 9,800 below them 1% errors, the rest all wrong. Every threshold accepting 200
    to 10,000 items has an error under 5% by construction, and the grid of 100 quantiles
    certifies the one accepting 10,000 (brute force), while the top-down walk over every
    value fails at once: the first testable threshold (59 items) holds 4 errors."""
    n = 20_000
    score = np.linspace(1.0, 0.0, n, endpoint=False)  # distinct, decreasing
    y = np.ones(n, dtype=bool)
    y[[0, 10, 20]] = False  # 3 errors among the top 59
    y[200:10_000] = np.arange(9800) % 100 != 0  # 1% wrong
    y[10_000:] = False
    assert brute_fixed_sequence(score, y, 0.05, 0.05) is None  # every value: nothing
    grid = quantile_grid(score)
    want = brute_on_grid(score, y, 0.05, 0.05, grid)
    assert want[1] >= 10_000
    got = decision.recommend(rows_of(score, y, scale=PROB), target=0.05)
    assert (got.threshold, got.accepted) == want[:2]
    assert got.to_dict()["candidates"] == got.candidates


def test_count_table_and_rows_agree():
    s, y = discrete(3)
    t = from_judgments(rows_of(s, y))
    table = from_counts(t.value, t.n, t.correct, scale=S100)
    assert decision.recommend(table).to_dict() == decision.recommend(rows_of(s, y)).to_dict()


def test_recommendation_json_and_message():
    s, y = discrete(1, n=3000, slack=0.0)
    r = decision.recommend(rows_of(s, y))
    d = r.to_dict()
    assert set(d) == REC_KEYS
    json.dumps(d, allow_nan=False)
    assert d["holds"] and d["method"] == decision.GUARANTEED and d["certified_on"] == "all rows"
    assert "With 95% confidence, at most 5% of the items accepted unseen are wrong" in d["message"]
    assert f"{r.accepted:,} of 3,000 items" in d["message"]
    assert d["coverage"] == pytest.approx(r.accepted / 3000)


def test_nothing_qualifies_says_what_would():
    s, y = discrete(2, n=300, slack=0.0)
    r = decision.recommend(rows_of(s, y), target=0.005)
    assert not r.holds and r.threshold is None and "No threshold can be certified" in r.message
    assert r.loosest_target is not None and f"{100 * r.loosest_target:.1f}".rstrip("0").rstrip(".") in r.message
    assert decision.recommend(rows_of(s, y), target=r.loosest_target).holds
    assert not decision.recommend(rows_of(s, y), target=r.loosest_target - 0.001).holds
    json.dumps(r.to_dict(), allow_nan=False)
    # at 0 errors among the 100s, more items certify a target the data cannot yet
    s2 = np.r_[np.full(30, 100.0), np.full(70, 60.0)]
    y2 = np.r_[np.ones(30, bool), np.zeros(70, bool)]
    r2 = decision.recommend(rows_of(s2, y2), target=0.05)
    assert not r2.holds and r2.items_needed is not None and r2.items_needed > 100
    assert "more) would certify it" in r2.message


def test_point_estimate_is_lowest_threshold_and_labelled():
    s, y = discrete(5)
    r = decision.recommend(rows_of(s, y), target=0.1, guarantee=False)
    want = None
    for t in sorted(set(s.tolist())):  # lowest threshold whose observed error is at most the target
        acc = s >= t
        if (~y[acc]).mean() <= 0.1:
            want = t
            break
    assert r.threshold == want and r.method == decision.POINT and "no guarantee" in r.message


def test_split_when_the_map_is_fitted_here():
    s, y = discrete(7, n=1001)
    r = decision.recommend(rows_of(s, y), fit="platt", target=0.1)
    assert r.total == 500 and "held-out half" in r.certified_on and "1st, 3rd" in r.certified_on
    t = from_judgments(rows_of(s, y))
    r2 = decision.recommend(t, fit="platt", target=0.1)
    assert "random split" in r2.certified_on and r2.total == pytest.approx(t.total / 2, abs=8)


def test_clusters_count_each_item_once():
    rng = np.random.default_rng(0)
    items, m = 400, 4
    v = rng.choice([80, 90, 100], size=items).astype(float)
    q = np.clip(rng.beta(2, 2, items) * 0.3 + v / 100 - 0.12, 0, 1)  # shared per-item propensity
    s = np.repeat(v, m)
    y = rng.random(items * m) < np.repeat(q, m)
    cl = np.repeat(np.arange(items), m)
    rows = rows_of(s, y, cluster=cl)
    c = risk.counts(from_judgments(rows))
    # items accepted and the sum of their error shares at each threshold, written out
    for i, t in enumerate(c.score):
        acc = s >= t
        g = np.unique(cl[acc])
        share = np.array([np.mean(~y[acc & (cl == j)]) for j in g])
        assert c.n_eff[i] == len(g) and c.item_error[i] == pytest.approx(share.sum(), rel=1e-9)
        assert 0 <= c.drawn[i] <= len(g) and c.drawn[i] == int(c.drawn[i])
    rec = decision.recommend(rows, target=0.1)
    assert rec.method.endswith(risk.CLUSTERED) and "per item" in rec.message
    plain = decision.recommend(rows_of(s, y), target=0.1)
    assert rec.accepted <= plain.accepted


def test_clusters_with_informative_sizes_certify_the_error_per_item():
    """Issue 22: hard items retried more often. Constructed: 1,000 items stated 100; 980
    judged once and right, 20 judged ten times and wrong every time. The error per item is
    2% (20 of 1,000) by construction, per answer 17% (200 of 1,180). Every item's answers
    agree, so the drawn answer is the item's: the certificate is Clopper-Pearson on the
    items counted once (brute force), and the error it states is per item."""
    s = np.full(1180, 100.0)
    y = np.r_[np.ones(980, bool), np.zeros(200, bool)]
    cl = np.r_[np.arange(980), np.repeat(np.arange(980, 1000), 10)]
    rec = decision.recommend(rows_of(s, y, cluster=cl), target=0.05)
    assert brute_fixed_sequence(np.full(1000, 100.0), np.arange(1000) >= 20, 0.05, 0.05) == (100, 1000, 20)
    assert rec.threshold == 100 and rec.accepted == 1180 and rec.error_rate == pytest.approx(0.02)
    assert rec.error_upper == pytest.approx(brute_upper(20, 1000, 0.95), rel=1e-9)
    assert "the error is per item" in rec.message


def test_clustered_certificate_holds_for_its_stated_error_under_informative_sizes():
    """Fixed-seed miniature of the simulation (bench/sim_threshold.py, "clusters,
    informative sizes"): 400 items, each with its own chance q of being right (Beta around
    the hit rate of its stated value) and judged 1 + Binomial(9, 1 - q) times (hard items
    more often). The population error is exact per item (the mean of 1 - q) and per answer
    (E[m (1 - q)] / E[m]); at 90% confidence the certificate's own definition may fail in
    at most 10% of datasets: the Kish design effect on answers failed in 10 of 40 here."""
    values, shares = np.array([60.0, 70, 80, 90, 100]), np.array([0.10, 0.15, 0.25, 0.30, 0.20])
    hits, kappa, extra = np.array([0.55, 0.66, 0.80, 0.99, 0.995]), 0.5, 9

    def population(t):
        w, h = shares[values >= t], hits[values >= t]
        e1 = 1 - h
        e2 = h * (1 - h) / (kappa + 1) + e1**2
        return np.sum(w * e1) / w.sum(), np.sum(w * (e1 + extra * e2)) / np.sum(w * (1 + extra * e1))

    rng = np.random.default_rng(1)
    fails = 0
    for _ in range(40):
        v = rng.choice(5, size=400, p=shares)
        q = rng.beta(kappa * hits[v], kappa * (1 - hits[v]))
        item = np.repeat(np.arange(400), 1 + rng.binomial(extra, 1 - q))
        r = decision.recommend(rows_of(values[v][item], rng.random(item.size) < q[item], cluster=item),
                               target=0.05, confidence=0.9)
        if r.threshold is not None:
            per_item, per_answer = population(r.threshold)
            fails += (per_item if "per item" in r.method else per_answer) > 0.05
    assert fails <= 4


# ------------------------------------------------------------------ costs
def brute_costs(score, y, c_r, c_m, c_ok):
    N = len(score)
    out = []
    for t in sorted(set(score.tolist())) + [math.inf]:
        person = score < t
        caught, needless = np.sum(person & ~y), np.sum(person & y)
        slipped = np.sum(~person & ~y)
        out.append((t, (c_r * caught + c_ok * needless + c_m * slipped) / N, int(person.sum())))
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rates", [(1.0, 10.0, None), (2.0, 5.0, 0.5), (0.0, 1.0, None), (3.0, 1.0, 3.0)])
def test_cost_curve_and_cheapest_match_brute_force(seed, rates):
    c_r, c_m, c_ok = rates
    s, y = discrete(seed)
    got = decision.costs(rows_of(s, y), cost_review=c_r, cost_miss=c_m, cost_right=c_ok, reps=200, seed=seed)
    want = brute_costs(s, y, c_r, c_m, c_r if c_ok is None else c_ok)
    curve = got.to_dict()["cost_curve"]
    assert [p["threshold"] for p in curve] == [w[0] for w in want[:-1]]
    assert [p["cost"] for p in curve] == pytest.approx([w[1] for w in want[:-1]])
    best = min(range(len(want)), key=lambda i: (want[i][1], i))  # first (lowest threshold) on ties
    ch = got.cheapest
    assert ch.cost.value == pytest.approx(want[best][1])
    assert ch.threshold == (None if want[best][0] == math.inf else want[best][0])
    assert ch.saving_vs_review_all == pytest.approx(want[-1][1] - want[best][1])
    assert ch.saving_vs_review_none == pytest.approx(want[0][1] - want[best][1])
    lo, hi = ch.cost.ci
    assert lo <= ch.cost.value + 1e-9 and ch.cost.value - 1e-9 <= hi and ch.cost.level == 0.95
    assert all(p["cost_ci"][0] <= p["cost"] + 1e-9 <= p["cost_ci"][1] + 2e-9 for p in curve)
    json.dumps(got.to_dict(), allow_nan=False)


@pytest.mark.parametrize("rates", [(1.0, 10.0, None), (2.0, 5.0, 0.5)])
def test_cost_at_a_hand_set_threshold_is_the_curve_at_it(rates):
    """The cost at one threshold (the dashboard's current one) is the brute-force cost
    from rows, and its interval is the cost curve's band at that threshold."""
    from calib import routing
    from calib.decision.costs import cost_at

    c_r, c_m, c_ok = rates
    s, y = discrete(3)
    j = rows_of(s, y)
    want = {t: c for t, c, _ in brute_costs(s, y, c_r, c_m, c_r if c_ok is None else c_ok)}
    b = routing.basis(from_judgments(j), reps=200, seed=3)
    curve = {p["threshold"]: p for p in decision.costs(j, cost_review=c_r, cost_miss=c_m, cost_right=c_ok,
                                                         reps=200, seed=3).to_dict()["cost_curve"]}
    for t in (60.0, 85.0, 100.0):
        cost = cost_at(b, t, cost_review=c_r, cost_miss=c_m, cost_right=c_ok)
        assert cost.value == pytest.approx(want[t])
        assert cost.ci == pytest.approx(tuple(curve[t]["cost_ci"]))
        assert (cost.level, cost.method) == (0.95, PERCENTILE)
    assert cost_at(b, 90.0) == Estimate.point(None)  # no costs given
    no_resamples = cost_at(routing.basis(from_judgments(j)), 90.0, cost_review=1.0)
    assert no_resamples.ci == (None, None) and no_resamples.value is not None


@pytest.mark.parametrize("limit", [0, 50, 200, 799, 800])
def test_capacity_matches_brute_force(limit):
    s, y = discrete(4)
    want = brute_costs(s, y, 1.0, 4.0, 1.0)
    ok = [w for w in want if w[2] <= limit]
    cheapest = min(ok, key=lambda w: w[1])
    got = decision.costs(rows_of(s, y), cost_review=1, cost_miss=4, capacity=limit, reps=0).capacity
    assert got.to_person <= limit and got.cost == pytest.approx(cheapest[1])
    plain = decision.costs(rows_of(s, y), capacity=limit, reps=0).capacity  # no costs: highest within capacity
    highest = max(ok, key=lambda w: w[0])
    assert plain.threshold == (None if highest[0] == math.inf else highest[0]) and plain.cost is None
    share = decision.costs(rows_of(s, y), capacity_share=limit / 800, reps=0).capacity
    assert share.limit == limit
    assert decision.parse_capacity("200") == (200, None) and decision.parse_capacity("25%") == (None, 0.25)


def test_clustered_cost_band_resamples_clusters():
    s, y = discrete(1, n=400)
    cl = np.arange(400) // 4
    wide = decision.costs(rows_of(np.repeat(s[::4], 4), np.repeat(y[::4], 4), cluster=cl), cost_review=1,
                          cost_miss=10, reps=400)
    narrow = decision.costs(rows_of(np.repeat(s[::4], 4), np.repeat(y[::4], 4)), cost_review=1, cost_miss=10,
                            reps=400)
    w, n = wide.cheapest.cost.ci, narrow.cheapest.cost.ci
    assert (w[1] - w[0]) > 1.4 * (n[1] - n[0])  # whole items resampled: about twice as wide


# -------------------------------------------------------------- per group
def test_per_group_fallback_rule():
    rng = np.random.default_rng(11)
    parts = []
    for name, n, slack in (("big", 3000, 0.0), ("tiny", 40, 0.0), ("bad", 300, 0.12)):
        s = rng.choice([70, 80, 90, 100], size=n).astype(float)
        y = rng.random(n) < np.clip(s / 100 - slack, 0, 1)
        parts.append((np.full(n, name), s, y))
    g = np.concatenate([p[0] for p in parts])
    s = np.concatenate([p[1] for p in parts])
    y = np.concatenate([p[2] for p in parts])
    res = decision.per_group(rows_of(s, y, group=g), target=0.05)
    by = {x.group: x for x in res.groups}
    pooled = decision.recommend(rows_of(s, y), target=0.05)
    assert res.pooled.threshold == pooled.threshold
    assert not by["big"].pooled_fallback
    assert by["big"].threshold == brute_fixed_sequence(s[g == "big"], y[g == "big"], 0.05, 0.05)[0]
    assert by["tiny"].pooled_fallback and "fewer than 59" in by["tiny"].reason
    assert by["bad"].pooled_fallback and "certify no threshold" in by["bad"].reason
    for name in ("tiny", "bad"):  # not certified on their own items: every item to a person
        m = g == name
        assert by[name].threshold is None and by[name].accepted == 0 and by[name].error_upper is None
        acc, e = int(np.sum(s[m] >= pooled.threshold)), int(np.sum((s[m] >= pooled.threshold) & ~y[m]))
        assert by[name].pooled_error_upper == pytest.approx(brute_upper(e, acc, 0.95), rel=1e-6)
    at_pooled = int(np.sum(s >= pooled.threshold))
    per = sum(int(np.sum((s >= x.threshold) & (g == x.group))) for x in res.groups if x.threshold is not None)
    assert res.accepted_pooled == at_pooled and res.accepted == per and res.gain == per - at_pooled
    d = res.to_dict()
    assert {"group", "threshold", "accepted", "error_upper", "pooled_fallback"} <= set(d["per_group"][0])
    json.dumps(d, allow_nan=False)
    sim = decision.per_group(rows_of(s, y, group=g), target=0.05, simultaneous=True)
    assert sim.confidence_each == pytest.approx(1 - 0.05 / 3) and sim.min_items == risk.min_items(0.05, sim.confidence_each)


# ----------------------------------------------------------------- judges
def test_paired_comparison_against_direct_computation():
    rng = np.random.default_rng(5)
    n = 1500
    s = rng.choice([70, 80, 90, 100], size=n).astype(float)
    ya = rng.random(n) < np.clip(s / 100 + 0.02, 0, 1)
    yb = rng.random(n) < np.clip(s / 100 - 0.06, 0, 1)
    sb = np.clip(s + rng.choice([-10, 0, 10], size=n), 70, 100)
    ids_b = np.array([f"q{i}" for i in range(200, n + 200)])  # 1,300 shared ids
    a, b = rows_of(s, ya), rows_of(sb, yb, ids=ids_b)
    ds = [Dataset("A", from_judgments(a), None, a), Dataset("B", from_judgments(b), None, b)]
    cmp = decision.compare_judges(ds, target=0.1, cost_review=1, cost_miss=10, reps=1000)
    ta, tb = (j.recommendation.threshold for j in cmp.judges)
    assert ta == decision.recommend(a, target=0.1).threshold
    p = cmp.paired[0]
    shared = set(a.item_id) & set(b.item_id)
    ia = np.isin(a.item_id, list(shared))
    ib = np.isin(b.item_id, list(shared))
    acc_a = (s >= ta) if ta is not None else np.zeros(n, bool)
    acc_b = (sb >= tb) if tb is not None else np.zeros(n, bool)
    assert p.shared == len(shared) == 1300
    assert p.accepted_a == int(acc_a[ia].sum()) and p.accepted_b == int(acc_b[ib].sum())
    assert p.errors_a == int((acc_a & ~ya)[ia].sum())
    # the paired bootstrap's spread: sqrt(S) times the sd of the per-item differences
    order_b = {k: i for i, k in enumerate(b.item_id)}
    d = np.array([int(acc_a[i]) - int(acc_b[order_b[k]]) for i, k in enumerate(a.item_id) if k in shared], float)
    half = 1.96 * d.std() * math.sqrt(d.size)
    lo, hi = p.difference.ci
    assert (hi - lo) / 2 == pytest.approx(half, rel=0.12)
    assert lo <= p.difference.value <= hi and p.difference.value == p.accepted_a - p.accepted_b
    assert p.better == ("A" if lo > 0 else "B" if hi < 0 else None)
    json.dumps(cmp.to_dict(), allow_nan=False)
    assert cmp.to_dict()["judges"][0]["cheapest_cost"] is not None


# ------------------------------------------------------------------- AURC
def brute_aurc(score, y):
    """Mean over items of the error rate among the items at or above its score (ties together)."""
    return float(np.mean([np.mean(~y[score >= t]) for t in score]))


def brute_oracle(y):
    N, W = len(y), int(np.sum(~y))
    return float(np.mean([max(0, k - (N - W)) / k for k in range(1, N + 1)]))


@pytest.mark.parametrize("seed", range(5))
def test_aurc_matches_brute_force(seed):
    s, y = discrete(seed, n=600)
    got = decision.aurc(rows_of(s, y), reps=300, seed=seed)
    assert got.aurc.value == pytest.approx(brute_aurc(s, y))
    assert got.aurc_oracle == pytest.approx(brute_oracle(y))
    assert got.eaurc.value == pytest.approx(got.aurc.value - got.aurc_oracle)
    assert got.aurc.contains(got.aurc.value) and got.aurc.level == 0.95 and got.aurc.method == "percentile bootstrap"
    d = got.to_dict()
    assert {"aurc", "aurc_ci", "aurc_oracle", "eaurc"} <= set(d)
    json.dumps(d, allow_nan=False)


def test_aurc_without_ties_is_the_usual_mean_over_k():
    p, y = continuous(2, n=2500)
    got = decision.aurc(rows_of(p, y, scale=PROB), reps=200)  # > 101 values: resampled on the coarse table
    order = np.argsort(-p, kind="stable")
    e = np.cumsum(~y[order])
    if np.unique(p).size == p.size:
        assert got.aurc.value == pytest.approx(float(np.mean(e / np.arange(1, p.size + 1))))
    assert got.aurc.value == pytest.approx(brute_aurc(p, y))
    assert got.aurc.contains(got.aurc.value)
    assert decision.oracle_aurc(10, 0) == 0 and decision.oracle_aurc(10, 10) == pytest.approx(1.0)


# ------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("kw", [dict(target=0), dict(target=1), dict(target=1.5), dict(target=-0.1),
                                dict(confidence=0), dict(confidence=1), dict(confidence=1.2),
                                dict(target="x"), dict(fit="nonsense")])
def test_bad_recommend_inputs(kw):
    s, y = discrete(0)
    with pytest.raises(CalibError):
        decision.recommend(rows_of(s, y), **kw)


@pytest.mark.parametrize("kw", [dict(cost_review=-1, cost_miss=1), dict(cost_review=1, cost_miss=-0.5),
                                dict(cost_review=1, cost_miss=1, cost_right=-1),
                                dict(cost_review=math.nan, cost_miss=1), dict(capacity=801), dict(capacity=-1),
                                dict(capacity_share=1.5), dict(capacity=10, capacity_share=0.1)])
def test_bad_cost_inputs(kw):
    s, y = discrete(0)
    with pytest.raises(CalibError):
        decision.costs(rows_of(s, y), reps=0, **kw)


def test_other_refusals():
    s, y = discrete(0)
    with pytest.raises(CalibError, match="group field"):
        decision.per_group(rows_of(s, y))
    with pytest.raises(CalibError):
        decision.parse_capacity("lots")
    with pytest.raises(CalibError):
        decision.parse_capacity("2.5")
    from calib.maps import fit_map

    cmap = fit_map(from_judgments(rows_of(s, y)), "platt")
    with pytest.raises(CalibError, match="not both"):
        decision.recommend(rows_of(s, y), calibration=cmap, fit="platt")


def test_split_keeps_an_items_repeats_together():
    s, y = discrete(8, n=900)
    cl = np.arange(900) // 3
    r = decision.recommend(rows_of(np.repeat(s[::3], 3), y, cluster=cl, ids=[f"i{c}" for c in cl]), fit="platt",
                           target=0.15)
    assert "repeats kept together" in r.certified_on and r.total % 3 == 0


def test_decide_has_the_route_json_keys():
    s, y = discrete(9, n=1200)
    g = np.where(np.arange(1200) % 2 == 0, "math", "law")
    d = decision.decide(rows_of(s, y, group=g), target=0.1, cost_review=1, cost_miss=8, capacity_share=0.3,
                        by_group=True, reps=200)
    out = d.to_dict()
    assert {"recommendation", "point_estimate", "cost_curve", "cheapest", "capacity", "per_group", "aurc",
            "aurc_ci", "aurc_oracle", "eaurc"} <= set(out)
    assert set(out["recommendation"]) == REC_KEYS and out["point_estimate"]["method"] == decision.POINT
    assert out["recommendation"] == decision.recommend(rows_of(s, y), target=0.1).to_dict()
    json.dumps(out, allow_nan=False)
    split = decision.decide(rows_of(s, y), fit="platt", target=0.1, reps=0).to_dict()
    assert "held-out" in split["recommendation"]["certified_on"] and split["cost_curve"] == []


def test_a_group_that_certifies_nothing_goes_to_a_person_not_the_pooled_threshold():
    """Issue 22: a group whose own items certify nothing used to inherit the pooled
    threshold. Here every item states 100; the "bad" group is wrong on exactly 15% of its
    items, so accepting it at the pooled threshold (100, certified by the accurate "good"
    group) accepts 15% errors against a 5% target, by construction. Its own items certify
    nothing (brute force), so all of it must go to a person, each group and simultaneously."""
    good_y = np.arange(3000) % 100 != 0  # 1% wrong
    bad_y = np.arange(300) % 20 >= 3  # 15% wrong
    s = np.full(3300, 100.0)
    y = np.concatenate([good_y, bad_y])
    g = np.array(["good"] * 3000 + ["bad"] * 300)
    assert brute_fixed_sequence(s[g == "bad"], y[g == "bad"], 0.05, 0.05) is None
    assert brute_fixed_sequence(s, y, 0.05, 0.05)[0] == 100  # the pooled threshold accepts the bad group
    for simultaneous in (False, True):
        res = decision.per_group(rows_of(s, y, group=g), target=0.05, simultaneous=simultaneous)
        by = {x.group: x for x in res.groups}
        assert by["good"].threshold == 100 and by["good"].accepted == 3000
        assert by["bad"].threshold is None and by["bad"].accepted == 0 and by["bad"].errors == 0
        assert res.accepted == 3000 and res.accepted_pooled == 3300
        errors_accepted = sum(x.errors for x in res.groups)
        assert errors_accepted / res.accepted <= 0.05  # the error among all accepted items


def brute_fallback(score, y, alpha, delta, points=10, grid=None):
    """Wiens' (2003) fallback procedure written out from the rows: the thresholds that could
    be rejected at delta (strictest first; at most ``points``, evenly spaced in that order),
    equal weights delta / m, a rejected hypothesis passing its level to the next; returns
    the lowest threshold rejected."""
    grid = sorted(set(score.tolist())) if grid is None else grid
    ts = [t for t in sorted(grid, reverse=True) if (1 - alpha) ** int((score >= t).sum()) <= delta]
    if len(ts) > points:
        ts = [ts[i] for i in sorted({round(x) for x in np.linspace(0, len(ts) - 1, points)})]
    best, carry = None, 0.0
    for t in ts:
        level = delta / len(ts) + carry
        acc = score >= t
        if binom.cdf(int((~y[acc]).sum()), int(acc.sum()), alpha) <= level:
            best, carry = t, level
        else:
            carry = 0.0
    return best


def test_fallback_procedure_survives_a_top_value_worse_than_the_next():
    """Issue 22: a judge whose 100 is worse than its 95 never gets a threshold from the
    fixed sequence (it stops at 100). Constructed: 2,000 items at 100 with 8% wrong, 6,000
    at 95 with 2% wrong, 2,000 at 90 with 10% wrong: accepting at 95 has error 3.5% by
    construction. The fallback procedure (brute force above) certifies 95 and says so."""
    s = np.repeat([100.0, 95.0, 90.0], [2000, 6000, 2000])
    y = np.concatenate([np.arange(2000) % 25 >= 2, np.arange(6000) % 50 != 0, np.arange(2000) % 10 != 0])
    assert brute_fixed_sequence(s, y, 0.05, 0.05) is None
    assert brute_fallback(s, y, 0.05, 0.05) == 95
    fs = decision.recommend(rows_of(s, y), target=0.05)
    assert fs.threshold is None and fs.procedure == "fixed-sequence"
    fb = decision.recommend(rows_of(s, y), target=0.05, procedure="fallback")
    assert (fb.threshold, fb.accepted, fb.procedure) == (95, 8000, "fallback")
    assert fb.error_upper == pytest.approx(brute_upper(160 + 120, 8000, 0.95), rel=1e-9)
    assert "fallback" in fb.method and "fallback" in fb.message
    d = decision.decide(rows_of(s, y), target=0.05, procedure="fallback", reps=0).to_dict()
    assert d["recommendation"]["procedure"] == "fallback" and d["recommendation"]["threshold"] == 95


@pytest.mark.parametrize("seed", range(6))
def test_fallback_matches_brute_force(seed):
    s, y = discrete(seed, n=3000, slack=0.08)
    p, yc = continuous(seed, n=3000)
    for score, out, scale in ((s, y, S100), (p, yc, PROB)):
        grid = quantile_grid(score, 0.08) if np.unique(score).size > 101 else None
        got = decision.recommend(rows_of(score, out, scale=scale), target=0.08, procedure="fallback")
        assert got.threshold == brute_fallback(score, out, 0.08, 0.05, grid=grid)


def test_fallback_refusal_names_a_target_the_fallback_certifies():
    s, y = discrete(3, n=400, slack=0.2)
    r = decision.recommend(rows_of(s, y), target=0.02, procedure="fallback")
    assert r.threshold is None and r.loosest_target is not None
    at = round(r.loosest_target * 1000)
    assert brute_fallback(s, y, r.loosest_target, 0.05) is not None
    assert brute_fallback(s, y, (at - 1) / 1000, 0.05) is None
    with pytest.raises(CalibError, match="unknown procedure 'bonf'"):
        decision.recommend(rows_of(s, y), procedure="bonf")
    from calib.present.decision import decision_card, decision_lines

    s = np.repeat([100.0, 95.0, 90.0], [2000, 6000, 2000])
    y = np.concatenate([np.arange(2000) % 25 >= 2, np.arange(6000) % 50 != 0, np.arange(2000) % 10 != 0])
    d = decision.decide(rows_of(s, y), target=0.05, procedure="fallback", reps=0)
    assert "fallback procedure" in decision_card(d).guarantee
    assert any("thresholds tested: every distinct score (3); fallback" in line for line in decision_lines(d))


def test_cheapest_cost_interval_allows_for_picking_the_minimum():
    """Issue 22: the cheapest threshold's cost interval covered the population cost at the
    chosen threshold in 85.7% of datasets at n = 300 (the winner's curse of the minimum).
    Constructed: 11 stated values, every one right 80% of the time, a review costing 1 and
    a missed error 5, so every threshold costs exactly 1 per item in the population
    (1 = 5 x 20%). Over 60 fixed-seed datasets of 300 items the pointwise interval covers 1
    in 54 (90%); the simultaneous one must cover it in at least 57 (95%)."""
    values = np.linspace(0, 100, 11)
    cover = pointwise = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        n = rng.multinomial(300, np.full(11, 1 / 11))
        ch = decision.costs(from_counts(values, n, rng.binomial(n, 0.8), scale=S100), cost_review=1, cost_miss=5,
                            reps=400, seed=seed).cheapest
        cover += ch.cost.contains(1.0)
        pointwise += ch.cost_pointwise.contains(1.0)
        assert ch.cost.contains(ch.cost.value) and ch.cost.method == ch.cost_ci_method
        assert ch.to_dict()["cost_ci_method"].startswith("simultaneous over the 12 thresholds")
    assert pointwise <= 56 and cover >= 57


def test_simultaneous_interval_is_max_t_written_out():
    from calib.decision.costs import simultaneous_interval

    rng = np.random.default_rng(5)
    draws = rng.normal(size=(500, 4)) * [1.0, 2.0, 0.0, 0.5] + [3.0, 1.0, 2.0, 4.0]
    exact = np.array([3.0, 1.0, 2.0, 4.0])
    t = [max(abs(draws[r, j] - exact[j]) / draws[:, j].std() for j in (0, 1, 3)) for r in range(500)]
    q = np.quantile(t, 0.9)
    lo, hi = simultaneous_interval(draws, exact, 0.9)
    assert (lo, hi) == (pytest.approx(4 - q * draws[:, 3].std()), pytest.approx(4 + q * draws[:, 3].std()))
    assert simultaneous_interval(draws[:, [0, 1, 3, 2]], exact[[0, 1, 3, 2]], 0.9) == (2.0, 2.0)  # no spread


def test_continuous_refusal_names_the_strictest_target_on_its_grid():
    p, y = continuous(2, n=3000)
    r = decision.recommend(rows_of(p, y, scale=PROB), target=0.002)
    assert r.threshold is None and r.loosest_target is not None
    a = r.loosest_target
    assert brute_on_grid(p, y, a, 0.05, quantile_grid(p, a)) is not None
    b = round(a - 0.001, 3)
    assert brute_on_grid(p, y, b, 0.05, quantile_grid(p, b)) is None


def test_every_resample_reviewing_everything_is_said_not_dropped():
    """A miss costing 1,000 reviews: every resample's cheapest choice is to review
    everything, so the threshold's interval has no finite end. With resamples the text
    and the notebook say so; without resamples there is no interval to show."""
    from calib.present.decision import cost_text, threshold_interval
    from calib.present.notebook import decision_html

    # two stated values, half wrong at each: a resample with no wrong answer at a value has
    # probability 2^-100; with one, accepting costs 1,000 against 0.01 per item reviewed
    s, y = np.repeat([80.0, 90.0], 100), np.tile([True, False], 100)
    both = "[review everything, review everything]"
    got = decision.costs(rows_of(s, y), cost_review=0.01, cost_miss=1000, reps=100, seed=2).cheapest
    assert got.threshold is None and got.threshold_ci == (None, None) and got.compared > 0
    assert f"the cheapest threshold's interval {both}" in cost_text(got)
    bare = decision.costs(rows_of(s, y), cost_review=0.01, cost_miss=1000, reps=0).cheapest
    assert threshold_interval(bare.threshold_ci, bare.compared > 0) == "" and "interval [" not in cost_text(bare)
    d = decision.decide(rows_of(s, y), target=0.1, cost_review=0.01, cost_miss=1000, reps=100, seed=2)
    assert f"(threshold {both})" in decision_html(d.to_dict())
    # one end finite: the other end is "review everything"
    assert threshold_interval((90.0, None), True) == "[90, review everything]"
