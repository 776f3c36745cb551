"""Certified cascades of judges (issue 28, item 5): judge A first, judge B on doubt, a person last.

Contract
--------
:func:`cascade` takes several judges' runs on shared items (matched by item id), the price of
one call to each judge and of one person's review, and a target error ``alpha``; it returns a
:class:`Cascade`: the cheapest chain certified (with probability at least ``1 - delta``, the
error among the items accepted at any stage is at most ``alpha``), its thresholds and its
expected cost per 1,000 items with an interval, beside each judge alone and a person alone.

A chain
-------
A chain is an ordered list of distinct judges ``j_1 .. j_m`` (``m <= max_stages``), each with a
threshold ``t_s``: an item reaching stage ``s`` costs ``price(j_s)``; it is accepted when
``j_s`` states at least ``t_s`` (wrong when ``j_s``'s row says wrong), else it goes on; after the
last stage a person reviews it at ``person_price`` (and is taken to be right). Thresholds run
over :data:`GRID` quantiles of each judge's stated values (fixed without outcomes) and "never
accept".

Certification (Learn-then-Test with a split)
--------------------------------------------
The shared items are split in two at random (seeded). On the *selection* half every chain and
threshold configuration is scored: its cost, and its one-sided Clopper-Pearson bound of the
error among accepted at ``1 - delta``. Among the configurations whose bound meets ``alpha``
there, the front of cost against bound (none both cheaper and of lower bound), ordered by bound
rising (so cost falling), :data:`SEQUENCE` of them evenly spaced with the cheapest kept; on the
*test* half they are tested in that order, each by the exact binomial p-value
``P(Bin(n_acc, alpha) <= e)`` at level ``delta``, stopping at the first failure (fixed-sequence
testing: Angelopoulos, Bates, Candes, Jordan & Lei 2021, the order learnt on data independent
of the test). The chosen chain is the last one rejected: every rejected one holds its guarantee
at once, the family-wise error being at most ``delta`` whatever the order. Its cost per 1,000
items and error are estimated on the test half (the selection half is optimistic), the cost's
interval by the percentile bootstrap over the test half's items. Each judge alone is certified
the same way among its one-stage chains. Items independent: one row per item id per judge
(a repeated id is refused). ``bench/sim_judge_change.py`` (c) measures the share of datasets
whose chosen chain's population error exceeds ``alpha`` (target at most ``delta``); see also
"Trust or Escalate" (Jung, Brahman & Choi, ICLR 2025) for cascaded judges with a guarantee.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Any

import numpy as np

from calib.bootstrap import percentile_interval
from calib.decision.risk import check_levels, cp_upper, tail_pvalue
from calib.errors import CalibError
from calib.estimates import NONE, PERCENTILE, Estimate
from calib.numbers import finite_or_none, plain
from calib.rows import Judgments
from calib.scale import snap
from calib.settings import LEVEL, REPS

#: Threshold candidates per judge (quantiles of its stated values), "never accept" besides.
GRID = 10
#: Configurations tested in sequence on the test half, at most.
SEQUENCE = 20
#: Most stages in a chain.
MAX_STAGES = 3
#: Most judges.
MAX_JUDGES = 5


@dataclass(frozen=True)
class Plan:
    """One chain with its thresholds (``None``: never accepts) and what it does on the test half."""

    judges: tuple[str, ...]
    thresholds: tuple[float | None, ...]
    holds: bool
    items: int
    accepted: int
    errors: int
    error_upper: float | None
    cost_per_1000: Estimate
    to_person: int
    label: str

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.accepted if self.accepted else None

    def describe(self) -> str:
        if not self.holds:
            return f"{', '.join(self.judges)}: not certified, a person reviews every item"
        if not self.judges:
            return "a person reviews every item"
        steps = [f"{j} (accept at >= {t:g})" if t is not None else f"{j} (never accepts)"
                 for j, t in zip(self.judges, self.thresholds, strict=True)]
        return " -> ".join(steps) + " -> person"

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "label": self.label, "chain": list(self.judges), "thresholds": list(self.thresholds),
            "holds": self.holds, "items": self.items, "accepted": self.accepted, "errors": self.errors,
            "error_rate": self.error_rate, "error_upper": self.error_upper, "to_person": self.to_person,
            "cost_per_1000": self.cost_per_1000.value, "cost_ci": self.cost_per_1000.to_list(), "plan": self.describe(),
        })


@dataclass(frozen=True)
class Cascade:
    """The cheapest certified chain (``best``, ``None`` when none is certified) and the plans compared."""

    best: Plan | None
    plans: tuple[Plan, ...]
    prices: dict[str, float]
    person_price: float
    target_error: float
    confidence: float
    shared_items: int
    level: float
    seed: int
    message: str
    test_ids: tuple[str, ...] = ()  #: the items the plans are measured on (the test half)

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "best": None if self.best is None else self.best.to_dict(), "plans": [p.to_dict() for p in self.plans],
            "prices": self.prices, "person_price": self.person_price, "target_error": self.target_error,
            "confidence": self.confidence, "shared_items": self.shared_items, "level": self.level,
            "seed": self.seed, "message": self.message,
            "method": "Learn-then-Test: configurations ordered on a random half, fixed-sequence exact binomial "
                      "tests on the other half; cost per 1,000 items on the test half, percentile bootstrap",
        })


def _shared(runs: Sequence[Judgments], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per judge, stated values and wrong answers aligned on the item ids every run holds, and those ids."""
    ids = []
    for r, nm in zip(runs, names, strict=True):
        i = np.asarray(r.item_id).astype(str)
        if (i == "").any():
            raise CalibError(f"cascade: {nm} has rows without an item id; judges are matched item by item by id")
        u, c = np.unique(i, return_counts=True)
        if (c > 1).any():
            raise CalibError(f"cascade: {nm} judges item {str(u[c > 1][0])!r} {int(c.max())} times; give one judgment "
                             "per item and judge")
        ids.append(i)
    shared = ids[0]
    for i in ids[1:]:
        shared = np.intersect1d(shared, i)
    shared = np.unique(shared)
    if shared.size < 2:
        raise CalibError(f"cascade: the judges share {shared.size} item id(s); a cascade needs the same items judged "
                         "by every judge")
    stated = np.empty((len(runs), shared.size))
    wrong = np.empty((len(runs), shared.size), bool)
    for k, (r, i) in enumerate(zip(runs, ids, strict=True)):
        order = np.argsort(i)
        pos = order[np.searchsorted(i[order], shared)]
        stated[k] = snap(r.stated, r.scale)[pos]
        wrong[k] = ~np.asarray(r.correct, bool)[pos]
    return stated, wrong, shared


def _grid(s: np.ndarray) -> np.ndarray:
    """Candidate thresholds of one judge: its distinct values, or GRID quantiles of them."""
    u = np.unique(s)
    return u if u.size <= GRID else np.unique(np.quantile(s, np.linspace(0, 1, GRID + 1)[:-1], method="lower"))


def _config_counts(rank: np.ndarray, wrong: np.ndarray, chain: tuple[int, ...], items: np.ndarray, G: np.ndarray,
                   prices: np.ndarray, person: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every threshold configuration of ``chain`` (axes: each stage's threshold index, the
    last one "never"), the items accepted, the errors among them and the total cost, on ``items``.
    ``rank[k, i]``: how many of judge k's candidates lie at or below its stated value (accepted at
    threshold index g iff rank > g)."""
    m = len(chain)
    shape = tuple(int(G[k]) + 1 for k in chain)
    idx = tuple(rank[k, items] for k in chain)

    def prefix(weights: np.ndarray) -> np.ndarray:  # P[g] = sum over items with rank_s <= g_s for every s
        h = np.zeros(shape)
        np.add.at(h, idx, weights)
        for ax in range(m):
            h = np.cumsum(h, axis=ax)
        return h

    def reach(p: np.ndarray, s: int) -> np.ndarray:  # items reaching stage s (0-based): not accepted before it
        sl = tuple(slice(None) if a < s else slice(-1, None) for a in range(m))
        return np.broadcast_to(p[sl], shape) if s < m else p

    ones = prefix(np.ones(items.size))
    acc = np.zeros(shape)
    err = np.zeros(shape)
    cost = np.zeros(shape)
    for s, k in enumerate(chain):
        reached = reach(ones, s)
        cost = cost + prices[k] * reached
        acc = acc + reached - reach(ones, s + 1)
        pw = prefix(wrong[k, items].astype(np.float64))
        err = err + reach(pw, s) - reach(pw, s + 1)
    cost = cost + person * reach(ones, m)
    return acc, err, cost


def _per_item_cost(stated: np.ndarray, chain: tuple[int, ...], thresholds: tuple[float | None, ...],
                   prices: np.ndarray, person: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item: its cost, whether it was accepted, and at which stage (-1: a person)."""
    n = stated.shape[1]
    cost = np.zeros(n)
    open_ = np.ones(n, bool)
    stage = np.full(n, -1)
    for s, (k, t) in enumerate(zip(chain, thresholds, strict=True)):
        cost[open_] += prices[k]
        take = open_ & (stated[k] >= t) if t is not None else np.zeros(n, bool)
        stage[take] = s
        open_ &= ~take
    cost[open_] += person
    return cost, stage >= 0, stage


def _certify(rank, wrong, chains, sel, test, G, prices, person, alpha, confidence):  # noqa: ANN001, ANN202
    """The fixed-sequence choice of the module docstring: (chain, threshold indices) or ``None``."""
    cid, flat, cost, bound = [], [], [], []
    for c, chain in enumerate(chains):  # every configuration scored on the selection half
        a, e, k = (x.ravel() for x in _config_counts(rank, wrong, chain, sel, G, prices, person))
        up = cp_upper(e, np.maximum(a, 1), confidence)
        ok = np.flatnonzero((a > 0) & (up <= alpha))
        cid.append(np.full(ok.size, c))
        flat.append(ok)
        cost.append(k[ok])
        bound.append(up[ok])
    cid_a, flat_a, cost_a, bound_a = (np.concatenate(x) for x in (cid, flat, cost, bound))
    by_bound = np.lexsort((cost_a, bound_a))
    front = by_bound[cost_a[by_bound] < np.minimum.accumulate(np.r_[np.inf, cost_a[by_bound]])[:-1]]
    if front.size > SEQUENCE:  # evenly spaced along the front, its cheapest end kept
        front = front[np.unique(np.round(np.linspace(0, front.size - 1, SEQUENCE)).astype(np.int64))]
    tested = {}
    chosen = None
    for i in front:  # safest (lowest bound) first, cost falling; the last rejected is the cheapest
        chain = chains[int(cid_a[i])]
        if chain not in tested:
            tested[chain] = _config_counts(rank, wrong, chain, test, G, prices, person)
        a, e, _ = tested[chain]
        g = np.unravel_index(int(flat_a[i]), a.shape)
        if float(tail_pvalue(e[g], a[g], alpha)) > 1 - confidence:
            break
        chosen = (chain, tuple(int(x) for x in g))
    return chosen


def cascade(
    runs: Sequence[Judgments], names: Sequence[str], prices: Sequence[float], person_price: float, *,
    target_error: float, confidence: float = 0.95, max_stages: int = MAX_STAGES, reps: int = REPS, seed: int = 0,
    level: float = LEVEL,
) -> Cascade:
    """The cheapest certified chain and each judge alone (see the module docstring)."""
    target_error, confidence = check_levels(target_error, confidence)
    if not 1 <= len(runs) <= MAX_JUDGES or len(names) != len(runs) or len(prices) != len(runs):
        raise CalibError(f"cascade: give 1 to {MAX_JUDGES} judges, each with a name and a price")
    if len(set(names)) != len(names):
        raise CalibError("cascade: two judges have the same name")
    pr = np.asarray(prices, float)
    if not np.isfinite(pr).all() or (pr < 0).any() or not np.isfinite(person_price) or person_price < 0:
        raise CalibError("cascade: prices must be finite numbers >= 0")
    if int(max_stages) != max_stages or max_stages < 1:
        raise CalibError(f"cascade: --max-stages must be a whole number >= 1, got {max_stages!r}")
    stated, wrong, ids = _shared(runs, names)
    K, n = stated.shape
    grids = [_grid(stated[k]) for k in range(K)]
    G = np.array([g.size for g in grids])
    rank = np.stack([np.searchsorted(grids[k], stated[k], side="right") for k in range(K)])
    rng = np.random.default_rng(seed)
    half = rng.permutation(n) < n // 2
    sel, test = np.flatnonzero(half), np.flatnonzero(~half)
    chains = [c for m in range(1, min(max_stages, K) + 1) for c in permutations(range(K), m)]
    args = (rank, wrong)
    best = _certify(*args, chains, sel, test, G, pr, person_price, target_error, confidence)
    plans = []
    if best is not None:
        plans.append(_plan(best, "cheapest certified chain", stated, wrong, test, grids, names, pr, person_price,
                           confidence, reps, rng, level))
    for k in range(K):
        alone = _certify(*args, [(k,)], sel, test, G, pr, person_price, target_error, confidence)
        plans.append(_plan(alone, f"{names[k]} alone", stated, wrong, test, grids, names, pr, person_price, confidence,
                           reps, rng, level, fallback=(k,)))
    plans.append(_plan(((), ()), "a person alone", stated, wrong, test, grids, names, pr, person_price, confidence,
                       reps, rng, level))
    head = plans[0] if best is not None else None
    if head is None:
        msg = (f"No chain is certified at {target_error:.1%} error among accepted with {confidence:.0%} confidence: "
               f"a person reviews every item ({person_price:g} each).")
    else:
        msg = (f"Cheapest certified chain: {head.describe()}; about {head.cost_per_1000.value:,.2f} per 1,000 items; with "
               f"{confidence:.0%} confidence at most {target_error:.1%} of the items accepted at any stage are wrong.")
    return Cascade(head, tuple(plans), {nm: float(p) for nm, p in zip(names, pr, strict=True)}, float(person_price),
                   target_error, confidence, int(n), float(level), int(seed), msg, tuple(ids[test]))


def _plan(choice, label, stated, wrong, test, grids, names, prices, person, confidence, reps, rng, level,
          fallback=None) -> Plan:  # noqa: ANN001 - internal: the pieces cascade() computed
    """A :class:`Plan` measured on the test half; ``choice`` ``None``: the judge never accepts (``fallback``)."""
    holds = choice is not None
    chain, g = choice if choice is not None else ((), ())  # not certified: a person reviews every item
    th = tuple(None if gi >= len(grids[k]) else float(grids[k][gi]) for k, gi in zip(chain, g, strict=True))
    cost, accepted, stage = _per_item_cost(stated[:, test], chain, th, prices, person)
    if not holds:
        chain, th = fallback, (None,)
    wrong_acc = np.zeros(test.size, bool)
    for s, k in enumerate(chain):
        wrong_acc |= (stage == s) & wrong[k, test]
    a, e = int(accepted.sum()), int(wrong_acc.sum())
    draws = np.empty(0)
    if reps:
        draws = np.concatenate([1000 * cost[rng.integers(0, test.size, (min(200, reps - r), test.size))].mean(axis=1)
                                for r in range(0, reps, 200)])  # items drawn with replacement, 200 resamples at once
    ci = percentile_interval(draws, level) if reps else (None, None)
    per_1000 = Estimate.of(finite_or_none(1000 * cost.mean()), ci, level if reps else None,
                           PERCENTILE if reps else NONE)
    up = finite_or_none(cp_upper(e, a, confidence)) if a else None
    return Plan(tuple(names[k] for k in chain), th, holds, int(test.size), a, e, up,
                per_1000, int(test.size - a), label)
