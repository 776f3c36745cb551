"""Failure prediction: how well the stated confidence picks out the wrong answers, and the
calibration test with no bins, as the audit reports them beside AUROC.

:class:`FailurePrediction` gathers, for one audit, the figures of
:mod:`calib.metrics.ranking` (AUPRC for errors, the prediction rejection ratio, accuracy
at fixed coverage, each with its bootstrap interval from the audit's resamples) and the
cumulative-differences test of :mod:`calib.metrics.calibration_tests` (Kuiper and
Kolmogorov-Smirnov, with p-values). Its :meth:`FailurePrediction.to_dict` is the part of
``calib audit --json`` under the keys ``auprc_errors``, ``prr``, ``accuracy_at_coverage``
and ``cumulative_differences`` (a contract: see the README).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from calib import metrics as m
from calib.estimates import Estimate
from calib.table import CountTable

#: What the JSON's ``prr_definition`` says.
PRR_DEFINITION = ("(AURC_random - AURC) / (AURC_random - AURC_oracle), AURC_random the error rate: the share of "
                  "the oracle's gain over random rejection the confidence achieves (Malinin et al. 2020; "
                  "LM-Polygraph's risk of the answers kept); ties broken at random (their expectation)")


@dataclass(frozen=True)
class FailurePrediction:
    """The failure-prediction figures of one audit (see the module docstring).

    ``auprc_errors`` and ``prr`` are :class:`~calib.estimates.Estimate` values (the figure
    and its interval from the audit's resamples); ``auprc_errors_baseline`` is the error
    rate: the average precision of a confidence that ranks no better than chance."""

    auprc_errors: Estimate
    auprc_errors_baseline: float | None
    prr: Estimate
    accuracy_at_coverage: tuple[m.CoverageRow, ...]
    cumulative: m.CumulativeDifferences

    def to_dict(self) -> dict[str, Any]:
        return {
            "auprc_errors": self.auprc_errors.value, "auprc_errors_ci": self.auprc_errors.to_list(),
            "auprc_errors_baseline": self.auprc_errors_baseline,
            "prr": self.prr.value, "prr_ci": self.prr.to_list(), "prr_definition": PRR_DEFINITION,
            "accuracy_at_coverage": [r.to_dict() for r in self.accuracy_at_coverage],
            "cumulative_differences": self.cumulative.to_dict(),
        }


def failure_prediction(t: CountTable, estimates: dict[str, Estimate], *, seed: int = 0) -> FailurePrediction:
    """The figures from an audit's estimates (:attr:`calib.audit.Audit.estimates`, by
    :data:`calib.metrics.BATCH_METRICS` key) and the cumulative-differences test of ``t``."""
    acc, auprc = estimates["accuracy"].value, estimates["auprc_errors"]
    return FailurePrediction(
        auprc_errors=auprc,
        auprc_errors_baseline=None if acc is None or auprc.value is None else 1.0 - acc,
        prr=estimates["prr"],
        accuracy_at_coverage=m.accuracy_at_coverage(t, estimates),
        cumulative=m.cumulative_differences(t, seed=seed),
    )
