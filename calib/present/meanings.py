"""The value-to-sentence functions of :mod:`calib.present.explain`: one per quantity,
``f(x, **context) -> str``, writing "what this means for this data" from a figure's value
(the module :mod:`calib.present.explain` pairs each with its label, technical name, what it
measures and which way is good). Numbers are written with :mod:`calib.present.format`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from calib.present.format import count, num, pct


def _points(x: float) -> str:
    """A proportion written as percentage points for a sentence: ``0.16`` -> ``16``,
    ``0.043`` -> ``4.3``, ``0.004`` -> ``0.4`` (whole points from 10 on)."""
    p = abs(100 * x)
    return f"{p:.0f}" if p >= 10 else f"{p:.1f}"


def _share(x: float) -> str:
    """A proportion for a sentence: ``0.72`` -> ``72%``, ``0.055`` -> ``5.5%``."""
    p = 100 * x
    return f"{p:.0f}%" if abs(p) >= 10 or p == 0 else f"{p:.1f}%"


# ----------------------------------------------------------------- calibration
def ece(x: float, **_: object) -> str:
    return (
        f"ECE {num(x)}: on average the stated confidence is {_points(x)} percentage points away "
        "from how often the judge is right."
    )


def ece_debiased(x: float, **_: object) -> str:
    return (
        f"Debiased ECE {num(x)}: with the noise of small bins taken out, the stated confidence is "
        f"about {_points(x)} percentage points away from how often the judge is right."
    )


def mce(x: float, **_: object) -> str:
    return (
        f"MCE {num(x)}: in the worst bin the stated confidence and the share right differ by "
        f"{_points(x)} percentage points."
    )


def l2(x: float, **_: object) -> str:
    return (
        f"Debiased L2 error {num(x)}: a typical (root-mean-square) gap of {_points(x)} percentage points "
        "between stated and actual, with sampling noise removed."
    )


def smooth(x: float, **_: object) -> str:
    return (
        f"Smooth ECE {num(x)}: measured without bins, the stated confidence is about {_points(x)} "
        "percentage points away from how often the judge is right."
    )


def overconfidence(x: float, **_: object) -> str:
    if abs(x) < 0.0005:
        return "Overconfidence 0: on average the judge states as much confidence as it is right."
    side = "more" if x > 0 else "less"
    return (
        f"Overconfidence {'+' if x > 0 else '-'}{_points(x)} pts: on average the judge states "
        f"{_points(x)} percentage points {side} confidence than the share it gets right."
    )


def cox_intercept(x: float, **_: object) -> str:
    if abs(x) < 0.005:
        return "Cox intercept 0.00: no overall shift between stated and actual."
    side = "lower" if x < 0 else "higher"
    return (
        f"Cox intercept {num(x, 2)}: at a stated 50% the judge is right less or more often than 50%; "
        f"the actual rate is {side} than stated (0 means no shift)."
    )


def cox_slope(x: float, **_: object) -> str:
    if x < 1:
        return (
            f"Cox slope {num(x, 2)}: the stated values are too spread out; a stated high or low confidence "
            "is less extreme in reality (1 means right as stated)."
        )
    return (
        f"Cox slope {num(x, 2)}: the stated values are too bunched; the truth is more extreme than stated "
        "(1 means right as stated)."
    )


# ----------------------------------------------------------------- scores
def accuracy(x: float, **_: object) -> str:
    return f"Accuracy {pct(x)}: about {round(1000 * x):,} of every 1,000 answers were right."


def mean_confidence(x: float, **_: object) -> str:
    return f"Mean stated confidence {pct(x)}: on average the judge said it was {_share(x)} sure."


def brier(x: float, **_: object) -> str:
    return (
        f"Brier score {num(x, 4)}: the average squared miss of the stated probability; saying 50% "
        "every time scores 0.25, a perfect judge 0."
    )


def brier_constant(x: float, **_: object) -> str:
    return (
        f"Brier of the constant {num(x, 4)}: what stating the judge's own accuracy for every answer "
        "would score; a useful confidence scores lower."
    )


def brier_skill(x: float, **_: object) -> str:
    if x > 0:
        return f"Brier skill {num(x)}: the stated confidence removes {_share(x)} of the constant forecast's error."
    return (
        f"Brier skill {num(x)}: the stated confidence does no better than giving every answer the "
        "judge's own accuracy."
    )


def log_loss(x: float, **_: object) -> str:
    return (
        f"Log loss {num(x)}: the average surprise at the outcome; saying 50% every time scores "
        f"{num(math.log(2))}, a confident wrong answer costs a lot."
    )


def auroc(x: float, **_: object) -> str:
    if abs(x - 0.5) < 0.005:
        return "AUROC 0.50: the confidence does not tell right answers from wrong ones."
    if x < 0.5:
        return (
            f"AUROC {num(x, 2)}: the confidence ranks the wrong way round; a wrong answer gets the higher "
            f"confidence {_share(1 - x)} of the time."
        )
    return (
        f"AUROC {num(x, 2)}: a right answer gets a higher confidence than a wrong one {_share(x)} "
        "of the time (0.5 is chance)."
    )


def part(label: str, text: str) -> Callable[..., str]:
    """The sentence of one part of a Brier decomposition: ``LABEL x: text``."""

    def means(x: float, **_: object) -> str:
        return f"{label} {num(x, 4)}: {text}"

    return means


MCB_TEXT = "the part of the Brier score lost to miscalibration; recalibrating could remove it."
DSC_TEXT = "the part of the Brier score the confidence wins back by telling right from wrong."
UNC_TEXT = "how hard the data is to forecast at all (accuracy times error rate); no confidence changes it."


def share_top(x: float, **_: object) -> str:
    return f"Share at the most common value {pct(x)}: {_share(x)} of the answers used one single value."


def share_below(x: float, **_: object) -> str:
    return f"Share stated below {pct(x)}: {_share(x)} of the answers admitted some doubt."


# ----------------------------------------------------------------- routing and the decision
def _of(x: float, total: float | None) -> str:
    return "" if total is None or not total else f" of {count(total)} ({_share(x / total)})"


def to_person(x: float, total: float | None = None, **_: object) -> str:
    return f"Sent to a person {count(x)}{_of(x, total)}: items below the threshold, which a person checks."


def accepted(x: float, total: float | None = None, **_: object) -> str:
    return f"Accepted unseen {count(x)}{_of(x, total)}: items at or above the threshold, which nobody checks."


def accuracy_accepted(x: float, **_: object) -> str:
    return f"Accuracy among accepted {pct(x)}: of the items nobody checks, {_share(x)} are right."


def slipping(x: float, **_: object) -> str:
    return (
        f"Errors slipping through {count(x)}: wrong answers that are accepted unseen; fewer is better, "
        "at the price of more reviews."
    )


def caught(x: float, **_: object) -> str:
    return f"Errors caught {count(x)}: wrong answers that go to a person and can be fixed."


def middle(x: float, **_: object) -> str:
    return f"Middle band {count(x)}: items between the two thresholds."


def error_bound(x: float, confidence: float | None = None, **_: object) -> str:
    conf = "" if confidence is None else f" with {100 * confidence:g}% confidence"
    return (
        f"Error bound among accepted {pct(x)}: of the items accepted unseen at most {pct(x)} are "
        f"wrong{conf} (a guarantee, not an estimate)."
    )


def cost(x: float, **_: object) -> str:
    return (
        f"Expected cost per item {num(x)}: reviews plus errors that slip through, in the units of "
        "the costs given; lower is better."
    )


def total_cost(x: float, **_: object) -> str:
    return f"Total cost {x:,.2f}: reviews plus errors that slip through, over all items."


def aurc(x: float, **_: object) -> str:
    return (
        f"AURC {num(x, 4)}: the error rate among accepted items, averaged over every share accepted; "
        "0 is a judge whose confidence puts every error last."
    )


def guarantee(x: float, **_: object) -> str:
    return (
        f"Target error {pct(x)}: the recommended threshold is the lowest whose accepted items are "
        f"wrong at most {pct(x)} of the time, with the stated confidence."
    )


def drift_change(x: float, **_: object) -> str:
    return (
        f"Change {'+' if x >= 0 else '-'}{_points(x)} points: the new run minus the old; a test "
        "says whether it is more than noise."
    )

#: What the ECE intervals of ``calib fit`` are (``calib.maps.scoring.Draws.scores``).
FIT_ECE_INTERVAL_TEXT = (
    "ECE intervals are for the population ECE, as in the audit: the plug-in ECE shown is biased upward by "
    "the noise in each bin, most after a map with many small bins, so the lower end is a bound on the debiased "
    "ECE; the change's interval is a percentile one of the paired resamples."
)


# ----------------------------------------------------------------- failure prediction
def auprc_errors(x: float, baseline: float | None = None, **_: object) -> str:
    chance = "" if baseline is None else f" (a confidence that ranks no better than chance scores the error rate, {num(baseline)})"
    return (
        f"AUPRC for errors {num(x)}: flagging the least confident answers first, this is the average share "
        f"of wrong answers among those flagged, over every share of the errors caught{chance}."
    )


def prr(x: float, **_: object) -> str:
    if x <= 0:
        return (f"PRR {num(x, 2)}: setting aside the least confident answers removes errors no better than setting "
                "aside answers at random.")
    return (
        f"PRR {num(x, 2)}: setting aside the least confident answers achieves {_share(min(x, 1.0))} of what "
        "setting aside exactly the wrong answers would, against random rejection (0 is chance, 1 perfect)."
    )


def accuracy_at_coverage(x: float, coverage: float | None = None, **_: object) -> str:
    cov = "the most confident answers" if coverage is None else f"the most confident {_share(coverage)} of answers"
    helm = " (HELM's selective accuracy at 10%)" if coverage is not None and abs(coverage - 0.1) < 1e-9 else ""
    return f"Right among {cov}: {pct(x)} of them are right{helm}."


def cumulative_differences(x: float, **_: object) -> str:
    return (
        f"Cumulative differences: sorted by confidence, the running sum of right minus stated wanders {num(x)} "
        "(Kuiper's range, a share of all answers); a calibrated judge's sum stays near 0."
    )
