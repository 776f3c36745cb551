"""The audit: its JSON schema, its verdict on the reference post's numbers and on the
cases Spiegelhalter's Z cannot see, groups, edge cases."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from calib import metrics as m
from calib.audit import CALIBRATION_TESTS, audit
from calib.errors import CalibError
from calib.loadreport import LoadReport
from calib.present.format import p_value as fmt_p
from calib.scale import Scale
from calib.table import from_counts

PCT = Scale(0.0, 100.0, "0-100")
PROB = Scale(0.0, 1.0, "0-1")
REQUIRED = ("n", "accuracy", "mean_confidence", "brier", "brier_ci", "brier_base_rate", "brier_skill", "log_loss",
            "auroc", "ece", "ece_ci", "mce", "spiegelhalter_z", "spiegelhalter_p", "murphy", "corp", "smooth_ece",
            "distinct_values", "per_value", "load_report", "cox", "tests", "verdict", "scheme", "bins", "reps",
            "seed", "level")


def qwen():  # type: ignore[no-untyped-def]
    """qwen2.5:14b in the reference post: 85 meant 57%, 95 meant 79% (878 times), 100 meant 92%."""
    return from_counts(np.array([85.0, 90.0, 95.0, 100.0]), np.array([60, 10, 878, 52]),
                       np.array([34, 7, 694, 48]), scale=PCT)


def strict(d: object) -> str:
    return json.dumps(d, allow_nan=False)


def test_json_schema_keys_and_strictness() -> None:
    rep = LoadReport(source="qwen.jsonl", format="stated", lines_read=1000, kept=1000)
    a = audit(qwen(), reps=200, name="qwen", load_report=rep)
    d = a.to_dict()
    for key in REQUIRED:
        assert key in d, key
    for name in m.BATCH_METRICS:
        if not name.startswith(("murphy_", "corp_", "cox_", "share_", "accuracy_at_")):
            assert f"{name}_ci" in d, name
    assert set(d["murphy"]) >= {"reliability", "resolution", "uncertainty"}
    assert set(d["corp"]) == {"mcb", "dsc", "unc"}
    assert set(d["tests"]) == {"calibration_in_the_large", "goodness_of_fit", "cox_lr", "brier_vs_constant",
                               "spiegelhalter", "auroc_vs_chance"}
    assert d["load_report"]["source"] == "qwen.jsonl"
    assert (d["n"], d["distinct_values"], d["reps"], d["scheme"]) == (1000, 4, 200, "values")
    assert [r["value"] for r in d["per_value"]] == [85, 90, 95, 100]
    assert json.loads(strict(d)) == d


def test_verdict_on_the_reference_post() -> None:
    a = audit(qwen(), reps=500, name="qwen2.5:14b")
    text = "\n".join(a.verdict)
    assert "A stated 95 meant 79%" in text and "and it meant it 878 times" in text
    assert "The constant base rate (78% for every answer) beats the stated confidence" in text
    assert a.miscalibrated is True
    assert text.count("Miscalibrated: overconfident by 16.3 points") == 1
    assert "The number ranks answers" in text
    assert a.metrics["accuracy"] == pytest.approx(0.783)
    assert a.metrics["ece"] == pytest.approx((60 * .85 - 34 + 10 * .9 - 7 + 878 * .95 - 694 + 52 - 48) / 1000)


@pytest.mark.parametrize("case", ["all at 100", "values 0, 0.5, 1", "symmetric around 0.5", "cancelling"])
def test_verdict_sees_what_spiegelhalter_cannot(case: str) -> None:
    if case == "all at 100":
        t = from_counts(np.array([100.0]), np.array([593]), np.array([357]), scale=PCT)
    elif case == "values 0, 0.5, 1":
        t = from_counts(np.array([0.0, 0.5, 1.0]), np.array([200, 200, 200]), np.array([60, 100, 140]), scale=PROB)
    elif case == "symmetric around 0.5":
        t = from_counts(np.array([10.0, 90.0]), np.array([500, 500]), np.array([150, 350]), scale=PCT)
    else:
        t = from_counts(np.array([60.0, 90.0]), np.array([1600, 700]), np.array([1520, 490]), scale=PCT)
    a = audit(t, reps=0)
    sp = a.tests["spiegelhalter"]
    if case != "symmetric around 0.5":
        assert sp.p_value is None or sp.p_value > 0.05
        assert any("Spiegelhalter" in n for n in a.notes)
    assert a.miscalibrated is True
    assert any(s.startswith("Miscalibrated") for s in a.verdict)
    assert min(a.tests[k].p_value for k in CALIBRATION_TESTS if a.tests[k].p_value is not None) < 1e-6
    strict(a.to_dict())


def test_calibrated_data_gets_no_miscalibration_verdict() -> None:
    rng = np.random.default_rng(0)
    v = np.arange(50.0, 101.0, 5.0)
    n = np.full(v.size, 300)
    k = rng.binomial(n, np.where(v == 100, 0.999, v / 100))
    a = audit(from_counts(v, n, k, scale=PCT), reps=200)
    assert a.miscalibrated is False
    assert any(s.startswith("No evidence of miscalibration") for s in a.verdict)


def test_groups_give_one_audit_each_and_a_pooled_one() -> None:
    v = np.array([85.0, 95.0, 85.0, 95.0])
    g = np.array(["llama", "llama", "qwen", "qwen"])
    t = from_counts(v, np.array([100, 300, 60, 878]), np.array([56, 220, 34, 694]), scale=PCT, group=g)
    a = audit(t, reps=100, seed=3)
    assert [x.name for x in a.groups] == ["llama", "qwen"] and a.group is None
    assert a.groups[1].n == 938 and a.n == 1338
    assert a.groups[1].seed == 5  # seed + 1 + index
    d = a.to_dict()
    assert [x["group"] for x in d["groups"]] == ["llama", "qwen"]
    assert "load_report" not in d["groups"][0]
    strict(d)


def test_same_seed_same_numbers() -> None:
    a = audit(qwen(), reps=300, seed=11).to_dict()
    b = audit(qwen(), reps=300, seed=11).to_dict()
    c = audit(qwen(), reps=300, seed=12).to_dict()
    assert a == b and a["ece_ci"] != c["ece_ci"]


def test_one_class_only_is_null_not_nan() -> None:
    t = from_counts(np.array([80.0, 95.0]), np.array([30, 70]), np.array([30, 70]), scale=PCT)
    a = audit(t, reps=100)
    d = a.to_dict()
    assert d["auroc"] is None and d["brier_skill"] is None and d["auroc_ci"] == [None, None]
    assert d["cox"]["slope"] is None
    assert d["accuracy"] == 1.0 and d["brier"] is not None
    assert any("One class only" in n for n in a.notes)
    assert any("every answer is right" in s for s in a.verdict)
    strict(d)


def test_single_distinct_value() -> None:
    t = from_counts(np.array([90.0]), np.array([200]), np.array([150]), scale=PCT)
    a = audit(t, reps=100)
    d = a.to_dict()
    assert d["cox"]["slope"] is None and d["cox"]["intercept"] is not None
    assert d["tests"]["cox_lr"]["df"] == 1
    assert any("same for all of them" in s for s in a.verdict)
    strict(d)


def test_empty_table_and_bad_options_raise_calib_error() -> None:
    empty = from_counts(np.array([50.0]), np.array([0]), np.array([0]), scale=PCT)
    with pytest.raises(CalibError, match="nothing to audit"):
        audit(empty)
    with pytest.raises(CalibError, match="level"):
        audit(qwen(), level=1.5)
    with pytest.raises(CalibError, match="bins"):
        audit(qwen(), bins=0)
    with pytest.raises(CalibError, match="binning scheme"):
        audit(qwen(), scheme="quantile")


def test_pooled_table_audit_uses_width_bins_and_bins_table() -> None:
    rng = np.random.default_rng(1)
    p = np.round(rng.beta(6, 2, 4000), 3)
    vals, inv = np.unique(p, return_inverse=True)
    y = rng.random(4000) < p**2
    t = from_counts(vals, np.bincount(inv), np.bincount(inv, weights=y).astype(int), scale=PROB)
    a = audit(t, reps=200)
    assert a.scheme == "width" and len(a.bin_table) <= 10 and sum(r.n for r in a.bin_table) == 4000
    strict(a.to_dict())


def test_fmt_p() -> None:
    assert fmt_p(0.0321) == "p=0.032"
    assert fmt_p(3e-12) == "p=3e-12"
    assert fmt_p(m.P_FLOOR, -420.0) == "p<1e-300"
    assert fmt_p(None) == "p undefined"
    assert math.isfinite(audit(qwen(), reps=0).tests["spiegelhalter"].log10_p)


def test_share_at_the_most_used_value_has_a_wilson_interval_that_holds_it():
    # 80 answers at 80 distinct values: a resample's most used value is the largest of 80 counts
    # (3 to 6 of 80), so the bootstrap's percentile interval did not hold 1/80
    import numpy as np
    from scipy import stats

    from calib.audit import audit
    from calib.rows import Judgments
    from calib.scale import PROBABILITY
    from calib.table import from_judgments

    rng = np.random.default_rng(0)
    p = np.sort(rng.uniform(0.3, 0.99, 80))
    y = rng.random(80) < p
    rows = Judgments(stated=p, prob=p, correct=y, line=np.arange(1, 81), item_id=np.array([""] * 80),
                     group=None, scale=PROBABILITY)
    a = audit(from_judgments(rows), reps=200)
    z = stats.norm.ppf(0.975)
    k, n = 1, 80
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * np.sqrt(k * (n - k) / n + z * z / 4)
    assert a.metrics["share_top"] == pytest.approx(1 / 80)
    assert a.ci["share_top"] == pytest.approx((centre - half, centre + half), rel=1e-12)
    assert a.ci["share_top"][0] <= 1 / 80 <= a.ci["share_top"][1]


def test_the_parts_run_beside_the_rest_equal_them_run_alone() -> None:
    """The audit runs the goodness-of-fit test and the Cox fit on a second thread
    (calib.audit._audit_one): their figures are those of each run alone, here."""
    from calib.rows import Judgments
    from calib.table import from_judgments

    rng = np.random.default_rng(8)
    p = rng.uniform(0.05, 0.99, 5000)
    y = rng.random(p.size) < 0.3 + 0.6 * p
    t = from_judgments(Judgments(stated=p, prob=p, correct=y, line=np.arange(1, p.size + 1),
                                 item_id=np.full(p.size, ""), scale=PROB))
    a = audit(t, reps=100, seed=4)
    alone = m.cox(t, 0.95, seed=4)
    assert a.cox == alone and a.tests["cox_lr"] == alone.test
    assert a.tests["goodness_of_fit"] == m.goodness_of_fit(t, a.scheme, a.bins, seed=4)
    assert a.tests["goodness_of_fit"].p_value is not None and a.cox.slope.value is not None


@pytest.mark.parametrize(("values", "n", "right", "seed", "key"), [
    ([55.0, 65.0, 85.0, 100.0], [10, 3, 9, 13], [6, 2, 8, 12], 36, "mce"),
    ([50.0, 60.0, 80.0, 85.0, 90.0], [3, 9, 9, 3, 6], [1, 6, 7, 3, 5], 49, "smooth_ece"),
])
def test_an_interval_that_misses_its_figure_says_why(values, n, right, seed, key) -> None:  # type: ignore[no-untyped-def]
    """Fixed-seed miniatures (from 60 random 2-5-value tables of 30-40 answers) where the
    percentile interval of an upward-biased distance lies above its figure: the
    :class:`~calib.estimates.Estimate` must carry a note saying why; the JSON keeps the
    figure and its interval as they are."""
    t = from_counts(np.array(values), np.array(n), np.array(right), scale=PCT)
    a = audit(t, reps=200, seed=seed)
    e = a.estimates[key]
    assert e.lo is not None and e.value is not None and e.value < e.lo  # the interval misses the figure
    assert e.excludes_own_estimate and "biased upward" in e.note
    assert (e.value, e.ci, e.level) == (a.metrics[key], a.ci[key], 0.95)
    d = a.to_dict()
    assert d[key] == e.value and d[f"{key}_ci"] == [e.lo, e.hi]
    # no interval of this audit misses its figure without a note, and the JSON and the text say it
    assert all(x.note for x in a.estimates.values() if x.excludes_own_estimate)
    missed = {k for k, x in d.items() if k.endswith("_ci") is False and isinstance(x, float)
              and isinstance(d.get(f"{k}_ci"), list) and None not in d[f"{k}_ci"]
              and not d[f"{k}_ci"][0] <= x <= d[f"{k}_ci"][1]}
    assert key in missed and missed <= set(d["interval_notes"]) and "biased upward" in d["interval_notes"][key]
    from calib.present.text_report import render_text

    assert "the interval does not hold the figure; a distance from calibration" in render_text(a)
    # an audit whose intervals all hold their figures has no such key
    assert "interval_notes" not in audit(t, reps=0).to_dict()


def test_every_figure_is_one_estimate_with_how_its_interval_was_made() -> None:
    a, bare = audit(qwen(), reps=200, seed=1), audit(qwen(), reps=0)
    assert a.estimates.keys() == set(m.BATCH_METRICS) == bare.estimates.keys()
    assert a.estimates["accuracy"].method == "percentile bootstrap" and a.estimates["accuracy"].level == 0.95
    assert a.estimates["share_top"].method == "Wilson"
    assert "population ECE" in a.estimates["ece"].method and a.estimates["ece"].note
    # the Wilson interval of the share at 95, worked here: 878 of 1000 at 95%
    z, k, nn = 1.959963984540054, 878, 1000
    p = k / nn
    centre, half = (p + z * z / (2 * nn)) / (1 + z * z / nn), z / (1 + z * z / nn) * math.sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn))
    assert a.estimates["share_top"].ci == pytest.approx((centre - half, centre + half), rel=1e-12)
    # without resamples: the figure alone, no interval and no level
    assert all(e.ci == (None, None) and e.level is None and e.method == "none" for e in bare.estimates.values())
    assert bare.estimates["accuracy"].value == pytest.approx(0.783)
