"""Drift attribution (issue 28, item 1): of the change in accuracy among accepted, how much
comes from the judge and how much from what is judged.

Contract
--------
:func:`attribute` takes two runs (rows) and a threshold on the stated scale and returns an
:class:`Attribution` whose ``to_dict()`` has ``judge``, ``system`` and ``total`` (each
``{"estimate", "ci"}``), ``shared_items`` (how many items both runs hold), and the anchor
test of whether the judge's stated values still mean the same (``anchors``). ``None`` when
the runs share no item (or a run is a count table: it has no items).

Shared items
------------
An item is matched by its id when both runs carry one on every row, else by its question
text when both carry one on every row. An item's *answer* is the same in both runs when
the answer texts given (``answers_old`` / ``answers_new``, e.g. ``--answer-key``) are
identical on all its rows; without answer texts, when its outcome is the same on all its
rows (``answer_match = "outcome"``: an answer whose outcome flipped certainly changed;
one that kept its outcome is taken as unchanged, the assumption said in the output).

The decomposition
-----------------
Accuracy among accepted on the shared items, ``A(J, S) = sum k / sum a`` (``a`` the rows
accepted, stated value at or above the threshold, ``k`` the right ones among them), is a
function of the judgments ``J`` and the answers ``S``. Two counterfactuals are observed:

- ``A_1`` (old answers, new judge): the new run's rows on the items whose answer is the
  same (the new judge on the old answer), the old run's rows on the others;
- ``A_2`` (new answers, old judge): the old run's rows on the same-answer items, the new
  run's on the others.

The judge's part is the Shapley average of its two orderings,
``judge = ((A_1 - A_old) + (A_new - A_2)) / 2``, the system's part
``system = ((A_2 - A_old) + (A_new - A_1)) / 2``; they add up to ``A_new - A_old`` exactly.
A judge that did not change leaves ``judge`` at zero in expectation; answers that did not
change leave ``system`` exactly zero (``A_1 = A_new``, ``A_2 = A_old``).

Intervals: paired percentile bootstrap over the shared items (``w ~ Multinomial(S, 1/S)``,
the same weights for both runs and every term; with clusters coarser than an item, over the
groups of items sharing a cluster in either run, as :func:`calib.drift.drift` pairs them), at
``level``; where the percentile interval
of a ratio misses its own estimate (a skewed resampling distribution), it is widened to
include it and a note says so. ``bench/sim_judge_change.py`` measures coverage for planted
judge-only, system-only and combined changes.

Anchors
-------
The anchor set is the shared items whose answer is the same in both runs (or those of
``anchors``, ids given by the user, that are shared): their outcomes are fixed, so a
stated value whose hit rate moved on them changed meaning. Per stated value used on the
anchors in both runs: the hit rate then and now, the Miettinen-Nurminen score test and the
interval inverting it (:mod:`calib.drift.score`), Holm's step-down over the values with at
least :data:`calib.drift.compare.MIN_VALUE_N` answers in each run; ``meaning_changed`` when
Holm rejects any at ``1 - level``. (The same item may state the value in both runs: the
two rates are then positively correlated and the test conservative.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from calib.bootstrap import percentile_interval
from calib.drift.score import holm, score_interval, score_p
from calib.drift.units import paired_units
from calib.estimates import NONE, PERCENTILE, Estimate
from calib.numbers import finite_or_none, plain
from calib.rows import Judgments
from calib.scale import snap
from calib.settings import LEVEL, REPS
from calib.table import MAX_EXACT_CELLS

#: A stated value is tested on the anchors only with at least this many answers in each run.
MIN_ANCHOR_N = 10
#: Items x resamples drawn per numpy call.
CHUNK = 2_000_000

DEFINITION = ("accuracy among accepted on the shared items; judge = Shapley average of (old answers, new judge) "
              "- old and new - (new answers, old judge); system = the rest; paired bootstrap over shared items")


#: Why a part's interval was widened (:attr:`Estimate.note`): it is the percentile interval
#: otherwise, which on few items can miss the estimate.
WIDENED = "the percentile interval missed the estimate; widened to include it"
#: :attr:`Estimate.method` of an anchor value's change (:func:`calib.drift.score.score_interval`).
SCORE_INTERVAL = "Miettinen-Nurminen score interval (inverts the score test)"


def part_dict(p: Estimate) -> dict[str, Any]:
    """One part of the change as the JSON holds it: ``{"estimate", "ci": [lo, hi]}``."""
    return plain({"estimate": p.value, "ci": p.to_list()})


@dataclass(frozen=True)
class AnchorValue:
    """One stated value's hit rate on the anchor items, then and now, its change now - then
    (an :class:`~calib.estimates.Estimate` with its score interval, :data:`SCORE_INTERVAL`,
    when tested) and its test."""

    value: float
    n_old: int
    right_old: int
    n_new: int
    right_new: int
    p: float | None
    diff: Estimate
    moved: bool = False

    @property
    def old(self) -> float | None:
        return self.right_old / self.n_old if self.n_old else None

    @property
    def new(self) -> float | None:
        return self.right_new / self.n_new if self.n_new else None

    def to_dict(self) -> dict[str, Any]:
        return plain({"value": self.value, "n_old": self.n_old, "n_new": self.n_new, "old": self.old,
                      "new": self.new, "diff": self.diff.value, "diff_ci": self.diff.to_list(), "p": self.p,
                      "moved": self.moved})


@dataclass(frozen=True)
class Attribution:
    """What :func:`attribute` returns (see the module docstring)."""

    threshold: float | None
    threshold_source: str
    matched_by: str
    answer_match: str
    shared_items: int
    same_answer: int
    accuracy_old: float | None
    accuracy_new: float | None
    old_answers_new_judge: float | None
    new_answers_old_judge: float | None
    #: the judge's part, the system's and the total change, each with its interval
    judge: Estimate
    system: Estimate
    total: Estimate
    anchor_items: int
    anchors: tuple[AnchorValue, ...]
    meaning_changed: bool
    level: float
    reps: int
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "judge": part_dict(self.judge), "system": part_dict(self.system), "total": part_dict(self.total),
            "shared_items": self.shared_items, "same_answer_items": self.same_answer,
            "changed_answer_items": self.shared_items - self.same_answer, "matched_by": self.matched_by,
            "answer_match": self.answer_match, "threshold": self.threshold,
            "threshold_source": self.threshold_source, "accuracy_old": self.accuracy_old,
            "accuracy_new": self.accuracy_new, "old_answers_new_judge": self.old_answers_new_judge,
            "new_answers_old_judge": self.new_answers_old_judge, "definition": DEFINITION,
            "anchor_items": self.anchor_items, "anchors": [a.to_dict() for a in self.anchors],
            "meaning_changed": self.meaning_changed, "level": self.level, "reps": self.reps,
            "notes": list(self.notes),
        })


def _keys(old: Judgments, new: Judgments) -> tuple[np.ndarray, np.ndarray, str] | None:
    """Each row's item key in both runs and how items are matched; ``None`` when they cannot be."""
    io, in_ = np.asarray(old.item_id, str), np.asarray(new.item_id, str)
    if (io != "").all() and (in_ != "").all():
        return io, in_, "item id"
    if old.text is not None and new.text is not None:
        to, tn = np.asarray(old.text, str), np.asarray(new.text, str)
        if (to != "").all() and (tn != "").all():
            return to, tn, "question text"
    return None


def _per_item(rows: Judgments, code: np.ndarray, keep: np.ndarray, s: int, threshold: float | None,
              answers: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per shared item: rows accepted, right among them, rows, and a per-item answer code."""
    acc = np.ones(keep.sum(), bool) if threshold is None else snap(rows.stated, rows.scale)[keep] >= threshold
    right = np.asarray(rows.correct, bool)[keep]
    c = code[keep]
    a = np.bincount(c, weights=acc, minlength=s)
    k = np.bincount(c, weights=acc & right, minlength=s)
    n = np.bincount(c, minlength=s).astype(np.float64)
    return a, k, n, right if answers is None else np.asarray(answers, str)[keep]


def _same(code_o: np.ndarray, val_o: np.ndarray, code_n: np.ndarray, val_n: np.ndarray, s: int) -> np.ndarray:
    """Per item: every row of both runs carries one and the same answer (or outcome)."""
    vals = np.concatenate([val_o.astype(str), val_n.astype(str)])
    _, v = np.unique(vals, return_inverse=True)
    code = np.concatenate([code_o, code_n])
    lo = np.full(s, np.iinfo(np.int64).max)
    hi = np.full(s, -1)
    np.minimum.at(lo, code, v)
    np.maximum.at(hi, code, v)
    return lo == hi


def _terms(ao: np.ndarray, ko: np.ndarray, an: np.ndarray, kn: np.ndarray, same: np.ndarray,
           unit: np.ndarray, units: int) -> tuple[np.ndarray, np.ndarray]:
    """Per resampling unit, the numerators and denominators of A_old, A_new, A_1, A_2."""
    s = same.astype(np.float64)
    d = 1.0 - s
    num = np.column_stack([ko, kn, kn * s + ko * d, ko * s + kn * d])
    den = np.column_stack([ao, an, an * s + ao * d, ao * s + an * d])
    agg = np.zeros((units, unit.size))
    agg[unit, np.arange(unit.size)] = 1.0
    return agg @ num, agg @ den


def _parts(w: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Columns: A_old, A_new, A_1, A_2, judge, system, total, for each row of weights ``w``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        a_old, a_new, a1, a2 = (w @ num / (w @ den)).T
    judge = ((a1 - a_old) + (a_new - a2)) / 2
    system = ((a2 - a_old) + (a_new - a1)) / 2
    return np.column_stack([a_old, a_new, a1, a2, judge, system, a_new - a_old])


def _anchor_values(old: Judgments, new: Judgments, ko: np.ndarray, kn: np.ndarray, level: float
                   ) -> tuple[AnchorValue, ...]:
    """Per stated value used on the anchors in both runs: hit rates, score test, Holm."""
    vo, vn = snap(old.stated, old.scale)[ko], snap(new.stated, new.scale)[kn]
    if np.unique(np.concatenate([vo, vn])).size > MAX_EXACT_CELLS:  # a continuous score: no per-value rates
        return ()
    yo, yn = np.asarray(old.correct, bool)[ko], np.asarray(new.correct, bool)[kn]
    both = np.intersect1d(vo, vn)
    rows = []
    for v in both:
        mo, mn = vo == v, vn == v
        rows.append((float(v), int(mo.sum()), int(yo[mo].sum()), int(mn.sum()), int(yn[mn].sum())))
    tested = [i for i, r in enumerate(rows) if min(r[1], r[3]) >= MIN_ANCHOR_N]
    p = {i: score_p(rows[i][2], rows[i][1], rows[i][4], rows[i][3]) for i in tested}
    adj = dict(zip(tested, holm(np.array([p[i] for i in tested], float)), strict=True))
    out = []
    for i, (v, no, ro, nn, rn) in enumerate(rows):
        diff = rn / nn - ro / no  # both runs use the value: n_old, n_new >= 1
        lo, hi = score_interval(ro, no, rn, nn, level) if i in p else (None, None)
        est = (Estimate(diff, finite_or_none(lo), finite_or_none(hi), level, SCORE_INTERVAL) if i in p
               else Estimate(diff, None, None, None, NONE))
        out.append(AnchorValue(v, no, ro, nn, rn, finite_or_none(p.get(i)), est, bool(i in adj and adj[i] <= 1 - level)))
    return tuple(out)


def attribute(
    old: Judgments, new: Judgments, threshold: float | None, *, threshold_source: str = "given",
    answers_old: np.ndarray | None = None, answers_new: np.ndarray | None = None,
    anchors: np.ndarray | None = None, reps: int = REPS, seed: int = 0, level: float = LEVEL,
) -> Attribution | None:
    """The attribution of the module docstring; ``None`` when no item is shared.

    ``threshold``: accepted means stated value at or above it (``None``: every row accepted,
    so the judge's confidence cannot move accuracy among accepted). ``answers_old`` /
    ``answers_new``: answer text per row (both or neither). ``anchors``: item keys of a
    fixed anchor set (default: the shared items with the same answer)."""
    keys = _keys(old, new)
    if keys is None:
        return None
    ko_all, kn_all, matched_by = keys
    shared = np.intersect1d(ko_all, kn_all)
    S = int(shared.size)
    if S == 0:
        return None
    keep_o, keep_n = np.isin(ko_all, shared), np.isin(kn_all, shared)
    code_o, code_n = np.searchsorted(shared, ko_all[keep_o]), np.searchsorted(shared, kn_all[keep_n])
    with_text = answers_old is not None and answers_new is not None
    full_o, full_n = np.zeros(ko_all.size, np.int64), np.zeros(kn_all.size, np.int64)
    full_o[keep_o], full_n[keep_n] = code_o, code_n
    ao, k_o, _, val_o = _per_item(old, full_o, keep_o, S, threshold, answers_old if with_text else None)
    an, k_n, _, val_n = _per_item(new, full_n, keep_n, S, threshold, answers_new if with_text else None)
    same = _same(code_o, val_o, code_n, val_n, S)
    unit, U = paired_units(code_o, code_n, None if old.cluster is None else np.asarray(old.cluster)[keep_o],
                            None if new.cluster is None else np.asarray(new.cluster)[keep_n], S)
    num, den = _terms(ao, k_o, an, k_n, same, unit, U)
    point = _parts(np.ones((1, U)), num, den)[0]
    rng = np.random.default_rng(seed)
    draws = []
    step = max(1, CHUNK // U)
    for start in range(0, reps, step):
        m = min(reps, start + step) - start
        w = rng.multinomial(U, np.full(U, 1.0 / U), size=m).astype(np.float64)
        draws.append(_parts(w, num, den))
    boot = np.concatenate(draws) if draws else np.empty((0, 7))
    notes: list[str] = []
    parts = [_part(point[j], boot[:, j], level, name, notes) if reps else Estimate.point(finite_or_none(point[j]))
             for j, name in ((4, "judge"), (5, "system"), (6, "total"))]
    anchor_items = same if anchors is None else np.isin(shared, np.asarray(anchors, str))
    anchor_vals = _anchor_values(old, new, keep_o.copy() & np.isin(ko_all, shared[anchor_items]),
                                 keep_n & np.isin(kn_all, shared[anchor_items]), level)
    if not (np.isfinite(point[0]) and np.isfinite(point[1])):
        notes.append("A run accepts none of the shared items at this threshold: accuracy among accepted, and so "
                     "its parts, are undefined.")
    if U < S:
        notes.append(f"Clusters hold several items: the bootstrap resamples the {U:,} groups of items that share a "
                     "cluster in either run, whole.")
    if anchors is not None:
        notes.append(f"Anchor set given: {int(anchor_items.sum()):,} of {np.unique(np.asarray(anchors, str)).size:,} "
                     f"ids are items both runs hold (matched by {matched_by}).")
    if not with_text:
        notes.append("No answer text: an item whose outcome is the same in both runs is taken to carry the same "
                     "answer (one whose outcome flipped changed answer); give --answer-key to compare answers.")
    return Attribution(
        finite_or_none(threshold), threshold_source, matched_by, "answer text" if with_text else "outcome", S,
        int(same.sum()), finite_or_none(point[0]), finite_or_none(point[1]), finite_or_none(point[2]),
        finite_or_none(point[3]), parts[0], parts[1], parts[2], int(anchor_items.sum()), anchor_vals,
        any(a.moved for a in anchor_vals), float(level), int(reps), tuple(notes))


def _part(estimate: float, draws: np.ndarray, level: float, name: str, notes: list[str]) -> Estimate:
    """The estimate with its percentile interval, widened to hold the estimate (said in ``notes``)."""
    est = finite_or_none(estimate)
    lo, hi = percentile_interval(draws, level)
    if est is not None and lo is not None and hi is not None and not lo - 1e-12 <= est <= hi + 1e-12:
        notes.append(f"The {name} part's percentile interval [{lo:.4f}, {hi:.4f}] missed its estimate; "
                     "widened to include it.")
        return Estimate(est, min(lo, est), max(hi, est), level, PERCENTILE, WIDENED)
    return Estimate(est, lo, hi, level, PERCENTILE)


def for_drift(old: Any, new: Any, check: Any, *, answers: tuple[np.ndarray, np.ndarray] | None = None,
              anchors: np.ndarray | None = None, reps: int = REPS, seed: int = 0,
              level: float = LEVEL) -> Attribution | None:
    """:func:`attribute` on two runs given as :func:`calib.drift.drift` takes them, at the drift's
    threshold check (``check``, a :class:`calib.drift.ThresholdCheck` or ``None``): its threshold,
    else the threshold recommended on the old run at the default target, else every row accepted."""
    from calib.dataset import table_and_rows

    ro, rn = table_and_rows(old, "the old run")[1], table_and_rows(new, "the new run")[1]
    if ro is None or rn is None:
        return None
    if check is not None and check.threshold is not None:
        t, src = check.threshold, check.source
    else:
        from calib.decision import recommend

        t = recommend(old).threshold
        src = "recommended on the old run at the default target" if t is not None else \
            "none (no threshold qualifies on the old run): every item accepted"
    ans = answers if answers is not None else (None, None)
    return attribute(ro, rn, t, threshold_source=src, answers_old=ans[0], answers_new=ans[1], anchors=anchors,
                     reps=reps, seed=seed, level=level)
