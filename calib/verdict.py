"""The audit's verdict: its sentences, by fact, and its notes, from what was computed.

Every sentence follows from an :class:`~calib.audit.Audit`: the calibration verdict
from :func:`calib.audit.miscalibrated`, the better forecast from
:func:`calib.metrics.brier_winner`, the ranking from :func:`ranks` (the bootstrap
interval of the AUROC, or the Mann-Whitney test when there are no resamples). A page
that states a fact elsewhere shows the rest of the verdict (:func:`verdict_parts`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from calib import metrics as m
from calib.bootstrap import SMALL_SAMPLE
from calib.settings import CALIBRATION_TESTS
from calib.table import MAX_EXACT_CELLS, CountTable
from calib.wording import p_value, pct
from calib.wording import value as stated_value

if TYPE_CHECKING:
    from calib.audit import Audit

#: "No evidence of miscalibration" is hedged when the ECE interval reaches this far (5 points).
HEDGE_ECE = 0.05
#: Without an interval, a sample this small is hedged.
SMALL_N = 200
#: Per-value sentences: values holding at least this share of the answers (at most 3).
VALUE_SHARE = 0.05


def stated(a: Audit, p: float) -> str:
    """A probability written on the stated scale, 3 significant digits
    (``94.6`` on 0-100, ``0.946`` on 0-1)."""
    return f"{float(a.scale.to_stated(p)):.3g}"


def points(a: Audit, gap: float) -> str:
    """A gap between probabilities, for reading: ``16.7 points`` on a 0-100 scale (where a
    point of the scale is a percentage point), ``16.7 percentage points`` on any other (on
    1-10, "points" would read as points of the scale, 11 times larger)."""
    unit = "points" if (a.scale.lo, a.scale.hi) == (0.0, 100.0) else "percentage points"
    return f"{abs(100 * gap):.1f} {unit}"


def _test_p(t: m.Test) -> str:
    return p_value(t.p_value, t.log10_p, bound=t.p_bound)


def verdict(a: Audit) -> list[str]:
    """The verdict's sentences, most important first: accuracy and confidence, how the
    scale was used, calibration, the constant base rate, ranking."""
    return [s for part in verdict_parts(a).values() for s in part]


#: The facts of the verdict, in its order (:func:`verdict_parts`).
VERDICT_FACTS: tuple[str, ...] = ("headline", "scale", "calibration", "forecast", "ranking")


def verdict_parts(a: Audit) -> dict[str, tuple[str, ...]]:
    """The verdict's sentences by the fact each states (:data:`VERDICT_FACTS`), so that a
    page that states a fact elsewhere (the Overview's three lines) shows it once."""
    return {
        "headline": (_headline(a),), "scale": tuple(_scale_use(a)), "calibration": tuple(_calibration(a)),
        "forecast": tuple(_against_constant(a)), "ranking": (_ranking(a),),
    }


#: What :func:`ranks` decides: the number ranks right above wrong answers, the wrong
#: way round, no evidence either way; ``None``: it cannot be told.
RANKING = ("ranks", "reversed", "no evidence")


def ranks(a: Audit) -> str | None:
    """Does the stated number rank right answers above wrong ones (:data:`RANKING`)?

    By the AUROC's interval at the audit's level: above 0.5 ``"ranks"``, below
    ``"reversed"``, holding 0.5 ``"no evidence"``; without an interval (no resamples),
    by the Mann-Whitney test of AUROC = 0.5 at ``1 - level``. ``None`` when every answer
    has the same outcome or the same stated value. One decision for every face: the
    verdict's sentence and the Overview's line word it."""
    e = a.estimates["auroc"]
    auc, lo, hi = e.value, e.lo, e.hi
    if auc is None or a.distinct_values == 1:
        return None
    if lo is None or hi is None:
        if not a.tests["auroc_vs_chance"].rejects(1 - a.level):
            return "no evidence"
        return "ranks" if auc > 0.5 else "reversed"
    return "ranks" if lo > 0.5 else "reversed" if hi < 0.5 else "no evidence"


def _side(a: Audit) -> str:
    gap = a.estimates["overconfidence"].value
    return "overconfident" if gap is not None and gap > 0 else "underconfident"


def _headline(a: Audit) -> str:
    mt = a.metrics
    acc, mc, gap = mt["accuracy"], mt["mean_confidence"], mt["overconfidence"]
    assert acc is not None and mc is not None and gap is not None
    lo, hi = a.estimates["accuracy"].ci
    ci = "" if lo is None or hi is None else f" [{100 * lo:.1f}, {100 * hi:.1f}]"
    return (f"{a.n:,} answers, {pct(acc, 1)} right{ci}; mean stated confidence "
            f"{stated(a, mc)} on the {a.scale.name} scale, {points(a, gap)} {_side(a)} on average.")


def _scale_use(a: Audit) -> list[str]:
    """How the scale was used (a continuous score has no "most common value")."""
    if a.pooled or a.top_value is None or a.distinct_values > MAX_EXACT_CELLS:
        return []
    mt = a.metrics
    below = mt["share_below"] or 0.0

    def value(v: float) -> str:  # confidence in words: the phrase, quoted
        return f'"{a.scale.show(v)}"' if a.scale.labels and a.scale.show(v) != f"{v:g}" else stated_value(v)

    out = [
        f"It used {a.distinct_values} distinct value{'s' if a.distinct_values != 1 else ''} of the scale; "
        f"the most common, {value(a.top_value)}, on {pct(mt['share_top'], 0)} of answers; "
        f"{pct(below, 1)} of answers were below {value(a.below)}."
    ]
    shown = sorted((r for r in a.per_value if r.share >= VALUE_SHARE), key=lambda r: -r.n)[:3]
    for r in shown:
        out.append(
            f"A stated {value(r.value)} meant {pct(r.hit_rate.value, 0)} [{100 * r.hit_rate.lo:.0f}, "
            f"{100 * r.hit_rate.hi:.0f}], "
            f"and it meant it {r.n:,} time{'s' if r.n != 1 else ''}."
        )
    return out


def _ece_text(a: Audit) -> str:
    mt = a.metrics
    if mt["ece"] is None:
        return "ECE undefined"
    lo_e, hi_e = a.estimates["ece"].ci
    # the interval is for the population ECE; the plug-in figure is biased upward
    return (f"ECE {mt['ece']:.3f}" + (f" (debiased {mt['ece_debiased']:.3f})" if mt["ece_debiased"] is not None
                                      else "")
            + ("" if lo_e is None or hi_e is None else f", population ECE within [{lo_e:.3f}, {hi_e:.3f}]"))


def _how_miscalibrated(a: Audit) -> list[str]:
    tests, alpha, gap = a.tests, 1 - a.level, a.estimates["overconfidence"].value
    how: list[str] = []
    if tests["calibration_in_the_large"].rejects(alpha / 3) and gap is not None:
        how.append(f"{_side(a)} by {points(a, gap)} on average")
    impossible = next((tests[k] for k in CALIBRATION_TESTS if tests[k].p_value == 0.0), None)
    if impossible is not None:
        how.append(impossible.note.replace(": impossible if the stated probabilities were the truth (p = 0)",
                                           ", which a calibrated judge never does"))
    slope = a.cox.slope.value
    if slope is not None and tests["cox_lr"].rejects(alpha / 3):
        lo, hi = a.cox.slope.ci
        if hi is not None and hi < 1:
            how.append(f"the stated values are too spread out for what they predict (Cox slope {slope:.2f} "
                       f"[{lo:.2f}, {hi:.2f}]; 1 is calibrated)")
        elif lo is not None and lo > 1:
            how.append(f"the stated values are too bunched for what they predict (Cox slope {slope:.2f} "
                       f"[{lo:.2f}, {hi:.2f}]; 1 is calibrated)")
    return how or ["some stated values are far from their hit rates"]


def _test_names(a: Audit) -> dict[str, str]:
    """The calibration tests as the verdict names them."""
    return {"calibration_in_the_large": "calibration-in-the-large", "goodness_of_fit": "per-value goodness of fit"
            if a.scheme == "values" else f"goodness of fit on {a.bins} {a.scheme} bins",
            "cox_lr": "Cox recalibration test"}


def _calibration(a: Audit) -> list[str]:
    tests, named = a.tests, _test_names(a)
    evidence = ", ".join(f"{named[k]} {_test_p(tests[k])}" for k in CALIBRATION_TESTS if tests[k].p_value is not None)
    if a.miscalibrated:
        return [f"Miscalibrated: {'; '.join(_how_miscalibrated(a))}. {_ece_text(a)} ({evidence})."]
    if a.miscalibrated is False:
        return [f"No evidence of miscalibration at the {100 * a.level:g}% level: {_ece_text(a)} ({evidence}).",
                *_hedges(a)]
    return []


def _hedges(a: Audit) -> list[str]:
    """Why "no evidence of miscalibration" is not "calibrated": a test that would count on
    its own but not at the verdict's Bonferroni cut, and an ECE interval (or a sample) too
    wide to rule out a real gap."""
    alpha, k = 1 - a.level, len(CALIBRATION_TESTS)
    named, out = _test_names(a), []
    near = [f"{named[key]} {_test_p(a.tests[key])}" for key in CALIBRATION_TESTS
            if a.tests[key].p_value is not None and a.tests[key].p_value < alpha]
    if near:
        out.append(f"The tests disagree: {' and '.join(near)} would count at the {100 * alpha:g}% level on its own, "
                   f"but the verdict runs {k} tests and needs one below p={alpha / k:.4g} (Bonferroni), so that a "
                   f"calibrated judge is called miscalibrated at most {100 * alpha:g}% of the time.")
    hi = a.estimates["ece"].hi
    if hi is not None and hi >= HEDGE_ECE:
        out.append(f"Not proof of calibration: with {a.n:,} answers the calibration error could still be as large "
                   f"as {hi:.3f} (the ECE interval's upper end); more answers would narrow it.")
    elif hi is None and a.n < SMALL_N:
        out.append(f"Not proof of calibration: {a.n:,} answers are few, so only a large gap between stated and "
                   "actual would show in the tests.")
    return out


def _against_constant(a: Audit) -> list[str]:
    mt, bt = a.metrics, a.tests["brier_vs_constant"]
    bs, base = mt["brier"], mt["brier_base_rate"]
    if bs is None or base is None:
        return []
    nums = f"Brier {bs:.3f} vs {base:.3f}"
    const = f"the constant base rate ({pct(mt['accuracy'], 0)} for every answer)"
    winner = m.brier_winner(bt, 1 - a.level)
    if winner is None:
        return [f"The stated confidence and {const} cannot be compared: {bt.note} ({nums})."]
    if winner == "constant":
        return [f"{const[0].upper()}{const[1:]} beats the stated confidence: {nums} ({_test_p(bt)})."]
    if winner == "stated":
        return [f"The stated confidence beats {const}: {nums} ({_test_p(bt)})."]
    return [f"The stated confidence does no better than {const}: {nums} ({_test_p(bt)})."]


def _ranking(a: Audit) -> str:
    e = a.estimates["auroc"]
    auc, lo, hi = e.value, e.lo, e.hi
    if auc is None:
        return ("Whether the number ranks answers cannot be told: every answer is "
                + ("right." if a.correct == a.n else "wrong."))
    if a.distinct_values == 1:
        return "The number cannot rank answers: it is the same for all of them."
    decided = ranks(a)
    if lo is None or hi is None:  # no interval (no resamples): the Mann-Whitney test decided
        evid = f"AUROC {auc:.2f}, Mann-Whitney {_test_p(a.tests['auroc_vs_chance'])}; no interval without resamples"
    else:
        evid = f"AUROC {auc:.2f} [{lo:.2f}, {hi:.2f}]"
    if decided == "ranks":
        return f"The number ranks answers: {evid} (0.5 is no ranking)."
    if decided == "reversed":
        return f"The number ranks answers the wrong way round: {evid}."
    held = "" if lo is None or hi is None else " (the interval holds 0.5)"
    return f"No evidence that the number ranks answers better than chance: {evid}{held}."


def notes(a: Audit, t: CountTable) -> list[str]:
    out: list[str] = []
    if a.correct in (0, a.n):
        out.append(f"One class only (every answer {'right' if a.correct == a.n else 'wrong'}): AUROC, the Brier "
                   "skill score and the Cox fit are undefined; the tests still compare stated and actual.")
    if a.distinct_values == 1:
        out.append("One distinct stated value: nothing can be ranked, and the Cox slope is not identifiable.")
    sp = a.tests["spiegelhalter"]
    if a.miscalibrated and (sp.p_value is None or sp.p_value >= (1 - a.level)):
        out.append(f"Spiegelhalter's Z ({_test_p(sp)}) misses this miscalibration; it is blind when every stated "
                   "probability is 0, 0.5 or 1 (all at 100 included) and to over- and underconfidence that "
                   "cancel in its weighted sum. Calibration-in-the-large is the test blind to overconfidence "
                   "symmetric around 0.5.")
    if a.pooled:
        out.append(f"Confidences pooled on a 0.001 grid ({t.cells:,} cells): exact sums keep accuracy, "
                   f"Brier and log loss exact; AUROC may differ from the row-level value by at most "
                   f"{a.auroc_grid_bound:.2g}.")
    elif t.coarse() is not t and a.reps:
        out.append(f"{a.distinct_values:,} distinct confidences: every figure is exact; the intervals resample "
                   f"them pooled on a 0.001 grid ({t.coarse().cells:,} cells), moved by exact minus pooled figure.")
    if a.scheme_why:
        out.append(f"{a.scheme_why[0].upper()}{a.scheme_why[1:]}.")
    if a.estimates["ece"].value is not None and a.estimates["ece"].lo is not None:
        out.append("The ECE interval is for the population ECE: the plug-in ECE is biased upward by each bin's "
                   "noise, so the lower end comes from the debiased ECE (each bin's noise removed in "
                   "quadrature), the upper end from the plug-in's resamples.")
    if a.clusters is not None:
        out.append(_clusters_note(a))
    if a.reps and a.n < SMALL_SAMPLE:
        out.append(f"Only {a.n:,} answers: percentile bootstrap intervals (accuracy, Brier, AUROC, ...) run narrow "
                   f"below {SMALL_SAMPLE:,}; in simulation, 95% intervals of the Brier score and AUROC with 2-3 "
                   "stated values covered 90-93% at 30-50 answers (94.5-97.5% at 100). Read them as rough.")
    return out


#: Fewest clusters at which cluster-robust intervals and tests are trusted without a warning.
MIN_CLUSTERS = 30


def _clusters_note(a: Audit) -> str:
    c = a.clusters or {}
    eff, deff = c.get("effective_n"), c.get("design_effect")
    size = (f"; effective sample size {eff:,.0f} of {a.n:,} (design effect of the accuracy {deff:.2f})"
            if eff is not None and deff is not None else "")
    out = (f"Rows are clustered: {c.get('count', 0):,} clusters ({c.get('how', '')}){size}. Every interval "
           "resamples whole clusters and each calibration test divides its statistic by its own design effect "
           "(Rao-Scott), the ranking test too; each stated value's hit-rate interval and test use that value's "
           "own design effect, and the Cox intervals the cluster-robust sandwich variance.")
    if c.get("count", 0) < MIN_CLUSTERS:
        out += f" With fewer than {MIN_CLUSTERS} clusters the intervals and tests are rough."
    return out
