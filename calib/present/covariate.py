"""Calibration against a covariate in words (:class:`calib.covariate.CovariateCalibration`):
the lines ``calib audit --covariate FIELD`` prints. Nothing is computed here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calib.present.format import interval, p_value, pct, signed

if TYPE_CHECKING:
    from calib.covariate import CovariateCalibration
    from calib.decision.groups import PerGroup


def headline(c: CovariateCalibration) -> str:
    """The multiplicity-corrected verdict in one sentence: which segments are miscalibrated."""
    flagged = c.flagged
    tested = sum(s.p_value is not None for s in c.segments)
    thin = sum(s.thin for s in c.segments)
    tail = f" {thin} segment{'s' if thin != 1 else ''} too thin to certify (not tested)." if thin else ""
    if flagged:
        return (f"{len(flagged)} of {tested} tested segments of {c.field} miscalibrated at the {100 * c.level:g}% "
                f"level (Holm): {', '.join(s.label for s in flagged)}.{tail}")
    return f"No segment of {c.field} miscalibrated at the {100 * c.level:g}% level (Holm).{tail}"


def covariate_lines(c: CovariateCalibration) -> list[str]:
    """A headline sentence, the slope (numeric field), one line per segment, the notes."""
    alpha = 1 - c.level
    out = [f"  {headline(c)}", f"  Residual = right - stated probability (positive: underconfident there); "
                        f"{c.n_used:,} answers used, {c.n_missing:,} without the field."]
    if c.slope.value is not None:
        out.append(f"  Slope of the residual per unit of {c.field}: {signed(c.slope.value, 5)} "
                   f"{interval(*c.slope.ci, lambda x: signed(x, 5))} ({p_value(c.slope_p)}).")
    w = max([len(s.label) for s in c.segments] + [7])
    out.append(f"  {'segment':<{w}} {'n':>8} {'right':>7} {'stated':>7} {'residual':>9}   {'interval':<18} {'p (Holm)':>10}")
    for s in c.segments:
        test = "too thin" if s.thin else p_value(s.p_holm)
        mark = " *" if s.p_holm is not None and s.p_holm < alpha else ""
        out.append(f"  {s.label:<{w}} {s.n:>8,} {pct(s.accuracy):>7} {pct(s.mean_confidence):>7} "
                   f"{signed(s.residual.value, 3):>9}   {interval(*s.residual.ci, lambda x: signed(x, 3)):<18} {test:>10}{mark}")
    out += [f"  - {n}" for n in c.notes]
    return out


def segment_rows(c: CovariateCalibration) -> list[dict[str, object]]:
    """One row per segment for a table: answers, clusters, right, stated, the residual with its
    cluster-robust interval, the Holm-adjusted p-value and the verdict (a thin segment says so)."""
    alpha = 1 - c.level
    out: list[dict[str, object]] = []
    for s in c.segments:
        if s.thin:
            verdict = "too thin to certify"
        elif s.p_holm is not None and s.p_holm < alpha:
            verdict = "miscalibrated"
        else:
            verdict = "no evidence of miscalibration"
        out.append({"segment": s.label, "answers": s.n, "clusters": s.clusters, "right": pct(s.accuracy),
                    "stated": pct(s.mean_confidence), "residual (right - stated)": signed(s.residual.value, 3),
                    f"{100 * c.level:g}% interval (CR1)": interval(*s.residual.ci, lambda x: signed(x, 3)),
                    "p (Holm)": "not tested" if s.thin else p_value(s.p_holm), "verdict": verdict})
    return out


def slope_sentence(c: CovariateCalibration) -> str:
    """The numeric field's slope with its cluster-robust interval, or "" for a categorical one."""
    if c.slope.value is None:
        return ""
    return (f"Slope of the residual per unit of {c.field}: {signed(c.slope.value, 5)} "
            f"{interval(*c.slope.ci, lambda x: signed(x, 5))} ({p_value(c.slope_p)}; cluster-robust, t test).")


def slice_rows(pg: PerGroup, unit: str = "") -> list[dict[str, object]]:
    """Per-slice certified thresholds (:class:`calib.decision.groups.PerGroup`) for a table:
    the threshold or why every item goes to a person, items accepted unseen, the bound."""
    out: list[dict[str, object]] = []
    for g in pg.groups:
        out.append({"segment": g.group, "items": g.total,
                    "threshold": "none: every item to a person" if g.threshold is None else f"{g.threshold:g}{unit}",
                    "accepted unseen": g.accepted,
                    "error bound among accepted": "-" if g.error_upper is None else pct(g.error_upper),
                    "why not certified": g.reason})
    return out


#: The dashboard's words around the covariate section.
SECTION_NOTE = ("The calibration residual (right minus stated probability) per segment of a field of the rows: "
                "each segment tested for calibration (calibration in the large), intervals and tests "
                "cluster-robust (CR1), the p-values Holm-corrected across segments. A segment of fewer than "
                "30 answers or 10 clusters is too thin to certify and is not tested. A numeric field is cut into "
                "5 segments of equal count and its slope tested. calib audit FILE --covariate FIELD prints the same.")
SLICE_NOTE = ("One review threshold per segment, each certified on its own items (fixed-sequence Learn-then-Test, "
              "as calib route --by FIELD does): a segment too small, or whose items certify no threshold, sends "
              "every item to a person.")
NO_FIELDS = ("No field to test against: the rows are not JSON Lines with fields besides the confidence and the "
             "outcome (calib audit FILE --covariate FIELD reads one from a JSONL file).")
