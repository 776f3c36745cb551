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
        ev += f"; Brier gain {signed(t.gain_now.value, 4)}, {p_value(g.p_value, g.log10_p)}"
    return f"{REASONS[t.reason]} ({ev}; each test at {100 * (1 - t.level) / 2:g}%, Bonferroni)."


def transport_lines(t: Transport, map_name: str, data_name: str) -> list[str]:
    """What ``calib transport`` prints."""
    title = f"Map transport: {t.method} map from {map_name} on {data_name}"
    lvl = f"{100 * t.level:g}%"
    out = [title, "=" * len(title), "", f"Advice: {t.advice.upper()}", f"  {advice_sentence(t)}", ""]
    out.append(f"New data: {t.n_new:,} answers; the map was fitted on {t.n_fit:,}." if t.n_fit else
               f"New data: {t.n_new:,} answers; the map file does not say how many rows it was fitted on.")
    out.append(f"  Mean mapped probability minus hit rate on the new data: {signed(t.gap, 4)}.")
    out.append(f"  {calibration_sentence(t)}")
    out += ["", f"Brier score on the new data (lower is better): stated {num(t.brier_stated, 4)}, mapped "
                f"{num(t.brier_mapped, 4)}, constant base rate {num(t.brier_base_rate, 4)}.",
            f"  Gain of the map now (stated - mapped): {signed(t.gain_now.value, 4)} "
            f"{interval(*t.gain_now.ci, lambda x: num(x, 4))} "
            f"({lvl} normal interval)."]
    if t.gain_then is not None and t.then is not None:
        out.append(f"  Gain then, on held-out data when fitted ({t.then.get('scoring') or 'held out'}, "
                   f"{int(t.then.get('n_eval') or 0):,} rows): {signed(t.gain_then, 4)}.")
    else:
        out.append("  Gain then: unknown (the map file has no held-out score; maps written by calib fit --out "
                   "carry one).")
    return out


def calibration_sentence(t: Transport) -> str:
    """The calibration test of the mapped probabilities on the new data, in one sentence."""
    c = t.calibration
    ku, ks = c.kuiper_test, c.ks_test
    if ku.statistic is None:
        return f"Cumulative differences of the mapped probabilities: {ku.note}."
    return (f"Cumulative differences of the mapped probabilities: Kuiper {num(c.kuiper, 4)} "
            f"({p_value(ku.p_value, ku.log10_p, bound=ku.p_bound)}), Kolmogorov-Smirnov {num(c.ks, 4)} "
            f"({p_value(ks.p_value, ks.log10_p, bound=ks.p_bound)}); null variance times "
            f"{t.inflation:.3g} for the map's own fitting error (1 + new rows / fitted rows).")


#: The columns of :func:`then_now_rows`.
THEN, NOW = "then (held out, when fitted)", "now (the new run)"


def then_now_rows(t: Transport) -> list[dict[str, str]]:
    """The held-out score when the map was fitted beside its score on the new data (Brier,
    lower is better), as rows of text for a table; "unknown" where the map does not say."""
    then = t.then or {}

    def cell(x: object) -> str:
        return "unknown" if x is None else num(float(x), 4)  # type: ignore[arg-type]

    gain_now = f"{signed(t.gain_now.value, 4)} {interval(*t.gain_now.ci, lambda x: num(x, 4))}"
    return [
        {"Brier score": "stated confidence", THEN: cell(then.get("brier_stated")), NOW: cell(t.brier_stated)},
        {"Brier score": "mapped probabilities", THEN: cell(then.get("brier_mapped")), NOW: cell(t.brier_mapped)},
        {"Brier score": "constant base rate", THEN: cell(then.get("brier_base_rate")), NOW: cell(t.brier_base_rate)},
        {"Brier score": "gain of the map (stated - mapped)",
         THEN: "unknown" if t.gain_then is None else signed(t.gain_then, 4), NOW: gain_now},
    ]


#: The Drift page's words around map transport.
PAGE_NOTE = ("A recalibration map, fitted here on the old run as the Recalibration page fits it or read from a "
             "saved map file, is checked on the new run: a calibration test of its probabilities there (cumulative differences, no "
             "bins) and its Brier score then (held out, when fitted) and now, with the advice: keep, refit or "
             "retire. calib transport MAP.json NEW does the same from a saved map, with the advice as its exit code.")
NO_MAP = "Choose a map above to check whether a map fitted on the old run still holds on the new run."


#: Where the Drift page's map comes from.
MAP_SOURCES = ("fitted here on the old run", "a saved map file")
FILE_LABEL = "Saved map (JSON: calib fit --out, or the Recalibration page's download)"
NO_FILE = "Upload a saved map to check it on the new run."


def fitted_on(t: Transport, method_label: str, from_file: bool = False) -> str:
    """Which map was checked, on how many answers (plain text: no run or file name in it)."""
    where = "the saved map, fitted on" if from_file else "fitted on"
    what = "answers" if from_file else "answers of the old run"
    return (f"Map: {method_label}, {where} {t.n_fit:,} {what}; checked on the {t.n_new:,} answers of the "
            f"new run.")
