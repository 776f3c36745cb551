"""Map transport in words (:class:`calib.maps.transport.Transport`): the advice's sentence
and the lines ``calib transport`` prints. Nothing is computed here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calib.present.format import interval, num, p_value, signed

if TYPE_CHECKING:
    from calib.maps.transport import Transport

#: Why each advice was given, by the engine's reason code.
REASONS: dict[str, str] = {
    "map_hurts": ("Retire the map: on the new data its probabilities score worse than the stated confidence "
                  "itself (paired Brier test); it now does harm"),
    "miscalibrated": ("Refit the map on the new data: its probabilities are no longer calibrated there "
                      "(cumulative-differences test), though it does no harm"),
    "holds": "Keep the map: its probabilities are still calibrated on the new data",
    "untestable": "Keep the map: the new data cannot test it (every mapped answer at 0 or 1 came out as mapped)",
}


def advice_sentence(t: Transport) -> str:
    """The advice and why, in one sentence with its evidence."""
    ku = t.calibration.kuiper_test
    ev = f"Kuiper {p_value(ku.p_value, ku.log10_p, bound=ku.p_bound)}"
    g = t.gain_test
    if g.p_value is not None:
        ev += f"; Brier gain {signed(t.gain_now, 4)}, {p_value(g.p_value, g.log10_p)}"
    return f"{REASONS[t.reason]} ({ev}; each test at {100 * (1 - t.level) / 2:g}%, Bonferroni)."


def transport_lines(t: Transport, map_name: str, data_name: str) -> list[str]:
    """What ``calib transport`` prints."""
    title = f"Map transport: {t.method} map from {map_name} on {data_name}"
    c = t.calibration
    lvl = f"{100 * t.level:g}%"
    out = [title, "=" * len(title), "", f"Advice: {t.advice.upper()}", f"  {advice_sentence(t)}", ""]
    out.append(f"New data: {t.n_new:,} answers; the map was fitted on {t.n_fit:,}." if t.n_fit else
               f"New data: {t.n_new:,} answers; the map file does not say how many rows it was fitted on.")
    out.append(f"  Mean mapped probability minus hit rate on the new data: {signed(t.gap, 4)}.")
    ku, ks = c.kuiper_test, c.ks_test
    if ku.statistic is not None:
        out.append(f"  Cumulative differences of the mapped probabilities: Kuiper {num(c.kuiper, 4)} "
                   f"({p_value(ku.p_value, ku.log10_p, bound=ku.p_bound)}), Kolmogorov-Smirnov {num(c.ks, 4)} "
                   f"({p_value(ks.p_value, ks.log10_p, bound=ks.p_bound)}); null variance times "
                   f"{t.inflation:.3g} for the map's own fitting error (1 + new rows / fitted rows).")
    else:
        out.append(f"  Cumulative differences of the mapped probabilities: {ku.note}.")
    out += ["", f"Brier score on the new data (lower is better): stated {num(t.brier_stated, 4)}, mapped "
                f"{num(t.brier_mapped, 4)}, constant base rate {num(t.brier_base_rate, 4)}.",
            f"  Gain of the map now (stated - mapped): {signed(t.gain_now, 4)} {interval(*t.gain_now_ci, lambda x: num(x, 4))} "
            f"({lvl} normal interval)."]
    if t.gain_then is not None and t.then is not None:
        out.append(f"  Gain then, on held-out data when fitted ({t.then.get('scoring') or 'held out'}, "
                   f"{int(t.then.get('n_eval') or 0):,} rows): {signed(t.gain_then, 4)}.")
    else:
        out.append("  Gain then: unknown (the map file has no held-out score; maps written by calib fit --out "
                   "carry one).")
    return out
