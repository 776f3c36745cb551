"""Runs of one judge over time: accuracy, calibration error and the error among accepted
items per run, with an EWMA control chart and the first run that crosses its limit.

Contract
--------
:func:`series` takes runs already in time order (:func:`order_runs` sorts files by a date
in the name or the modification time) and returns a :class:`Series`: one
:class:`RunPoint` per run and two :class:`Chart` s, on accuracy (two-sided: a judge that
changes either way has drifted) and on the error among the items accepted at the
threshold (upper side only: only a rising error breaks the threshold's promise). The
ECE is plotted without a limit (its null distribution depends on the bins).

The chart
---------
The first ``reference`` runs are the reference (phase I): their pooled rate ``mu0``
(clipped to ``[0.5/n, 1 - 0.5/n]`` so that a reference without errors still has a
variance). Each later run ``k`` (phase II) gives the binomial score of its count
``c_k = x_k n_k`` under ``mu0``: the mid-p probability integral transform

.. math:: z_k = \\Phi^{-1}\\big(P(C < c_k) + \\tfrac12 P(C = c_k)\\big), \\quad C \\sim \\mathrm{Bin}(n_k, \\mu_0)

(``n_k`` and ``c_k`` may be fractional, effective sizes: the binomial CDF is then the
regularised incomplete beta function). For many errors per run it is the familiar
``(x_k - mu0) / sigma_k`` with ``sigma_k = sqrt(mu0 (1 - mu0) / n_k)``; with few (about 10
errors per run on the upper chart) the normal score's long right tail alarmed 3-4% of
in-control sequences of 20 runs against 0.8-1.1% with many (issue 22), the binomial score
1.5-1.7% (``bench/sim_drift.py``, (f)). The EWMA (Roberts 1959; Montgomery, *Introduction
to Statistical Quality Control*, 8th ed., sec. 9.2)

.. math:: E_k = \\lambda z_k + (1 - \\lambda) E_{k-1}, \\quad E_0 = 0,

so ``E_k = sum_j w_kj z_j`` with ``w_kj = lambda (1 - lambda)^(k-j)``. The limit is
``L sqrt(Var E_k)`` with the variance exact under the normal approximation *including*
the reference's own error (``mu0`` estimated from ``n_ref`` items, variance
``tau^2 = mu0 (1 - mu0) / n_ref``, shared by every z):

.. math:: \\mathrm{Var}\\,E_k = \\sum_j w_{kj}^2 + \\tau^2 \\Big(\\sum_j w_{kj} / \\sigma_j\\Big)^2 .

``lambda`` = :data:`calib.settings.DRIFT_EWMA_LAMBDA` (0.2) and ``L`` =
:data:`calib.settings.DRIFT_EWMA_WIDTH` (3): with a known ``mu0`` the in-control
average run length is about 560 runs. ``bench/sim_drift.py`` measures the false-alarm
rate over 20 in-control runs and the delay to detect a shift.

The threshold of the error-among-accepted chart is fixed before the runs it is charted on:
given, the default review threshold, or picked on the first run with ``target``; then the
first run only picks it and that chart's reference starts at the second run
(:attr:`Chart.skipped`): a threshold chosen where the first run's error happened to be low
made that run a reference biased low, 10.8% in-control alarms against 5.1% at a threshold
fixed in advance (issue 22). With clustered rows
(:attr:`calib.table.CountTable.clusters`) ``n_k`` is the run's effective size, rows
divided by Kish's design effect of the accuracy (of the error among accepted, for that
chart), so the epochs of one item count as the fewer independent answers they are.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special, stats

from calib.dataset import Data, Dataset, table_and_rows
from calib.errors import CalibError
from calib.numbers import finite_or_none, plain
from calib.settings import DEFAULT_CONFIDENCE, DRIFT_EWMA_LAMBDA, DRIFT_EWMA_WIDTH, DRIFT_ORDERS

#: A date in a file name: 2026-12-01, 2026_12_01 or 20261201.
DATE = re.compile(r"(20\d\d|19\d\d)[-_.]?(0[1-9]|1[0-2])[-_.]?(0[1-9]|[12]\d|3[01])")


@dataclass(frozen=True)
class RunPoint:
    """One run's figures: items, accuracy, ECE, and at the threshold the items accepted and the errors among them."""

    name: str
    n: int
    right: int
    ece: float | None
    accepted: int
    errors: int
    #: As many independent items would estimate the accuracy / the error among accepted as
    #: precisely (Kish's design effect when the run's rows are clustered; ``None``: ``n`` /
    #: ``accepted``). The charts' limits use them.
    n_eff: float | None = None
    accepted_eff: float | None = None

    @property
    def accuracy(self) -> float | None:
        return self.right / self.n if self.n else None

    @property
    def error_accepted(self) -> float | None:
        return self.errors / self.accepted if self.accepted else None

    def to_dict(self) -> dict[str, Any]:
        return plain({"name": self.name, "n": self.n, "accuracy": self.accuracy, "ece": self.ece,
                      "accepted": self.accepted, "errors_accepted": self.errors,
                      "error_accepted": self.error_accepted,
                      "effective_n": self.n if self.n_eff is None else self.n_eff,
                      "effective_accepted": self.accepted if self.accepted_eff is None else self.accepted_eff})


@dataclass(frozen=True)
class Chart:
    """An EWMA chart of a rate (see the module docstring). ``ewma``, ``lower`` and ``upper``
    have one entry per run, ``None`` for the reference runs; ``lower`` is ``None`` on a
    one-sided chart. ``alarm`` is the index of the first run outside the limits."""

    metric: str
    reference: int
    mu0: float | None
    lam: float
    width: float
    side: str
    ewma: tuple[float | None, ...]
    lower: tuple[float | None, ...]
    upper: tuple[float | None, ...]
    alarm: int | None
    #: Runs before the reference, not charted: the first run when it picked the threshold.
    skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return plain({"metric": self.metric, "reference_runs": self.reference, "reference_rate": self.mu0,
                      "lambda": self.lam, "width": self.width, "side": self.side, "ewma": list(self.ewma),
                      "lower": list(self.lower), "upper": list(self.upper), "first_alarm": self.alarm,
                      "runs_before_reference": self.skipped, "score": "binomial mid-p"})


@dataclass(frozen=True)
class Series:
    """What :func:`series` returns."""

    runs: tuple[RunPoint, ...]
    threshold: float
    threshold_source: str
    accuracy: Chart
    error_accepted: Chart

    @property
    def alarm(self) -> int | None:
        """The first run either chart flags, or ``None``."""
        hits = [a for a in (self.accuracy.alarm, self.error_accepted.alarm) if a is not None]
        return min(hits) if hits else None

    def to_dict(self) -> dict[str, Any]:
        """Strict JSON, schema ``"calib.drift-series/1"``."""
        a = self.alarm
        return plain({"schema": "calib.drift-series/1", "threshold": self.threshold,
                      "threshold_source": self.threshold_source, "runs": [r.to_dict() for r in self.runs],
                      "charts": {"accuracy": self.accuracy.to_dict(),
                                 "error_accepted": self.error_accepted.to_dict()},
                      "first_alarm": a, "first_alarm_run": None if a is None else self.runs[a].name,
                      "drift": a is not None})


def ewma_chart(x: np.ndarray, n: np.ndarray, *, reference: int = 1, lam: float = DRIFT_EWMA_LAMBDA,
               width: float = DRIFT_EWMA_WIDTH, side: str = "both", metric: str = "rate") -> Chart:
    """The EWMA chart of rates ``x`` over runs of ``n`` items (see the module docstring).

    Runs with ``n = 0`` (nothing accepted) carry the EWMA unchanged and cannot alarm."""
    x, n = np.asarray(x, dtype=np.float64), np.asarray(n, dtype=np.float64)
    if not 1 <= reference < x.size:
        raise CalibError(f"--reference {reference}: the reference must leave at least one run to chart "
                         f"({x.size} runs)")
    if not 0 < lam <= 1 or width <= 0:
        raise CalibError(f"EWMA: lambda in (0, 1] and a positive width, got {lam!r}, {width!r}")
    nref = float(n[:reference].sum())
    none = (None,) * x.size
    if nref == 0:
        return Chart(metric, reference, None, lam, width, side, none, none, none, None)
    mu0 = float(np.clip(np.nansum(x[:reference] * n[:reference]) / nref, 0.5 / nref, 1 - 0.5 / nref))
    tau2 = mu0 * (1 - mu0) / nref
    ewma, lo, hi = [None] * reference, [None] * reference, [None] * reference
    e, w, alarm = 0.0, np.zeros(0), None
    sig = np.zeros(0)
    for k in range(reference, x.size):
        if n[k] == 0:
            ewma.append(None), lo.append(None), hi.append(None)
            continue
        s = np.sqrt(mu0 * (1 - mu0) / n[k])
        e = lam * binomial_score(x[k] * n[k], n[k], mu0) + (1 - lam) * e
        w, sig = np.append((1 - lam) * w, lam), np.append(sig, s)
        half = width * float(np.sqrt(np.sum(w ** 2) + tau2 * np.sum(w / sig) ** 2))
        ewma.append(e)
        hi.append(half)
        lo.append(-half if side == "both" else None)
        if alarm is None and (e > half or (side == "both" and e < -half)):
            alarm = k
    return Chart(metric, reference, mu0, lam, width, side, tuple(map(finite_or_none, ewma)),
                 tuple(map(finite_or_none, lo)), tuple(map(finite_or_none, hi)), alarm)


def _binom_cdf(c: float, n: float, p: float) -> float:
    """``P(C <= c)`` for ``C ~ Bin(n, p)``, fractional ``c`` and ``n`` allowed (the regularised
    incomplete beta ``I_{1-p}(n - c, c + 1)``)."""
    if c < 0:
        return 0.0
    if c >= n:
        return 1.0
    return float(special.betainc(n - c, c + 1, 1 - p))


def binomial_score(c: float, n: float, p: float) -> float:
    """The mid-p normal score of a count ``c`` of ``n`` under rate ``p`` (see the module docstring)."""
    mid = 0.5 * (_binom_cdf(c - 1, n, p) + _binom_cdf(c, n, p))
    return float(stats.norm.ppf(min(max(mid, 1e-300), 1 - 1e-16)))


def _skip(c: Chart, k: int) -> Chart:
    """``c`` charted on the runs after the first ``k``: indices and entries of all runs."""
    pad = (None,) * k
    return replace(c, ewma=pad + c.ewma, lower=pad + c.lower, upper=pad + c.upper,
                   alarm=None if c.alarm is None else c.alarm + k, skipped=k)


def _point(x: Data, name: str, threshold: float) -> RunPoint:
    from calib.metrics import ece

    t = table_and_rows(x, name)[0]
    m = t.value >= threshold
    n_eff = acc_eff = None
    if t.clusters is not None:
        from calib.clusters import outcome_design_effect, test_adjustment
        from calib.decision.risk import counts

        n_eff = t.total / test_adjustment(outcome_design_effect(t.clusters))
        c = counts(t)
        i = int(np.searchsorted(c.score, threshold, side="left"))
        acc_eff = float(c.n_eff[i]) if i < c.score.size else 0.0
    return RunPoint(name, t.total, t.total_correct, finite_or_none(ece(t)), int(t.n[m].sum()), int(t.wrong[m].sum()),
                    n_eff, acc_eff)


def series(runs: Sequence[Data], *, threshold: float | None = None, target: float | None = None,
           confidence: float = DEFAULT_CONFIDENCE, reference: int = 1, lam: float = DRIFT_EWMA_LAMBDA,
           width: float = DRIFT_EWMA_WIDTH) -> Series:
    """Figures per run and the two EWMA charts (see the module docstring).

    The threshold: ``threshold`` if given; else, with ``target``, the one
    :func:`calib.decision.recommend` picks on the first run; else the default review
    threshold (:func:`calib.routing.default_thresholds`)."""
    from calib.decision import recommend
    from calib.routing import default_thresholds

    if len(runs) < 2:
        raise CalibError(f"a series needs at least two runs, got {len(runs)}")
    tables = [table_and_rows(r, "a run")[0] for r in runs]
    if len({(t.scale.lo, t.scale.hi) for t in tables}) > 1:
        raise CalibError("the runs are on different stated scales (" + ", ".join(
            f"{_name(r, i)}: {t.scale.lo:g}-{t.scale.hi:g}" for i, (r, t) in enumerate(zip(runs, tables, strict=True)))
            + "): runs of one judge share a scale (--rescale LO,HI)")
    source = "given"
    if threshold is None and target is not None:
        threshold = recommend(runs[0], target=target, confidence=confidence).threshold
        source = "recommended on the first run"
        if threshold is None:
            raise CalibError(f"no threshold meets the target {target:g} on the first run: give --threshold")
    if threshold is None:
        threshold, source = default_thresholds(tables[0].scale)[0], "default review threshold"
    pts = tuple(_point(r, _name(r, i), float(threshold)) for i, r in enumerate(runs))
    # limits from the effective sizes: clustered rows are fewer independent answers than rows
    n_eff = np.array([p.n if p.n_eff is None else p.n_eff for p in pts], float)
    acc_eff = np.array([p.accepted if p.accepted_eff is None else p.accepted_eff for p in pts], float)
    acc = ewma_chart(np.array([p.accuracy for p in pts], float), n_eff, reference=reference,
                     lam=lam, width=width, side="both", metric="accuracy")
    err = np.nan_to_num(np.array([np.nan if p.error_accepted is None else p.error_accepted for p in pts]))
    skip = 1 if source == "recommended on the first run" else 0  # that run picked it: not its reference
    if skip and reference + 1 >= len(pts):
        raise CalibError(f"the threshold picked on the first run leaves {len(pts) - 1} run(s) for the error chart's "
                         f"reference of {reference} and at least one charted run: give --threshold (fixed in "
                         "advance) or more runs")
    ea = _skip(ewma_chart(err[skip:], acc_eff[skip:], reference=reference, lam=lam,
                          width=width, side="upper", metric="error_accepted"), skip)
    return Series(pts, float(threshold), source, acc, ea)


def _name(x: Data, i: int) -> str:
    return x.name if isinstance(x, Dataset) else f"run {i + 1}"


def date_order(names: Sequence[str]) -> tuple[list[int], str]:
    """Positions of ``names`` in time order, and how it was decided, in words: by the date
    in the names (:data:`DATE`) when every name has one (ties keep the given order), else
    as given. For runs known only by name, as the dashboard's uploads are (an upload has
    no modification time)."""
    dates = [DATE.search(Path(n).name) for n in names]
    if names and all(dates):
        keys = ["".join(d.groups()) for d in dates if d is not None]
        return sorted(range(len(names)), key=lambda i: keys[i]), "by the date in their names"
    return list(range(len(names))), "in the order they were loaded (not every name has a date)"


def order_runs(paths: Sequence[str], order: str = "date") -> list[str]:
    """Files in time order. ``"date"``: by a date in the file name when every name has one,
    else by modification time; ``"mtime"``; ``"name"``; ``"given"`` (as listed). Ties keep the given order."""
    if order not in DRIFT_ORDERS:
        raise CalibError(f"--order: one of {', '.join(DRIFT_ORDERS)}, not {order!r}")
    if order == "given":
        return list(paths)
    if order == "name":
        return sorted(paths, key=lambda p: Path(p).name)
    if order == "date":
        pos, how = date_order(paths)
        if how.startswith("by the date"):
            return [paths[i] for i in pos]
    return sorted(paths, key=lambda p: os.stat(p).st_mtime)
