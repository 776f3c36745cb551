"""The audit as a short text report (what ``calib audit`` prints) and as JSON.

The text reads top to bottom like the reference post: the load line, a table of
the figures with their intervals, the per-value table (what each stated value
meant), the tests, and the verdict. Numbers come from :class:`calib.audit.Audit`
only; nothing is recomputed here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from calib.audit import Audit
from calib.present.explain import audit_meanings, unheld_interval, verdict_tests
from calib.present.format import interval, num, p_value, pct, points, sig, value
from calib.present.tables import TESTS, platform_line, test_label

if TYPE_CHECKING:
    from calib.decision import Decision

#: Width of the label column of the figures table.
LABEL = 30


def to_json(a: Audit, *, indent: int | None = 2) -> str:
    """The audit's JSON object (:meth:`Audit.to_dict`), strict: no NaN or Infinity."""
    # ASCII: a lone surrogate read from the input is escaped, never an encoding error
    return json.dumps(a.to_dict(), indent=indent, allow_nan=False, ensure_ascii=True)


def _wrap(text: str, width: int = 100, indent: str = "  ") -> list[str]:
    """A long sentence as indented lines of at most ``width`` characters."""
    import textwrap

    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False)


def _line(label: str, value: str, ci: str = "") -> str:
    return f"  {label:<{LABEL}}{value:>12}   {ci}".rstrip()


def _ival(ci: tuple[float | None, float | None], fmt: Callable[[float | None], str] = num) -> str:
    return interval(ci[0], ci[1], fmt)


def _n4(x: float | None) -> str:
    return num(x, 4)


def _n2(x: float | None) -> str:
    return num(x, 2)


def figures(a: Audit) -> list[str]:
    """The table of figures with their bootstrap intervals."""
    es = a.estimates
    level = f"{100 * a.level:g}%"

    def stated(p: float | None) -> str:
        return sig(None if p is None else float(a.scale.to_stated(p)))

    scheme = {"values": "per value", "width": f"{a.bins} equal-width bins", "mass": f"{a.bins} equal-mass bins"}[a.scheme]
    rows = [
        f"  {'':<{LABEL}}{'estimate':>12}   {level} interval ({a.reps:,} resamples)" if a.reps else
        f"  {'':<{LABEL}}{'estimate':>12}",
        _line("Answers", f"{a.n:,}"),
        _line("Right", pct(es["accuracy"].value), _ival(es["accuracy"].ci, pct)),
        _line(f"Mean stated ({a.scale.name})", stated(es["mean_confidence"].value), _ival(es["mean_confidence"].ci, stated)),
        _line("Overconfidence (stated - right)", points(es["overconfidence"].value), _ival(es["overconfidence"].ci, points)),
    ]
    for label, key in (("Brier score", "brier"), ("Brier, constant base rate", "brier_base_rate"),
                       ("Brier skill vs base rate", "brier_skill"), ("Log loss", "log_loss"),
                       ("AUROC (0.5 = no ranking)", "auroc"), (f"ECE ({scheme})", "ece"), ("MCE", "mce"),
                       ("Debiased L2 error", "ece_l2_debiased"), ("Smooth ECE", "smooth_ece")):
        rows.append(_line(label, num(es[key].value), _ival(es[key].ci)))
    for label, x, key in (
        ("Murphy reliability", a.murphy.reliability, "murphy_reliability"),
        ("Murphy resolution", a.murphy.resolution, "murphy_resolution"),
        ("Murphy uncertainty", a.murphy.uncertainty, "murphy_uncertainty"),
        ("CORP miscalibration (MCB)", a.corp.mcb, "corp_mcb"),
        ("CORP discrimination (DSC)", a.corp.dsc, "corp_dsc"),
        ("CORP uncertainty (UNC)", a.corp.unc, "corp_unc"),
    ):
        rows.append(_line(label, _n4(x), _ival(es[key].ci, _n4)))
    rows += [
        _line("Cox intercept (0 = calibrated)", _n2(a.cox.intercept.value), _ival(a.cox.intercept.ci, _n2)),
        _line("Cox slope (1 = calibrated)", _n2(a.cox.slope.value), _ival(a.cox.slope.ci, _n2)),
    ]
    if a.cox.intercept.value is None and a.cox.note:  # why the dashes (e.g. no maximum-likelihood fit exists)
        rows.append(f"  Cox: {a.cox.note}")
    rows += [f"  {unheld_interval(k, why)}." for k, why in a.unheld_intervals().items()]
    return rows


def failure_block(a: Audit) -> list[str]:
    """Failure prediction: AUPRC for errors, PRR, accuracy at coverage, and the
    cumulative-differences test (:mod:`calib.present.failure`)."""
    from calib.present.failure import cumulative_text, failure_rows

    rows = [_line(label, val, ci) for label, val, ci, _ in failure_rows(a)]
    return rows + _wrap(cumulative_text(a)) if rows else []


def tests_block(a: Audit) -> list[str]:
    """One line per test: statistic and p-value."""
    out = []
    for key, _, _ in TESTS:
        label, t = test_label(key, a.scheme), a.tests[key]
        if t.statistic is None:
            # p = 0 without a statistic: data that calibration rules out (the note says which)
            out.append(f"  {label:<{LABEL}}{'p=0, ' if t.p_value == 0 else 'undefined: '}{t.note}")
            continue
        stat = f"z = {t.statistic:.2f}" if t.df is None else f"chi2 = {t.statistic:.1f}, df {t.df:g}"
        out.append(f"  {label:<{LABEL}}{stat}, {p_value(t.p_value, t.log10_p, bound=t.p_bound)}")
    return out


def per_value_block(a: Audit) -> list[str]:
    """What each stated value meant (unpooled tables), or the bins (pooled ones)."""
    level = f"{100 * a.level:g}%"
    if a.per_value:
        out = [f"  {'stated':>8} {'n':>9} {'share':>7} {'right':>7}   {level + ' Wilson':<16}{'gap':>7}"]
        for r in a.per_value:
            out.append(
                f"  {value(r.value):>8} {r.n:>9,} {100 * r.share:>6.1f}% {100 * r.hit_rate.value:>6.1f}%   "
                f"{f'[{100 * r.hit_rate.lo:.1f}, {100 * r.hit_rate.hi:.1f}]':<16}{100 * r.gap:>+7.1f}"
            )
        return out
    out = [f"  {'bin':>17} {'n':>9} {'stated':>7} {'right':>7}   {level + ' Wilson':<16}{'gap':>7}"]
    for b in a.bin_table:
        rng = f"{value(b.lo)}-{value(b.hi)}"
        out.append(
            f"  {rng:>17} {b.n:>9,} {100 * b.mean_prob:>6.1f}% {100 * b.hit_rate.value:>6.1f}%   "
            f"{f'[{100 * b.hit_rate.lo:.1f}, {100 * b.hit_rate.hi:.1f}]':<16}{100 * b.gap:>+7.1f}"
        )
    return out


def groups_block(a: Audit) -> list[str]:
    """One line per group: the comparison table of the reference post."""
    out = [f"  {'group':<24} {'n':>8} {'right':>7} {'stated':>7} {'ECE':>7} {'interval':>16}  {'Brier':>6} {'const':>6}"]
    for g in a.groups:
        es = g.estimates
        ival = _ival(es["ece"].ci)
        mc = es["mean_confidence"].value
        out.append(
            f"  {g.name[:24]:<24} {g.n:>8,} {pct(es['accuracy'].value):>7} "
            f"{sig(None if mc is None else float(g.scale.to_stated(mc))):>7} {num(es['ece'].value):>7} {ival:>16}  "
            f"{num(es['brier'].value):>6} {num(es['brier_base_rate'].value):>6}"
        )
    return out


def decision_block(d: Decision, a: Audit) -> list[str]:
    """The threshold decision (:func:`calib.present.decision.decision_lines`), indented."""
    from calib.present.decision import decision_lines

    return [f"  {line}" for line in decision_lines(d, scale=a.scale)]


def render_text(a: Audit, decision: Decision | None = None) -> str:
    """The whole human report; with ``decision`` (``calib audit --target-error``) the
    threshold decision follows the verdict."""
    title = f"Calibration audit: {a.name}" if a.name else "Calibration audit"
    lines = [title, "=" * len(title)]
    if a.load_report is not None:
        lines.append(f"Loaded {a.load_report.source}: {a.load_report.summary()}.")
        if (tool := platform_line(a.load_report)) is not None:
            lines.append(tool)
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
    lines += ["", "What the figures mean"] + [f"  - {s}" for s in audit_meanings(a)]
    if decision is not None:
        lines += ["", "Threshold decision"] + decision_block(decision, a)
    lines += ["", "Figures"] + figures(a)
    failure = failure_block(a)
    if failure:
        lines += ["", "Failure prediction (low confidence picking out the wrong answers)"] + failure
    lines += ["", "Tests (two-sided)"] + tests_block(a) + _wrap(verdict_tests(a.level))
    lines += ["", "What each stated value meant" if a.per_value else f"Bins ({a.scheme})"] + per_value_block(a)
    if a.groups:
        lines += ["", f"By group ({len(a.groups)})"] + groups_block(a)
    if a.notes:
        lines += ["", "Notes"] + [f"  - {s}" for s in a.notes]
    return "\n".join(lines) + "\n"
