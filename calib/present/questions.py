"""Each page's question and its answer for the loaded data, and the Overview's three lines.

Contract
--------
Every dashboard page opens with a question and a one- or two-sentence answer computed from
the engine's results (drawn by :func:`dashboard.layout.page_question`). The words live here,
beside :mod:`calib.present.explain`, so that what a page claims is decided in ``calib/``;
pages pass results in and draw the text. :func:`overview_lines` is the Overview's answer to
"can I trust this number, and what should I do" in three lines: trust (the verdict's
decision), ranking (AUROC) and the action (the threshold decision). Nothing is computed here
beyond reading results. Answers hold no user text, except where a function's docstring says
it names a model (the page escapes it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from calib.present import explain
from calib.present.format import ci_text, count, num, pct
from calib.wording import value as stated_value

if TYPE_CHECKING:
    from calib.audit import Audit
    from calib.decision import Decision
    from calib.drift import Drift
    from calib.maps import FitResult

#: Each page's question (page key as in ``dashboard.layout.PAGE_FILES``).
QUESTIONS: dict[str, str] = {
    "data": "What did you load, and was every line used?",
    "overview": "Can I trust this judge's confidence, and what should I do?",
    "scale": "Which values did the judge use, and what did each one mean?",
    "reliability": "Does a stated confidence come true as often as it says?",
    "recalibration": "Can a map make the confidence mean what it says?",
    "routing": "Which items can be accepted unseen, and which must a person check?",
    "report": "What can I send to a reviewer or a manager?",
    "drift": "Did the judge change between runs?",
    "review": "Which answers must a person check, and what did the reviewers find?",
}


def _ci(a: Audit, key: str, digits: int = 2) -> str:
    e = a.estimates.get(key)
    text = ci_text(e.ci, digits) if e else ""
    return f" {text}" if text else ""


def trust_line(a: Audit) -> str:
    """Can the stated confidence be taken at its word? The verdict's decision and the ECE."""
    ece = f"ECE {num(a.metrics.get('ece'))}{_ci(a, 'ece', 3)}"
    gap = a.metrics.get("overconfidence")
    if a.miscalibrated:
        side = "too sure" if gap is not None and gap > 0 else "too unsure"
        return (
            f"Not as stated: the judge is {side} by {abs(100 * (gap or 0)):.1f} percentage points on average "
            f"({ece}); read its confidence with care."
        )
    if a.miscalibrated is False:
        return (
            f"No evidence against it: the stated confidence matches how often the judge is right as far as "
            f"{count(a.n)} answers can tell ({ece})."
        )
    return "Cannot be told: no calibration test is defined for this data."


def ranking_line(a: Audit) -> str:
    """Does the confidence tell right from wrong answers? The engine's decision
    (:func:`calib.verdict.ranks`), in the Overview's words."""
    from calib.verdict import ranks

    auc = a.metrics.get("auroc")
    decided = ranks(a)
    if auc is None:
        return "Whether it tells right from wrong cannot be told: every answer has the same outcome."
    if decided is None:
        return "Whether it tells right from wrong cannot be told: every answer has the same confidence."
    ival = _ci(a, "auroc")
    if decided == "ranks":
        return f"It tells right from wrong: a right answer gets the higher confidence {auc:.0%} of the time (AUROC {auc:.2f}{ival})."
    if decided == "reversed":
        return (
            f"It ranks the wrong way round (AUROC {auc:.2f}{ival}): a low confidence marks the right answers."
        )
    return f"It hardly tells right from wrong (AUROC {auc:.2f}{ival}; 0.5 is chance)."


def action_line(d: Decision | None) -> str:
    """What to do: the recommended threshold and its guarantee (or why none qualifies)."""
    if d is None:
        return "What to do: load data with outcomes to get a threshold decision."
    r = d.recommendation
    if not r.holds or r.threshold is None:
        return (
            f"What to do: have a person check every item; no threshold keeps errors among accepted items "
            f"under {pct(r.target)} with {100 * r.confidence:g}% confidence."
        )
    from calib.wording import threshold_text

    share = r.accepted / r.total if r.total else 0.0
    return (
        f"What to do: accept items at {threshold_text(r.threshold)} or above unseen ({pct(share)} of them) and "
        f"send the rest to a person; at most {pct(r.error_upper)} of the accepted are wrong, with "
        f"{100 * r.confidence:g}% confidence."
    )


def overview_lines(a: Audit, d: Decision | None) -> tuple[str, str, str]:
    """The Overview's three lines: trust, ranking, action."""
    return trust_line(a), ranking_line(a), action_line(d)


#: The verdict's facts (:data:`calib.verdict.VERDICT_FACTS`) the Overview states elsewhere:
#: calibration and the gap (the trust line), ranking (its line), accuracy (its figure).
OVERVIEW_STATED: tuple[str, ...] = ("headline", "calibration", "ranking")
#: The figures whose "what this means" the Overview prints (ECE and AUROC: the lines).
OVERVIEW_MEANT: tuple[str, ...] = ("accuracy", "brier")


def overview_rest(a: Audit) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the Overview adds below its three lines, each fact once: the verdict's other
    sentences (how the scale was used, the constant forecast) and what its figures mean."""
    from calib.present.explain import meaning
    from calib.verdict import verdict_parts

    parts = verdict_parts(a)
    rest = tuple(s for fact, sentences in parts.items() if fact not in OVERVIEW_STATED for s in sentences)
    return rest, tuple(meaning(k, a.metrics.get(k)) for k in OVERVIEW_MEANT)


def scale_answer(a: Audit) -> str:
    """How the scale was used, in one or two sentences."""
    if a.top_value is None or not a.per_value:
        return (
            f"{count(a.distinct_values)} distinct confidences (a continuous score): see the reliability "
            "diagram for what they meant."
        )
    top = max(a.per_value, key=lambda r: r.n)
    return (
        f"{count(a.distinct_values)} distinct value{'s' if a.distinct_values != 1 else ''}; the most common, "
        f"{stated_value(top.value)}, on {pct(top.share, 0)} of answers, was right {pct(top.hit_rate.value, 0)} of "
        f"the time [{pct(top.hit_rate.lo, 0)}, {pct(top.hit_rate.hi, 0)}]."
    )


def reliability_answer(a: Audit) -> str:
    """The verdict's calibration decision and what the ECE means."""
    ece = a.metrics.get("ece")
    decision = {
        True: "No, not as stated.",
        False: "As far as the data can tell, yes.",
        None: "Cannot be told.",
    }[a.miscalibrated]
    return f"{decision} {explain.meaning('ece', ece)}"


def recalibration_answer(best: FitResult | None, label: str) -> str:
    """The best map by held-out score (``label``: its name as the page writes it)."""
    if best is None:
        return "No map could be fitted on this data."
    b, af = best.before.brier, best.after.brier
    if best.useless or af.value is None or b.value is None or af.value >= b.value:
        return (
            "No: no map scores better than the stated confidence on held-out data; keep the confidence "
            "as it is."
        )
    return (
        f"Yes: the best map on held-out data is {label}, Brier {num(b.value, 4)} -> {num(af.value, 4)} "
        f"{ci_text((af.lo, af.hi), 4)}."
    )


def routing_answer(d: Decision | None) -> str:
    """The decision, as the Overview's action line."""
    text = action_line(d).removeprefix("What to do: ")
    return text[:1].upper() + text[1:]


def report_answer(models: Sequence[str]) -> str:
    """What the report holds (``models`` names only their count, never their text)."""
    n = len(models)
    return (
        f"One self-contained HTML file with all {n} loaded judge{'s' if n != 1 else ''}, the threshold "
        "decision with its intervals and costs, and the JSON of every audit."
    )


def data_answer(kept: int, dropped: int, files: int, failed: int) -> str:
    """What was loaded: rows kept and dropped over the files."""
    text = (
        f"{files} input{'s' if files != 1 else ''} loaded: {count(kept)} rows kept, {count(dropped)} "
        f"line{'s' if dropped != 1 else ''} dropped" + (" (reasons below)." if dropped else ".")
    )
    if failed:
        text += f" {failed} input{'s' if failed != 1 else ''} could not be read (see below)."
    return text


def drift_answer(d: Drift) -> str:
    """Whether the judge changed between the two runs (names no run: the page names them),
    and the stated values used in one run only (named, not tested: issue 22)."""
    from calib.present.drift import LABELS, one_run_values

    moved = [c for c in d.changes if c.rejected]
    scale_use = one_run_values(d)
    used = f" In one run only (named, not tested): {scale_use}." if scale_use else ""
    if not d.drift:
        return (
            f"No: none of the {len(d.changes)} headline figures nor any stated value moved beyond noise "
            f"(Holm-corrected at the {100 * d.alpha:g}% level).{used}"
        )
    what = ", ".join(LABELS[c.name] for c in moved) or "some stated values' hit rates"
    return f"Yes: {what} moved beyond noise (Holm-corrected at the {100 * d.alpha:g}% level).{used}"


def review_answer(queue: int, audit: int, accepted: int, threshold: str, labelled: int) -> str:
    """What the reviewers have to do and how far they are (``threshold`` already written)."""
    total = queue + audit
    if total == 0:
        return f"None at the owner's threshold {threshold}: no item is below it and none is accepted to sample."
    return (
        f"The {count(queue)} items scored below the owner's threshold {threshold}, and an audit sample of "
        f"{count(audit)} of the {count(accepted)} items accepted unseen; {count(labelled)} of {count(total)} "
        "labelled so far."
    )


#: The Review page's answer where there is nothing to review.
REVIEW_OFF = {
    "not_shared": "Nothing here yet: reviewers label inside a share link whose owner turned reviewing on.",
    "not_enabled": "Nothing yet: reviewing is off for this link.",
}
