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
The verdict's sentences and notes are written by :mod:`calib.verdict`.

:meth:`Audit.to_dict` is the JSON schema of ``calib audit --json`` (documented
key by key in the README); it holds plain numbers, ``None`` for anything
undefined, never NaN or infinity.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from calib import metrics as m
from calib.bootstrap import Bootstrap, bootstrap, resample_counts
from calib.errors import CalibError
from calib.estimates import PERCENTILE, POPULATION_ECE, POPULATION_ECE_NOTE, WILSON, Estimate
from calib.failure import FailurePrediction, failure_prediction
from calib.loadreport import LoadReport
from calib.numbers import finite_or_none, plain
from calib.scale import Scale
from calib.settings import BINS, CALIBRATION_TESTS, REPS
from calib.table import CountTable
from calib.verdict import notes, verdict

#: Version of the JSON schema of :meth:`Audit.to_dict`.
SCHEMA = "calib.audit/1"
#: How ``ece_ci`` is made (the JSON's ``ece_ci_method``).
ECE_CI_METHOD = POPULATION_ECE


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
    estimates:
        Every metric of :data:`calib.metrics.BATCH_METRICS` as an
        :class:`~calib.estimates.Estimate`: the point estimate (``None`` where undefined)
        with its interval at ``level`` (``(None, None)`` without resamples or where
        undefined in too many resamples): percentile bootstrap, except ``ece`` and
        ``ece_debiased``, whose interval is for the population ECE
        (:func:`calib.bootstrap.ece_interval`, :data:`ECE_CI_METHOD`), and
        ``share_top`` (Wilson, :func:`_top_share_interval`). :attr:`metrics` and
        :attr:`ci` read them as two dicts.
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
    estimates: dict[str, Estimate]
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
    #: AUPRC for errors, PRR, accuracy at coverage, the cumulative-differences test
    failure: FailurePrediction | None = None

    @property
    def ece(self) -> float | None:
        return self.estimates["ece"].value

    @cached_property
    def metrics(self) -> dict[str, float | None]:
        """The point estimate of every metric, by name (:attr:`estimates`' values)."""
        return {k: e.value for k, e in self.estimates.items()}

    @cached_property
    def ci(self) -> dict[str, tuple[float | None, float | None]]:
        """The interval ``(lo, hi)`` of every metric, by name (:attr:`estimates`' intervals)."""
        return {k: e.ci for k, e in self.estimates.items()}

    def to_frame(self) -> Any:
        """The headline figures as a pandas DataFrame: one row per metric of
        :data:`HEADLINE`, with ``estimate``, ``lo``, ``hi`` (the interval at ``level``,
        NaN without resamples), ``n`` and what it measures."""
        import pandas as pd

        es = self.estimates
        rows = [{"metric": k, "estimate": es[k].value, "lo": es[k].lo, "hi": es[k].hi, "n": self.n, "what": what}
                for k, what in HEADLINE]
        return pd.DataFrame(rows).set_index("metric").astype({"estimate": float, "lo": float, "hi": float})

    def per_value_frame(self) -> Any:
        """:attr:`per_value` as a DataFrame (one row per stated value, Wilson interval
        ``lo``/``hi``); empty with the same columns when there is no per-value table."""
        import pandas as pd

        cols = ["value", "prob", "n", "correct", "share", "hit_rate", "lo", "hi", "gap", "z", "p_value"]
        frame = pd.DataFrame([{c: getattr(r, c) for c in cols if c not in ("hit_rate", "lo", "hi")}
                              | {"hit_rate": r.hit_rate.value, "lo": r.hit_rate.lo, "hi": r.hit_rate.hi}
                              for r in self.per_value], columns=cols)
        if self.scale.labels:  # confidence in words: the phrase beside its rank
            frame.insert(1, "phrase", [self.scale.show(v) for v in frame["value"]])
        return frame

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

    def unheld_intervals(self) -> dict[str, str]:
        """Figure key -> why, for each figure whose interval does not hold it
        (:attr:`calib.estimates.Estimate.excludes_own_estimate`), in :attr:`estimates` order."""
        return {k: e.note or "the interval's method does not guarantee it holds the figure"
                for k, e in self.estimates.items() if e.excludes_own_estimate}

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
        - ``auprc_errors`` (+ ``_ci``, ``_baseline`` the error rate), ``prr`` (+ ``_ci``,
          ``prr_definition``), ``accuracy_at_coverage``: [{coverage, accuracy, ci, value
          (stated value at the cut), tied_at_cut}], ``cumulative_differences`` {kuiper, ks,
          sigma, kuiper_normalised, ks_normalised, kuiper_p, ks_p, tests}
          (:class:`calib.failure.FailurePrediction`);
        - ``interval_notes``: {figure key: why}, only when some interval does not hold
          its own figure (e.g. ``mce``: a distance biased upward, whose percentile
          interval can lie above it on few answers); absent otherwise;
        - ``groups``: one such object per group (without ``load_report``) when the
          data has several; ``load_report`` (:meth:`LoadReport.to_dict`) when given.
        """
        es = self.estimates
        out: dict[str, Any] = {"schema": SCHEMA, "name": self.name, "group": self.group, "n": self.n,
                               "correct": self.correct}
        for key in ("accuracy", "mean_confidence"):
            out[key], out[f"{key}_ci"] = es[key].value, es[key].to_list()
        mc = es["mean_confidence"].value
        out["mean_stated"] = None if mc is None else float(self.scale.to_stated(mc))
        for key in ("overconfidence", "brier", "brier_base_rate", "brier_skill", "brier_diff", "log_loss",
                    "auroc", "ece", "ece_debiased", "mce", "ece_l2_debiased", "smooth_ece"):
            out[key], out[f"{key}_ci"] = es[key].value, es[key].to_list()
        out["ece_ci_method"] = ECE_CI_METHOD
        out["auroc_grid_bound"] = self.auroc_grid_bound
        out["smooth_ece_sigma"] = self.smooth.sigma
        sp = self.tests["spiegelhalter"]
        out["spiegelhalter_z"], out["spiegelhalter_p"] = sp.statistic, sp.p_value
        out["murphy"] = self.murphy.to_dict()
        out["murphy_ci"] = {k: es[f"murphy_{k}"].to_list() for k in ("reliability", "resolution", "uncertainty")}
        out["corp"] = self.corp.to_dict()
        out["corp_ci"] = {k: es[f"corp_{k}"].to_list() for k in ("mcb", "dsc", "unc")}
        cox = self.cox.to_dict()
        cox["intercept_bootstrap_ci"] = es["cox_intercept"].to_list()
        cox["slope_bootstrap_ci"] = es["cox_slope"].to_list()
        out["cox"] = cox
        out["distinct_values"] = self.distinct_values
        top, below = es["share_top"], es["share_below"]
        out["top_value"] = {"value": self.top_value, "n": self.top_count, "share": top.value, "share_ci": top.to_list()}
        out["share_below"] = {"value": self.below, "share": below.value, "share_ci": below.to_list()}
        out["per_value"] = [r.to_dict() for r in self.per_value]
        if self.scale.labels:  # confidence in words: the phrase is the value, its rank beside it
            for row in out["per_value"] + [out["top_value"]]:
                if row["value"] is not None:
                    row["rank"], row["value"] = row["value"], self.scale.show(row["value"])
        out["bin_table"] = [r.to_dict() for r in self.bin_table]
        out["tests"] = {k: t.to_dict() for k, t in self.tests.items()}
        out["miscalibrated"] = self.miscalibrated
        out["verdict"] = list(self.verdict)
        out["notes"] = list(self.notes)
        out["clusters"] = self.clusters
        if unheld := self.unheld_intervals():
            out["interval_notes"] = unheld
        if self.failure is not None:
            out.update(self.failure.to_dict())
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
        # Parts that need neither the plan nor the point metrics run on a second thread
        # while the rest runs here: the goodness-of-fit test's Monte Carlo null and the
        # bootstrap's draws (binomial and multinomial draws, which release the GIL) and the
        # Cox fit (numpy's large-array loops release it too). Each has its own seeded
        # stream, so the result is the same as in turn; on 1,000,000 continuous rows the
        # audit takes 1.03 s instead of 1.54 s.
        # The Cox fit of the whole table goes first, and is made once: the Cox test reads
        # it, and so do the point metrics when it is theirs too (m.shares_cox_fit; they
        # wait for it: a million cells, 0.2-0.3 s, fitted once instead of twice).
        fit = beside.submit(m.cox_point_fit, t) if t.total else None
        # The bootstrap's multinomial draws come next (the same seeded stream: the same
        # draws): they are ready when the bootstrap starts, after the point metrics.
        draws = beside.submit(resample_counts, t.coarse(), reps, seed) if reps else None
        gof = beside.submit(m.goodness_of_fit, t, scheme, bins, seed=seed)
        cox_future = beside.submit(_cox_test, t, level, seed, fit)
        below = m.default_below(t) if below is None else float(below)
        plan = m.Plan.of(t, scheme, bins, below)
        metrics = m.point_metrics(t, plan, fit.result() if fit and m.shares_cox_fit(t, plan) else None)
        boot: Bootstrap | None = bootstrap(t, plan=plan, reps=reps, seed=seed, level=level, point=metrics,
                                           draws=draws.result() if draws else None) if reps else None
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
    estimates = _estimates(metrics, ci, level if boot else None)
    a = Audit(
        name=name, group=group, scale=t.scale, pooled=t.pooled, scheme=scheme, bins=int(bins), reps=int(reps),
        seed=int(seed), level=float(level), below=below, n=t.total, correct=t.total_correct,
        estimates=estimates, auroc_grid_bound=m.auroc_grid_bound(t), distinct_values=m.distinct_values(t),
        top_value=top_v, top_count=top_n, per_value=per_value, bin_table=m.bin_table(t, scheme, bins, level),
        murphy=m.Murphy(metrics["murphy_reliability"], metrics["murphy_resolution"], metrics["murphy_uncertainty"],
                        m.murphy(t, scheme, bins).within_cell),
        corp=m.Corp(metrics["corp_mcb"], metrics["corp_dsc"], metrics["corp_unc"]),
        cox=cox, smooth=plan.smooth, tests=tests, miscalibrated=miscal,
        verdict=Verdict(), notes=(), scheme_why=choice.why,
        clusters=None if t.clusters is None else t.clusters.to_dict(),
        failure=failure_prediction(t, estimates, seed=seed),
    )
    from dataclasses import replace

    return replace(a, verdict=Verdict(verdict(a)), notes=tuple(notes(a, t)))


#: Distances from calibration measured on noisy data, biased upward: a resample, noisier
#: still, sits further up, so their percentile interval can lie above the figure (seen on
#: 30-40 answers, ``tests/test_audit.py``).
UPWARD = ("mce", "smooth_ece", "murphy_reliability", "corp_mcb")
#: Why the interval of one of :data:`UPWARD` may not hold its figure (:attr:`Estimate.note`).
UPWARD_NOTE = ("a distance from calibration measured with noise is biased upward, more so in a resample: the "
               "percentile interval can lie above the figure on few answers")


def _estimates(metrics: dict[str, float | None], ci: dict[str, tuple[float | None, float | None]],
               level: float | None) -> dict[str, Estimate]:
    """Each metric's point estimate and interval as one :class:`Estimate`, with how the
    interval was made (``level`` ``None``: no resamples, no interval)."""
    out = {}
    for k, x in metrics.items():
        if level is None:
            out[k] = Estimate.point(x)
        elif k in ("ece", "ece_debiased"):
            out[k] = Estimate.of(x, ci[k], level, ECE_CI_METHOD, POPULATION_ECE_NOTE if k == "ece" else "")
        else:
            out[k] = Estimate.of(x, ci[k], level, WILSON if k == "share_top" else PERCENTILE,
                                 UPWARD_NOTE if k in UPWARD else "")
    return out


#: Tables of at least this many cells run two parts of the audit on a second thread
#: (:func:`_audit_one`); smaller ones run them in turn (the same results: own seeds).
BESIDE_FROM_CELLS = 1_000


def _cox_test(t: CountTable, level: float, seed: int, fit: Future[Any] | None) -> m.Cox:
    """:func:`calib.metrics.cox` of ``t`` from its point fit (a future, done before this
    runs: submitted earlier to the same one-thread executor)."""
    return m.cox(t, level, seed=seed, fit=None if fit is None else fit.result())


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
