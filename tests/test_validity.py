"""The tests are valid under the null and worded from what was computed.

Fixed-seed miniatures of the cases that went wrong before (each fails on the code
before issue 9: tests clipped to [0.5/101, 100.5/101], chi-square on sparse cells,
Monte Carlo floors printed as exact, negative claims from missing intervals), and
checks of the p-values against independent computations: the exact Poisson-binomial
distribution (a convolution of binomials, scipy), brute-force enumeration, scipy's
Mann-Whitney test and a per-row simulation written here. The rejection rates
themselves are measured by ``bench/sim_tests.py``."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import binom, chi2, mannwhitneyu, norm

from calib import compare, maps, routing
from calib import metrics as m
from calib.audit import CALIBRATION_TESTS, audit, miscalibrated
from calib.estimates import Estimate
from calib.present.format import p_value as fmt_p
from calib.present.tables import comparison_table
from calib.rows import Judgments
from calib.scale import PROBABILITY, Scale, finite_prob, scale_steps
from calib.table import from_counts, from_judgments

PCT = Scale(0.0, 100.0, "0-100")


def rows(p: np.ndarray, y: np.ndarray, scale: Scale = PROBABILITY) -> Judgments:
    v = scale.to_stated(p)
    return Judgments(stated=v, prob=np.asarray(p, dtype=float), correct=np.asarray(y, dtype=bool),
                     line=np.arange(1, p.size + 1), item_id=np.full(p.size, ""), scale=scale)


def softmax(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Near-1 softmax confidences ``1 - 10^-U``, U ~ Uniform[1, 5], drawn calibrated."""
    rng = np.random.default_rng(seed)
    p = 1 - 10.0 ** -rng.uniform(1, 5, n)
    return p, rng.random(n) < p


def honest100(seed: int, n: int):  # type: ignore[no-untyped-def]
    """30% stated 100 and always right, the rest a calibrated integer 0-99 judge."""
    rng = np.random.default_rng(seed)
    v = np.where(rng.random(n) < 0.3, 100.0, np.minimum(np.rint(100 * rng.beta(5, 2, n)), 99.0))
    y = rng.random(n) < v / 100
    vals, inv = np.unique(v, return_inverse=True)
    return from_counts(vals, np.bincount(inv), np.bincount(inv, weights=y).astype(int), scale=PCT)


def verdict_tests(t):  # type: ignore[no-untyped-def]
    return {"calibration_in_the_large": m.calibration_in_the_large(t), "goodness_of_fit": m.goodness_of_fit(t),
            "cox_lr": m.cox(t).test}


# ------------------------------------------------------- calibrated data is not rejected
def test_a_table_whose_hit_rates_equal_its_values_is_not_miscalibrated() -> None:
    # every value's hit rate is the value exactly; 100 -> 6,000 of 6,000 (was: "too bunched, Cox slope 1.22")
    v = np.arange(0.0, 101.0, 10.0)
    n = np.where(v == 100, 6000, 100)
    t = from_counts(v, n, (n * v / 100).astype(int), scale=PCT)
    a = audit(t, reps=0)
    assert m.ece(t) == 0.0
    assert a.miscalibrated is False, a.verdict
    assert not any(s.startswith("Miscalibrated") for s in a.verdict)
    for k in CALIBRATION_TESTS:
        assert a.tests[k].p_value > 0.99, a.tests[k]
    assert a.cox.slope.value == pytest.approx(1.0, abs=1e-6) and a.cox.intercept.value == pytest.approx(0.0, abs=1e-6)
    assert "6,100 answers stated at 0 or 100 carry no information" in a.cox.note


@pytest.mark.parametrize("seed", [5])
def test_near_one_softmax_confidences_drawn_calibrated_are_not_rejected(seed: int) -> None:
    # the code before clipped every p above 0.995 down to it: CITL p = 0.005, Cox p = 0.001 here
    t = from_judgments(rows(*softmax(seed, 5000)))
    tests = verdict_tests(t)
    for k, test in tests.items():
        assert test.p_value > 0.05, (k, test)
    assert miscalibrated(tests, 0.95) is False
    c = m.cox(t)
    assert c.slope.lo < 1 < c.slope.hi


def test_honest_answers_at_100_are_not_rejected() -> None:
    # the code before read a stated 100 as 0.995: Cox p = 0.002 at this seed
    t = honest100(5, 5000)
    tests = verdict_tests(t)
    assert min(x.p_value for x in tests.values()) > 0.05, tests
    assert miscalibrated(tests, 0.95) is False


def test_a_wrong_answer_at_100_is_impossible_and_said_so() -> None:
    t = from_counts(np.array([90.0, 100.0]), np.array([100, 400]), np.array([90, 399]), scale=PCT)
    for test in verdict_tests(t).values():
        assert test.p_value == 0.0 and test.log10_p is None
        assert "1 wrong answer stated at 100: impossible if the stated probabilities were the truth" in test.note
    a = audit(t, reps=0)
    assert a.miscalibrated is True
    assert any("1 wrong answer stated at 100, which a calibrated judge never does" in s for s in a.verdict)
    assert "p=0" in "\n".join(a.verdict)
    json.dumps(a.to_dict(), allow_nan=False)


def test_exact_and_pooled_tables_give_the_same_variance() -> None:
    # sum p (1 - p) = sum p - sum p^2 from the cell sums: a pooled cell at 1.000 has variance, not 0
    p, y = softmax(2, 3000)
    exact, pooled = from_judgments(rows(p, y)), from_judgments(rows(p, y), pool=True)
    assert pooled.pooled and pooled.cells < exact.cells
    z = (y.sum() - p.sum()) / math.sqrt(np.sum(p * (1 - p)))
    assert m.calibration_in_the_large(exact).statistic == pytest.approx(z, rel=1e-9)
    assert m.calibration_in_the_large(pooled).statistic == pytest.approx(z, rel=1e-9)


# ------------------------------------------------ p-values against independent computations
def poisson_binomial_pmf(n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """pmf of the sum of independent Binomial(n_c, p_c), by convolution."""
    pmf = np.array([1.0])
    for nc, pc in zip(n, p, strict=True):
        pmf = np.convolve(pmf, binom.pmf(np.arange(nc + 1), nc, pc))
    return pmf


def test_calibration_in_the_large_is_the_exact_poisson_binomial_tail() -> None:
    v, n, k = np.array([90.0, 95.0, 99.0]), np.array([10, 20, 30]), np.array([8, 18, 26])
    t = from_counts(v, n, k, scale=PCT)
    test = m.calibration_in_the_large(t)
    assert "Monte Carlo" in test.note  # 2.2 wrong answers expected: far from normal
    pmf = poisson_binomial_pmf(n, v / 100)
    e = float(np.sum(n * v / 100))
    dev = np.abs(np.arange(pmf.size) - e)
    exact = pmf[dev >= abs(k.sum() - e) - 1e-9].sum()
    se = math.sqrt(exact * (1 - exact) / m.NULL_DRAWS)
    assert test.p_value == pytest.approx(exact, abs=4 * se + 1 / m.NULL_DRAWS)


def test_goodness_of_fit_by_brute_force_enumeration() -> None:
    v, n, k = np.array([95.0, 99.0]), np.array([3, 4]), np.array([2, 4])
    t = from_counts(v, n, k, scale=PCT)
    p = v / 100
    e, var = n * p, n * p * (1 - p)
    obs = float(np.sum((k - e) ** 2 / var))
    exact = 0.0
    for k1, k2 in itertools.product(range(4), range(5)):
        x2 = (k1 - e[0]) ** 2 / var[0] + (k2 - e[1]) ** 2 / var[1]
        if x2 >= obs - 1e-9:
            exact += binom.pmf(k1, 3, p[0]) * binom.pmf(k2, 4, p[1])
    g = m.goodness_of_fit(t, "values")
    assert g.statistic == pytest.approx(obs, rel=1e-12) and "Monte Carlo" in g.note
    assert g.p_value == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / m.NULL_DRAWS) + 1e-3)


def test_goodness_of_fit_on_a_sparse_table_of_more_than_101_cells_is_monte_carlo() -> None:
    # 300 distinct values, 2 answers each: the chi-square reference is far off (the code
    # before used it beyond 101 cells); a per-row simulation written here is the reference
    rng = np.random.default_rng(8)
    p = np.repeat(np.round(rng.uniform(0.5, 0.999, 300), 6), 2)
    y = rng.random(p.size) < p
    t = from_judgments(rows(p, y))
    assert t.cells == 300
    g = m.goodness_of_fit(t, "values")
    assert "Monte Carlo" in g.note and g.df == 300
    vals, inv = np.unique(p, return_inverse=True)
    e, var = np.bincount(inv, weights=p), np.bincount(inv, weights=p * (1 - p))
    obs = np.sum((np.bincount(inv, weights=y) - e) ** 2 / var)
    assert g.statistic == pytest.approx(obs, rel=1e-9)
    sims = rng.random((4000, p.size)) < p
    ks = np.stack([np.bincount(inv, weights=s, minlength=vals.size) for s in sims])
    ref = (1 + np.sum(np.sum((ks - e) ** 2 / var, axis=1) >= obs)) / 4001
    assert g.p_value == pytest.approx(ref, abs=5 * math.sqrt(ref * (1 - ref) / 4000))
    assert abs(g.p_value - chi2.sf(obs, 300)) > 0.02  # the chi-square p-value would be wrong here


def test_cox_monte_carlo_with_few_wrong_answers_and_chi_square_beyond() -> None:
    p, y = softmax(3, 400)  # ~4 wrong answers expected
    c = m.cox(from_judgments(rows(p, y)))
    assert "Monte Carlo" in c.test.note and 0 < c.test.p_value <= 1
    p, y = softmax(3, 20000)
    c = m.cox(from_judgments(rows(p, y)))
    assert c.test.note == "" and c.test.df == 2
    assert c.test.p_value == pytest.approx(chi2.sf(c.test.statistic, 2), rel=1e-9)


# -------------------------------------------------------------------------- p-values
def test_a_monte_carlo_floor_is_a_bound_not_an_exact_log10_p() -> None:
    t = from_counts(np.array([99.0]), np.array([50]), np.array([40]), scale=PCT)  # 0.5 wrong expected, 10 seen
    test = m.calibration_in_the_large(t)
    assert test.p_bound and test.log10_p is None
    assert test.p_value == 1 / (m.NULL_DRAWS + 1)
    assert fmt_p(test.p_value, test.log10_p, bound=test.p_bound) == "p<=2e-04"
    assert json.loads(json.dumps(test.to_dict(), allow_nan=False))["log10_p"] is None


def test_where_the_chi_square_is_valid_its_far_tail_is_used() -> None:
    # 10 values with 1,000 answers each, each 8 points overconfident: X2 in the hundreds
    v = np.arange(50.0, 100.0, 5.0)
    n = np.full(v.size, 1000)
    k = np.rint(n * (v / 100 - 0.08)).astype(int)
    g = m.goodness_of_fit(from_counts(v, n, k, scale=PCT), "values")
    assert "Monte Carlo" not in g.note and not g.p_bound and g.df == 10
    assert g.log10_p == pytest.approx(chi2.logsf(g.statistic, g.df) / math.log(10), rel=1e-9)
    assert g.log10_p < -90


# ------------------------------------------------------------------------- the wording
def test_without_resamples_the_ranking_is_worded_from_the_mann_whitney_test() -> None:
    t = from_counts(np.array([85.0, 90.0, 95.0, 100.0]), np.array([60, 10, 878, 52]),
                    np.array([34, 7, 694, 48]), scale=PCT)
    a = audit(t, reps=0)
    text = "\n".join(a.verdict)
    assert "does not rank answers better than chance" not in text  # what the code before said
    assert "The number ranks answers: AUROC 0.56, Mann-Whitney p=" in text
    assert "no interval without resamples" in text
    # the test is scipy's Mann-Whitney U with the tie correction
    s = np.repeat(t.value, t.n)
    yy = np.concatenate([np.r_[np.ones(k), np.zeros(n - k)] for n, k in zip(t.n, t.correct, strict=True)]) > 0
    ref = mannwhitneyu(s[yy], s[~yy], method="asymptotic", use_continuity=False)
    assert a.tests["auroc_vs_chance"].p_value == pytest.approx(ref.pvalue, rel=1e-9)


def test_the_overview_line_and_the_verdict_word_one_ranking_decision() -> None:
    """Issue 23: "does the number rank answers" was decided twice. Without resamples the
    verdict used the Mann-Whitney test (p < 0.05: it ranks) while the Overview's line,
    finding no interval, said "It hardly tells right from wrong"."""
    from calib.present.questions import ranking_line
    from calib.verdict import ranks

    t = from_counts(np.array([85.0, 90.0, 95.0, 100.0]), np.array([60, 10, 878, 52]),
                    np.array([34, 7, 694, 48]), scale=PCT)
    a = audit(t, reps=0)
    assert ranks(a) == "ranks"
    assert ranking_line(a).startswith("It tells right from wrong")
    assert any(s.startswith("The number ranks answers:") for s in a.verdict)
    flat = audit(from_counts(np.array([80.0]), np.array([20]), np.array([15]), scale=PCT), reps=0)
    assert ranks(flat) is None and "cannot be told" in ranking_line(flat)


def test_spiegelhalter_note_names_its_real_blind_spots() -> None:
    # 90 meaning 70% with 60 meaning 95%: cancels in Spiegelhalter's sum
    t = from_counts(np.array([60.0, 90.0]), np.array([1600, 700]), np.array([1520, 490]), scale=PCT)
    notes = "\n".join(audit(t, reps=0).notes)
    assert "blind when every stated probability is 0, 0.5 or 1" in notes
    assert "symmetrically around 0.5" not in notes.replace("Calibration-in-the-large is the test blind", "")
    # symmetric overconfidence: Spiegelhalter sees it, calibration-in-the-large does not
    t = from_counts(np.array([10.0, 90.0]), np.array([500, 500]), np.array([150, 350]), scale=PCT)
    assert m.spiegelhalter(t).p_value < 1e-10
    assert m.calibration_in_the_large(t).p_value > 0.5


def test_compare_and_audit_decide_the_brier_winner_by_the_same_test() -> None:
    # the constant has the lower Brier score, but not significantly (p = 0.45)
    t = from_counts(np.array([0.8036, 0.95]), np.array([196, 204]), np.array([78, 193]), scale=PROBABILITY)
    bt = m.brier_vs_constant(t)
    assert m.brier(t) > m.brier_base_rate(t) and 0.3 < bt.p_value < 0.6
    row = compare.model_row("m", t, reps=0)
    assert row.brier_winner == "neither" and row.constant_wins is None
    cell = comparison_table(compare.compare({"m": t}, reps=0)).iloc[0]["Brier vs constant"]
    assert "constant wins" not in cell and "no clear winner" in cell
    assert any("The stated confidence does no better than the constant" in s for s in audit(t, reps=0).verdict)


def test_the_wilson_bound_of_the_threshold_choice_is_one_sided() -> None:
    rng = np.random.default_rng(4)
    v = rng.choice(np.arange(50.0, 101.0, 5.0), 2000)
    y = rng.random(v.size) < v / 100
    b = routing.basis(from_judgments(rows(v / 100, y, PCT)))
    choice = routing.lowest_threshold(b, 0.1, bound="wilson", level=0.95)
    acc = v >= choice.threshold
    nacc, err = int(acc.sum()), int((~y[acc]).sum())
    # one-sided 95% Wilson upper bound: the larger root of (e/n - p)^2 = z^2 p (1 - p) / n, z = z_0.95
    z, ph = norm.isf(0.05), err / nacc
    upper = (ph + z * z / (2 * nacc) + z * math.sqrt(ph * (1 - ph) / nacc + z * z / (4 * nacc * nacc))) / (
        1 + z * z / nacc)
    assert choice.risk_upper == pytest.approx(upper, rel=1e-9)
    assert "one-sided upper 95% bound" in choice.message


# -------------------------------------------------------------- the continuity correction
def test_the_correction_on_0_1_follows_the_resolution_of_the_values() -> None:
    # a judge writing hundredths on 0-1 is read as one stating 0-100
    assert scale_steps(PROBABILITY, np.array([0.5, 0.95, 1.0])) == 100
    assert finite_prob(0.95, PROBABILITY, steps=100) == pytest.approx(finite_prob(95.0, PCT), rel=1e-15)
    assert scale_steps(PROBABILITY, np.array([0.955, 1.0])) == 1000
    # continuous probabilities are left as they are (to 1e-12): nothing above 0.995 is squeezed
    p, _ = softmax(0, 1000)
    m_ = scale_steps(PROBABILITY, p)
    assert m_ == 1e12
    assert np.allclose(finite_prob(p, PROBABILITY, steps=m_), p, rtol=0, atol=1e-12)
    assert finite_prob(1.0, PROBABILITY, steps=m_) > p.max()


def test_platt_on_calibrated_softmax_probabilities_keeps_them_apart() -> None:
    p, y = softmax(1, 20000)
    cmap = maps.fit_map(from_judgments(rows(p, y)), "platt")
    assert cmap.steps == 1e12
    q = cmap.apply_prob(np.array([0.999, 0.9999, 0.99999]))
    # the code before read all three as ~0.995 and mapped them within 1e-3 of each other
    assert np.all(np.diff(q) > 0) and 1 - q[2] < 1e-4
    slope, icpt = cmap.params["slope"], cmap.params["intercept"]
    assert q[1] == pytest.approx(expit(slope * math.log(0.9999 / 0.0001) + icpt), rel=1e-12)
    back = maps.CalibrationMap.from_dict(json.loads(cmap.to_json()))
    assert back.steps == cmap.steps and np.allclose(back.apply_prob(np.array([0.9999])), q[1])


def test_the_null_simulation_groups_many_cells_without_changing_their_variance() -> None:
    # beyond NULL_CELLS cells, cells of one bin are drawn in groups of width 0.01 in logit:
    # each bin's binomial variance stays within 1e-4 of its cells' Poisson-binomial one
    p, y = softmax(4, 6000)
    t = from_judgments(rows(p, y))
    ids = m.bin_index(t, "width", 10)
    gb, ng, pg = m.null_groups(t, ids)
    assert t.cells > m.NULL_CELLS and ng.size < t.cells and ng.sum() == t.total
    for b in np.unique(gb):
        inb = ids == b
        want = np.sum(t.n[inb] * t.prob[inb] * (1 - t.prob[inb]))
        got = np.sum((ng * pg * (1 - pg))[gb == b])
        assert got == pytest.approx(want, rel=1e-4)
        assert np.sum((ng * pg)[gb == b]) == pytest.approx(np.sum((t.n * t.prob)[inb]), rel=1e-12)


def test_cox_on_a_continuous_overconfident_judge_is_estimated_not_called_separated() -> None:
    """A warm Newton start that runs off to a saturated, singular point once made the Cox
    fit of 20,000 continuous confidences "not estimable" (intercept and slope null, LR
    p = 1) although the slope is clearly 0.11; the fit is now refitted from a cold start and
    equals scikit-learn's unpenalised logistic regression of the outcome on logit(p)."""
    from sklearn.linear_model import LogisticRegression

    from calib.audit import audit
    from calib.rows import Judgments
    from calib.scale import PROBABILITY
    from calib.table import from_judgments

    rng = np.random.default_rng(2)
    n = 20_000
    skill = rng.beta(5, 2, n)
    right = rng.random(n) < skill
    p = np.round(np.clip(0.55 + 0.5 * skill + rng.normal(0, 0.05, n), 0.25, 0.9999999), 7)
    table = from_judgments(Judgments(stated=p, prob=p, correct=right, line=np.arange(1, n + 1),
                                      item_id=np.array([f"q{i}" for i in range(n)], dtype=object),
                                      scale=PROBABILITY))
    d = audit(table, reps=0).to_dict()
    x = np.log(p / (1 - p))
    ref = LogisticRegression(C=np.inf, tol=1e-12, max_iter=1000).fit(x[:, None], right)
    assert d["cox"]["intercept"] == pytest.approx(ref.intercept_[0], abs=1e-6)
    assert d["cox"]["slope"] == pytest.approx(ref.coef_[0, 0], abs=1e-6)
    assert d["tests"]["cox_lr"]["p_value"] < 1e-10


# -------------------------------------------------------------- the paired Brier test's direction
def hall_z(d: np.ndarray) -> float:
    """Hall's (1992) monotone skewness-corrected t from the rows: with ``W = dbar / s`` and
    ``g = m3 / s^3``, ``sqrt(N) ((1 + g W / 3)^3 - 1) / g + g / (6 sqrt N)``."""
    n, s = d.size, d.std(ddof=1)
    w, g = d.mean() / s, np.mean((d - d.mean()) ** 3) / s**3
    return math.sqrt(n) * (((1 + g * w / 3) ** 3 - 1) / g + g / (6 * n))


def test_the_paired_brier_test_points_the_way_of_the_brier_difference() -> None:
    # issue 22: 80 meaning 55% and 99 meaning 99%, n = 1,000; the stated confidence has the
    # lower Brier score by 0.021, yet Johnson's correction (quadratic in the mean difference)
    # gave z = +16.7, p = 1e-62 and "the constant beats the stated confidence"
    v = np.r_[np.full(410, 80.0), np.full(590, 99.0)]
    y = np.r_[np.arange(410) < 226, np.arange(590) < 584]
    t = from_counts(np.array([80.0, 99.0]), np.array([410, 590]), np.array([226, 584]), scale=PCT)
    p = v / 100
    d = (p - y) ** 2 - (y.mean() - y) ** 2
    assert d.mean() < 0 and np.mean((d - d.mean()) ** 3) > 0  # stated better, differences right-skewed
    bt = m.brier_vs_constant(t)
    assert bt.statistic == pytest.approx(hall_z(d), rel=1e-9)
    assert bt.statistic < -5 and bt.p_value == pytest.approx(2 * norm.sf(abs(hall_z(d))), rel=1e-6)
    assert compare.model_row("m", t, reps=0).brier_winner == "stated"
    assert not any("beats the stated confidence" in s for s in audit(t, reps=0).verdict)


def test_the_paired_brier_statistic_has_the_sign_of_the_mean_difference_when_significant() -> None:
    rng = np.random.default_rng(22)
    for _ in range(300):
        vals = np.sort(rng.choice(np.arange(1.0, 100.0), 2, replace=False))
        cnt = rng.integers(5, 400, 2)
        right = rng.binomial(cnt, rng.uniform(0.02, 0.999, 2))
        t = from_counts(vals, cnt, right, scale=PCT)
        bt = m.brier_vs_constant(t)
        if bt.p_value is not None and bt.p_value < 0.05:
            assert np.sign(bt.statistic) == np.sign(m.brier(t) - m.brier_base_rate(t))


# -------------------------------------------------------------- Cox without a maximum
def test_cox_reports_no_fit_when_a_wrong_answer_sits_at_100() -> None:
    # issue 22: one wrong answer at 100 has probability expit(a + b * inf) = 1 - 1 = 0 under every
    # slope b > 0, so the likelihood is 0 there and no fit exists; the code fitted the other cells
    # and reported intercept, slope and Wald intervals (the same bit for bit with the answer flipped
    # to right), quoted "Cox slope" in the verdict and said all answers at 100 carry no information
    v, n = np.array([60.0, 70.0, 80.0, 90.0, 100.0]), np.array([200, 200, 200, 200, 300])
    k = np.array([150, 150, 150, 150, 299])
    t = from_counts(v, n, k, scale=PCT)
    a = audit(t, reps=30)
    c = a.cox
    assert (c.intercept, c.slope) == (Estimate.point(None), Estimate.point(None))
    assert "no maximum-likelihood fit" in c.note and "1 wrong answer stated at 100" in c.note
    assert "carry no information" not in c.note
    assert a.metrics["cox_slope"] is None and a.metrics["cox_intercept"] is None
    assert not any("Cox slope" in s for s in a.verdict)
    json.dumps(a.to_dict(), allow_nan=False)
    from calib.present.text_report import figures

    assert any("no maximum-likelihood fit" in line for line in figures(a))
    # a right answer at 0, likewise; answers at the ends that came out as stated still fit
    t0 = from_counts(np.r_[0.0, v[:-1]], np.r_[50, n[:-1]], np.r_[1, k[:-1]], scale=PCT)
    assert m.cox(t0).slope.value is None and "1 right answer stated at 0" in m.cox(t0).note
    ok = from_counts(v, n, np.r_[k[:-1], 300], scale=PCT)
    assert m.cox(ok).slope.value is not None and "300 answers stated at 0 or 100 carry no information" in m.cox(ok).note
