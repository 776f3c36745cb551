"""The threshold decision in words: the card a reviewer reads first, and its lines.

Contract: :func:`decision_card` turns a :class:`calib.decision.Decision` into a
:class:`DecisionCard` of short texts (the dashboard's decision card, the HTML
report's decision section); :func:`decision_lines` is the same decision as the
lines ``calib route`` prints first and the text report shows. Every figure is
written with :mod:`calib.present.format`; nothing is computed here beyond
arithmetic on counts the engine returned (a rate scaled to 1,000 items). No user
text (file, model or group names) enters a card field, so a card can be shown as
Markdown; :func:`group_lines` and :func:`judge_lines` do carry group and judge
names and are meant for plain text only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calib.decision import POINT
from calib.present.format import MISSING, ci_text, count, num, pct
from calib.wording import missing

if TYPE_CHECKING:
    from calib.decision import Capacity, Cheapest, Decision, JudgeComparison, PerGroup, Recommendation
    from calib.decision.groups import GroupThreshold
    from calib.scale import Scale

#: What happens to a group its own items cannot certify (issue 22: never the pooled threshold).
GROUP_TO_PERSON = "not certified on its own items, so every item goes to a person"
#: The per-group tables' column: whether a group's own items certify a threshold for it
#: (a group they cannot sends every item to a person, issue 22; there is no pooled fallback).
CERTIFIED_LABEL = "certified on its own items"


def certified_text(row: GroupThreshold) -> str:
    """A group's cell under :data:`CERTIFIED_LABEL`:
    ``yes``, or ``no:`` and the reason."""
    return "yes" if row.certified else f"no: {row.reason}"
#: What the cheapest threshold's cost interval is (``cost_ci_method``), in a reviewer's words.
SIMULTANEOUS_CI = "the interval holds for all {m} thresholds compared at once, as the cheapest was picked on this data"
#: What the certified error is with repeated items (clusters), in a reviewer's words.
PER_ITEM = ("the error counted per item (each item's share of wrong accepted answers, averaged over items; "
            "one accepted answer per item drawn at random to certify it)")
#: The guarantee's name as a reviewer reads it.
GUARANTEE_NAME = "fixed-sequence Clopper–Pearson, Learn-then-Test"
#: The fallback procedure's name (``procedure="fallback"``), one sentence for a reviewer.
FALLBACK_NAME = ("fallback procedure, Clopper–Pearson, Learn-then-Test: the level shared among up to 10 "
                 "thresholds, so it holds even when a higher confidence is wrong more often")


@dataclass(frozen=True)
class DecisionCard:
    """The decision in words, each field a short text (no user text inside)."""

    holds: bool            # a threshold qualified
    threshold: str         # "90 (0-100 scale)", "0.912 (calibrated probability)", or "none qualifies"
    target: str            # "at most 5.0% wrong among items accepted unseen"
    guarantee: str         # "with 95% confidence (...)" or "no guarantee (point estimate)"
    accepted: str          # "612 of 1,000 items (61.2%) accepted unseen; 388 go to a person"
    error: str             # "3.1% wrong among accepted (upper bound 4.8%)"
    per_1000: str          # "Per 1,000 items: 612 accepted unseen, of which at most 29 wrong; 388 reviewed"
    cost: str | None       # the cheapest threshold's cost with its interval and saving (None without costs)
    message: str           # the recommendation's own sentence


def level_text(x: float) -> str:
    """A confidence or target level as people write it: ``0.95`` -> ``95%``, ``0.025`` -> ``2.5%``."""
    return f"{100 * x:.2f}".rstrip("0").rstrip(".") + "%"


def threshold_text(t: float | None, on: str = "stated", scale: Scale | None = None) -> str:
    """A threshold with what it is measured on; ``None`` reads "none (review everything)"."""
    if t is None or missing(t):
        return "none (review everything)"
    short = f"{t:g}"
    v = short if float(short) == t else repr(float(t))  # shortening must not move it past a score
    if on == "calibrated":
        return f"{v} (calibrated probability)"
    if scale is not None and scale.labels and scale.show(t) != f"{t:g}":  # confidence in words
        return f'"{scale.show(t)}" (rank {v} of {scale.name})'
    return f"{v} ({scale.name} scale)" if scale is not None and scale.name else v


def _accepted(r: Recommendation) -> str:
    if not r.total:
        return "no items"
    return (f"{count(r.accepted)} of {count(r.total)} items ({pct(r.accepted / r.total)}) accepted unseen; "
            f"{count(r.to_person)} go to a person")


def _error(r: Recommendation) -> str:
    if not r.holds:
        return "no items accepted unseen, so no error among them"
    level = level_text(r.confidence)
    return f"{pct(r.error_rate)} wrong among accepted (one-sided {level} upper bound {pct(r.error_upper)})"


def _per_1000(r: Recommendation) -> str:
    if not r.total:
        return "Per 1,000 items: no data"
    acc = 1000 * r.accepted / r.total
    person = 1000 - round(acc)
    if not r.holds:
        return "Per 1,000 items: 0 accepted unseen; 1,000 reviewed by a person"
    worst = 1000 * r.accepted * (r.error_upper or 0.0) / r.total
    seen = 1000 * r.accepted * (r.error_rate or 0.0) / r.total
    return (f"Per 1,000 items: {count(round(acc))} accepted unseen, of which about {count(round(seen))} wrong "
            f"(at most {count(math.ceil(worst - 1e-9))} at the bound); {count(person)} reviewed by a person")


def cost_text(ch: Cheapest | None, on: str = "stated", scale: Scale | None = None) -> str | None:
    """The cheapest threshold's cost per item with its interval and the savings."""
    if ch is None:
        return None
    ci = ci_text(ch.cost.ci, 3)
    where = threshold_text(ch.threshold, on, scale)
    t_ci = threshold_interval(ch.threshold_ci, ch.compared > 0)
    at = "the cheapest choice, reviewing everything" if ch.threshold is None else f"the cheapest threshold, {where}"
    text = f"expected cost {num(ch.cost.value)} per item{' ' + ci if ci else ''} at {at}"
    if ci and ch.compared:
        text += f" ({SIMULTANEOUS_CI.format(m=count(ch.compared))})"
    if t_ci:
        text += f" (the cheapest threshold's interval {t_ci})"
    text += (f"; saves {num(ch.saving_vs_review_all)} per item against reviewing everything and "
             f"{num(ch.saving_vs_review_none)} against reviewing nothing")
    return text


def threshold_interval(ci: Sequence[float | None], resampled: bool) -> str:
    """The cheapest threshold's bootstrap interval; a ``None`` end is "review everything".
    Both ends ``None`` are every resample choosing to review everything when there were
    resamples (``resampled``), and no interval (empty) when there were none."""
    lo, hi = ci
    if lo is None and hi is None and not resampled:
        return ""

    def end(x: float | None) -> str:
        return "review everything" if x is None else f"{x:g}"
    return f"[{end(lo)}, {end(hi)}]"


def decision_card(decision: Decision, *, scale: Scale | None = None, point: bool = False) -> DecisionCard:
    """The card of a decision: its guaranteed recommendation (with ``point``, the
    point-estimate search, labelled as having no guarantee) and its cheapest threshold."""
    r = decision.point_estimate if point else decision.recommendation
    guaranteed = r.method != POINT
    name = FALLBACK_NAME if r.procedure == "fallback" else GUARANTEE_NAME
    guarantee = (f"with {level_text(r.confidence)} confidence ({name})" if guaranteed
                 else "no guarantee (point estimate)")
    if guaranteed and "clustered" in r.method:
        guarantee += f", {PER_ITEM}"
    return DecisionCard(
        holds=r.holds,
        threshold=threshold_text(r.threshold, r.on, scale) if r.holds else "none qualifies",
        target=f"at most {level_text(r.target)} wrong among items accepted unseen",
        guarantee=guarantee,
        accepted=_accepted(r),
        error=_error(r),
        per_1000=_per_1000(r),
        cost=cost_text(decision.costs.cheapest, decision.costs.on, scale),
        message=r.message,
    )


def capacity_text(cap: Capacity | None, on: str = "stated", scale: Scale | None = None) -> str | None:
    """The best threshold within capacity, in words (``None`` without a capacity)."""
    if cap is None:
        return None
    cost = "" if cap.cost is None else f", expected cost {num(cap.cost)} per item"
    bind = "the capacity binds" if cap.binding else "the capacity does not bind"
    return (f"Within capacity ({count(cap.limit)} items to a person at most): "
            + ("review everything" if cap.threshold is None else
               f"accept at or above {threshold_text(cap.threshold, on, scale)}")
            + f"; {count(cap.to_person)} to a person, "
            f"{count(cap.accepted)} accepted unseen, {pct(cap.error_rate)} wrong among them{cost} ({bind}).")


def decision_lines(decision: Decision, *, scale: Scale | None = None, point: bool = False) -> list[str]:
    """The decision as the lines ``calib route`` prints first (plain text); with
    ``point`` the point-estimate search leads and the guaranteed one is the contrast."""
    card = decision_card(decision, scale=scale, point=point)
    r = decision.point_estimate if point else decision.recommendation
    lines = ["Recommendation: " + (f"accept at or above {card.threshold}" if card.holds else card.threshold),
             f"  target: {card.target}, {card.guarantee}",
             f"  {card.accepted}", f"  {card.error}", f"  {card.per_1000}",
             f"  certified on: {r.certified_on}"]
    if r.candidates:
        lines.append(f"  thresholds tested: {r.candidates}" + (f"; {r.procedure}" if r.procedure else ""))
    lines.append(f"  {card.message}")
    p = decision.recommendation if point else decision.point_estimate
    lines.append(f"  for contrast, {'guaranteed' if point else 'point estimate (no guarantee)'}: "
                 + (f"accept at or above {threshold_text(p.threshold, p.on, scale)}, {count(p.accepted)} "
                    f"accepted, {pct(p.error_rate)} wrong (upper bound {pct(p.error_upper)})" if p.holds
                    else "no threshold qualifies"))
    if card.cost:
        lines.append(f"Cost: {card.cost}")
    cap = capacity_text(decision.costs.capacity, decision.costs.on, scale)
    if cap:
        lines.append(cap)
    a = decision.aurc
    lines.append(aurc_text(a))
    if decision.per_group is not None:
        lines += group_lines(decision.per_group, scale=scale)
    return lines


def _with_ci(x: str, ci: Sequence[float | None] | None, digits: int) -> str:
    t = ci_text(ci, digits)
    return f"{x} {t}" if t else x


def aurc_text(a: Any) -> str:
    """AURC with its interval, the oracle's and the excess (:class:`calib.decision.AURC`)."""
    au, ex = a.aurc, a.eaurc
    return (f"AURC (area under the risk-coverage curve, lower is better) {_with_ci(num(au.value, 4), au.ci, 4)}; "
            f"oracle ordering {num(a.aurc_oracle, 4)}; excess {_with_ci(num(ex.value, 4), ex.ci, 4)}")


def group_lines(g: PerGroup, *, scale: Scale | None = None) -> list[str]:
    """Per-group thresholds as plain-text lines (group names inside: plain text only)."""
    on = g.pooled.on
    out = [f"Per group ({'simultaneous' if g.simultaneous else 'each group'} at "
           f"{level_text(g.confidence_each)} confidence):"]
    for row in g.groups:
        how = f"{GROUP_TO_PERSON}: {row.reason}" if row.pooled_fallback else "own threshold"
        rule = ("review everything" if row.threshold is None
                else f"accept at or above {threshold_text(row.threshold, on, scale)}")
        out.append(f"  {row.group or '(no group)'}: {rule}; "
                   f"{count(row.accepted)} of {count(row.total)} accepted, upper bound {pct(row.error_upper)} "
                   f"({how})")
    out.append("  " + g.message)
    return out


def group_rows(decision: Decision, *, scale: Scale | None = None) -> list[dict[str, Any]]:
    """One row of formatted text per group (group names inside: render as data, escaped)."""
    g = decision.per_group
    if g is None:
        return []
    on = g.pooled.on
    return [{
        "Group": row.group,
        "Threshold": threshold_text(row.threshold, on, scale),
        "Accepted unseen": f"{count(row.accepted)} of {count(row.total)}",
        "Errors among accepted": count(row.errors),
        f"Upper bound ({level_text(g.confidence_each)})": pct(row.error_upper),
        CERTIFIED_LABEL: certified_text(row),
    } for row in g.groups]


def judge_rows(c: JudgeComparison, *, with_costs: bool = False) -> list[dict[str, Any]]:
    """One row of formatted text per judge: recommended threshold, accepted unseen,
    error among accepted with its bound and, ``with_costs``, the cost at its cheapest threshold."""
    rows = []
    for j in c.judges:
        r = j.recommendation
        rows.append({
            "Judge": j.name,
            "Recommended threshold": threshold_text(r.threshold, r.on) if r.holds else "none qualifies",
            "Accepted unseen": (f"{count(r.accepted)} of {count(r.total)} ({pct(r.accepted / r.total)})"
                                if r.total else MISSING),
            "Error among accepted (bound)": (f"{pct(r.error_rate)} (≤ {pct(r.error_upper)})" if r.holds
                                             else MISSING),
        })
        if with_costs:
            rows[-1]["Cheapest cost per item"] = MISSING if j.cheapest_cost is None else (
                f"{num(j.cheapest_cost)} " + ("(review everything)" if j.cheapest_threshold is None
                                              else f"at {threshold_text(j.cheapest_threshold)}"))
    return rows


def paired_lines(c: JudgeComparison) -> list[str]:
    """The paired comparisons in words (judge names inside: plain text only)."""
    out = []
    for p in c.paired:
        ci = ci_text(p.difference.ci, 0)
        eci = ci_text(p.errors_difference.ci, 0)
        verdict = f"{p.better} accepts more" if p.better else "no clear difference"
        out.append(f"{p.a} vs {p.b} on {count(p.shared)} shared items: accepted {count(p.accepted_a)} vs "
                   f"{count(p.accepted_b)} (difference {p.difference.value:+,} {ci}), errors accepted {count(p.errors_a)} "
                   f"vs {count(p.errors_b)} (difference {p.errors_difference.value:+,} {eci}); {verdict} "
                   f"({level_text(p.level)} paired bootstrap)")
    return out
