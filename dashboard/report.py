"""The report's assembly: every engine result the HTML report shows, as report blocks
(:mod:`calib.present.html_report`), from the same cached calls the pages make; the
focused model's threshold decision (issue 11) is its first extra section.

Gathering the results is the dashboard's (they are its cached calls); the sections are
built by :mod:`calib.present.report_blocks`, beside the CLI's report pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.present import explain
from calib.present import format as fmt
from dashboard.context import Context
from dashboard.decision_view import at_threshold
from dashboard.layout import METHOD_LABELS, SCORING_LABELS
from dashboard.results import audit_for, comparison_for, curve_for, decision_for, fit_for, judges_for
from dashboard.summary import decision_settings_text
from dashboard.threshold import fmt_threshold, route_now

if TYPE_CHECKING:  # pandas costs half a second to import: not on the cold start's path
    import pandas as pd
    import plotly.graph_objects as go

    from calib.audit import Audit
    from calib.present.html_report import ModelResults


@dataclass(frozen=True, eq=False)
class ReportParts:
    """What the Report page offers: one block set per model, the comparison and its
    figures (several models), and the audits (the JSON downloads)."""

    models: tuple[ModelResults, ...]
    comparison: pd.DataFrame | None
    comparison_figures: tuple[go.Figure, ...]
    audits: tuple[Audit, ...]


def report_parts(ctx: Context) -> ReportParts:
    """Every engine result the HTML report shows (all cached), as report blocks
    (:mod:`calib.present.report_blocks` builds them)."""
    from calib.present import figures
    from calib.present.tables import comparison_table

    v = ctx.view
    audits = tuple(audit_for(d, v, groups=True) for d in ctx.datasets)  # what `calib audit --json` prints
    models = tuple(_model(ctx, d, a) for d, a in zip(ctx.datasets, audits, strict=True))
    comparison, cfigs = None, ()
    if len(ctx.datasets) > 1:
        cmp = comparison_for(ctx, v)
        comparison = comparison_table(cmp)
        cfigs = (figures.brier_vs_constant(cmp.rows, ctx.colors),
                 figures.reliability([(d.name, curve_for(d, v)) for d in ctx.datasets], ctx.colors,
                                     consistency_for=()))
    return ReportParts(models, comparison, tuple(cfigs), audits)


#: Session key of the last :class:`ReportParts` built, with what they were built from.
PARTS_KEY = "calib_report_parts"


def session_report_parts(ctx: Context) -> ReportParts:
    """:func:`report_parts`, built once per session for the same datasets, view and
    colours (all they depend on: the engine's results are pure functions of them), then
    reused: a person coming back to the Report page does not wait again for its dozens
    of figures (0.3-0.4 s on two cores), which only the HTML download and the counts
    under "What is in the report" use. Only the last is kept; it holds its datasets, so
    their ids in the key stay theirs."""
    import streamlit as st

    from dashboard.entries import cache_key

    key = (tuple((d.name, id(d), cache_key(d)) for d in ctx.datasets), ctx.view, tuple(ctx.colors.items()))
    got = st.session_state.get(PARTS_KEY)
    if got is not None and got[0] == key:
        return got[2]
    parts = report_parts(ctx)
    st.session_state[PARTS_KEY] = (key, ctx.datasets, parts)
    return parts


def _model(ctx: Context, d: Dataset, a: Audit) -> ModelResults:
    """One model's part of the report: its audit, then its recalibration (when a map is
    chosen), its threshold decision and its routing."""
    from calib.present import figures
    from calib.present import html_report as hr
    from calib.present import report_blocks as rb

    color = ctx.colors.get(d.name, figures.PALETTE[0])
    sections = _judge_sections(ctx, d, color)  # every judge: a reviewer compares their decisions
    return hr.ModelResults.of(
        d, a, headline=tuple((h.label, h.value, h.interval) for h in explain.headline(a)), figures=rb.model_figures(d.name, d.table, a, curve_for(d, ctx.view), color),
        tables=rb.model_tables(a, d.table), sections=sections)


def _judge_sections(ctx: Context, d: Dataset, color: str) -> list[Any]:
    """Recalibration (when a map is chosen), the threshold decision, routing."""
    from calib.present import report_blocks as rb
    from calib.runs.route import sweep
    from calib.runs.settings import Settings

    v = ctx.view
    sections = []
    if v.method != "none":
        try:
            fit = fit_for(ctx, d)
        except CalibError as exc:
            sections.append(rb.warning_section("Recalibration", str(exc)))
        else:
            if fit is not None:
                sections.append(rb.recalibration_section(fit, d.table, d.name, color,
                                                         {**METHOD_LABELS, **SCORING_LABELS}))
    sections.append(_decision_section(ctx, d, color))
    try:
        r, axis, b, _cmap, note = route_now(ctx, d, v)
    except CalibError as exc:
        sections.append(rb.warning_section("Routing", str(exc)))
    else:
        sections.append(rb.routing_section(r, sweep(b, Settings(level=r.level)), threshold=fmt_threshold(r.lower, axis),
                                           unit=axis.unit, note=note, name=d.name, color=color,
                                           settings=decision_settings_text(v)))
    return sections


def _decision_section(ctx: Context, d: Dataset, color: str) -> tuple[str, tuple[Any, ...]]:
    """The threshold decision of one judge, as the Routing page shows it: the card with
    every interval, the cost curve, the risk-coverage curve with AURC, the per-group
    thresholds and (several models, in the focused judge's section) the judges at the
    same target; then the
    review threshold in force with its own bound (:func:`calib.present.html_report.decision_section`)."""
    from calib.present import html_report as hr
    from calib.present.decision_figures import cost_curve_figure, risk_coverage_figure
    from calib.runs.route import sweep
    from calib.runs.settings import Settings

    v = ctx.view
    try:
        dec = decision_for(ctx, d, v)
        # the judges side by side once, in the focused judge's section
        judges = judges_for(ctx, v) if len(ctx.datasets) > 1 and ctx.focus is not None and d.name == ctx.focus.name else None
        r, axis, b, _cmap, _note = route_now(ctx, d, v)
    except CalibError as exc:
        return "Threshold decision", (hr.Paragraph(str(exc), kind="warning"),)
    cost_fig = (cost_curve_figure(dec.costs, name=d.name, color=color, recommended=dec.recommendation.threshold)
                if dec.costs.cheapest is not None else None)
    risk_fig = risk_coverage_figure(d.name, color, sweep(b, Settings(level=r.level)), aurc=dec.aurc,
                                    recommendation=dec.recommendation, coverage=r.coverage, risk=r.risk,
                                    unit=axis.unit)
    heading, blocks = hr.decision_section(dec, scale=d.table.scale, cost_figure=cost_fig, risk_figure=risk_fig,
                                          judges=judges)
    at = at_threshold(ctx, d, v, r.upper if r.upper is not None else r.lower)
    if at.error_upper is not None:
        own = (f"The review threshold in force, {fmt_threshold(at.threshold, axis)}{axis.unit}: "
               f"{at.accepted:,} of {at.total:,} accepted unseen, {fmt.pct(at.errors / at.accepted)} wrong among "
               f"them, one-sided {100 * at.confidence:g}% upper bound {fmt.pct(at.error_upper)} for this one "
               f"threshold. {at.per_1000()}.")
        blocks = (*blocks, hr.Paragraph(own))
    return heading, blocks
