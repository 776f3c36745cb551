"""What the Overview and the report both print about an audit: the headline figures,
which forecast wins, and the settings behind every number (the threshold decision's
too), in one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calib.hosting import view as views
from dashboard.layout import METHOD_LABELS, SCHEME_LABELS, SCORING_LABELS

if TYPE_CHECKING:
    from calib.audit import Audit

#: How the Overview words the paired Brier test's decision (:func:`calib.metrics.brier_winner`).
FORECAST_WORDS = {
    "constant": "the constant",
    "stated": "the stated confidence",
    "neither": "neither (no clear difference)",
}


def headline(a: Audit) -> tuple[tuple[str, str, str], ...]:
    """``(label, value, interval)`` of the headline figures of an audit
    (:func:`calib.present.explain.headline`: the Overview and the HTML report print the
    same strings)."""
    from calib.present import explain

    return tuple((h.label, h.value, h.interval) for h in explain.headline(a))


def better_forecast(a: Audit) -> str | None:
    """Which forecast the audit's paired Brier test favours at its level: "the constant"
    (the model's own hit rate for every answer), "the stated confidence", or neither;
    ``None`` when the test is undefined. The same decision as the audit's verdict."""
    from calib.runs.audit import brier_winner

    winner = brier_winner(a)
    return None if winner is None else FORECAST_WORDS[winner]


def settings_text(v: views.View) -> str:
    """The settings behind every number, in one line (printed on the report)."""
    parts = [
        f"binning {SCHEME_LABELS[v.scheme]}" + (f" ({v.bins} bins)" if v.scheme in ("width", "mass") else ""),
        f"{v.reps:,} bootstrap resamples, seed {v.seed}, {100 * v.level:g}% intervals",
        f"map {METHOD_LABELS[v.method]}" + ("" if v.method == "none" else f", scored on {SCORING_LABELS[v.scoring]}"),
    ]
    if v.lo is not None:
        parts.append(f"review threshold {v.lo:g}" + ("" if v.hi is None else f", upper {v.hi:g}")
                     + (" on the recalibrated probability" if v.on == "calibrated" else ""))
    parts.append(decision_settings_text(v))
    return "; ".join(parts)


def decision_settings_text(v: views.View) -> str:
    """The threshold decision's settings in words: target, confidence, costs, capacity."""
    text = (f"target error {100 * views.target_error(v):g}% at {100 * v.confidence:g}% confidence")
    if v.cost_review or v.cost_miss:
        text += f", cost per review {v.cost_review:g}, per missed error {v.cost_miss:g}"
        if v.cost_right is not None:
            text += f", per right answer reviewed {v.cost_right:g}"
    if v.capacity:
        text += f", capacity {v.capacity}"
    return text
