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
from calib.table import CountTable

#: What the JSON's ``prr_definition`` says.
PRR_DEFINITION = ("(AURC_random - AURC) / (AURC_random - AURC_oracle), AURC_random the error rate: the share of "
                  "the oracle's gain over random rejection the confidence achieves (Malinin et al. 2020; "
                  "LM-Polygraph's risk of the answers kept); ties broken at random (their expectation)")


@dataclass(frozen=True)
class FailurePrediction:
    """The failure-prediction figures of one audit (see the module docstring).

    ``auprc_errors_baseline`` is the error rate: the average precision of a confidence
    that ranks no better than chance."""

    auprc_errors: float | None
    auprc_errors_ci: tuple[float | None, float | None]
    auprc_errors_baseline: float | None
    prr: float | None
    prr_ci: tuple[float | None, float | None]
    accuracy_at_coverage: tuple[m.CoverageRow, ...]
    cumulative: m.CumulativeDifferences

    def to_dict(self) -> dict[str, Any]:
        return {
            "auprc_errors": self.auprc_errors, "auprc_errors_ci": list(self.auprc_errors_ci),
            "auprc_errors_baseline": self.auprc_errors_baseline,
            "prr": self.prr, "prr_ci": list(self.prr_ci), "prr_definition": PRR_DEFINITION,
            "accuracy_at_coverage": [r.to_dict() for r in self.accuracy_at_coverage],
            "cumulative_differences": self.cumulative.to_dict(),
        }


def failure_prediction(t: CountTable, metrics: dict[str, float | None],
                       ci: dict[str, tuple[float | None, float | None]], *, seed: int = 0) -> FailurePrediction:
    """The figures from an audit's point estimates and intervals (``metrics``, ``ci``:
    :data:`calib.metrics.BATCH_METRICS` keys) and the cumulative-differences test of ``t``."""
    acc = metrics["accuracy"]
    return FailurePrediction(
        auprc_errors=metrics["auprc_errors"], auprc_errors_ci=ci["auprc_errors"],
        auprc_errors_baseline=None if acc is None or metrics["auprc_errors"] is None else 1.0 - acc,
        prr=metrics["prr"], prr_ci=ci["prr"],
        accuracy_at_coverage=m.accuracy_at_coverage(t, ci),
        cumulative=m.cumulative_differences(t, seed=seed),
    )
