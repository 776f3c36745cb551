"""The calibration audit: every metric, its interval, the tests and a plain verdict.

:func:`audit` is what ``calib audit`` and the dashboard's audit page run. It takes a
count table, computes the point estimates of :mod:`calib.metrics`, bootstraps them
all together (:mod:`calib.bootstrap`), runs the tests, and writes the verdict: a
short list of sentences a person can act on ("a stated 95 meant 79%, and it meant
it 878 times"; "the constant base rate beats the stated confidence on Brier").

The verdict rests only on tests that see the failures LLM judges produce:
calibration-in-the-large (sees "everything stated at 100"), the per-value
goodness-of-fit test and Cox's likelihood-ratio test (see values in {0, 0.5, 1}
and overconfidence symmetric around 0.5), and the paired Brier test against the
constant base rate. Spiegelhalter's Z, blind to the first two (and to over- and
underconfidence that cancel in its sum), is reported but never decides. The three
calibration tests are combined by Bonferroni (:func:`miscalibrated`): the data is
called miscalibrated when one of them has ``p < (1 - level) / 3``, which on
calibrated data happens at most ``1 - level`` of the time (``bench/sim_tests.py``).
Every sentence follows from what was computed: the ranking is worded from the
bootstrap interval of the AUROC, or from the Mann-Whitney test when there are no
resamples.

:meth:`Audit.to_dict` is the JSON schema of ``calib audit --json`` (documented
key by key in the README); it holds plain numbers, ``None`` for anything
undefined, never NaN or infinity.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from calib import metrics as m
from calib.bootstrap import SMALL_SAMPLE, Bootstrap, bootstrap
from calib.errors import CalibError
from calib.loadreport import LoadReport
from calib.numbers import finite_or_none, plain
from calib.scale import Scale
from calib.settings import BINS, REPS
from calib.table import MAX_EXACT_CELLS, CountTable
from calib.wording import p_value, pct, value

#: Version of the JSON schema of :meth:`Audit.to_dict`.
SCHEMA = "calib.audit/1"
#: The tests the verdict's "miscalibrated" rests on.
CALIBRATION_TESTS: tuple[str, ...] = ("calibration_in_the_large", "goodness_of_fit", "cox_lr")
#: "No evidence of miscalibration" is hedged when the ECE interval reaches this far (5 points).
HEDGE_ECE = 0.05
#: Without an interval, a sample this small is hedged.
SMALL_N = 200
#: Per-value sentences: values holding at least this share of the answers (at most 3).
VALUE_SHARE = 0.05
#: How ``ece_ci`` is made (the JSON's ``ece_ci_method``).
ECE_CI_METHOD = ("interval for the population ECE: lower end the basic-bootstrap bound of the debiased ECE, "
                 "upper end the percentile bound of the plug-in ECE (calib.bootstrap.ece_interval)")


class Verdict(tuple[str, ...]):
    """The verdict's sentences: a tuple (compared, indexed and serialised as one) that
    reads as text: ``str(a.verdict)`` and ``print(a.verdict)`` give the sentences, one
    per line."""

    __slots__ = ()

    def __str__(self) -> str:
        return "\n".join(self)


#: The headline figures of :meth:`Audit.to_frame`, in order, with what each measures.
HEADLINE: tuple[tuple[str, str], ...] = (
    ("accuracy", "share of answers right"),
    ("mean_confidence", "mean stated probability"),
    ("overconfidence", "mean stated probability minus accuracy"),
    ("ece", "expected calibration error (plug-in; interval for the population ECE)"),
    ("ece_debiased", "ECE with each bin's noise removed"),
    ("smooth_ece", "smooth ECE"),
    ("brier", "Brier score of the stated confidence"),
    ("brier_base_rate", "Brier score of the constant base rate"),
    ("brier_skill", "1 - Brier / Brier of the base rate"),
    ("log_loss", "log loss"),
    ("auroc", "AUROC: how well the number ranks right above wrong"),
)


@dataclass(frozen=True)
class Audit:
    """Everything the audit of one table (one group, or all groups pooled) found.

    Attributes
    ----------
    name:
        Dataset name (file or model); for a per-group audit, the group.
    group:
        The group name for a per-group audit, ``None`` for the pooled audit.
    metrics:
        Point estimate of every metric of :data:`calib.metrics.BATCH_METRICS`
        (``None`` where undefined).
    ci:
        Bootstrap interval of each of them (``(None, None)`` without resamples or
        where undefined in too many resamples): percentile, except ``ece`` and
        ``ece_debiased``, whose interval is for the population ECE
        (:func:`calib.bootstrap.ece_interval`).
    per_value, bin_table:
        Per distinct stated value (only with per-value bins, i.e. on a stated scale
        whose values repeat: empty otherwise), and per bin of the ECE's scheme.
    scheme_why:
        Why the binning scheme was chosen (:func:`calib.metrics.choose_scheme`).
    tests:
        :class:`~calib.metrics.Test` by name: ``calibration_in_the_large``,
        ``goodness_of_fit``, ``cox_lr``, ``brier_vs_constant``, ``spiegelhalter``.
    miscalibrated:
        The verdict's decision (``None`` when no calibration test is defined).
    verdict:
        Plain-language findings, most important first.
    notes:
        What is undefined and why, and caveats.
    groups:
        One audit per group when the table has several (then this is the pooled one).
    """

    name: str
    group: str | None
    scale: Scale
    pooled: bool
    scheme: str
    bins: int
    reps: int
    seed: int
    level: float
    below: float
    n: int
    correct: int
    metrics: dict[str, float | None]
    ci: dict[str, tuple[float | None, float | None]]
    auroc_grid_bound: float
    distinct_values: int
    top_value: float | None
    top_count: int
    per_value: tuple[m.ValueRow, ...]
    bin_table: tuple[m.BinRow, ...]
    murphy: m.Murphy
    corp: m.Corp
    cox: m.Cox
    smooth: m.SmoothEce
    tests: dict[str, m.Test]
    miscalibrated: bool | None
    verdict: Verdict
    notes: tuple[str, ...]
    groups: tuple[Audit, ...] = ()
    load_report: LoadReport | None = field(default=None, repr=False)
    scheme_why: str = ""
    #: :meth:`calib.clusters.Clusters.to_dict` of the table's clusters (count, how,
    #: effective_n, design_effect), ``None`` when rows are independent
    clusters: dict[str, Any] | None = None

    @property
    def ece(self) -> float | None:
        return self.metrics["ece"]

    def to_frame(self) -> Any:
        """The headline figures as a pandas DataFrame: one row per metric of
        :data:`HEADLINE`, with ``estimate``, ``lo``, ``hi`` (the interval at ``level``,
        NaN without resamples), ``n`` and what it measures."""
        import pandas as pd

        rows = [{"metric": k, "estimate": self.metrics[k], "lo": self.ci[k][0], "hi": self.ci[k][1], "n": self.n,
                 "what": what} for k, what in HEADLINE]
        return pd.DataFrame(rows).set_index("metric").astype({"estimate": float, "lo": float, "hi": float})

    def per_value_frame(self) -> Any:
        """:attr:`per_value` as a DataFrame (one row per stated value, Wilson interval
        ``lo``/``hi``); empty with the same columns when there is no per-value table."""
        import pandas as pd

        cols = ["value", "prob", "n", "correct", "share", "hit_rate", "lo", "hi", "gap", "z", "p_value"]
        return pd.DataFrame([{c: getattr(r, c) for c in cols} for r in self.per_value], columns=cols)

    def bins_frame(self) -> Any:
        """:attr:`bin_table` as a DataFrame (one row per bin of the ECE's scheme)."""
        import pandas as pd

        rows = []
        for r in self.bin_table:
            d = r.to_dict()
            lo, hi = d.pop("hit_rate_ci")
            rows.append({**d, "hit_rate_lo": lo, "hit_rate_hi": hi})
        cols = ["index", "lo", "hi", "n", "correct", "mean_prob", "hit_rate", "hit_rate_lo", "hit_rate_hi", "gap"]
        return pd.DataFrame(rows, columns=cols)

    def to_dict(self) -> dict[str, Any]:
        # long: the docstring documents the JSON schema key by key, beside the code writing it
        """The ``calib audit --json`` object (strict JSON: ``None`` for undefined).

        Keys (probabilities and rates in [0, 1]; every ``*_ci`` is ``[lo, hi]``, the
        bootstrap percentile interval at ``level`` unless said otherwise, ``[null,
        null]`` without it):

        - ``schema`` ("calib.audit/1"), ``name``, ``group`` (null for the pooled audit),
          ``n``, ``correct``;
        - ``accuracy``, ``mean_confidence`` (mean stated probability), ``mean_stated``
          (the same on the stated scale), ``overconfidence`` (mean stated - accuracy);
        - ``brier``, ``brier_base_rate`` (the constant hit rate's Brier),
          ``brier_skill`` (1 - brier / base), ``brier_diff`` (brier - base), ``log_loss``;
        - ``auroc``, ``auroc_grid_bound`` (max change pooling can make);
        - ``ece`` (plug-in), ``ece_debiased`` (:func:`calib.metrics.ece_debiased`),
          ``mce``, ``ece_l2_debiased`` over ``scheme``/``bins``; ``ece_ci`` (equal to
          ``ece_debiased_ci``) is the interval for the population ECE of
          :func:`calib.bootstrap.ece_interval`, described in ``ece_ci_method``;
          ``smooth_ece`` and ``smooth_ece_sigma`` (its kernel width);
        - ``spiegelhalter_z``, ``spiegelhalter_p``;
        - ``murphy`` {reliability, resolution, uncertainty, within_cell}, ``murphy_ci``;
          ``corp`` {mcb, dsc, unc}, ``corp_ci``;
        - ``cox`` {intercept, slope, intercept_ci, slope_ci (Wald),
          intercept_bootstrap_ci, slope_bootstrap_ci, lr_test, note};
        - ``distinct_values``, ``top_value`` {value, n, share, share_ci},
          ``share_below`` {value, share, share_ci};
        - ``per_value``: [{value, prob, n, correct, share, hit_rate, hit_rate_ci
          (Wilson), gap (prob - hit_rate), z, p_value}] (only with per-value bins);
          ``bin_table``: [{index, lo, hi, n, correct, mean_prob, hit_rate,
          hit_rate_ci, gap}];
        - ``tests``: {calibration_in_the_large, goodness_of_fit, cox_lr,
          brier_vs_constant, spiegelhalter, auroc_vs_chance}: {name, statistic, df,
          p_value, log10_p (null for a Monte Carlo bound or p = 0), note, p_bound};
          ``miscalibrated`` (the verdict's decision); ``verdict`` and ``notes``
          (lists of sentences);
        - ``scale`` {lo, hi, name, how}, ``pooled``, ``scheme``, ``scheme_why``, ``bins``, ``reps``,
          ``seed``, ``level``;
        - ``clusters``: null for independent rows, else {count (clusters), how (how they
          were found), effective_n (n / design_effect), design_effect (of the accuracy,
          Kish)}: every interval then resamples clusters and each test divides its
          statistic by its own design effect (see the test's note);
        - ``groups``: one such object per group (without ``load_report``) when the
          data has several; ``load_report`` (:meth:`LoadReport.to_dict`) when given.
        """
        mt, ci = self.metrics, self.ci
        out: dict[str, Any] = {"schema": SCHEMA, "name": self.name, "group": self.group, "n": self.n,
                               "correct": self.correct}
        for key in ("accuracy", "mean_confidence"):
            out[key], out[f"{key}_ci"] = mt[key], list(ci[key])
        mc = mt["mean_confidence"]
        out["mean_stated"] = None if mc is None else float(self.scale.to_stated(mc))
        for key in ("overconfidence", "brier", "brier_base_rate", "brier_skill", "brier_diff", "log_loss",
                    "auroc", "ece", "ece_debiased", "mce", "ece_l2_debiased", "smooth_ece"):
            out[key], out[f"{key}_ci"] = mt[key], list(ci[key])
        out["ece_ci_method"] = ECE_CI_METHOD
        out["auroc_grid_bound"] = self.auroc_grid_bound
        out["smooth_ece_sigma"] = self.smooth.sigma
        sp = self.tests["spiegelhalter"]
        out["spiegelhalter_z"], out["spiegelhalter_p"] = sp.statistic, sp.p_value
        out["murphy"] = self.murphy.to_dict()
        out["murphy_ci"] = {k: list(ci[f"murphy_{k}"]) for k in ("reliability", "resolution", "uncertainty")}
        out["corp"] = self.corp.to_dict()
        out["corp_ci"] = {k: list(ci[f"corp_{k}"]) for k in ("mcb", "dsc", "unc")}
        cox = self.cox.to_dict()
        cox["intercept_bootstrap_ci"] = list(ci["cox_intercept"])
        cox["slope_bootstrap_ci"] = list(ci["cox_slope"])
        out["cox"] = cox
        out["distinct_values"] = self.distinct_values
        out["top_value"] = {"value": self.top_value, "n": self.top_count, "share": mt["share_top"],
                            "share_ci": list(ci["share_top"])}
        out["share_below"] = {"value": self.below, "share": mt["share_below"], "share_ci": list(ci["share_below"])}
        out["per_value"] = [r.to_dict() for r in self.per_value]
        out["bin_table"] = [r.to_dict() for r in self.bin_table]
        out["tests"] = {k: t.to_dict() for k, t in self.tests.items()}
        out["miscalibrated"] = self.miscalibrated
        out["verdict"] = list(self.verdict)
        out["notes"] = list(self.notes)
        out["clusters"] = self.clusters
        out["scale"] = self.scale.to_dict()
        out["pooled"] = self.pooled
        out.update(scheme=self.scheme, scheme_why=self.scheme_why, bins=self.bins, reps=self.reps, seed=self.seed, level=self.level)
        if self.groups:
            out["groups"] = [g.to_dict() for g in self.groups]
        if self.load_report is not None:
            out["load_report"] = self.load_report.to_dict()
        return plain(out)


def audit(
    table: CountTable,
    *,
    scheme: str = "auto",
    bins: int = BINS,
    reps: int = REPS,
    seed: int = 0,
    level: float = 0.95,
    below: float | None = None,
    name: str = "",
    load_report: LoadReport | None = None,
) -> Audit:
    """Audit a count table.

    Parameters
    ----------
    table:
        The count table; with several groups, the result is the audit of all groups
        pooled, with one audit per group in :attr:`Audit.groups`.
    scheme, bins:
        Binning of ECE, MCE, the debiased L2 error and the goodness-of-fit test
        (see :func:`calib.metrics.resolve_scheme`).
    reps, seed:
        Bootstrap resamples (0 for none) and their seed; group ``i`` (0-based) is
        resampled with seed ``seed + 1 + i``.
    level:
        Confidence level of every interval; ``1 - level`` is the tests' level.
    below:
        Threshold of "share below" on the stated scale (default: probability 0.8).
    load_report:
        Attached to the result (and its JSON) as is.

    Raises
    ------
    CalibError
        When the table has no answers, or an option is invalid.
    """
    if not 0 < level < 1:
        raise CalibError(f"the confidence level must be between 0 and 1 (e.g. 0.95), got {level:g}")
    if int(reps) != reps or reps < 0:
        raise CalibError(f"the number of resamples must be a non-negative integer, got {reps!r}")
    m.check_bins(bins)
    if table.total == 0:
        raise CalibError("nothing to audit: no answers were read (see the load report)")
    groups: tuple[Audit, ...] = ()
    if len(table.groups) > 1:
        groups = tuple(  # by_group: every group's table in one pass (select per group is quadratic)
            _audit_one(sub, scheme=scheme, bins=bins, reps=reps, seed=seed + 1 + gi, level=level,
                       below=below, name=g, group=g)
            for gi, (g, sub) in enumerate(zip(table.groups, table.by_group(), strict=True)) if sub.total > 0
        )
    pooled = _audit_one(m.single(table), scheme=scheme, bins=bins, reps=reps, seed=seed, level=level,
                        below=below, name=name, group=None)
    from dataclasses import replace

    return replace(pooled, groups=groups, load_report=load_report)


def _top_share_interval(t: CountTable, level: float) -> tuple[float | None, float | None]:
    """Wilson interval of the share of answers at the most used value, that value held
    fixed: a resample's most used value is the largest of many counts, biased upward (80
    answers at 80 distinct values: share 1.2%, percentile interval [3.8%, 7.5%]), so the
    bootstrap's interval need not hold the estimate. With clusters, on the effective
    count (Kish's design effect of "at that value", :func:`calib.clusters.design_effect`)."""
    from calib.metrics import wilson_interval

    tt = m.single(t)
    if tt.total == 0:
        return None, None
    i = int(np.argmax(tt.n))
    k, n = float(tt.n[i]), float(tt.total)
    if tt.clusters is not None and 0 < k < n:
        from calib import clusters

        at = (np.arange(tt.cells) == i).astype(np.float64)
        d = clusters.design_effect(tt.clusters, at, at, n * (k / n) * (1 - k / n), centre=True)
        d = clusters.test_adjustment(d)
        k, n = k / d, n / d
    lo, hi = wilson_interval(k, n, level)
    return finite_or_none(float(lo)), finite_or_none(float(hi))


def _audit_one(
    t: CountTable, *, scheme: str, bins: int, reps: int, seed: int, level: float, below: float | None,
    name: str, group: str | None,
) -> Audit:
    choice = m.choose_scheme(t, scheme)
    scheme = choice.scheme
    # Both threads read the table's pooled version; built here, before they start, it is one
    # object for both (Python 3.12's cached_property no longer locks a first build).
    t.coarse()
    # a thread costs more than it saves on a small table (a group of a few rows: 4 ms
    # a group to start and join it, most of the cost of 100,000 one-row groups)
    with ThreadPoolExecutor(1) if t.cells >= BESIDE_FROM_CELLS else _Inline() as beside:
        # Two parts that need neither the plan nor the bootstrap run on a second thread
        # while the rest runs here: the goodness-of-fit test's Monte Carlo null (binomial
        # draws, which release the GIL) and the Cox fit (numpy's large-array loops release
        # it too). Each has its own seeded stream, so the result is the same as in turn;
        # on 1,000,000 continuous rows the audit takes 1.03 s instead of 1.54 s.
        gof = beside.submit(m.goodness_of_fit, t, scheme, bins, seed=seed)
        cox_future = beside.submit(m.cox, t, level, seed=seed)
        below = m.default_below(t) if below is None else float(below)
        plan = m.Plan.of(t, scheme, bins, below)
        metrics = m.point_metrics(t, plan)
        boot: Bootstrap | None = bootstrap(t, plan=plan, reps=reps, seed=seed, level=level,
                                           point=metrics) if reps else None
        goodness_of_fit, cox = gof.result(), cox_future.result()
    ci = {k: (boot.ci(k) if boot else (None, None)) for k in m.BATCH_METRICS}
    if boot:
        ci["share_top"] = _top_share_interval(t, level)
    tests = {
        "calibration_in_the_large": m.calibration_in_the_large(t, seed=seed),
        "goodness_of_fit": goodness_of_fit,
        "cox_lr": cox.test,
        "brier_vs_constant": m.brier_vs_constant(t),
        "spiegelhalter": m.spiegelhalter(t, seed=seed),
        "auroc_vs_chance": m.auroc_vs_chance(t),
    }
    top_v, top_n, _share = m.most_common(t)
    # a per-value table means something only where the values repeat (a stated scale)
    per_value = m.per_value(t, level) if scheme == "values" and not t.pooled else ()
    miscal = miscalibrated(tests, level)
    a = Audit(
        name=name, group=group, scale=t.scale, pooled=t.pooled, scheme=scheme, bins=int(bins), reps=int(reps),
        seed=int(seed), level=float(level), below=below, n=t.total, correct=t.total_correct,
        metrics=metrics, ci=ci, auroc_grid_bound=m.auroc_grid_bound(t), distinct_values=m.distinct_values(t),
        top_value=top_v, top_count=top_n, per_value=per_value, bin_table=m.bin_table(t, scheme, bins, level),
        murphy=m.Murphy(metrics["murphy_reliability"], metrics["murphy_resolution"], metrics["murphy_uncertainty"],
                        m.murphy(t, scheme, bins).within_cell),
        corp=m.Corp(metrics["corp_mcb"], metrics["corp_dsc"], metrics["corp_unc"]),
        cox=cox, smooth=plan.smooth, tests=tests, miscalibrated=miscal,
        verdict=Verdict(), notes=(), scheme_why=choice.why,
        clusters=None if t.clusters is None else t.clusters.to_dict(),
    )
    from dataclasses import replace

    return replace(a, verdict=Verdict(_verdict(a)), notes=tuple(_notes(a, t)))


#: Tables of at least this many cells run two parts of the audit on a second thread
#: (:func:`_audit_one`); smaller ones run them in turn (the same results: own seeds).
BESIDE_FROM_CELLS = 1_000


class _Inline:
    """The part of :class:`ThreadPoolExecutor` that :func:`_audit_one` uses, run in turn."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Future[Any]:
        done: Future[Any] = Future()
        done.set_result(fn(*args, **kwargs))
        return done


def miscalibrated(tests: dict[str, m.Test], level: float) -> bool | None:
    """The verdict's decision: True when one of :data:`CALIBRATION_TESTS` has
    ``p < (1 - level) / 3`` (Bonferroni: at most ``1 - level`` false alarms on
    calibrated data), ``None`` when none of them is defined."""
    decided = [tests[k].rejects((1 - level) / len(CALIBRATION_TESTS)) for k in CALIBRATION_TESTS]
    return None if all(d is None for d in decided) else any(bool(d) for d in decided)


# ------------------------------------------------------------------ wording
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


def _verdict(a: Audit) -> list[str]:
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
    auc, (lo, hi) = a.metrics["auroc"], a.ci["auroc"]
    if auc is None or a.distinct_values == 1:
        return None
    if lo is None or hi is None:
        if not a.tests["auroc_vs_chance"].rejects(1 - a.level):
            return "no evidence"
        return "ranks" if auc > 0.5 else "reversed"
    return "ranks" if lo > 0.5 else "reversed" if hi < 0.5 else "no evidence"


def _side(a: Audit) -> str:
    gap = a.metrics["overconfidence"]
    return "overconfident" if gap is not None and gap > 0 else "underconfident"


def _headline(a: Audit) -> str:
    mt = a.metrics
    acc, mc, gap = mt["accuracy"], mt["mean_confidence"], mt["overconfidence"]
    assert acc is not None and mc is not None and gap is not None
    lo, hi = a.ci["accuracy"]
    ci = "" if lo is None or hi is None else f" [{100 * lo:.1f}, {100 * hi:.1f}]"
    return (f"{a.n:,} answers, {pct(acc, 1)} right{ci}; mean stated confidence "
            f"{stated(a, mc)} on the {a.scale.name} scale, {points(a, gap)} {_side(a)} on average.")


def _scale_use(a: Audit) -> list[str]:
    """How the scale was used (a continuous score has no "most common value")."""
    if a.pooled or a.top_value is None or a.distinct_values > MAX_EXACT_CELLS:
        return []
    mt = a.metrics
    below = mt["share_below"] or 0.0
    out = [
        f"It used {a.distinct_values} distinct value{'s' if a.distinct_values != 1 else ''} of the scale; "
        f"the most common, {value(a.top_value)}, on {pct(mt['share_top'], 0)} of answers; "
        f"{pct(below, 1)} of answers were below {value(a.below)}."
    ]
    shown = sorted((r for r in a.per_value if r.share >= VALUE_SHARE), key=lambda r: -r.n)[:3]
    for r in shown:
        out.append(
            f"A stated {value(r.value)} meant {pct(r.hit_rate, 0)} [{100 * r.lo:.0f}, {100 * r.hi:.0f}], "
            f"and it meant it {r.n:,} time{'s' if r.n != 1 else ''}."
        )
    return out


def _ece_text(a: Audit) -> str:
    mt = a.metrics
    if mt["ece"] is None:
        return "ECE undefined"
    lo_e, hi_e = a.ci["ece"]
    # the interval is for the population ECE; the plug-in figure is biased upward
    return (f"ECE {mt['ece']:.3f}" + (f" (debiased {mt['ece_debiased']:.3f})" if mt["ece_debiased"] is not None
                                      else "")
            + ("" if lo_e is None or hi_e is None else f", population ECE within [{lo_e:.3f}, {hi_e:.3f}]"))


def _how_miscalibrated(a: Audit) -> list[str]:
    tests, alpha, gap = a.tests, 1 - a.level, a.metrics["overconfidence"]
    how: list[str] = []
    if tests["calibration_in_the_large"].rejects(alpha / 3) and gap is not None:
        how.append(f"{_side(a)} by {points(a, gap)} on average")
    impossible = next((tests[k] for k in CALIBRATION_TESTS if tests[k].p_value == 0.0), None)
    if impossible is not None:
        how.append(impossible.note.replace(": impossible if the stated probabilities were the truth (p = 0)",
                                           ", which a calibrated judge never does"))
    slope = a.cox.slope
    if slope is not None and tests["cox_lr"].rejects(alpha / 3):
        lo, hi = a.cox.slope_ci
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
    hi = a.ci["ece"][1]
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
    auc = a.metrics["auroc"]
    lo, hi = a.ci["auroc"]
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


def _notes(a: Audit, t: CountTable) -> list[str]:
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
    if a.metrics["ece"] is not None and a.ci["ece"][0] is not None:
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
