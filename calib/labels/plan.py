"""What reviewers are shown: the review queue and a stratified audit sample of the accepted.

Contract
--------
:func:`review_plan` takes the rows, a threshold on the stated scale and a sample size,
and returns a :class:`ReviewPlan`, the same for the same inputs (seeded):

- the **queue**: every item with score ``< threshold`` (the rule of :mod:`calib.routing`,
  stated values snapped as the count table counts them), most doubtful first, in the
  order of :func:`calib.routing.review_queue`;
- the **audit sample**: items accepted unseen (score ``>= threshold``) drawn at random
  without replacement, stratified by stated value (:func:`strata`), in a random order, so
  that a reviewer who labels only the first ``k`` still leaves a random subsample in
  each stratum. :func:`calib.labels.estimate.accepted_error` weights the labelled ones
  back to the accepted population;
- the **order** reviewers meet them (:attr:`ReviewPlan.items`, :func:`interleave`): the
  audit sample spread evenly through the queue, so that after any first ``m`` items
  ``floor(m A / (Q + A))`` are audit items (``Q`` queued, ``A`` sampled). Queued after
  the whole queue, the sample was never reached (issue 22: 912 items first at threshold
  93) and the error among the accepted stayed unestimated; interleaved, it is reached in
  proportion to the labelling done.

Strata are a function of the rows and the threshold only (not of the sample size), so
the estimate can rebuild them from the file: one stratum per distinct stated value
among the accepted, or, when there are more than :data:`MAX_STRATA` (a continuous
score), :data:`MAX_STRATA` runs of adjacent values of about equal counts. Allocation
(:func:`allocate`) is proportional to the stratum sizes with at least one item per
stratum when the sample allows it (largest remainders, capped at each stratum's size).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.labels.records import item_keys
from calib.routing import check_threshold
from calib.rows import Judgments
from calib.scale import snap

#: Most strata of an audit sample (runs of adjacent stated values beyond that many values).
MAX_STRATA = 10
#: Largest audit sample a plan draws.
MAX_SAMPLE = 100_000


@dataclass(frozen=True)
class ReviewItem:
    """One item shown to reviewers.

    Attributes
    ----------
    item:
        Its key (:func:`calib.labels.records.item_keys`), what its label is joined on.
    line:
        Its 1-based line in the file.
    kind:
        ``"queue"`` or ``"audit"``.
    group:
        Its group (``""`` when the file has none).
    stated:
        The stated confidence, on the judge's scale.
    prob:
        The stated confidence as a probability.
    correct:
        The file's outcome: was the item's answer right (what a reviewer's label says too).
    text:
        The question/answer text when the file has it, else ``""`` (user text: never HTML).
    """

    item: str
    line: int
    kind: str
    group: str
    stated: float
    prob: float
    correct: bool
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "line": self.line,
            "kind": self.kind,
            "group": self.group,
            "stated": self.stated,
            "prob": self.prob,
            "correct": self.correct,
            "text": self.text,
        }


@dataclass(frozen=True)
class Stratum:
    """One stratum of the accepted items.

    Attributes
    ----------
    value:
        Its lowest stated value (its only one, unless values were merged).
    upper:
        Its highest stated value (``== value`` for one value).
    accepted:
        ``N_h``: accepted items in it.
    sampled:
        ``n_h``: how many the audit sample draws from it.
    """

    value: float
    accepted: int
    sampled: int
    upper: float

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "upper": self.upper, "accepted": self.accepted, "sampled": self.sampled}


@dataclass(frozen=True)
class ReviewPlan:
    """The queue and the audit sample of one dataset at one threshold.

    Attributes
    ----------
    queue:
        Items with score ``< threshold``, most doubtful first (as
        :func:`calib.routing.review_queue`).
    audit:
        The audit sample of the accepted items, in a random order.
    threshold:
        On the stated scale.
    sample_size:
        The audit sample size asked for (the sample holds ``min(sample_size, accepted)``).
    seed:
        The seed of the draw.
    strata:
        The strata of the accepted items, by increasing value, with their sizes.
    """

    queue: tuple[ReviewItem, ...]
    audit: tuple[ReviewItem, ...]
    threshold: float
    sample_size: int
    seed: int
    strata: tuple[Stratum, ...]

    @cached_property
    def items(self) -> tuple[ReviewItem, ...]:
        """Every item in the order reviewers meet them: the audit sample interleaved
        with the queue (:func:`interleave`)."""
        return interleave(self.queue, self.audit)

    @property
    def accepted(self) -> int:
        """Items accepted unseen (``sum N_h``)."""
        return sum(s.accepted for s in self.strata)

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "sample_size": self.sample_size,
            "seed": self.seed,
            "accepted": self.accepted,
            "strata": [s.to_dict() for s in self.strata],
            "queue": [i.to_dict() for i in self.queue],
            "audit": [i.to_dict() for i in self.audit],
        }


def interleave(queue: tuple[ReviewItem, ...], audit: tuple[ReviewItem, ...]) -> tuple[ReviewItem, ...]:
    """The queue and the audit sample merged, each in its own order, the audit items
    spread evenly: with ``N = Q + A`` items, position ``i`` (0-based) holds an audit item
    exactly when ``floor((i + 1) A / N) > floor(i A / N)``, so the first ``m`` items hold
    ``floor(m A / N)`` audit items (one about every ``N / A``-th item, the last item
    one of them; the first one a queued item unless the queue is empty)."""
    n, a = len(queue) + len(audit), len(audit)
    i = np.arange(n, dtype=np.int64)
    is_audit = (i + 1) * a // max(n, 1) > i * a // max(n, 1)
    q, s = iter(queue), iter(audit)
    return tuple(next(s) if x else next(q) for x in is_audit.tolist())


def scores(rows: Judgments) -> np.ndarray:
    """Each row's score: its stated value snapped as the count table counts it
    (:func:`calib.scale.snap`), what the threshold is compared with."""
    return snap(np.asarray(rows.stated, dtype=np.float64), rows.scale)


def strata(rows: Judgments, threshold: float) -> tuple[np.ndarray, tuple[Stratum, ...]]:
    """The strata of the accepted rows (score ``>= threshold``).

    Returns
    -------
    index, strata:
        Per row, its stratum's index in ``strata`` (``-1`` for a row not accepted), and
        the strata by increasing value with ``sampled = 0``.

    One stratum per distinct score; above :data:`MAX_STRATA` distinct scores, value ``v``
    (with ``c_v`` rows, ``C_v`` rows at lower values, ``N`` accepted) goes to run
    ``floor(MAX_STRATA (C_v + c_v / 2) / N)``: adjacent values, about equal counts, a
    value never split.
    """
    t = check_threshold(threshold)
    s = scores(rows)
    acc = s >= t
    index = np.full(len(rows), -1, dtype=np.int64)
    if not acc.any():
        return index, ()
    values, inverse, counts = np.unique(s[acc], return_inverse=True, return_counts=True)
    if values.size <= MAX_STRATA:
        run = np.arange(values.size)
    else:
        before = np.cumsum(counts) - counts
        run = np.floor(MAX_STRATA * (before + counts / 2) / counts.sum()).astype(np.int64)
        run = np.unique(run, return_inverse=True)[1]  # runs left empty are dropped
    index[acc] = run[inverse]
    out = []
    for h in range(int(run.max()) + 1):
        vs = values[run == h]
        out.append(
            Stratum(value=float(vs[0]), accepted=int(counts[run == h].sum()), sampled=0, upper=float(vs[-1]))
        )
    return index, tuple(out)


def allocate(sizes: np.ndarray, n: int) -> np.ndarray:
    """Sample sizes ``n_h`` per stratum for a sample of ``n``.

    All of every stratum when ``n >= sum N_h``. Otherwise one per stratum first (the
    largest strata first when ``n`` is below the number of strata), then the rest in
    proportion to ``N_h`` by largest remainders, never more than ``N_h``; ties go to the
    lower stratum. ``sum n_h = min(n, sum N_h)``.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    total = int(sizes.sum())
    if n >= total:
        return sizes.copy()
    take = np.zeros(sizes.size, dtype=np.int64)
    by_size = np.argsort(-sizes, kind="stable")
    take[by_size[: min(n, sizes.size)]] = 1
    take = np.minimum(take, sizes)
    while int(take.sum()) < n:
        room = sizes - take
        open_ = room > 0
        left = n - int(take.sum())
        share = np.where(open_, sizes, 0).astype(np.float64)
        quota = left * share / share.sum()
        whole = np.minimum(np.floor(quota).astype(np.int64), room)
        if whole.sum() == 0:  # hand out the remainders one by one
            frac = np.where(open_, quota - np.floor(quota), -1.0)
            order = np.lexsort((np.arange(sizes.size), -frac))
            for h in order[:left]:
                if room[h] > 0:
                    take[h] += 1
            continue
        take += whole
    return take


def review_plan(rows: Judgments, threshold: float, *, sample_size: int, seed: int = 0) -> ReviewPlan:
    """The review queue and a stratified audit sample of the accepted items.

    Parameters
    ----------
    rows:
        The dataset's rows.
    threshold:
        On the stated scale: ``< threshold`` to a person, ``>= threshold`` accepted unseen.
    sample_size:
        How many accepted items to audit (all of them when fewer are accepted), a whole
        number from 0 to :data:`MAX_SAMPLE`.
    seed:
        The seed of the draw (``numpy.random.default_rng``).

    The draw: strata by :func:`strata`, sizes by :func:`allocate`; in each stratum (by
    increasing value) ``n_h`` of its rows, taken in line order, are drawn without
    replacement; then the sample is shuffled. Same inputs, same plan.
    """
    t = check_threshold(threshold)
    n = _check_count(sample_size, "the audit sample size", MAX_SAMPLE)
    sd = _check_count(seed, "the seed", 2**63 - 1)
    keys = item_keys(rows)
    index, st = strata(rows, t)
    take = allocate(np.array([s.accepted for s in st], dtype=np.int64), n)
    rng = np.random.default_rng(sd)
    line_order = np.argsort(np.asarray(rows.line), kind="stable")
    picked: list[np.ndarray] = []
    for h in range(len(st)):
        members = line_order[index[line_order] == h]
        picked.append(rng.choice(members, size=int(take[h]), replace=False))
    sample = np.concatenate(picked) if picked else np.zeros(0, dtype=np.int64)
    sample = sample[rng.permutation(sample.size)]
    queue = _items(rows, keys, queue_order(rows, t), "queue")
    audit = _items(rows, keys, sample, "audit")
    strata_out = tuple(Stratum(s.value, s.accepted, int(take[h]), s.upper) for h, s in enumerate(st))
    return ReviewPlan(queue=queue, audit=audit, threshold=t, sample_size=n, seed=sd, strata=strata_out)


def queue_order(rows: Judgments, threshold: float) -> np.ndarray:
    """Row indices of the items with score ``< threshold``, most doubtful first: by score,
    then line, the order of :func:`calib.routing.review_queue` (tested equal)."""
    s = scores(rows)
    below = np.flatnonzero(s < check_threshold(threshold))
    return below[np.lexsort((np.asarray(rows.line)[below], s[below]))]


def _check_count(value: object, what: str, cap: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise CalibError(f"{what} must be a whole number, got {value!r}")
    if not 0 <= int(value) <= cap:
        raise CalibError(f"{what} must be between 0 and {cap:,}, got {int(value):,}")
    return int(value)


def _items(rows: Judgments, keys: np.ndarray, at: np.ndarray, kind: str) -> tuple[ReviewItem, ...]:
    """The review items of rows ``at``, in that order (columns taken as Python lists at once:
    a queue can hold most of a million rows)."""
    at = np.asarray(at, dtype=np.int64)
    n = at.size
    group = [""] * n if rows.group is None else [str(g) for g in np.asarray(rows.group, dtype=object)[at]]
    text = [""] * n if rows.text is None else ["" if x is None else str(x) for x in np.asarray(rows.text)[at]]
    cols = zip(
        [str(k) for k in keys[at]],
        np.asarray(rows.line)[at].astype(np.int64).tolist(),
        group,
        np.asarray(rows.stated, dtype=np.float64)[at].tolist(),
        np.asarray(rows.prob, dtype=np.float64)[at].tolist(),
        np.asarray(rows.correct, dtype=bool)[at].tolist(),
        text,
        strict=True,
    )
    return tuple(ReviewItem(k, ln, kind, g, s, p, c, x) for k, ln, g, s, p, c, x in cols)
