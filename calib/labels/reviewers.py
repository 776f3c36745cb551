"""Agreement between reviewers, and of the reviewers and the file with the final labels.

Contract
--------
:func:`reviewer_agreement` reads labels alone (no judgments file): each reviewer's current
label per item (:func:`calib.labels.records.current`; ``unsure`` labels and adjudications
are not labels of a reviewer here: missing) and reports

- Cohen's kappa (two reviewers only: on the items both labelled; ``None`` with the
  reason otherwise), Fleiss' kappa, Krippendorff's alpha (nominal) and the percent
  agreement (:mod:`calib.labels.agreement`), each with a bootstrap interval over items:
  the equal-tailed quantiles of the statistic under the Bayesian bootstrap (Rubin 1981)
  of whole items, or of whole clusters of items when ``clusters`` names each item's
  cluster (the items of one source text, say), so labels of one item, or of one cluster,
  move together; with :data:`PRIOR` = 1/2 pseudo-item of each of the four pairs of
  labels (right-right, right-wrong, wrong-right, wrong-wrong), the Jeffreys prior the
  interval of Cohen's kappa of the file against a reviewer uses
  (:func:`calib.labels.agreement.kappa_interval`). The prior is what keeps the interval
  honest when the sample holds few or no disagreements: the plain percentile bootstrap
  then gives the point 1 and covered 75-89% at kappa 0.9 with 2 reviewers; this covers
  at least 93% in every design of ``bench/sim_agreement.py``. The quantiles are taken at
  the level whose normal quantile is Student's t on ``units - 1`` degrees of freedom
  (:func:`unit_level`; with 40 clusters, 95.7% for 95%), as survey intervals of few
  clusters are (Korn & Graubard 1998): the cluster bootstrap of 40 clusters covered 92%
  without it. An end beyond the estimate is moved to it (kappa 1 with no disagreement:
  every draw is below 1);
- each reviewer's agreement with the final labels (:mod:`calib.labels.final`) with a
  Wilson interval: the share of their labels of items with a final label that equal it
  (their own label is one of the votes of a majority, so this is an upper view of their
  accuracy; adjudicated items are the independent check);
- the final labels' summary (how many adjudicated, by majority, tied, only unsure).

:func:`outcomes_vs_final` compares the file's outcomes with the final labels: the 2x2
confusion matrix, sensitivity (of the items the final labels call right, the share the
file calls right), specificity (of those called wrong, the share the file calls wrong)
and accuracy, each with a Wilson (1927) interval over items.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from calib.errors import CalibError
from calib.estimates import NONE, WILSON, Estimate
from calib.labels.agreement import KAPPA_PRIOR, _kappa_cells, item_features, stat_rows
from calib.labels.final import FinalLabels, final_labels, final_rule
from calib.labels.outcomes import votes
from calib.labels.records import ADJUDICATION, Label, current, for_dataset
from calib.metrics.values import wilson_interval
from calib.rows import Judgments

#: Resample-by-unit matrices are built in chunks of at most this many cells.
CHUNK_CELLS = 4_000_000
#: Weight of each pseudo-item of the interval's prior (:func:`_prior`; Jeffreys: 1/2).
PRIOR = KAPPA_PRIOR
#: The statistics of :class:`ReviewerAgreement`, in output order.
STATS = ("cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "percent_agreement")
#: :attr:`Estimate.method` of the agreement statistics' intervals (see the module).
BAYESIAN_BOOTSTRAP = ("equal-tailed quantiles under the Bayesian bootstrap of items (or clusters) with a Jeffreys "
                      "prior, taken at the level of Student's t on units - 1 degrees of freedom")


def stat_dict(e: Estimate) -> dict[str, Any]:
    """The labels' JSON of a figure: ``{"estimate", "ci": [lo, hi] or None}``, and ``"reason"``
    (:attr:`Estimate.note`: why it is undefined or has no interval) when there is one."""
    d: dict[str, Any] = {"estimate": e.value, "ci": e.to_list() if e.has_interval else None}
    if e.note:
        d["reason"] = e.note
    return d


@dataclass(frozen=True)
class ReviewerScore:
    """One reviewer's agreement with the final labels: ``agree`` of ``n`` labels, ``share``
    their share with its Wilson interval (value ``None`` when ``n`` is 0)."""

    reviewer: str
    labels: int
    n: int
    agree: int
    share: Estimate

    def to_dict(self) -> dict[str, Any]:
        return {"reviewer": self.reviewer, "labels": self.labels, "compared": self.n, "agree": self.agree,
                **stat_dict(self.share)}


@dataclass(frozen=True)
class ReviewerAgreement:
    """Agreement among reviewers (see the module).

    Attributes
    ----------
    reviewers:
        Reviewers with at least one label that says right or wrong, in order of appearance.
    items, double_coded:
        Items with at least one such label, and with at least two.
    labels, unsure:
        Current labels that say right or wrong, and that say unsure.
    cohen_kappa, fleiss_kappa, krippendorff_alpha, percent_agreement:
        :class:`~calib.estimates.Estimate` each (value ``None`` when undefined, its
        :attr:`~calib.estimates.Estimate.note` saying why).
    per_reviewer:
        :class:`ReviewerScore` per reviewer.
    final:
        The final labels (:class:`calib.labels.final.FinalLabels`).
    clusters:
        Clusters resampled (``None``: items were).
    reps, seed, level:
        The bootstrap.
    """

    reviewers: tuple[str, ...]
    items: int
    double_coded: int
    labels: int
    unsure: int
    cohen_kappa: Estimate
    fleiss_kappa: Estimate
    krippendorff_alpha: Estimate
    percent_agreement: Estimate
    per_reviewer: tuple[ReviewerScore, ...]
    final: FinalLabels
    clusters: int | None
    reps: int
    seed: int
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            **{name: stat_dict(getattr(self, name)) for name in STATS},
            "reviewers": len(self.reviewers),
            "items": self.items,
            "double_coded": self.double_coded,
            "labels": self.labels,
            "unsure": self.unsure,
            "per_reviewer": [r.to_dict() for r in self.per_reviewer],
            "final_labels": self.final.to_dict(),
            "interval": {
                "level": self.level, "reps": self.reps, "seed": self.seed,
                "method": "Bayesian bootstrap over " + ("clusters of items" if self.clusters else "items")
                + ", Jeffreys prior (half a pseudo-item of each pair of labels)",
                "clusters": self.clusters,
            },
            "sentences": self.sentences(),
        }

    def sentences(self) -> list[str]:
        """The report in words, one sentence a line."""
        lvl = f"{self.level:.0%}"
        out = [
            f"{self.labels:,} labels by {len(self.reviewers):,} reviewer{'s' if len(self.reviewers) != 1 else ''} "
            f"on {self.items:,} items, {self.double_coded:,} of them labelled by two or more"
            + (f"; {self.unsure:,} unsure label{'s' if self.unsure != 1 else ''} not counted." if self.unsure
               else ".")
        ]
        names = {"cohen_kappa": "Cohen's kappa", "fleiss_kappa": "Fleiss' kappa",
                 "krippendorff_alpha": "Krippendorff's alpha (nominal)", "percent_agreement": "Percent agreement"}
        for key in STATS:
            s = getattr(self, key)
            if s.value is None:
                out.append(f"{names[key]}: none ({s.note}).")
                continue
            pct = key == "percent_agreement"
            fmt = (lambda x: f"{x:.1%}") if pct else (lambda x: f"{x:.2f}")
            ci = f" ({lvl} interval {fmt(s.lo)} to {fmt(s.hi)})" if s.has_interval else ""
            out.append(f"{names[key]}: {fmt(s.value)}{ci}" + (f"; {s.note}" if s.note else "") + ".")
        out.append(self.final.sentence())
        for r in self.per_reviewer:
            sh = r.share
            if sh.value is None or sh.lo is None or sh.hi is None:
                out.append(f"{r.reviewer}: no label of an item with a final label.")
            else:
                out.append(f"{r.reviewer}: agrees with the final label on {r.agree:,} of {r.n:,} items "
                           f"({sh.value:.1%}, {lvl} interval {sh.lo:.1%} to {sh.hi:.1%}).")
        if self.per_reviewer:
            out.append("A reviewer's own label is one of the votes of a majority; adjudicated items are the "
                       "independent check.")
        return out


def as_labels(labels: Any) -> tuple[tuple[Label, ...], tuple[str, ...]]:
    """Labels and the bad-line messages from a labels file's path or bytes
    (:func:`calib.labels.records.read_labels`, within :class:`calib.limits.Limits`), or
    :class:`Label` records as they are (each checked). A file with no usable label is
    refused with its first messages."""
    from pathlib import Path

    from calib.labels.records import check_label, read_labels
    from calib.limits import Limits

    if isinstance(labels, (str, Path, bytes, bytearray)):
        limits = Limits.from_env()
        if isinstance(labels, (bytes, bytearray)):
            shown, name, data = "labels", "labels", bytes(labels)
            limits.check_upload(name, len(data))
        else:
            shown, name = str(labels), Path(labels).name
            try:
                limits.check_upload(shown, Path(labels).stat().st_size)  # before the file is read
                data = Path(labels).read_bytes()
            except OSError as exc:
                raise CalibError(f"{shown}: cannot read the file ({exc.strerror or exc})") from None
        got, bad = read_labels(data, name, options=limits.load_options())
        if not got:
            why = "; ".join(bad[:5]) if bad else "the file is empty"
            raise CalibError(f"{shown}: no usable label ({why})")
        return got, bad
    out = []
    for x in labels:
        if not isinstance(x, Label):
            raise CalibError(f"labels: expected a path, bytes or Label records, got {type(x).__name__}")
        out.append(check_label(x))
    return tuple(out), ()


def label_matrix(labels: Sequence[Label], *, dataset: str | None = None
                 ) -> tuple[tuple[str, ...], tuple[str, ...], np.ndarray, int]:
    """Items, reviewers, and the matrix of their current labels (``1`` right, ``0`` wrong,
    ``-1`` none or unsure; items by reviewers), and how many current labels said unsure.
    Only items with a right/wrong label are rows."""
    cur = current(lab for lab in for_dataset(labels, dataset) if lab.kind != ADJUDICATION)
    said = [lab for lab in cur if not lab.unsure]
    items = tuple(dict.fromkeys(lab.item for lab in said))
    reviewers = tuple(dict.fromkeys(lab.reviewer for lab in said))
    ii = {k: i for i, k in enumerate(items)}
    rr = {k: i for i, k in enumerate(reviewers)}
    m = np.full((len(items), len(reviewers)), -1, dtype=np.int8)
    for lab in said:
        m[ii[lab.item], rr[lab.reviewer]] = int(lab.correct)
    return items, reviewers, m, len(cur) - len(said)


def _units(items: Sequence[str], clusters: Mapping[str, Hashable] | None) -> tuple[np.ndarray, int | None]:
    """The resampling unit of each item: itself, or its cluster."""
    if clusters is None:
        return np.arange(len(items)), None
    missing = [i for i in items if i not in clusters]
    if missing:
        shown = ", ".join(repr(x) for x in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise CalibError(f"clusters: {len(missing):,} labelled items have no cluster ({shown})")
    keys = [clusters[i] for i in items]
    _, unit = np.unique(np.array([repr(k) for k in keys], dtype=object), return_inverse=True)
    return unit.ravel(), int(unit.max() + 1) if len(items) else 0


def resample_sums(features: np.ndarray, unit: np.ndarray, reps: int, seed: int,
                  prior: np.ndarray | None = None) -> np.ndarray:
    """``reps`` Bayesian-bootstrap resamples of the units' summed features (shape
    ``(reps, F)``): ``g @ totals`` with ``g ~ Dirichlet(1, ..., 1)`` over the units (Rubin
    1981; drawn per distinct unit total, ``Gamma(count)``), and over the rows of ``prior``
    (pseudo-units, their weight in the last column) ``Gamma(weight)``; the weights scaled
    to sum to the units' and pseudo-units' count, as a resample's counts do (Krippendorff's
    alpha holds the count of values itself, ``n - 1``, so the scale matters)."""
    n_units = int(unit.max()) + 1 if unit.size else 0
    totals = np.zeros((n_units, features.shape[1]))
    np.add.at(totals, unit, features)
    uniq, counts = np.unique(totals, axis=0, return_counts=True)
    conc = counts.astype(np.float64)
    if prior is not None:
        uniq = np.vstack([uniq, prior[:, :-1]])
        conc = np.r_[conc, prior[:, -1]]
    rng = np.random.default_rng(seed)
    out = np.empty((reps, features.shape[1]))
    step = max(1, CHUNK_CELLS // max(uniq.shape[0], 1))
    for a in range(0, reps, step):
        b = min(reps, a + step)
        g = rng.gamma(conc, size=(b - a, conc.size))
        out[a:b] = (g * (conc.sum() / g.sum(axis=1))[:, None]) @ uniq
    return out


def _prior() -> np.ndarray:
    """The pseudo-items of the interval: one pair of labels in each of the four cells
    (right-right, right-wrong, wrong-right, wrong-wrong), weight :data:`PRIOR` each: the
    Jeffreys prior of :func:`calib.labels.agreement.kappa_interval`. Columns: the
    features of :func:`calib.labels.agreement.item_features`, the Cohen cells, the weight."""
    rows = []
    for a, b in ((1, 1), (1, 0), (0, 1), (0, 0)):
        counts = np.array([[a + b, 2 - a - b]], dtype=np.float64)
        cell = np.zeros(4)
        cell[2 * (1 - a) + (1 - b)] = 1.0
        rows.append(np.r_[item_features(counts)[0], cell, PRIOR])
    return np.array(rows)


def unit_level(level: float, units: int) -> float:
    """The level whose normal quantile is Student's t quantile of ``level`` on
    ``units - 1`` degrees of freedom: the bootstrap's quantiles taken at it widen the
    interval as a t interval is wider than a normal one when the resampled units (items,
    or clusters) are few (with 40 clusters 95% becomes 95.7%)."""
    if units < 2:
        return level
    t = float(special.stdtrit(units - 1, (1 + level) / 2))
    return float(2 * special.ndtr(t) - 1)


def _interval(samples: np.ndarray, est: float, level: float) -> tuple[float, float] | None:
    ok = samples[np.isfinite(samples)]
    if ok.size < 0.9 * samples.size or ok.size == 0:
        return None
    lo, hi = np.quantile(ok, [(1 - level) / 2, (1 + level) / 2])
    return float(min(lo, est)), float(max(hi, est))


def _stat(est: float, samples: np.ndarray | None, level: float, nominal: float, undefined: str) -> Estimate:
    """The statistic with its interval from the bootstrap ``samples``, the quantiles taken at
    ``level`` for an interval claimed at ``nominal`` (:func:`unit_level`); ``undefined``:
    why, when the statistic is."""
    if not np.isfinite(est):
        return Estimate(None, None, None, None, NONE, undefined)
    if samples is None:
        return Estimate.point(float(est))
    ci = _interval(samples, float(est), level)
    if ci is None:
        return Estimate(float(est), None, None, None, NONE, "too few resamples where it is defined for an interval")
    return Estimate(float(est), ci[0], ci[1], nominal, BAYESIAN_BOOTSTRAP)


def reviewer_agreement(
    labels: Sequence[Label],
    *,
    clusters: Mapping[str, Hashable] | None = None,
    reps: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    dataset: str | None = None,
) -> ReviewerAgreement:
    """Agreement among the reviewers of ``labels`` (see the module).

    Parameters
    ----------
    labels:
        Labels, history included (each reviewer's current label per item is used).
    clusters:
        Item key -> cluster: the bootstrap resamples clusters (every labelled item needs one).
    reps, seed, level:
        The bootstrap (``reps=0``: no intervals).
    dataset:
        The dataset the labels are of (default: the one the labels name).
    """
    if not 0 < level < 1:
        raise CalibError(f"the interval level must be between 0 and 1, got {level!r}")
    if reps < 0:
        raise CalibError(f"reps must be 0 or more, got {reps!r}")
    items, reviewers, m, unsure = label_matrix(labels, dataset=dataset)
    unit, n_clusters = _units(items, clusters)
    stats, double = matrix_agreement(m, unit, reps=reps, seed=seed, level=level)
    final = final_labels(labels, dataset=dataset)
    return ReviewerAgreement(
        reviewers=reviewers,
        items=len(items),
        double_coded=double,
        labels=int((m >= 0).sum()),
        unsure=unsure,
        **stats,
        per_reviewer=_per_reviewer(items, reviewers, m, final, level),
        final=final,
        clusters=n_clusters,
        reps=int(reps),
        seed=int(seed),
        level=float(level),
    )


def matrix_agreement(m: np.ndarray, unit: np.ndarray | None = None, *, reps: int = 2000, seed: int = 0,
                     level: float = 0.95) -> tuple[dict[str, Estimate], int]:
    """The four statistics of :data:`STATS` with their bootstrap intervals from a label
    matrix (items by reviewers: ``1`` right, ``0`` wrong, ``-1`` none), resampling
    ``unit`` (per item its resampling unit, ``0..U-1``; default each item its own), and
    how many items have two labels or more."""
    m = np.asarray(m)
    unit = np.arange(m.shape[0]) if unit is None else np.asarray(unit)
    counts = np.column_stack([(m == 1).sum(axis=1), (m == 0).sum(axis=1)]).astype(np.float64)
    feats = item_features(counts)
    two = m.shape[1] == 2
    both = (m >= 0).all(axis=1) if two else np.zeros(m.shape[0], dtype=bool)
    cells = np.zeros((m.shape[0], 4))
    if two:
        idx = np.flatnonzero(both)
        cells[idx, 2 * (1 - m[idx, 0]) + (1 - m[idx, 1])] = 1.0
    point = stat_rows(feats.sum(axis=0)[None, :], 2)
    kappa = float(_kappa_cells(cells.sum(axis=0)[None, :], 2)[0]) if both.any() else float("nan")
    draws: dict[str, np.ndarray | None] = dict.fromkeys(("percent", "fleiss", "alpha", "cohen"))
    nominal = level
    keep = feats[:, 0] > 0  # units carry information only through pairable items
    if reps > 0 and keep.any():
        used = np.unique(unit[keep], return_inverse=True)[1].ravel()
        sums = resample_sums(np.column_stack([feats, cells])[keep], used, reps, seed, _prior())
        level = unit_level(level, int(used.max()) + 1)
        draws = {**stat_rows(sums[:, : feats.shape[1]], 2), "cohen": _kappa_cells(sums[:, feats.shape[1]:], 2)}
    one = "every label says the same verdict, so chance agreement is 1" if keep.any() else "no item has two labels"
    if not two:
        cohen = _stat(math.nan, None, level, nominal, f"Cohen's kappa is for two reviewers and these labels have "
                      f"{m.shape[1]}: see Fleiss' kappa and Krippendorff's alpha")
    elif not both.any():
        cohen = _stat(math.nan, None, level, nominal, "no item was labelled by both reviewers")
    else:
        cohen = _stat(kappa, draws["cohen"], level, nominal,
                      "both reviewers said one and the same verdict for every item")
    return {
        "cohen_kappa": cohen,
        "fleiss_kappa": _stat(point["fleiss"][0], draws["fleiss"], level, nominal, one),
        "krippendorff_alpha": _stat(point["alpha"][0], draws["alpha"], level, nominal, one),
        "percent_agreement": _stat(point["percent"][0], draws["percent"], level, nominal, "no item has two labels"),
    }, int(keep.sum())


def _per_reviewer(items: Sequence[str], reviewers: Sequence[str], m: np.ndarray, final: FinalLabels,
                  level: float) -> tuple[ReviewerScore, ...]:
    verdict = final.of()
    f = np.array([int(verdict[i]) if i in verdict else -1 for i in items], dtype=np.int8)
    out = []
    for j, who in enumerate(reviewers):
        said = m[:, j] >= 0
        cmp = said & (f >= 0)
        n, agree = int(cmp.sum()), int((m[cmp, j] == f[cmp]).sum())
        out.append(ReviewerScore(who, int(said.sum()), n, agree, _wilson(agree, n, level)))
    return tuple(out)


# ------------------------------------------------------------------ the file against the final labels
@dataclass(frozen=True)
class OutcomesVsFinal:
    """The file's outcomes against the final labels (see the module).

    Attributes
    ----------
    items:
        Items of the file with a final label.
    confusion:
        ``((file right, final right), (file right, final wrong)), ((file wrong, final
        right), (file wrong, final wrong))`` as counts: rows the file, columns the final label.
    sensitivity, specificity, accuracy:
        :class:`~calib.estimates.Estimate` each (Wilson intervals; value ``None`` with its
        :attr:`~calib.estimates.Estimate.note` when no item is in the denominator).
    level:
        The interval level.
    """

    items: int
    confusion: tuple[tuple[int, int], tuple[int, int]]
    sensitivity: Estimate
    specificity: Estimate
    accuracy: Estimate
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "confusion": {"rows": "file outcome (right, wrong)", "columns": "final label (right, wrong)",
                          "counts": [list(r) for r in self.confusion]},
            "sensitivity": {**stat_dict(self.sensitivity), "definition": "of the items the final labels call "
                            "right, the share the file calls right"},
            "specificity": {**stat_dict(self.specificity), "definition": "of the items the final labels call "
                            "wrong, the share the file calls wrong"},
            "accuracy": {**stat_dict(self.accuracy), "definition": "the share of items on which the file and the "
                         "final label agree"},
            "level": self.level,
            "interval": "Wilson score interval over items",
        }


def _wilson(k: int, n: int, level: float, undefined: str = "") -> Estimate:
    """``k / n`` with its Wilson interval; value ``None`` (``undefined`` saying why) when ``n`` is 0."""
    if n == 0:
        return Estimate(None, None, None, None, NONE, undefined)
    lo, hi = wilson_interval(k, n, level)
    return Estimate(k / n, float(lo), float(hi), level, WILSON)


def outcomes_vs_final(rows: Judgments, labels: Sequence[Label], *, level: float = 0.95,
                      dataset: str | None = None) -> OutcomesVsFinal:
    """The file's outcomes (``rows.correct``) against the final labels of ``labels``."""
    if not 0 < level < 1:
        raise CalibError(f"the interval level must be between 0 and 1, got {level!r}")
    v = votes(rows, labels, dataset=dataset)
    ok, status = final_rule(v.right, v.wrong, v.adjudicated)
    has = (status != "tie") & (status != "unsure")
    file_ok = np.asarray(rows.correct, dtype=bool)[v.items][has]
    fin = ok[has]
    rr, rw = int(np.sum(file_ok & fin)), int(np.sum(file_ok & ~fin))
    wr, ww = int(np.sum(~file_ok & fin)), int(np.sum(~file_ok & ~fin))
    n = rr + rw + wr + ww
    return OutcomesVsFinal(
        items=n,
        confusion=((rr, rw), (wr, ww)),
        sensitivity=_wilson(rr, rr + wr, level, "no item the final labels call right"),
        specificity=_wilson(ww, rw + ww, level, "no item the final labels call wrong"),
        accuracy=_wilson(rr + ww, n, level, "no item the final labels call right or wrong"),
        level=float(level),
    )
