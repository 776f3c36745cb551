"""Point estimates of calibration, computed from a count table.

Every function here takes a :class:`~calib.table.CountTable` (a table with several
groups is pooled over them first) and returns plain numbers, ``None`` where the
quantity is undefined for the data (an empty table, one class only, one distinct
value), never NaN.

Exactness
---------
A table holds one cell per distinct stated value (:mod:`calib.table`), so every
point estimate here equals the row-level figure: binned errors in every scheme,
AUROC (ties are real ties), the CORP/isotonic fit, the Cox fit and the tests, for
continuous confidences too. The one exception is the smooth ECE, computed on the
coarse table (see :func:`smooth_ece_detail`). On a pooled table (``pooled=True``,
the coarse table the bootstrap resamples) the per-cell sums (``sum p``, ``sum
p*y``, ``sum p^2`` and the summed clipped log loss) keep n, accuracy, mean
confidence, the overconfidence gap, the Brier score and the log loss exact, and
quantities that need a position per cell use the cell's mean probability.

One implementation, two uses
----------------------------
Each metric is a vectorised kernel over :class:`CellStats`, arrays of shape
``(reps, cells)``. A point estimate is the kernel on the table itself (one "rep");
:mod:`calib.bootstrap` runs the same kernels on 2,000 multinomial resamples at
once. Two metrics need more than sums and have a separate batch path, documented
where they are defined: the CORP decomposition (isotonic fits) and the smooth ECE
(a fixed-point bandwidth per resample).

Tests and the ends of the scale
-------------------------------
The tests read every probability as stated, never corrected (:func:`test_prob`):
under the hypothesis "the stated probability is the truth" an answer stated at 100
(or 0) is an outcome known in advance, which adds nothing to a test's variance
(``p (1 - p) = 0``) and, when it agrees, nothing to its statistic. A wrong answer
stated at 100 (or a right one at 0) is impossible under that hypothesis: the tests
say so and reject with ``p = 0`` (:func:`impossible`). Variances come from the exact
cell sums, ``sum p (1 - p) = sum p - sum p^2`` (:func:`null_variance`), so they hold
on pooled tables too. The continuity correction of :func:`calib.scale.finite_prob`
is for fitting maps on logits only.

Each p-value is asymptotic (normal or chi-square) only where the summed counts are
close to normal (:func:`lyapunov` at most :data:`LYAPUNOV_MAX`); elsewhere it is a
Monte Carlo p-value under perfect calibration (:func:`null_groups`), exact in level,
and flagged as a bound when no draw reached the observed statistic. Asymptotic
p-values are computed from log tail probabilities and never underflow to 0 (see
:class:`Test`).

Modules
-------
:mod:`~calib.metrics.cells`
    The per-cell statistics every kernel reads, and the simple scores (accuracy, mean
    confidence, overconfidence, Brier score, log loss).
:mod:`~calib.metrics.binned`
    The binning schemes and the binned errors (ECE, MCE, debiased ECE and L2 error).
:mod:`~calib.metrics.decompositions`
    Murphy and CORP decompositions of the Brier score.
:mod:`~calib.metrics.ranking`
    AUROC and the Mann-Whitney test; the failure-prediction figures (AUPRC for errors,
    the prediction rejection ratio, accuracy at fixed coverage).
:mod:`~calib.metrics.pvalues`, :mod:`~calib.metrics.null`, :mod:`~calib.metrics.calibration_tests`
    How p-values are computed (the Brownian-motion references of the cumulative
    differences too), the null of perfect calibration the tests share, and the tests
    themselves (the cumulative-differences test among them).
:mod:`~calib.metrics.cox`
    The Cox calibration intercept and slope (on the logistic solver of :mod:`calib.logistic`).
:mod:`~calib.metrics.smooth`
    The smooth ECE.
:mod:`~calib.metrics.values`
    The use of the scale: per-value rows, shares below a threshold.
:mod:`~calib.metrics.batch`
    Every scalar metric per bootstrap rep, and as point estimates.

The metrics, the tests, their result types and the batch interface are re-exported here:
``from calib import metrics as m; m.ece(table)``.
"""

from calib.metrics.batch import (
    BATCH_METRICS,
    Plan,
    batch_metrics,
    point_metrics,
    shares_cox_fit,
)
from calib.metrics.binned import (
    VALUE_BIN_MEAN,
    BinRow,
    SchemeChoice,
    bin_ids_batch,
    bin_index,
    bin_table,
    binned_errors_batch,
    check_bins,
    choose_scheme,
    ece,
    ece_debiased,
    ece_l2_debiased,
    mass_bins,
    mce,
    resolve_scheme,
    width_bins,
)
from calib.metrics.calibration_tests import (
    CumulativeDifferences,
    brier_vs_constant,
    brier_winner,
    calibration_in_the_large,
    cumulative_differences,
    goodness_of_fit,
    mean_variance,
    spiegelhalter,
)
from calib.metrics.cells import (
    CellStats,
    accuracy,
    brier,
    brier_base_rate,
    brier_batch,
    brier_skill,
    log_loss,
    log_loss_batch,
    mean_confidence,
    overconfidence,
    single,
    test_prob,
)
from calib.metrics.cox import (
    COX_DRAWS,
    COX_MIN_EVENTS,
    Cox,
    cox,
    cox_x,
)
from calib.metrics.cox import point_fit as cox_point_fit
from calib.metrics.decompositions import (
    Corp,
    Murphy,
    corp,
    murphy,
)
from calib.metrics.null import (
    LYAPUNOV_MAX,
    NULL_BUDGET,
    NULL_CELLS,
    NULL_DRAWS,
    NULL_LOGIT_STEP,
    NULL_MIN_DRAWS,
    cluster_effect,
    clustered_note,
    impossible,
    lyapunov,
    null_deviations,
    null_draws_for,
    null_groups,
    null_variance,
)
from calib.metrics.pvalues import (
    P_FLOOR,
    Test,
    brownian_max_abs_critical,
    brownian_max_abs_logsf,
    brownian_range_logsf,
    chi2_logsf,
    chi2_test,
    z_test,
)
from calib.metrics.ranking import (
    COVERAGES,
    CoverageRow,
    accuracy_at_coverage,
    accuracy_at_coverage_batch,
    accuracy_at_coverages_batch,
    auprc_errors,
    auprc_errors_batch,
    aurc_batch,
    auroc,
    auroc_grid_bound,
    auroc_vs_chance,
    coverage_key,
    oracle_aurc,
    prr,
    prr_batch,
)
from calib.metrics.smooth import (
    SMECE_MIN_WIDTH,
    SmoothEce,
    smooth_ece,
    smooth_ece_batch,
    smooth_ece_detail,
)
from calib.metrics.values import (
    MIN_EXPECTED,
    ValueRow,
    default_below,
    distinct_values,
    most_common,
    per_value,
    share_below,
    value_arrays,
    wilson_interval,
)
from calib.settings import BINS, SCHEMES

__all__ = [
    "BINS",
    "SCHEMES",
    "chi2_logsf",
    "chi2_test",
    "P_FLOOR",
    "Test",
    "z_test",
    "accuracy",
    "brier",
    "brier_base_rate",
    "brier_batch",
    "brier_skill",
    "CellStats",
    "log_loss",
    "log_loss_batch",
    "mean_confidence",
    "overconfidence",
    "single",
    "test_prob",
    "cluster_effect",
    "clustered_note",
    "impossible",
    "lyapunov",
    "LYAPUNOV_MAX",
    "NULL_BUDGET",
    "NULL_CELLS",
    "null_deviations",
    "NULL_DRAWS",
    "null_draws_for",
    "null_groups",
    "NULL_LOGIT_STEP",
    "NULL_MIN_DRAWS",
    "null_variance",
    "default_below",
    "distinct_values",
    "MIN_EXPECTED",
    "most_common",
    "per_value",
    "share_below",
    "value_arrays",
    "ValueRow",
    "wilson_interval",
    "bin_ids_batch",
    "bin_index",
    "bin_table",
    "binned_errors_batch",
    "BinRow",
    "check_bins",
    "choose_scheme",
    "ece",
    "ece_debiased",
    "ece_l2_debiased",
    "mass_bins",
    "mce",
    "resolve_scheme",
    "SchemeChoice",
    "VALUE_BIN_MEAN",
    "width_bins",
    "brier_vs_constant",
    "brier_winner",
    "calibration_in_the_large",
    "goodness_of_fit",
    "mean_variance",
    "spiegelhalter",
    "CumulativeDifferences",
    "cumulative_differences",
    "brownian_max_abs_critical",
    "brownian_max_abs_logsf",
    "brownian_range_logsf",
    "Corp",
    "corp",
    "Murphy",
    "murphy",
    "auroc",
    "auroc_grid_bound",
    "auroc_vs_chance",
    "COVERAGES",
    "CoverageRow",
    "accuracy_at_coverage",
    "accuracy_at_coverage_batch",
    "accuracy_at_coverages_batch",
    "auprc_errors",
    "auprc_errors_batch",
    "aurc_batch",
    "coverage_key",
    "oracle_aurc",
    "prr",
    "prr_batch",
    "Cox",
    "cox",
    "COX_DRAWS",
    "COX_MIN_EVENTS",
    "cox_x",
    "cox_point_fit",
    "SMECE_MIN_WIDTH",
    "smooth_ece",
    "smooth_ece_batch",
    "smooth_ece_detail",
    "SmoothEce",
    "BATCH_METRICS",
    "batch_metrics",
    "Plan",
    "point_metrics",
    "shares_cox_fit",
]
