"""Binned calibration errors and their binning schemes.

The schemes (:data:`calib.settings.SCHEMES`): one bin per stated value, equal-width
bins (right-closed, as Guo et al. 2017) and equal-mass bins of whole cells; ``"auto"``
is resolved by :func:`choose_scheme`. The errors: the ECE and MCE (Naeini et al. 2015;
Guo et al. 2017), the debiased L2 error (Kumar, Liang & Ma 2019) and the debiased ECE,
one batch kernel for all four (:func:`binned_errors_batch`), and the table of bins
(:func:`bin_table`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from calib.estimates import WILSON, Estimate
from calib.metrics.cells import CellStats, safe_div, single
from calib.metrics.values import wilson_interval
from calib.numbers import finite_or_none
from calib.settings import BINS, LEVEL, SCHEMES
from calib.table import GRID, MAX_EXACT_CELLS, CountTable


@dataclass(frozen=True)
class BinRow:
    """One bin of a binned calibration error.

    ``lo``/``hi`` are the bin's edges on the stated scale (for "values" and "mass",
    the smallest and largest stated value in the bin); ``mean_prob`` the mean stated
    probability of its rows; ``hit_rate`` an :class:`~calib.estimates.Estimate` with its
    Wilson interval.
    """

    index: int
    lo: float
    hi: float
    n: int
    correct: int
    mean_prob: float
    hit_rate: Estimate
    gap: float

    def to_dict(self) -> dict[str, object]:
        return {
            "index": self.index, "lo": self.lo, "hi": self.hi, "n": self.n,
            "correct": self.correct, "mean_prob": self.mean_prob, "hit_rate": self.hit_rate.value,
            "hit_rate_ci": self.hit_rate.to_list(), "gap": self.gap,
        }


#: "auto" bins per stated value only when the values repeat: at least this many answers
#: per distinct value on average (see :func:`choose_scheme`).
VALUE_BIN_MEAN = 20


@dataclass(frozen=True)
class SchemeChoice:
    """The binning scheme of the binned errors and why it was chosen (``why``: a
    sentence for the output)."""

    scheme: str
    why: str


def choose_scheme(table: CountTable, scheme: str = "auto") -> SchemeChoice:
    """Resolve ``"auto"``: one bin per stated value for a *stated scale*, else
    equal-width bins.

    A stated scale is at most :data:`~calib.table.MAX_EXACT_CELLS` (101) distinct
    values, each used on average by at least :data:`VALUE_BIN_MEAN` (20) answers.
    Per-value bins of fewer answers measure mostly noise: the plug-in error of a
    bin of ``m`` answers is biased upward by about ``sqrt(2 p (1 - p) / (pi m))``
    (the mean of a folded normal), 0.07 at ``m = 20``, ``p = 0.8``, and 0.32 for a
    value used once, where ``|p - y|`` is the whole error and the Murphy resolution
    equals the uncertainty. Continuous scores (log-probs) and sparse uses of a
    0-100 scale therefore get equal-width bins. An explicit scheme is kept.
    """
    if scheme not in ("auto", *SCHEMES):
        from calib.errors import CalibError

        raise CalibError(f"unknown binning scheme {scheme!r}; choose one of auto, {', '.join(SCHEMES)}")
    if scheme != "auto":
        return SchemeChoice(scheme, f"{scheme} bins, as asked")
    t = single(table)
    used = int(np.count_nonzero(t.n))
    mean = t.total / used if used else 0.0
    if t.pooled:
        return SchemeChoice("width", "equal-width bins: the values were pooled on a grid")
    if used > MAX_EXACT_CELLS:
        return SchemeChoice("width", f"equal-width bins: {used:,} distinct values (a continuous score; "
                            f"one bin per value needs at most {MAX_EXACT_CELLS})")
    if mean < VALUE_BIN_MEAN:
        return SchemeChoice("width", f"equal-width bins: {used} distinct values used {mean:.1f} times each "
                            f"on average (one bin per value needs {VALUE_BIN_MEAN}: fewer is mostly noise)")
    return SchemeChoice("values", f"one bin per stated value: {used} distinct values, used {mean:.0f} "
                        "times each on average")


def resolve_scheme(table: CountTable, scheme: str = "auto") -> str:
    """The scheme of :func:`choose_scheme`."""
    return choose_scheme(table, scheme).scheme


def _exact_prob(table: CountTable, i: int) -> Fraction:
    """Cell ``i``'s stated probability as an exact rational.

    An unpooled value is read as the shortest decimal that prints as it (what the
    file said: ``0.3`` is 3/10, not the binary double nearest to it); a pooled cell
    is its grid point ``i / 1000``."""
    s = table.scale
    v = float(table.value[i])
    if table.pooled:
        return Fraction(int(np.rint(float(s.to_prob(v)) / GRID)), round(1 / GRID))
    lo, hi = Fraction(repr(float(s.lo))), Fraction(repr(float(s.hi)))
    return (Fraction(repr(v)) - lo) / (hi - lo)


def width_bins(table: CountTable, bins: int = BINS) -> np.ndarray:
    """Equal-width bin of each cell, exact.

    Bins are right-closed, ``(j/B, (j+1)/B]`` in probability, and the first bin
    also holds 0: ``[0, 1/B]`` (the convention of Guo et al. 2017 and of the
    reference notebook). The bin is ``ceil(p B) - 1``: in floating point where
    ``p B`` is more than 1e-9 from an integer, else on :func:`_exact_prob`, so a
    stated 0.3 (or 30 on 0-100) is always in the bin ending at 0.3, never pushed
    over the edge by rounding (``0.3 * 10`` is ``3.0000000000000004``). Only the
    cells next to an edge are read as rationals (a million continuous cells cost
    a few vectorised passes).
    """
    check_bins(bins)
    t = single(table)
    q = np.asarray(t.scale.to_prob(t.value), dtype=np.float64).reshape(-1) * bins
    out = np.ceil(q).astype(np.int64) - 1
    for i in np.flatnonzero(np.abs(q - np.rint(q)) <= 1e-9 * bins):
        out[i] = math.ceil(_exact_prob(t, int(i)) * bins) - 1
    return np.clip(out, 0, bins - 1)


def mass_bins(n: np.ndarray, bins: int = BINS) -> np.ndarray:
    """Equal-mass bin of each cell, from the counts alone (shape ``(..., cells)``).

    The edges are the lower quantiles ``q_j`` (the ``ceil(j N / B)``-th smallest
    stated value, ``j = 1..B-1``) and bins are right-closed, ``(q_{j-1}, q_j]``, as
    for equal width. A cell (every answer with one stated value) is never split, so
    bins hold *about* ``N / B`` answers and some are empty when one value holds
    more than ``1/B`` of the answers. With ``F`` the number of answers in earlier
    cells this is the integer ``min(B - 1, floor(F B / N))``: independent of row
    order and of floating point.
    """
    check_bins(bins)
    n = np.asarray(n, dtype=np.int64)
    before = np.cumsum(n, axis=-1) - n
    N = np.maximum(n.sum(axis=-1, keepdims=True), 1)
    return np.minimum(bins - 1, before * bins // N)


def check_bins(bins: int) -> None:
    """Raise :class:`~calib.errors.CalibError` unless ``bins`` is a positive integer."""
    if int(bins) != bins or bins < 1:
        from calib.errors import CalibError

        raise CalibError(f"the number of bins must be a positive integer, got {bins!r}")


def bin_index(table: CountTable, scheme: str = "auto", bins: int = BINS) -> np.ndarray:
    """Bin of each cell of ``single(table)`` under ``scheme`` (see :func:`resolve_scheme`)."""
    t = single(table)
    scheme = resolve_scheme(t, scheme)
    if scheme == "values":
        return np.arange(t.cells, dtype=np.int64)
    if scheme == "width":
        return width_bins(t, bins)
    return mass_bins(t.n, bins)


def bin_sums(ids: np.ndarray, nbins: int, *arrays: np.ndarray) -> list[np.ndarray]:
    """Sum ``(reps, cells)`` arrays into ``(reps, nbins)`` by bin id (shared or per rep)."""
    reps = arrays[0].shape[0]
    ids = np.broadcast_to(ids, arrays[0].shape)
    flat = (ids + nbins * np.arange(reps)[:, None]).ravel()
    return [np.bincount(flat, weights=a.ravel().astype(np.float64), minlength=reps * nbins).reshape(reps, nbins) for a in arrays]


def binned_errors_batch(
    s: CellStats, ids: np.ndarray, nbins: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """ECE, MCE, the debiased L2 error and the debiased ECE per rep, over bins of whole cells.

    With ``n_b``, ``k_b`` and ``P_b`` the answers, right answers and summed stated
    probability of bin ``b`` (``ids`` gives each cell's bin, shared by all reps or
    one row per rep):

    - ECE ``= (1/N) sum_b |P_b - k_b|`` (Naeini et al. 2015; Guo et al. 2017);
    - MCE ``= max_b |P_b - k_b| / n_b`` over non-empty bins;
    - debiased L2 ``= sqrt(max(0, (1/N) sum_b n_b [(P_b - k_b)^2 / n_b^2 -
      ybar_b (1 - ybar_b) / (n_b - 1)]))`` over bins with ``n_b >= 2``
      (Kumar, Liang & Ma 2019);
    - debiased ECE ``= (1/N) sum_b n_b sqrt(max(0, d_b^2 - v_b))`` over bins with
      ``n_b >= 2``, where ``d_b = (P_b - k_b) / n_b`` and ``v_b = (S_b - n_b d_b^2) /
      (n_b (n_b - 1))`` is the unbiased estimate of ``Var(d_b)`` from ``S_b = sum_{i in b}
      (p_i - y_i)^2 = sum p^2 - 2 sum p y + k`` (see :func:`ece_debiased`).

    Returns four arrays of shape ``(reps,)``.
    """
    nb, kb, pb, sb = bin_sums(ids, nbins, s.n, s.k, s.ps, s.sq - 2 * s.py + s.k)
    N = s.total.astype(np.float64)
    diff = pb - kb
    ece = safe_div(np.abs(diff).sum(axis=-1), N)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(nb > 0, np.abs(diff) / np.maximum(nb, 1), -np.inf)
        mce = np.where(N > 0, gap.max(axis=-1), np.nan)
        ybar = kb / np.maximum(nb, 1)
        term = np.where(nb >= 2, (diff / np.maximum(nb, 1)) ** 2 - ybar * (1 - ybar) / np.maximum(nb - 1, 1), 0.0)
        d = diff / np.maximum(nb, 1)
        v = (sb - nb * d * d) / np.maximum(nb * (nb - 1), 1)
        excess = np.where(nb >= 2, np.sqrt(np.maximum(d * d - v, 0.0)), 0.0)
    sq = safe_div((nb * term).sum(axis=-1), N)
    return ece, mce, np.sqrt(np.maximum(sq, 0.0)), safe_div((nb * excess).sum(axis=-1), N)


def bin_ids_batch(s: CellStats, scheme: str, fixed: np.ndarray | None, bins: int) -> tuple[np.ndarray, int]:
    """Bin of each cell for :func:`binned_errors_batch`, and the number of bins.

    ``values`` and ``width`` bins depend only on the stated values, so they are
    computed once (``fixed`` = :func:`bin_index` of the table) and shared by every
    rep; ``mass`` bins depend on the counts and are recomputed per rep
    (:func:`mass_bins` of ``s.n``, shape ``(reps, cells)``).
    """
    if scheme == "mass":
        return mass_bins(s.n, bins), bins
    assert fixed is not None
    return fixed, int(fixed.max()) + 1 if fixed.size else 1


def ece(table: CountTable, scheme: str = "auto", bins: int = BINS) -> float | None:
    """Expected calibration error (Naeini et al. 2015; Guo et al. 2017).

    .. math:: \\mathrm{ECE} = \\sum_b \\frac{n_b}{N} \\left| \\bar p_b - \\bar y_b \\right|
              = \\frac{1}{N} \\sum_b \\Big| \\sum_{i \\in b} (p_i - y_i) \\Big|

    over the bins of ``scheme``: ``"values"`` (one bin per distinct stated value),
    ``"width"`` (:func:`width_bins`) or ``"mass"`` (:func:`mass_bins`). Exact on
    pooled tables for the bins as made of whole cells.

    Examples
    --------
    Four answers stated at 60 (two right) and four at 90 (three right): the gaps are
    |0.6 - 0.5| = 0.1 and |0.9 - 0.75| = 0.15, each on half the answers:

    >>> from calib.table import from_counts
    >>> ece(from_counts([60, 90], n=[4, 4], correct=[2, 3]), "values")
    0.125
    """
    t = single(table)
    return finite_or_none(_binned_table(t, scheme, bins)[0])


def mce(table: CountTable, scheme: str = "auto", bins: int = BINS) -> float | None:
    """Maximum calibration error: the largest ``|pbar_b - ybar_b|`` over non-empty bins
    (Naeini et al. 2015)."""
    return finite_or_none(_binned_table(single(table), scheme, bins)[1])


def ece_l2_debiased(table: CountTable, scheme: str = "auto", bins: int = BINS) -> float | None:
    """Debiased L2 calibration error (Kumar, Liang & Ma 2019, "Verified uncertainty
    calibration").

    .. math:: \\sqrt{\\max\\Big(0, \\sum_b \\frac{n_b}{N}\\Big[(\\bar p_b - \\bar y_b)^2 -
              \\frac{\\bar y_b (1 - \\bar y_b)}{n_b - 1}\\Big]\\Big)}

    The subtracted term removes the sampling noise the plug-in squared error adds;
    bins with fewer than 2 answers contribute 0, as in the authors' code.
    """
    return finite_or_none(_binned_table(single(table), scheme, bins)[2])


def ece_debiased(table: CountTable, scheme: str = "auto", bins: int = BINS) -> float | None:
    """ECE with each bin's sampling noise removed in quadrature.

    .. math:: \\mathrm{ECE}_{deb} = \\sum_b \\frac{n_b}{N} \\sqrt{\\max\\big(0,\\, d_b^2 - \\hat v_b\\big)},
              \\quad d_b = \\bar p_b - \\bar y_b, \\quad
              \\hat v_b = \\frac{\\sum_{i \\in b} (p_i - y_i)^2 - n_b d_b^2}{n_b (n_b - 1)}

    ``E[d_b^2] = delta_b^2 + Var(d_b)`` and ``v_b`` estimates ``Var(d_b)`` without
    bias, so each term estimates ``|delta_b|`` (the bin's true gap) with the noise
    that inflates the plug-in ``|d_b|`` taken out: the plug-in ECE of a calibrated
    judge with 7 stated values and 500 answers is about 0.03, this about 0.005
    (the squared-error analogue is :func:`ece_l2_debiased`, Kumar, Liang & Ma
    2019). It is biased *down* for small true gaps; :func:`calib.bootstrap.ece_interval`
    uses both to bound the population ECE. Bins with fewer than 2 answers add 0.
    """
    return finite_or_none(_binned_table(single(table), scheme, bins)[3])


def _binned_table(t: CountTable, scheme: str, bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    scheme = resolve_scheme(t, scheme)
    s = CellStats.of(t)
    fixed = None if scheme == "mass" else bin_index(t, scheme, bins)
    ids, nb = bin_ids_batch(s, scheme, fixed, bins)
    return binned_errors_batch(s, ids, nb)


def bin_table(table: CountTable, scheme: str = "auto", bins: int = BINS, level: float = LEVEL) -> tuple[BinRow, ...]:
    """The non-empty bins of ``scheme`` with their counts, hit rates and gaps."""
    t = single(table)
    scheme = resolve_scheme(t, scheme)
    if t.total == 0:
        return ()
    ids = bin_index(t, scheme, bins)
    nbins = int(ids.max()) + 1
    nb, kb, pb = (x[0] for x in bin_sums(ids, nbins, t.n[None, :], t.correct[None, :], (t.prob * t.n)[None, :]))
    lo, hi = wilson_interval(kb, nb, level)
    rows = []
    for b in np.flatnonzero(nb):
        if scheme == "width":
            e_lo, e_hi = t.scale.to_stated(b / bins), t.scale.to_stated((b + 1) / bins)
        else:
            inb = (ids == b) & (t.n > 0)
            e_lo, e_hi = t.value[inb].min(), t.value[inb].max()
        rows.append(BinRow(
            index=int(b), lo=float(e_lo), hi=float(e_hi), n=int(nb[b]), correct=int(kb[b]),
            mean_prob=float(pb[b] / nb[b]),
            hit_rate=Estimate(float(kb[b] / nb[b]), float(lo[b]), float(hi[b]), level, WILSON),
            gap=float((pb[b] - kb[b]) / nb[b]),
        ))
    return tuple(rows)
