"""Map transport: does a fitted recalibration map still hold on new labelled data?

:func:`transport` applies a saved map (``calib fit --out``) to new labelled data and
returns a :class:`Transport`: a calibration test of the mapped probabilities on the new
data, the map's gain in Brier score over the stated confidence now (with its interval)
beside the gain it had on held-out data when fitted (the map file's ``held_out``), and the
advice, keep, refit or retire, by this rule (``alpha = 1 - level``, each test at
``alpha / 2``, Bonferroni, so that an unchanged judge gets advice other than "keep" at
most about ``alpha`` of the time: ``bench/sim_transport.py``):

- **retire** when the mapped probabilities score worse than the stated confidence on the
  new data (paired Brier test, two-sided ``p < alpha / 2``, the map's side worse): the
  map now hurts; stop applying it (refit from scratch, or go without);
- **refit** otherwise when the calibration test of the mapped probabilities rejects
  (``p < alpha / 2``): the map still helps or does no harm, but no longer calibrates;
- **keep** otherwise.

The calibration test is the cumulative-differences Kuiper test (Tygert 2021;
:func:`calib.metrics.cumulative_differences`), no bins, on the mapped probabilities.
The map was estimated from ``n_fit`` rows: even on an unchanged judge its probabilities
carry that sample's error, of the same order as the new data's noise when the two are of
similar size (a test that ignored it rejected an unchanged judge far more often than
``alpha``). The test's null variance is therefore multiplied by ``1 + N / n_fit`` (``N``
the new rows): exact for a map that follows each stated value's hit rate (a two-sample
comparison of the fitting and the new data, per value), conservative for a smoother map
(Platt, temperature, beta: fewer parameters, less error). Mapped probabilities of exactly
0 or 1 are read at ``0.5 / (n_fit + 1)`` from the end: a map estimated from finite data
cannot know an answer is certain. The Brier test treats rows as independent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from calib import metrics as m
from calib.dataset import Data, table_and_rows
from calib.errors import CalibError
from calib.estimates import Estimate
from calib.maps.calibration_map import CalibrationMap, cell_prob
from calib.metrics.pvalues import Test, z_test
from calib.numbers import finite_or_none, plain
from calib.scale import PROBABILITY
from calib.settings import LEVEL
from calib.table import from_counts

#: Schema of ``calib transport --json``.
SCHEMA = "calib.transport/1"
#: The advice and the exit code of ``calib transport`` for each.
ADVICE_EXIT: dict[str, int] = {"keep": 0, "refit": 1, "retire": 1}


#: Largest map file read from an upload (checked before the JSON is parsed).
MAP_FILE_LIMIT = 16_000_000


def read_uploaded_map(data: bytes) -> CalibrationMap:
    """A map file's bytes (``calib fit --out``, the Recalibration page's download) read and
    validated, refused above :data:`MAP_FILE_LIMIT` before parsing."""
    from calib.maps.calibration_map import read_map

    if len(data) > MAP_FILE_LIMIT:
        raise CalibError(f"the map file is {len(data):,} bytes; a map file is at most {MAP_FILE_LIMIT:,}")
    return read_map(text=data)


@dataclass(frozen=True)
class Transport:
    """A map checked on new labelled data (see the module docstring).

    ``gap`` is the mean mapped probability minus the hit rate on the new data, ``gain_now``
    the Brier score of the stated confidence minus that of the mapped probabilities
    (positive: the map helps), an :class:`~calib.estimates.Estimate` with its normal interval
    (:data:`PAIRED_NORMAL`), ``gain_then`` the same on the held-out data when the map was
    fitted (``None`` when the map file does not say)."""

    method: str
    n_fit: int
    n_new: int
    level: float
    inflation: float
    calibration: m.CumulativeDifferences
    gap: float | None
    brier_stated: float | None
    brier_mapped: float | None
    brier_base_rate: float | None
    gain_now: Estimate
    gain_test: Test
    then: dict[str, Any] | None
    gain_then: float | None
    advice: str
    reason: str

    @property
    def exit_code(self) -> int:
        return ADVICE_EXIT[self.advice]

    def to_dict(self) -> dict[str, Any]:
        c = self.calibration
        return plain({
            "schema": SCHEMA, "method": self.method, "n_fit": self.n_fit, "n_new": self.n_new, "level": self.level,
            "advice": self.advice, "reason": self.reason,
            "calibration_test": {**c.to_dict(), "inflation": self.inflation},
            "gap": self.gap, "brier_stated": self.brier_stated, "brier_mapped": self.brier_mapped,
            "brier_base_rate": self.brier_base_rate, "gain_now": self.gain_now.value,
            "gain_now_ci": self.gain_now.to_list(),
            "gain_test": self.gain_test.to_dict(), "held_out_then": self.then, "gain_then": self.gain_then,
        })


#: :attr:`Estimate.method` of the Brier gain's interval (:func:`_paired_brier`).
PAIRED_NORMAL = "normal interval, mean +- z sd / sqrt(n) of the per-answer gains"


def _paired_brier(n: np.ndarray, k: np.ndarray, p: np.ndarray, q: np.ndarray, level: float) -> tuple[Estimate, Test]:
    """Gain ``mean (p - y)^2 - (q - y)^2`` over rows, from the cells (``n`` rows, ``k``
    right, stated ``p``, mapped ``q``), with its normal interval, and the two-sided z test of 0."""
    w = n - k
    g1, g0 = (1 - p) ** 2 - (1 - q) ** 2, p**2 - q**2  # per right / wrong answer
    N = float(n.sum())
    if N < 2:
        return Estimate.point(None), Test("brier_map_vs_stated", None, None, None, None, "needs two answers")
    mean = float(np.sum(k * g1 + w * g0)) / N
    var = float(np.sum(k * (g1 - mean) ** 2 + w * (g0 - mean) ** 2)) / (N - 1)
    if not var > 0:
        return Estimate(finite_or_none(mean), mean, mean, level, PAIRED_NORMAL), Test("brier_map_vs_stated", None, None, None, None,
                                        "the map and the stated confidence score every answer alike")
    se = math.sqrt(var / N)
    zc = float(special.ndtri(0.5 + level / 2))
    return Estimate(finite_or_none(mean), mean - zc * se, mean + zc * se, level, PAIRED_NORMAL), z_test("brier_map_vs_stated", mean / se)


def transport(cmap: CalibrationMap, data: Data, *, level: float = LEVEL, seed: int = 0) -> Transport:
    """Check ``cmap`` on the new labelled ``data`` (see the module docstring for the rule).

    Raises
    ------
    CalibError
        When the data has no answers, is on another scale than the map, or the map is a
        softmax temperature (it needs option scores, not stated values).
    """
    if not 0 < level < 1:
        raise CalibError(f"the confidence level must be between 0 and 1 (e.g. 0.95), got {level:g}")
    if cmap.method == "softmax_temperature":
        raise CalibError("transport checks maps of stated values; this map is a softmax temperature over option "
                         "scores: refit it with calib fit on the new file instead")
    table, _rows = table_and_rows(data)
    t = m.single(table)
    if t.total == 0:
        raise CalibError("nothing to check the map on: the new data has no answers (see the load report)")
    cmap.check_scale(t.scale, "the new data")
    p = cell_prob(t)
    q = np.clip(cmap.apply_prob(p), 0.0, 1.0)
    end = 0.5 / (max(cmap.n_fit, 0) + 1)
    q_test = np.clip(q, end, 1 - end)
    mapped = from_counts(q_test, t.n, t.correct, scale=PROBABILITY)
    N = t.total
    inflation = 1.0 + N / cmap.n_fit if cmap.n_fit > 0 else 1.0
    cal = m.cumulative_differences(mapped, seed=seed, inflation=inflation)
    n, k = t.n.astype(np.float64), t.correct.astype(np.float64)
    acc = float(k.sum()) / N
    brier_s = float(np.sum(k * (1 - p) ** 2 + (n - k) * p**2)) / N
    brier_m = float(np.sum(k * (1 - q) ** 2 + (n - k) * q**2)) / N
    gain, gtest = _paired_brier(n, k, p, q, level)
    then = dict(cmap.held_out) if cmap.held_out is not None else None
    gain_then = None
    if then and then.get("brier_stated") is not None and then.get("brier_mapped") is not None:
        gain_then = float(then["brier_stated"]) - float(then["brier_mapped"])
    advice, reason = _advice(cal.kuiper_test, gtest, gain.value, 1 - level)
    return Transport(
        method=cmap.method, n_fit=int(cmap.n_fit), n_new=int(N), level=float(level), inflation=float(inflation),
        calibration=cal, gap=finite_or_none(float(np.sum(q * n)) / N - acc), brier_stated=brier_s,
        brier_mapped=brier_m, brier_base_rate=acc * (1 - acc), gain_now=gain,
        gain_test=gtest, then=then, gain_then=gain_then, advice=advice, reason=reason,
    )


def _advice(cal: Test, gain_test: Test, gain: float | None, alpha: float) -> tuple[str, str]:
    """The rule of the module docstring: ``(advice, reason code)``."""
    if gain is not None and gain < 0 and gain_test.rejects(alpha / 2):
        return "retire", "map_hurts"
    if cal.rejects(alpha / 2):
        return "refit", "miscalibrated"
    if cal.p_value is None:
        return "keep", "untestable"
    return "keep", "holds"
