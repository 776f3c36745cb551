"""The map type and its file: :class:`CalibrationMap` (apply it to probabilities, stated
values, count tables and rows), its versioned JSON (:func:`read_map`, :func:`write_map`,
validated on reading), the base-rate map, and :func:`cell_prob`, the one probability a
map reads per cell.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit

from calib.errors import CalibError
from calib.options import top_probability
from calib.rows import Judgments, OptionScores
from calib.scale import CORRECTION, Scale, finite_from_prob, scale_steps
from calib.table import CountTable, from_counts

#: Version written in (and required of) the ``calib_map`` key of a map's JSON.
FORMAT_VERSION = 1


def table_finite(t: CountTable, c: float) -> np.ndarray:
    """:func:`calib.scale.finite_from_prob` of each cell's probability (:func:`cell_prob`),
    in the table's own steps (:func:`fit_steps`)."""
    return finite_from_prob(cell_prob(t), t.scale, c=c, steps=fit_steps(t))


def fit_steps(t: CountTable) -> float:
    """The ``m`` of the continuity correction for fitting data ``t``: the scale's
    steps, or on 0-1 the resolution of its values (:func:`calib.scale.scale_steps`)."""
    return scale_steps(t.scale, cell_prob(t))


def logit(p: np.ndarray) -> np.ndarray:
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
        The parameters (see :mod:`calib.maps` for each method's keys).
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
    held_out:
        How the map scored on held-out data when it was fitted (``calib fit --out``
        writes it: ``scoring``, ``n_eval``, ``brier_stated``, ``brier_mapped``,
        ``brier_base_rate``), read back by :mod:`calib.maps.transport`; ``None`` when
        unknown (a map written before it existed).
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
    held_out: Mapping[str, Any] | None = None

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
            return expit(float(prm["slope"]) * logit(f) + float(prm["intercept"]))
        if m == "temperature":
            return expit(logit(f) / float(prm["T"]))
        if m == "beta":
            return expit(float(prm["a"]) * np.log(f) - float(prm["b"]) * np.log1p(-f) + float(prm["c"]))
        raise CalibError(f"unknown map method {m!r}")  # pragma: no cover - validated on creation

    def apply(self, stated: np.ndarray | float) -> np.ndarray:
        """Calibrated probability for stated values on :attr:`scale`."""
        return self.apply_prob(self.scale.to_prob(stated))

    def check_scale(self, scale: Scale, what: str = "the data") -> None:
        """Raise :class:`CalibError` unless ``scale`` has this map's ends."""
        if scale.labels and self.scale.labels and scale.labels != self.scale.labels:
            raise CalibError(f"the map was fitted on the phrases {' < '.join(self.scale.labels)} but {what} is on "
                             f"{' < '.join(scale.labels)}; give the map's order with --phrases")
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
        return [{"stated": json_number(a), "prob": float(b)} for a, b in zip(v, q, strict=True)]

    def to_dict(self) -> dict[str, Any]:
        """The map as the versioned JSON object described in :mod:`calib.maps`."""
        return {
            "calib_map": FORMAT_VERSION,
            "method": self.method,
            "scale": {"lo": json_number(self.scale.lo), "hi": json_number(self.scale.hi), "name": self.scale.name},
            "correction": self.correction,
            **({} if self.steps is None else {"steps": json_number(self.steps)}),
            "params": {k: _jsonable(v) for k, v in self.params.items()},
            "table": self.table(),
            "replaces": self.replaces,
            "n_fit": int(self.n_fit),
            "note": self.note,
            **({} if self.held_out is None else {"held_out": dict(self.held_out)}),
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


def json_number(x: float) -> float | int:
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
    labels = sc.get("labels") or ()  # confidence in words: the phrase of each rank 1..k
    if not (isinstance(labels, list | tuple) and all(isinstance(x, str) for x in labels)
            and (not labels or (lo == 0.5 and hi == len(labels) + 0.5))):
        raise bad('"scale.labels" must be a list of one phrase per rank 1..k, on the scale [0.5, k + 0.5]')
    scale = Scale(lo, hi, str(sc.get("name") or f"{lo:g}-{hi:g}"), "from the map file", tuple(labels))
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
        note=str(d.get("note") or ""), steps=steps, held_out=_held_out(d.get("held_out"), bad),
    )


#: The numbers of a map's ``held_out`` block (each a finite number or null).
HELD_OUT_NUMBERS = ("n_eval", "brier_stated", "brier_mapped", "brier_base_rate")


def _held_out(v: Any, bad: Any) -> dict[str, Any] | None:
    """The ``held_out`` block of a map file, checked: an object of finite numbers (or
    null) and a ``scoring`` name; ``None`` when absent."""
    if v is None:
        return None
    if not isinstance(v, dict):
        raise bad('"held_out" must be an object')
    out: dict[str, Any] = {"scoring": str(v.get("scoring") or "")[:40]}
    for key in HELD_OUT_NUMBERS:
        out[key] = None if v.get(key) is None else _finite_number(v.get(key), f"held_out.{key}", bad)
    return out


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


def histogram_bin(p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin index of probabilities ``p`` for bin edges ``e_0 = 0 < ... < e_B = 1``.

    Bin ``j`` is ``(e_j, e_{j+1}]``, the first bin also holds ``0``.
    """
    idx = np.searchsorted(edges, np.asarray(p, dtype=np.float64), side="left") - 1
    return np.clip(idx, 0, edges.size - 2)
