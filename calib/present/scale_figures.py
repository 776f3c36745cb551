"""Plotly figures of how the scale was used: the share of answers at each stated value, what
each value meant (hit rate with its Wilson interval), and the per-letter view of a
multiple-choice judge.

Contract
--------
Each function takes count tables or engine results (:class:`calib.table.CountTable`,
:class:`calib.metrics.ValueRow`, :class:`calib.options.LetterBias`) and lays them out with
the conventions of :mod:`calib.present.plot_base`; axes fit the values used
(:mod:`calib.present.axes`), judges at the same value stand side by side, and every point
carries its interval. Re-exported by :mod:`calib.present.figures`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from calib.present.axes import TICK_GAP, diagonal_ranges, dodge, fit_range, used_ticks
from calib.present.format import esc
from calib.present.plot_base import (
    HEIGHT,
    PALETTE,
    REFERENCE_COLOR,
    _error_y,
    _layout,
    _size,
    reference_line,
    scale_label,
)
from calib.table import CountTable

#: Height of each further panel of a figure with one panel per stated scale, in pixels.
PANEL_HEIGHT = 260


def _scale_key(table: CountTable) -> tuple[float, float]:
    return float(table.scale.lo), float(table.scale.hi)


def by_scale(
    items: Sequence[tuple[str, CountTable]],
) -> dict[tuple[float, float], list[tuple[str, CountTable]]]:
    """``(name, table)`` pairs grouped by stated scale ``(lo, hi)``, in load order."""
    out: dict[tuple[float, float], list[tuple[str, CountTable]]] = {}
    for name, t in items:
        out.setdefault(_scale_key(t), []).append((name, t))
    return out


def _narrow(t: CountTable) -> bool:
    """A continuous score using less than a third of its scale gets bins of 1% of it (not 2%)."""
    v = np.asarray(t.value, dtype=np.float64)
    return bool(v.size and np.ptp(v) < (t.scale.hi - t.scale.lo) / 3)


@dataclass(frozen=True)
class BinnedShares:
    """A continuous score's answers in equal-width bins of its scale: ``edges`` (``bins + 1``
    of them), ``centers``, the bins' ``width``, each bin's answers ``n`` and its ``share`` of
    all answers in percent."""

    edges: np.ndarray
    centers: np.ndarray
    width: float
    n: np.ndarray
    share: np.ndarray


def binned_shares(t: CountTable, lo: float, hi: float, bins: int) -> BinnedShares:
    """The answers of ``t`` in ``bins`` equal-width bins from ``lo`` to ``hi``; each bin is
    half-open ``[a, b)`` except the last, which holds ``hi`` (``numpy.histogram``'s rule)."""
    edges = np.linspace(lo, hi if hi > lo else lo + 1.0, bins + 1)
    n, _ = np.histogram(np.asarray(t.value, dtype=np.float64), bins=edges, weights=np.asarray(t.n, dtype=np.float64))
    share = 100.0 * n / max(t.total, 1)
    return BinnedShares(edges, 0.5 * (edges[:-1] + edges[1:]), float(edges[1] - edges[0]), n.astype(np.int64), share)


#: At most this many distinct values are drawn as bars whatever they are.
BAR_VALUES = 30


def _is_discrete(t: CountTable) -> bool:
    """Bars at each value: few values, or values on a grid of whole percent of the scale (a
    0-100 judge using 45 of them); otherwise (softmax scores) a binned histogram."""
    if t.pooled or t.cells > 101:
        return False
    if t.cells <= BAR_VALUES:
        return True
    grid = 100 * (np.asarray(t.value, dtype=np.float64) - t.scale.lo) / ((t.scale.hi - t.scale.lo) or 1.0)
    return bool(np.allclose(grid, np.round(grid), atol=1e-6))


def _wilson_pct(t: CountTable) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson 95% interval of the hit rate at each value, in percent (for the bars' hover)."""
    from calib.metrics.values import wilson_interval

    lo, hi = wilson_interval(t.correct, t.n)
    return 100 * lo, 100 * hi


def _histogram_panel(
    fig: go.Figure, tables: Sequence[tuple[str, CountTable]], colors: dict[str, str], cell: dict[str, int]
) -> None:
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
            # continuous confidences (log-probs): the grid cells summed into equal-width bins
            # here (the dashboard draws with plotly.js's basic bundle, which has bars but no
            # histogram trace); each bar's hover gives its range and its count of answers
            bins = binned_shares(t, lo, hi, 100 if _narrow(t) else 50)
            fig.add_trace(
                go.Bar(
                    x=bins.centers,
                    y=bins.share,
                    width=bins.width,
                    name=esc(name),
                    marker_color=colors.get(name, PALETTE[0]),
                    opacity=0.75,
                    customdata=np.stack([bins.edges[:-1], bins.edges[1:], bins.n], axis=1),
                    hovertemplate=(
                        "stated %{customdata[0]:.4g} to %{customdata[1]:.4g}"
                        "<br>%{y:.1f}% of answers (n = %{customdata[2]:,})<extra>" + esc(name) + "</extra>"
                    ),
                ),
                **cell,
            )
            continue
        fig.add_trace(
            go.Bar(
                x=t.value,
                y=share,
                name=esc(name),
                marker_color=colors.get(name, PALETTE[0]),
                width=width,
                offset=offsets[name],
                customdata=np.stack([t.n, 100.0 * t.correct / np.maximum(t.n, 1), *_wilson_pct(t)], axis=1),
                hovertemplate=(
                    "stated %{x}<br>%{y:.1f}% of answers (n = %{customdata[0]:,})"
                    "<br>right %{customdata[1]:.1f}%, 95% interval [%{customdata[2]:.1f}%, %{customdata[3]:.1f}%]"
                    "<extra>" + esc(name) + "</extra>"
                ),
            ),
            **cell,
        )
    fig.update_xaxes(**_histogram_axis(tables, discrete, width), **cell)


def _histogram_axis(
    tables: Sequence[tuple[str, CountTable]], discrete: Sequence[tuple[str, CountTable]], width: float
) -> dict[str, object]:
    """The x axis of a histogram panel: it spans the values used (and half a bar group beyond),
    not the whole scale (a judge stating 80-100 on 0-100 would fill a fifth of it); the title
    names the scale; ticks sit on the values used when every model's are bars."""
    lo, hi = _scale_key(tables[0][1])
    span = (hi - lo) or 1.0
    used = np.concatenate([t.value for _, t in tables]) if tables else np.array([lo, hi])
    r_lo, r_hi = fit_range(used, bounds=(lo, hi))
    if discrete:
        half = 0.5 * width * len(discrete) + 0.01 * span
        r_lo, r_hi = min(r_lo, float(used.min()) - half), max(r_hi, float(used.max()) + half)
    axis: dict[str, object] = {"range": [r_lo, r_hi], "title_text": scale_label(tables[0][1])}
    if discrete and len(discrete) == len(tables):
        # ticks where the bars are: a 0-100 judge that used 80, 90, 95 and 100 reads them off
        vals = np.concatenate([t.value for _, t in discrete])
        counts = np.concatenate([t.n for _, t in discrete])
        uniq, inv = np.unique(vals, return_inverse=True)
        ticks = used_ticks(
            uniq, np.bincount(inv, weights=counts), lo, hi, gap=TICK_GAP * (r_hi - r_lo) / span
        )
        axis.update(tickmode="array", tickvals=[t for t in ticks if r_lo <= t <= r_hi])
        axis.update(_phrase_ticks(tables[0][1], axis["tickvals"]))  # type: ignore[arg-type]
    else:
        axis.update(tick0=lo, dtick=span / 10)
    return axis


def _phrase_ticks(t: CountTable, ticks: Sequence[float]) -> dict[str, object]:
    """Confidence in words: the phrases as the tick labels of a scale of phrases (:mod:`calib.verbal`)."""
    if not t.scale.labels:
        return {}
    ranks = [float(v) for v in ticks if float(v).is_integer() and 1 <= v <= len(t.scale.labels)]  # not the ends
    return {"tickvals": ranks, "ticktext": [t.scale.show(v) for v in ranks]}


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
    fig = _layout(
        fig,
        title="How the scale was used (one panel per stated scale)",
        x=scale_label(first),
        y="share of answers (%)",
        height=height,
    )
    return fig


def _value_rows_trace(
    name: str,
    s,
    rows: Sequence,
    x: np.ndarray,
    off: float,
    color: str,
    biggest: float,
    level: float,
    on_prob: bool,
) -> go.Scatter:
    """One model's points of :func:`per_value` at ``x + off`` (``s``: its :class:`calib.scale.Scale`)."""
    stated_v = np.array([r.value for r in rows])
    y = 100.0 * np.array([r.hit_rate.value for r in rows])
    lo = 100.0 * np.array([r.hit_rate.lo for r in rows])
    hi = 100.0 * np.array([r.hit_rate.hi for r in rows])
    n = np.array([r.n for r in rows])
    k = np.array([r.correct for r in rows])
    where = (
        f"stated %{{customdata[4]:.4g}} on {s.lo:g}-{s.hi:g} (%{{customdata[5]:.1f}}%)"
        if on_prob
        else "stated %{customdata[4]:.4g}"
    )
    return go.Scatter(
        x=x + off,
        y=y,
        mode="markers",
        name=esc(name),
        marker={
            "color": color,
            "size": _size(n, biggest),
            "line": {"width": 1, "color": "white"},
            "opacity": 0.75,
        },
        error_y=_error_y(y, lo, hi, color),
        customdata=np.stack([n, k, lo, hi, stated_v, x], axis=1),
        hovertemplate=(
            where + "<br>n = %{customdata[0]:,}, right %{customdata[1]:,}"
            "<br>hit rate %{y:.1f}%, " + f"{100 * level:g}% interval"
            " [%{customdata[2]:.1f}%, %{customdata[3]:.1f}%]<extra>" + esc(name) + "</extra>"
        ),
    )


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
    gives the value on its own scale. Models at the same stated value stand side by side
    (:func:`calib.present.axes.dodge`; the hover gives the value itself), and both axes
    fit the values used and their intervals (:func:`calib.present.axes.diagonal_ranges`).
    """
    fig = go.Figure()
    scales = {_scale_key(table) for _, table, _ in series}
    on_prob = len(scales) > 1
    lo_s, hi_s, label = 0.0, 100.0, "stated confidence as a probability (%)"
    if not on_prob and series:
        s0 = series[0][1].scale
        lo_s, hi_s, label = float(s0.lo), float(s0.hi), scale_label(series[0][1])
    span = (hi_s - lo_s) or 1.0
    biggest = max((r.n for _, _, rows in series for r in rows), default=1)
    xs_of = [
        100.0 * np.array([r.prob for r in rows])
        if on_prob
        else np.array([r.value for r in rows], dtype=float)
        for _, _, rows in series
    ]
    offsets = dodge(xs_of, span=span)
    used: dict[float, float] = {}
    drawn_x: list[float] = []
    drawn_y: list[float] = []
    for (name, table, rows), x, off in zip(series, xs_of, offsets, strict=True):
        s = table.scale
        if not rows:
            continue
        n = np.array([r.n for r in rows])
        for xv, nv in zip(x, n, strict=True):
            used[float(xv)] = used.get(float(xv), 0.0) + float(nv)
        tr = _value_rows_trace(name, s, rows, x, off, colors.get(name, PALETTE[0]), biggest, level, on_prob)
        # in percent of the scale, where the diagonal is y = x
        drawn_x += list(100.0 * (x - lo_s) / span)
        drawn_y += [*(tr.y - tr.error_y.arrayminus), *(tr.y + tr.error_y.array), *tr.y]
        fig.add_trace(tr)
    fig.add_trace(reference_line(lo_s, hi_s))
    (px_lo, px_hi), y_range = diagonal_ranges(drawn_x, drawn_y)
    fig.update_xaxes(range=[lo_s + px_lo * span / 100, lo_s + px_hi * span / 100])
    fig.update_yaxes(range=list(y_range))
    if on_prob:
        fig.update_xaxes(tick0=0, dtick=10)
    elif used:
        vals = np.array(sorted(used))
        ticks = used_ticks(vals, np.array([used[v] for v in vals]), lo_s, hi_s, gap=TICK_GAP * (px_hi - px_lo) / 100)
        fig.update_xaxes(tickmode="array", **{"tickvals": ticks, **_phrase_ticks(series[0][1], ticks)})
    return _layout(
        fig,
        title=f"What each stated value meant<br><sup>share right with its {100 * level:g}% Wilson interval</sup>",
        x=label,
        y="share right (%)",
    )


def letter_bias(lb, color: str) -> go.Figure:  # lb: calib.options.LetterBias
    """Per option letter: share predicted vs share gold (bars), accuracy vs mean confidence (points).

    A letter predicted far more often than it is the answer, or whose accuracy is
    below its mean confidence, shows letter bias (the class-wise view of Kull et al. 2019).
    """
    letters = [esc(x) for x in lb.letters]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=letters,
            y=100 * lb.predicted_share,
            name="predicted (%)",
            marker_color=color,
            customdata=lb.predicted,
            hovertemplate="%{x}: predicted %{customdata:,} times (%{y:.1f}%)<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            x=letters,
            y=100 * lb.gold_share,
            name="gold answer (%)",
            marker_color=REFERENCE_COLOR,
            customdata=lb.gold,
            hovertemplate="%{x}: the answer %{customdata:,} times (%{y:.1f}%)<extra></extra>",
        )
    )
    from calib.metrics.values import wilson_interval

    n_pred = np.asarray(lb.predicted, dtype=np.float64)
    acc = 100 * np.asarray(lb.accuracy, dtype=np.float64)
    a_lo, a_hi = wilson_interval(np.round(n_pred * np.nan_to_num(acc) / 100), n_pred)
    fig.add_trace(
        go.Scatter(
            x=letters,
            y=acc,
            name="right when predicted (%)",
            mode="markers",
            marker={"symbol": "diamond", "size": 11, "color": "#000000"},
            error_y=_error_y(acc, 100 * a_lo, 100 * a_hi, "#000000"),
            customdata=np.stack([n_pred, 100 * a_lo, 100 * a_hi], axis=1),
            hovertemplate="%{x}: right %{y:.1f}% of %{customdata[0]:,} when predicted, 95% "
            "interval [%{customdata[1]:.1f}%, %{customdata[2]:.1f}%]<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=letters,
            y=100 * lb.mean_confidence,
            name="mean confidence (%)",
            mode="markers",
            marker={"symbol": "line-ew-open", "size": 22, "color": "#D55E00", "line": {"width": 3}},
            hovertemplate="%{x}: mean confidence %{y:.1f}%<extra></extra>",
        )
    )
    fig.update_layout(barmode="group")
    return _layout(fig, title="Per option letter", x="option letter", y="share of items / rate (%)")
