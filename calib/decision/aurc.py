"""The area under the risk-coverage curve (AURC) and its excess over the oracle.

Contract: :func:`aurc` returns an :class:`AURC` whose ``to_dict()`` has ``aurc``,
``aurc_ci``, ``aurc_oracle``, ``eaurc`` (and ``eaurc_ci``).

Definition (selective prediction: Geifman & El-Yaniv 2017; Geifman, Uziel &
El-Yaniv 2019 for the excess)
---------------------------------------------------------------------------------
Items are accepted by decreasing score; the risk at coverage ``k / N`` is the error
rate among the ``k`` accepted. ``AURC = (1/N) sum_{k=1}^{N} risk(k)``. Items with
equal scores cannot be separated by a threshold, so they are accepted together:
every position ``k`` inside a block of tied items (block ``j``, ``n_j`` items) gets
the risk of accepting the whole block, ``E_j / C_j`` (errors and items at or above
that score), i.e.

.. math:: \\mathrm{AURC} = \\sum_j \\frac{n_j}{N} \\frac{E_j}{C_j},

exact from the count table; without ties it is the usual mean over ``k``. The
oracle orders every right answer before every wrong one; with ``W`` wrong answers
and ``R = N - W`` right ones its AURC is

.. math:: \\frac{1}{N}\\sum_{k=R+1}^{N} \\frac{k - R}{k} = \\frac{W - R (H_N - H_R)}{N}

(``H`` the harmonic numbers). ``E-AURC = AURC - oracle`` is what the ordering
loses. Intervals: percentile bootstrap on :func:`calib.routing.basis`'s resamples
(clusters resampled whole), moved by exact minus coarse point figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import digamma

from calib import routing
from calib.bootstrap import percentile_interval
from calib.dataset import Data, table_and_rows
from calib.estimates import NONE, PERCENTILE, Estimate
from calib.maps import CalibrationMap
from calib.numbers import finite_or_none
from calib.settings import REPS


def harmonic(n: np.ndarray) -> np.ndarray:
    """``H_n = sum_{i<=n} 1/i`` (``psi(n + 1) + gamma``), for arrays of counts."""
    return digamma(np.asarray(n, dtype=np.float64) + 1.0) + np.euler_gamma


def oracle_aurc(total: np.ndarray | float, wrong: np.ndarray | float) -> np.ndarray:
    """AURC of the perfect ordering, ``(W - R (H_N - H_R)) / N``; NaN when ``N = 0``."""
    N = np.asarray(total, dtype=np.float64)
    W = np.asarray(wrong, dtype=np.float64)
    R = N - W
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(N > 0, (W - R * (harmonic(N) - harmonic(R))) / np.where(N > 0, N, 1.0), np.nan)


def aurc_from_cells(n: np.ndarray, wrong: np.ndarray) -> np.ndarray:
    """AURC from counts per distinct score, **increasing** score along the last axis
    (shape ``(cells,)`` or ``(reps, cells)``); ties accepted together."""
    n = np.asarray(n, dtype=np.float64)[..., ::-1]
    w = np.asarray(wrong, dtype=np.float64)[..., ::-1]
    C, E = np.cumsum(n, axis=-1), np.cumsum(w, axis=-1)
    N = C[..., -1:] if C.shape[-1] else np.zeros(n.shape[:-1] + (1,))
    with np.errstate(invalid="ignore", divide="ignore"):
        risk = np.where(C > 0, E / np.where(C > 0, C, 1.0), 0.0)
        return np.where(N[..., 0] > 0, np.sum(n * risk, axis=-1) / N[..., 0], np.nan)


@dataclass(frozen=True)
class AURC:
    """AURC and the excess over the oracle (:class:`~calib.estimates.Estimate` values, with
    percentile intervals at ``level``), and the oracle's AURC."""

    aurc: Estimate
    aurc_oracle: float | None
    eaurc: Estimate
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {"aurc": self.aurc.value, "aurc_ci": self.aurc.to_list(), "aurc_oracle": self.aurc_oracle,
                "eaurc": self.eaurc.value, "eaurc_ci": self.eaurc.to_list()}


def aurc(
    data: Data, *, calibration: CalibrationMap | None = None, reps: int = REPS, seed: int = 0,
    level: float = 0.95,
) -> AURC:
    """AURC of the stated value (or calibrated probability) with bootstrap intervals
    (``reps = 0``: none)."""
    table, _rows = table_and_rows(data)
    b = routing.basis(table, calibration=calibration, reps=reps, seed=seed)
    point = float(aurc_from_cells(b.n, b.n - b.correct))
    oracle = float(oracle_aurc(b.total, b.total - b.total_correct))
    ci: tuple[float | None, float | None] = (None, None)
    eci: tuple[float | None, float | None] = (None, None)
    if b.boot_n is not None and b.boot_k is not None and b.boot_cum_n is not None and b.boot_cum_k is not None:
        cn, ck = np.diff(b.boot_n, axis=1), np.diff(b.boot_k, axis=1)
        rough = float(aurc_from_cells(np.diff(b.boot_cum_n), np.diff(b.boot_cum_n) - np.diff(b.boot_cum_k)))
        draws = aurc_from_cells(cn, cn - ck) + (point - rough if np.isfinite(rough) else 0.0)
        ci = percentile_interval(draws, level)
        eci = percentile_interval(draws - oracle_aurc(b.boot_n[:, -1], b.boot_n[:, -1] - b.boot_k[:, -1]), level)
    how, at = (PERCENTILE, level) if b.boot_n is not None else (NONE, None)
    return AURC(Estimate.of(finite_or_none(point), ci, at, how), finite_or_none(oracle),
                Estimate.of(finite_or_none(point - oracle), eci, at, how), level)
