"""Two thresholds, route stability and cascades of judges for people (issue 28): the text the
CLI prints and the p-value map of the two-threshold certificate.

Contract
--------
:func:`two_threshold_lines`, :func:`stability_lines` and :func:`cascade_lines` write the
results of :mod:`calib.decision.two_thresholds`, :mod:`calib.decision.stability` and
:mod:`calib.decision.cascade` as plain text lines; :func:`pvalue_map` draws every pair's
p-value with the outline of the valid region (Plotly scatter squares, the trace type the
dashboard's bundle holds). Judge names are user text, escaped in figures. Nothing here
recomputes a result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from calib.present.format import MISSING, esc, interval, money, pct

if TYPE_CHECKING:
    from calib.decision.two_thresholds import TwoThresholds


def two_threshold_lines(t: TwoThresholds) -> list[str]:
    """The certified pair, its counts and bounds."""
    title = "Two thresholds certified together"
    out = [title, "=" * len(title), t.message]
    if t.holds:
        out += [f"  accepted unseen: {t.accepted:,} ({pct(t.accepted / t.total)}), {t.errors:,} wrong "
                f"(bound {pct(t.error_upper)} <= target {pct(t.target_error)})",
                f"  to a person: {t.to_person:,} ({pct(t.to_person / t.total)}, bound {pct(t.share_upper)} <= cap "
                f"{pct(t.max_review_share)})",
                f"  middle band, to the second judge: {t.middle:,} ({pct(t.middle / t.total)})"]
    out.append(f"  {int(t.valid.sum()):,} of {int(np.isfinite(t.pvalues).sum()):,} pairs valid ({t.procedure}, "
               f"each test at level {t.level:.3g}; multi-risk Learn-then-Test).")
    return out


def _outline(valid: np.ndarray) -> tuple[list[float | None], list[float | None]]:
    """Edges between a valid cell and a non-valid one (or the border), as one broken line."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    k0, k1 = valid.shape
    pad = np.zeros((k0 + 2, k1 + 2), bool)
    pad[1:-1, 1:-1] = valid
    for i, j in zip(*np.nonzero(valid), strict=True):  # x: upper (column j), y: lower (row i)
        for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            if pad[i + 1 + di, j + 1 + dj]:
                continue
            if di:  # a horizontal edge at y = i +- 1/2
                xs += [j - 0.5, j + 0.5, None]
                ys += [i + di / 2, i + di / 2, None]
            else:  # a vertical edge at x = j +- 1/2
                xs += [j + dj / 2, j + dj / 2, None]
                ys += [i - 0.5, i + 0.5, None]
    return xs, ys


def pvalue_map(t: TwoThresholds, name: str = "") -> go.Figure:
    """Each pair's p-value (``-log10``, darker = smaller) on the grid of lower (y) by upper (x)
    thresholds; the valid region outlined; the chosen pair marked."""
    ii, jj = np.nonzero(np.isfinite(t.pvalues))
    p = t.pvalues[ii, jj]
    z = -np.log10(np.clip(p, 1e-12, 1.0))
    labels = [f"{x:g}" for x in t.grid]
    hover = [f"lower {labels[i]}, upper {labels[j]}: p = {q:.3g}" for i, j, q in zip(ii, jj, p, strict=True)]
    fig = go.Figure(go.Scatter(
        x=jj, y=ii, mode="markers", name="p-value of the pair", text=hover, hoverinfo="text",
        marker={"symbol": "square", "size": max(4, min(14, 600 // max(len(labels), 1))), "color": z,
                "colorscale": "Blues", "colorbar": {"title": "−log10 p"}},
    ))
    xs, ys = _outline(t.valid)
    if xs:
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"valid region (p ≤ {t.level:.3g})",
                                 line={"color": "#B00020", "width": 2}, hoverinfo="skip"))
    if t.holds:
        i = int(np.searchsorted(t.grid, t.lower))
        j = int(np.searchsorted(t.grid, t.upper))
        fig.add_trace(go.Scatter(x=[j], y=[i], mode="markers", name="chosen pair",
                                 marker={"symbol": "x", "size": 12, "color": "#000000"}))
    step = max(1, len(labels) // 12)
    ticks = {"tickmode": "array", "tickvals": list(range(0, len(labels), step)), "ticktext": labels[::step]}
    fig.update_layout(title=esc(f"Two thresholds{': ' + name if name else ''}: p-value of each pair"),
                      xaxis={"title": "upper threshold (accepted unseen at or above)", **ticks},
                      yaxis={"title": "lower threshold (to a person below)", **ticks}, height=480)
    return fig


def stability_lines(s: object) -> list[str]:
    """Route stability (:class:`calib.decision.stability.Stability`)."""
    from calib.decision.stability import Stability

    assert isinstance(s, Stability)
    title = f"Route stability at {s.threshold:g}" if s.threshold is not None else "Route stability"
    out = [title, "=" * len(title)]
    if s.items_repeated == 0:
        return out + ["No item was judged more than once: nothing to compare."]
    out += [f"  {s.items_repeated:,} items judged more than once ({s.judgments:,} judgments); the route flips "
            f"between 'to a person' and 'accepted unseen' for {s.flipped:,} ({pct(s.flip.value)} "
            f"{interval(*s.flip.ci, pct)}, Wilson {pct(s.level, 0)}, items as the unit).",
            f"  Spread of the stated confidence within an item: median SD {s.sd_median:.3g}, 90th percentile "
            f"{s.sd_p90:.3g}, largest range {s.range_max:g}."]
    if s.certificate is not None:
        out.append(f"  Threshold certificate, the item as the unit: {s.certificate.message}")
    return out


#: What the Routing page says under route stability (its unit and what a flip is).
STABILITY_CAPTION = (
    "Items judged more than once (repeated item ids, or Inspect epochs): an item's route flips when some of its "
    "judgments are at or above the review threshold (accepted unseen) and some below (to a person). The unit is "
    "the item, not the judgment: each item counts once in the flip share, its Wilson interval and the threshold "
    "certificate, so the judge's own re-sampling cannot add evidence."
)
#: Why the route stability is not at the review threshold when a map is applied.
STABILITY_ON_MAP = ("The review threshold is on the map's calibrated probability: route stability is measured on "
                    "the stated confidence, at the threshold certified with the item as the unit.")


def stability_figures(s: object) -> list[tuple[str, str, str | None, str]]:
    """The route stability's headline figures as ``(label, value, interval, help)``
    (:class:`calib.decision.stability.Stability`, items repeated)."""
    from calib.decision.stability import Stability

    assert isinstance(s, Stability)
    ci = interval(*s.flip.ci, pct)
    flips = MISSING if s.flip.value is None else f"{pct(s.flip.value)} ({s.flipped:,} of {s.items_repeated:,})"
    sd = MISSING if s.sd_median is None else f"{s.sd_median:.3g}"
    return [
        ("Items whose route flips", flips, f"{100 * s.level:g}% {ci}" if ci else None,
         "Among the items judged more than once, the share routed both ways at the threshold: some judgments "
         "accepted unseen, some to a person (Wilson interval, the item as the unit)."),
        ("Spread of stated confidence (median SD)", sd, None,
         f"Per item, the standard deviation of its stated values; median over the repeated items {sd}, 90th "
         f"percentile {MISSING if s.sd_p90 is None else f'{s.sd_p90:.3g}'}, largest range "
         f"{MISSING if s.range_max is None else f'{s.range_max:g}'}."),
        ("Items judged more than once", f"{s.items_repeated:,}", None,
         f"{s.judgments:,} judgments of {s.items_repeated:,} items; items are told apart by {s.unit}."),
    ]


def cascade_lines(c: object) -> list[str]:
    """The cheapest certified chain against each judge alone (:class:`calib.decision.cascade.Cascade`)."""
    from calib.decision.cascade import Cascade

    assert isinstance(c, Cascade)
    title = "Cheapest certified chain of judges"
    out = [title, "=" * len(title), c.message,
           f"  (prices: {', '.join(f'{k} {money(v)}' for k, v in c.prices.items())}, a person {money(c.person_price)}; "
           f"measured on the {c.plans[0].items:,} test items of {c.shared_items:,} shared)", ""]
    for p in c.plans:
        err = ("nothing accepted" if not p.accepted else
               f"{p.errors:,} wrong of {p.accepted:,} accepted ({pct(p.error_rate)}, bound {pct(p.error_upper)})")
        out += [f"{p.label}: {p.describe()}",
                f"  cost per 1,000 items {money(p.cost_per_1000.value)} {interval(*p.cost_per_1000.ci, money)}; {err}; "
                f"{p.to_person:,} to a person"]
    if not c.plans:
        out.append(MISSING)
    return out
