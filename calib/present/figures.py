"""Plotly figures built from engine results: the reliability diagram, the recalibration map,
the risk-coverage curve, the Brier comparison, and the moves of a threshold line.

Nothing is computed here beyond laying out what :mod:`calib.table`,
:mod:`calib.curves`, :mod:`calib.maps` and :mod:`calib.routing` return: every
number a figure shows is in the result it was given (binning a continuous map's
fitting data for display, :func:`calib.present.axes.fit_bins`, is the one summary drawn).
How the scale was used is in :mod:`calib.present.scale_figures`, the shared look in
:mod:`calib.present.plot_base`; both are re-exported here.

Conventions (the same in every view, in the HTML report and in the static figures):

- one colour per model, from :func:`palette` (Okabe-Ito), keyed by the order datasets were loaded;
- axes say what they measure and in which unit ("stated confidence (0-100)",
  "share right (%)"), and fit the data drawn (:mod:`calib.present.axes`), the y = x line
  still crossing reliability-type figures (trace name ``"perfect calibration"``);
- models at the same stated value stand side by side (dodged), every point and bar carries
  its interval, point size grows with the number of answers, and hovering shows n, the
  rate and its interval;
- user text (model names) is passed through :func:`calib.present.format.esc` before it enters a
  title, legend or hover label, because Plotly renders a subset of HTML in them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from calib.present.axes import (  # noqa: F401 - TICK_GAP, used_ticks: re-exported
    FIT_BINS,
    FIT_POINTS_MAX,
    TICK_GAP,
    curve_extent,
    diagonal_ranges,
    dodge,
    fit_bins,
    fit_range,
    used_ticks,
)
from calib.present.format import esc
from calib.present.plot_base import (  # noqa: F401 - the shared look, re-exported for the other figure modules
    CONFIG,
    CURRENT_NAME,
    HEIGHT,
    PALETTE,
    REFERENCE_COLOR,
    REFERENCE_NAME,
    THRESHOLD_COLOR,
    THRESHOLD_NAMES,
    _band_trace,
    _error_y,
    _layout,
    _marker,
    _rgba,
    _size,
    palette,
    reference_line,
    scale_label,
)
from calib.present.scale_figures import (  # noqa: F401 - how the scale was used, re-exported
    BAR_VALUES,
    PANEL_HEIGHT,
    by_scale,
    letter_bias,
    per_value,
    stated_histogram,
)


def _value_trace(c, ename: str, color: str, biggest: float, word: str,  # c: curves.ValuePoints
                 offset: float = 0.0) -> go.Scatter:
    """A point per stated value at (100 prob + offset, 100 hit_rate) with its Wilson interval
    (``offset``: the dodge that keeps judges at the same value apart; the hover says the value)."""
    x, y = 100 * c.prob, 100 * c.hit_rate
    lo, hi = 100 * c.lo, 100 * c.hi
    return go.Scatter(
        x=x + offset, y=y, mode="markers", name=ename, legendgroup=ename, marker=_marker(color, c.n, biggest),
        error_y=_error_y(y, lo, hi, color), customdata=np.stack([c.value, c.n, c.correct, lo, hi, x], axis=1),
        hovertemplate=(word + " %{customdata[0]:.4g} (%{customdata[5]:.1f}%)<br>n = %{customdata[1]:,}, "
                       "right %{customdata[2]:,}<br>hit rate %{y:.1f}%, interval "
                       "[%{customdata[3]:.1f}%, %{customdata[4]:.1f}%]<extra>" + ename + "</extra>"),
    )


def _bin_trace(c, ename: str, color: str, biggest: float, word: str,  # c: curves.BinnedPoints
               offset: float = 0.0) -> go.Scatter:
    """A point per bin at (100 mean_prob + offset, 100 hit_rate) with its Wilson interval, joined by a line."""
    x, y = 100 * c.mean_prob, 100 * c.hit_rate
    lo, hi = 100 * c.ci_lo, 100 * c.ci_hi
    return go.Scatter(
        x=x + offset, y=y, mode="lines+markers", name=ename, legendgroup=ename, line={"color": color, "width": 1},
        marker=_marker(color, c.n, biggest), error_y=_error_y(y, lo, hi, color),
        customdata=np.stack([c.lo, c.hi, c.n, c.correct, lo, hi, x], axis=1),
        hovertemplate=("bin %{customdata[0]:.4g} to %{customdata[1]:.4g}<br>mean " + word + " %{customdata[6]:.1f}%"
                       "<br>n = %{customdata[2]:,}, right %{customdata[3]:,}<br>hit rate %{y:.1f}%, interval "
                       "[%{customdata[4]:.1f}%, %{customdata[5]:.1f}%]<extra>" + ename + "</extra>"),
    )


def _corp_traces(c, ename: str, color: str, biggest: float, word: str, *,  # c: curves.IsotonicCurve
                 consistency: bool, offset: float = 0.0) -> list[go.Scatter]:
    """The CORP curve (100 prob + offset, 100 fitted), its confidence band and (with
    ``consistency``) the consistency band."""
    true_x = 100 * c.prob
    x = true_x + offset
    out = []
    if np.isfinite(c.consistency_lo).any() and consistency:
        out.append(_band_trace(x, 100 * c.consistency_lo, 100 * c.consistency_hi,
                               name=f"consistency band ({ename})", color=REFERENCE_COLOR, alpha=0.18,
                               group=ename + "-cons"))
    if np.isfinite(c.confidence_lo).any():
        out.append(_band_trace(x, 100 * c.confidence_lo, 100 * c.confidence_hi,
                               name=f"confidence band ({ename})", color=color, alpha=0.22, group=ename))
    out.append(go.Scatter(
        x=x, y=100 * c.fitted, mode="lines+markers", name=ename, legendgroup=ename,
        line={"color": color, "width": 2}, marker=_marker(color, c.n, biggest),
        customdata=np.stack([c.value, c.n, 100 * c.confidence_lo, 100 * c.confidence_hi, true_x], axis=1),
        hovertemplate=(word + " %{customdata[0]:.4g} (%{customdata[4]:.1f}%)<br>n = %{customdata[1]:,}"
                       "<br>CORP hit rate %{y:.1f}%, band [%{customdata[2]:.1f}%, %{customdata[3]:.1f}%]"
                       "<extra>" + ename + "</extra>"),
    ))
    return out


def reliability(
    series: Sequence[tuple[str, object]],
    colors: dict[str, str],
    *,
    thresholds: Sequence[float] = (),
    title: str = "Reliability diagram",
    consistency_for: Sequence[str] | None = None,
    calibrated: bool = False,
    apart: bool = True,
) -> go.Figure:
    """Reliability diagram: hit rate against stated confidence, both in percent.

    ``series`` holds ``(model name, curve)`` with a curve from :mod:`calib.curves`:

    - :class:`~calib.curves.ValuePoints`: a point per stated value at ``(100 prob,
      100 hit_rate)`` with its Wilson interval, area ~ n;
    - :class:`~calib.curves.BinnedPoints`: a point per bin at ``(100 mean_prob,
      100 hit_rate)`` with its Wilson interval, area ~ n;
    - :class:`~calib.curves.IsotonicCurve`: the CORP curve ``(100 prob, 100 fitted)``
      with its bootstrap confidence band (the model's colour) and the consistency band
      (grey: where a calibrated forecaster's curve would fall).

    ``thresholds`` (in percent of the probability scale) are drawn as vertical lines.
    ``consistency_for`` limits the consistency bands to these models (all when ``None``):
    with several models, grey bands on top of each other hide more than they show.
    The x axis is the stated probability in percent so that models on different
    stated scales share one diagram; the hover shows the stated value itself.
    ``calibrated``: the curves are of a recalibrated table (a map applied), so the x
    axis and the hover say "calibrated probability", not "stated".
    ``apart``: series sharing stated values stand side by side (:func:`calib.present.axes.dodge`;
    the hover gives the value itself); ``False`` when the series are views of one dataset
    (its points and its CORP curve, :func:`reliability_one`), which must line up.
    """
    from calib import curves as _curves

    word = "calibrated" if calibrated else "stated"
    fig = go.Figure()
    kinds = _curves.ValuePoints | _curves.BinnedPoints | _curves.IsotonicCurve
    drawn = [(name, c) for name, c in series if isinstance(c, kinds) and c.n.size]
    biggest = max([1, *(int(np.max(c.n)) for _, c in drawn)])
    # judges at the same value stand side by side (their markers would hide each other)
    shifts = dodge([curve_extent(c)[0] for _, c in drawn], span=100.0) if apart else [0.0] * len(drawn)
    offsets = dict(zip([n for n, _ in drawn], shifts, strict=True))
    xs: list[float] = []
    ys: list[float] = []
    for name, c in drawn:
        color = colors.get(name, PALETTE[0])
        ex, ey = curve_extent(c)
        xs += ex
        ys += ey
        if isinstance(c, _curves.ValuePoints):
            fig.add_trace(_value_trace(c, esc(name), color, biggest, word, offsets[name]))
        elif isinstance(c, _curves.BinnedPoints):
            fig.add_trace(_bin_trace(c, esc(name), color, biggest, word, offsets[name]))
        else:
            show_consistency = consistency_for is None or name in consistency_for
            for tr in _corp_traces(c, esc(name), color, biggest, word, consistency=show_consistency,
                                   offset=offsets[name]):
                fig.add_trace(tr)
    fig.add_trace(reference_line(0.0, 100.0))
    for i, t in enumerate(thresholds):
        fig.add_trace(go.Scatter(
            x=[t, t], y=[0, 100], mode="lines", name=THRESHOLD_NAMES[min(i, 1)],
            line={"color": THRESHOLD_COLOR, "width": 2, "dash": "dot" if i == 0 else "dashdot"},
            hovertemplate=THRESHOLD_NAMES[min(i, 1)] + " at %{x:.1f}%<extra></extra>",
        ))
    # the axes fit the data (the diagonal still crossing them), not 0-100: a judge stating
    # 80-100 would otherwise have its story in the right fifth of the figure
    x_range, y_range = diagonal_ranges(xs, ys)
    fig.update_xaxes(range=list(x_range))
    fig.update_yaxes(range=list(y_range))
    x = "calibrated probability (%)" if calibrated else "stated confidence (%)"
    return _layout(fig, title=title, x=x, y="share right (%)")


def reliability_one(
    name: str, points: object, corp: object | None = None, *, title: str | None = None,
    thresholds: Sequence[float] = (),
) -> go.Figure:
    """Reliability diagram of one dataset, on its own (what ``calib audit --plot`` writes).

    ``points`` is a :class:`~calib.curves.ValuePoints` (one point per stated value)
    or :class:`~calib.curves.BinnedPoints`, drawn in the first colour; ``corp``, when
    given, is the :class:`~calib.curves.IsotonicCurve`, drawn underneath in the second
    colour with its confidence and consistency bands. Laid out by :func:`reliability`;
    the dataset's ``name`` goes in the title (escaped here, as is ``title``).
    """
    from calib import curves as _curves

    label = "hit rate at each stated value" if isinstance(points, _curves.ValuePoints) else "hit rate per bin"
    corp_label = "CORP isotonic curve"
    series: list[tuple[str, object]] = [(corp_label, corp)] if corp is not None else []
    series.append((label, points))
    colors = {label: PALETTE[0], corp_label: PALETTE[1]}
    return reliability(series, colors, thresholds=thresholds, apart=False,
                       title=esc(title) if title is not None else f"Reliability diagram: {esc(name)}")


def recalibration_map(
    name: str, color: str, *, scale_lo: float, scale_hi: float, curve_x: np.ndarray, curve_y: np.ndarray,
    table: Sequence[dict], method_label: str, useless: bool = False,
) -> go.Figure:
    """The fitted map: calibrated probability (%) against the stated value.

    ``curve_x``/``curve_y`` are the map evaluated on a grid of stated values (by the
    map itself, :meth:`calib.maps.CalibrationMap.apply`); ``table`` is
    :attr:`calib.maps.FitResult.table` (``stated``, ``prob``, ``n_fit``,
    ``hit_rate_fit``): the map's value at each stated value used (diamonds) and the
    fitting data's hit rate there (circles, area ~ n, with Wilson intervals). A
    continuous score (more than :data:`FIT_POINTS_MAX` distinct values) shows its fitting
    data in equal-mass bins instead (:func:`fit_bins`), and no diamonds (the curve is the map).
    A 0-1 score is drawn in percent, so both axes have one unit. The y = x line is the
    map that changes nothing; the axes fit the values used.
    """
    from calib.metrics.values import wilson_interval

    fig = go.Figure()
    ename = esc(name)
    prob_scale = (float(scale_lo), float(scale_hi)) == (0.0, 1.0)
    unit = 100.0 if prob_scale else 1.0
    span = (scale_hi - scale_lo) or 1.0
    fig.add_trace(go.Scatter(
        x=unit * np.asarray(curve_x, dtype=np.float64), y=100 * np.asarray(curve_y), mode="lines",
        name=f"{esc(method_label)} map", line={"color": color, "width": 2, "dash": "dash" if useless else "solid"},
        hovertemplate="stated %{x:.4g} → %{y:.1f}%<extra>" + ename + "</extra>",
    ))
    xs: list[float] = []
    ys: list[float] = list(100 * np.asarray(curve_y, dtype=np.float64))
    if table:
        s = np.array([r["stated"] for r in table], dtype=np.float64)
        q = np.array([r["prob"] for r in table], dtype=np.float64)
        nf = np.array([r.get("n_fit") or 0 for r in table], dtype=np.float64)
        hf = np.array([np.nan if r.get("hit_rate_fit") is None else r["hit_rate_fit"] for r in table])
        xs += list(unit * s)
        continuous = s.size > FIT_POINTS_MAX
        if not continuous:
            fig.add_trace(go.Scatter(
                x=unit * s, y=100 * q, mode="markers", name="map at each stated value",
                marker={"symbol": "diamond", "size": 10, "color": color, "line": {"width": 1, "color": "white"}},
                hovertemplate="stated %{x:.4g} → calibrated %{y:.1f}%<extra>" + ename + "</extra>",
            ))
        has = nf > 0
        if has.any():
            if continuous:
                b = fit_bins(s[has], nf[has], hf[has])
                x, lo_s, hi_s, n, k, rate, c_lo, c_hi = (b[key] for key in ("x", "lo", "hi", "n", "k", "rate",
                                                                              "ci_lo", "ci_hi"))
                name_pts = f"hit rate in the fitting data ({x.size} equal-count bins)"
            else:
                x, n, rate = s[has], nf[has], np.nan_to_num(hf[has])
                k = np.round(n * rate)
                c_lo, c_hi = wilson_interval(k, n)
                lo_s = hi_s = x
                name_pts = "hit rate in the fitting data"
            y, lo, hi = 100 * rate, 100 * c_lo, 100 * c_hi
            ys += [*lo, *hi]
            fig.add_trace(go.Scatter(
                x=unit * x, y=y, mode="markers", name=name_pts,
                marker={"size": _size(n, float(n.max())), "color": _rgba(color, 0.25),
                        "line": {"width": 1, "color": color}},
                error_y=_error_y(y, lo, hi, color),
                customdata=np.stack([n, k, lo, hi, unit * lo_s, unit * hi_s], axis=1),
                hovertemplate=("stated %{customdata[4]:.4g} to %{customdata[5]:.4g}<br>n = %{customdata[0]:,}, "
                               "right %{customdata[1]:,}<br>hit rate %{y:.1f}%, 95% interval "
                               "[%{customdata[2]:.1f}%, %{customdata[3]:.1f}%]<extra>" + ename + "</extra>"),
            ))
    fig.add_trace(go.Scatter(
        x=[unit * scale_lo, unit * scale_hi], y=[0, 100], mode="lines", name="no change (y = x)",
        line={"color": REFERENCE_COLOR, "dash": "dot", "width": 1}, hoverinfo="skip",
    ))
    # in percent of the scale, where "no change" is the diagonal
    pct_x = [100 * (x / unit - scale_lo) / span for x in xs] if xs else [0.0, 100.0]
    (px_lo, px_hi), y_range = diagonal_ranges(pct_x, ys)
    fig.update_xaxes(range=[unit * (scale_lo + px_lo * span / 100), unit * (scale_lo + px_hi * span / 100)])
    fig.update_yaxes(range=list(y_range))
    x_title = "stated probability (%)" if prob_scale else f"stated confidence ({scale_lo:g}-{scale_hi:g})"
    return _layout(fig, title="Recalibration map", x=x_title, y="calibrated probability (%)")


def risk_coverage(name: str, color: str, sweep, *, coverage: float | None = None, risk: float | None = None,
                  threshold_text: str = "", unit: str = "") -> go.Figure:
    """Risk–coverage curve (Geifman & El-Yaniv 2017): share of items accepted unseen
    against the error rate among them, one point per possible threshold.

    ``sweep`` is a :class:`calib.routing.Sweep`; ``coverage``/``risk`` (fractions)
    mark where the current threshold sits. The dotted line is the top of the
    two-sided Wilson interval of the error rate at ``sweep.level`` (a one-sided upper
    bound at ``(1 + level) / 2``; a conservative reading where few items are accepted).
    """
    ename = esc(name)
    cov = 100 * np.asarray(sweep.coverage, dtype=np.float64)
    risk_pct = 100 * np.asarray(sweep.risk, dtype=np.float64)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=cov, y=100 * np.asarray(sweep.risk_upper, dtype=np.float64), mode="lines",
        name=f"top of the {100 * sweep.level:g}% Wilson interval", line={"color": color, "dash": "dot", "width": 1},
        hoverinfo="skip",
    ))
    fig.add_trace(go.Scatter(
        x=cov, y=risk_pct, mode="lines+markers", name=ename, line={"color": color, "width": 2, "shape": "hv"},
        marker={"size": 5, "color": color},
        customdata=np.stack([sweep.threshold, sweep.accepted, sweep.errors_slipping], axis=1),
        hovertemplate=("accept at or above %{customdata[0]:.4g}" + esc(unit) + "<br>accepted %{x:.1f}% "
                       "(%{customdata[1]:,})<br>errors among them %{y:.1f}% (%{customdata[2]:,})"
                       "<extra>" + ename + "</extra>"),
    ))
    fig.add_trace(go.Scatter(
        x=[None if coverage is None else 100 * coverage], y=[None if risk is None else 100 * risk],
        mode="markers", name=CURRENT_NAME, text=[esc(threshold_text)],
        marker={"symbol": "x", "size": 14, "color": THRESHOLD_COLOR, "line": {"width": 2}},
        hovertemplate="%{text}<br>accepted %{x:.1f}%<br>errors among them %{y:.1f}%<extra></extra>",
    ))
    fig.update_xaxes(range=list(fit_range(cov)))
    fig.update_yaxes(range=list(fit_range([*risk_pct, *(100 * np.asarray(sweep.risk_upper, dtype=np.float64))])))
    return _layout(fig, title="Risk–coverage<br><sup>what each threshold would accept</sup>",
                   x="accepted unseen (% of items)", y="errors among accepted (%)")


def _ci_arrays(values: Sequence[float | None], cis: Sequence[Sequence[float | None]]) -> dict[str, object]:
    """Plotly ``error_y`` of bars ``values`` with intervals ``cis`` (``(lo, hi)``, missing ends drawn as none)."""
    v = np.array([np.nan if x is None else x for x in values], dtype=np.float64)
    lo = np.array([np.nan if c[0] is None else c[0] for c in cis], dtype=np.float64)
    hi = np.array([np.nan if c[1] is None else c[1] for c in cis], dtype=np.float64)
    return {"type": "data", "symmetric": False, "array": np.nan_to_num(hi - v), "arrayminus": np.nan_to_num(v - lo),
            "color": "#333333", "thickness": 1.2, "width": 4}


def brier_vs_constant(rows: Sequence, colors: dict[str, str]) -> go.Figure:
    """Brier score of each model's stated confidence next to that of the constant
    forecast (the model's own hit rate): the blunt check of whether the number is
    worth anything. ``rows`` are :class:`calib.compare.ModelRow` (lower is better); each bar
    (horizontal, one pair per model) carries its bootstrap interval (``brier``,
    ``brier_constant``: :class:`~calib.estimates.Estimate`), and the hover n, the score and the interval."""
    fig = go.Figure()
    names = [esc(r.model) for r in rows]
    none = (None, None)
    for label, get, ci_of, style in (
        ("stated confidence", lambda r: r.brier.value, lambda r: r.brier.ci,
         {"marker_color": [colors.get(r.model, PALETTE[0]) for r in rows]}),
        ("constant (own hit rate)", lambda r: r.brier_constant.value, lambda r: r.brier_constant.ci,
         {"marker": {"color": "rgba(0,0,0,0)", "line": {"color": REFERENCE_COLOR, "width": 2}},
          "marker_pattern_shape": "/", "marker_pattern_fgcolor": REFERENCE_COLOR}),
    ):
        vals = [get(r) for r in rows]
        cis = [tuple(ci_of(r) or none) for r in rows]
        fig.add_trace(go.Bar(
            y=names, x=vals, name=label, orientation="h", error_x=_ci_arrays(vals, cis),
            customdata=np.array([[r.n, np.nan if c[0] is None else c[0], np.nan if c[1] is None else c[1]]
                                 for r, c in zip(rows, cis, strict=True)], dtype=np.float64).reshape(-1, 3),
            hovertemplate=("%{y}: n = %{customdata[0]:,}<br>Brier of the " + label + " %{x:.4f}"
                           "<br>interval [%{customdata[1]:.4f}, %{customdata[2]:.4f}]<extra></extra>"),
            **style,
        ))
    # horizontal: model names (user text, any length) read on the y axis at any width, where
    # below the bars a phone would rotate them into the legend; the first model on top
    fig.update_layout(barmode="group")
    fig.update_yaxes(autorange="reversed", automargin=True)
    return _layout(fig, title="Brier score (lower is better)<br><sup>stated confidence vs a constant forecast</sup>",
                   x="Brier score (0 = perfect)", y="", height=230 + 70 * len(rows))


# ------------------------------------------------------------------ moving a threshold
# A threshold move changes one line of the reliability diagram and one marker of the
# risk-coverage curve. Rebuilding a Plotly figure costs tens of milliseconds; the
# dashboard keeps each figure and moves these traces instead (a fraction of a ms).
def move_threshold_lines(fig: go.Figure, xs: Sequence[float]) -> go.Figure:
    """Put the threshold lines of a :func:`reliability` figure at ``xs`` (percent);
    a line without a position is hidden. The figure must have been built with as
    many thresholds as it may show (positions do not matter)."""
    for i, name in enumerate(THRESHOLD_NAMES):
        for tr in fig.data:
            if tr.name == name:
                if i < len(xs):
                    tr.x = [xs[i], xs[i]]
                    tr.visible = True
                else:
                    tr.visible = False
    return fig


def move_marker(fig: go.Figure, coverage: float | None, risk: float | None, text: str = "") -> go.Figure:
    """Put the current-threshold marker of a :func:`risk_coverage` figure at
    ``(coverage, risk)`` (fractions)."""
    for tr in fig.data:
        if tr.name == CURRENT_NAME:
            tr.x = [None if coverage is None else 100 * coverage]
            tr.y = [None if risk is None else 100 * risk]
            tr.text = [esc(text)]
    return fig
