"""Agreement between the file's outcomes and the reviewers, and between reviewers.

Contract
--------
- :func:`cohen_kappa` is Cohen's (1960) kappa of two raters,
  ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the share of items they agree on and
  ``p_e = sum_c a_c b_c`` the agreement expected by chance from each rater's share
  ``a_c, b_c`` of category ``c``. It equals :func:`sklearn.metrics.cohen_kappa_score`
  (tested), including where it is undefined: ``p_e = 1`` (both raters used one and the
  same category for every item) or no items give ``nan``.
- :func:`agreement` compares the file's outcome (the judge's verdict per the key) with
  every reviewer's current label (one pair per item and reviewer), with the 2x2 confusion
  matrix and an interval for kappa (:func:`kappa_interval`: the equal-tailed interval of
  kappa under a Bayesian bootstrap of the items with a Jeffreys prior on the four cells,
  so an item two reviewers labelled moves as one); and, for items with at least two
  reviewers, the kappa of the first two reviewers' labels (in the order their labels
  first appear).
- :func:`fleiss_kappa`, :func:`krippendorff_alpha` and :func:`percent_agreement` measure
  the agreement of any number of reviewers from an item-by-category count matrix
  (``counts[i, c]``: how many of item ``i``'s labels say category ``c``; missing labels
  are simply not counted, so items may have different numbers of labels). Only items
  with at least two labels carry information on agreement; the others are left out of
  all three. With ``m_i`` labels of item ``i`` and ``n_ic`` of them in category ``c``:

  * percent agreement: ``P = mean_i P_i``, ``P_i = sum_c n_ic (n_ic - 1) / (m_i (m_i - 1))``,
    the share of agreeing pairs of labels of an item, averaged over items;
  * Fleiss' kappa (Fleiss 1971; with unequal ``m_i`` the generalisation of Gwet 2014,
    "Handbook of Inter-Rater Reliability", 4th ed., ch. 2): ``(P - P_e) / (1 - P_e)``,
    ``P_e = sum_c pi_c^2``, ``pi_c = mean_i n_ic / m_i``; with equal ``m_i`` it is
    :func:`statsmodels.stats.inter_rater.fleiss_kappa` (tested); ``nan`` where
    ``P_e = 1`` (one category only);
  * Krippendorff's alpha, nominal (Krippendorff 2011, "Computing Krippendorff's
    alpha-reliability"): ``1 - (n - 1) D / (n^2 - sum_c n_c^2)`` with
    ``D = sum_i sum_{c != k} n_ic n_ik / (m_i - 1)`` the disagreeing pairable values,
    ``n_c = sum_i n_ic`` and ``n = sum_c n_c`` over the pairable items; it equals the
    ``krippendorff`` package (tested); ``nan`` where one category holds every value.

  Every statistic is a ratio of sums over items of per-item quantities
  (:func:`item_features`), so a bootstrap resample is a weighted sum (:func:`stat_rows`),
  evaluated for all resamples at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from calib.bootstrap import percentile_interval
from calib.errors import CalibError
from calib.estimates import NONE, Estimate
from calib.labels.outcomes import votes
from calib.labels.records import Label
from calib.numbers import finite_or_none
from calib.rows import Judgments


def cohen_kappa(a: Sequence[Any] | np.ndarray, b: Sequence[Any] | np.ndarray) -> float:
    """Cohen's kappa of two raters' labels of the same items (any hashable labels).

    ``nan`` when it is undefined: no items, or chance agreement ``p_e = 1`` (both raters
    gave every item one and the same label), as scikit-learn returns. A rater who used one
    label while the other used two has ``p_e < 1`` and a kappa of 0 or below.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 1:
        raise CalibError(f"kappa needs two equally long lists of labels, got {a.shape} and {b.shape}")
    if a.size == 0:
        return float("nan")
    cats, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    k = cats.size
    cm = np.bincount(codes[: a.size] * k + codes[a.size :], minlength=k * k).reshape(k, k)
    return float(_kappa_cells(cm.reshape(1, -1).astype(np.float64), k)[0])


def _kappa_cells(cells: np.ndarray, k: int) -> np.ndarray:
    """Kappa per row of ``cells`` (shape ``(reps, k*k)``: a flattened confusion matrix,
    first rater by row); ``nan`` where ``p_e = 1`` or a row is empty."""
    cm = cells.reshape(-1, k, k)
    n = cm.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.trace(cm, axis1=1, axis2=2) / n
        pe = np.sum(cm.sum(axis=2) * cm.sum(axis=1), axis=1) / n**2
        # p_e computed from counts is exactly 1 only when one category holds every label of both raters
        kappa = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
    return kappa


#: Prior weight on each cell of the 2x2 table in :func:`kappa_interval` (Jeffreys: 1/2).
KAPPA_PRIOR = 0.5
#: :attr:`Estimate.method` of :func:`kappa_interval`.
KAPPA_BOOTSTRAP = "Bayesian bootstrap of the items, Jeffreys prior on the four cells"


def kappa_interval(patterns: np.ndarray, counts: np.ndarray, reps: int, seed: int, level: float
                   ) -> tuple[float | None, float | None]:
    """Interval for Cohen's kappa of a 2x2 table from item ``patterns`` (distinct per-item
    cell counts, shape ``(P, 4)``) and ``counts`` (items with each).

    The ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of kappa over ``reps`` draws of
    the cell shares ``g @ [patterns; I_4]``, ``g ~ Dirichlet(counts, 1/2, 1/2, 1/2, 1/2)``:
    the Bayesian bootstrap of the items (Rubin 1981; whole items, so an item with two
    reviewers moves as one) with :data:`KAPPA_PRIOR` = 1/2 pseudo-items in each cell
    (Jeffreys). With one label per item it is the posterior of the cell shares under the
    Jeffreys prior, ``Dirichlet(n_c + 1/2)``. Every draw has all four cells positive, so
    kappa is defined in every draw and the interval always exists. The percentile
    bootstrap used before dropped the resamples with an empty margin (kappa undefined):
    at 30 labels it gave no interval in 1-23% of datasets and covered 86-95% when it did;
    this covers 93-96% (``bench/sim_coverage.py --only kappa``). An end beyond the
    estimate is moved to it (kappa 1 when no item is disputed)."""
    m = float(counts.sum())
    if reps <= 0 or m == 0:
        return None, None
    pats = np.vstack([patterns, np.eye(4)])
    conc = np.r_[counts, np.full(4, KAPPA_PRIOR)]
    g = np.random.default_rng(seed).gamma(conc, size=(reps, conc.size))
    lo, hi = percentile_interval(_kappa_cells(g @ pats, 2), level)
    est = float(_kappa_cells((counts @ patterns)[None, :], 2)[0])
    if lo is None or hi is None or not np.isfinite(est):
        return lo, hi
    # an end moved out to the estimate where it lies beyond it (kappa 1 with no disagreement:
    # every draw is below 1), as Brown, Cai & DasGupta (2001) set the Jeffreys binomial
    # interval's end to 1 at x = n
    return min(lo, est), max(hi, est)


def item_features(counts: np.ndarray) -> np.ndarray:
    """Per item, the sums the agreement statistics are ratios of.

    ``counts`` has shape ``(items, k)``. Columns of the result: ``[pairable, P_i,
    n_i1/m_i .. n_ik/m_i, D_i, n_i1 .. n_ik]`` (``pairable`` 1 where ``m_i >= 2``; every
    column 0 for the other items, which carry no information on agreement)."""
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 2:
        raise CalibError(f"counts must be a matrix of items by categories, got shape {c.shape}")
    m = c.sum(axis=1)
    ok = m >= 2
    mm = np.where(ok, m, 2.0)
    pairs = (c * (c - 1)).sum(axis=1)
    agree = pairs / (mm * (mm - 1))
    disagree = (m * m - (c * c).sum(axis=1)) / (mm - 1)  # sum over c != k of n_ic n_ik
    out = np.column_stack([np.ones_like(m), agree, c / mm[:, None], disagree, c])
    out[~ok] = 0.0
    return out


def stat_rows(sums: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """Percent agreement, Fleiss' kappa and Krippendorff's alpha per row of ``sums``
    (shape ``(reps, 3 + 2k)``: sums of :func:`item_features` rows); ``nan`` where
    undefined."""
    s = np.atleast_2d(np.asarray(sums, dtype=np.float64))
    n_items = s[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = s[:, 1] / n_items
        pi = s[:, 2 : 2 + k] / n_items[:, None]
        pe = (pi * pi).sum(axis=1)
        fleiss = np.where((n_items > 0) & (pe < 1 - 1e-12), (p - pe) / (1 - pe), np.nan)
        nc = s[:, 3 + k : 3 + 2 * k]
        n = nc.sum(axis=1)
        expected = n * n - (nc * nc).sum(axis=1)
        alpha = np.where(expected > 1e-9 * np.maximum(n * n, 1), 1 - (n - 1) * s[:, 2 + k] / expected, np.nan)
    return {"percent": np.where(n_items > 0, p, np.nan), "fleiss": fleiss, "alpha": alpha}


def _one(counts: np.ndarray, name: str) -> float:
    c = np.asarray(counts, dtype=np.float64)
    f = item_features(c)
    return float(stat_rows(f.sum(axis=0)[None, :], c.shape[1])[name][0])


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa of an item-by-category count matrix (see the module); ``nan`` when
    undefined (no item with two labels, or one category only)."""
    return _one(counts, "fleiss")


def krippendorff_alpha(counts: np.ndarray) -> float:
    """Krippendorff's alpha, nominal, of an item-by-category count matrix (see the
    module); ``nan`` when undefined (no pairable values, or one category only)."""
    return _one(counts, "alpha")


def percent_agreement(counts: np.ndarray) -> float:
    """The share of agreeing pairs of labels per item, averaged over the items with at
    least two labels (see the module); ``nan`` without such items."""
    return _one(counts, "percent")


def _patterns(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if cells.size == 0:
        return np.zeros((0, 4)), np.zeros(0)
    pats, counts = np.unique(cells, axis=0, return_counts=True)
    return pats.astype(np.float64), counts.astype(np.float64)


@dataclass(frozen=True)
class Agreement:
    """The file's outcomes against the reviewers' labels.

    Attributes
    ----------
    pairs:
        (item, reviewer) pairs compared (current labels of items in the file).
    items:
        Distinct items among them.
    kappa:
        Cohen's kappa of file outcome vs reviewer label (value ``None`` when undefined:
        see :func:`cohen_kappa`) with its interval (:func:`kappa_interval`; none where
        kappa is undefined or ``reps`` is 0), an :class:`~calib.estimates.Estimate`.
    agreement:
        Share of pairs on which the file and the reviewer agree.
    confusion:
        ``((both right, file right and reviewer wrong), (file wrong and reviewer
        right, both wrong))``: rows the file's outcome, columns the reviewer's label.
    reviewer_items:
        Items with at least two reviewers' labels.
    reviewer_kappa:
        Kappa of the first two reviewers of those items with its interval (as
        ``kappa``), ``None`` without such items.
    reps, seed, level:
        The bootstrap.
    unknown:
        Labels whose item is not in the file (not compared).
    """

    pairs: int
    items: int
    kappa: Estimate
    agreement: float | None
    confusion: tuple[tuple[int, int], tuple[int, int]]
    reviewer_items: int
    reviewer_kappa: Estimate | None
    reps: int
    seed: int
    level: float
    unknown: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "items": self.items,
            "kappa": self.kappa.value,
            "kappa_ci": self.kappa.to_list(),
            "agreement": self.agreement,
            "confusion": {
                "rows": "file outcome (right, wrong)",
                "columns": "reviewer label (right, wrong)",
                "counts": [list(r) for r in self.confusion],
            },
            "reviewer_items": self.reviewer_items,
            "reviewer_kappa": None if self.reviewer_kappa is None else self.reviewer_kappa.value,
            "reviewer_kappa_ci": None if self.reviewer_kappa is None else self.reviewer_kappa.to_list(),
            "reps": self.reps,
            "seed": self.seed,
            "level": self.level,
            "unknown": self.unknown,
            "sentence": self.sentence(),
        }

    def sentence(self) -> str:
        """The agreement in words."""
        if self.pairs == 0:
            return "No label matches an item of the file: no agreement to report."
        (rr, rw), (wr, ww) = self.confusion
        lvl = f"{self.level:.0%}"
        text = f"File outcome vs reviewers on {self.pairs:,} labels of {self.items:,} items: " + (
            "Cohen's kappa undefined (both said one and the same verdict for every item)"
            if self.kappa.value is None
            else f"Cohen's kappa {self.kappa.value:.2f}" + _ci_words(self.kappa, lvl)
        )
        text += (
            f"; they agree on {self.agreement:.1%} (both right {rr:,}, both wrong {ww:,}; the file right and the "
            f"reviewer wrong {rw:,}, the reverse {wr:,})."
        )
        rk = self.reviewer_kappa
        if self.reviewer_items and rk is not None:
            k = "undefined" if rk.value is None else f"{rk.value:.2f}"
            text += (
                f" Between reviewers, on the {self.reviewer_items:,} items two labelled: kappa {k}"
                + _ci_words(rk, lvl)
                + "."
            )
        return text


def _ci_words(e: Estimate, level: str) -> str:
    if e.lo is None or e.hi is None:
        return ""
    return f" ({level} interval {e.lo:.2f} to {e.hi:.2f})"


def agreement(
    rows: Judgments,
    labels: Sequence[Label],
    *,
    reps: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    dataset: str | None = None,
) -> Agreement:
    """Cohen's kappa, the confusion matrix and inter-reviewer kappa (see the module).

    Parameters
    ----------
    rows:
        The file's rows (their ``correct`` is the file's outcome).
    labels:
        Labels, history included (each reviewer's current label is used).
    reps, seed, level:
        The item bootstrap of the kappa intervals (``reps=0``: none).
    dataset:
        The dataset the labels are of (default: the one the labels name).
    """
    if not 0 < level < 1:
        raise CalibError(f"the interval level must be between 0 and 1, got {level!r}")
    v = votes(rows, labels, dataset=dataset)
    file_ok = np.asarray(rows.correct, dtype=bool)[v.row]
    human_ok = np.asarray([lab.correct for lab in v.labels], dtype=bool)
    # cell per pair: 0 both right, 1 file right/reviewer wrong, 2 file wrong/reviewer right, 3 both wrong
    cell = 2 * (~file_ok).astype(np.int64) + (~human_ok).astype(np.int64)
    item_of = np.searchsorted(v.items, v.row)
    per_item = np.zeros((v.items.size, 4), dtype=np.int64)
    np.add.at(per_item, (item_of, cell), 1)
    total = per_item.sum(axis=0)
    kappa = _kappa_cells(total[None, :].astype(np.float64), 2)[0]
    ci = kappa_interval(*_patterns(per_item), reps, seed, level) if np.isfinite(kappa) else (None, None)
    rk, r_items = _reviewers(v.labels, v.row, reps, seed, level)
    return Agreement(
        pairs=int(cell.size),
        items=int(v.items.size),
        kappa=_kappa_estimate(finite_or_none(kappa), ci, level),
        agreement=finite_or_none(float(total[0] + total[3]) / cell.size) if cell.size else None,
        confusion=((int(total[0]), int(total[1])), (int(total[2]), int(total[3]))),
        reviewer_items=r_items,
        reviewer_kappa=rk,
        reps=int(reps),
        seed=int(seed),
        level=float(level),
        unknown=v.unknown,
    )


def _kappa_estimate(kappa: float | None, ci: tuple[float | None, float | None], level: float) -> Estimate:
    """Kappa with its :func:`kappa_interval` (``(None, None)``: none)."""
    if ci[0] is None or ci[1] is None:
        return Estimate(kappa, ci[0], ci[1], None, NONE)
    return Estimate(kappa, ci[0], ci[1], level, KAPPA_BOOTSTRAP)


def _reviewers(labels: tuple[Label, ...], row: np.ndarray, reps: int, seed: int, level: float
               ) -> tuple[Estimate | None, int]:
    """Kappa of the first two reviewers of each item with two or more, with its interval,
    and how many such items (``None, 0`` without any)."""
    first: dict[int, list[bool]] = {}
    for lab, i in zip(labels, row, strict=True):
        first.setdefault(int(i), []).append(lab.correct)
    two = [v[:2] for v in first.values() if len(v) >= 2]
    if not two:
        return None, 0
    a = np.array([p[0] for p in two], dtype=bool)
    b = np.array([p[1] for p in two], dtype=bool)
    cells = np.zeros((a.size, 4), dtype=np.int64)
    cells[np.arange(a.size), 2 * (~a).astype(np.int64) + (~b).astype(np.int64)] = 1
    k = finite_or_none(_kappa_cells(cells.sum(axis=0)[None, :].astype(np.float64), 2)[0])
    ci = (None, None) if k is None else kappa_interval(*_patterns(cells), reps, seed + 1, level)
    return _kappa_estimate(k, ci, level), int(a.size)
