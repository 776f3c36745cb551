"""The HTML report's sections, built from engine results: one function per section.

The dashboard's Report page gathers the results (its cached engine calls) and passes them
here; the blocks (:mod:`calib.present.html_report`) and their figures and tables are made
only here, so a report reads the same whichever face asks for it. Nothing is computed:
every number comes in as a result of the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from calib.present import figures
from calib.present import format as fmt
from calib.present import html_report as hr
from calib.present.tables import map_formula, map_table_frame, per_value_frame

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from calib.audit import Audit
    from calib.maps import FitResult
    from calib.routing import Routing, Sweep
    from calib.table import CountTable

Section = tuple[str, tuple[hr.Block, ...]]
#: Most distinct values for which the per-value figure and table are shown.
MAX_PER_VALUE = 101


def shows_per_value(audit: Audit, table: CountTable) -> bool:
    """Whether the per-value figure and table are shown: values kept (not a pooled table),
    at most :data:`MAX_PER_VALUE` of them."""
    return bool(audit.per_value) and not table.pooled and len(audit.per_value) <= MAX_PER_VALUE


def model_figures(name: str, table: CountTable, audit: Audit, curve: Any, color: str) -> list[go.Figure]:
    """The figures of one model: how the scale was used, what each value meant (when
    :func:`shows_per_value`), the reliability diagram (``curve``: :mod:`calib.curves`)."""
    colors = {name: color}
    out = [figures.stated_histogram([(name, table)], colors), figures.reliability([(name, curve)], colors)]
    if shows_per_value(audit, table):
        out.insert(1, figures.per_value([(name, table.pooled_over_groups(), audit.per_value)], colors,
                                        level=audit.level))
    return out


def model_tables(audit: Audit, table: CountTable) -> list[tuple[str, pd.DataFrame]]:
    """The tables of one model: what each stated value meant (:func:`per_value_frame`)."""
    if not shows_per_value(audit, table):
        return []
    return [("Per stated value", per_value_frame(audit.per_value, digits=1))]


def warning_section(title: str, message: str) -> Section:
    """A section that could not be computed, saying why."""
    return title, (hr.Paragraph(message, kind="warning"),)


def _scores_frame(fit: FitResult) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for name, key in (("Brier score", "brier"), ("log loss", "log_loss"), ("ECE", "ece")):
        b, af, br = (getattr(s, key) for s in (fit.before, fit.after, fit.base_rate))
        rows.append({"metric": name, "stated": f"{fmt.num(b.value, 4)} {fmt.ci_text((b.lo, b.hi), 4)}",
                     "after the map": f"{fmt.num(af.value, 4)} {fmt.ci_text((af.lo, af.hi), 4)}",
                     "base rate": f"{fmt.num(br.value, 4)} {fmt.ci_text((br.lo, br.hi), 4)}"})
    return pd.DataFrame(rows)


def recalibration_section(
    fit: FitResult, table: CountTable, name: str, color: str, labels: Mapping[str, str],
) -> Section:
    """The map fitted and how it scored on held-out data (``labels``: the words for the
    method and the scoring, e.g. the dashboard's)."""
    import numpy as np

    blocks: list[hr.Block] = []
    if fit.useless:
        blocks.append(hr.Paragraph(f"The map is useless: {fit.reason}", kind="warning"))
    blocks.append(hr.Paragraph(f"{labels.get(fit.method, fit.method)}, scored on "
                               f"{labels.get(fit.scoring, fit.scoring)}: fitted on {fit.n_fit:,} answers, "
                               f"scored on {fit.n_eval:,}."))
    blocks.append(hr.Table(_scores_frame(fit)))
    if fit.table:
        grid = np.linspace(table.scale.lo, table.scale.hi, 401)
        blocks.append(hr.Figure(figures.recalibration_map(
            name, color, scale_lo=table.scale.lo, scale_hi=table.scale.hi, curve_x=grid,
            curve_y=fit.map.apply(grid), table=fit.table, method_label=labels.get(fit.method, fit.method),
            useless=fit.useless)))
        blocks.append(hr.Paragraph("The map: " + map_formula(fit.map)))
        blocks.append(hr.Table(map_table_frame(fit)))
    return "Recalibration", tuple(blocks)


def routing_section(
    r: Routing, sweep: Sweep, *, threshold: str, unit: str, note: str | None, name: str, color: str,
    settings: str = "",
) -> Section:
    """What the review threshold does (``threshold``: the threshold as written, ``unit``
    the axis' unit), each figure with its bootstrap interval and its plain words
    (:mod:`calib.present.explain`), the total cost when costs are given, the target and
    costs behind it (``settings``), and the risk-coverage curve with the threshold marked."""
    from calib.present import explain
    from calib.present.routing_table import routing_rows

    total = r.to_person + r.accepted + (r.middle if r.upper is not None else 0)
    items = [("Review threshold", threshold + unit, "")]
    items += [(row.label, row.text, row.level_interval(r.level)) for row in routing_rows(r)]
    blocks: list[hr.Block] = [hr.KeyFigures(tuple(items))]
    if settings:
        blocks.append(hr.Paragraph(f"Settings: {settings}.", kind="meta"))
    if note:
        blocks.append(hr.Paragraph(note, kind="meta"))
    blocks += [hr.Paragraph(explain.meaning(k, x, total=total)) for k, x in (
        ("to_person", r.to_person), ("errors_slipping", r.errors_slipping))]
    blocks.append(hr.Figure(figures.risk_coverage(name, color, sweep, coverage=r.coverage, risk=r.risk,
                                                  unit=unit)))
    return "Routing at the review threshold", tuple(blocks)
