"""Several models side by side: one row per dataset, the figures of the blog post's table.

| Model | Right | Mean stated | Said 90 or more | Right when it did | Calibration error | Brier vs constant |

Each row is computed from that dataset's count table with the metrics of
:mod:`calib.metrics` (so the figures equal those of ``calib audit`` on each file);
the calibration error and the two Brier scores carry a percentile bootstrap interval
(:func:`calib.bootstrap.resample_counts`, seeded, each model with the same seed; the
Brier intervals equal the audit's ``brier_ci`` and ``brier_base_rate_ci``).
The table itself, formatted, is :func:`calib.present.tables.comparison_table`.
Which forecast wins on Brier is decided, as in ``calib audit``, by the paired test
:func:`calib.metrics.brier_vs_constant` at ``1 - level``
(:func:`calib.metrics.brier_winner`), never by the point estimates alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from calib import metrics
from calib.bootstrap import ece_interval, percentile_interval, resample_counts
from calib.dataset import Dataset
from calib.errors import CalibError
from calib.estimates import NONE, PERCENTILE, POPULATION_ECE, POPULATION_ECE_NOTE, Estimate
from calib.metrics.cells import accuracy_batch
from calib.numbers import finite_or_none
from calib.settings import BINS, REPS
from calib.table import CountTable


@dataclass(frozen=True)
class ModelRow:
    """One model's line of the comparison.

    Attributes
    ----------
    model:
        Dataset name.
    n:
        Answers.
    accuracy:
        Share right.
    mean_stated:
        Mean stated confidence on the model's own stated scale (88.5 on 0-100).
    mean_confidence:
        The same as a probability.
    scale:
        Name of the stated scale.
    at_stated:
        The stated value the "at or above" columns use (90 on 0-100).
    share_at:
        Share of answers stated at or above :attr:`at_stated`.
    right_when_at:
        Accuracy among those answers (``None`` when there are none).
    ece:
        Calibration error (ECE, scheme :attr:`ece_scheme`) with the audit's interval for
        the population ECE, an :class:`~calib.estimates.Estimate`.
    brier, brier_constant:
        Brier score of the stated confidence and of the constant forecast (the
        model's own hit rate), each an :class:`~calib.estimates.Estimate` with its
        percentile bootstrap interval (the same resamples as the ECE's), ``(None,
        None)`` without resamples.
    brier_winner:
        ``"constant"`` or ``"stated"`` when the paired test of the two
        (:func:`calib.metrics.brier_vs_constant`) finds a difference at ``1 - level``,
        ``"neither"`` when it does not, ``None`` when undefined
        (:func:`calib.metrics.brier_winner`, as in ``calib audit``).
    constant_wins:
        True when the constant wins by that test, False when the stated confidence
        does, ``None`` otherwise.
    brier_p_value:
        Two-sided p-value of that test.
    ece_scheme:
        ``values``, ``width`` or ``mass``.
    """

    model: str
    n: int
    accuracy: float | None
    mean_stated: float | None
    mean_confidence: float | None
    scale: str
    at_stated: float
    share_at: float | None
    right_when_at: float | None
    ece: Estimate
    brier: Estimate
    brier_constant: Estimate
    constant_wins: bool | None
    brier_p_value: float | None
    ece_scheme: str
    brier_winner: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model, "n": self.n, "accuracy": self.accuracy, "mean_stated": self.mean_stated,
            "mean_confidence": self.mean_confidence, "scale": self.scale, "at_stated": self.at_stated,
            "share_at": self.share_at, "right_when_at": self.right_when_at, "ece": self.ece.value,
            "ece_ci": self.ece.to_list(), "brier": self.brier.value, "brier_ci": self.brier.to_list(),
            "brier_constant": self.brier_constant.value, "brier_constant_ci": self.brier_constant.to_list(),
            "constant_wins": self.constant_wins, "brier_winner": self.brier_winner,
            "brier_p_value": self.brier_p_value,
            "ece_scheme": self.ece_scheme,
        }


@dataclass(frozen=True)
class Comparison:
    """The comparison table (:func:`compare`)."""

    rows: tuple[ModelRow, ...]
    at: float
    reps: int
    seed: int
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "reps": self.reps, "seed": self.seed, "level": self.level,
                "models": [r.to_dict() for r in self.rows]}


def _ece_ci(table: CountTable, scheme: str, bins: int, reps: int, seed: int, level: float) -> tuple[float | None, float | None]:
    """The audit's ``ece_ci`` (:func:`calib.bootstrap.ece_interval`), with the kernels of :mod:`calib.metrics`.

    The same resamples (:func:`calib.bootstrap.resample_counts` of the group-pooled
    table's coarse table, same seed), kernels and exact-minus-coarse shift as
    :func:`calib.bootstrap.bootstrap`, so the interval equals the audit's; only the
    binned errors are evaluated per resample."""
    if reps <= 0 or table.total == 0:
        return None, None
    t = metrics.single(table)
    c = t.coarse()
    n_b, k_b = resample_counts(c, reps, seed)
    s = metrics.CellStats.resampled(c, n_b, k_b)
    fixed = None if scheme == "mass" else metrics.bin_index(c, scheme, bins)
    ids, nbins = metrics.bin_ids_batch(s, scheme, fixed, bins)
    e, _mce, _l2, deb = metrics.binned_errors_batch(s, ids, nbins)
    exact_e, exact_d = metrics.ece(t, scheme, bins), metrics.ece_debiased(t, scheme, bins)
    if c is not t:  # move the resamples onto the exact point estimates (see calib.bootstrap)
        rough_e, rough_d = metrics.ece(c, scheme, bins), metrics.ece_debiased(c, scheme, bins)
        e = e + (exact_e - rough_e if exact_e is not None and rough_e is not None else 0.0)
        deb = deb + (exact_d - rough_d if exact_d is not None and rough_d is not None else 0.0)
    return ece_interval(e, deb, exact_d, level)


def _brier_cis(table: CountTable, reps: int, seed: int, level: float) -> tuple[tuple, tuple]:
    """Percentile bootstrap intervals of the Brier score and of the constant forecast's
    (``a (1 - a)``, ``a`` the resample's hit rate), from the resamples of :func:`_ece_ci`
    (the coarse table's, moved onto the exact point estimates the same way)."""
    if reps <= 0 or table.total == 0:
        return (None, None), (None, None)
    c = table.coarse()
    n_b, k_b = resample_counts(c, reps, seed)
    s = metrics.CellStats.resampled(c, n_b, k_b)
    bs = metrics.brier_batch(s)
    acc = accuracy_batch(s)
    if c is not table:
        exact, rough = metrics.brier(table), metrics.brier(c)
        bs = bs + (exact - rough if exact is not None and rough is not None else 0.0)
    return percentile_interval(bs, level), percentile_interval(acc * (1 - acc), level)


def model_row(
    name: str, table: CountTable, *, at: float = 0.9, scheme: str = "auto", bins: int = BINS,
    reps: int = REPS, seed: int = 0, level: float = 0.95,
) -> ModelRow:
    """One model's figures (see :class:`ModelRow`); groups are pooled."""
    t = metrics.single(table)
    s = t.scale
    at_stated = float(s.to_stated(at))
    # 0.9 * 100 is 90.00000000000001 in floating point: compare with a tolerance
    tol = 1e-9 * (s.hi - s.lo)
    m = t.value >= at_stated - tol
    n_at = int(t.n[m].sum())
    mc = metrics.mean_confidence(t)
    scheme = metrics.resolve_scheme(t, scheme)
    e = metrics.ece(t, scheme, bins)
    lo, hi = _ece_ci(t, scheme, bins, reps, seed, level) if e is not None else (None, None)
    bs, base = metrics.brier(t), metrics.brier_base_rate(t)
    bs_ci, base_ci = _brier_cis(t, reps, seed, level)
    test = metrics.brier_vs_constant(t)
    winner = metrics.brier_winner(test, 1 - level)
    at, how = (level, PERCENTILE) if reps > 0 else (None, NONE)
    return ModelRow(
        model=name, n=t.total, accuracy=metrics.accuracy(t),
        mean_stated=None if mc is None else float(s.to_stated(mc)), mean_confidence=mc, scale=s.name,
        at_stated=round(at_stated, 9), share_at=n_at / t.total if t.total else None,
        right_when_at=int(t.correct[m].sum()) / n_at if n_at else None,
        ece=Estimate.of(e, (lo, hi), at, POPULATION_ECE, POPULATION_ECE_NOTE) if reps > 0 else Estimate.point(e),
        brier=Estimate.of(bs, bs_ci, at, how), brier_constant=Estimate.of(base, base_ci, at, how),
        constant_wins={"constant": True, "stated": False}.get(winner or ""),
        brier_p_value=finite_or_none(test.p_value), ece_scheme=scheme, brier_winner=winner,
    )


def compare(
    datasets: Sequence[Dataset] | Mapping[str, CountTable | Dataset], *, at: float = 0.9,
    scheme: str = "auto", bins: int = BINS, reps: int = REPS, seed: int = 0, level: float = 0.95,
) -> Comparison:
    """One row per model.

    Parameters
    ----------
    datasets:
        Datasets (named by :attr:`Dataset.name`) or a mapping name -> table/dataset.
    at:
        The probability the "said at or above" columns use (0.9: a stated 90 on
        0-100, 0.9 on 0-1, 9.1 on 1-10).
    scheme, bins:
        ECE binning (``"auto"``: per value for at most 101 distinct values, else
        equal width), resolved per model.
    reps, seed, level:
        Bootstrap of the ECE interval (0: none); ``1 - level`` is also the level of
        the paired Brier test.
    """
    if not 0 <= at <= 1:
        raise CalibError(f"'at' is a probability between 0 and 1, got {at!r}")
    items: list[tuple[str, CountTable]]
    if isinstance(datasets, Mapping):
        items = [(str(k), v.table if isinstance(v, Dataset) else v) for k, v in datasets.items()]
    else:
        items = [(d.name, d.table) for d in datasets]
    if not items:
        raise CalibError("nothing to compare: give at least one file")
    rows = tuple(
        model_row(name, t, at=at, scheme=scheme, bins=bins, reps=reps, seed=seed, level=level) for name, t in items
    )
    return Comparison(rows=rows, at=float(at), reps=int(reps), seed=int(seed), level=float(level))
