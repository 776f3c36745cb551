"""Plain words for every figure calib shows: the one source of help texts and "what this means".

Contract
--------
For every quantity a page, the CLI text report or the HTML report shows (a metric, a part of
the Brier decomposition, a test, a band of a figure, a routing or decision figure, a drift
figure) this module holds one :class:`Quantity`: the label the faces print, its technical name
(kept beside the plain words for experts), what it measures, which way is good, and a function
writing "what this means for this data" from the value. Faces call :func:`help_text` (a
widget's ``help=``, a tooltip, a report's small print) and :func:`meaning` (the "what this
means" line); nothing else writes these sentences, so the dashboard, ``calib audit`` and the
HTML report can never disagree about what a number says.

Sentences take numbers the engine computed and write them with :mod:`calib.present.format`;
nothing here computes a statistic. They hold no user text (model names are never passed in).

:data:`COUNTS` names the headline metrics that need no interval (counts, settings, decisions)
and :data:`INTERVAL_PATTERN` how an interval is written on screen (``[0.120, 0.160]``,
``[12.0%, 16.0%]``, ``[1,234, 1,500]``): the browser tests check every other headline metric
shows one.

References: Murphy (1973) and Dimitriadis, Gneiting & Jordan (2021) for the Brier
decompositions (REL/RES/UNC; CORP's MCB/DSC/UNC); Cox (1958) for the recalibration
intercept and slope; Blasiok & Nakkiran (2023) for the smooth ECE; Angelopoulos et al. (2021)
for the risk-controlling threshold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calib.present import meanings as m
from calib.present.format import MISSING, ci_text, interval, num, pct
from calib.wording import missing

if TYPE_CHECKING:
    from calib.audit import Audit
    from calib.routing import Routing

__all__ = [
    "COUNTS",
    "HEADLINE",
    "INTERVAL_PATTERN",
    "MEANT",
    "QUANTITIES",
    "TESTS",
    "Headline",
    "Quantity",
    "audit_meanings",
    "headline",
    "help_text",
    "meaning",
    "p_meaning",
    "test_help",
    "test_meaning",
    "verdict_tests",
    "what_this_means",
]

#: How an interval is written on a page's headline metric: two numbers in square brackets,
#: each possibly with thousands separators, a sign and a percent sign (``[0.120, 0.160]``,
#: ``[12.0%, 16.0%]``, ``[-3.1 pts, +2.0 pts]``, ``[1,234, 1,500]``).
INTERVAL_PATTERN = r"\[\s*[-+−]?[\d,]*\.?\d+\s*(?:%|pts)?\s*,\s*[-+−]?[\d,]*\.?\d+\s*(?:%|pts)?\s*\]"

#: Labels of headline metrics that need no interval: counts of the data (exact), settings
#: and decisions (a threshold, a format, which forecast wins: stated with their evidence),
#: and bounds (an error bound is itself the end of a one-sided interval; shown with it when
#: a threshold qualifies, as "—" when none does).
COUNTS: frozenset[str] = frozenset(
    {
        "Answers",
        "Rows kept",
        "Lines dropped",
        "Format",
        "Distinct stated values",
        "Distinct values used",
        "Most common value",
        "Recommended threshold",
        "Cheapest threshold",
        "Error bound among accepted",
        "Error bound there",
        "Accepted at it",
        "Owner's threshold",
        "Accepted there",
        "Middle band",
        "Better forecast",
        "Best map (held-out)",
        "Temperature T",
        "Items",
        "Runs",
        "Shared items",
        "Kept their answer",
        "Anchor items",
    }
)


@dataclass(frozen=True)
class Quantity:
    """One figure in plain words.

    Attributes
    ----------
    label:
        What the faces call it ("ECE", "Errors slipping through").
    name:
        Its technical name, shown beside the plain words for experts.
    what:
        One sentence: what it measures, in words a reviewer understands.
    good:
        Which way is good ("Lower is better; 0 is perfectly calibrated.").
    means:
        ``means(x, **context) -> str``: "what this means for this data" from the value
        (``context`` holds the other figures a sentence needs, such as ``total``).
    """

    label: str
    name: str
    what: str
    good: str
    means: Callable[..., str]


def _d(label: str, name: str, what: str, good: str, means: Callable[..., str]) -> Quantity:
    return Quantity(label, name, what, good, means)


#: Every quantity by key (the engine's metric names where there is one).
QUANTITIES: dict[str, Quantity] = {
    "accuracy": _d(
        "Accuracy", "accuracy", "The share of answers the judge got right.", "Higher is better.", m.accuracy
    ),
    "mean_confidence": _d(
        "Mean stated confidence",
        "mean stated probability",
        "The average confidence the judge stated, as a probability.",
        "Calibrated when it equals the accuracy.",
        m.mean_confidence,
    ),
    "overconfidence": _d(
        "Overconfidence",
        "mean stated minus accuracy",
        "How much more sure the judge says it is than it is right, on average.",
        "0 is good; above 0 is overconfident, below underconfident.",
        m.overconfidence,
    ),
    "ece": _d(
        "ECE",
        "expected calibration error (plug-in, binned)",
        "The average distance between the stated confidence and how often the judge is right, "
        "bin by bin, weighted by how many answers each bin holds.",
        "Lower is better; 0 is perfectly calibrated.",
        m.ece,
    ),
    "ece_debiased": _d(
        "Debiased ECE",
        "ECE with each bin's noise removed in quadrature",
        "The ECE after removing what small bins add by chance alone.",
        "Lower is better; 0 is perfectly calibrated.",
        m.ece_debiased,
    ),
    "mce": _d(
        "MCE",
        "maximum calibration error",
        "The largest gap between stated confidence and share right over all bins.",
        "Lower is better; one small bin can make it large.",
        m.mce,
    ),
    "ece_l2_debiased": _d(
        "Debiased L2 error",
        "debiased L2 calibration error (root mean square)",
        "The root-mean-square gap between stated and actual, with sampling noise removed: "
        "large gaps count more than in the ECE.",
        "Lower is better; 0 is calibrated.",
        m.l2,
    ),
    "smooth_ece": _d(
        "Smooth ECE",
        "smooth ECE (Blasiok & Nakkiran 2023)",
        "The calibration error measured with a smooth curve instead of bins, so it does not "
        "depend on a choice of bins.",
        "Lower is better; 0 is calibrated.",
        m.smooth,
    ),
    "brier": _d(
        "Brier score",
        "Brier score (mean squared error of the probability)",
        "The average squared difference between the stated probability and the outcome "
        "(1 right, 0 wrong): it rewards being both calibrated and decisive.",
        "Lower is better; 0.25 is saying 50% every time.",
        m.brier,
    ),
    "brier_base_rate": _d(
        "Brier of the constant",
        "Brier score of the constant base-rate forecast",
        "The Brier score of a forecast that gives every answer the judge's own accuracy: "
        "the bar any useful confidence must clear.",
        "The stated confidence should score lower.",
        m.brier_constant,
    ),
    "brier_skill": _d(
        "Brier skill",
        "Brier skill score vs the base rate",
        "The share of the constant forecast's Brier score that the stated confidence removes.",
        "Higher is better; 0 or below means no better than the constant.",
        m.brier_skill,
    ),
    "log_loss": _d(
        "Log loss",
        "log loss (cross-entropy)",
        "The average surprise at the outcome: minus the log of the probability given to what happened.",
        "Lower is better; confident mistakes cost the most.",
        m.log_loss,
    ),
    "auroc": _d(
        "AUROC",
        "area under the ROC curve",
        "How well the confidence ranks answers: the chance that a right answer gets a higher "
        "confidence than a wrong one.",
        "Higher is better; 0.5 is chance, 1 is perfect.",
        m.auroc,
    ),
    "corp_mcb": _d(
        "MCB",
        "CORP miscalibration (MCB)",
        "The part of the Brier score caused by miscalibration: what recalibrating could save.",
        "Lower is better; 0 is calibrated.",
        m.part("MCB", m.MCB_TEXT),
    ),
    "corp_dsc": _d(
        "DSC",
        "CORP discrimination (DSC)",
        "The part of the Brier score won back by telling right from wrong answers.",
        "Higher is better.",
        m.part("DSC", m.DSC_TEXT),
    ),
    "corp_unc": _d(
        "UNC",
        "CORP uncertainty (UNC)",
        "How hard the outcomes are to forecast at all: accuracy times error rate. Brier = MCB - DSC + UNC.",
        "Fixed by the data; no confidence changes it.",
        m.part("UNC", m.UNC_TEXT),
    ),
    "murphy_reliability": _d(
        "Reliability (REL)",
        "Murphy reliability",
        "The binned version of MCB: the Brier score lost to miscalibration.",
        "Lower is better.",
        m.part("Reliability (REL)", m.MCB_TEXT),
    ),
    "murphy_resolution": _d(
        "Resolution (RES)",
        "Murphy resolution",
        "The binned version of DSC: the Brier score won back by ranking.",
        "Higher is better.",
        m.part("Resolution (RES)", m.DSC_TEXT),
    ),
    "murphy_uncertainty": _d(
        "Uncertainty (UNC)",
        "Murphy uncertainty",
        "How hard the outcomes are to forecast at all.",
        "Fixed by the data.",
        m.part("Uncertainty (UNC)", m.UNC_TEXT),
    ),
    "cox_intercept": _d(
        "Cox intercept",
        "Cox recalibration intercept",
        "The overall shift between stated and actual, on the log-odds scale.",
        "0 is calibrated.",
        m.cox_intercept,
    ),
    "cox_slope": _d(
        "Cox slope",
        "Cox recalibration slope",
        "Whether the stated values are too spread out (below 1) or too bunched (above 1).",
        "1 is calibrated.",
        m.cox_slope,
    ),
    "share_top": _d(
        "Share at the most common value",
        "modal share",
        "How many answers used the single most common value.",
        "A high share means the scale is hardly used.",
        m.share_top,
    ),
    "share_below": _d(
        "Share stated below",
        "share below the cut",
        "How many answers stated less than the cut.",
        "Near 0 means the judge never admits doubt.",
        m.share_below,
    ),
    "to_person": _d(
        "Sent to a person",
        "items routed to review",
        "Items whose confidence is below the review threshold: a person checks them.",
        "Fewer means less work, but more errors may slip through.",
        m.to_person,
    ),
    "accepted": _d(
        "Accepted unseen",
        "items accepted without review",
        "Items at or above the review threshold: nobody checks them.",
        "More means less work, if few of them are wrong.",
        m.accepted,
    ),
    "accuracy_accepted": _d(
        "Accuracy among accepted",
        "precision of the accepted set",
        "The share right among the items accepted unseen.",
        "Higher is better.",
        m.accuracy_accepted,
    ),
    "errors_slipping": _d(
        "Errors slipping through",
        "false accepts",
        "Wrong answers accepted unseen: the errors nobody sees.",
        "Fewer is better.",
        m.slipping,
    ),
    "errors_caught": _d(
        "Errors caught",
        "errors routed to review",
        "Wrong answers sent to a person, who can fix them.",
        "More is better.",
        m.caught,
    ),
    "middle": _d(
        "Middle band",
        "items between the thresholds",
        "Items between the lower and the upper threshold.",
        "Your policy decides what happens to them.",
        m.middle,
    ),
    "error_bound": _d(
        "Error bound among accepted",
        "one-sided Clopper-Pearson upper bound",
        "The most the error rate among accepted items can be, with the chosen confidence: the "
        "decision's guarantee.",
        "Must be at or below the target.",
        m.error_bound,
    ),
    "target": _d(
        "Target error rate",
        "risk level alpha (with confidence 1 - delta)",
        "The most errors you accept among the items nobody checks.",
        "Your choice; a lower target sends more to a person.",
        m.guarantee,
    ),
    "cost": _d(
        "Expected cost per item",
        "expected cost (reviews plus missed errors)",
        "What each item costs on average at a threshold: the review cost for each item sent to a person "
        "plus the miss cost for each error accepted unseen.",
        "Lower is better.",
        m.cost,
    ),
    "total_cost": _d(
        "Total cost",
        "total expected cost",
        "Reviews plus missed errors over all the items.",
        "Lower is better.",
        m.total_cost,
    ),
    "aurc": _d(
        "AURC",
        "area under the risk-coverage curve",
        "The error rate among accepted items, averaged over every possible share accepted: how well "
        "the confidence puts errors last.",
        "Lower is better.",
        m.aurc,
    ),
    "auprc_errors": _d(
        "AUPRC for errors",
        "average precision with the wrong answers as positives, least confident first",
        "How well low confidence picks out the wrong answers: the share of wrong answers among those "
        "flagged, averaged over every share of the errors caught.",
        "Higher is better; the error rate is chance, 1 is perfect.",
        m.auprc_errors,
    ),
    "prr": _d(
        "PRR",
        "prediction rejection ratio (Malinin et al. 2020)",
        "Setting aside the least confident answers: the share of the gain over random rejection that "
        "setting aside exactly the wrong answers would give, on the error rate of the answers kept.",
        "Higher is better; 0 is chance, 1 is perfect, below 0 worse than chance.",
        m.prr,
    ),
    "accuracy_at_coverage": _d(
        "Right among the most confident",
        "selective accuracy at fixed coverage (HELM: 10%)",
        "The share right among a fixed share of the answers, the most confident ones; answers tied at "
        "the cut count by their share (their average).",
        "Higher is better.",
        m.accuracy_at_coverage,
    ),
    "cumulative_differences": _d(
        "Cumulative differences",
        "cumulative-differences test (Kuiper, Kolmogorov-Smirnov; Tygert 2021)",
        "Answers sorted by confidence, the running sum of right (1) minus stated probability: flat for a "
        "calibrated judge, rising where it is underconfident, falling where overconfident. No bins.",
        "Flat is calibrated; the test says whether its range is more than noise.",
        m.cumulative_differences,
    ),
    "drift_change": _d(
        "Change",
        "difference between runs (new minus old)",
        "How much a figure moved between the old and the new run.",
        "Near 0 is stable; the test says whether it is more than noise.",
        m.drift_change,
    ),
}

#: The bands and lines of the figures, in plain words (hover texts, legends, captions).
BANDS: dict[str, str] = {
    "diagonal": "The diagonal: where a perfectly calibrated judge's points would lie.",
    "consistency": (
        "Consistency band: where a calibrated judge's curve would fall by chance alone, with "
        "this many answers; a curve outside it is miscalibrated beyond noise."
    ),
    "confidence": "Confidence band: where the true curve lies, given the noise of this sample.",
    "wilson": "Interval: where the true share right at this value lies (Wilson interval).",
}

#: The audit's tests (keys of :attr:`calib.audit.Audit.tests`): what each asks, in plain words.
TESTS: dict[str, str] = {
    "calibration_in_the_large": (
        "Does the average stated confidence equal the share right? Sees a judge that "
        "is too sure (or too unsure) overall, e.g. one that says 100 every time."
    ),
    "goodness_of_fit": (
        "Does every stated value (or bin) come true as often as it says? Sees any value "
        "whose hit rate is off, even when the average is right."
    ),
    "cox_lr": (
        "Would shifting or stretching the stated values fit better? Sees values that are too spread "
        "out or too bunched (Cox's intercept 0 and slope 1, likelihood-ratio test)."
    ),
    "brier_vs_constant": (
        "Is the stated confidence a better forecast than giving every answer the judge's own "
        "accuracy? A paired test of the two Brier scores."
    ),
    "spiegelhalter": (
        "Spiegelhalter's Z: reported for comparison, never decides, because it cannot see a "
        "judge that states 0, 50 or 100 only, nor errors that cancel out."
    ),
    "auroc_vs_chance": (
        "Does the confidence rank right answers above wrong ones better than chance? (Mann-Whitney U.)"
    ),
}


def unheld_interval(key: str, why: str) -> str:
    """The sentence beside a figure whose interval does not hold it
    (:meth:`calib.audit.Audit.unheld_intervals`): which figure, and why."""
    label = QUANTITIES[key].label if key in QUANTITIES else key.replace("_", " ")
    return f"{label}: the interval does not hold the figure; {why}"


def help_text(key: str) -> str:
    """The help of a quantity (a widget's ``help=``, a tooltip): what it measures, which
    way is good, and its technical name for experts."""
    q = QUANTITIES[key]
    return f"{q.what} {q.good} Technical name: {q.name}."


def meaning(key: str, x: float | None, **context: float | None) -> str:
    """What the value ``x`` of the quantity ``key`` means for this data, in one sentence
    (``context``: the other figures the sentence needs, e.g. ``total`` for a count of items,
    ``confidence`` for the error bound); says so when the figure is undefined."""
    q = QUANTITIES[key]
    if missing(x):
        return f"{q.label} {MISSING}: not defined for this data."
    return q.means(x, **context)


def what_this_means(key: str, x: float | None, **context: float | None) -> str:
    """The "what this means" line the pages and the reports print under a figure."""
    return f"What this means: {meaning(key, x, **context)}"


def p_meaning(p: float | None) -> str:
    """A p-value in plain words: how often data this far from calibrated would be seen if
    the stated confidences were right."""
    if p is None:
        return "The test is undefined for this data."
    if p == 0:
        return "Calibrated stated confidences could never produce this data."
    share = pct(p, 1) if p >= 0.001 else "less than 0.1%"
    return (
        f"If the stated confidences were right, data at least this far off would be seen {share} of "
        "the time; the smaller, the stronger the evidence."
    )


def test_help(key: str) -> str:
    """A test's help: the question it asks (:data:`TESTS`)."""
    return TESTS[key]


def test_meaning(key: str, p: float | None, level: float) -> str:
    """What a test's p-value means for this data, with the cut the verdict applies to it
    (:func:`verdict_tests`)."""
    from calib.audit import CALIBRATION_TESTS

    base = p_meaning(p)
    if key in CALIBRATION_TESTS:
        cut = (1 - level) / len(CALIBRATION_TESTS)
        decides = (
            ""
            if p is None
            else (" It counts against calibration." if p < cut else " It does not reach the verdict's cut.")
        )
        return f"{base} The verdict calls a test significant below p={cut:.4g}.{decides}"
    if key == "brier_vs_constant":
        return f"{base} Below p={1 - level:.4g} the verdict names the better forecast."
    return f"{base} This test does not decide the verdict."


def verdict_tests(level: float) -> str:
    """Which tests the verdict uses, in one sentence (the dashboard, the CLI and the HTML
    report print this one): the calibration tests with Bonferroni's cut, the Brier test
    for the better forecast, the rest reported only. Read from
    :data:`calib.audit.CALIBRATION_TESTS`, so the words follow the engine."""
    from calib.audit import CALIBRATION_TESTS
    from calib.present.tables import TESTS as NAMES

    k = len(CALIBRATION_TESTS)
    names = [label for key, label, _ in NAMES if key in CALIBRATION_TESTS]
    alpha = 1 - level
    words = {2: "two", 3: "three", 4: "four", 5: "five"}
    return (
        f"The verdict calls the confidence miscalibrated when one of the first {words.get(k, str(k))} tests "
        f"({', '.join(names)}) has p below {alpha / k:.4g} (the {100 * alpha:g}% level split over {words.get(k, str(k))} "
        f"tests, Bonferroni: a calibrated judge is flagged at most {100 * alpha:g}% of the time); the fourth "
        f"(Brier vs constant) decides which forecast is better at p below {alpha:.4g}; the others are "
        "reported but do not decide."
    )


def interval_text(lo: float | None, hi: float | None, fmt: Callable[[float | None], str] = num) -> str:
    """An interval as :data:`INTERVAL_PATTERN` reads it (``[lo, hi]``), empty when missing."""
    return interval(lo, hi, fmt)


#: The headline figures of an audit, as the Overview and the HTML report show them:
#: (metric key, as a percentage, digits).
HEADLINE: tuple[tuple[str, bool, int], ...] = (
    ("accuracy", True, 1),
    ("mean_confidence", True, 1),
    ("ece", False, 3),
    ("brier", False, 4),
    ("brier_base_rate", False, 4),
    ("auroc", False, 3),
)
#: The figures whose "what this means" sentence every face prints under an audit (the
#: Overview, ``calib audit``'s text, the HTML report), in this order.
MEANT: tuple[str, ...] = ("accuracy", "ece", "brier", "auroc")


@dataclass(frozen=True)
class Headline:
    """One headline figure, written: ``key`` (the metric), ``label``, ``value`` (formatted),
    ``interval`` (``[lo, hi]`` in the value's unit, empty without one), ``help``
    (:func:`help_text`) and ``means`` (:func:`meaning`)."""

    key: str
    label: str
    value: str
    interval: str
    help: str
    means: str


def headline(a: Audit) -> tuple[Headline, ...]:
    """The headline figures of an audit (:data:`HEADLINE`), written once for every face."""
    out = []
    for key, as_pct, digits in HEADLINE:
        e = a.estimates.get(key)
        x, ci = (None, None) if e is None else (e.value, e.ci)
        val = pct(x, digits) if as_pct else num(x, digits)
        iv = (
            ci_text(ci, digits)
            if not as_pct
            else ("" if not ci or ci[0] is None else interval(ci[0], ci[1], lambda y, d=digits: pct(y, d)))
        )
        out.append(
            Headline(
                key,
                QUANTITIES[key].label,
                val,
                iv if ci and ci[0] is not None else "",
                help_text(key),
                meaning(key, x),
            )
        )
    return tuple(out)


def audit_meanings(a: Audit) -> tuple[str, ...]:
    """The "what this means" sentences of an audit (:data:`MEANT`), as every face prints them."""
    return tuple(meaning(key, a.metrics.get(key)) for key in MEANT)


#: What ``bench/sim_coverage.py --only "small n"`` measured for the routing's interval of the
#: accuracy among accepted (threshold 80; 200 datasets, 500 resamples; Monte Carlo s.e. 1.5-3.3
#: points): 87.0% and 69.0% at 30 items (2 and 3 values), 93.0% and 89.0% at 50, 96.5% and 93.0% at 100.
SMALL_N_ROUTING_COVERAGE = "69-87% at 30 items and 89-93% at 50 (93-96.5% at 100)"


def routing_small_sample(r: Routing) -> str | None:
    """The note of a routing whose intervals come from few items
    (:attr:`calib.routing.Routing.small_sample`, decided by the engine), ``None``
    otherwise; the CLI's routing text and the Routing page show it."""
    from calib.bootstrap import SMALL_SAMPLE

    if not r.small_sample:
        return None
    return (f"Only {r.total:,} items: percentile bootstrap intervals run narrow below {SMALL_SAMPLE:,}; in "
            f"simulation, 95% intervals of the accuracy among accepted with 2-3 stated values covered "
            f"{SMALL_N_ROUTING_COVERAGE}. Read them as rough.")
