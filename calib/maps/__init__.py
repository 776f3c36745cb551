"""Recalibration maps: fit on one dataset, score honestly on another, serialise, apply.

A map turns a stated value ``s`` (on the stated scale ``[lo, hi]``) into a calibrated
probability ``q(s)``. Every map here is fitted on a :class:`~calib.table.CountTable`
(pooled over its groups), so fitting costs grow with the number of distinct stated
values, not rows. The one exception is temperature scaling of option log-probs
(Guo et al. 2017), which needs each item's K option scores.

Methods
-------
``platt``
    Logistic regression on the logit of the stated value (Platt 1999):
    ``q = sigmoid(a * logit(f(s)) + b)``.
``temperature``
    Slope only, no intercept: ``q = sigmoid(logit(f(s)) / T)``. On option log-probs
    (rows with :class:`~calib.rows.OptionScores`) it is the softmax temperature of
    Guo et al. (2017): ``q_i = max_k softmax(l_i / T)_k``, ``T`` minimising the
    negative log-likelihood of the gold options.
``beta``
    Beta calibration (Kull, Silva Filho & Flach 2017):
    ``q = sigmoid(a ln f(s) - b ln(1 - f(s)) + c)`` with ``a, b >= 0``.
``isotonic``
    The pool-adjacent-violators fit of the hit rate on the stated value, ties pooled
    (Zadrozny & Elkan 2002); linear between fitted values, flat beyond the ends.
``histogram``
    Histogram binning (Zadrozny & Elkan 2001): the hit rate of the fitting data in
    the bin the value falls in.

Finite logits for stated 0 and 100
----------------------------------
A stated 0 or 100 has an infinite logit. Every logit-based map reads a stated value
through the continuity correction :func:`calib.scale.finite_prob`,
``f(s) = (s - lo + c) / (hi - lo + 2c)`` with ``c = 1/2`` (the rule
``(s - lo + 1/2) / (hi - lo + 1)``), in units of one step of the scale; on a 0-1
scale a step is the resolution the fitting data's values are written in
(:func:`calib.scale.scale_steps`: hundredths for a judge stating 0.95, ``1e-12``
for continuous softmax probabilities, which the correction then leaves as they are
except at exactly 0 and 1), kept in the map as ``"steps"``. The
alternative, clipping ``p`` to ``[eps, 1 - eps]``, puts a stated 100 at
``logit(1 - eps)`` (13.8 for ``eps = 1e-6``), far from every other value, so the
answers stated at 100 alone decide the fitted slope and the slope changes with
``eps``; the continuity correction keeps 100 one step beyond 99 and the fit barely
moves when ``c`` changes (``tests/test_maps.py`` shows both).

Honest scoring
--------------
A map scored on the data it was fitted on looks better than it is. :func:`fit`
scores it ``insample``, on a second dataset (``file``), on an ``oddeven`` split
(fit on the 1st, 3rd, 5th... row in file order, score on the 2nd, 4th...), or by
``kfold`` cross-fitting (each row scored by a map fitted without its fold; rows that
share an item id share a fold). A count table without rows has no file order: it is
split within each cell at random (seeded) by a hypergeometric draw, i.e. exactly as
if its rows had been shuffled and cut (see :func:`split_counts`).

A map is *useless* when its slope is not positive (Platt, temperature, beta), when
the fitting data has one outcome or one stated value, or when it does not beat the
base-rate forecast (the fitting data's hit rate for every item) on the Brier score
of the evaluation data. :func:`fit` says so and returns the base-rate map.

JSON format (version 1)
-----------------------
::

    {"calib_map": 1, "method": "platt",
     "scale": {"lo": 0, "hi": 100, "name": "0-100"},
     "correction": 0.5,
     "params": {"slope": 0.62, "intercept": -0.71},
     "table": [{"stated": 80, "prob": 0.61}, {"stated": 90, "prob": 0.62}],
     "replaces": null, "n_fit": 500, "note": ""}

``params`` per method: ``platt`` {slope, intercept}; ``temperature`` and
``softmax_temperature`` {T}; ``beta`` {a, b, c}; ``isotonic`` {x, y} (knots, as
probabilities ``(s - lo) / (hi - lo)``); ``histogram`` {edges, prob} (bin edges as
probabilities, B + 1 of them, and the hit rate of each bin); ``base_rate`` {p}.
``table`` is for people reading the file; applying a map uses ``params`` only.

Fit result (``calib fit --json``)
---------------------------------
:meth:`FitResult.to_dict`::

    {"method": "platt", "scoring": "oddeven", "folds": null, "n_fit": 500, "n_eval": 500,
     "useless": false, "reason": "", "notes": ["fitted on the 1st, 3rd, 5th... rows ..."],
     "before":    {"brier": {"value": 0.25, "ci": [0.23, 0.27]}, "log_loss": {...}, "ece": {...}},
     "after":     {...}, "base_rate": {...}, "change": {...},
     "ece_scheme": "values", "ece_bins": 10, "reps": 2000, "seed": 0, "level": 0.95,
     "map": {map JSON as above}, "fitted": {map JSON},
     "table": [{"stated": 80, "n_fit": 120, "hit_rate_fit": 0.56, "n_eval": 118,
                "hit_rate_eval": 0.58, "prob": 0.61}, ...]}

``before``/``after``/``base_rate`` score the stated confidence, the returned map
and the base-rate forecast on the evaluation data; ``change`` is ``after - before``
with a paired interval. Undefined numbers are ``null``.

Modules
-------
:mod:`~calib.maps.calibration_map`
    The map type, applying it, and its JSON file.
:mod:`~calib.maps.fitters`
    One fitter per method (on the logistic solver of :mod:`calib.logistic`).
:mod:`~calib.maps.splits`
    Odd/even halves, folds by item, random splits of a count table.
:mod:`~calib.maps.scoring`
    Before/after/base-rate scores with paired bootstrap intervals.
:mod:`~calib.maps.fitting`
    :func:`fit`, the honest fit, and its :class:`FitResult`.
:mod:`~calib.maps.choice`
    :func:`best_method`: the map with the best held-out Brier score (the Recalibration
    page's advice before a choice).

The choices (:data:`METHODS`, :data:`MAP_METHODS`, :data:`SCORINGS`) are defined once in
:mod:`calib.settings`; they and every public name are re-exported here.
"""

from calib.maps.calibration_map import (
    FORMAT_VERSION,
    CalibrationMap,
    base_rate_map,
    cell_prob,
    histogram_bin,
    read_map,
    write_map,
)
from calib.maps.choice import HELD_OUT, best_method, held_out_scoring
from calib.maps.fitters import (
    HIST_BINS,
    T_MAX,
    T_MIN,
    fit_map,
    fit_softmax_temperature,
    softmax_nll,
)
from calib.maps.fitting import (
    FitResult,
    fit,
)
from calib.maps.scoring import (
    MAX_PAIR_CELLS,
    PAIR_GRID,
    Estimate,
    Scores,
)
from calib.maps.splits import (
    item_folds,
    row_order_halves,
    split_counts,
)
from calib.settings import MAP_METHODS, METHODS, SCORINGS

__all__ = [
    "HELD_OUT",
    "MAP_METHODS",
    "METHODS",
    "best_method",
    "held_out_scoring",
    "SCORINGS",
    "base_rate_map",
    "CalibrationMap",
    "cell_prob",
    "FORMAT_VERSION",
    "histogram_bin",
    "read_map",
    "write_map",
    "fit_map",
    "fit_softmax_temperature",
    "HIST_BINS",
    "softmax_nll",
    "T_MAX",
    "T_MIN",
    "item_folds",
    "row_order_halves",
    "split_counts",
    "Estimate",
    "MAX_PAIR_CELLS",
    "PAIR_GRID",
    "Scores",
    "fit",
    "FitResult",
]
