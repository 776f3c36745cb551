"""The reliability diagram of one or several audits, as a figure and as a self-contained page.

This is the assembly ``calib audit --plot`` writes and the dashboard can show or offer for
download: for each dataset, its verdict and its reliability diagram (per-value points, or
binned points for a pooled table or width/mass bins, and the CORP isotonic curve with its
bands, :mod:`calib.curves`), then how to read it (:func:`diagram_reading`, which says what
the figure draws and nothing else; the dashboard's Reliability page uses the same words) and
one line saying how the diagram was made under the audit's settings (level, resamples, seed). The curves are the engine's; nothing is
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

#: What each part of a reliability diagram is, in the order a reader meets it (composed by
#: :func:`diagram_reading` from what a figure actually draws).
POINTS_VALUES = (
    "Points: the share of answers that were right at each stated value, with its {level} Wilson interval "
    "(the bars); a point's area grows with its number of answers."
)
POINTS_BINS = (
    "Points: the share of answers that were right in each bin ({bins}), placed at the bin's mean stated "
    "confidence, with its {level} Wilson interval (the bars); a point's area grows with its number of answers."
)
BIN_WORDS = {"width": "equal-width bins", "mass": "equal-mass bins: about as many answers in each"}
CURVE = (
    "Line: the CORP curve (Dimitriadis, Gneiting & Jordan 2021), the monotone (isotonic) fit of the share right "
    "on the stated confidence, a marker per stated value."
)
CONFIDENCE = "Shaded in the curve's colour: its {level} confidence band, where the true curve lies given the noise " \
    "of this sample."
CONSISTENCY = "Shaded grey: its {level} consistency band, where a calibrated judge's curve would fall by chance " \
    "alone with this many answers; a curve outside it is miscalibrated beyond noise."
#: What a reading says of a CORP curve drawn without resamples (a face may name its own setting).
NO_BANDS = "No bands (no resamples)."
DIAGONAL = "Dashed line: where a perfectly calibrated judge's points would lie (stated 80%, right 80% of the time)."


def _pct(level: float) -> str:
    return f"{100 * level:g}%"


def diagram_reading(
    drawn: Sequence[object], *, consistency: bool = True, no_bands: str = NO_BANDS,
) -> str:
    """How to read a reliability diagram of the curves ``drawn`` (as
    :func:`calib.present.figures.reliability` draws them), every sentence about something the
    figure shows and nothing it does not: per-value points, binned points, the CORP curve, its
    confidence band and (``consistency``: drawn for some model) its consistency band, the
    diagonal. A CORP curve drawn without resamples has no band: ``no_bands`` says so.

    ``drawn`` holds :class:`~calib.curves.ValuePoints`, :class:`~calib.curves.BinnedPoints`
    and :class:`~calib.curves.IsotonicCurve` objects (anything else is not drawn, so not
    described)."""
    import numpy as np

    from calib import curves

    out: list[str] = []
    values = [c for c in drawn if isinstance(c, curves.ValuePoints)]
    binned = [c for c in drawn if isinstance(c, curves.BinnedPoints)]
    corp = [c for c in drawn if isinstance(c, curves.IsotonicCurve)]
    if values:
        out.append(POINTS_VALUES.format(level=_pct(values[0].level)))
    if binned:
        kinds = dict.fromkeys(BIN_WORDS.get(c.scheme, c.scheme) for c in binned)
        out.append(POINTS_BINS.format(bins="; ".join(kinds), level=_pct(binned[0].level)))
    if corp:
        out.append(CURVE)
        level = _pct(corp[0].level)
        if any(np.isfinite(c.confidence_lo).any() for c in corp):
            out.append(CONFIDENCE.format(level=level))
        if consistency and any(np.isfinite(c.consistency_lo).any() for c in corp):
            out.append(CONSISTENCY.format(level=level))
        if not any(np.isfinite(c.confidence_lo).any() or np.isfinite(c.consistency_lo).any() for c in corp):
            out.append(no_bands)
    out.append(DIAGONAL)
    return " ".join(out)


def audit_curves(result: Audit, ds: Dataset) -> tuple[object, object]:
    """The points and the CORP curve of ``ds``'s diagram under ``result``'s settings
    (:func:`calib.curves.audit_diagram`: ``result.reps`` resamples, ``result.seed``,
    ``result.level``)."""
    from calib import curves

    return curves.audit_diagram(ds.table, scheme=result.scheme, bins=result.bins, level=result.level,
                                reps=result.reps, seed=result.seed)


def reliability_figure(result: Audit, ds: Dataset) -> go.Figure:
    """The reliability diagram of ``ds`` under ``result``'s settings: per-value points (binned
    points, width bins for a per-value scheme, on a pooled table or with width/mass bins) and
    the CORP curve with its bands (:func:`audit_curves`), laid out by
    :func:`calib.present.figures.reliability_one`."""
    return figures.reliability_one(ds.name, *audit_curves(result, ds))


def settings_line(result: Audit, *, no_bands: str = NO_BANDS) -> str:
    """How the bands were made: ``Bands: 95% pointwise, 2,000 resamples (seed 0).``, or
    ``no_bands`` when the audit ran without resamples."""
    if not result.reps:
        return no_bands
    return f"Bands: {100 * result.level:g}% pointwise, {result.reps:,} resamples (seed {result.seed})."


def reliability_page(items: Sequence[tuple[Dataset, Audit]], *, no_bands: str = NO_BANDS) -> str:
    """The self-contained HTML page of the reliability diagrams (what ``calib audit --plot
    x.html`` writes).

    Parameters
    ----------
    items:
        ``(dataset, its audit)`` pairs, one or several, all audited with the same settings
        (the first one's are stated).
    no_bands:
        What the page says when the audits ran without resamples (the CLI names its flag).

    Returns
    -------
    str
        The page (:func:`calib.present.html_report.render`): per dataset its verdict and its
        diagram (under a heading of its name when there are several), then how to read it
        and the settings; the subtitle names each file and its load summary.
    """
    if not items:
        raise ValueError("reliability_page needs at least one (dataset, audit) pair")
    blocks: list[hr.Block] = []
    drawn: list[object] = []
    for ds, a in items:
        points, corp = audit_curves(a, ds)
        drawn += [points, corp]
        if len(items) > 1:
            blocks.append(hr.Heading(ds.name))
        blocks += [hr.Paragraph(s) for s in a.verdict]
        blocks.append(hr.Figure(figures.reliability_one(ds.name, points, corp), dict(figures.CONFIG)))
    settings = settings_line(items[0][1], no_bands="")
    reading = diagram_reading(drawn, no_bands=no_bands)
    blocks.append(hr.Paragraph(f"{reading} {settings}".strip(), kind="meta"))
    names = ", ".join(ds.name for ds, _ in items)
    subtitle = "; ".join(f"{ds.report.source}: {ds.report.summary()}" for ds, _ in items)
    return hr.render(f"Reliability diagram: {names}", blocks, subtitle=subtitle)
