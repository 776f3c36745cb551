"""The failure-prediction figures (AUPRC for errors, PRR, accuracy at coverage) and the
cumulative-differences calibration test against independent implementations:
scikit-learn's average precision, per-row brute force over every tie order, the
statistic by hand, and the Brownian-motion distributions by simulation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from calib import metrics as m
from calib.decision.aurc import aurc_from_cells
from calib.estimates import PERCENTILE, Estimate
from calib.rows import Judgments
from calib.scale import Scale
from calib.table import from_judgments

PCT = Scale(0.0, 100.0, "0-100")
PROB = Scale(0.0, 1.0, "0-1")


def table(v: np.ndarray, y: np.ndarray, scale: Scale = PCT):  # type: ignore[no-untyped-def]
    n = v.size
    return from_judgments(Judgments(stated=np.asarray(v, dtype=float), prob=scale.to_prob(np.asarray(v, dtype=float)),
                                    correct=np.asarray(y, dtype=bool), line=np.arange(1, n + 1),
                                    item_id=np.full(n, ""), scale=scale))


def few_values(seed: int, n: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """A judge stating few values (heavy ties), 0-100."""
    rng = np.random.default_rng(seed)
    v = rng.choice([30.0, 60.0, 80.0, 90.0, 95.0, 100.0], size=n, p=[.05, .1, .2, .25, .3, .1])
    return v, rng.random(n) < 0.2 + 0.7 * v / 100


def continuous(seed: int, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.beta(5, 2, size=n)
    return p, rng.random(n) < p


# ------------------------------------------------------------------ AUPRC for errors
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auprc_errors_matches_sklearn_with_ties_and_without(seed: int) -> None:
    v, y = few_values(seed)
    assert m.auprc_errors(table(v, y)) == pytest.approx(average_precision_score(~y, -v), rel=1e-12)
    p, y2 = continuous(seed)
    assert m.auprc_errors(table(p, y2, PROB)) == pytest.approx(average_precision_score(~y2, -p), rel=1e-12)


def test_auprc_errors_undefined_without_a_wrong_answer() -> None:
    assert m.auprc_errors(table(np.array([80.0, 90.0]), np.array([True, True]))) is None


# ------------------------------------------------------------------ PRR
def brute_aurc(y_in_order: np.ndarray) -> float:
    """Mean over k of the error rate of the first k answers of one order."""
    return float(np.mean([np.mean(~y_in_order[:k]) for k in range(1, y_in_order.size + 1)]))


def brute_prr(v: np.ndarray, y: np.ndarray, orders: int | None = None, seed: int = 0) -> float:
    """PRR from its definition: the AURC averaged over every order of the tied answers
    (``orders``: that many random orders instead), chance ``W / N``, the oracle's order."""
    idx = np.arange(v.size)
    if orders is None:
        perms = list(itertools.permutations(idx))
    else:
        rng = np.random.default_rng(seed)
        perms = [rng.permutation(idx) for _ in range(orders)]
    # np.argsort with kind="stable" keeps each permutation's order inside a tie
    aurc = float(np.mean([brute_aurc(y[np.asarray(p)][np.argsort(-v[np.asarray(p)], kind="stable")])
                          for p in perms]))
    e = float(np.mean(~y))
    oracle = brute_aurc(np.sort(~y) == 0)  # every right answer first
    return (e - aurc) / (e - oracle)


def test_prr_matches_brute_force_over_every_tie_order() -> None:
    v = np.array([90.0, 90.0, 90.0, 80.0, 80.0, 95.0, 90.0])
    y = np.array([True, False, True, False, True, True, False])
    assert m.prr(table(v, y)) == pytest.approx(brute_prr(v, y), rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_prr_matches_brute_force_on_random_data(seed: int) -> None:
    p, y = continuous(seed, 200)  # no ties: one order
    assert m.prr(table(p, y, PROB)) == pytest.approx(brute_prr(p, y, orders=1), rel=1e-10)
    # without ties the AURC under it is calib.decision's, computed there by another route
    t = table(p, y, PROB)
    assert float(m.aurc_batch(m.CellStats.of(t))[0]) == pytest.approx(float(aurc_from_cells(t.n, t.wrong)))
    v, y2 = few_values(seed, 120)  # heavy ties: the mean over 300 random tie orders
    assert m.prr(table(v, y2)) == pytest.approx(brute_prr(v, y2, orders=300, seed=seed), abs=0.01)


def test_prr_ends_oracle_chance_and_one_value() -> None:
    y = np.array([True] * 6 + [False] * 4)
    assert m.prr(table(np.where(y, 90.0, 40.0), y)) == pytest.approx(1.0)
    assert m.prr(table(np.full(10, 70.0), y)) == pytest.approx(0.0, abs=1e-12)
    assert m.prr(table(np.where(y, 40.0, 90.0), y)) < 0
    assert m.prr(table(np.full(3, 70.0), np.array([True] * 3))) is None
    # the oracle's own ordering, ten wrong at 0 and ten right at 100: 1, not 1 + 7e-16
    y20 = np.array([False] * 10 + [True] * 10)
    assert m.prr(table(np.where(y20, 100.0, 0.0), y20)) <= 1.0


# ------------------------------------------------------------------ accuracy at coverage
def brute_accuracy_at(v: np.ndarray, y: np.ndarray, c: float) -> float:
    """Mean, over every order of the tied answers, of the accuracy of the top c*N (c*N integer)."""
    k = round(c * v.size)
    accs = []
    for perm in itertools.permutations(range(v.size)):
        order = sorted(perm, key=lambda i: -v[i])  # stable: ties in the permutation's order
        accs.append(np.mean(y[order[:k]]))
    return float(np.mean(accs))


def test_accuracy_at_coverage_is_the_mean_over_tie_orders() -> None:
    v = np.array([90.0, 90.0, 90.0, 80.0, 80.0, 95.0, 90.0])
    y = np.array([True, False, True, False, True, True, False])
    s = m.CellStats.of(table(v, y))
    for c in (2 / 7, 3 / 7, 6 / 7):
        assert float(m.accuracy_at_coverage_batch(s, c)[0][0]) == pytest.approx(brute_accuracy_at(v, y, c))
    rows = m.accuracy_at_coverage(table(v, y), coverages=(3 / 7, 5 / 7))
    # top 3 of 7: the 95 and two of the four answers at 90 (a split tie); top 5: no split
    assert [(r.value, r.split) for r in rows] == [(90.0, 4), (90.0, 0)]


def test_accuracy_at_coverage_without_ties_is_the_top_share() -> None:
    p, y = continuous(3, 200)
    top = np.argsort(-p)[:20]
    rows = m.accuracy_at_coverage(table(p, y, PROB), coverages=(0.1,))
    assert rows[0].accuracy.value == pytest.approx(float(np.mean(y[top])))
    assert rows[0].split == 0 and not rows[0].accuracy.has_interval
    # the interval is the audit's estimate's, the figure this table's
    given = {m.coverage_key(0.1): Estimate(None, 0.5, 0.9, 0.9, PERCENTILE)}
    acc = m.accuracy_at_coverage(table(p, y, PROB), given, coverages=(0.1,))[0].accuracy
    assert acc == Estimate(rows[0].accuracy.value, 0.5, 0.9, 0.9, PERCENTILE)


# ------------------------------------------------------------------ cumulative differences
def by_hand(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Kuiper and KS of the cumulative differences, read after the last answer of each
    stated value, by an explicit loop over the sorted answers."""
    order = np.argsort(p, kind="stable")
    c, path = 0.0, [0.0]
    for i, j in enumerate(order):
        c += (float(y[j]) - float(p[j])) / p.size
        if i == p.size - 1 or p[order[i + 1]] != p[j]:
            path.append(c)
    return max(path) - min(path), max(abs(x) for x in path)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cumulative_differences_statistic_by_hand(seed: int) -> None:
    v, y = few_values(seed, 400)
    v = np.minimum(v, 95.0)  # no answer at 100: the test is not decided in advance
    r = m.cumulative_differences(table(v, y))
    ku, ks = by_hand(v / 100, y)
    assert (r.kuiper, r.ks) == (pytest.approx(ku, abs=1e-12), pytest.approx(ks, abs=1e-12))
    sigma = math.sqrt(np.sum(v / 100 * (1 - v / 100))) / v.size
    assert r.sigma == pytest.approx(sigma)
    assert r.kuiper_test.statistic == pytest.approx(ku / sigma)
    p, y2 = continuous(seed, 300)
    r = m.cumulative_differences(table(p, y2, PROB))
    assert (r.kuiper, r.ks) == (pytest.approx(by_hand(p, y2)[0], abs=1e-12), pytest.approx(by_hand(p, y2)[1], abs=1e-12))
    # the path the figure draws ends at the overall residual, mean y - mean p
    assert r.path[-1] == pytest.approx(np.mean(y2) - np.mean(p)) and r.share[-1] == pytest.approx(1.0)


def test_brownian_references_against_simulated_walks() -> None:
    rng = np.random.default_rng(7)
    steps = rng.standard_normal((4000, 2000)) / math.sqrt(2000)
    c = np.cumsum(steps, axis=1)
    hi, lo = np.maximum(c.max(axis=1), 0), np.minimum(c.min(axis=1), 0)
    # a walk's maximum falls short of the motion's by 0.5826 / sqrt(steps) on average
    # (Siegmund 1985, sect. X.3): the walks are read that much lower per extreme
    shift = 0.5826 / math.sqrt(2000)
    for x in (1.5, 2.2, 3.0):
        assert math.exp(m.brownian_range_logsf(x)) == pytest.approx(np.mean(hi - lo >= x - 2 * shift), abs=0.015)
        assert math.exp(m.brownian_max_abs_logsf(x)) == pytest.approx(np.mean(np.maximum(hi, -lo) >= x - shift),
                                                                      abs=0.015)
    # the means by the closed forms (Feller 1951): E range = 2 sqrt(2 / pi), E max |B| = sqrt(pi / 2)
    xs = np.linspace(1e-3, 12, 6000)
    dx = xs[1] - xs[0]
    assert sum(math.exp(m.brownian_range_logsf(x)) for x in xs) * dx == pytest.approx(2 * math.sqrt(2 / math.pi), abs=5e-3)
    assert sum(math.exp(m.brownian_max_abs_logsf(x)) for x in xs) * dx == pytest.approx(math.sqrt(math.pi / 2), abs=5e-3)


@pytest.mark.parametrize("kind", ["few values", "continuous"])
def test_cumulative_differences_holds_its_level_on_calibrated_data(kind: str) -> None:
    """Fixed-seed miniature of bench/sim_failure_prediction.py: 5% rejections on 200
    calibrated datasets (Monte Carlo path for a stated scale, Brownian for continuous)."""
    rng = np.random.default_rng(11)
    rejections = 0
    for i in range(200):
        if kind == "few values":
            v = rng.choice([30.0, 60.0, 80.0, 90.0, 95.0], size=300, p=[.1, .2, .3, .2, .2])
            t = table(v, rng.random(v.size) < v / 100)
        else:
            p = rng.beta(4, 2, size=2500)
            t = table(p, rng.random(p.size) < p, PROB)
        rejections += bool(m.cumulative_differences(t, seed=i).kuiper_test.rejects(0.05))
    # binomial(200, 0.05): 2 to 19 rejections hold 99.8% of the mass
    assert 2 <= rejections <= 19


def test_cumulative_differences_sees_overconfidence_symmetric_around_half() -> None:
    rng = np.random.default_rng(3)
    v = rng.choice([10.0, 30.0, 70.0, 90.0], size=1500)
    y = rng.random(v.size) < 0.5 + 0.6 * (v / 100 - 0.5)  # stated 90 means 74%, stated 10 means 26%
    r = m.cumulative_differences(table(v, y))
    assert r.kuiper_test.p_value is not None and r.kuiper_test.p_value < 0.01


# ------------------------------------------------------------------ audit, CLI, text, figure
def test_calib_audit_json_carries_the_figures(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from sklearn.metrics import roc_auc_score

    from tests.cli_run import run_json

    v, y = few_values(5, 400)
    v = np.minimum(v, 95.0)
    path = tmp_path / "judge.jsonl"
    path.write_text("".join(f'{{"confidence": {a:g}, "correct": {str(b).lower()}}}\n' for a, b in zip(v, y, strict=True)))
    d = run_json(["audit", str(path), "--json", "--reps", "200"], capsys)
    assert d["auprc_errors"] == pytest.approx(average_precision_score(~y, -v))
    lo, hi = d["auprc_errors_ci"]
    assert lo <= d["auprc_errors"] <= hi and d["auprc_errors_baseline"] == pytest.approx(np.mean(~y))
    assert d["prr"] == pytest.approx(brute_prr(v, y, orders=200), abs=0.02)
    assert d["auroc"] == pytest.approx(roc_auc_score(y, v))
    assert [r["coverage"] for r in d["accuracy_at_coverage"]] == list(m.COVERAGES)
    for r in d["accuracy_at_coverage"]:
        assert r["ci"][0] <= r["accuracy"] <= r["ci"][1]
    cd = d["cumulative_differences"]
    assert cd["kuiper"] == pytest.approx(by_hand(v / 100, y)[0]) and 0 < cd["kuiper_p"] <= 1
    assert set(cd["tests"]) == {"kuiper", "ks"}


def test_text_report_and_figure_show_the_audit_s_figures() -> None:
    from calib.audit import audit
    from calib.present.failure import cumulative_figure
    from calib.present.text_report import render_text

    v, y = few_values(6, 300)
    a = audit(table(np.minimum(v, 95.0), y), reps=0, name="j")
    text = render_text(a)
    assert "AUPRC for errors" in text and "PRR" in text and "Right among top 10%" in text
    assert "Cumulative differences (no bins): Kuiper" in text
    assert a.failure is not None
    fig = cumulative_figure(a.failure.cumulative, name="j", color="#000000")
    path = next(t for t in fig.data if t.name == "j")
    np.testing.assert_allclose(path.y, 100 * a.failure.cumulative.path)
    band = next(t for t in fig.data if "band" in (t.name or ""))
    assert band.y[0] == pytest.approx(100 * 2.2414 * a.failure.cumulative.sigma, rel=1e-4)
    # the axis holds the path, the band and zero, and they fill most of it (a symmetric axis left half empty)
    lo, hi = fig.layout.yaxis.range
    ext = (min(*path.y, *band.y, 0.0), max(*path.y, *band.y, 0.0))
    assert lo <= ext[0] and hi >= ext[1] and (ext[1] - ext[0]) / (hi - lo) > 0.85


def test_overview_and_reliability_pages_show_the_figures() -> None:
    from tests.test_app import JUDGE, app, judge_rows, ok

    rows = judge_rows()
    v = np.array([s for s, _ in rows], dtype=float)
    y = np.array([c for _, c in rows], dtype=bool)
    at = app()
    at.query_params.update({"sample": JUDGE, "reps": "0"})
    at.switch_page("pages/1_Overview.py")
    ok(at.run())
    df = at.dataframe[-1].value
    assert df["figure"][0].startswith("AUROC") and df["figure"][1].startswith("AUPRC for errors")
    assert df["value"][1] == f"{average_precision_score(~y, -v):.3f}"
    at.switch_page("pages/3_Reliability.py")
    ok(at.run())
    assert "Cumulative differences (no bins)" in [h.value for h in at.subheader]
    assert any("Kuiper" in c.value for c in at.caption)
