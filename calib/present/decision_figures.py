"""Plotly figures of the threshold decision: the cost curve and the risk-coverage curve.

Contract: :func:`cost_curve_figure` draws the expected cost per item at every
threshold with its bootstrap band and marks the cheapest threshold (and, when
given, the recommended and the current one); :func:`risk_coverage_figure` is
:func:`calib.present.figures.risk_coverage` with the AURC and its interval in the
title and the recommended threshold marked. Both take the engine's results or
their ``to_dict()`` (the dashboard keeps dicts in its state), and lay out only
numbers found there. User text (model names) goes through
:func:`calib.present.format.esc`; the conventions are those of :mod:`calib.present.figures`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

from calib.present.figures import PALETTE, THRESHOLD_COLOR, _layout, risk_coverage
from calib.present.format import ci_text, esc, num

#: Trace names (the browser tests and the dashboard look them up).
COST_NAME = "expected cost per item"
BAND_NAME = "bootstrap band"
CHEAPEST_NAME = "cheapest threshold"
RECOMMENDED_NAME = "recommended threshold"
CURRENT_COST_NAME = "current threshold"
RECOMMENDED_COLOR = "#009E73"


def _as_dict(x: Any) -> Mapping[str, Any]:
    """A result object or its ``to_dict()``."""
    return x if isinstance(x, Mapping) else x.to_dict()


def _curve_arrays(curve: list[Mapping[str, Any]]) -> tuple[np.ndarray, ...]:
    def col(f: Any) -> np.ndarray:
        return np.array([np.nan if v is None else float(v) for v in map(f, curve)], dtype=np.float64)

    return (col(lambda r: r["threshold"]), col(lambda r: r["cost"]),
            col(lambda r: r["cost_ci"][0]), col(lambda r: r["cost_ci"][1]))


def cost_curve_figure(
    costs: Any, *, name: str = "", color: str = PALETTE[0], unit: str = "", recommended: float | None = None,
    current: float | None = None,
) -> go.Figure:
    """Expected cost per item against the threshold (accept at or above it), with
    the bootstrap band and the cheapest threshold marked (a star; "review
    everything" drawn at the right end, past the highest score).

    ``costs`` is a :class:`calib.decision.CostAnalysis`, a :class:`calib.decision.Decision`
    or either's ``to_dict()`` (keys ``cost_curve``, ``cheapest``); ``unit`` labels
    the threshold axis ("stated confidence (0-100)"); ``recommended`` and
    ``current`` (thresholds) add vertical markers. An empty curve (no costs given)
    gives an empty figure whose title says so.
    """
    d = _as_dict(costs)
    curve = list(d.get("cost_curve") or [])
    fig = go.Figure()
    if not curve:
        return _layout(fig, title="Cost curve: give the cost of a review and of a missed error",
                       x=unit or "threshold", y="expected cost per item")
    t, c, lo, hi = _curve_arrays(curve)
    if np.isfinite(lo).any():
        fig.add_trace(go.Scatter(x=np.concatenate([t, t[::-1]]), y=np.concatenate([hi, lo[::-1]]), fill="toself",
                                 mode="lines", line={"width": 0}, fillcolor="rgba(0,114,178,0.18)",
                                 name=BAND_NAME, hoverinfo="skip"))
    fig.add_trace(go.Scatter(
        x=t, y=c, mode="lines+markers", name=COST_NAME, line={"color": color, "width": 2, "shape": "hv"},
        marker={"size": 4, "color": color}, customdata=np.stack([lo, hi], axis=1),
        hovertemplate=("accept at or above %{x:.4g}<br>cost %{y:.3f} per item [%{customdata[0]:.3f}, "
                       "%{customdata[1]:.3f}]<extra>" + esc(name) + "</extra>"),
    ))
    ch = d.get("cheapest")
    if ch:
        x = ch["threshold"] if ch["threshold"] is not None else (float(np.nanmax(t)) if t.size else 0.0)
        label = "review everything" if ch["threshold"] is None else f"accept at or above {ch['threshold']:g}"
        fig.add_trace(go.Scatter(
            x=[x], y=[ch["cost"]], mode="markers", name=CHEAPEST_NAME,
            marker={"symbol": "star", "size": 16, "color": THRESHOLD_COLOR},
            text=[f"{label}; cost {num(ch['cost'])} {ci_text(ch.get('cost_ci'))}"],
            hovertemplate="%{text}<extra>" + CHEAPEST_NAME + "</extra>",
        ))
    for at, label, col in ((recommended, RECOMMENDED_NAME, RECOMMENDED_COLOR), (current, CURRENT_COST_NAME, "#555")):
        if at is not None:
            fig.add_vline(x=at, line={"color": col, "dash": "dash", "width": 1})
            fig.add_trace(go.Scatter(x=[at], y=[None], mode="lines", name=label,
                                     line={"color": col, "dash": "dash"}))
    title = "Expected cost at each threshold"
    if ch:
        # the cheapest threshold on a second line: one long line is cut at a phone's width
        where = "review everything" if ch["threshold"] is None else f"{ch['threshold']:g}"
        title += f"<br><sup>cheapest: {where}, {num(ch['cost'])} per item {ci_text(ch.get('cost_ci'))}</sup>".replace(" <", "<")
    return _layout(fig, title=title, x=unit or "threshold (accept at or above)", y="expected cost per item")


def risk_coverage_figure(
    name: str, color: str, sweep: Any, *, aurc: Any = None, recommendation: Any = None,
    coverage: float | None = None, risk: float | None = None, threshold_text: str = "", unit: str = "",
) -> go.Figure:
    """:func:`calib.present.figures.risk_coverage` (``sweep`` a :class:`calib.routing.Sweep`,
    ``coverage``/``risk`` the current threshold) with the AURC and its interval in the
    title (``aurc``: a :class:`calib.decision.AURC`, a Decision or a dict with ``aurc``,
    ``aurc_ci``, ``eaurc``) and the recommended threshold marked (``recommendation``:
    a :class:`calib.decision.Recommendation` or its ``to_dict()``)."""
    fig = risk_coverage(name, color, sweep, coverage=coverage, risk=risk, threshold_text=threshold_text, unit=unit)
    r = None if recommendation is None else _as_dict(recommendation)
    if r is not None and r.get("threshold") is not None and r.get("coverage") is not None:
        fig.add_trace(go.Scatter(
            x=[100 * r["coverage"]], y=[100 * (r.get("error_rate") or 0.0)], mode="markers", name=RECOMMENDED_NAME,
            marker={"symbol": "diamond", "size": 13, "color": RECOMMENDED_COLOR, "line": {"width": 1}},
            text=[f"accept at or above {r['threshold']:g}; bound {num(r.get('error_upper'))}"],
            hovertemplate="%{text}<br>accepted %{x:.1f}%<br>errors among them %{y:.1f}%<extra></extra>",
        ))
    if aurc is not None:
        a = _as_dict(aurc)
        # two short lines: one long line is cut at a phone's width
        sub = (f"AURC {num(a.get('aurc'), 3)} {ci_text(a.get('aurc_ci'), 3)}; "
               f"excess over the oracle {num(a.get('eaurc'), 3)} {ci_text(a.get('eaurc_ci'), 3)}")
        # two lines already (the curve's own subtitle): the top margin _layout gave it holds them
        fig.update_layout(title={"text": f"Risk–coverage<br><sup>{sub.replace(' ;', ';').rstrip()}</sup>"})
    return fig
