"""Decompositions of the Brier score: Murphy's (1973) reliability, resolution and
uncertainty on the bins of the ECE, and the CORP decomposition MCB - DSC + UNC
(Dimitriadis, Gneiting & Jordan 2021) on the isotonic (PAV) recalibration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calib.isotonic import pav_rows
from calib.metrics.binned import bin_ids_batch, bin_index, bin_sums, resolve_scheme
from calib.metrics.cells import CellStats, accuracy_batch, brier_batch, safe_div, single
from calib.numbers import finite_or_none
from calib.settings import BINS
from calib.table import CountTable


@dataclass(frozen=True)
class Murphy:
    """Murphy (1973) decomposition of the Brier score on the bins of the ECE's scheme:
    ``BS = reliability - resolution + uncertainty + within_cell``.

    ``within_cell`` is 0 on per-value bins of an unpooled table; with wider bins it
    holds the within-bin variance and covariance terms of Stanski, Wilson & Burrows
    (1989).
    """

    reliability: float | None
    resolution: float | None
    uncertainty: float | None
    within_cell: float | None

    def to_dict(self) -> dict[str, object]:
        return {
            "reliability": self.reliability, "resolution": self.resolution,
            "uncertainty": self.uncertainty, "within_cell": self.within_cell,
        }


@dataclass(frozen=True)
class Corp:
    """CORP decomposition of the Brier score (Dimitriadis, Gneiting & Jordan 2021):
    ``BS = mcb - dsc + unc`` exactly."""

    mcb: float | None
    dsc: float | None
    unc: float | None

    def to_dict(self) -> dict[str, object]:
        return {"mcb": self.mcb, "dsc": self.dsc, "unc": self.unc}


def murphy_batch(s: CellStats, ids: np.ndarray, nbins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    N = s.total.astype(np.float64)
    a = accuracy_batch(s)
    nb, kb, pb = bin_sums(ids, nbins, s.n, s.k, s.ps)
    with np.errstate(invalid="ignore", divide="ignore"):
        pbar = pb / np.maximum(nb, 1)
        ybar = kb / np.maximum(nb, 1)
    rel = safe_div((nb * (pbar - ybar) ** 2).sum(axis=-1), N)
    res = safe_div((nb * (ybar - a[:, None]) ** 2).sum(axis=-1), N)
    unc = a * (1 - a)
    within = brier_batch(s) - (rel - res + unc)
    return rel, res, unc, within


def murphy(table: CountTable, scheme: str = "auto", bins: int = BINS) -> Murphy:
    """Murphy (1973) decomposition on the bins of ``scheme`` (:func:`choose_scheme`:
    one per stated value on a stated scale, equal-width bins for a continuous score):

    .. math:: \\mathrm{REL} = \\tfrac{1}{N}\\sum_b n_b (\\bar p_b - \\bar y_b)^2, \\quad
              \\mathrm{RES} = \\tfrac{1}{N}\\sum_b n_b (\\bar y_b - \\bar y)^2, \\quad
              \\mathrm{UNC} = \\bar y (1 - \\bar y)

    with ``BS = REL - RES + UNC`` exactly when every answer of a bin has the same
    probability (per-value bins); otherwise ``within_cell`` holds the within-bin
    terms (Stephenson, Coelho & Jolliffe 2008). On per-value bins of a continuous
    score (one answer each) RES would equal UNC: every outcome "resolved"."""
    t = single(table)
    s = CellStats.of(t)
    scheme = resolve_scheme(t, scheme)
    ids, nb = bin_ids_batch(s, scheme, None if scheme == "mass" else bin_index(t, scheme, bins), bins)
    rel, res, unc, within = murphy_batch(s, ids, nb)
    return Murphy(finite_or_none(rel), finite_or_none(res), finite_or_none(unc), finite_or_none(within))


def corp_batch(s: CellStats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MCB, DSC, UNC per rep; one isotonic fit per rep (see :func:`corp`)."""
    N = s.total.astype(np.float64)
    a = accuracy_batch(s)
    fit = pav_rows(s.n, s.k)
    w = s.n - s.k
    cal = safe_div((s.k * (1 - fit) ** 2 + w * fit**2).sum(axis=-1), N)
    bs = brier_batch(s)
    unc = a * (1 - a)
    return bs - cal, unc - cal, unc


def corp(table: CountTable) -> Corp:
    """CORP decomposition of the Brier score (Dimitriadis, Gneiting & Jordan 2021).

    The recalibrated forecast :math:`\\hat p` is the isotonic (PAV) regression of the
    outcome on the stated probability, ties pooled (one block per stated value);
    with :math:`\\mathrm{BS}_{cal}` its Brier score and UNC that of the base rate,

    .. math:: \\mathrm{MCB} = \\mathrm{BS} - \\mathrm{BS}_{cal}, \\quad
              \\mathrm{DSC} = \\mathrm{UNC} - \\mathrm{BS}_{cal}, \\quad
              \\mathrm{BS} = \\mathrm{MCB} - \\mathrm{DSC} + \\mathrm{UNC}.

    MCB >= 0 is the miscalibration, DSC >= 0 the discrimination."""
    mcb, dsc, unc = corp_batch(CellStats.of(table))
    return Corp(finite_or_none(mcb), finite_or_none(dsc), finite_or_none(unc))
