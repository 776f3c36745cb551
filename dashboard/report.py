"""The report's assembly: every engine result the HTML report shows, as report blocks
(:mod:`calib.present.html_report`), from the same cached calls the pages make.

It mirrors the CLI's ``write_plot``; the two are to become one function of
:mod:`calib.present`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calib.errors import CalibError
from calib.present import format as fmt
from dashboard.context import Context
from dashboard.layout import METHOD_LABELS, SCORING_LABELS
from dashboard.results import audit_for, comparison_for, curve_for, fit_for
from dashboard.summary import headline
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
    """Every engine result the HTML report shows (all cached), as report blocks."""
    # long: the report's assembly, kept whole as it mirrors the CLI's write_plot (to be joined with it)
    import pandas as pd

    from calib import routing
    from calib.present import figures
    from calib.present import html_report as hr
    from calib.present.tables import comparison_table

    v = ctx.view
    models = []
    audits = []
    for d in ctx.datasets:
        a = audit_for(d, v, groups=True)  # the JSON download is what `calib audit --json` prints
        audits.append(a)
        t = d.table
        pv = a.per_value
        color = {d.name: ctx.colors.get(d.name, figures.PALETTE[0])}
        figs = [
            figures.stated_histogram([(d.name, t)], color),
            figures.reliability([(d.name, curve_for(d, v))], color),
        ]
        tables = []
        if pv and not t.pooled and len(pv) <= 101:
            figs.insert(1, figures.per_value([(d.name, t.pooled_over_groups(), pv)], color, level=v.level))
            tables.append(("Per stated value", pd.DataFrame(
                [{"stated": r.value, "answers": r.n, "right": r.correct, "hit rate (%)": round(100 * r.hit_rate, 1),
                  "CI (%)": f"{100 * r.lo:.1f} to {100 * r.hi:.1f}", "gap (percentage points)": round(100 * r.gap, 1)}
                 for r in pv])))
        sections = []
        if d.name == (ctx.focus.name if ctx.focus else None):
            fit = None
            if v.method != "none":
                try:
                    fit = fit_for(ctx, d)
                except CalibError as exc:
                    sections.append(("Recalibration", (hr.Paragraph(str(exc), kind="warning"),)))
            if fit is not None:
                blocks: list[Any] = []
                if fit.useless:
                    blocks.append(hr.Paragraph(f"The map is useless: {fit.reason}", kind="warning"))
                rows = []
                for name, key in (("Brier score", "brier"), ("log loss", "log_loss"), ("ECE", "ece")):
                    b, af, br = (getattr(s, key) for s in (fit.before, fit.after, fit.base_rate))
                    rows.append({"metric": name, "stated": f"{b.value:.4f} {fmt.ci_text((b.lo, b.hi), 4)}",
                                 "after the map": f"{af.value:.4f} {fmt.ci_text((af.lo, af.hi), 4)}",
                                 "base rate": f"{br.value:.4f} {fmt.ci_text((br.lo, br.hi), 4)}"})
                blocks.append(hr.Paragraph(f"{METHOD_LABELS[fit.method]}, scored on {SCORING_LABELS[fit.scoring]}: "
                                           f"fitted on {fit.n_fit:,} answers, scored on {fit.n_eval:,}."))
                blocks.append(hr.Table(pd.DataFrame(rows)))
                if fit.table:
                    import numpy as np

                    grid = np.linspace(t.scale.lo, t.scale.hi, 401)
                    blocks.append(hr.Figure(figures.recalibration_map(
                        d.name, color[d.name], scale_lo=t.scale.lo, scale_hi=t.scale.hi, curve_x=grid,
                        curve_y=fit.map.apply(grid), table=fit.table, method_label=METHOD_LABELS[fit.method],
                        useless=fit.useless)))
                    blocks.append(hr.Table(pd.DataFrame(list(fit.table))))
                sections.append(("Recalibration", tuple(blocks)))
            try:
                r, axis, b, cmap, note = route_now(ctx, d, v)
            except CalibError as exc:
                sections.append(("Routing", (hr.Paragraph(str(exc), kind="warning"),)))
            else:
                sw = routing.sweep(b, level=r.level)
                items = (
                    ("Review threshold", fmt_threshold(r.lower, axis) + axis.unit, ""),
                    ("Sent to a person", f"{r.to_person:,}", ""),
                    ("Accepted unseen", f"{r.accepted:,}", ""),
                    ("Accuracy among accepted", fmt.pct(r.accuracy_accepted), ""),
                    ("Errors slipping through", f"{r.errors_slipping:,}", ""),
                    ("Errors caught", f"{r.errors_caught:,}", ""),
                )
                blocks = [hr.KeyFigures(items)]
                if note:
                    blocks.append(hr.Paragraph(note, kind="meta"))
                blocks.append(hr.Figure(figures.risk_coverage(d.name, color[d.name], sw, coverage=r.coverage,
                                                              risk=r.risk, unit=axis.unit)))
                sections.append(("Routing at the review threshold", tuple(blocks)))
        models.append(hr.ModelResults(
            name=d.name, headline=headline(a), verdict=a.verdict[0] if a.verdict else "",
            sentences=tuple(a.verdict[1:]), warnings=tuple(a.notes), figures=tuple(figs), tables=tuple(tables),
            sections=tuple(sections), load_summary=f"{d.report.source}: {d.report.summary()}",
        ))
    comparison, cfigs = None, ()
    if len(ctx.datasets) > 1:
        cmp = comparison_for(ctx, v)
        comparison = comparison_table(cmp)
        cfigs = (figures.brier_vs_constant(cmp.rows, ctx.colors),
                 figures.reliability([(d.name, curve_for(d, v)) for d in ctx.datasets], ctx.colors,
                                     consistency_for=()))
    return ReportParts(tuple(models), comparison, tuple(cfigs), tuple(audits))
