"""Drift between runs for people: the text the CLI prints and the figures the Drift page shows.

Contract
--------
:func:`drift_lines` and :func:`series_lines` write a :class:`calib.drift.Drift` and a
:class:`calib.drift.Series` as plain text lines (the CLI's output; the dashboard shows
them as text, never as HTML); :func:`values_figure` and :func:`series_figure` draw them
with Plotly. Every number goes through :mod:`calib.present.format`; run names are user
text and are escaped in figures (:func:`calib.present.format.esc`). Nothing here
recomputes a result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from calib.drift.attribution import MIN_ANCHOR_N
from calib.present.format import MISSING, esc, num, p_value, pct
from calib.wording import value as stated_text

if TYPE_CHECKING:
    from calib.drift import Change, Drift, Series, ThresholdCheck, ValueChange
    from calib.drift.attribution import Attribution
    from calib.estimates import Estimate

#: How each headline figure is named and written.
LABELS = {"accuracy": "accuracy", "mean_confidence": "mean confidence", "ece": "calibration error (ECE)",
          "overconfidence": "overconfidence"}
#: The charts' measured in-control alarm rate (bench/sim_drift.py, (c) and (f)).
IN_CONTROL = ("a chart alarms in about 1-2% of sequences of 20 runs (measured; more with few runs in the "
              "reference or few errors per run: bench/sim_drift.py).")
#: Figures that are proportions (written as percentages, changes in points); the ECE is a number.
AS_PCT = frozenset({"accuracy", "mean_confidence", "overconfidence"})


def _pts(x: float | None, digits: int = 0) -> str:
    """A change in percentage points with a true minus sign: ``-0.15`` -> ``−15``."""
    if x is None:
        return MISSING
    v = round(100 * x, digits)
    # a change that rounds to zero is written +0, never −0
    return f"{v if v != 0 else 0.0:+.{digits}f}".replace("-", "−")


def _diff_text(c: Change) -> str:
    d = c.diff
    lo, hi = d.ci
    if c.name in AS_PCT:
        ci = "" if lo is None or hi is None else f" [{_pts(lo, 1)}, {_pts(hi, 1)}]"
        return f"{_pts(d.value, 1)} points{ci}"
    ci = "" if lo is None or hi is None else f" [{num(lo)}, {num(hi)}]"
    return f"{'' if d.value is None else ('+' if d.value >= 0 else '')}{num(d.value)}{ci}".replace("-", "−")


def change_line(c: Change) -> str:
    """``accuracy: 77.8% -> 71.2% (−6.6 points [−9.0, −4.1]), p=3e-05 (exact McNemar)``."""
    fmt = pct if c.name in AS_PCT else num
    mark = "  changed" if c.rejected else ""
    return f"{LABELS[c.name]}: {fmt(c.old)} -> {fmt(c.new)} ({_diff_text(c)}), {p_value(c.p)} ({c.test}){mark}"


def value_line(v: ValueChange) -> str:
    """``stated 90: hit rate 88% -> 73% (−15 points [−21, −9]), p=0.002 (Miettinen-Nurminen score), 412 -> 398 answers``."""
    lo, hi = v.diff.ci
    ci = "" if lo is None or hi is None else f" [{_pts(lo)}, {_pts(hi)}]"
    test = f"{p_value(v.p)} ({v.test})" if v.tested else v.test
    mark = "  MOVED" if v.moved else ""
    return (f"stated {stated_text(v.value)}: hit rate {pct(v.old.value, 0)} -> {pct(v.new.value, 0)} ({_pts(v.diff.value)} points{ci}), "
            f"{test}, {v.n_old:,} -> {v.n_new:,} answers{mark}")


def threshold_lines(t: ThresholdCheck) -> list[str]:
    """The threshold check, one line per run."""
    if t.threshold is None:
        return [f"Threshold: {t.source} (target error {pct(t.target, 0)} at {pct(t.confidence, 0)} confidence); "
                f"recommended on the new run: {MISSING if t.recommended_new is None else f'{t.recommended_new:g}'}"]
    out = [f"Threshold {t.threshold:g} ({t.source}): target error among accepted {pct(t.target, 1)}, "
           f"one-sided Clopper-Pearson bound at {pct(t.confidence, 0)}"]
    for run, a, e, err, up, holds in (("old", t.accepted_old, t.errors_old, t.error_old, t.upper_old, t.holds_old),
                                      ("new", t.accepted_new, t.errors_new, t.error_new, t.upper_new, t.holds)):
        verdict = MISSING if holds is None else ("meets the target" if holds else "does NOT meet the target")
        out.append(f"  {run} run: {a:,} accepted, {e:,} wrong ({pct(err)}, bound {pct(up)}): {verdict}")
    rec = t.recommended_new
    out.append(f"  recommended on the new run: {'none qualifies' if rec is None else f'{rec:g}'}")
    return out


def drift_lines(d: Drift) -> list[str]:
    """The whole comparison as text (the CLI's output)."""
    out = [f"Drift: {d.old_name} -> {d.new_name}",
           f"  {d.pairing}; {d.n_old:,} and {d.n_new:,} answers compared; {pct(d.level, 0)} intervals "
           f"({d.reps:,} bootstrap resamples)"]
    if d.dropped_old or d.dropped_new:
        out.append(f"  not in both runs, left out: {d.dropped_old:,} old and {d.dropped_new:,} new answers")
    out += ["", "Headline"] + [f"  {change_line(c)}" for c in d.changes]
    if d.values:
        out += ["", "Stated values (hit rate old -> new)"] + [f"  {value_line(v)}" for v in d.values]
    if d.appeared or d.disappeared:
        out += ["", "Stated values used in one run only (named, not tested: nothing to compare their hit rate with)"]
        out += [f"  {x}" for x in use_lines(d)]
    if d.threshold is not None:
        out += [""] + threshold_lines(d.threshold)
    if d.attribution is not None:
        out += [""] + attribution_lines(d.attribution)
    moved = ", ".join(stated_text(v.value) for v in d.moved)
    changed = ", ".join(LABELS[c.name] for c in d.changes if c.rejected)
    scale_use = one_run_values(d)
    if d.drift:
        what = "; ".join(x for x in (f"values that moved: {moved}" if moved else "",
                                     f"changed: {changed}" if changed else "", scale_use) if x)
        out += ["", f"Verdict: DRIFT at alpha {d.alpha:g} ({what})."]
    else:
        out += ["", f"Verdict: no drift at alpha {d.alpha:g}" + (f" ({scale_use}: named, not tested)." if scale_use
                                                                  else ".")]
    out.append(f"  Rule: {d.rule}.")
    if d.threshold is not None:
        out.append(f"  {threshold_verdict(d.threshold)}")
    out += [f"  {n}" for n in d.notes]
    return out


def attribution_sentence(a: Attribution) -> str:
    """``of the −6.0-point change in accuracy among accepted, −4.5 [−5.8, −3.1] come from the judge
    and −1.5 [...] from the answers judged``."""
    def part(p: Estimate) -> str:
        lo, hi = p.ci
        ci = "" if lo is None or hi is None else f" [{_pts(lo, 1)}, {_pts(hi, 1)}]"
        return f"{_pts(p.value, 1)}{ci}"

    return (f"Of the {_pts(a.total.value, 1)}-point change in accuracy among accepted ({pct(a.accuracy_old)} -> "
            f"{pct(a.accuracy_new)} on {a.shared_items:,} shared items), {part(a.judge)} points come from the "
            f"judge and {part(a.system)} from the answers judged.")


def attribution_lines(a: Attribution) -> list[str]:
    """Who moved: the judge or the system (:mod:`calib.drift.attribution`), and whether the
    judge's stated values still mean the same on the anchor items."""
    at = "every item accepted" if a.threshold is None else f"threshold {a.threshold:g} ({a.threshold_source})"
    out = [f"Who moved ({at}; items matched by {a.matched_by}, answers compared by {a.answer_match}: "
           f"{a.same_answer:,} of {a.shared_items:,} items kept their answer)",
           f"  {attribution_sentence(a)}",
           f"  Old answers with the new judge: {pct(a.old_answers_new_judge)}; new answers with the old judge: "
           f"{pct(a.new_answers_old_judge)}. Judge part: the Shapley average of the two orders; "
           f"{pct(a.level, 0)} paired-bootstrap intervals over the shared items ({a.reps:,} resamples)."]
    tested = [v for v in a.anchors if v.p is not None]
    if tested:
        moved = [v for v in tested if v.moved]
        out.append(f"  Anchor items ({a.anchor_items:,}, answers unchanged): hit rate of each stated value then vs "
                   "now (Miettinen-Nurminen score test, Holm): " + (
                       "the values still mean the same." if not moved else
                       "CHANGED meaning: " + ", ".join(f"{stated_text(v.value)} ({pct(v.old, 0)} -> {pct(v.new, 0)})"
                                                       for v in moved) + "."))
    elif a.anchor_items:
        out.append(f"  Anchor items ({a.anchor_items:,}): no stated value has {MIN_ANCHOR_N} answers in both runs; "
                   "meaning not tested.")
    out += [f"  {n}" for n in a.notes]
    return out


#: The parts of the change in accuracy among accepted, as the Drift page's table names them.
ATTRIBUTION_PARTS = (("judge", "the judge (same answer, new judgment)"),
                     ("system", "what is judged (changed answers)"), ("total", "total"))


def attribution_rows(a: Attribution) -> list[dict[str, str]]:
    """The judge's part, the system's and the total change in accuracy among accepted, each in
    percentage points with its interval (the Drift page's table)."""
    from calib.present.format import ci_text, points

    return [{"part": label, "change in accuracy among accepted": points(getattr(a, key).value),
             f"{pct(a.level, 0)} interval (points)": ci_text(getattr(a, key).ci, as_pct=True) or MISSING}
            for key, label in ATTRIBUTION_PARTS]


def anchor_rows(a: Attribution) -> list[dict[str, str]]:
    """Per stated value on the anchor items: answers and hit rate then and now, the change with
    its interval and p-value (``not tested`` under :data:`MIN_ANCHOR_N` answers in a run), and
    whether Holm's step-down finds it moved (the Drift page's table)."""
    from calib.present.format import ci_text, count, points

    return [{"stated": stated_text(v.value), "answers then": count(v.n_old), "answers now": count(v.n_new),
             "hit rate then": pct(v.old), "hit rate now": pct(v.new),
             "change": MISSING if v.diff.value is None else points(v.diff.value),
             "interval (points)": ci_text(v.diff.ci, as_pct=True) or MISSING,
             "p": p_value(v.p) if v.p is not None else f"not tested (under {MIN_ANCHOR_N} answers in a run)",
             "meaning": "moved" if v.moved else ""} for v in a.anchors]


def one_run_values(d: Drift) -> str:
    """The stated values used in one run only, in one clause (``""`` when none):
    ``values no longer used: 60, 90; values newly used: 95``."""
    gone = ", ".join(stated_text(v) for v, _ in d.disappeared)
    came = ", ".join(stated_text(v) for v, _ in d.appeared)
    return "; ".join(x for x in (f"values no longer used: {gone}" if gone else "",
                                 f"values newly used: {came}" if came else "") if x)


def use_lines(d: Drift) -> list[str]:
    """One line per stated value used in one run only: ``stated 90: 823 answers (41%) in the old run, none in the new``."""
    out = []
    for values, run, other, total in ((d.disappeared, "old", "new", d.n_old), (d.appeared, "new", "old", d.n_new)):
        for v, n in values:
            out.append(f"stated {stated_text(v)}: {n:,} answers ({pct(n / total if total else None, 0)}) in the "
                       f"{run} run, none in the {other}: {'disappeared' if run == 'old' else 'appeared'}")
    return out


def threshold_verdict(t: ThresholdCheck) -> str:
    """Whether the new run certifies the threshold, said apart from drift (it is a bound, not a test of change)."""
    if t.threshold is None or t.holds is None:
        return "Threshold: nothing to certify on the new run (no threshold, or nothing accepted at it)."
    if t.holds:
        return (f"Threshold {t.threshold:g}: certified on the new run (bound {pct(t.upper_new)} <= target "
                f"{pct(t.target, 1)}).")
    return (f"Threshold {t.threshold:g}: NOT certified on the new run (bound {pct(t.upper_new)} > target "
            f"{pct(t.target, 1)}). This is not a test of change: the new run alone does not show the error at "
            "the threshold is under the target (an unchanged judge near its target misses it often); "
            "calib drift --fail-on-uncertified exits 4 on it, --fail-on-drift only on drift.")


def series_lines(s: Series) -> list[str]:
    """The series as a table and the chart's verdict."""
    a, e = s.accuracy, s.error_accepted
    out = [f"Runs in time order; error among accepted at threshold {s.threshold:g} ({s.threshold_source})",
           f"  {'run':<32} {'answers':>8} {'accuracy':>9} {'ECE':>7} {'accepted':>9} {'err acc':>8} "
           f"{'EWMA acc':>9} {'limit':>7}"]
    for i, r in enumerate(s.runs):
        ew = MISSING if a.ewma[i] is None else num(a.ewma[i], 2)
        lim = MISSING if a.upper[i] is None else f"±{num(a.upper[i], 2)}"
        flag = "  <- first alarm" if i == s.alarm else ""
        out.append(f"  {r.name[:32]:<32} {r.n:>8,} {pct(r.accuracy):>9} {num(r.ece):>7} {r.accepted:>9,} "
                   f"{pct(r.error_accepted):>8} {ew:>9} {lim:>7}{flag}")
    ref = (f"reference: the first {a.reference} run(s) (accuracy {pct(a.mu0)}, error among accepted {pct(e.mu0)})"
           if not e.skipped else
           f"reference: accuracy the first {a.reference} run(s) ({pct(a.mu0)}); error among accepted runs "
           f"{e.skipped + 1}-{e.skipped + e.reference} ({pct(e.mu0)}: run 1 picked the threshold, so it is not "
           "that chart's reference)")
    out.append(f"Chart: EWMA (lambda {a.lam:g}, limit {a.width:g} standard deviations) of the binomial score of "
               f"accuracy (two-sided) and error among accepted (upper side), {ref}")
    out.append(f"  In control, {IN_CONTROL}")
    for c, what in ((a, "accuracy"), (e, "error among accepted")):
        out.append(f"  {what}: " + ("within the limits" if c.alarm is None else
                                     f"first crosses the limit at run {c.alarm + 1} ({s.runs[c.alarm].name})"))
    out.append("Verdict: " + ("no drift." if s.alarm is None else
                              f"DRIFT from run {s.alarm + 1} ({s.runs[s.alarm].name})."))
    return out


def values_figure(d: Drift) -> go.Figure:
    """Old vs new hit rate per stated value with each run's Wilson interval; moved values marked.

    The two runs stand side by side at each value (:func:`calib.present.axes.dodge`), the
    axes fit the values used and the intervals (the dashed line, a value that meant what
    it said, still crossing them); the hover gives the value, n, the hit rate and its interval.
    """
    from calib.present.axes import diagonal_ranges, dodge
    from calib.present.figures import PALETTE, REFERENCE_COLOR, THRESHOLD_COLOR, _layout

    fig = go.Figure()
    xs = [v.value for v in d.values]
    lo_s, hi_s = d.scale
    span = (hi_s - lo_s) or 1.0
    offsets = dodge([xs, xs], span=span)
    pct_x: list[float] = [100 * (x - lo_s) / span for x in xs]
    pct_y: list[float] = []
    for (run, color), dx in zip((("old", REFERENCE_COLOR), ("new", PALETTE[0])), offsets, strict=True):
        ys = [getattr(v, run).value for v in d.values]
        cis = [getattr(v, run).ci for v in d.values]
        ns = [getattr(v, f"n_{run}") for v in d.values]
        up = [None if y is None or c[1] is None else 100 * (c[1] - y) for y, c in zip(ys, cis, strict=True)]
        dn = [None if y is None or c[0] is None else 100 * (y - c[0]) for y, c in zip(ys, cis, strict=True)]
        pct_y += [100 * e for c in cis for e in c if e is not None] + [100 * y for y in ys if y is not None]
        fig.add_trace(go.Scatter(
            x=[x + dx for x in xs], y=[None if y is None else 100 * y for y in ys], mode="markers",
            name=esc(f"{run}: {d.old_name if run == 'old' else d.new_name}"), marker={"color": color, "size": 9},
            error_y={"type": "data", "array": up, "arrayminus": dn, "visible": True, "color": color},
            customdata=[[x, n, "" if c[0] is None else f"{100 * c[0]:.1f}%",
                         "" if c[1] is None else f"{100 * c[1]:.1f}%"] for x, n, c in zip(xs, ns, cis, strict=True)],
            hovertemplate=("stated %{customdata[0]:.4g}<br>n = %{customdata[1]:,}<br>right %{y:.1f}%, "
                           "interval [%{customdata[2]}, %{customdata[3]}]<extra>" + run + "</extra>")))
    moved = [v for v in d.values if v.moved]
    if moved:
        fig.add_trace(go.Scatter(x=[v.value + offsets[1] for v in moved], y=[100 * v.new.value for v in moved],
                                 mode="markers",
                                 name="moved (Holm)", marker={"symbol": "circle-open", "size": 20,
                                                              "color": THRESHOLD_COLOR, "line": {"width": 2}},
                                 hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=[lo_s, hi_s], y=[0, 100], mode="lines", name="stated = right",
                             line={"dash": "dash", "color": REFERENCE_COLOR, "width": 1}, hoverinfo="skip"))
    (px_lo, px_hi), y_range = diagonal_ranges(pct_x, pct_y)
    fig.update_xaxes(range=[lo_s + px_lo * span / 100, lo_s + px_hi * span / 100])
    if 0 < len(xs) <= 12:
        fig.update_xaxes(tickmode="array", tickvals=xs)  # ticks on the values, the runs either side
    fig.update_yaxes(range=list(y_range))
    return _layout(fig, title="Hit rate per value<br><sup>old run vs new run</sup>",
                   x=f"stated confidence ({lo_s:g}-{hi_s:g})", y="share right (%)", height=460)


def series_figure(s: Series) -> go.Figure:
    """Top: accuracy, ECE and error among accepted per run; bottom: the EWMA chart of
    accuracy with its limits, the first alarm marked. Okabe-Ito colours; the hover gives
    the run, its n and the figure."""
    from calib.present.figures import PALETTE, THRESHOLD_COLOR, _layout

    names = [esc(r.name) for r in s.runs]
    x = list(range(1, len(s.runs) + 1))
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=("Per run", "EWMA of accuracy"))
    ns = [f"n = {r.n:,}" for r in s.runs]
    for (key, label), color in zip((("accuracy", "accuracy"), ("error_accepted", "error among accepted")),
                                   PALETTE, strict=False):
        ys = [None if getattr(r, key) is None else 100 * getattr(r, key) for r in s.runs]
        fig.add_trace(go.Scatter(x=x, y=ys, mode="lines+markers", name=f"{label} (%)", customdata=names, text=ns,
                                 line={"color": color}, marker={"color": color},
                                 hovertemplate="%{customdata} (%{text})<br>%{y:.1f}%<extra>"
                                               + label + "</extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=x, y=[None if r.ece is None else 100 * r.ece for r in s.runs], mode="lines+markers",
                             name="ECE (x100)", customdata=names, text=ns, line={"color": PALETTE[2]},
                             marker={"color": PALETTE[2]},
                             hovertemplate="%{customdata} (%{text})<br>%{y:.2f}"
                                           "<extra>ECE x100</extra>"), row=1, col=1)
    a = s.accuracy
    fig.add_trace(go.Scatter(x=x, y=list(a.ewma), mode="lines+markers", name="EWMA of accuracy", customdata=names, text=ns,
                             line={"color": PALETTE[3]}, marker={"color": PALETTE[3]},
                             hovertemplate="%{customdata}<br>%{y:.2f}<extra>EWMA</extra>"), row=2, col=1)
    for lim, nm in ((a.upper, "upper limit"), (a.lower, "lower limit")):
        if lim is None:
            continue
        fig.add_trace(go.Scatter(x=x, y=list(lim), mode="lines", name=nm,
                                 line={"dash": "dash", "color": THRESHOLD_COLOR}, hoverinfo="skip"), row=2, col=1)
    if s.alarm is not None:
        fig.add_vline(x=s.alarm + 1, line={"color": THRESHOLD_COLOR, "width": 1})
    fig = _layout(fig, title="", x="", y="percent", height=640)
    fig.update_xaxes(tickmode="array", tickvals=x)
    fig.update_xaxes(title_text="run (time order)", row=2, col=1)
    fig.update_yaxes(title_text="percent", row=1, col=1)
    fig.update_yaxes(title_text="standardised EWMA", row=2, col=1)
    return fig
