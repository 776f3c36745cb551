"""Calibration against a covariate in words (:class:`calib.covariate.CovariateCalibration`):
the lines ``calib audit --covariate FIELD`` prints. Nothing is computed here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calib.present.format import interval, p_value, pct, signed

if TYPE_CHECKING:
    from calib.covariate import CovariateCalibration


def covariate_lines(c: CovariateCalibration) -> list[str]:
    """A headline sentence, the slope (numeric field), one line per segment, the notes."""
    alpha = 1 - c.level
    flagged = c.flagged
    head = (f"{len(flagged)} of {sum(s.p_value is not None for s in c.segments)} tested segments of {c.field} "
            f"miscalibrated at the {100 * c.level:g}% level (Holm): {', '.join(s.label for s in flagged)}."
            if flagged else f"No segment of {c.field} miscalibrated at the {100 * c.level:g}% level (Holm).")
    out = [f"  {head}", f"  Residual = right - stated probability (positive: underconfident there); "
                        f"{c.n_used:,} answers used, {c.n_missing:,} without the field."]
    if c.slope is not None:
        out.append(f"  Slope of the residual per unit of {c.field}: {signed(c.slope, 5)} "
                   f"{interval(*c.slope_ci, lambda x: signed(x, 5))} ({p_value(c.slope_p)}).")
    w = max([len(s.label) for s in c.segments] + [7])
    out.append(f"  {'segment':<{w}} {'n':>8} {'right':>7} {'stated':>7} {'residual':>9}   {'interval':<18} {'p (Holm)':>10}")
    for s in c.segments:
        test = "too thin" if s.thin else p_value(s.p_holm)
        mark = " *" if s.p_holm is not None and s.p_holm < alpha else ""
        out.append(f"  {s.label:<{w}} {s.n:>8,} {pct(s.accuracy):>7} {pct(s.mean_confidence):>7} "
                   f"{signed(s.residual, 3):>9}   {interval(*s.ci, lambda x: signed(x, 3)):<18} {test:>10}{mark}")
    out += [f"  - {n}" for n in c.notes]
    return out
