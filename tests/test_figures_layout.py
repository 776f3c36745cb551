"""Figures that read at a glance (issue 14): axes fit the data, judges at one value stand
apart, every bar and point carries its interval, hovers give n, the rate and the interval,
one unit per axis, and the static export shows the page's ranges.

Expected values are computed here from the rows (Wilson's closed form, brute-force
bootstraps, the data's own extent), never read from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from calib import curves, maps, metrics
from calib.compare import compare
from calib.present import axes, figures
from calib.present.drift import values_figure
from calib.scale import PROBABILITY
from calib.table import from_counts

OKABE_ITO = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"}


def wilson(k: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson (1927) score interval, written out."""
    z = stats.norm.ppf((1 + level) / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def judge(values, n, k):
    return from_counts(np.array(values, dtype=float), np.array(n), np.array(k))


def high_judge():
    # states only 80-100 on 0-100, right 55-80% of the time
    return judge([80, 90, 95, 100], [440, 120, 300, 140], [246, 94, 222, 97])


def other_judge():
    return judge([80, 90, 95, 100], [100, 300, 400, 200], [60, 240, 330, 180])


def third_judge():
    return judge([85, 90, 95, 100], [50, 300, 500, 150], [30, 250, 420, 140])


def drawn(fig, name):
    return [t for t in fig.data if t.name == name]


def errors_of(tr):
    y = np.asarray(tr.y, dtype=float)
    return y + np.asarray(tr.error_y.array, dtype=float), y - np.asarray(tr.error_y.arrayminus, dtype=float)


def diagonal_crosses(fig) -> bool:
    """Some part of y = x lies inside the drawn rectangle."""
    x0, x1 = fig.layout.xaxis.range
    y0, y1 = fig.layout.yaxis.range
    return max(x0, y0) < min(x1, y1)


# --------------------------------------------------------------------------- axes
def test_reliability_axes_fit_an_80_to_100_judge_and_keep_the_diagonal():
    t = high_judge()
    fig = figures.reliability([("a", curves.value_points(t))], figures.palette(["a"]))
    (pts,) = drawn(fig, "a")
    x0, x1 = fig.layout.xaxis.range
    y0, y1 = fig.layout.yaxis.range
    # x: the values used (80-100) with a margin; y: every interval end inside
    assert 74 <= x0 < 80 and 100 < x1 <= 103
    hi, lo = errors_of(pts)
    assert y0 <= lo.min() and hi.max() <= y1
    # the data fills most of both axes (the e2e rule asks at least half)
    assert (100 - 80) / (x1 - x0) > 0.8
    assert (hi.max() - lo.min()) / (y1 - y0) >= axes.MIN_DATA_SHARE - 1e-9
    assert diagonal_crosses(fig)


def test_diagonal_ranges_widen_y_toward_the_diagonal_only_while_the_data_keeps_its_share():
    # right 60-90% at stated 80-100: y grows up to the x range's top (the whole diagonal shows)
    (x0, x1), (y0, y1) = axes.diagonal_ranges([80, 100], [60, 90])
    assert y1 >= x1 - 1e-9 and (90 - 60) / (y1 - y0) >= axes.MIN_DATA_SHARE - 1e-9
    # right 40-60% at stated 60-100: y grows toward the diagonal until the data keeps 60% of it
    (x0, x1), (y0, y1) = axes.diagonal_ranges([60, 100], [40, 60])
    assert (60 - 40) / (y1 - y0) == pytest.approx(axes.MIN_DATA_SHARE, rel=1e-6) and y1 > 61.5
    assert y1 >= x0 + 0.25 * (x1 - x0)  # and the diagonal is in view


def test_the_diagonal_stays_visible_for_a_judge_far_below_it():
    # one stated value, 98%, right 77-86% of the time: y reaches up to the diagonal
    (x0, x1), (y0, y1) = axes.diagonal_ranges([98.0], [77.0, 82.0, 86.0])
    assert y0 <= 77 and y1 >= x0 + 0.25 * (x1 - x0)
    # and one far above it (stated 10%, right 40-60%)
    (x0, x1), (y0, y1) = axes.diagonal_ranges([8.0, 12.0], [40.0, 60.0])
    assert y0 <= x1 - 0.25 * (x1 - x0) and y1 >= 60


def test_fit_range_pads_and_stays_near_the_natural_bounds():
    assert axes.fit_range([]) == pytest.approx((-3.0, 103.0))
    lo, hi = axes.fit_range([50.0])  # one value: an axis around it, 1.5 points each side
    assert (lo, hi) == pytest.approx((48.5, 51.5))
    lo, hi = axes.fit_range([0.0, 100.0])
    assert lo == pytest.approx(-6.0) and hi == pytest.approx(106.0)
    assert axes.fit_range([None, float("nan"), 10.0, 20.0]) == pytest.approx((10 - 1.5, 20 + 1.5))


def test_histogram_and_per_value_axes_fit_the_values_used():
    t = high_judge()
    hist = figures.stated_histogram([("a", t)], figures.palette(["a"]))
    pv = figures.per_value([("a", t, metrics.per_value(t))], figures.palette(["a"]))
    for fig in (hist, pv):
        x0, x1 = fig.layout.xaxis.range
        assert 70 <= x0 < 80 and 100 < x1 <= 104, fig.layout.title.text
        assert "0-100" in fig.layout.xaxis.title.text  # the scale stays named
    (pts,) = drawn(pv, "a")
    hi, lo = errors_of(pts)
    y0, y1 = pv.layout.yaxis.range
    assert y0 <= lo.min() and hi.max() <= y1


def test_risk_coverage_axis_fits_the_errors_not_zero():
    rng = np.random.default_rng(3)
    p = rng.choice([0.7, 0.8, 0.9, 0.95], size=800)
    y = rng.random(800) < p - 0.15
    vals = np.round(100 * p)
    uniq = np.unique(vals)
    t = judge(uniq, [int((vals == u).sum()) for u in uniq], [int(y[vals == u].sum()) for u in uniq])
    from calib import routing

    sw = routing.sweep(routing.basis(t))
    fig = figures.risk_coverage("a", "#0072B2", sw)
    risk = 100 * np.asarray(sw.risk, dtype=float)
    upper = 100 * np.asarray(sw.risk_upper, dtype=float)
    y0, y1 = fig.layout.yaxis.range
    both = np.concatenate([risk[np.isfinite(risk)], upper[np.isfinite(upper)]])
    assert y0 <= both.min() and both.max() <= y1
    assert (both.max() - both.min()) / (y1 - y0) > 0.8


# -------------------------------------------------------------------------- dodge
def test_judges_at_the_same_value_are_dodged_and_the_hover_keeps_the_value():
    names = ["a", "b", "c"]
    tables = [high_judge(), other_judge(), third_judge()]
    fig = figures.reliability(
        [(n, curves.value_points(t)) for n, t in zip(names, tables, strict=True)], figures.palette(names)
    )
    got = {n: drawn(fig, n)[0] for n in names}
    shift = {n: np.asarray(got[n].x) - np.asarray(got[n].customdata)[:, 5] for n in names}
    # one offset per judge, the same at every value, centred, distinct, under 1.5 points
    per = [float(shift[n][0]) for n in names]
    assert all(np.ptp(shift[n]) < 1e-9 for n in names)
    assert per[0] < per[1] < per[2] and sum(per) == pytest.approx(0.0, abs=1e-9)
    assert max(abs(s) for s in per) <= 2.0
    # the true positions (what the hover prints) are the stated values
    np.testing.assert_allclose(np.asarray(got["c"].customdata)[:, 5], [85, 90, 95, 100])
    # markers at 90, 95 and 100 no longer sit on one spot
    for v in (90, 95, 100):
        xs = [float(np.asarray(got[n].x)[np.asarray(got[n].customdata)[:, 5] == v][0]) for n in names]
        assert len(set(np.round(xs, 6))) == 3


def test_corp_curves_of_judges_at_the_same_values_are_dodged_too():
    ta, tb = high_judge(), other_judge()
    ca, cb = curves.isotonic_curve(ta, reps=0), curves.isotonic_curve(tb, reps=0)
    fig = figures.reliability([("a", ca), ("b", cb)], figures.palette(["a", "b"]))
    la = [tr for tr in drawn(fig, "a") if tr.mode == "lines+markers"][0]
    lb = [tr for tr in drawn(fig, "b") if tr.mode == "lines+markers"][0]
    np.testing.assert_allclose(np.asarray(la.customdata)[:, 4], [80, 90, 95, 100])  # the hover's position
    assert np.all(np.asarray(la.x) < np.asarray(lb.x)) and "customdata[4]" in la.hovertemplate


def test_one_datasets_points_and_corp_curve_line_up():
    t = high_judge()
    fig = figures.reliability_one("a", curves.value_points(t), curves.isotonic_curve(t, reps=0))
    (pts,) = drawn(fig, "hit rate at each stated value")
    line = [tr for tr in drawn(fig, "CORP isotonic curve") if tr.mode == "lines+markers"][0]
    np.testing.assert_allclose(pts.x, [80, 90, 95, 100])
    np.testing.assert_allclose(line.x, [80, 90, 95, 100])


def test_no_dodge_for_one_judge_or_disjoint_values():
    assert axes.dodge([[80, 90]], span=100) == [0.0]
    assert axes.dodge([[80, 90], [85, 95]], span=100) == [0.0, 0.0]
    offs = axes.dodge([[80, 90], [90, 100]], span=100)
    # two series sharing 90 on a grid of gap 10: 60% of the gap, capped at 2 points apart
    assert offs == pytest.approx([-1.0, 1.0])
    # values 1 apart (a 1-100 judge using every value): 0.6 of that gap
    assert axes.dodge([[90, 91], [90, 91]], span=100) == pytest.approx([-0.3, 0.3])


def test_per_value_dodges_judges_on_one_scale():
    ta, tb = high_judge(), other_judge()
    fig = figures.per_value(
        [("a", ta, metrics.per_value(ta)), ("b", tb, metrics.per_value(tb))], figures.palette(["a", "b"])
    )
    (a,), (b,) = drawn(fig, "a"), drawn(fig, "b")
    np.testing.assert_allclose(np.asarray(a.customdata)[:, 4], [80, 90, 95, 100])
    assert np.all(np.asarray(a.x) < np.asarray(b.x))


# ------------------------------------------------------------- intervals and hover
def test_per_value_points_carry_their_wilson_interval_and_the_hover_says_so():
    t = high_judge()
    fig = figures.per_value([("a", t, metrics.per_value(t))], figures.palette(["a"]))
    (pts,) = drawn(fig, "a")
    hi, lo = errors_of(pts)
    for i, (n, k) in enumerate(zip([440, 120, 300, 140], [246, 94, 222, 97], strict=True)):
        w_lo, w_hi = wilson(k, n)
        assert lo[i] == pytest.approx(100 * w_lo, abs=1e-6) and hi[i] == pytest.approx(100 * w_hi, abs=1e-6)
    assert "n = " in pts.hovertemplate and "interval" in pts.hovertemplate and "%{y" in pts.hovertemplate


def test_histogram_bars_hover_with_n_and_the_hit_rates_interval():
    t = high_judge()
    fig = figures.stated_histogram([("a", t)], figures.palette(["a"]))
    (bars,) = drawn(fig, "a")
    cd = np.asarray(bars.customdata, dtype=float)
    assert list(cd[:, 0]) == [440, 120, 300, 140]
    for i, (n, k) in enumerate(zip([440, 120, 300, 140], [246, 94, 222, 97], strict=True)):
        w_lo, w_hi = wilson(k, n)
        assert cd[i, 2] == pytest.approx(100 * w_lo) and cd[i, 3] == pytest.approx(100 * w_hi)
    assert "n = " in bars.hovertemplate and "interval [" in bars.hovertemplate


def test_reliability_hovers_give_n_rate_and_interval_for_points_bins_and_corp():
    t = high_judge()
    vp = curves.value_points(t)
    fig = figures.reliability([("a", vp)], figures.palette(["a"]))
    (pts,) = drawn(fig, "a")
    assert "n = " in pts.hovertemplate and "interval" in pts.hovertemplate
    corp = curves.isotonic_curve(t, reps=50, seed=0)
    fig2 = figures.reliability([("a", corp)], figures.palette(["a"]))
    line = [tr for tr in drawn(fig2, "a") if tr.mode == "lines+markers"][0]
    assert "n = " in line.hovertemplate and "band [" in line.hovertemplate
    cd = np.asarray(line.customdata, dtype=float)
    np.testing.assert_allclose(cd[:, 2], 100 * corp.confidence_lo)


def test_brier_bars_carry_bootstrap_intervals_that_match_a_brute_force_bootstrap():
    rng = np.random.default_rng(11)
    p = rng.choice([0.6, 0.8, 0.9], size=600)
    y = (rng.random(600) < p - 0.1).astype(int)
    vals = np.round(100 * p)
    uniq = np.unique(vals)
    t = judge(uniq, [int((vals == u).sum()) for u in uniq], [int(y[vals == u].sum()) for u in uniq])
    row = compare({"j": t}, reps=2000, seed=1).rows[0]
    # brute force: resample rows, Brier of the stated value and of the constant hit rate
    draws = rng.integers(0, 600, size=(2000, 600))
    bs = ((p[draws] - y[draws]) ** 2).mean(axis=1)
    acc = y[draws].mean(axis=1)
    ref_bs = np.quantile(bs, [0.025, 0.975])
    ref_base = np.quantile(acc * (1 - acc), [0.025, 0.975])
    width = ref_bs[1] - ref_bs[0]
    assert row.brier.ci[0] == pytest.approx(ref_bs[0], abs=0.15 * width)
    assert row.brier.ci[1] == pytest.approx(ref_bs[1], abs=0.15 * width)
    wb = ref_base[1] - ref_base[0]
    assert row.brier_constant.ci[0] == pytest.approx(ref_base[0], abs=0.2 * wb)
    assert row.brier_constant.ci[1] == pytest.approx(ref_base[1], abs=0.2 * wb)
    assert row.to_dict()["brier_ci"] == list(row.brier.ci)
    fig = figures.brier_vs_constant([row], {"j": "#0072B2"})
    for tr, ci in zip(fig.data, (row.brier.ci, row.brier_constant.ci), strict=True):
        assert tr.orientation == "h" and list(tr.y) == ["j"]  # the name on the y axis, at any width
        assert tr.error_x.array[0] == pytest.approx(ci[1] - tr.x[0])
        assert tr.error_x.arrayminus[0] == pytest.approx(tr.x[0] - ci[0])
        assert "n = " in tr.hovertemplate and "interval [" in tr.hovertemplate
        assert tr.customdata[0][0] == 600


def test_the_comparisons_brier_intervals_are_the_audits():
    """The bars on the Overview carry the same interval as the Brier metric beside them."""
    from calib.audit import audit

    t = other_judge()
    row = compare({"j": t}, reps=300, seed=4).rows[0]
    a = audit(t, reps=300, seed=4)
    assert row.brier.ci == pytest.approx(a.ci["brier"])
    assert row.brier_constant.ci == pytest.approx(a.ci["brier_base_rate"])


def test_brier_bars_without_resamples_draw_no_error_bar_rather_than_a_wrong_one():
    row = compare({"j": high_judge()}, reps=0).rows[0]
    assert row.brier.ci == (None, None)
    fig = figures.brier_vs_constant([row], {"j": "#0072B2"})
    assert list(fig.data[0].error_x.array) == [0.0] and list(fig.data[0].error_x.arrayminus) == [0.0]


def test_letter_bias_accuracy_points_carry_wilson_intervals():
    from calib.options import LetterBias

    pred, acc = np.array([40, 30, 20, 10]), np.array([0.5, 0.6, 0.7, 0.8])
    lb = LetterBias(
        letters=("A", "B", "C", "D"),
        predicted=pred,
        gold=np.array([25, 25, 25, 25]),
        predicted_share=pred / 100,
        gold_share=np.full(4, 0.25),
        mean_confidence=np.full(4, 0.7),
        accuracy=acc,
    )
    fig = figures.letter_bias(lb, "#0072B2")
    (pts,) = drawn(fig, "right when predicted (%)")
    hi, lo = errors_of(pts)
    for i in range(4):
        w_lo, w_hi = wilson(acc[i] * pred[i], pred[i])
        assert lo[i] == pytest.approx(100 * w_lo, abs=1e-6) and hi[i] == pytest.approx(100 * w_hi, abs=1e-6)


# ------------------------------------------------------------ the recalibration map
def continuous_fit():
    rng = np.random.default_rng(5)
    s = rng.permutation(np.arange(2000, 9000))[:400] / 10_000  # 400 distinct scores in 0.2-0.9
    y = rng.random(400) < s
    t = from_counts(s, np.ones(400, dtype=int), y.astype(int), scale=PROBABILITY)
    assert t.cells == 400
    return t, maps.fit(t, "platt", scoring="insample", reps=0)


def test_a_continuous_maps_fit_chart_shows_equal_count_bins_with_wilson_intervals_in_percent():
    t, fit = continuous_fit()
    grid = np.linspace(0, 1, 101)
    fig = figures.recalibration_map(
        "m",
        "#0072B2",
        scale_lo=0.0,
        scale_hi=1.0,
        curve_x=grid,
        curve_y=fit.map.apply(grid),
        table=fit.table,
        method_label="Platt",
    )
    assert "%" in fig.layout.xaxis.title.text and "%" in fig.layout.yaxis.title.text  # one unit
    (curve,) = [tr for tr in fig.data if tr.name == "Platt map"]
    assert max(curve.x) == pytest.approx(100.0)
    (pts,) = [tr for tr in fig.data if tr.name.startswith("hit rate in the fitting data")]
    assert not [tr for tr in fig.data if tr.name == "map at each stated value"]  # no dot per value
    n = np.asarray(pts.customdata, dtype=float)[:, 0]
    k = np.asarray(pts.customdata, dtype=float)[:, 1]
    # 400 answers: 15 bins of about 27 (at most 15 bins, at least 15 answers each)
    assert n.sum() == 400 and n.size == 15 and n.min() >= 400 / 15 - 2
    # the bins, recomputed from the rows: sorted stated values cut into equal counts
    s = np.sort(np.asarray(t.value))
    order = np.argsort(np.asarray(t.value), kind="stable")
    right = np.asarray(t.correct)[order]
    ends = np.cumsum(n).astype(int)
    starts = ends - n.astype(int)
    for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
        assert k[i] == right[a:b].sum()
        assert pts.x[i] == pytest.approx(100 * s[a:b].mean())
        w_lo, w_hi = wilson(k[i], n[i])
        assert pts.y[i] - pts.error_y.arrayminus[i] == pytest.approx(100 * w_lo, abs=1e-6)
        assert pts.y[i] + pts.error_y.array[i] == pytest.approx(100 * w_hi, abs=1e-6)
    assert "n = " in pts.hovertemplate and "interval" in pts.hovertemplate
    x0, x1 = fig.layout.xaxis.range
    assert 10 < x0 < 20 and 90 < x1 < 100  # the values used, 20-90%, not 0-100


def test_few_answers_get_fewer_bins_of_at_least_fifteen():
    from calib.present.axes import fit_bins

    rng = np.random.default_rng(2)
    s = np.sort(rng.permutation(np.arange(100, 900))[:40] / 1000)
    b = fit_bins(s, np.ones(40), (rng.random(40) < 0.5).astype(float))
    assert b["n"].size == 3 and b["n"].sum() == 40 and b["n"].min() >= 13
    tiny = fit_bins(s[:10], np.ones(10), np.ones(10))
    assert tiny["n"].size == 3 and tiny["rate"].tolist() == [1.0, 1.0, 1.0]


def test_a_discrete_maps_chart_keeps_a_point_per_value_with_intervals():
    t = high_judge()
    fit = maps.fit(t, "platt", scoring="insample", reps=0)
    grid = np.linspace(0, 100, 101)
    fig = figures.recalibration_map(
        "m",
        "#0072B2",
        scale_lo=0.0,
        scale_hi=100.0,
        curve_x=grid,
        curve_y=fit.map.apply(grid),
        table=fit.table,
        method_label="Platt",
    )
    assert drawn(fig, "map at each stated value")
    (pts,) = drawn(fig, "hit rate in the fitting data")
    hi, lo = errors_of(pts)
    w = [wilson(k, n) for n, k in zip([440, 120, 300, 140], [246, 94, 222, 97], strict=True)]
    np.testing.assert_allclose(lo, [100 * a for a, _ in w], atol=1e-6)
    np.testing.assert_allclose(hi, [100 * b for _, b in w], atol=1e-6)


# ------------------------------------------------------------------- palette, drift
def colours_of(fig) -> set[str]:
    out = set()
    for tr in fig.data:
        for part in ("marker", "line"):
            c = getattr(getattr(tr, part, None), "color", None)
            if isinstance(c, str):
                out.add(c)
            elif c is not None and not isinstance(c, int | float):
                out |= {x for x in c if isinstance(x, str)}
    return out


def test_every_figure_uses_the_okabe_ito_palette():
    """Data in Okabe-Ito colours; besides them only the neutral grey of references and the
    threshold's colour (drawn dotted, so it does not depend on hue)."""
    assert set(figures.PALETTE) == OKABE_ITO
    names = ["a", "b", "c"]
    tables = [high_judge(), other_judge(), third_judge()]
    colors = figures.palette(names)
    allowed = OKABE_ITO | {
        figures.REFERENCE_COLOR,
        figures.THRESHOLD_COLOR,
        "#333333",
        "white",
        "rgba(0,0,0,0)",
    }
    figs = [
        figures.reliability(
            [(n, curves.value_points(t)) for n, t in zip(names, tables, strict=True)],
            colors,
            thresholds=[90.0],
        ),
        figures.per_value([(n, t, metrics.per_value(t)) for n, t in zip(names, tables, strict=True)], colors),
        figures.stated_histogram(list(zip(names, tables, strict=True)), colors),
        figures.brier_vs_constant(compare(dict(zip(names, tables, strict=True)), reps=0).rows, colors),
    ]
    for fig in figs:
        assert colours_of(fig) <= allowed, (fig.layout.title.text, colours_of(fig) - allowed)


def test_drift_values_figure_dodges_the_runs_and_gives_n_and_interval():
    from calib.drift import drift

    old = high_judge()
    new = judge([80, 90, 95, 100], [400, 150, 300, 150], [200, 100, 230, 120])
    d = drift(old, new, reps=50)
    fig = values_figure(d)
    o = [tr for tr in fig.data if tr.name.startswith("old")][0]
    n = [tr for tr in fig.data if tr.name.startswith("new")][0]
    assert np.all(np.asarray(o.x) < np.asarray(n.x))
    assert "n = " in o.hovertemplate and "interval" in o.hovertemplate
    assert {o.marker.color, n.marker.color} <= OKABE_ITO | {figures.REFERENCE_COLOR}
    x0, x1 = fig.layout.xaxis.range
    assert 70 < x0 < 80 and 100 < x1 < 104


# -------------------------------------------------------------------------- static
def test_the_static_diagram_shows_the_pages_ranges():
    from calib.present.static import draw

    t = high_judge()
    vp = curves.value_points(t)
    corp = curves.isotonic_curve(t, reps=50, seed=0)
    page = figures.reliability([("points", vp), ("corp", corp)], {"points": "#0072B2", "corp": "#D55E00"})
    paper = draw(vp, corp, name="a", level=0.95, reps=50, scale=t.scale)
    top = paper.figure.axes[0]
    assert top.get_xlim() == pytest.approx(tuple(page.layout.xaxis.range))
    assert top.get_ylim() == pytest.approx(tuple(page.layout.yaxis.range))
