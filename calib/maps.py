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
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit, logsumexp

from calib import metrics
from calib.bootstrap import REPS, percentile_interval, resample_counts
from calib.dataset import Dataset
from calib.errors import CalibError
from calib.isotonic import pav
from calib.options import top_probability
from calib.rows import Judgments, OptionScores
from calib.scale import CORRECTION, PROBABILITY, Scale, finite_from_prob, scale_steps
from calib.table import GRID, MAX_EXACT_CELLS, CountTable, from_counts, from_judgments, nll

#: Version written in (and required of) the ``calib_map`` key of a map's JSON.
FORMAT_VERSION = 1
#: Maps :func:`fit` can fit.
METHODS: tuple[str, ...] = ("platt", "isotonic", "temperature", "beta", "histogram")
#: Every method a map file may hold (the base rate stands in for a useless map).
MAP_METHODS: tuple[str, ...] = METHODS + ("softmax_temperature", "base_rate")
#: How a map is scored.
SCORINGS: tuple[str, ...] = ("insample", "oddeven", "kfold", "file")
#: Search range of the temperature ``T``; an optimum outside it is reported.
T_MIN, T_MAX = 0.01, 100.0
#: Default number of bins of histogram binning (Zadrozny & Elkan 2001 used 10).
HIST_BINS = 10


# ---------------------------------------------------------------- finite logits
def _table_finite(t: CountTable, c: float) -> np.ndarray:
    """:func:`calib.scale.finite_from_prob` of each cell's probability (:func:`cell_prob`),
    in the table's own steps (:func:`_steps`)."""
    return finite_from_prob(cell_prob(t), t.scale, c=c, steps=_steps(t))


def _steps(t: CountTable) -> float:
    """The ``m`` of the continuity correction for fitting data ``t``: the scale's
    steps, or on 0-1 the resolution of its values (:func:`calib.scale.scale_steps`)."""
    return scale_steps(t.scale, cell_prob(t))


def _logit(p: np.ndarray) -> np.ndarray:
    return np.log(p) - np.log1p(-p)


def cell_prob(table: CountTable) -> np.ndarray:
    """Each cell's probability: exactly ``scale.to_prob(value)`` for an unpooled
    table, the cell mean for pooled continuous cells.

    (``table.prob`` is a mean of the rows' probabilities and can differ from the
    stated value's probability in the last bit, ``0.9500000000000001``; a map must
    give every row of a stated value the same probability.)
    """
    if table.pooled:
        return np.asarray(table.prob, dtype=np.float64)
    return np.asarray(table.scale.to_prob(table.value), dtype=np.float64)


# ------------------------------------------------------------------- the map
@dataclass(frozen=True, eq=False)
class CalibrationMap:
    """A fitted map from stated value to calibrated probability.

    Attributes
    ----------
    method:
        One of :data:`MAP_METHODS`.
    scale:
        The stated scale the map reads.
    params:
        The parameters (see the module docstring for each method's keys).
    correction:
        The continuity correction constant ``c`` used by logit-based maps.
    values:
        The stated values seen when fitting (and scoring): the rows of :meth:`table`.
    replaces:
        For a ``base_rate`` map standing in for a useless fit: the method fitted.
    n_fit:
        Rows the map was fitted on.
    note:
        What the reader of the map must know (a bound hit, non-convergence...).
    steps:
        The ``m`` of the continuity correction (:func:`calib.scale.scale_steps` of the
        fitting data); ``None``: that of the scale alone (hundredths on 0-1).
    """

    method: str
    scale: Scale
    params: Mapping[str, Any]
    correction: float = CORRECTION
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    replaces: str | None = None
    n_fit: int = 0
    note: str = ""
    steps: float | None = None

    # ---------------------------------------------------------------- apply
    def apply_prob(self, p: np.ndarray | float) -> np.ndarray:
        """Calibrated probability for probabilities ``p = (s - lo) / (hi - lo)`` (same shape;
        a scalar gives a 0-d array)."""
        p = np.asarray(p, dtype=np.float64)
        return self._apply_flat(p.reshape(-1)).reshape(p.shape)

    def _apply_flat(self, p: np.ndarray) -> np.ndarray:
        m, prm = self.method, self.params
        if m == "base_rate":
            return np.full(p.shape, float(prm["p"]))
        if m == "isotonic":
            return _interp_exact(p, np.asarray(prm["x"], dtype=np.float64), np.asarray(prm["y"], dtype=np.float64))
        if m == "histogram":
            edges = np.asarray(prm["edges"], dtype=np.float64)
            probs = np.asarray(prm["prob"], dtype=np.float64)
            return probs[histogram_bin(p, edges)]
        if m == "softmax_temperature":
            raise CalibError(
                "this map is a softmax temperature over option log-probs: it applies to files "
                "with per-option scores, not to stated values"
            )
        f = finite_from_prob(p, self.scale, c=self.correction, steps=self.steps)
        if m == "platt":
            return expit(float(prm["slope"]) * _logit(f) + float(prm["intercept"]))
        if m == "temperature":
            return expit(_logit(f) / float(prm["T"]))
        if m == "beta":
            return expit(float(prm["a"]) * np.log(f) - float(prm["b"]) * np.log1p(-f) + float(prm["c"]))
        raise CalibError(f"unknown map method {m!r}")  # pragma: no cover - validated on creation

    def apply(self, stated: np.ndarray | float) -> np.ndarray:
        """Calibrated probability for stated values on :attr:`scale`."""
        return self.apply_prob(self.scale.to_prob(stated))

    def check_scale(self, scale: Scale, what: str = "the data") -> None:
        """Raise :class:`CalibError` unless ``scale`` has this map's ends."""
        if (scale.lo, scale.hi) != (self.scale.lo, self.scale.hi):
            raise CalibError(
                f"the map was fitted on the {self.scale.name} scale [{self.scale.lo:g}, {self.scale.hi:g}] "
                f"but {what} is on [{scale.lo:g}, {scale.hi:g}]; read it with --rescale "
                f"{self.scale.lo:g},{self.scale.hi:g}"
            )

    def apply_table(self, table: CountTable) -> CountTable:
        """The table with each cell's probability replaced by the calibrated one.

        Returns a table on the probability scale whose cells are the distinct
        calibrated probabilities (per group): cells the map sends to the same
        probability are merged. Pooled (continuous) cells are mapped at their mean.
        """
        if self.method == "softmax_temperature":
            self.apply_prob(0.5)  # raises the explanation
        self.check_scale(table.scale)
        q = np.clip(self.apply_prob(cell_prob(table)), 0.0, 1.0)
        group = None if len(table.groups) == 1 else np.asarray(table.groups, dtype=object)[table.group]
        return from_counts(q, table.n, table.correct, scale=_recalibrated_scale(self.method), group=group)

    def apply_rows(self, rows: Judgments) -> Judgments:
        """Rows with ``stated = prob =`` the calibrated probability (0-1 scale).

        Line numbers, ids, groups and texts are kept. A softmax temperature map
        rescales each row's option scores (``l / T``) and takes the top probability.
        """
        if self.method == "softmax_temperature":
            if rows.options is None:
                self.apply_prob(0.5)
            t = float(self.params["T"])
            opt = rows.options
            new = OptionScores(opt.logits / t, opt.gold, opt.letters, opt.normalisation)
            q = top_probability(new.logits) if len(rows) else np.zeros(0)
        else:
            self.check_scale(rows.scale)
            q, new = self.apply_prob(rows.prob), rows.options
        return replace(rows, stated=q, prob=q.copy(), scale=_recalibrated_scale(self.method), options=new)

    # ------------------------------------------------------------ serialise
    def table(self) -> list[dict[str, float]]:
        """``[{"stated": s, "prob": q(s)}, ...]`` for every stated value in :attr:`values`."""
        if self.method == "softmax_temperature" or self.values.size == 0:
            return []
        v = np.unique(np.asarray(self.values, dtype=np.float64))
        q = self.apply(v)
        return [{"stated": _num(a), "prob": float(b)} for a, b in zip(v, q, strict=True)]

    def to_dict(self) -> dict[str, Any]:
        """The map as the versioned JSON object described in the module docstring."""
        return {
            "calib_map": FORMAT_VERSION,
            "method": self.method,
            "scale": {"lo": _num(self.scale.lo), "hi": _num(self.scale.hi), "name": self.scale.name},
            "correction": self.correction,
            **({} if self.steps is None else {"steps": _num(self.steps)}),
            "params": {k: _jsonable(v) for k, v in self.params.items()},
            "table": self.table(),
            "replaces": self.replaces,
            "n_fit": int(self.n_fit),
            "note": self.note,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=False)

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "map") -> CalibrationMap:
        """Read and validate a map object; problems raise :class:`CalibError` naming ``source``."""
        return _map_from_dict(d, source)


def _interp_exact(p: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``np.interp``, but exactly ``y[i]`` at a knot ``x[i]`` (``np.interp`` may land a
    knot at the right end of the interval before it and round: the cells of one PAV
    block must keep one probability)."""
    out = np.interp(p, x, y)
    i = np.clip(np.searchsorted(x, p), 0, x.size - 1)
    hit = x[i] == p
    out[hit] = y[i[hit]]
    return out


def _recalibrated_scale(method: str) -> Scale:
    return Scale(0.0, 1.0, "0-1", f"probabilities recalibrated by a {method} map")


def _num(x: float) -> float | int:
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return [float(a) for a in v]
    if isinstance(v, (list, tuple)):
        return [float(a) for a in v]
    if isinstance(v, (np.floating, np.integer)):
        return float(v)
    return v


_PARAM_KEYS: dict[str, tuple[str, ...]] = {
    "platt": ("slope", "intercept"),
    "temperature": ("T",),
    "softmax_temperature": ("T",),
    "beta": ("a", "b", "c"),
    "isotonic": ("x", "y"),
    "histogram": ("edges", "prob"),
    "base_rate": ("p",),
}


def _map_from_dict(d: Any, source: str) -> CalibrationMap:
    def bad(reason: str) -> CalibError:
        return CalibError(f"{source}: not a calib map: {reason}")

    if not isinstance(d, dict):
        raise bad("the file must hold one JSON object")
    version = d.get("calib_map")
    if version is None:
        raise bad('the "calib_map" version key is missing')
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise bad(f"version {version!r} is not supported (this program reads version {FORMAT_VERSION})")
    method = d.get("method")
    if method not in _PARAM_KEYS:
        raise bad(f"method {method!r} is not one of {', '.join(_PARAM_KEYS)}")
    sc = d.get("scale")
    if not isinstance(sc, dict):
        raise bad('"scale" must be an object with lo and hi')
    lo, hi = _finite_number(sc.get("lo"), "scale.lo", bad), _finite_number(sc.get("hi"), "scale.hi", bad)
    if hi <= lo:
        raise bad(f"scale [{lo:g}, {hi:g}] needs lo < hi")
    scale = Scale(lo, hi, str(sc.get("name") or f"{lo:g}-{hi:g}"), "from the map file")
    corr = _finite_number(d.get("correction", CORRECTION), "correction", bad)
    if corr <= 0:
        raise bad("correction must be positive")
    steps = None if d.get("steps") is None else _finite_number(d.get("steps"), "steps", bad)
    if steps is not None and steps < 1:
        raise bad("steps must be at least 1")
    prm = d.get("params")
    if not isinstance(prm, dict):
        raise bad('"params" must be an object')
    params: dict[str, Any] = {}
    for key in _PARAM_KEYS[method]:
        if key not in prm:
            raise bad(f"params.{key} is missing for method {method}")
        v = prm[key]
        if isinstance(v, list):
            arr = np.array([_finite_number(a, f"params.{key}", bad) for a in v], dtype=np.float64)
            params[key] = arr
        else:
            params[key] = _finite_number(v, f"params.{key}", bad)
    _check_params(method, params, bad)
    table = d.get("table") or []
    values = []
    if isinstance(table, list):
        for row in table:
            if isinstance(row, dict) and "stated" in row:
                values.append(_finite_number(row["stated"], "table.stated", bad))
    replaces = d.get("replaces")
    return CalibrationMap(
        method=method, scale=scale, params=params, correction=corr,
        values=np.asarray(values, dtype=np.float64),
        replaces=str(replaces) if replaces is not None else None,
        n_fit=int(d.get("n_fit") or 0) if isinstance(d.get("n_fit", 0), int) else 0,
        note=str(d.get("note") or ""), steps=steps,
    )


def _finite_number(v: Any, name: str, bad: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        raise bad(f"{name} must be a finite number, got {v!r}")
    return float(v)


def _check_params(method: str, p: dict[str, Any], bad: Any) -> None:
    def arr(key: str) -> np.ndarray:
        a = p[key]
        if not isinstance(a, np.ndarray) or a.size == 0:
            raise bad(f"params.{key} must be a non-empty list of numbers")
        return a

    if method in ("temperature", "softmax_temperature") and not p["T"] > 0:
        raise bad("params.T must be positive")
    if method == "base_rate" and not 0 <= p["p"] <= 1:
        raise bad("params.p must be a probability in [0, 1]")
    if method == "isotonic":
        x, y = arr("x"), arr("y")
        if x.size != y.size:
            raise bad("params.x and params.y must have the same length")
        if np.any(np.diff(x) <= 0):
            raise bad("params.x must be strictly increasing")
        if np.any(np.diff(y) < 0) or y.min() < 0 or y.max() > 1:
            raise bad("params.y must be non-decreasing probabilities")
    if method == "histogram":
        e, q = arr("edges"), arr("prob")
        if e.size != q.size + 1:
            raise bad("params.edges must have one more entry than params.prob")
        if np.any(np.diff(e) <= 0) or e[0] != 0 or e[-1] != 1:
            raise bad("params.edges must increase from 0 to 1")
        if q.min() < 0 or q.max() > 1:
            raise bad("params.prob must be probabilities")


def read_map(path: str | Path | None = None, *, text: str | bytes | None = None) -> CalibrationMap:
    """Read a map file (or its text) written by :meth:`CalibrationMap.to_json`."""
    source = str(path) if path is not None else "map"
    try:
        raw = text if text is not None else Path(source).read_bytes()
    except OSError as exc:
        raise CalibError(f"{source}: cannot read the map file: {exc.strerror or exc}") from None
    try:
        d = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: nested too deeply
        raise CalibError(f"{source}: not a calib map: invalid JSON ({exc})") from None
    return _map_from_dict(d, source)


def write_map(cmap: CalibrationMap, path: str | Path) -> None:
    """Write a map as JSON (the format :func:`read_map` reads)."""
    Path(path).write_text(cmap.to_json() + "\n", encoding="utf-8")


def base_rate_map(
    table: CountTable, *, replaces: str | None = None, note: str = "", correction: float = CORRECTION
) -> CalibrationMap:
    """The constant map ``q(s) = k / n``: the hit rate of ``table`` for every value."""
    n, k = table.total, table.total_correct
    rate = k / n if n else 0.5
    return CalibrationMap(
        method="base_rate", scale=table.scale, params={"p": rate}, correction=correction,
        values=np.unique(table.value), replaces=replaces, n_fit=n, note=note,
    )


# ------------------------------------------------------------------- fitters
@dataclass(frozen=True)
class _Fit:
    """A fitted map, and why it is useless when it is (``reason``)."""

    cmap: CalibrationMap
    reason: str = ""


def logistic_fit(
    x: np.ndarray, n: np.ndarray, k: np.ndarray, *, intercept: bool = True, max_iter: int = 100
) -> tuple[np.ndarray, bool]:
    """Maximum-likelihood logistic regression on cells (binomial counts).

    Maximises ``sum_c k_c eta_c - n_c log(1 + e^eta_c)`` with ``eta = X beta``
    by Newton's method with step halving; the loss is convex so this finds the
    global optimum when one exists. Rows of ``x`` are cells; ``n`` rows per cell of
    which ``k`` were right.

    Returns
    -------
    beta, converged:
        Coefficients (intercept last when ``intercept``); ``converged`` is False when
        the maximum is at infinity (the outcomes are separated by ``x``) or Newton
        did not settle in ``max_iter`` steps.
    """
    X = np.asarray(x, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    n = np.asarray(n, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if intercept:
        X = np.column_stack([X, np.ones(X.shape[0])])
    beta = np.zeros(X.shape[1])
    tot = n.sum()
    if intercept and tot > 0 and 0 < k.sum() < tot:
        beta[-1] = math.log(k.sum() / (tot - k.sum()))

    def loss(b: np.ndarray) -> float:
        eta = X @ b
        return float(np.sum(n * np.logaddexp(0.0, eta) - k * eta))

    cur = loss(beta)
    scale = max(tot, 1.0)
    for _ in range(max_iter):
        eta = X @ beta
        mu = expit(eta)
        g = X.T @ (n * mu - k)
        if np.max(np.abs(g)) < 1e-11 * scale:
            return beta, True
        h = (X * (n * mu * (1 - mu))[:, None]).T @ X
        try:
            step = np.linalg.solve(h, g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(h, g, rcond=None)[0]
        t = 1.0
        while True:
            new = beta - t * step
            val = loss(new)
            if val <= cur + 1e-12 * abs(cur) or t < 1e-12:
                break
            t /= 2
        if abs(cur - val) <= 1e-14 * max(abs(cur), 1.0) and np.max(np.abs(new - beta)) < 1e-10 * (1 + np.max(np.abs(beta))):
            return new, bool(np.max(np.abs(X @ new)) < 30)
        beta, cur = new, val
    return beta, False


def _cells(table: CountTable) -> CountTable:
    t = table.pooled_over_groups()
    keep = t.n > 0
    if keep.all():
        return t
    return replace(
        t, value=t.value[keep], prob=t.prob[keep], n=t.n[keep], correct=t.correct[keep],
        py_sum=t.py_sum[keep], sq_sum=t.sq_sum[keep], nll_sum=t.nll_sum[keep], group=t.group[keep],
    )


def _degenerate(t: CountTable, method: str, correction: float) -> _Fit | None:
    """The base-rate map when the fitting data cannot support a map."""
    n, k = t.total, t.total_correct
    if n == 0:
        raise CalibError("no rows to fit a recalibration map on")
    reason = ""
    if k in (0, n):
        reason = f"every answer in the fitting data is {'right' if k == n else 'wrong'}: there is nothing to map"
    elif t.cells == 1:
        reason = f"the fitting data uses one stated value ({t.value[0]:g}): there is nothing to map"
    if not reason:
        return None
    return _Fit(base_rate_map(t, replaces=method, note=reason, correction=correction), reason)


def _fit_platt(t: CountTable, c: float) -> _Fit:
    z = _logit(_table_finite(t, c))
    beta, ok = logistic_fit(z, t.n, t.correct)
    cmap = CalibrationMap(
        "platt", t.scale, {"slope": float(beta[0]), "intercept": float(beta[1])}, c, t.value, n_fit=t.total,
        note="" if ok else _NOT_CONVERGED, steps=_steps(t),
    )
    if beta[0] <= 0:
        return _Fit(cmap, _slope_reason("Platt slope", beta[0]))
    return _Fit(cmap)


_NOT_CONVERGED = (
    "the logistic fit did not converge: the stated values separate right from wrong answers "
    "in the fitting data, so the likelihood has no finite maximum; the parameters are where "
    "Newton's method stopped (try isotonic)"
)


def _slope_reason(what: str, slope: float) -> str:
    return (
        f"the {what} is {slope:.3g} (not positive): a higher stated value does not mean a higher "
        "chance of being right, so the map falls back to the base rate"
    )


def _temperature_slope(grad: Any, lo_a: float, hi_a: float) -> tuple[float, str]:
    """Root of a monotone increasing gradient ``grad(a)`` in the slope ``a = 1/T``.

    Returns ``(a, status)``: status ``"ok"``, ``"nonpositive"`` (optimum at ``a <= 0``),
    ``"upper"`` (``T`` would exceed :data:`T_MAX`) or ``"lower"`` (below :data:`T_MIN`).
    """
    if grad(0.0) >= 0:
        return 0.0, "nonpositive"
    if grad(lo_a) > 0:
        return lo_a, "upper"
    if grad(hi_a) < 0:
        return hi_a, "lower"
    return float(brentq(grad, lo_a, hi_a, xtol=1e-14, rtol=1e-12, maxiter=200)), "ok"


def _bound_note(status: str, t_value: float) -> str:
    if status == "upper":
        return (
            f"the temperature search stopped at its upper bound T = {T_MAX:g} (the likelihood still "
            "improves beyond it: the stated value carries almost no information); T is reported at the bound"
        )
    if status == "lower":
        return (
            f"the temperature search stopped at its lower bound T = {T_MIN:g} (the likelihood still "
            "improves below it: the stated values separate right from wrong); T is reported at the bound"
        )
    return ""


def _fit_temperature(t: CountTable, c: float) -> _Fit:
    z = _logit(_table_finite(t, c))
    n, k = t.n.astype(np.float64), t.correct.astype(np.float64)

    def grad(a: float) -> float:
        # d/da of sum n log(1+e^{az}) - k a z, increasing in a (the loss is convex)
        return float(np.sum(z * (n * expit(a * z) - k)))

    a, status = _temperature_slope(grad, 1 / T_MAX, 1 / T_MIN)
    if status == "nonpositive":
        cmap = CalibrationMap("temperature", t.scale, {"T": T_MAX}, c, t.value, n_fit=t.total, steps=_steps(t))
        return _Fit(cmap, _slope_reason("best slope 1/T", _nonpositive_slope(grad)))
    temp = 1.0 / a
    cmap = CalibrationMap("temperature", t.scale, {"T": temp}, c, t.value, n_fit=t.total,
                          note=_bound_note(status, temp), steps=_steps(t))
    return _Fit(cmap)


def _nonpositive_slope(grad: Any) -> float:
    """The (non-positive) optimal slope, for the message; 0 when the gradient is flat."""
    if grad(0.0) == 0:
        return 0.0
    lo = -1.0
    while grad(lo) > 0 and lo > -1e6:
        lo *= 4
    return float(brentq(grad, lo, 0.0)) if grad(lo) <= 0 else lo


def _fit_beta(t: CountTable, c: float) -> _Fit:
    """Beta calibration with the constraint handling of Kull et al.'s ``betacal``:
    fit ``[ln f, -ln(1-f)]`` freely; if ``a < 0`` refit on ``-ln(1-f)`` alone (a = 0);
    else if ``b < 0`` refit on ``ln f`` alone (b = 0)."""
    f = _table_finite(t, c)
    x = np.column_stack([np.log(f), -np.log1p(-f)])
    beta, ok = logistic_fit(x, t.n, t.correct)
    a, b, icpt = float(beta[0]), float(beta[1]), float(beta[2])
    notes = []
    if a < 0:
        beta, ok = logistic_fit(x[:, 1], t.n, t.correct)
        a, b, icpt = 0.0, float(beta[0]), float(beta[1])
        notes.append("a < 0 in the free fit: refitted with a = 0")
    elif b < 0:
        beta, ok = logistic_fit(x[:, 0], t.n, t.correct)
        a, b, icpt = float(beta[0]), 0.0, float(beta[1])
        notes.append("b < 0 in the free fit: refitted with b = 0")
    if not ok:
        notes.append(_NOT_CONVERGED)
    cmap = CalibrationMap("beta", t.scale, {"a": a, "b": b, "c": icpt}, c, t.value, n_fit=t.total,
                          note="; ".join(notes), steps=_steps(t))
    if a <= 0 and b <= 0:
        return _Fit(cmap, _slope_reason("beta map's slope (a and b)", max(a, b)))
    return _Fit(cmap)


def _fit_isotonic(t: CountTable, c: float) -> _Fit:
    # table cells are distinct values, so ties are pooled before PAV
    x = cell_prob(t)
    order = np.argsort(x, kind="stable")
    x = x[order]
    y = pav(t.correct[order] / t.n[order], t.n[order].astype(np.float64))
    cmap = CalibrationMap("isotonic", t.scale, {"x": x, "y": y}, c, t.value, n_fit=t.total)
    return _Fit(cmap)


def histogram_bin(p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin index of probabilities ``p`` for bin edges ``e_0 = 0 < ... < e_B = 1``.

    Bin ``j`` is ``(e_j, e_{j+1}]``, the first bin also holds ``0``.
    """
    idx = np.searchsorted(edges, np.asarray(p, dtype=np.float64), side="left") - 1
    return np.clip(idx, 0, edges.size - 2)


def _fit_histogram(t: CountTable, c: float, bins: int, scheme: str) -> _Fit:
    """Histogram binning (Zadrozny & Elkan 2001) on the bins of :func:`calib.metrics.bin_index`.

    ``mass`` bins (the original's equal-frequency bins; ties never split) get edges
    halfway between the largest probability of one bin and the smallest of the
    next, so a new value falls in the bin of the nearest fitted values; ``width``
    bins keep their edges ``j / B`` (right-closed, as in :func:`histogram_bin`). A
    bin without fitting rows maps to the overall hit rate (said in the note).
    """
    if scheme not in ("width", "mass"):
        raise CalibError(f"histogram binning uses 'width' or 'mass' bins, not {scheme!r}")
    idx = metrics.bin_index(t, scheme, bins)
    if scheme == "width":
        edges = np.arange(bins + 1, dtype=np.float64) / bins
    else:
        used = np.unique(idx)
        p = cell_prob(t)
        inner = [(p[idx == a].max() + p[idx == b].min()) / 2 for a, b in zip(used[:-1], used[1:], strict=True)]
        edges = np.array([0.0, *inner, 1.0])
        idx = np.searchsorted(used, idx)
    nb = edges.size - 1
    n_b = np.bincount(idx, weights=t.n, minlength=nb)
    k_b = np.bincount(idx, weights=t.correct, minlength=nb)
    rate = t.total_correct / t.total
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = np.where(n_b > 0, k_b / np.maximum(n_b, 1), rate)
    note = ""
    if (n_b == 0).any():
        note = f"{int((n_b == 0).sum())} bin(s) without fitting data map to the overall hit rate {rate:.3f}"
    cmap = CalibrationMap("histogram", t.scale, {"edges": edges, "prob": probs}, c, t.value,
                          n_fit=t.total, note=note)
    return _Fit(cmap)


def _fit_table(table: CountTable, method: str, *, correction: float, bins: int, scheme: str) -> _Fit:
    if method not in METHODS:
        raise CalibError(f"unknown recalibration method {method!r}: choose one of {', '.join(METHODS)}")
    t = _cells(table)
    degenerate = _degenerate(t, method, correction)
    if degenerate is not None:
        return degenerate
    if method == "platt":
        return _fit_platt(t, correction)
    if method == "temperature":
        return _fit_temperature(t, correction)
    if method == "beta":
        return _fit_beta(t, correction)
    if method == "isotonic":
        return _fit_isotonic(t, correction)
    return _fit_histogram(t, correction, bins, scheme)


def fit_map(
    table: CountTable, method: str, *, correction: float = CORRECTION, bins: int = HIST_BINS,
    scheme: str = "mass",
) -> CalibrationMap:
    """Fit one map on a count table (pooled over its groups), as fitted.

    No usefulness check beyond the fit itself: use :func:`fit` for a scored result
    that falls back to the base rate. ``bins`` and ``scheme`` concern ``histogram``.
    """
    return _fit_table(table, method, correction=correction, bins=bins, scheme=scheme).cmap


def fit_softmax_temperature(options: OptionScores) -> CalibrationMap:
    """Temperature scaling of option scores (Guo et al. 2017).

    Minimises the negative log-likelihood of the gold options
    ``sum_i logsumexp_k(l_ik / T) - l_i,gold / T`` over ``T`` in
    ``[T_MIN, T_MAX]``. The loss is convex in ``a = 1/T`` (a log-sum-exp of linear
    functions), so the optimum is the root of its derivative
    ``sum_i E_{softmax(a l_i)}[l_i] - l_i,gold``, found by Brent's method. An
    optimum at ``a <= 0`` (the scores point away from the gold options on average)
    or beyond a bound is reported in the map's note, never capped silently.
    """
    return _fit_softmax(options).cmap


def _fit_softmax(options: OptionScores) -> _Fit:
    logits = np.asarray(options.logits, dtype=np.float64)
    gold = np.asarray(options.gold, dtype=np.int64)
    if logits.ndim != 2 or logits.shape[0] == 0:
        raise CalibError("temperature scaling on option scores needs at least one item")
    valid = np.isfinite(logits)
    lg = np.where(valid, logits, 0.0)
    l_gold = lg[np.arange(lg.shape[0]), gold]

    def grad(a: float) -> float:
        z = np.where(valid, a * lg, -np.inf)
        w = np.exp(z - logsumexp(z, axis=1, keepdims=True))
        return float(np.sum(np.sum(w * lg, axis=1) - l_gold))

    a, status = _temperature_slope(grad, 1 / T_MAX, 1 / T_MIN)
    n = int(logits.shape[0])
    if status == "nonpositive":
        reason = _slope_reason("best slope 1/T", _nonpositive_slope(grad))
        cmap = CalibrationMap("softmax_temperature", PROBABILITY, {"T": T_MAX}, CORRECTION, n_fit=n, note=reason)
        return _Fit(cmap, reason)
    temp = 1.0 / a
    return _Fit(CalibrationMap("softmax_temperature", PROBABILITY, {"T": temp}, CORRECTION, n_fit=n,
                               note=_bound_note(status, temp)))


def softmax_nll(options: OptionScores, temperature: float = 1.0) -> float:
    """Mean negative log-likelihood of the gold options at temperature ``T``."""
    lg = np.asarray(options.logits, dtype=np.float64) / temperature
    gold = np.asarray(options.gold, dtype=np.int64)
    return float(np.mean(logsumexp(lg, axis=1) - lg[np.arange(lg.shape[0]), gold]))


# -------------------------------------------------------------------- splits
def split_counts(table: CountTable, parts: int, *, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split each cell's rows at random into ``parts`` near-equal parts.

    Cell sizes go to parts as evenly as possible (``n // parts`` each, the remainder
    to parts chosen at random); the right answers follow a multivariate
    hypergeometric draw (successive hypergeometric draws), which is exactly what
    shuffling the cell's rows and cutting them would give.

    Returns
    -------
    list of ``(n, correct)`` arrays, one pair per part, aligned with the table's cells.
    """
    if parts < 2:
        raise CalibError(f"a split needs at least 2 parts, got {parts}")
    rng = np.random.default_rng(seed)
    n = table.n.astype(np.int64)
    good = table.correct.astype(np.int64)
    bad = n - good
    base, rem = n // parts, n % parts
    rank = np.argsort(rng.random((n.size, parts)), axis=1).argsort(axis=1)
    sizes = base[:, None] + (rank < rem[:, None])
    out = []
    for j in range(parts):
        m = sizes[:, j]
        if j == parts - 1:
            k = good.copy()
        else:
            k = np.zeros_like(m)
            pos = m > 0
            k[pos] = rng.hypergeometric(good[pos], bad[pos], m[pos])
        out.append((m, k))
        good -= k
        bad -= m - k
    return out


def row_order_halves(rows: Judgments) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the 1st, 3rd, 5th... rows and the 2nd, 4th... rows in file order."""
    order = np.argsort(np.asarray(rows.line), kind="stable")
    pos = np.empty(len(rows), dtype=np.int64)
    pos[order] = np.arange(len(rows))
    return pos % 2 == 0, pos % 2 == 1


def item_folds(rows: Judgments, folds: int, *, seed: int = 0) -> np.ndarray:
    """Fold index per row; rows sharing a (non-empty) item id share a fold.

    Distinct items are shuffled (seeded) and dealt round-robin to the folds, so the
    folds differ in size by at most one item. Rows without an id are items of their own.
    """
    if folds < 2:
        raise CalibError(f"k-fold cross-fitting needs at least 2 folds, got {folds}")
    ids = np.asarray(rows.item_id, dtype=str)
    key = np.where(ids == "", np.char.add("\x00row", np.arange(len(rows)).astype(str)), ids)
    uniq, inv = np.unique(key, return_inverse=True)
    if uniq.size < folds:
        raise CalibError(f"k-fold cross-fitting with {folds} folds needs at least {folds} items, found {uniq.size}")
    rng = np.random.default_rng(seed)
    fold_of_item = np.empty(uniq.size, dtype=np.int64)
    fold_of_item[rng.permutation(uniq.size)] = np.arange(uniq.size) % folds
    return fold_of_item[inv]


# ------------------------------------------------------------------- scoring
@dataclass(frozen=True)
class Estimate:
    """A point estimate with its percentile bootstrap interval."""

    value: float
    lo: float
    hi: float

    def to_dict(self) -> dict[str, Any]:
        return {"value": _f(self.value), "ci": [_f(self.lo), _f(self.hi)]}


def _f(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


@dataclass(frozen=True)
class Scores:
    """Brier score, log loss and ECE of one forecast on the evaluation data."""

    brier: Estimate
    log_loss: Estimate
    ece: Estimate

    def to_dict(self) -> dict[str, Any]:
        return {"brier": self.brier.to_dict(), "log_loss": self.log_loss.to_dict(), "ece": self.ece.to_dict()}


@dataclass(frozen=True, eq=False)
class FitResult:
    """A recalibration map with honest before/after figures.

    Attributes
    ----------
    method:
        The method asked for (:data:`METHODS`).
    scoring:
        ``insample``, ``oddeven``, ``kfold`` or ``file``.
    map:
        The map to apply: the fitted map, or the base-rate map when it is useless.
        Fitted on all the fitting data, except with ``oddeven`` scoring, where it is
        the map fitted on the odd rows (the one the figures score).
    fitted:
        The map as fitted (equal to :attr:`map` unless useless).
    useless, reason:
        Whether the fitted map was replaced by the base rate, and why.
    notes:
        Everything else the reader must know (bounds hit, how the data was split).
    n_fit, n_eval:
        Rows the map was fitted on and rows it was scored on (for ``kfold``, every
        row is scored once by a map fitted without it).
    folds:
        Folds of ``kfold`` (else ``None``).
    before, after, base_rate:
        Scores on the evaluation data of the stated confidence, of :attr:`map`
        (cross-fitted for ``kfold``) and of the base-rate forecast (the fitting
        data's hit rate).
    change:
        ``after - before`` with a paired bootstrap interval (same resamples).
    table:
        One row per stated value used (fitting or evaluation data): ``stated``,
        ``n_fit``, ``hit_rate_fit``, ``n_eval``, ``hit_rate_eval``, ``prob`` (what
        :attr:`map` sends it to). Empty for the softmax temperature, whose output
        depends on all K option scores.
    ece_scheme, ece_bins, reps, seed, level:
        How ECE was binned and how the intervals were drawn.
    """

    method: str
    scoring: str
    map: CalibrationMap
    fitted: CalibrationMap
    useless: bool
    reason: str
    notes: tuple[str, ...]
    n_fit: int
    n_eval: int
    folds: int | None
    before: Scores
    after: Scores
    base_rate: Scores
    change: Scores
    table: tuple[dict[str, float], ...]
    ece_scheme: str
    ece_bins: int
    reps: int
    seed: int
    level: float

    def to_dict(self) -> dict[str, Any]:
        """What ``calib fit --json`` prints (keys stable; see the module docstring for ``map``)."""
        return {
            "method": self.method,
            "scoring": self.scoring,
            "folds": self.folds,
            "n_fit": self.n_fit,
            "n_eval": self.n_eval,
            "useless": self.useless,
            "reason": self.reason,
            "notes": list(self.notes),
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "base_rate": self.base_rate.to_dict(),
            "change": self.change.to_dict(),
            "ece_scheme": self.ece_scheme,
            "ece_bins": self.ece_bins,
            "reps": self.reps,
            "seed": self.seed,
            "level": self.level,
            "map": self.map.to_dict(),
            "fitted": self.fitted.to_dict(),
            "table": [dict(r) for r in self.table],
        }


#: Most resampling cells of a scored evaluation; beyond, they are coarsened (see :func:`_scored`).
MAX_PAIR_CELLS = 2000
#: Width of the coarser probability grid of the resampling cells when there are too many.
PAIR_GRID = 0.01


# What the evaluation data looks like once every unit (row or cell) carries its
# forecast before the map, after it, and the base rate. Cells of the "pair table"
# are the distinct (fold, before, after) combinations, so one multinomial resample
# of it scores all three forecasts on the same draws (paired intervals).
@dataclass(frozen=True, eq=False)
class _Side:
    table: CountTable  # exact sums: point estimates
    boot: CountTable  # the cells the bootstrap scores (``table`` unless coarsened)
    inverse: np.ndarray  # pair cell -> cell of ``boot``


@dataclass(frozen=True, eq=False)
class _Scored:
    pairs: CountTable
    sides: dict[str, _Side]
    coarse: bool


def _units_from_rows(rows: Judgments, cmap: CalibrationMap, base: float) -> dict[str, np.ndarray]:
    y = np.asarray(rows.correct, dtype=bool)
    p = np.asarray(rows.prob, dtype=np.float64)
    q = cmap.apply_rows(rows).prob
    ones = np.ones(len(rows), dtype=np.int64)
    return {
        "n": ones, "k": y.astype(np.int64), "stated": np.asarray(rows.stated, dtype=np.float64),
        "p": p, "py": np.where(y, p, 0.0), "sq": p * p, "nll": nll(p, y), "q": q,
        "b": np.full(len(rows), base), "pooled": np.zeros(len(rows), dtype=bool),
        "rowwise": np.ones(len(rows), dtype=bool),
    }


def _units_from_table(table: CountTable, cmap: CalibrationMap, base: float) -> dict[str, np.ndarray]:
    t = _cells(table)
    if cmap.method == "softmax_temperature":
        raise CalibError(
            "a softmax temperature map needs the evaluation data's option scores (rows), not a count table"
        )
    return {
        "n": t.n.astype(np.int64), "k": t.correct.astype(np.int64), "stated": t.value.astype(np.float64),
        "p": t.prob * t.n, "py": t.py_sum, "sq": t.sq_sum, "nll": t.nll_sum, "q": cmap.apply_prob(cell_prob(t)),
        "b": np.full(t.cells, base), "pooled": np.full(t.cells, t.pooled),
        "rowwise": np.zeros(t.cells, dtype=bool),
    }


def _forecast_sums(f: np.ndarray, n: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per-unit sums for a forecast ``f`` shared by the unit's ``n`` rows, ``k`` right."""
    ones = np.ones_like(f, dtype=bool)
    return f * n, f * k, f * f * n, k * nll(f, ones) + (n - k) * nll(f, ~ones)


def _grid_key(f: np.ndarray) -> tuple[np.ndarray, bool]:
    """Forecast values as cell keys: exact, or on the table's grid when too many."""
    if np.unique(f).size > MAX_EXACT_CELLS:
        return np.round(f / GRID) * GRID, True
    return f, False


def _merge(key: np.ndarray, n: np.ndarray, k: np.ndarray, sums: tuple[np.ndarray, ...], scale: Scale,
           pooled: bool) -> tuple[CountTable, np.ndarray]:
    """Units summed into one cell per distinct ``key``: (table, unit -> cell)."""
    uniq, inv = np.unique(key, return_inverse=True)
    inv = inv.ravel()
    c = uniq.size
    nn = np.bincount(inv, weights=n, minlength=c)
    kk = np.bincount(inv, weights=k, minlength=c)
    s = [np.bincount(inv, weights=a, minlength=c) for a in sums]
    table = CountTable(
        value=uniq, prob=s[0] / nn, n=nn.astype(np.int64), correct=kk.astype(np.int64), py_sum=s[1],
        sq_sum=s[2], nll_sum=s[3], group=np.zeros(c, dtype=np.int64), groups=("",), scale=scale,
        pooled=pooled,
    )
    return table, inv


def _scored(parts: list[dict[str, np.ndarray]], scale: Scale) -> _Scored:
    """Evaluation units of every part -> exact tables per forecast + resampling cells.

    Point estimates use the exact tables. The bootstrap resamples *pair cells*,
    the distinct (part, stated value, calibrated value); with continuous
    forecasts (softmax temperature on log-probs) there can be nearly one per row,
    which would make 2,000 resamples cost like a row-level bootstrap. Beyond
    :data:`MAX_PAIR_CELLS` the pair cells (and the cells the resamples are scored
    on) are keyed on a :data:`PAIR_GRID` = 0.01 grid instead: a resampled row's
    probability moves by at most 0.005 (exact sums within each cell keep the
    right and wrong answers at their own means), and equal-width ECE bins with
    edges on that grid (10, 20, 25, 50 or 100 bins) are unaffected.
    """
    u = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    fold = np.concatenate([np.full(p["n"].size, i) for i, p in enumerate(parts)])
    n, k = u["n"], u["k"]
    before_sums = (u["p"], u["py"], u["sq"], u["nll"])
    if u["rowwise"].all():
        # rows: pool the stated values exactly as calib.table.from_judgments would
        if np.unique(u["stated"]).size > MAX_EXACT_CELLS:
            before_key = scale.to_stated(np.round(u["p"] / GRID) * GRID)
            before_pooled = True
        else:
            before_key, before_pooled = u["stated"], False
    else:
        before_key, before_pooled = u["stated"], bool(u["pooled"].any())
    after_key, after_pooled = _grid_key(u["q"])
    after_sums = _forecast_sums(u["q"], n, k)
    base_sums = _forecast_sums(u["b"], n, k)
    _, pair_inv = np.unique(np.column_stack([fold, before_key, after_key]), axis=0, return_inverse=True)
    pair_inv = pair_inv.ravel()
    coarse = int(pair_inv.max(initial=-1)) + 1 > MAX_PAIR_CELLS
    if coarse:
        p_mean = u["p"] / np.maximum(n, 1)
        b_coarse = scale.to_stated(np.round(p_mean / PAIR_GRID) * PAIR_GRID)
        a_coarse = np.round(u["q"] / PAIR_GRID) * PAIR_GRID
        _, pair_inv = np.unique(np.column_stack([fold, b_coarse, a_coarse]), axis=0, return_inverse=True)
        pair_inv = pair_inv.ravel()
    pair, _ = _merge(pair_inv.astype(np.float64), n, k, before_sums, scale, before_pooled)
    first = np.zeros(pair.cells, dtype=np.int64)
    first[pair_inv] = np.arange(pair_inv.size)  # any unit of each pair cell

    def side(key: np.ndarray, coarse_key: np.ndarray | None, sums: tuple[np.ndarray, ...], sc: Scale,
             pooled: bool) -> _Side:
        exact, inv = _merge(key, n, k, sums, sc, pooled)
        if coarse_key is None:
            return _Side(exact, exact, inv[first])
        boot, binv = _merge(coarse_key, n, k, sums, sc, True)
        return _Side(exact, boot, binv[first])

    sides = {
        "before": side(before_key, b_coarse if coarse else None, before_sums, scale, before_pooled),
        "after": side(after_key, a_coarse if coarse else None, after_sums, PROBABILITY, after_pooled),
        "base": side(u["b"], None, base_sums, PROBABILITY, False),
    }
    return _Scored(pair, sides, coarse)


def _aggregate(counts: np.ndarray, inverse: np.ndarray, cells: int) -> np.ndarray:
    """Sum the columns of ``counts`` (reps, pair cells) into ``cells`` side cells."""
    order = np.argsort(inverse, kind="stable")
    inv = inverse[order]
    starts = np.flatnonzero(np.r_[True, inv[1:] != inv[:-1]])
    out = np.zeros((counts.shape[0], cells), dtype=counts.dtype)
    out[:, inv[starts]] = np.add.reduceat(counts[:, order], starts, axis=1)
    return out


def _ci(samples: np.ndarray, level: float) -> tuple[float, float]:
    """:func:`calib.bootstrap.percentile_interval`, NaN where it reports none."""
    lo, hi = percentile_interval(samples, level)
    return (math.nan if lo is None else lo), (math.nan if hi is None else hi)


def _rep_scores(table: CountTable, n: np.ndarray, k: np.ndarray, scheme: str, bins: int) -> dict[str, np.ndarray]:
    """Brier, log loss and ECE per rep of ``(reps, cells)`` counts on ``table``'s cells,
    with the kernels of :mod:`calib.metrics` (one implementation of each metric)."""
    s = metrics.CellStats.resampled(table, n, k)
    fixed = None if scheme == "mass" else metrics.bin_index(table, scheme, bins)
    ids, nbins = metrics.bin_ids_batch(s, scheme, fixed, bins)
    return {"brier": metrics.brier_batch(s), "log_loss": metrics.log_loss_batch(s), "ece": metrics.binned_errors_batch(s, ids, nbins)[0]}


def _point(table: CountTable, scheme: str, bins: int) -> dict[str, float]:
    def v(x: float | None) -> float:
        return math.nan if x is None else float(x)

    return {
        "brier": v(metrics.brier(table)), "log_loss": v(metrics.log_loss(table)),
        "ece": v(metrics.ece(table, scheme, bins)),
    }


_NAMES = ("brier", "log_loss", "ece")


@dataclass(frozen=True, eq=False)
class _Draws:
    """Point estimates and per-resample values of each forecast on the evaluation data."""

    points: dict[str, dict[str, float]]
    draws: dict[str, dict[str, np.ndarray]] | None
    level: float

    def scores(self, side: str) -> Scores:
        return Scores(*(self._est(self.points[side][m], None if self.draws is None else self.draws[side][m])
                        for m in _NAMES))

    def change(self, side: str, ref: str) -> Scores:
        """``side - ref``, its interval from the same resamples (paired)."""
        return Scores(*(self._est(
            self.points[side][m] - self.points[ref][m],
            None if self.draws is None else self.draws[side][m] - self.draws[ref][m],
        ) for m in _NAMES))

    def _est(self, value: float, draws: np.ndarray | None) -> Estimate:
        lo, hi = (math.nan, math.nan) if draws is None else _ci(draws, self.level)
        return Estimate(value, lo, hi)


def _score_all(sc: _Scored, *, scheme: str, bins: int, reps: int, seed: int, level: float) -> _Draws:
    """Point estimates (exact, from each side's table) and one shared bootstrap draw.

    The pair table (cells = distinct (fold, stated value, calibrated value)) is
    resampled multinomially once; each forecast's counts are sums of its columns,
    so before, after and base rate are scored on the same resamples."""
    points = {side: _point(s.table, scheme, bins) for side, s in sc.sides.items()}
    if reps <= 0:
        return _Draws(points, None, level)
    n_b, k_b = resample_counts(sc.pairs, reps, seed)
    draws = {}
    for side, s in sc.sides.items():
        c = s.boot.cells
        draws[side] = _rep_scores(s.boot, _aggregate(n_b, s.inverse, c), _aggregate(k_b, s.inverse, c), scheme, bins)
    return _Draws(points, draws, level)


# ------------------------------------------------------------------------ fit
Data = Dataset | CountTable | Judgments


def _as_data(x: Data, what: str) -> tuple[CountTable, Judgments | None]:
    if isinstance(x, Dataset):
        return x.table, x.rows
    if isinstance(x, Judgments):
        return from_judgments(x), x
    if isinstance(x, CountTable):
        return x, None
    raise CalibError(f"{what} must be a dataset, a count table or rows, not {type(x).__name__}")


@dataclass(frozen=True)
class _Fitter:
    method: str
    softmax: bool
    correction: float
    bins: int
    scheme: str

    def __call__(self, table: CountTable, rows: Judgments | None) -> tuple[_Fit, CalibrationMap, float]:
        """Fit on one part: (fit as fitted, map to use, base rate of the part)."""
        t = _cells(table)
        if t.total == 0:
            raise CalibError("a part of the split has no rows to fit on: use fewer folds or more data")
        base = t.total_correct / t.total
        if self.softmax:
            assert rows is not None and rows.options is not None
            f = _fit_softmax(rows.options)
        else:
            f = _fit_table(t, self.method, correction=self.correction, bins=self.bins, scheme=self.scheme)
        use = f.cmap
        if f.reason and f.cmap.method != "base_rate":
            use = base_rate_map(t, replaces=self.method, note=f.reason, correction=self.correction)
        return f, use, base


def fit(
    data: Data,
    method: str,
    *,
    scoring: str | None = None,
    eval_data: Data | None = None,
    folds: int = 5,
    seed: int = 0,
    reps: int = REPS,
    level: float = 0.95,
    correction: float = CORRECTION,
    bins: int = HIST_BINS,
    hist_scheme: str = "mass",
    ece_scheme: str = "auto",
    ece_bins: int = metrics.BINS,
    logits: bool | None = None,
) -> FitResult:
    """Fit a recalibration map and score it honestly.

    Parameters
    ----------
    data:
        The fitting data: a :class:`~calib.dataset.Dataset` (its rows are used for
        splits when it has them), rows, or a count table.
    method:
        One of :data:`METHODS`. ``temperature`` on rows with option scores is the
        softmax temperature of Guo et al. (2017) unless ``logits=False``.
    scoring:
        ``insample``, ``oddeven``, ``kfold`` or ``file`` (default: ``file`` when
        ``eval_data`` is given, else ``oddeven``). See the module docstring.
    eval_data:
        The data to score on for ``file`` scoring (same stated scale).
    folds:
        Folds of ``kfold``.
    seed:
        Seeds the splits of count tables, the fold assignment and the bootstrap.
    reps, level:
        Bootstrap resamples of the evaluation data (0: no intervals) and the interval level.
    correction:
        Continuity correction constant of :func:`calib.scale.finite_prob`.
    bins, hist_scheme:
        Histogram binning: number of bins and ``"mass"`` or ``"width"``.
    ece_scheme, ece_bins:
        Binning of the ECE reported before and after (``"auto"``: per value for at most
        101 distinct stated values, else equal width; resolved on the evaluation
        data's stated values and used for all three forecasts).
    logits:
        For ``temperature``: ``True`` to require option scores, ``False`` to use the
        stated value, ``None`` to use option scores when the rows have them.

    Returns
    -------
    FitResult
        The map to apply (the base-rate map when the fit is useless), the map as
        fitted, and Brier / log loss / ECE before, after and for the base rate on
        the evaluation data, with paired bootstrap intervals.
    """
    if method not in METHODS:
        raise CalibError(f"unknown recalibration method {method!r}: choose one of {', '.join(METHODS)}")
    if scoring is None:
        scoring = "file" if eval_data is not None else "oddeven"
    if scoring not in SCORINGS:
        raise CalibError(f"unknown scoring {scoring!r}: choose one of {', '.join(SCORINGS)}")
    if scoring == "file" and eval_data is None:
        raise CalibError("scoring on a file needs the evaluation data (--eval FILE)")
    if not 0 < level < 1:
        raise CalibError(f"the interval level must be between 0 and 1, got {level:g}")
    table, rows = _as_data(data, "the fitting data")
    if table.total == 0:
        raise CalibError("no rows to fit a recalibration map on")
    has_options = rows is not None and rows.options is not None
    if logits and not has_options:
        raise CalibError("temperature scaling on logits needs option log-probs (a log-prob file), not stated values")
    softmax = method == "temperature" and has_options and logits is not False
    fitter = _Fitter(method, softmax, correction, bins, hist_scheme)
    notes: list[str] = []
    if softmax:
        notes.append("temperature scaling of the softmax over the option scores (Guo et al. 2017)")

    # the map returned: fitted on all the data, except for oddeven, where it is the
    # map fitted on the odd rows and scored on the even ones (as fit odd --eval even)
    full_fit, full_use, _ = fitter(table, rows) if scoring != "oddeven" else (None, None, None)
    parts: list[dict[str, np.ndarray]] = []
    fit_table = table
    scale = table.scale
    if scoring == "insample":
        parts.append(_units(rows, table, full_use, full_fit, table))
        notes.append("scored in-sample: on the data the map was fitted on (optimistic)")
    elif scoring == "file":
        assert eval_data is not None
        etable, erows = _as_data(eval_data, "the evaluation data")
        if not softmax:
            full_use.check_scale(etable.scale, "the evaluation data")
        elif erows is None or erows.options is None:
            raise CalibError("a softmax temperature is scored on option scores: the evaluation file has none")
        parts.append(_units(erows, etable, full_use, full_fit, table))
        scale = etable.scale
    elif scoring == "oddeven":
        if rows is not None:
            odd, even = row_order_halves(rows)
            fit_rows, ev_rows = rows.take(odd), rows.take(even)
            ftab = from_judgments(fit_rows)
            full_fit, full_use, _ = fitter(ftab, fit_rows)
            parts.append(_units(ev_rows, None, full_use, full_fit, ftab))
            fit_table = ftab
            notes.append("fitted on the 1st, 3rd, 5th... rows in file order, scored on the 2nd, 4th...")
        else:
            (n0, k0), (n1, k1) = split_counts(table, 2, seed=seed)
            ftab = _cells(table.with_counts(n0, k0))
            full_fit, full_use, _ = fitter(ftab, None)
            parts.append(_units(None, table.with_counts(n1, k1), full_use, full_fit, ftab))
            fit_table = ftab
            notes.append(
                "a count table has no file order: each cell was split in two at random "
                f"(hypergeometric draw, seed {seed})"
            )
    else:
        if rows is not None:
            fold = item_folds(rows, folds, seed=seed)
            for j in range(folds):
                tr, te = rows.take(fold != j), rows.take(fold == j)
                ftab = from_judgments(tr)
                f, use, _ = fitter(ftab, tr)
                parts.append(_units(te, None, use, f, ftab))
            notes.append(f"{folds}-fold cross-fitting by item (rows sharing an id share a fold; seed {seed})")
        else:
            split = split_counts(table, folds, seed=seed)
            tot_n = table.n.copy()
            tot_k = table.correct.copy()
            for nj, kj in split:
                ftab = table.with_counts(tot_n - nj, tot_k - kj)
                f, use, _ = fitter(ftab, None)
                parts.append(_units(None, table.with_counts(nj, kj), use, f, ftab))
            notes.append(
                f"{folds}-fold cross-fitting; a count table has no rows, so each cell was split "
                f"at random into {folds} parts (hypergeometric draws, seed {seed})"
            )
        bad = sum(1 for p in parts if p["useless_fold"][0])
        if bad:
            notes.append(f"{bad} of {folds} fold maps were useless and scored as their base rate")
    assert full_fit is not None and full_use is not None
    if full_use.note and full_use.note not in notes and full_use.method != "base_rate":
        notes.append(full_use.note)
    if full_fit.cmap.note and full_fit.cmap.note != full_fit.reason and full_fit.cmap.note not in notes:
        notes.append(full_fit.cmap.note)

    if sum(int(p["n"].sum()) for p in parts) == 0:
        raise CalibError("the evaluation data has no rows to score the map on")
    sc = _scored([{k: v for k, v in p.items() if k != "useless_fold"} for p in parts], scale)
    if sc.coarse and reps > 0:
        notes.append(
            f"the intervals resample cells {PAIR_GRID:g} wide in probability (too many distinct "
            "probabilities for exact cells); point estimates are exact"
        )
    scheme = metrics.resolve_scheme(sc.sides["before"].table, ece_scheme)
    draws = _score_all(sc, scheme=scheme, bins=ece_bins, reps=reps, seed=seed, level=level)
    useless, reason = bool(full_fit.reason), full_fit.reason
    cmap, after = full_use, "after"
    a, b = draws.points["after"]["brier"], draws.points["base"]["brier"]
    # a tie within rounding is no gain: a map that sends every item to one value (all
    # items stated alike) equals the base rate up to the last bits, either way
    if not useless and not a < b - 1e-12 * max(1.0, abs(b)):
        useless = True
        reason = (
            f"the map does not beat the base rate on the evaluation data (Brier {a:.4f} vs "
            f"{b:.4f} for the base rate): the stated value adds nothing the map can use"
        )
        cmap = base_rate_map(_cells(fit_table), replaces=method, note=reason, correction=correction)
    if useless:
        # what is returned is the base rate, so "after" reports the base rate's scores
        after = "base"
        if scoring != "insample" and a != b:
            notes.append(
                f"the map fitted for scoring ({scoring}) had Brier {a:.4f} on the evaluation data, "
                f"the base rate {b:.4f}"
            )
    values = np.zeros(0) if softmax else np.unique(np.concatenate([fit_table.value, sc.sides["before"].table.value]))
    cmap = replace(cmap, values=values)
    fitted = replace(full_fit.cmap, values=values)
    n_eval = int(sc.pairs.n.sum())
    return FitResult(
        method=method, scoring=scoring, map=cmap, fitted=fitted, useless=useless, reason=reason,
        notes=tuple(notes), n_fit=fit_table.total, n_eval=n_eval,
        folds=folds if scoring == "kfold" else None,
        before=draws.scores("before"), after=draws.scores(after), base_rate=draws.scores("base"),
        change=draws.change(after, "before"),
        table=() if softmax else _value_table(cmap, fit_table, sc.sides["before"].table),
        ece_scheme=scheme, ece_bins=int(ece_bins), reps=int(reps), seed=int(seed), level=float(level),
    )


def _units(
    rows: Judgments | None, table: CountTable | None, use: CalibrationMap, f: _Fit, fit_table: CountTable
) -> dict[str, np.ndarray]:
    """Evaluation units (rows when given, else cells) with the part's map and base rate."""
    ft = _cells(fit_table)
    base = ft.total_correct / ft.total
    u = _units_from_rows(rows, use, base) if rows is not None else _units_from_table(table, use, base)
    u["useless_fold"] = np.array([bool(f.reason)])
    return u


def _value_table(cmap: CalibrationMap, fit_table: CountTable, eval_table: CountTable) -> tuple[dict[str, Any], ...]:
    """One row per stated value of the fitting or evaluation data (see :attr:`FitResult.table`)."""
    ft, et = _cells(fit_table), _cells(eval_table)
    values = np.unique(np.concatenate([ft.value, et.value]))
    q = cmap.apply(values)

    def lookup(t: CountTable) -> tuple[np.ndarray, np.ndarray]:
        i = np.searchsorted(t.value, values)
        i = np.clip(i, 0, max(t.cells - 1, 0))
        hit = (t.cells > 0) & (t.value[i] == values) if t.cells else np.zeros(values.size, dtype=bool)
        n = np.where(hit, t.n[i] if t.cells else 0, 0)
        k = np.where(hit, t.correct[i] if t.cells else 0, 0)
        return n, k

    nf, kf = lookup(ft)
    ne, ke = lookup(et)
    out = []
    for j, v in enumerate(values):
        out.append({
            "stated": _num(v), "n_fit": int(nf[j]), "hit_rate_fit": _f(kf[j] / nf[j]) if nf[j] else None,
            "n_eval": int(ne[j]), "hit_rate_eval": _f(ke[j] / ne[j]) if ne[j] else None, "prob": float(q[j]),
        })
    return tuple(out)
