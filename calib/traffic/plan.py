"""Which traffic items to label next: a stratified plan with known inclusion probabilities.

Contract
--------
- Strata (:func:`strata`) are by stated value: one per distinct value when the traffic has at
  most :data:`MAX_VALUE_STRATA` of them, else :data:`BINS` bins of about equal size cut
  between distinct values (an item's stratum never depends on an outcome). Stratum ``h``
  holds ``N_h`` items, ``l_h`` of them already labelled.
- The fitted map (:func:`fitted_rates`): per stratum the hit rate
  ``(k_h + 2 s_h) / (n_h + 2)`` (two pseudo-labels at the stratum's mean stated value
  ``s_h``; ``s_h`` itself without labels), made monotone in the stated value by PAV.
- Allocation (:func:`allocate`): Neyman, total labels of stratum ``h`` proportional to
  ``N_h sqrt(p_h (1 - p_h))`` with ``p_h`` clipped to [0.02, 0.98] (a stratum that looks
  perfect still gets labels), every stratum at least :data:`FLOOR` labels (or all its
  items), the ``budget`` new labels going where the totals fall short, capped by what is
  unlabelled. With a target error, the allocation is for the error among accepted at the
  lowest stated value whose fitted error among accepted is under half the target: strata
  below it keep only the floor.
- Drawing (:func:`plan`): ``m_h`` new items by simple random sampling without replacement
  among stratum ``h``'s ``N_h - l_h`` unlabelled items, so each carries inclusion
  probability ``m_h / (N_h - l_h)`` for this plan; together with earlier plans the labelled
  items of a stratum are a simple random sample of it (inclusion ``n_h / N_h``), which is the
  design :mod:`calib.traffic.estimate` and :mod:`calib.traffic.certify` assume. The items
  are listed in a random order interleaving strata; each carries its ``reason``
  (:data:`REASONS`).
- The review queue (``queue_below``, the review threshold): strata are split at it
  (:func:`strata` with ``cut``); every unlabelled item below it is planned with inclusion
  probability 1 (a person reviews it anyway), lowest stated value first, and the budget is
  drawn as above among the strata at or above it only; queue and drawn items are
  interleaved by the Review page's rule (:func:`calib.labels.plan.interleave`).
- Clusters (dependent items, :attr:`calib.traffic.read.Traffic.cluster`): the plan draws
  items, not whole clusters, one at a time at random within strata. Design-based inference
  on this finite traffic needs no more: the inclusion probabilities are the items' own,
  whatever their dependence (Särndal, Swensson & Wretman 1992, ch. 3), and the certificate's
  draws stay exchangeable. For the judge on traffic like this (labels of one cluster are not
  independent evidence) the estimates multiply each stratum's variance by its cluster
  design effect (:func:`calib.traffic.estimate.design_effects`; Kish 1965): the intervals are
  cluster-robust and never narrower.
- Plan files (:func:`plan_to_csv`, :func:`plan_to_jsonl`): the label records' columns
  (``correct`` left for the reviewer), so a filled-in plan is a label file; :func:`read_plan`
  reads one back.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.isotonic import pav
from calib.labels.records import csv_cell
from calib.readers.base import LoadOptions
from calib.traffic.read import Labelled, Traffic

#: Most strata that are one stated value each.
MAX_VALUE_STRATA = 20
#: Strata of a continuous stated confidence (bins of about equal size).
BINS = 10
#: Fewest labels per stratum a plan aims for (two give a variance).
FLOOR = 2
#: ``p`` is clipped to this range in Neyman's ``sqrt(p (1 - p))``.
P_CLIP = (0.02, 0.98)


@dataclass(frozen=True, eq=False)
class Strata:
    """``of`` per item its stratum (0-based, increasing with the stated value); ``low`` and
    ``high`` per stratum its smallest and largest stated value; ``size`` its item count."""

    of: np.ndarray
    low: np.ndarray
    high: np.ndarray
    size: np.ndarray

    def name(self, h: int, top: float) -> str:
        lo, hi = self.low[h], self.high[h]
        fmt = "{:g}" if top > 1 else "{:.4g}"
        return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}-{fmt.format(hi)}"

    def __len__(self) -> int:
        return int(self.size.size)


def strata(traffic: Traffic, cut: float | None = None) -> Strata:
    """The strata of ``traffic`` by stated value (see the module's contract); with ``cut`` (the
    review threshold), no stratum holds items on both sides of it: a bin across it is split."""
    values, inverse = np.unique(traffic.stated, return_inverse=True)
    if values.size <= MAX_VALUE_STRATA:
        of = inverse
    else:
        counts = np.bincount(inverse)
        cum = np.cumsum(counts) / counts.sum()
        # a value goes to the bin its cumulative share (at its middle) falls in
        of = np.minimum((BINS * (cum - counts / (2 * counts.sum()))).astype(int), BINS - 1)[inverse]
        of = np.unique(of, return_inverse=True)[1]
    if cut is not None:  # (bin, side of the cut) is increasing in the stated value too
        of = np.unique(2 * of + (traffic.stated >= cut), return_inverse=True)[1]
    h = int(of.max()) + 1
    low = np.array([traffic.stated[of == k].min() for k in range(h)])
    high = np.array([traffic.stated[of == k].max() for k in range(h)])
    return Strata(of, low, high, np.bincount(of, minlength=h))


def fitted_rates(traffic: Traffic, st: Strata, lab: Labelled | None) -> np.ndarray:
    """Per stratum the fitted hit rate (the module's fitted map)."""
    h = len(st)
    s = stated_means(traffic, st)
    if lab is None or lab.rows.size == 0:
        return s
    n = np.bincount(st.of[lab.rows], minlength=h).astype(float)
    k = np.bincount(st.of[lab.rows], weights=lab.correct.astype(float), minlength=h)
    return rates_from_counts(s, n, k)


def stated_means(traffic: Traffic, st: Strata) -> np.ndarray:
    """Per stratum the mean stated value as a probability (the map before any label)."""
    return np.bincount(st.of, weights=traffic.prob, minlength=len(st)) / st.size


def rates_from_counts(s: np.ndarray, n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The fitted map from per-stratum labels ``n`` and hits ``k`` (``s`` the stated means)."""
    if not np.any(n):
        return s
    return np.clip(pav((k + 2 * s) / (n + 2), n + 2), 0.0, 1.0)


def allocate(size: np.ndarray, have: np.ndarray, sd: np.ndarray, budget: int, floor: int = FLOOR
             ) -> np.ndarray:
    """New labels per stratum: Neyman totals with a floor, filled greedily up to ``budget``.

    Each new label goes, one at a time, to the stratum whose total is furthest below its
    floor, else to the one whose ``N_h^2 sd_h^2 / n_h`` drops most (``N_h^2 sd_h^2 / (n_h (n_h +
    1))``): greedy on a separable convex sum, so it ends at the integer allocation minimising
    ``sum N_h^2 sd_h^2 / n_h`` (Neyman's ``n_h ∝ N_h sd_h`` in integers) among those meeting
    the floor, never beyond a stratum's unlabelled items."""
    new = np.zeros(size.size, dtype=int)
    room = size - have
    for _ in range(int(min(budget, room.sum()))):
        total = have + new
        open_ = new < room
        short = open_ & (total < np.minimum(floor, size))
        if short.any():
            h = int(np.flatnonzero(short)[np.argmin(total[short])])
        else:
            drop = (size * np.maximum(sd, 1e-12)) ** 2 / np.maximum(total * (total + 1.0), 0.5)
            gain = np.where(open_, drop, -np.inf)
            h = int(np.argmax(gain))
        new[h] += 1
    return new


def target_stratum(traffic: Traffic, st: Strata, p: np.ndarray, target: float) -> int:
    """The lowest stratum from which on the fitted error among accepted is under half the
    ``target`` (the highest stratum when none is): an upper bound needs room under the target,
    and a fitted map from few labels (or the stated value) is often overconfident."""
    wrong = st.size * (1 - p)
    for h in range(len(st)):
        if wrong[h:].sum() / st.size[h:].sum() < target / 2:
            return h
    return len(st) - 1


def neyman_sd(traffic: Traffic, st: Strata, p: np.ndarray, target_error: float | None
              ) -> tuple[np.ndarray, int | None]:
    """Per stratum the ``sqrt(p(1-p))`` Neyman allocates by (``p`` clipped to :data:`P_CLIP`),
    zero below the target's focus stratum (:func:`target_stratum`), and that stratum."""
    sd = np.sqrt(np.clip(p, *P_CLIP) * (1 - np.clip(p, *P_CLIP)))
    if target_error is None:
        return sd, None
    focus = target_stratum(traffic, st, p, target_error)
    return np.where(np.arange(len(st)) >= focus, sd, 0.0), focus


#: Why an item is planned (``reason``): the review queue (below the review threshold, reviewed
#: anyway, inclusion 1), the audit draw among items at or above it, or its stratum's draw (no
#: review threshold given).
REASONS = ("queue", "audit", "stratum")
#: The columns of a plan file (:func:`plan_to_csv`, :func:`plan_to_jsonl`): a label record's
#: (:data:`calib.labels.records.FIELDS`, ``correct`` left for the reviewer) and the plan's own.
PLAN_FIELDS = ("item", "correct", "reviewer", "time", "kind", "stratum", "inclusion_probability", "reason")


@dataclass(frozen=True)
class Plan:
    """The next items to label and how they were chosen (:meth:`to_dict` is ``calib plan --json``).

    ``reason`` per item is one of :data:`REASONS`; ``queue_below`` the review threshold given
    (items below it are the review queue)."""

    ids: tuple[str, ...]
    stratum: tuple[str, ...]
    inclusion: tuple[float, ...]
    strata_rows: tuple[dict[str, Any], ...]
    budget: int
    seed: int | None
    target_error: float | None
    focus_from: str | None
    reason: tuple[str, ...] = ()
    queue_below: float | None = None

    def reasons(self) -> tuple[str, ...]:
        return self.reason or ("stratum",) * len(self.ids)

    def items(self) -> list[dict[str, Any]]:
        """Per planned item, in the order to label them: ``id`` (the key labels join on),
        ``stratum``, ``inclusion_probability``, ``reason`` and ``kind`` (the label kind it takes:
        ``queue`` for the review queue, else ``audit``)."""
        return [{"id": i, "stratum": s, "inclusion_probability": p, "reason": r,
                 "kind": "queue" if r == "queue" else "audit"}
                for i, s, p, r in zip(self.ids, self.stratum, self.inclusion, self.reasons(), strict=True)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "items": self.items(), "budget": self.budget, "planned": len(self.ids), "seed": self.seed,
            "target_error": self.target_error, "allocated_for_accepted_from": self.focus_from,
            "queue_below": self.queue_below, "queue_items": sum(r == "queue" for r in self.reasons()),
            "strata": list(self.strata_rows),
            "design": "stratified by stated value; Neyman allocation sqrt(p(1-p)) from the fitted map, "
                      f"at least {FLOOR} labels per stratum; simple random sampling within a stratum"
                      + ("; items below the review threshold are the review queue, each labelled (inclusion 1), "
                         "in strata of their own" if self.queue_below is not None else ""),
        }


def _queue(traffic: Traffic, st: Strata, labelled: np.ndarray, queue_below: float | None) -> np.ndarray:
    """The unlabelled items below the review threshold, lowest stated value first (file order on ties)."""
    if queue_below is None:
        return np.zeros(0, dtype=int)
    idx = np.flatnonzero((traffic.stated < queue_below) & ~labelled)
    return idx[np.argsort(traffic.stated[idx], kind="stable")]


def _interleave(queue: np.ndarray, audit: np.ndarray) -> np.ndarray:
    """The queue and the audit items merged as :func:`calib.labels.plan.interleave` does."""
    n, a = queue.size + audit.size, audit.size
    i = np.arange(n, dtype=np.int64)
    is_audit = (i + 1) * a // max(n, 1) > i * a // max(n, 1)
    out = np.empty(n, dtype=int)
    out[is_audit], out[~is_audit] = audit, queue
    return out


def plan(traffic: Traffic, lab: Labelled | None, budget: int, *, target_error: float | None = None,
         seed: int | None = None, queue_below: float | None = None) -> Plan:  # long: one draw, its reasons
    """The next ``budget`` items to label (see the module's contract); with ``queue_below`` (the
    review threshold) every unlabelled item below it too, the review queue, interleaved."""
    if budget < 1:
        raise CalibError(f"--budget must be at least 1, got {budget}")
    if target_error is not None and not 0 < target_error < 1:
        raise CalibError(f"--target-error must be in (0, 1), got {target_error}")
    st = strata(traffic, queue_below)
    p = fitted_rates(traffic, st, lab)
    labelled = lab.mask() if lab is not None else np.zeros(len(traffic), dtype=bool)
    have = np.bincount(st.of[labelled], minlength=len(st))
    sd, focus = neyman_sd(traffic, st, p, target_error)
    queued = np.zeros(len(st), dtype=bool) if queue_below is None else st.high < queue_below
    # the queue's strata are reviewed whole: no draw there (as if full), nothing allocated
    new = allocate(st.size, np.where(queued, st.size, have), np.where(queued, 0.0, sd), budget)
    rng = np.random.default_rng(seed)
    chosen, incl = [], []
    for h in range(len(st)):
        pool = np.flatnonzero((st.of == h) & ~labelled)
        if new[h]:
            chosen.append(rng.choice(pool, size=new[h], replace=False))
            incl.append(np.full(new[h], new[h] / pool.size))
    idx = np.concatenate(chosen) if chosen else np.zeros(0, dtype=int)
    pi = np.concatenate(incl) if incl else np.zeros(0)
    order = rng.permutation(idx.size)
    q = _queue(traffic, st, labelled, queue_below)
    every = _interleave(q, idx[order])
    prob = dict(zip(idx.tolist(), pi.tolist(), strict=True)) | dict.fromkeys(q.tolist(), 1.0)
    why = "stratum" if queue_below is None else "audit"
    inq = set(q.tolist())
    rows = tuple({"stratum": st.name(h, traffic.top), "items": int(st.size[h]), "labelled": int(have[h]),
                  "planned": int(new[h]) + int(((st.of[q]) == h).sum()), "fitted_hit_rate": float(p[h]),
                  "queue": bool(queued[h])} for h in range(len(st)))
    return Plan(tuple(str(traffic.keys[i]) for i in every),
                tuple(st.name(int(st.of[i]), traffic.top) for i in every),
                tuple(float(prob[i]) for i in every), rows, budget, seed, target_error,
                None if focus is None else st.name(focus, traffic.top),
                tuple("queue" if i in inq else why for i in every.tolist()), queue_below)


def plan_to_jsonl(p: Plan) -> bytes:
    """One JSON object per planned item, in order: :data:`PLAN_FIELDS` (``item`` the key labels
    join on, ``correct``, ``reviewer`` and ``time`` empty for the reviewer to fill) and ``id``
    (the same key, as ``calib plan --json`` names it)."""
    return "".join(json.dumps(_record(it), ensure_ascii=False) + "\n" for it in p.items()).encode("utf-8")


def _record(it: dict[str, Any]) -> dict[str, Any]:
    return {"item": it["id"], "correct": None, "reviewer": "", "time": "", "kind": it["kind"],
            "stratum": it["stratum"], "inclusion_probability": it["inclusion_probability"],
            "reason": it["reason"], "id": it["id"]}


def plan_to_csv(p: Plan) -> bytes:
    """The planned items as CSV (:data:`PLAN_FIELDS`), every text cell spreadsheet-safe and
    quoted by the label export's rule (:func:`calib.labels.records.csv_cell`), so a reviewer can
    fill in ``correct``, ``reviewer`` and ``time`` and ``calib labels import`` (or
    :func:`calib.labels.records.read_labels`) reads the file back as labels."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\r\n")
    w.writerow(PLAN_FIELDS)
    for it in p.items():
        rec = _record(it)
        w.writerow(["" if rec[f] is None else rec[f] if f == "inclusion_probability" else csv_cell(str(rec[f]))
                    for f in PLAN_FIELDS])
    return buf.getvalue().encode("utf-8")


def read_plan(data: bytes, name: str, options: LoadOptions | None = None) -> list[dict[str, Any]]:
    """A plan file (:func:`plan_to_jsonl` or :func:`plan_to_csv`) back as ``calib plan --json``'s
    items (``id``, ``stratum``, ``inclusion_probability``, ``reason``, ``kind``), in order; for the
    review plan store. Raises :class:`~calib.errors.CalibError` naming the first bad line."""
    from calib.labels.records import csv_uncell
    from calib.traffic.read import records

    out = []
    for no, obj in records(data, name, options or LoadOptions()):
        csv_text = isinstance(obj.get("inclusion_probability"), str)
        item = obj.get("item", obj.get("id"))
        reason = obj.get("reason")
        try:
            prob = float(obj.get("inclusion_probability"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            prob = math.nan
        if not isinstance(item, str) or not item or reason not in REASONS or not 0 < prob <= 1:
            raise CalibError(f"{name} line {no}: not a planned item (needs item, reason one of "
                             f"{', '.join(REASONS)}, inclusion_probability in (0, 1])")
        un = csv_uncell if csv_text else str
        out.append({"id": un(item), "stratum": un(str(obj.get("stratum", ""))), "inclusion_probability": prob,
                    "reason": reason, "kind": "queue" if reason == "queue" else "audit"})
    return out
