"""The failure-prediction figures of an audit in words, a table and a figure: AUPRC for
errors, the prediction rejection ratio, accuracy at fixed coverage and the
cumulative-differences test (:class:`calib.failure.FailurePrediction`), for ``calib audit``'s
text, the Overview and the Reliability page. Nothing is computed here but the layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from calib.present import explain
from calib.present.format import esc, interval, num, p_value, pct

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from calib.audit import Audit
    from calib.metrics import CumulativeDifferences


def failure_rows(a: Audit) -> list[tuple[str, str, str, str]]:
    """``(label, value, interval, what this means)`` of each figure, in the order every face
    shows them; empty when the audit has none."""
    f = a.failure
    if f is None:
        return []
    auprc, prr = f.auprc_errors, f.prr
    rows = [
        (f"{explain.QUANTITIES['auprc_errors'].label} (chance {num(f.auprc_errors_baseline)})", num(auprc.value),
         interval(*auprc.ci), explain.meaning("auprc_errors", auprc.value, baseline=f.auprc_errors_baseline)),
        ("PRR (0 chance, 1 oracle)", num(prr.value), interval(*prr.ci), explain.meaning("prr", prr.value)),
    ]
    for r in f.accuracy_at_coverage:
        tie = f" {r.split:,} answers tied at {r.value:.4g} share the cut." if r.split and r.value is not None else ""
        rows.append((f"Right among top {100 * r.coverage:g}%", pct(r.accuracy.value), interval(*r.accuracy.ci, pct),
                     explain.meaning("accuracy_at_coverage", r.accuracy.value, coverage=r.coverage)
                     + tie))
    return rows


def cumulative_text(a: Audit) -> str:
    """The cumulative-differences test in one line (statistics and p-values, how computed)."""
    f = a.failure
    if f is None:
        return ""
    c = f.cumulative
    ku, ks = c.kuiper_test, c.ks_test
    if ku.statistic is None:
        return f"Cumulative differences (no bins): {'p=0, ' if ku.p_value == 0 else 'undefined: '}{ku.note}"
    return (f"Cumulative differences (no bins): Kuiper {num(c.kuiper, 4)} ({ku.statistic:.2f} sigma, "
            f"{p_value(ku.p_value, ku.log10_p, bound=ku.p_bound)}), Kolmogorov-Smirnov {num(c.ks, 4)} "
            f"({ks.statistic:.2f} sigma, {p_value(ks.p_value, ks.log10_p, bound=ks.p_bound)}); "
            f"{ku.note or 'p-value from the Brownian limit'}.")


def cumulative_figure(c: CumulativeDifferences, *, name: str, color: str, level: float = 0.95,
                      unit: str = "") -> go.Figure:
    """The cumulative differences of one judge (Tygert 2021): answers sorted by stated
    confidence on x (their cumulative share), the running sum of right minus stated on y
    (percentage points of all answers), read at the end of each stated value; dotted, the
    band ``+- x sigma`` a calibrated judge's path stays inside with probability ``level``
    in the Brownian limit (:func:`calib.metrics.brownian_max_abs_critical`)."""
    import plotly.graph_objects as go  # only for the figure: calib audit's text imports this module too

    from calib.metrics import brownian_max_abs_critical
    from calib.present.plot_base import REFERENCE_COLOR, _layout

    ename = esc(name)
    x, y = 100 * np.asarray(c.share, dtype=np.float64), 100 * np.asarray(c.path, dtype=np.float64)
    fig = go.Figure()
    h = 100 * brownian_max_abs_critical(1 - level) * c.sigma if c.sigma else 0.0
    if h:
        # a shaded band, not two lines: the region a calibrated judge's path stays in is part of the reading
        fig.add_trace(go.Scatter(x=[0, 100, 100, 0, 0], y=[h, h, -h, -h, h], mode="lines", fill="toself",
                                 fillcolor="rgba(127,127,127,0.12)", line={"color": REFERENCE_COLOR, "dash": "dot",
                                                                          "width": 1},
                                 name=f"{100 * level:g}% band of a calibrated judge", hoverinfo="skip"))
    vals = np.where(np.isfinite(c.value), c.value, np.nan)
    fig.add_trace(go.Scatter(
        x=x, y=y, mode="lines+markers" if x.size <= 200 else "lines", name=ename,
        line={"color": color, "width": 2}, marker={"size": 5, "color": color},
        customdata=vals, hovertemplate=("up to stated %{customdata:.4g}" + esc(unit) + "<br>%{x:.1f}% of answers"
                                        "<br>right minus stated %{y:.2f} points<extra>" + ename + "</extra>"),
    ))
    # the axis holds the path, the band and zero, no more: a symmetric axis left half of it empty
    lo, hi = min(float(np.min(y)) if y.size else 0.0, -h, 0.0), max(float(np.max(y)) if y.size else 0.0, h, 0.0)
    pad = 0.06 * (hi - lo) + 1e-6
    fig.update_xaxes(range=[0, 100])
    fig.update_yaxes(range=[lo - pad, hi + pad], zeroline=True)
    return _layout(fig, title="Cumulative differences<br><sup>flat is calibrated; falling: overconfident there; "
                   "rising: underconfident</sup>",
                   x="answers sorted by stated confidence (cumulative %)", y="right minus stated (points of all answers)")


def auroc_row(a: Audit) -> tuple[str, str, str, str]:
    """AUROC as a row of :func:`failure_rows`' shape: the figure the others stand beside."""
    e = a.estimates["auroc"]
    return ("AUROC (0.5 chance, 1 perfect)", num(e.value), interval(*e.ci), explain.meaning("auroc", e.value))


def failure_frame(a: Audit) -> Any:
    """:func:`failure_rows` as a DataFrame for the dashboard, AUROC first (empty when the
    audit has no failure-prediction figures)."""
    import pandas as pd

    rows = failure_rows(a)
    return pd.DataFrame([{"figure": r[0], "value": r[1], f"{100 * a.level:g}% interval": r[2], "in plain words": r[3]}
                         for r in ([auroc_row(a), *rows] if rows else [])])


def prr_metric(a: Audit) -> tuple[str, str | None, str] | None:
    """PRR beside AURC (the Routing page): value, ``"95% [lo, hi]"`` and a help naming the
    other figures (AUPRC for errors, accuracy among the most confident 10%); ``None``
    without failure-prediction figures. PRR is AURC rescaled between random rejection (0)
    and the oracle (1), on the stated confidence."""
    f = a.failure
    if f is None:
        return None
    prr, auprc = f.prr, f.auprc_errors
    ci = interval(*prr.ci)
    top = next((r for r in f.accuracy_at_coverage if abs(r.coverage - 0.1) < 1e-9), None)
    more = (f"AUPRC for errors {num(auprc.value)} {interval(*auprc.ci)} (chance "
            f"{num(f.auprc_errors_baseline)})")
    if top is not None:
        more += f"; right among the most confident 10%: {pct(top.accuracy.value)} {interval(*top.accuracy.ci, pct)}"
    help_ = (f"{explain.help_text('prr')}  \n{explain.meaning('prr', prr.value)}  \n{more}. On the stated confidence "
             "(the audit's); the Overview lists them all.")
    return num(prr.value), (f"{100 * a.level:g}% {ci}" if prr.lo is not None else None), help_
