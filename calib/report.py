"""The audit as a short text report (what ``calib audit`` prints) and as JSON.

The text reads top to bottom like the reference post: the load line, a table of
the figures with their intervals, the per-value table (what each stated value
meant), the tests, and the verdict. Numbers come from :class:`calib.audit.Audit`
only; nothing is recomputed here.
"""

from __future__ import annotations

import json

from calib.audit import Audit, fmt_p, fmt_value

#: Width of the label column of the figures table.
LABEL = 30


def to_json(a: Audit, *, indent: int | None = 2) -> str:
    """The audit's JSON object (:meth:`Audit.to_dict`), strict: no NaN or Infinity."""
    # ASCII: a lone surrogate read from the input is escaped, never an encoding error
    return json.dumps(a.to_dict(), indent=indent, allow_nan=False, ensure_ascii=True)


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{100 * x:.{digits}f}%"


def _interval(ci: tuple[float | None, float | None], fmt) -> str:  # type: ignore[no-untyped-def]
    lo, hi = ci
    return "" if lo is None or hi is None else f"[{fmt(lo)}, {fmt(hi)}]"


def _line(label: str, value: str, ci: str = "") -> str:
    return f"  {label:<{LABEL}}{value:>12}   {ci}".rstrip()


def figures(a: Audit) -> list[str]:
    """The table of figures with their bootstrap intervals."""
    mt, ci = a.metrics, a.ci
    level = f"{100 * a.level:g}%"

    def stated(p: float | None) -> str:
        return "n/a" if p is None else f"{float(a.scale.to_stated(p)):.3g}"

    def pts(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:+.1f} pts"

    scheme = {"values": "per value", "width": f"{a.bins} equal-width bins", "mass": f"{a.bins} equal-mass bins"}[a.scheme]
    rows = [
        f"  {'':<{LABEL}}{'estimate':>12}   {level} interval ({a.reps:,} resamples)" if a.reps else
        f"  {'':<{LABEL}}{'estimate':>12}",
        _line("Answers", f"{a.n:,}"),
        _line("Right", _pct(mt["accuracy"]), _interval(ci["accuracy"], _pct)),
        _line(f"Mean stated ({a.scale.name})", stated(mt["mean_confidence"]), _interval(ci["mean_confidence"], stated)),
        _line("Overconfidence (stated - right)", pts(mt["overconfidence"]), _interval(ci["overconfidence"], pts)),
        _line("Brier score", _num(mt["brier"]), _interval(ci["brier"], _num)),
        _line("Brier, constant base rate", _num(mt["brier_base_rate"]), _interval(ci["brier_base_rate"], _num)),
        _line("Brier skill vs base rate", _num(mt["brier_skill"]), _interval(ci["brier_skill"], _num)),
        _line("Log loss", _num(mt["log_loss"]), _interval(ci["log_loss"], _num)),
        _line("AUROC (0.5 = no ranking)", _num(mt["auroc"], 3), _interval(ci["auroc"], _num)),
        _line(f"ECE ({scheme})", _num(mt["ece"]), _interval(ci["ece"], _num)),
        _line("MCE", _num(mt["mce"]), _interval(ci["mce"], _num)),
        _line("Debiased L2 error", _num(mt["ece_l2_debiased"]), _interval(ci["ece_l2_debiased"], _num)),
        _line("Smooth ECE", _num(mt["smooth_ece"]), _interval(ci["smooth_ece"], _num)),
        _line("Murphy reliability", _num(a.murphy.reliability, 4), _interval(ci["murphy_reliability"], lambda x: _num(x, 4))),
        _line("Murphy resolution", _num(a.murphy.resolution, 4), _interval(ci["murphy_resolution"], lambda x: _num(x, 4))),
        _line("Murphy uncertainty", _num(a.murphy.uncertainty, 4), _interval(ci["murphy_uncertainty"], lambda x: _num(x, 4))),
        _line("CORP miscalibration (MCB)", _num(a.corp.mcb, 4), _interval(ci["corp_mcb"], lambda x: _num(x, 4))),
        _line("CORP discrimination (DSC)", _num(a.corp.dsc, 4), _interval(ci["corp_dsc"], lambda x: _num(x, 4))),
        _line("CORP uncertainty (UNC)", _num(a.corp.unc, 4), _interval(ci["corp_unc"], lambda x: _num(x, 4))),
        _line("Cox intercept (0 = calibrated)", _num(a.cox.intercept, 2), _interval(a.cox.intercept_ci, lambda x: _num(x, 2))),
        _line("Cox slope (1 = calibrated)", _num(a.cox.slope, 2), _interval(a.cox.slope_ci, lambda x: _num(x, 2))),
    ]
    return rows


def tests_block(a: Audit) -> list[str]:
    """One line per test: statistic and p-value."""
    names = {
        "calibration_in_the_large": "Calibration-in-the-large",
        "goodness_of_fit": "Per-value goodness of fit" if a.scheme == "values" else "Binned goodness of fit",
        "cox_lr": "Cox recalibration (LR)",
        "brier_vs_constant": "Brier vs constant (paired)",
        "spiegelhalter": "Spiegelhalter Z (not used)",
        "auroc_vs_chance": "AUROC vs chance (M-W U)",
    }
    out = []
    for key, label in names.items():
        t = a.tests[key]
        if t.statistic is None:
            # p = 0 without a statistic: data that calibration rules out (the note says which)
            out.append(f"  {label:<{LABEL}}{'p=0, ' if t.p_value == 0 else 'undefined: '}{t.note}")
            continue
        stat = f"z = {t.statistic:.2f}" if t.df is None else f"chi2 = {t.statistic:.1f}, df {t.df:g}"
        out.append(f"  {label:<{LABEL}}{stat}, {fmt_p(t.p_value, t.log10_p, bound=t.p_bound)}")
    return out


def per_value_block(a: Audit) -> list[str]:
    """What each stated value meant (unpooled tables), or the bins (pooled ones)."""
    level = f"{100 * a.level:g}%"
    if a.per_value:
        out = [f"  {'stated':>8} {'n':>9} {'share':>7} {'right':>7}   {level + ' Wilson':<16}{'gap':>7}"]
        for r in a.per_value:
            out.append(
                f"  {fmt_value(r.value):>8} {r.n:>9,} {100 * r.share:>6.1f}% {100 * r.hit_rate:>6.1f}%   "
                f"{f'[{100 * r.lo:.1f}, {100 * r.hi:.1f}]':<16}{100 * r.gap:>+7.1f}"
            )
        return out
    out = [f"  {'bin':>17} {'n':>9} {'stated':>7} {'right':>7}   {level + ' Wilson':<16}{'gap':>7}"]
    for b in a.bin_table:
        rng = f"{fmt_value(b.lo)}-{fmt_value(b.hi)}"
        out.append(
            f"  {rng:>17} {b.n:>9,} {100 * b.mean_prob:>6.1f}% {100 * b.hit_rate:>6.1f}%   "
            f"{f'[{100 * b.ci_lo:.1f}, {100 * b.ci_hi:.1f}]':<16}{100 * b.gap:>+7.1f}"
        )
    return out


def groups_block(a: Audit) -> list[str]:
    """One line per group: the comparison table of the reference post."""
    out = [f"  {'group':<24} {'n':>8} {'right':>7} {'stated':>7} {'ECE':>7} {'interval':>16}  {'Brier':>6} {'const':>6}"]
    for g in a.groups:
        mt = g.metrics
        lo, hi = g.ci["ece"]
        ival = "" if lo is None or hi is None else f"[{lo:.3f}, {hi:.3f}]"
        mc = mt["mean_confidence"]
        out.append(
            f"  {g.name[:24]:<24} {g.n:>8,} {_pct(mt['accuracy']):>7} "
            f"{'n/a' if mc is None else f'{float(g.scale.to_stated(mc)):.3g}':>7} {_num(mt['ece']):>7} {ival:>16}  "
            f"{_num(mt['brier']):>6} {_num(mt['brier_base_rate']):>6}"
        )
    return out


def render_text(a: Audit) -> str:
    """The whole human report."""
    title = f"Calibration audit: {a.name}" if a.name else "Calibration audit"
    lines = [title, "=" * len(title)]
    if a.load_report is not None:
        lines.append(f"Loaded {a.load_report.source}: {a.load_report.summary()}.")
        if a.load_report.scale and a.load_report.scale.get("how"):
            lines.append(f"Scale: {a.load_report.scale['how']}.")
        for issue in a.load_report.issues[:5]:
            lines.append(f"  {issue.message()}")
        if len(a.load_report.issues) > 5:
            lines.append(f"  ... {a.load_report.dropped - 5:,} more dropped lines (see --json load_report)")
    if a.clusters is not None:
        c = a.clusters
        eff = "" if c["effective_n"] is None else (f"; effective n {c['effective_n']:,.0f} of {a.n:,} "
                                                  f"(design effect {c['design_effect']:.2f})")
        lines.append(f"Clusters: {c['count']:,} ({c['how']}){eff}: intervals resample clusters.")
    lines += ["", "Verdict"]
    lines += [f"  - {s}" for s in a.verdict]
    lines += ["", "Figures"] + figures(a)
    lines += ["", "Tests (two-sided; the verdict uses the first four)"] + tests_block(a)
    lines += ["", "What each stated value meant" if a.per_value else f"Bins ({a.scheme})"] + per_value_block(a)
    if a.groups:
        lines += ["", f"By group ({len(a.groups)})"] + groups_block(a)
    if a.notes:
        lines += ["", "Notes"] + [f"  - {s}" for s in a.notes]
    return "\n".join(lines) + "\n"
