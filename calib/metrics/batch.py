"""The batch interface the audit and the bootstrap share: the :class:`Plan` of a table
(what the kernels need beyond its counts) and every scalar metric of
:data:`BATCH_METRICS` per rep (:func:`batch_metrics`) or as a point estimate
(:func:`point_metrics`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calib.metrics.binned import bin_ids_batch, bin_index, binned_errors_batch, resolve_scheme
from calib.metrics.cells import (
    CellStats,
    accuracy_batch,
    brier_batch,
    log_loss_batch,
    mean_confidence_batch,
    safe_div,
    single,
)
from calib.metrics.cox import cox_fit, cox_x
from calib.metrics.decompositions import corp_batch, murphy_batch
from calib.metrics.ranking import (
    COVERAGES,
    accuracy_at_coverages_batch,
    auprc_errors_batch,
    auroc_batch,
    coverage_key,
    prr_batch,
)
from calib.metrics.smooth import SmoothEce, smooth_ece_batch, smooth_ece_detail
from calib.metrics.values import default_below, shares_batch
from calib.numbers import finite_or_none
from calib.settings import BINS
from calib.table import CountTable


@dataclass(frozen=True)
class Plan:
    """What the batch kernels need to know about a table beyond its counts.

    Built once by :meth:`of`; :func:`batch_metrics` then evaluates every scalar
    metric on any :class:`CellStats` sharing the table's cells."""

    scheme: str
    bins: int
    fixed_bins: np.ndarray | None
    below: float
    below_mask: np.ndarray
    cox_x: np.ndarray
    cox_start: tuple[float, float] | None
    smooth: SmoothEce

    @staticmethod
    def of(
        table: CountTable, scheme: str = "auto", bins: int = BINS, below: float | None = None,
        smooth: SmoothEce | None = None,
    ) -> Plan:
        """The plan of ``table`` (``smooth``: its smooth ECE, when already computed)."""
        t = single(table)
        scheme = resolve_scheme(t, scheme)
        below = default_below(t) if below is None else below
        x = cox_x(t)
        # the start of the warm Newton fits: the coarse table's fit is as good a start
        # as the exact one, for a thousandth of the cost on a million cells
        c = t.coarse()
        f = cox_fit(x if c is t else cox_x(c), c.n[None, :], c.correct[None, :])
        return Plan(
            scheme=scheme, bins=int(bins),
            fixed_bins=None if scheme == "mass" else bin_index(t, scheme, bins),
            below=float(below), below_mask=t.value < below, cox_x=x,
            cox_start=None if not np.isfinite(f["a"][0] + f["b"][0]) else (float(f["a"][0]), float(f["b"][0])),
            smooth=smooth_ece_detail(t) if smooth is None else smooth,
        )


#: Scalar metrics of :func:`batch_metrics`, in order (also the ``*_ci`` JSON keys).
BATCH_METRICS: tuple[str, ...] = (
    "accuracy", "mean_confidence", "overconfidence", "brier", "brier_base_rate", "brier_skill",
    "brier_diff", "log_loss", "auroc", "ece", "ece_debiased", "mce", "ece_l2_debiased", "smooth_ece",
    "murphy_reliability", "murphy_resolution", "murphy_uncertainty", "corp_mcb", "corp_dsc",
    "corp_unc", "cox_intercept", "cox_slope", "share_top", "share_below", "auprc_errors", "prr",
    *(coverage_key(c) for c in COVERAGES),
)


def batch_metrics(
    s: CellStats, plan: Plan, *, smooth: bool = True, cox: dict[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Every scalar metric of :data:`BATCH_METRICS` for each rep of ``s`` (shape
    ``(reps,)``, NaN where undefined). With the table's own statistics
    (:meth:`CellStats.of`) these are the point estimates (:func:`point_metrics`).
    ``smooth=False`` skips the smooth ECE (NaN). ``cox``: the Cox fit of these reps
    from the plan's start (:func:`cox_fit`), when already computed."""
    acc = accuracy_batch(s)
    mc = mean_confidence_batch(s)
    bs = brier_batch(s)
    base = acc * (1 - acc)
    ids, nb = bin_ids_batch(s, plan.scheme, plan.fixed_bins, plan.bins)
    e, m, l2, deb = binned_errors_batch(s, ids, nb)
    rel, res, unc, _w = murphy_batch(s, ids, nb)
    mcb, dsc, cunc = corp_batch(s)
    cx = cox_fit(plan.cox_x, s.n, s.k, plan.cox_start, need_ll=False) if cox is None else cox
    top, below = shares_batch(s, plan.below_mask)
    return {
        "accuracy": acc, "mean_confidence": mc, "overconfidence": mc - acc, "brier": bs,
        "brier_base_rate": base, "brier_skill": 1 - safe_div(bs, base), "brier_diff": bs - base,
        "log_loss": log_loss_batch(s), "auroc": auroc_batch(s), "ece": e, "ece_debiased": deb, "mce": m,
        "ece_l2_debiased": l2,
        "smooth_ece": smooth_ece_batch(s, plan.smooth.sigma) if smooth else np.full(s.reps, np.nan),
        "murphy_reliability": rel, "murphy_resolution": res, "murphy_uncertainty": unc,
        "corp_mcb": mcb, "corp_dsc": dsc, "corp_unc": cunc,
        "cox_intercept": cx["a"], "cox_slope": np.where(cx["single"], np.nan, cx["b"]),
        "share_top": top, "share_below": below, "auprc_errors": auprc_errors_batch(s), "prr": prr_batch(s),
        **{coverage_key(c): a for c, (a, _) in zip(COVERAGES, accuracy_at_coverages_batch(s, COVERAGES), strict=True)},
    }


def point_metrics(
    table: CountTable, plan: Plan, cox: tuple[np.ndarray, dict[str, np.ndarray]] | None = None,
) -> dict[str, float | None]:
    """Point estimate of every metric of :data:`BATCH_METRICS`, from the table's own
    (exact) cells; the smooth ECE is the plan's (:func:`smooth_ece_detail`).

    ``cox``: the table's :func:`calib.metrics.cox.point_fit`, already computed for the Cox
    test. It is the fit this function would make, bit for bit, when it starts where the
    plan's does (:func:`shares_cox_fit`), and is then used instead of a second fit (on a
    million distinct values, 0.2-0.3 s)."""
    fit = cox[1] if cox is not None and shares_cox_fit(table, plan) else None
    stats = CellStats.of(table)
    out = {k: finite_or_none(v) for k, v in batch_metrics(stats, plan, smooth=False, cox=fit).items()}
    out["smooth_ece"] = plan.smooth.value
    return out


def shares_cox_fit(table: CountTable, plan: Plan) -> bool:
    """Whether the Cox fit of :func:`point_metrics` is the one of :func:`calib.metrics.cox.point_fit`:
    both start from the coarse table's fit (:func:`calib.metrics.cox.point_start`) when the
    table has a coarse version and that fit is finite. Otherwise they start elsewhere (the
    plan from the table's own fit or a cold start, the test from ``(0, 1)``) and may differ
    in their last bits."""
    t = single(table)
    return plan.cox_start is not None and t.coarse() is not t
