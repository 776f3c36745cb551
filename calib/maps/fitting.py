""":func:`fit`: fit a recalibration map and score it honestly (in-sample, on a second file,
on an odd/even split or by k-fold cross-fitting), falling back to the base rate when the
map is useless; the result is a :class:`FitResult` (what ``calib fit --json`` prints).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from calib import metrics
from calib.dataset import Data, table_and_rows
from calib.errors import CalibError
from calib.maps.calibration_map import CalibrationMap, base_rate_map, json_number
from calib.maps.fitters import HIST_BINS, Fitted, fit_on_table, fit_softmax, nonempty_cells
from calib.maps.scoring import PAIR_GRID, Draws, Scored, Scores, score_all, scored, units
from calib.maps.splits import item_folds, row_order_halves, split_counts
from calib.numbers import finite_or_none
from calib.rows import Judgments
from calib.scale import CORRECTION, Scale
from calib.settings import BINS, LEVEL, METHODS, REPS, SCORINGS
from calib.table import CountTable, from_judgments


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
        """What ``calib fit --json`` prints (keys stable; see :mod:`calib.maps` for ``map``)."""
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


@dataclass(frozen=True)
class _Fitter:
    method: str
    softmax: bool
    correction: float
    bins: int
    scheme: str

    def __call__(self, table: CountTable, rows: Judgments | None) -> tuple[Fitted, CalibrationMap, float]:
        """Fit on one part: (fit as fitted, map to use, base rate of the part)."""
        t = nonempty_cells(table)
        if t.total == 0:
            raise CalibError("a part of the split has no rows to fit on: use fewer folds or more data")
        base = t.total_correct / t.total
        if self.softmax:
            assert rows is not None and rows.options is not None
            f = fit_softmax(rows.options)
        else:
            f = fit_on_table(t, self.method, correction=self.correction, bins=self.bins, scheme=self.scheme)
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
    level: float = LEVEL,
    correction: float = CORRECTION,
    bins: int = HIST_BINS,
    hist_scheme: str = "mass",
    ece_scheme: str = "auto",
    ece_bins: int = BINS,
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
        ``eval_data`` is given, else ``oddeven``). See :mod:`calib.maps`.
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
    scoring = _check_args(method, scoring, eval_data, level)
    job = _job(data, method, logits, _Fitter(method, False, correction, bins, hist_scheme), folds, seed)
    split = _SPLITS[scoring](job, eval_data)
    notes = _notes(split, job.fitter.softmax)
    if sum(int(p["n"].sum()) for p in split.parts) == 0:
        raise CalibError("the evaluation data has no rows to score the map on")
    sc = scored(split.parts, split.scale)
    if sc.coarse and reps > 0:
        notes.append(
            f"the intervals resample cells {PAIR_GRID:g} wide in probability (too many distinct "
            "probabilities for exact cells); point estimates are exact"
        )
    scheme = metrics.resolve_scheme(sc.sides["before"].table, ece_scheme)
    draws = score_all(sc, scheme=scheme, bins=ece_bins, reps=reps, seed=seed, level=level)
    verdict = _verdict(split, draws, method, correction)
    if verdict.useless and scoring != "insample" and verdict.a != verdict.b:
        notes.append(
            f"the map fitted for scoring ({scoring}) had Brier {verdict.a:.4f} on the evaluation data, "
            f"the base rate {verdict.b:.4f}"
        )
    return _result(job, split, sc, draws, verdict, scoring=scoring, notes=notes, ece=(scheme, int(ece_bins)),
                   reps=reps, level=level)


def _job(data: Data, method: str, logits: bool | None, fitter: _Fitter, folds: int, seed: int) -> _Job:
    """The fitting data, and whether ``temperature`` is the softmax temperature over the
    rows' option scores (when they have them, unless ``logits=False``)."""
    table, rows = table_and_rows(data, "the fitting data")
    if table.total == 0:
        raise CalibError("no rows to fit a recalibration map on")
    has_options = rows is not None and rows.options is not None
    if logits and not has_options:
        raise CalibError("temperature scaling on logits needs option log-probs (a log-prob file), not stated values")
    softmax = method == "temperature" and has_options and logits is not False
    return _Job(table, rows, replace(fitter, softmax=bool(softmax)), folds, seed)


def _result(job: _Job, split: _Split, sc: Scored, draws: Draws, verdict: _Verdict, *, scoring: str,
            notes: list[str], ece: tuple[str, int], reps: int, level: float) -> FitResult:
    """The :class:`FitResult`; with a useless map, "after" reports the base rate's scores
    (what is returned is then the base rate)."""
    softmax, folds = job.fitter.softmax, job.folds
    before = sc.sides["before"].table
    values = np.zeros(0) if softmax else np.unique(np.concatenate([split.fit_table.value, before.value]))
    after = "base" if verdict.useless else "after"
    # the map carries how it scored on held-out data, for calib transport to compare with later
    held = {"scoring": scoring, "n_eval": int(sc.pairs.n.sum()), "brier_stated": draws.scores("before").brier.value,
            "brier_mapped": draws.scores(after).brier.value, "brier_base_rate": draws.scores("base").brier.value}
    cmap = replace(verdict.cmap, values=values, held_out={k: finite_or_none(v) if k != "scoring" else v
                                                          for k, v in held.items()})
    return FitResult(
        method=job.fitter.method, scoring=scoring, map=cmap, fitted=replace(split.fit.cmap, values=values),
        useless=verdict.useless, reason=verdict.reason, notes=tuple(notes), n_fit=split.fit_table.total,
        n_eval=int(sc.pairs.n.sum()), folds=folds if scoring == "kfold" else None,
        before=draws.scores("before"), after=draws.scores(after), base_rate=draws.scores("base"),
        change=draws.change(after, "before"),
        table=() if softmax else _value_table(cmap, split.fit_table, before),
        ece_scheme=ece[0], ece_bins=ece[1], reps=int(reps), seed=int(job.seed), level=float(level),
    )


def _check_args(method: str, scoring: str | None, eval_data: Data | None, level: float) -> str:
    """The scoring to use (``file`` when ``eval_data`` is given, else ``oddeven``), after
    checking the choices."""
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
    return scoring


@dataclass(frozen=True)
class _Job:
    """The fitting data and how to fit a map on a part of it."""

    table: CountTable
    rows: Judgments | None
    fitter: _Fitter
    folds: int
    seed: int


@dataclass
class _Split:
    """The evaluation data cut into parts, each with the map that scores it.

    ``fit``/``use``: the map returned, as fitted and as used (the base rate when useless):
    fitted on all the fitting data, except for ``oddeven``, where it is the map fitted on
    the odd rows and scored on the even ones (as ``fit odd --eval even``). ``fit_table``:
    what that map was fitted on; ``scale``: the evaluation data's scale; ``useless_folds``:
    the k-fold maps that fell back to their base rate."""

    parts: list[dict[str, np.ndarray]]
    fit: Fitted
    use: CalibrationMap
    fit_table: CountTable
    scale: Scale
    notes: list[str] = field(default_factory=list)
    useless_folds: int = 0


def _insample(job: _Job, eval_data: Data | None) -> _Split:
    f, use, _ = job.fitter(job.table, job.rows)
    part = units(job.rows, job.table, use, job.table)
    return _Split([part], f, use, job.table, job.table.scale,
                  ["scored in-sample: on the data the map was fitted on (optimistic)"])


def _on_file(job: _Job, eval_data: Data | None) -> _Split:
    assert eval_data is not None
    f, use, _ = job.fitter(job.table, job.rows)
    etable, erows = table_and_rows(eval_data, "the evaluation data")
    if not job.fitter.softmax:
        use.check_scale(etable.scale, "the evaluation data")
    elif erows is None or erows.options is None:
        raise CalibError("a softmax temperature is scored on option scores: the evaluation file has none")
    return _Split([units(erows, etable, use, job.table)], f, use, job.table, etable.scale)


def _oddeven(job: _Job, eval_data: Data | None) -> _Split:
    table, rows = job.table, job.rows
    if rows is not None:
        odd, even = row_order_halves(rows)
        fit_rows, ev_rows = rows.take(odd), rows.take(even)
        ftab = from_judgments(fit_rows)
        f, use, _ = job.fitter(ftab, fit_rows)
        return _Split([units(ev_rows, None, use, ftab)], f, use, ftab, table.scale,
                      ["fitted on the 1st, 3rd, 5th... rows in file order, scored on the 2nd, 4th..."])
    (n0, k0), (n1, k1) = split_counts(table, 2, seed=job.seed)
    ftab = nonempty_cells(table.with_counts(n0, k0))
    f, use, _ = job.fitter(ftab, None)
    return _Split([units(None, table.with_counts(n1, k1), use, ftab)], f, use, ftab, table.scale, [
        "a count table has no file order: each cell was split in two at random "
        f"(hypergeometric draw, seed {job.seed})"])


def _kfold(job: _Job, eval_data: Data | None) -> _Split:
    f, use, _ = job.fitter(job.table, job.rows)
    folds, seed = job.folds, job.seed
    if job.rows is not None:
        note = f"{folds}-fold cross-fitting by item (rows sharing an id share a fold; seed {seed})"
    else:
        note = (f"{folds}-fold cross-fitting; a count table has no rows, so each cell was split "
                f"at random into {folds} parts (hypergeometric draws, seed {seed})")
    split = _Split([], f, use, job.table, job.table.scale, [note])
    for ftab, train_rows, test_rows, test_table in _folds(job):
        fj, usej, _ = job.fitter(ftab, train_rows)
        split.parts.append(units(test_rows, test_table, usej, ftab))
        split.useless_folds += bool(fj.reason)
    if split.useless_folds:
        split.notes.append(f"{split.useless_folds} of {folds} fold maps were useless and scored as their base rate")
    return split


def _folds(job: _Job) -> Iterator[tuple[CountTable, Judgments | None, Judgments | None, CountTable | None]]:
    """Per fold: the table fitted on, its rows (or ``None``), and the rows or the count
    table scored (folds by item for rows, random cell splits for a count table)."""
    table, rows = job.table, job.rows
    if rows is not None:
        fold = item_folds(rows, job.folds, seed=job.seed)
        for j in range(job.folds):
            train = rows.take(fold != j)
            yield from_judgments(train), train, rows.take(fold == j), None
        return
    for nj, kj in split_counts(table, job.folds, seed=job.seed):
        yield table.with_counts(table.n - nj, table.correct - kj), None, None, table.with_counts(nj, kj)


#: How each scoring cuts the data (:data:`calib.settings.SCORINGS`).
_SPLITS = {"insample": _insample, "file": _on_file, "oddeven": _oddeven, "kfold": _kfold}


def _notes(split: _Split, softmax: bool) -> list[str]:
    """The notes of the result: how the map was fitted and scored, then the notes of the map."""
    notes = ["temperature scaling of the softmax over the option scores (Guo et al. 2017)"] if softmax else []
    notes += split.notes
    use, f = split.use, split.fit
    if use.note and use.note not in notes and use.method != "base_rate":
        notes.append(use.note)
    if f.cmap.note and f.cmap.note != f.reason and f.cmap.note not in notes:
        notes.append(f.cmap.note)
    return notes


@dataclass(frozen=True)
class _Verdict:
    """Whether the fitted map is useless and why; the map returned; the Brier scores of the
    map (``a``) and of the base rate (``b``) on the evaluation data."""

    useless: bool
    reason: str
    cmap: CalibrationMap
    a: float
    b: float


def _verdict(split: _Split, draws: Draws, method: str, correction: float) -> _Verdict:
    a, b = draws.points["after"]["brier"], draws.points["base"]["brier"]
    useless, reason = bool(split.fit.reason), split.fit.reason
    # a tie within rounding is no gain: a map that sends every item to one value (all
    # items stated alike) equals the base rate up to the last bits, either way
    if not useless and not a < b - 1e-12 * max(1.0, abs(b)):
        reason = (
            f"the map does not beat the base rate on the evaluation data (Brier {a:.4f} vs "
            f"{b:.4f} for the base rate): the stated value adds nothing the map can use"
        )
        cmap = base_rate_map(nonempty_cells(split.fit_table), replaces=method, note=reason, correction=correction)
        return _Verdict(True, reason, cmap, a, b)
    return _Verdict(useless, reason, split.use, a, b)


def _value_table(cmap: CalibrationMap, fit_table: CountTable, eval_table: CountTable) -> tuple[dict[str, Any], ...]:
    """One row per stated value of the fitting or evaluation data (see :attr:`FitResult.table`)."""
    ft, et = nonempty_cells(fit_table), nonempty_cells(eval_table)
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
            "stated": json_number(v), "n_fit": int(nf[j]), "hit_rate_fit": finite_or_none(kf[j] / nf[j]) if nf[j] else None,
            "n_eval": int(ne[j]), "hit_rate_eval": finite_or_none(ke[j] / ne[j]) if ne[j] else None, "prob": float(q[j]),
        })
    return tuple(out)
