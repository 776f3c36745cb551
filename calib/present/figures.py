"""Plotly figures built from engine results (the only module that imports plotly).

Nothing is computed here beyond laying out what :mod:`calib.table`,
:mod:`calib.curves`, :mod:`calib.maps` and :mod:`calib.routing` return: every
number a figure shows is in the result it was given.

Conventions (the same in every view and in the HTML report):

- one colour per model, from :func:`palette`, keyed by the order datasets were loaded;
- axes say what they measure and in which unit ("stated confidence (0-100)",
  "share right (%)");
- reliability-type figures carry the y = x line (trace name ``"perfect calibration"``);
- point size grows with the number of answers; hovering shows n and the hit rate;
- user text (model names) is passed through :func:`calib.present.format.esc` before it enters a
  title, legend or hover label, because Plotly renders a subset of HTML in them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from calib.present.format import esc
from calib.table import CountTable

#: Okabe-Ito colours (distinguishable with the common colour-vision deficiencies).
PALETTE: tuple[str, ...] = (
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
)
REFERENCE_NAME = "perfect calibration"
#: Names of the threshold lines on a reliability diagram (lower, upper).
THRESHOLD_NAMES = ("review threshold", "upper threshold")
THRESHOLD_COLOR = "#B00020"
#: Name of the marker of the current threshold on the risk-coverage curve.
CURRENT_NAME = "current threshold"
REFERENCE_COLOR = "#888888"
#: Height of most figures, in pixels (readable on a laptop next to the sidebar).
HEIGHT = 440
#: Plotly config: its own toolbar with PNG download, no logo, no scroll zoom.
CONFIG: dict[str, object] = {
    "displaylogo": False,
    "scrollZoom": False,
    "toImageButtonOptions": {"format": "png", "scale": 2},
    "modeBarButtonsToRemove": ["lasso2d", "select2d"],
}


def palette(names: Sequence[str]) -> dict[str, str]:
    """One colour per model name, in the given (load) order, cycling after 8."""
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


def scale_label(table: CountTable) -> str:
    """Axis title of the stated scale: ``stated confidence (0-100)``."""
    s = table.scale
    return f"stated confidence ({s.lo:g}-{s.hi:g})"


def _layout(fig: go.Figure, *, title: str, x: str, y: str, height: int = HEIGHT + 60) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0.0, "xanchor": "left"},
        xaxis_title=x,
        yaxis_title=y,
        height=height,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        # below the plot: at half a laptop screen a legend on top runs into the title. Its
        # offset is in plot heights, so it is set from the figure's height: 75 px below the
        # axis, under the axis title whatever the height (a fixed -0.16 put the legend of a
        # short figure on top of its x-axis title in the HTML report)
        legend={"orientation": "h", "yanchor": "top", "y": -75 / max(height - 100, 150), "xanchor": "left",
                "x": 0.0},
        hovermode="closest",
        # white background and light grid, set directly: a named template costs ~25 ms a
        # figure to copy, too much for a figure rebuilt on every threshold move (the
        # dashboard's theme restyles it anyway; the HTML report shows it as is)
        plot_bgcolor="white",
        paper_bgcolor="white",
        font={"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 13, "color": "#2a3f5f"},
    )
    grid = {"gridcolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "linecolor": "#C8D4E3", "showline": True}
    fig.update_xaxes(**grid)
    fig.update_yaxes(**grid)
    return fig


def reference_line(lo: float, hi: float, *, y_lo: float = 0.0, y_hi: float = 100.0) -> go.Scatter:
    """The y = x line: a stated value that meant what it said lies on it."""
    return go.Scatter(
        x=[lo, hi], y=[y_lo, y_hi], mode="lines", name=REFERENCE_NAME,
        line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1}, hoverinfo="skip",
    )


# ----------------------------------------------------------------------- scale use
#: Tick labels on a histogram closer than this share of the axis would overlap.
TICK_GAP = 0.035
#: Height of each further panel of a figure with one panel per stated scale, in pixels.
PANEL_HEIGHT = 260


def _scale_key(table: CountTable) -> tuple[float, float]:
    return float(table.scale.lo), float(table.scale.hi)


def by_scale(items: Sequence[tuple[str, CountTable]]) -> dict[tuple[float, float], list[tuple[str, CountTable]]]:
    """``(name, table)`` pairs grouped by stated scale ``(lo, hi)``, in load order."""
    out: dict[tuple[float, float], list[tuple[str, CountTable]]] = {}
    for name, t in items:
        out.setdefault(_scale_key(t), []).append((name, t))
    return out


def used_ticks(values: np.ndarray, n: np.ndarray, lo: float, hi: float, *, gap: float = TICK_GAP) -> list[float]:
    """Tick positions on the values a judge used: the most used first, each kept only if
    no kept tick is within ``gap`` of the axis (their labels would overlap); then the
    scale's ends where there is room, so the axis still shows where it starts. Sorted."""
    span = (hi - lo) or 1.0
    order = np.lexsort((values, -n))
    kept: list[float] = []
    for v in [float(values[i]) for i in order] + [float(lo), float(hi)]:
        if all(abs(v - k) >= gap * span for k in kept):
            kept.append(v)
    return sorted(kept)


def _is_discrete(t: CountTable) -> bool:
    return not (t.pooled or t.cells > 101)


def _histogram_panel(fig: go.Figure, tables: Sequence[tuple[str, CountTable]], colors: dict[str, str],
                     cell: dict[str, int]) -> None:
    """The bars (or binned histograms, for continuous scores) of models sharing one stated
    scale, on one x axis with ticks on the values they used. ``cell``: ``row``/``col`` of
    a subplot, or empty for a figure with one panel."""
    lo, hi = _scale_key(tables[0][1])
    span = (hi - lo) or 1.0
    discrete = [(name, t) for name, t in tables if _is_discrete(t)]
    # Bars sit on a numeric axis, so their width is set here, in the scale's units: the
    # closest two values used (by any model) share it among the models, side by side.
    # Left to Plotly, a model that used one value gets a bar one unit wide (0 to 1 on a
    # 0-1 scale) and grouped bars drift off the value they stand for.
    width, offsets = 0.0, {}
    if discrete:
        # values a millionth of the scale apart (float noise of a softmax) count as one
        values = np.unique(np.round((np.concatenate([t.value for _, t in discrete]) - lo) / span, 6))
        gap = span * float(np.min(np.diff(values))) if values.size > 1 else span
        gap = min(max(gap, span / 100), span / 25)
        width = 0.8 * gap / len(discrete)
        offsets = {name: -0.4 * gap + i * width for i, (name, _) in enumerate(discrete)}
    for name, t in tables:
        share = 100.0 * t.n / max(t.total, 1)
        if name not in offsets:
            # continuous confidences (log-probs): the browser sums the grid cells into
            # 50 equal-width bars; each cell's share is in the figure as it is
            fig.add_trace(go.Histogram(
                x=t.value, y=share, histfunc="sum", name=esc(name), marker_color=colors.get(name, PALETTE[0]),
                xbins={"start": lo, "end": hi + 1e-9 * span, "size": span / 50}, opacity=0.75,
                hovertemplate="stated %{x}<br>%{y:.1f}% of answers<extra>" + esc(name) + "</extra>",
            ), **cell)
            continue
        fig.add_trace(go.Bar(
            x=t.value, y=share, name=esc(name), marker_color=colors.get(name, PALETTE[0]),
            width=width, offset=offsets[name],
            customdata=np.stack([t.n, 100.0 * t.correct / np.maximum(t.n, 1)], axis=1),
            hovertemplate=(
                "stated %{x}<br>%{y:.1f}% of answers (n = %{customdata[0]:,})"
                "<br>right %{customdata[1]:.1f}%<extra>" + esc(name) + "</extra>"
            ),
        ), **cell)
    axis: dict[str, object] = {"range": [lo - 0.02 * span, hi + 0.02 * span], "title_text": scale_label(tables[0][1])}
    if discrete and len(discrete) == len(tables):
        # ticks where the bars are: a 0-100 judge that used 80, 90, 95 and 100 reads them off
        vals = np.concatenate([t.value for _, t in discrete])
        counts = np.concatenate([t.n for _, t in discrete])
        uniq, inv = np.unique(vals, return_inverse=True)
        axis.update(tickmode="array", tickvals=used_ticks(uniq, np.bincount(inv, weights=counts), lo, hi))
    else:
        axis.update(tick0=lo, dtick=span / 10)
    fig.update_xaxes(**axis, **cell)


def stated_histogram(tables: Sequence[tuple[str, CountTable]], colors: dict[str, str]) -> go.Figure:
    """How the scale was used: share of answers at each stated value, one bar series per model.

    ``tables`` are ``(model name, count table)`` pairs; groups are pooled. The bar
    height is the share of the model's answers (so models with different n compare);
    hovering gives the count. The x axis is the stated scale with ticks on the values
    used; models on different scales (a 0-100 judge and a 1-10 judge) get one panel
    each, with its own axis, since a stated 8 means nothing on the 0-100 axis.
    """
    pooled = [(name, table.pooled_over_groups()) for name, table in tables]
    groups = by_scale(pooled)
    if len(groups) <= 1:
        fig = go.Figure()
        if pooled:
            _histogram_panel(fig, pooled, colors, {})
        x = scale_label(pooled[0][1]) if pooled else "stated confidence"
        # bars with an explicit offset are drawn as placed (overlay), histograms on top of each other
        fig.update_layout(barmode="overlay")
        fig = _layout(fig, title="How the scale was used", x=x, y="share of answers (%)")
        return fig
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=len(groups), cols=1, vertical_spacing=0.5 / len(groups) / 2)
    for row, members in enumerate(groups.values(), start=1):
        _histogram_panel(fig, members, colors, {"row": row, "col": 1})
        fig.update_yaxes(title_text="share of answers (%)", row=row, col=1)
    fig.update_layout(barmode="overlay")
    height = HEIGHT + 60 + PANEL_HEIGHT * (len(groups) - 1)
    first = next(iter(groups.values()))[0][1]
    fig = _layout(fig, title="How the scale was used (one panel per stated scale)", x=scale_label(first),
                  y="share of answers (%)", height=height)
    return fig


def _size(n: np.ndarray, biggest: float) -> np.ndarray:
    """Marker diameter growing with the square root of the count (area ~ n), 6-34 px."""
    n = np.asarray(n, dtype=np.float64)
    return 6.0 + 28.0 * np.sqrt(n / max(float(biggest), 1.0))


def per_value(
    series: Sequence[tuple[str, CountTable, Sequence]], colors: dict[str, str], *, level: float = 0.95
) -> go.Figure:
    """What each stated value meant: hit rate (%) with its Wilson interval at each stated value.

    ``series`` holds ``(model name, count table, per-value rows)`` where the rows are
    :class:`calib.metrics.ValueRow` (value, prob, n, correct, hit_rate, lo, hi). A point
    on the dashed y = x line is a value that meant what it said; point area grows with
    the number of answers. The x axis is the stated scale, with ticks on the values
    used; when the models are on different scales it is the stated value as a
    probability (%) instead, where every model's y = x line is the same, and the hover
    gives the value on its own scale.
    """
    fig = go.Figure()
    scales = {_scale_key(table) for _, table, _ in series}
    on_prob = len(scales) > 1
    lo_s, hi_s, label = 0.0, 100.0, "stated confidence as a probability (%)"
    biggest = max((r.n for _, _, rows in series for r in rows), default=1)
    used: dict[float, float] = {}
    for name, table, rows in series:
        s = table.scale
        if not on_prob:
            lo_s, hi_s, label = s.lo, s.hi, scale_label(table)
        if not rows:
            continue
        stated_v = np.array([r.value for r in rows])
        x = 100.0 * np.array([r.prob for r in rows]) if on_prob else stated_v
        y = 100.0 * np.array([r.hit_rate for r in rows])
        lo = 100.0 * np.array([r.lo for r in rows])
        hi = 100.0 * np.array([r.hi for r in rows])
        n = np.array([r.n for r in rows])
        k = np.array([r.correct for r in rows])
        for xv, nv in zip(x, n, strict=True):
            used[float(xv)] = used.get(float(xv), 0.0) + float(nv)
        color = colors.get(name, PALETTE[0])
        where = f"stated %{{customdata[4]:.4g}} on {s.lo:g}-{s.hi:g} (%{{x:.1f}}%)" if on_prob else "stated %{x}"
        fig.add_trace(
            go.Scatter(
                x=x, y=y, mode="markers", name=esc(name),
                marker={"color": color, "size": _size(n, biggest), "line": {"width": 1, "color": "white"},
                        "opacity": 0.85},
                error_y={"type": "data", "symmetric": False, "array": hi - y, "arrayminus": y - lo,
                         "color": color, "thickness": 1.2, "width": 3},
                customdata=np.stack([n, k, lo, hi, stated_v], axis=1),
                hovertemplate=(
                    where + "<br>n = %{customdata[0]:,}, right %{customdata[1]:,}"
                    "<br>hit rate %{y:.1f}% [%{customdata[2]:.1f}, %{customdata[3]:.1f}]"
                    "<extra>" + esc(name) + "</extra>"
                ),
            )
        )
    fig.add_trace(reference_line(lo_s, hi_s))
    pad = 0.03 * (hi_s - lo_s)
    fig.update_xaxes(range=[lo_s - pad, hi_s + pad])
    if on_prob:
        fig.update_xaxes(tick0=0, dtick=10)
    elif used:
        vals = np.array(sorted(used))
        fig.update_xaxes(tickmode="array",
                         tickvals=used_ticks(vals, np.array([used[v] for v in vals]), lo_s, hi_s))
    fig.update_yaxes(range=[-3, 103])
    return _layout(fig, title=f"What each stated value meant (Wilson {100 * level:g}% intervals)", x=label,
                   y="share right (%)")


def letter_bias(lb, color: str) -> go.Figure:  # lb: calib.options.LetterBias
    """Per option letter: share predicted vs share gold (bars), accuracy vs mean confidence (points).

    A letter predicted far more often than it is the answer, or whose accuracy is
    below its mean confidence, shows letter bias (the class-wise view of Kull et al. 2019).
    """
    letters = [esc(x) for x in lb.letters]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=letters, y=100 * lb.predicted_share, name="predicted (%)", marker_color=color,
                         customdata=lb.predicted,
                         hovertemplate="%{x}: predicted %{customdata:,} times (%{y:.1f}%)<extra></extra>"))
    fig.add_trace(go.Bar(x=letters, y=100 * lb.gold_share, name="gold answer (%)", marker_color=REFERENCE_COLOR,
                         customdata=lb.gold,
                         hovertemplate="%{x}: the answer %{customdata:,} times (%{y:.1f}%)<extra></extra>"))
    fig.add_trace(go.Scatter(x=letters, y=100 * lb.accuracy, name="right when predicted (%)", mode="markers",
                             marker={"symbol": "diamond", "size": 11, "color": "#000000"},
                             hovertemplate="%{x}: right %{y:.1f}% when predicted<extra></extra>"))
    fig.add_trace(go.Scatter(x=letters, y=100 * lb.mean_confidence, name="mean confidence (%)", mode="markers",
                             marker={"symbol": "line-ew-open", "size": 22, "color": "#D55E00",
                                     "line": {"width": 3}},
                             hovertemplate="%{x}: mean confidence %{y:.1f}%<extra></extra>"))
    fig.update_layout(barmode="group")
    return _layout(fig, title="Per option letter", x="option letter", y="share of items / rate (%)")


def _rgba(color: str, alpha: float) -> str:
    c = color.lstrip("#")
    r, g, b = int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)
    return f"rgba({r},{g},{b},{alpha})"


def _band_trace(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, name: str, color: str, alpha: float,
                group: str, show: bool = True) -> go.Scatter:
    """A filled band between ``lo`` and ``hi`` (one closed polygon, so it toggles as one)."""
    xs = np.concatenate([x, x[::-1]])
    ys = np.concatenate([hi, lo[::-1]])
    return go.Scatter(x=xs, y=ys, fill="toself", fillcolor=_rgba(color, alpha), line={"width": 0},
                      name=name, legendgroup=group, showlegend=show, hoverinfo="skip", mode="lines")


def _marker(color: str, n: np.ndarray, biggest: float) -> dict[str, object]:
    return {"color": color, "size": _size(n, biggest), "opacity": 0.85, "line": {"width": 1, "color": "white"}}


def _error_y(y: np.ndarray, lo: np.ndarray, hi: np.ndarray, color: str) -> dict[str, object]:
    return {"type": "data", "symmetric": False, "array": hi - y, "arrayminus": y - lo, "color": color,
            "thickness": 1.2, "width": 3}


def _value_trace(c, ename: str, color: str, biggest: float, word: str) -> go.Scatter:  # c: curves.ValuePoints
    """A point per stated value at (100 prob, 100 hit_rate) with its Wilson interval."""
    x, y = 100 * c.prob, 100 * c.hit_rate
    lo, hi = 100 * c.lo, 100 * c.hi
    return go.Scatter(
        x=x, y=y, mode="markers", name=ename, legendgroup=ename, marker=_marker(color, c.n, biggest),
        error_y=_error_y(y, lo, hi, color), customdata=np.stack([c.value, c.n, c.correct, lo, hi], axis=1),
        hovertemplate=(word + " %{customdata[0]:.4g} (%{x:.1f}%)<br>n = %{customdata[1]:,}, "
                       "right %{customdata[2]:,}<br>hit rate %{y:.1f}% "
                       "[%{customdata[3]:.1f}, %{customdata[4]:.1f}]<extra>" + ename + "</extra>"),
    )


def _bin_trace(c, ename: str, color: str, biggest: float, word: str) -> go.Scatter:  # c: curves.BinnedPoints
    """A point per bin at (100 mean_prob, 100 hit_rate) with its Wilson interval, joined by a line."""
    x, y = 100 * c.mean_prob, 100 * c.hit_rate
    lo, hi = 100 * c.ci_lo, 100 * c.ci_hi
    return go.Scatter(
        x=x, y=y, mode="lines+markers", name=ename, legendgroup=ename, line={"color": color, "width": 1},
        marker=_marker(color, c.n, biggest), error_y=_error_y(y, lo, hi, color),
        customdata=np.stack([c.lo, c.hi, c.n, c.correct, lo, hi], axis=1),
        hovertemplate=("bin %{customdata[0]:.4g} to %{customdata[1]:.4g}<br>mean " + word + " %{x:.1f}%"
                       "<br>n = %{customdata[2]:,}, right %{customdata[3]:,}<br>hit rate %{y:.1f}% "
                       "[%{customdata[4]:.1f}, %{customdata[5]:.1f}]<extra>" + ename + "</extra>"),
    )


def _corp_traces(c, ename: str, color: str, biggest: float, word: str, *,  # c: curves.IsotonicCurve
                 consistency: bool) -> list[go.Scatter]:
    """The CORP curve (100 prob, 100 fitted), its confidence band and (with ``consistency``)
    the consistency band."""
    x = 100 * c.prob
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
        customdata=np.stack([c.value, c.n], axis=1),
        hovertemplate=(word + " %{customdata[0]:.4g} (%{x:.1f}%)<br>n = %{customdata[1]:,}"
                       "<br>CORP hit rate %{y:.1f}%<extra>" + ename + "</extra>"),
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
    """
    from calib import curves as _curves

    word = "calibrated" if calibrated else "stated"
    fig = go.Figure()
    biggest = 1
    for _, c in series:
        if isinstance(c, _curves.ValuePoints | _curves.BinnedPoints | _curves.IsotonicCurve) and c.n.size:
            biggest = max(biggest, int(np.max(c.n)))
    for name, c in series:
        if not isinstance(c, _curves.ValuePoints | _curves.BinnedPoints | _curves.IsotonicCurve) or not c.n.size:
            continue
        color = colors.get(name, PALETTE[0])
        if isinstance(c, _curves.ValuePoints):
            fig.add_trace(_value_trace(c, esc(name), color, biggest, word))
        elif isinstance(c, _curves.BinnedPoints):
            fig.add_trace(_bin_trace(c, esc(name), color, biggest, word))
        else:
            show_consistency = consistency_for is None or name in consistency_for
            for tr in _corp_traces(c, esc(name), color, biggest, word, consistency=show_consistency):
                fig.add_trace(tr)
    fig.add_trace(reference_line(0.0, 100.0))
    for i, t in enumerate(thresholds):
        fig.add_trace(go.Scatter(
            x=[t, t], y=[0, 100], mode="lines", name=THRESHOLD_NAMES[min(i, 1)],
            line={"color": THRESHOLD_COLOR, "width": 2, "dash": "dot" if i == 0 else "dashdot"},
            hovertemplate=THRESHOLD_NAMES[min(i, 1)] + " at %{x:.1f}%<extra></extra>",
        ))
    fig.update_xaxes(range=[-2, 102])
    fig.update_yaxes(range=[-2, 102])
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
    return reliability(series, colors, thresholds=thresholds,
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
    fitting data's hit rate there (circles, area ~ n). The y = x line is the map that
    changes nothing.
    """
    fig = go.Figure()
    ename = esc(name)
    fig.add_trace(go.Scatter(
        x=curve_x, y=100 * np.asarray(curve_y), mode="lines", name=f"{esc(method_label)} map",
        line={"color": color, "width": 2, "dash": "dash" if useless else "solid"},
        hovertemplate="stated %{x:.4g} → %{y:.1f}%<extra>" + ename + "</extra>",
    ))
    if table:
        s = np.array([r["stated"] for r in table], dtype=np.float64)
        q = np.array([r["prob"] for r in table], dtype=np.float64)
        nf = np.array([r.get("n_fit") or 0 for r in table], dtype=np.float64)
        hf = np.array([np.nan if r.get("hit_rate_fit") is None else r["hit_rate_fit"] for r in table])
        fig.add_trace(go.Scatter(
            x=s, y=100 * q, mode="markers", name="map at each stated value",
            marker={"symbol": "diamond", "size": 10, "color": color, "line": {"width": 1, "color": "white"}},
            hovertemplate="stated %{x:.4g} → calibrated %{y:.1f}%<extra>" + ename + "</extra>",
        ))
        has = nf > 0
        if has.any():
            fig.add_trace(go.Scatter(
                x=s[has], y=100 * hf[has], mode="markers", name="hit rate in the fitting data",
                marker={"size": _size(nf[has], float(nf.max())), "color": _rgba(color, 0.25),
                        "line": {"width": 1, "color": color}},
                customdata=nf[has],
                hovertemplate="stated %{x:.4g}: right %{y:.1f}% of %{customdata:,}<extra>" + ename + "</extra>",
            ))
    fig.add_trace(go.Scatter(
        x=[scale_lo, scale_hi], y=[0, 100], mode="lines", name="no change (y = x)",
        line={"color": REFERENCE_COLOR, "dash": "dot", "width": 1}, hoverinfo="skip",
    ))
    pad = 0.03 * (scale_hi - scale_lo)
    fig.update_xaxes(range=[scale_lo - pad, scale_hi + pad])
    fig.update_yaxes(range=[-3, 103])
    return _layout(fig, title="Recalibration map", x=f"stated confidence ({scale_lo:g}-{scale_hi:g})",
                   y="calibrated probability (%)")


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
    fig.update_xaxes(range=[-2, 102])
    fig.update_yaxes(rangemode="tozero")
    return _layout(fig, title="Risk–coverage: what each threshold would accept",
                   x="accepted unseen (% of items)", y="errors among accepted (%)")


def brier_vs_constant(rows: Sequence, colors: dict[str, str]) -> go.Figure:
    """Brier score of each model's stated confidence next to that of the constant
    forecast (the model's own hit rate): the blunt check of whether the number is
    worth anything. ``rows`` are :class:`calib.compare.ModelRow` (lower is better)."""
    fig = go.Figure()
    names = [esc(r.model) for r in rows]
    fig.add_trace(go.Bar(
        x=names, y=[r.brier for r in rows], name="stated confidence",
        marker_color=[colors.get(r.model, PALETTE[0]) for r in rows],
        hovertemplate="%{x}<br>Brier of the stated confidence %{y:.4f}<extra></extra>",
    ))
    fig.add_trace(go.Bar(
        x=names, y=[r.brier_constant for r in rows], name="constant (own hit rate)",
        marker={"color": "rgba(0,0,0,0)", "line": {"color": REFERENCE_COLOR, "width": 2}},
        marker_pattern_shape="/", marker_pattern_fgcolor=REFERENCE_COLOR,
        hovertemplate="%{x}<br>Brier of the constant %{y:.4f}<extra></extra>",
    ))
    fig.update_layout(barmode="group")
    return _layout(fig, title="Brier score: stated confidence vs a constant (lower is better)",
                   x="model", y="Brier score", height=380)


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
