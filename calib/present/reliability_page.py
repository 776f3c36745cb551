"""The reliability diagram of one or several audits, as a figure and as a self-contained page.

This is the assembly ``calib audit --plot`` writes and the dashboard can show or offer for
download: for each dataset, its verdict and its reliability diagram (per-value points, or
binned points for a pooled table or width/mass bins, and the CORP isotonic curve with its
bands, :mod:`calib.curves`), then one line saying how the diagram was made under the
audit's settings (level, resamples, seed). The curves are the engine's; nothing is
computed here beyond calling it with the settings the audit was run with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from calib.present import figures
from calib.present import html_report as hr

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from calib.audit import Audit
    from calib.dataset import Dataset

#: How the diagram reads (the page's closing paragraph, before the settings).
EXPLANATION = (
    "Points: hit rate at each stated value (or bin) with Wilson intervals, area growing with the number of "
    "answers. Line: the CORP isotonic curve (Dimitriadis, Gneiting & Jordan 2021) with its bootstrap "
    "confidence band (its colour) and the consistency band (grey: where a calibrated forecaster's curve "
    "would fall)."
)


def reliability_figure(result: Audit, ds: Dataset) -> go.Figure:
    """The reliability diagram of ``ds`` under ``result``'s settings: per-value points (binned
    points, width bins for a per-value scheme, on a pooled table or with width/mass bins) and
    the CORP curve with its bands (``result.reps`` resamples, ``result.seed``, ``result.level``),
    laid out by :func:`calib.present.figures.reliability_one`."""
    from calib import curves

    points, corp = curves.audit_diagram(ds.table, scheme=result.scheme, bins=result.bins, level=result.level,
                                        reps=result.reps, seed=result.seed)
    return figures.reliability_one(ds.name, points, corp)


def settings_line(result: Audit, *, no_bands: str = "No bands (no resamples).") -> str:
    """How the bands were made: ``Bands: 95% pointwise, 2,000 resamples (seed 0).``, or
    ``no_bands`` when the audit ran without resamples."""
    if not result.reps:
        return no_bands
    return f"Bands: {100 * result.level:g}% pointwise, {result.reps:,} resamples (seed {result.seed})."


def reliability_page(
    items: Sequence[tuple[Dataset, Audit]], *, no_bands: str = "No bands (no resamples).",
    diagrams: Sequence[go.Figure] | None = None,
) -> str:
    """The self-contained HTML page of the reliability diagrams (what ``calib audit --plot
    x.html`` writes).

    Parameters
    ----------
    items:
        ``(dataset, its audit)`` pairs, one or several, all audited with the same settings
        (the first one's are stated).
    no_bands:
        What the page says when the audits ran without resamples (the CLI names its flag).
    diagrams:
        The figures, one per item, when already built (:func:`reliability_figure` otherwise).

    Returns
    -------
    str
        The page (:func:`calib.present.html_report.render`): per dataset its verdict and its
        diagram (under a heading of its name when there are several), then how to read it
        and the settings; the subtitle names each file and its load summary.
    """
    if not items:
        raise ValueError("reliability_page needs at least one (dataset, audit) pair")
    figs = list(diagrams) if diagrams is not None else [reliability_figure(a, ds) for ds, a in items]
    blocks: list[hr.Block] = []
    for (ds, a), fig in zip(items, figs, strict=True):
        if len(items) > 1:
            blocks.append(hr.Heading(ds.name))
        blocks += [hr.Paragraph(s) for s in a.verdict]
        blocks.append(hr.Figure(fig, dict(figures.CONFIG)))
    blocks.append(hr.Paragraph(f"{EXPLANATION} {settings_line(items[0][1], no_bands=no_bands)}", kind="meta"))
    names = ", ".join(ds.name for ds, _ in items)
    subtitle = "; ".join(f"{ds.report.source}: {ds.report.summary()}" for ds, _ in items)
    return hr.render(f"Reliability diagram: {names}", blocks, subtitle=subtitle)
