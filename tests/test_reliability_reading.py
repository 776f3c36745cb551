"""The Reliability page's text describes what its figure draws, for every binning (issue 22).

At the default binning the page said "The CORP curve ... with a bootstrap confidence band ...
and a consistency band" under a figure of per-value points only. Here each binning's curves
are drawn by the figure code and the figure's own traces (read from the Plotly figure, not
from the words) decide which parts the text must name and which it must not.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from calib import curves, metrics
from calib.present import figures
from calib.present.reliability_page import diagram_reading
from calib.table import from_counts

TABLE = from_counts(np.array([50.0, 60, 70, 80, 90, 100]), np.array([40, 60, 80, 120, 300, 400]),
                    np.array([22, 33, 50, 80, 230, 330]))


def curve(scheme: str, reps: int):  # type: ignore[no-untyped-def]
    """The curve the dashboard's Reliability page draws for a binning (as dashboard.results.curve_for)."""
    kind = metrics.resolve_scheme(TABLE, scheme) if scheme == "auto" else scheme
    if kind == "values":
        return curves.value_points(TABLE)
    if kind == "corp":
        return curves.isotonic_curve(TABLE, reps=reps, seed=0)
    return curves.binned_points(TABLE, scheme=kind, bins=5)


def drawn_parts(fig: go.Figure) -> set[str]:
    """What the figure shows, read off its traces."""
    parts = set()
    for tr in fig.data:
        name = tr.name or ""
        if tr.fill == "toself":
            parts.add("consistency band" if name.startswith("consistency") else "confidence band")
        elif tr.error_y is not None and tr.error_y.array is not None:
            parts.add("points with intervals")
        elif tr.mode == "lines+markers":
            parts.add("curve")
        elif tr.mode == "lines" and tr.line.dash == "dash":
            parts.add("diagonal")
    return parts


#: The words that name each part (one of them must appear when it is drawn, none when it is not).
WORDS = {
    "consistency band": ("consistency band",),
    "confidence band": ("confidence band",),
    "curve": ("CORP", "isotonic"),
    "points with intervals": ("Wilson", "Points:"),
    "diagonal": ("Dashed line",),
}


@pytest.mark.parametrize("scheme", ["auto", "values", "width", "mass", "corp"])
@pytest.mark.parametrize("reps", [0, 50])
def test_the_words_name_what_the_figure_draws_and_nothing_else(scheme: str, reps: int) -> None:
    c = curve(scheme, reps)
    fig = figures.reliability([("m", c)], {"m": "#0072B2"}, consistency_for=["m"])
    text = diagram_reading([c])
    drawn = drawn_parts(fig)
    assert drawn, "the figure draws something"
    for part, words in WORDS.items():
        named = any(w in text for w in words)
        assert named == (part in drawn), (scheme, reps, part, drawn, text)
    # a CORP curve without resamples has no band, and the text says so instead of describing one
    assert ("No bands" in text) == (scheme == "corp" and reps == 0), text


def test_binned_points_name_their_bins() -> None:
    assert "equal-width bins" in diagram_reading([curves.binned_points(TABLE, scheme="width", bins=5)])
    assert "equal-mass bins" in diagram_reading([curves.binned_points(TABLE, scheme="mass", bins=5)])
    assert "bin" not in diagram_reading([curves.value_points(TABLE)])

