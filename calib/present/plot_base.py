"""The look every Plotly figure of calib shares: the palette, the layout, the reference line
and the small trace helpers (marker size by count, interval bars, bands).

Contract
--------
:func:`_layout` gives a figure its title, axis titles, height, white background, light grid,
the legend below the plot (where it fits a phone's width as well as a laptop's) and draws
markers whole at the edge of fitted axes; :data:`PALETTE` is Okabe-Ito (distinguishable with
the common colour-vision deficiencies), :func:`palette` keys it by load order. Nothing here
takes a result; :mod:`calib.present.figures`, :mod:`calib.present.scale_figures`,
:mod:`calib.present.decision_figures` and :mod:`calib.present.drift` build on it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from calib.table import CountTable

#: Okabe-Ito colours (distinguishable with the common colour-vision deficiencies).
PALETTE: tuple[str, ...] = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#F0E442",
    "#000000",
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
#: Height (px) of the strip at the top of a titled figure kept for Plotly's mode bar (its
#: buttons sit at the figure's top right, their box ends 25-27 px down): the title starts
#: below it, so the mode bar never covers the title, however narrow the figure (a phone).
MODEBAR_ROOM = 34
#: How much higher Plotly draws a two-line title (``<br><sup>...</sup>``) than a one-line one
#: anchored at the same height (measured in Chromium, plotly.js 4.1: 13 px), made up for.
SECOND_LINE_RISE = 14
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


def _title_top(title: str) -> int:
    """Where (px from the figure's top) the title is anchored: under the mode bar's strip."""
    return MODEBAR_ROOM + (SECOND_LINE_RISE if "<br>" in title else 0) if title else 0


def top_margin(title: str) -> int:
    """The top margin (px) of a figure with this title: the mode bar's strip, then the title
    (a second line, ``<br><sup>...</sup>``, needs more), then a gap above the plot."""
    if not title:
        return 50
    return MODEBAR_ROOM + (62 if "<br>" in title else 38)


def _layout(fig: go.Figure, *, title: str, x: str, y: str, height: int = HEIGHT + 60) -> go.Figure:
    fig.update_layout(
        # the title's top edge MODEBAR_ROOM below the figure's top: the mode bar has the strip above it
        title={"text": title, "x": 0.0, "xanchor": "left", "yref": "container", "yanchor": "top",
               "y": 1.0 - _title_top(title) / height},
        xaxis_title=x,
        yaxis_title=y,
        height=height,
        margin={"l": 60, "r": 20, "t": top_margin(title), "b": 50},
        # below the plot: at half a laptop screen a legend on top runs into the title. Its
        # offset is in plot heights, so it is set from the figure's height: 75 px below the
        # axis, under the axis title whatever the height (a fixed -0.16 put the legend of a
        # short figure on top of its x-axis title in the HTML report); a legend outside the
        # plot pushes the bottom margin to hold it (a container-anchored one does not, in the
        # HTML report). Tick labels are kept short enough not to be rotated into it: numeric
        # ticks on the values used, few of them; model names on the y axis (the Brier bars).
        legend={
            "orientation": "h",
            "yanchor": "top",
            "y": -75 / max(height - 100, 150),
            "xanchor": "left",
            "x": 0.0,
        },
        hovermode="closest",
        # white background and light grid, set directly: a named template costs ~25 ms a
        # figure to copy, too much for a figure rebuilt on every threshold move (the
        # dashboard's theme restyles it anyway; the HTML report shows it as is)
        plot_bgcolor="white",
        paper_bgcolor="white",
        font={
            "family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif",
            "size": 13,
            "color": "#2a3f5f",
        },
    )
    # markers at the edge of the fitted axes are drawn whole (the axes end a margin past the
    # data, so only a big marker's rim reaches beyond); lines stay clipped (the diagonal)
    for tr in fig.data:
        if tr.type == "scatter" and "markers" in (tr.mode or ""):
            tr.cliponaxis = False
    grid = {"gridcolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "linecolor": "#C8D4E3", "showline": True}
    fig.update_xaxes(**grid)
    fig.update_yaxes(**grid)
    return fig


def reference_line(lo: float, hi: float, *, y_lo: float = 0.0, y_hi: float = 100.0) -> go.Scatter:
    """The y = x line: a stated value that meant what it said lies on it."""
    return go.Scatter(
        x=[lo, hi],
        y=[y_lo, y_hi],
        mode="lines",
        name=REFERENCE_NAME,
        line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1},
        hoverinfo="skip",
    )


def _size(n: np.ndarray, biggest: float) -> np.ndarray:
    """Marker diameter growing with the square root of the count (area ~ n), 6-34 px."""
    n = np.asarray(n, dtype=np.float64)
    return 6.0 + 28.0 * np.sqrt(n / max(float(biggest), 1.0))


def _rgba(color: str, alpha: float) -> str:
    c = color.lstrip("#")
    r, g, b = int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)
    return f"rgba({r},{g},{b},{alpha})"


def _band_trace(
    x: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    name: str,
    color: str,
    alpha: float,
    group: str,
    show: bool = True,
) -> go.Scatter:
    """A filled band between ``lo`` and ``hi`` (one closed polygon, so it toggles as one)."""
    xs = np.concatenate([x, x[::-1]])
    ys = np.concatenate([hi, lo[::-1]])
    return go.Scatter(
        x=xs,
        y=ys,
        fill="toself",
        fillcolor=_rgba(color, alpha),
        line={"width": 0},
        name=name,
        legendgroup=group,
        showlegend=show,
        hoverinfo="skip",
        mode="lines",
    )


def _marker(color: str, n: np.ndarray, biggest: float) -> dict[str, object]:
    return {
        "color": color,
        "size": _size(n, biggest),
        "opacity": 0.75,
        "line": {"width": 1, "color": "white"},
    }


def _error_y(y: np.ndarray, lo: np.ndarray, hi: np.ndarray, color: str) -> dict[str, object]:
    return {
        "type": "data",
        "symmetric": False,
        "array": hi - y,
        "arrayminus": y - lo,
        "color": color,
        "thickness": 1.2,
        "width": 3,
    }
