"""The audit's settings and every choice a user can make, defined once.

The CLI's argument parser, the dashboard's widgets, the view (URL) parser and the
engine's validation all read the tuples here, so a new choice is added in one place.
This module imports nothing heavy: building ``calib --help`` must not load the engine.
"""

from __future__ import annotations

#: Recalibration maps :func:`calib.maps.fit` can fit.
METHODS: tuple[str, ...] = ("platt", "isotonic", "temperature", "beta", "histogram")
#: Every method a map file may hold (the base rate stands in for a useless map).
MAP_METHODS: tuple[str, ...] = METHODS + ("softmax_temperature", "base_rate")
#: How a map is scored: on the data it was fitted on, fitted on odd lines and scored
#: on even ones, k-fold cross-fitting, or fitted on this file and scored on a second one.
SCORINGS: tuple[str, ...] = ("insample", "oddeven", "kfold", "file")
#: Binning schemes of the binned calibration errors.
SCHEMES: tuple[str, ...] = ("values", "width", "mass")
#: Schemes a user may ask for: automatic (per value when the values are few, else width).
SCHEME_CHOICES: tuple[str, ...] = ("auto", *SCHEMES)
#: Reliability-diagram choices of the dashboard: the schemes plus the CORP isotonic curve.
DIAGRAM_SCHEMES: tuple[str, ...] = (*SCHEME_CHOICES, "corp")
#: Histogram-binning map schemes.
HIST_SCHEMES: tuple[str, ...] = ("mass", "width")
#: Length normalisations an option reader accepts.
NORMALISATIONS: tuple[str, ...] = ("none", "char", "byte", "token")
#: lm-evaluation-harness scores.
VARIANTS: tuple[str, ...] = ("acc", "acc_norm")
#: Scales a user can name ("mixed": bare numbers up to 1 are probabilities, above 1 on the
#: detected scale; "custom": a range given by the user).
SCALE_CHOICES: tuple[str, ...] = ("auto", "0-1", "0-100", "1-10", "1-5", "mixed", "custom")
#: How the target-error threshold search judges a threshold.
ROUTE_BOUNDS: tuple[str, ...] = ("point", "wilson")
#: ``procedure`` of the threshold certificate's fixed-sequence test (the default).
FIXED_SEQUENCE = "fixed-sequence"
#: ``procedure`` of Wiens' fallback test (survives an error rate that does not fall with the score).
FALLBACK = "fallback"
#: The testing procedures of the threshold certificate (``calib route --procedure``).
PROCEDURES: tuple[str, ...] = (FIXED_SEQUENCE, FALLBACK)
#: What the review threshold is set on: the stated value or the recalibrated probability.
THRESHOLD_ON: tuple[str, ...] = ("stated", "calibrated")

#: Default number of bootstrap resamples.
REPS = 2000
#: Default number of bins of the "width" and "mass" schemes.
BINS = 10
#: Default confidence level of intervals.
LEVEL = 0.95
#: Confidence levels offered for intervals.
LEVELS: tuple[float, ...] = (0.8, 0.9, 0.95, 0.99)
#: Default review threshold, as a probability: where the review threshold of most judge
#: pipelines sits (80 on 0-100); and the default upper threshold of a middle band.
DEFAULT_LOWER_PROB = 0.8
DEFAULT_UPPER_PROB = 0.9
#: Default target error rate among the items accepted unseen (alpha) and default
#: confidence (1 - delta) of the recommended review threshold (issue 11).
DEFAULT_TARGET = 0.05
DEFAULT_CONFIDENCE = 0.95
#: Drift between runs (issue 12): how two runs are paired, how a list of runs is put in time
#: order, and the EWMA control chart's smoothing lambda and limit width L (calib.drift.series).
DRIFT_PAIRINGS: tuple[str, ...] = ("auto", "paired", "unpaired")
DRIFT_ORDERS: tuple[str, ...] = ("date", "mtime", "name", "given")
DRIFT_EWMA_LAMBDA = 0.2
DRIFT_EWMA_WIDTH = 3.0
#: Warehouses `calib sql` writes the aggregation query for (calib.readers.sql).
SQL_DIALECTS: tuple[str, ...] = ("duckdb", "spark", "bigquery", "snowflake")
#: DuckDB's memory limit when a glob of logs is reduced out of core (calib.readers.warehouse);
#: beyond it DuckDB spills to a temporary folder. CALIB_DUCKDB_MEMORY overrides it.
WAREHOUSE_MEMORY = "512MB"
#: Confidences read_scale sees at most when a glob is read (the distinct values, each
#: repeated in proportion to its count; every count is exact, only the bulk rule samples).
WAREHOUSE_SCALE_ROWS = 2_000_000
#: Most (cluster, cell) pairs, clusters without a value counted one per row, a glob read
#: with ``--cluster-key`` may bring back from DuckDB (checked by the query's LIMIT, before
#: they reach Python): the per-cluster counts of :mod:`calib.clusters` are held in memory.
WAREHOUSE_MAX_CLUSTER_PAIRS = 2_000_000

#: The tests the audit's verdict "miscalibrated" rests on (:func:`calib.audit.miscalibrated`).
CALIBRATION_TESTS: tuple[str, ...] = ("calibration_in_the_large", "goodness_of_fit", "cox_lr")
