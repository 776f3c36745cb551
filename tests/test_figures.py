"""The Plotly figures (calib.present.figures) show exactly the engine's numbers.

Each figure's traces are read back and compared with the curve, table or routing
result it was built from, and with counts made in the test from the rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from calib import curves, maps, metrics, routing
from calib.present import figures
from calib.table import from_counts

EVIL = '<b>bold</b><img src=x onerror=alert(1)><a href="http://evil.example">x</a>'


def table_a():
    # a judge that used four values of 0-100 (the post's llama shape)
    return from_counts(np.array([80.0, 90, 95, 100]), np.array([440, 120, 300, 140]),
                       np.array([246, 94, 222, 97]))


def table_b():
    return from_counts(np.array([85.0, 95, 100]), np.array([38, 878, 52]), np.array([22, 694, 48]))


def traces(fig, name=None):
    return [t for t in fig.data if name is None or t.name == name]


def the_reference(fig):
    refs = traces(fig, figures.REFERENCE_NAME)
    assert len(refs) == 1, "exactly one y = x line"
    return refs[0]


# ----------------------------------------------------------------- palette
def test_palette_is_stable_and_keyed_by_load_order():
    a = figures.palette(["llama", "qwen", "aya"])
    b = figures.palette(["llama", "qwen", "aya", "new"])
    assert a == {k: b[k] for k in a}
    assert len(set(a.values())) == 3
    # nine models: the ninth reuses the first colour, the others are distinct
    many = figures.palette([f"m{i}" for i in range(9)])
    assert len(set(list(many.values())[:8])) == 8 and many["m8"] == many["m0"]


def test_one_colour_per_model_across_figures():
    ta, tb = table_a(), table_b()
    colors = figures.palette(["a", "b"])
    hist = figures.stated_histogram([("a", ta), ("b", tb)], colors)
    pv = figures.per_value([("a", ta, metrics.per_value(ta)), ("b", tb, metrics.per_value(tb))], colors)
    rel = figures.reliability([("a", curves.value_points(ta)), ("b", curves.value_points(tb))], colors)
    for fig, attr in ((hist, "marker.color"), (pv, "marker.color"), (rel, "marker.color")):
        got = {}
        for t in fig.data:
            if t.name in ("a", "b"):
                got[t.name] = t.marker.color
        assert got == colors, attr


# ----------------------------------------------------------------- histogram
def test_histogram_bars_are_the_share_of_answers_at_each_value():
    t = table_a()
    fig = figures.stated_histogram([("a", t)], figures.palette(["a"]))
    (bar,) = traces(fig, "a")
    assert list(bar.x) == [80, 90, 95, 100]
    np.testing.assert_allclose(bar.y, 100 * np.array([440, 120, 300, 140]) / 1000)
    # hover carries n and the hit rate
    np.testing.assert_array_equal(np.asarray(bar.customdata)[:, 0], [440, 120, 300, 140])
    np.testing.assert_allclose(np.asarray(bar.customdata)[:, 1], 100 * np.array([246, 94, 222, 97]) / t.n)
    assert "0-100" in fig.layout.xaxis.title.text and "%" in fig.layout.yaxis.title.text


def test_continuous_scores_are_bars_of_equal_bins_summed_as_a_row_loop():
    # softmax scores on 0-1: more than 101 distinct values, so binned bars, not a bar per value
    from calib.scale import Scale

    rng = np.random.default_rng(7)
    v = np.unique(np.round(rng.beta(5, 2, 400), 6))
    v[-1] = 1.0  # the top of the scale goes in the last bin, not a bin of its own
    n = rng.integers(1, 9, v.size)
    t = from_counts(v, n, rng.binomial(n, 0.6), scale=Scale(0.0, 1.0, "0-1"))
    fig = figures.stated_histogram([("a", t)], figures.palette(["a"]))
    (bar,) = traces(fig, "a")
    assert bar.type == "bar"  # the dashboard's plotly.js basic bundle has no histogram trace
    bins = len(bar.x)
    assert bins == 50
    sums, counts = np.zeros(bins), np.zeros(bins, dtype=int)
    for value, k in zip(v, n, strict=True):  # by hand: [i/50, (i+1)/50), the last one closed
        i = min(int(value * bins), bins - 1)
        sums[i] += 100 * k / n.sum()
        counts[i] += k
    np.testing.assert_allclose(bar.y, sums)
    np.testing.assert_array_equal(np.asarray(bar.customdata)[:, 2], counts)
    np.testing.assert_allclose(np.asarray(bar.customdata)[:, :2], np.stack([np.arange(bins), np.arange(1, bins + 1)], 1) / bins)
    np.testing.assert_allclose(bar.x, (np.arange(bins) + 0.5) / bins)
    assert bar.width == pytest.approx(1 / bins) and sum(bar.y) == pytest.approx(100)


# ----------------------------------------------------------------- per value / reliability
def test_per_value_points_and_wilson_bars_equal_the_engine():
    t = table_b()
    rows = metrics.per_value(t)
    fig = figures.per_value([("b", t, rows)], figures.palette(["b"]))
    (pts,) = traces(fig, "b")
    np.testing.assert_array_equal(pts.x, [85, 95, 100])
    np.testing.assert_allclose(pts.y, 100 * np.array([22 / 38, 694 / 878, 48 / 52]))
    lo, hi = metrics.wilson_interval(np.array([22, 694, 48]), np.array([38, 878, 52]))
    np.testing.assert_allclose(np.asarray(pts.y) + np.asarray(pts.error_y.array), 100 * hi)
    np.testing.assert_allclose(np.asarray(pts.y) - np.asarray(pts.error_y.arrayminus), 100 * lo)
    # area grows with n: the 878 point is the biggest
    assert np.argmax(pts.marker.size) == 1
    ref = the_reference(fig)
    assert list(ref.x) == [0, 100] and list(ref.y) == [0, 100]


@pytest.mark.parametrize("view", ["values", "width", "mass", "corp"])
def test_reliability_traces_equal_the_curve_data(view):
    t = table_a()
    c = curves.reliability(t, view, bins=5, reps=200, seed=1)
    fig = figures.reliability([("a", c)], figures.palette(["a"]), thresholds=[80.0])
    (main,) = traces(fig, "a")
    if view == "values":
        np.testing.assert_allclose(main.x, [80, 90, 95, 100])
        np.testing.assert_allclose(main.y, 100 * np.array([246 / 440, 94 / 120, 222 / 300, 97 / 140]))
    elif view in ("width", "mass"):
        np.testing.assert_allclose(main.x, 100 * c.mean_prob)
        np.testing.assert_allclose(main.y, 100 * c.hit_rate)
        # bins are whole cells: every answer is in exactly one point
        assert np.asarray(main.customdata)[:, 2].sum() == t.total
    else:
        np.testing.assert_allclose(main.x, [80, 90, 95, 100])
        np.testing.assert_allclose(main.y, 100 * c.fitted)
        bands = [tr for tr in fig.data if tr.fill == "toself"]
        assert len(bands) == 2  # consistency and confidence
        conf = next(b for b in bands if b.name.startswith("confidence"))
        np.testing.assert_allclose(np.asarray(conf.y)[:4], 100 * c.confidence_hi)
        np.testing.assert_allclose(np.asarray(conf.y)[4:], 100 * c.confidence_lo[::-1])
    the_reference(fig)
    # the threshold is a vertical line at 80%
    (line,) = traces(fig, "review threshold")
    assert list(line.x) == [80.0, 80.0] and list(line.y) == [0, 100]
    assert fig.layout.xaxis.title.text == "stated confidence (%)"
    assert fig.layout.yaxis.title.text == "share right (%)"


def test_isotonic_fit_in_the_figure_is_monotone_and_matches_an_independent_pav():
    from sklearn.isotonic import IsotonicRegression

    t = table_a()
    c = curves.isotonic_curve(t, reps=0)
    fig = figures.reliability([("a", c)], figures.palette(["a"]))
    (main,) = traces(fig, "a")
    y = t.correct / t.n
    iso = IsotonicRegression().fit(t.prob, y, sample_weight=t.n)
    np.testing.assert_allclose(np.asarray(main.y) / 100, iso.predict(t.prob), atol=1e-12)


def test_moving_the_threshold_changes_only_the_threshold_traces():
    t = table_a()
    c = curves.value_points(t)
    fig = figures.reliability([("a", c)], figures.palette(["a"]), thresholds=[50.0, 60.0])
    import json

    def others(f):
        return json.dumps([tr.to_plotly_json() for tr in f.data if tr.name not in figures.THRESHOLD_NAMES],
                          default=lambda a: np.asarray(a).tolist())

    before = others(fig)
    figures.move_threshold_lines(fig, [85.0])
    (lo,) = traces(fig, "review threshold")
    (hi,) = traces(fig, "upper threshold")
    assert list(lo.x) == [85.0, 85.0] and lo.visible is True and hi.visible is False
    figures.move_threshold_lines(fig, [85.0, 95.0])
    assert list(hi.x) == [95.0, 95.0] and hi.visible is True
    assert others(fig) == before
    # and it is the same figure as one built at those thresholds
    fresh = figures.reliability([("a", c)], figures.palette(["a"]), thresholds=[85.0, 95.0])
    assert [list(tr.x) for tr in fresh.data] == [list(tr.x) for tr in fig.data]

    b = routing.basis(t)
    rc = figures.risk_coverage("a", "#0072B2", routing.sweep(b))
    r = routing.route(b, 95.0)
    figures.move_marker(rc, r.coverage, r.risk, "<b>x</b>")
    (mark,) = traces(rc, figures.CURRENT_NAME)
    assert mark.x[0] == pytest.approx(100 * 440 / 1000) and mark.y[0] == pytest.approx(100 * (440 - 319) / 440)
    assert mark.text[0] == "&lt;b&gt;x&lt;/b&gt;"


# ----------------------------------------------------------------- user text
def test_model_names_are_escaped_in_legend_and_hover():
    t = table_a()
    colors = figures.palette([EVIL])
    figs = [
        figures.stated_histogram([(EVIL, t)], colors),
        figures.per_value([(EVIL, t, metrics.per_value(t))], colors),
        figures.reliability([(EVIL, curves.isotonic_curve(t, reps=50))], colors),
    ]
    for fig in figs:
        for tr in fig.data:
            for text in (tr.name or "", getattr(tr, "hovertemplate", None) or ""):
                assert "<b>bold" not in text and "<img" not in text and "<a " not in text
        names = [tr.name for tr in fig.data if tr.name and "bold" in tr.name]
        assert names and all("&lt;b&gt;bold&lt;/b&gt;" in n for n in names)


# ----------------------------------------------------------------- recalibration / routing
def test_map_figure_shows_the_map_table():
    t = table_b()
    fit = maps.fit(t, "platt", scoring="insample", reps=0)
    grid = np.linspace(0, 100, 101)
    fig = figures.recalibration_map("b", "#0072B2", scale_lo=0, scale_hi=100, curve_x=grid,
                                    curve_y=fit.map.apply(grid), table=fit.table, method_label="Platt")
    diamonds = traces(fig, "map at each stated value")[0]
    np.testing.assert_allclose(diamonds.x, [r["stated"] for r in fit.table])
    np.testing.assert_allclose(diamonds.y, [100 * r["prob"] for r in fit.table])
    hits = traces(fig, "hit rate in the fitting data")[0]
    np.testing.assert_allclose(hits.y, 100 * np.array([22 / 38, 694 / 878, 48 / 52]))
    assert traces(fig, "no change (y = x)")


def test_risk_coverage_points_are_the_sweep():
    t = table_a()
    b = routing.basis(t)
    sw = routing.sweep(b)
    r = routing.route(b, 90.0)
    fig = figures.risk_coverage("a", "#0072B2", sw, coverage=r.coverage, risk=r.risk)
    (curve,) = traces(fig, "a")
    # accept at or above each stated value: counted here from the table
    n, k = np.array([440, 120, 300, 140]), np.array([246, 94, 222, 97])
    acc = np.array([n[i:].sum() for i in range(4)])
    wrong = np.array([(n[i:] - k[i:]).sum() for i in range(4)])
    np.testing.assert_allclose(curve.x, 100 * acc / 1000)
    np.testing.assert_allclose(curve.y, 100 * wrong / acc)
    (mark,) = traces(fig, "current threshold")
    assert mark.x[0] == pytest.approx(100 * 560 / 1000)
    assert mark.y[0] == pytest.approx(100 * (560 - 413) / 560)


# ----------------------------------------------------------- judges on different scales
def table_1_10():
    from calib.scale import Scale

    # a judge asked for 1 to 10 that answered 7, 8, 9 and 10
    return from_counts(np.array([7.0, 8, 9, 10]), np.array([100, 300, 400, 200]), np.array([60, 210, 300, 170]),
                       scale=Scale(1.0, 10.0, "1-10"))


def axis_of(fig, trace):
    """The layout x axis a trace is drawn on (``xaxis``, ``xaxis2``, ...)."""
    name = "xaxis" + (trace.xaxis[1:] if trace.xaxis and trace.xaxis != "x" else "")
    return fig.layout[name]


def test_histogram_ticks_sit_on_the_values_used():
    fig = figures.stated_histogram([("a", table_a())], figures.palette(["a"]))
    # the axis spans the values used (80-100 on 0-100), not the whole scale; ticks on the values
    lo, hi = fig.layout.xaxis.range
    assert 70 < lo < 80 and 100 < hi < 103
    assert list(fig.layout.xaxis.tickvals) == [80, 90, 95, 100]
    # values too close for their labels on a 0-100 axis: on the axis fitted to 96-100 they all have room
    dense = from_counts(np.array([96.0, 97, 98, 99, 100]), np.array([10, 50, 10, 20, 300]), np.array([5, 40, 5, 10, 200]))
    dfig = figures.stated_histogram([("d", dense)], figures.palette(["d"]))
    ticks = list(dfig.layout.xaxis.tickvals)
    span = dfig.layout.xaxis.range[1] - dfig.layout.xaxis.range[0]
    assert ticks == [96, 97, 98, 99, 100] and all(b - a >= figures.TICK_GAP * span for a, b in zip(ticks, ticks[1:], strict=False))
    # crowded on the visible axis: the most used keep a tick, none overlap
    crowd = from_counts(np.array([60.0, 96, 97, 98, 99, 100]), np.array([5, 10, 50, 10, 20, 300]),
                        np.array([2, 5, 40, 5, 10, 200]))
    cticks = list(figures.stated_histogram([("c", crowd)], figures.palette(["c"])).layout.xaxis.tickvals)
    assert 100 in cticks and 60 in cticks and all(b - a >= 1.4 for a, b in zip(cticks, cticks[1:], strict=False))


def test_judges_on_different_scales_get_one_axis_each():
    ta, tk, tb = table_a(), table_1_10(), table_b()
    colors = figures.palette(["a", "k", "b"])
    fig = figures.stated_histogram([("a", ta), ("k", tk), ("b", tb)], colors)
    axes = {t.name: axis_of(fig, t) for t in fig.data}
    # the two 0-100 judges share the first panel, the 1-10 judge has its own
    assert axes["a"] is axes["b"] and axes["k"] is not axes["a"]
    assert "0-100" in axes["a"].title.text and "1-10" in axes["k"].title.text
    # each axis fits the values its judges used (a: 80-100, b: 85-100; k: 7-10), with room for the bars
    a_lo, a_hi = axes["a"].range
    k_lo, k_hi = axes["k"].range
    assert 75 < a_lo < 80 and 100 < a_hi < 103 and 6 < k_lo < 7 and 10 < k_hi < 10.5
    assert list(axes["k"].tickvals) == [7, 8, 9, 10]
    assert set(axes["a"].tickvals) == {80, 85, 90, 95, 100}
    # bars of the 1-10 judge are a fraction of a unit of its own scale wide (not of 0-100)
    (k,) = traces(fig, "k")
    assert 0 < k.width <= 9 / 25 and list(k.x) == [7, 8, 9, 10]


def test_per_value_on_different_scales_uses_the_probability_axis():
    ta, tk = table_a(), table_1_10()
    rows_a, rows_k = metrics.per_value(ta), metrics.per_value(tk)
    fig = figures.per_value([("a", ta, rows_a), ("k", tk, rows_k)], figures.palette(["a", "k"]))
    (a,), (k,) = traces(fig, "a"), traces(fig, "k")
    # the true positions (in the hover) and the drawn ones, dodged apart where both sit (100%)
    np.testing.assert_allclose(np.asarray(a.customdata)[:, 5], [80, 90, 95, 100])
    np.testing.assert_allclose(np.asarray(k.customdata)[:, 5], 100 * (np.array([7, 8, 9, 10]) - 1) / 9)
    shift_a = np.asarray(a.x) - np.asarray(a.customdata)[:, 5]
    shift_k = np.asarray(k.x) - np.asarray(k.customdata)[:, 5]
    assert np.ptp(shift_a) == 0 and np.ptp(shift_k) == 0 and shift_a[0] == -shift_k[0] < 0
    np.testing.assert_array_equal(np.asarray(k.customdata)[:, 4], [7, 8, 9, 10])  # the hover's stated value
    assert "1-10" in k.hovertemplate and "probability" in fig.layout.xaxis.title.text
    ref = the_reference(fig)
    assert list(ref.x) == [0, 100] and list(ref.y) == [0, 100]
    # one scale: the stated axis, as before
    one = figures.per_value([("k", tk, rows_k)], figures.palette(["k"]))
    assert "1-10" in one.layout.xaxis.title.text and list(the_reference(one).x) == [1, 10]


def test_reliability_after_a_map_is_labelled_in_calibrated_probability():
    c = curves.value_points(table_a())
    before = figures.reliability([("a", c)], figures.palette(["a"]))
    after = figures.reliability([("a", c)], figures.palette(["a"]), calibrated=True)
    assert before.layout.xaxis.title.text == "stated confidence (%)"
    assert after.layout.xaxis.title.text == "calibrated probability (%)"
    assert traces(after, "a")[0].hovertemplate.startswith("calibrated ")
