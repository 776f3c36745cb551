"""A label budget before labelling: how many labels the plan needs to certify a threshold,
and what a given number of labels can detect.

Contract
--------
- **Truth** (:func:`labels_to_certify`): the fitted map (:func:`calib.traffic.plan.fitted_rates`:
  before any label, the stated value: the judge taken at its word), clipped to
  :data:`~calib.traffic.plan.P_CLIP` as the plan's allocation is (no stratum is taken as never
  wrong), is each stratum's true hit rate ``p_h``. Per trial every unlabelled item of stratum ``h`` gets an outcome drawn
  ``Bernoulli(p_h)``; labels already given keep theirs and come first, in arrival order.
- **Labelling as the plan would**: rounds of :data:`ROUND` labels, each allocated by
  :func:`calib.traffic.plan.allocate` at the target (:func:`calib.traffic.plan.neyman_sd`),
  the fitted map refitted from the trial's labels after each round, items drawn at random
  within strata in random order (``calib plan`` then labelling). Beside it, for contrast,
  **uniform**: items drawn at random from the whole unlabelled traffic.
- **Certified** after label ``t`` when some candidate threshold's bound
  (:func:`calib.traffic.certify.stratum_bounds`, the certificate's own bookkeeping) is at
  most the target. A trial's figure is the first such ``t`` (all labels, the given ones
  too), or none within ``max_labels``.
- Reported over ``trials``: the median and the 10% and 90% quantiles of the labels to
  certify (``null`` when that quantile lies past ``max_labels``), and the share of trials
  certified within ``max_labels``. The spread is the sampling spread at the fitted map, not
  the map's own uncertainty: a judge worse than its map needs more.
- **For ``L`` labels** (:func:`detectable`), allocated by the plan from the fitted map:
  the minimum detectable drift of the accuracy and of the error among accepted at the
  focus threshold: ``(z_{1-alpha/2} + z_{0.8}) sqrt(2) se_L``, the change a two-sided test
  at level ``alpha = 1 - confidence`` finds with power 80% between two periods of ``L``
  labels each, ``se_L`` the stratified Horvitz-Thompson standard error at the fitted map
  (:mod:`calib.traffic.estimate`); and the minimum detectable kappa: the smallest Cohen's
  kappa two reviewers labelling the same ``L`` items tell from chance agreement (one-sided
  at ``alpha``, power 80%), ``(z_{1-alpha} + z_{0.8}) SE_0``, ``SE_0`` the standard error of
  kappa under kappa = 0 (Fleiss, Cohen & Everitt 1969) with both reviewers' share of
  "right" the fitted accuracy ``a``: ``SE_0^2 = (p_e + p_e^2 - 2(a^3 + (1-a)^3)) /
  (L (1 - p_e)^2)``, ``p_e = a^2 + (1-a)^2``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from calib.errors import CalibError
from calib.traffic.certify import stratum_bounds
from calib.traffic.plan import (
    P_CLIP,
    Strata,
    allocate,
    fitted_rates,
    neyman_sd,
    rates_from_counts,
    stated_means,
    strata,
)
from calib.traffic.read import Labelled, Traffic

#: Labels per planning round of the simulation (the plan is refitted between rounds).
ROUND = 50
#: Power of the minimum detectable drift and kappa.
POWER = 0.8
#: Default trials and cap on labels of :func:`labels_to_certify`.
TRIALS = 40
MAX_LABELS = 4000
#: Most trials one call may ask for (a limit applied before the cost it guards).
MAX_TRIALS = 2000


def _z(p: float) -> float:
    return float(special.ndtri(p))


def _first_certified(of: np.ndarray, wrong: np.ndarray, st: Strata, alpha: float, target: float) -> int | None:
    """The first label (1-based) after which some candidate's bound is at most ``target``."""
    if of.size == 0:
        return None
    per = stratum_bounds(of, wrong, st.size, alpha)
    size = st.size.astype(float)
    tail = np.cumsum((per * size)[:, ::-1], axis=1)[:, ::-1] / np.cumsum(size[::-1])[::-1]
    ok = (tail <= target).any(axis=1)
    return int(np.argmax(ok)) + 1 if ok.any() else None


def _trial(tr: Traffic, st: Strata, truth: np.ndarray, lab: Labelled | None, target: float, alpha: float,
           max_labels: int, rng: np.random.Generator, uniform: bool) -> int | None:  # long: one simulated run
    """One simulated labelling run: the labels to certify, or ``None`` within ``max_labels``."""
    h = len(st)
    pre_of = st.of[lab.rows] if lab is not None else np.zeros(0, dtype=int)
    pre_wrong = (~lab.correct).astype(float) if lab is not None else np.zeros(0)
    seqs = []
    for s in range(h):
        mine = pre_wrong[pre_of == s]
        rest = (rng.random(int(st.size[s]) - mine.size) >= truth[s]).astype(float)
        seqs.append(np.concatenate([mine, rest]))
    n = np.bincount(pre_of, minlength=h).astype(int)
    order: list[np.ndarray] = [pre_of]
    total = int(pre_of.size)
    room = int(min(max_labels, len(tr))) - total
    if uniform:
        pool = np.repeat(np.arange(h), st.size - n)
        order.append(rng.permutation(pool)[: max(room, 0)])
    s_mean = stated_means(tr, st)
    check = max(2 * ROUND, total)
    while room > 0:
        if not uniform:
            k = np.array([seqs[s][: n[s]].sum() for s in range(h)])
            sd, _ = neyman_sd(tr, st, rates_from_counts(s_mean, n.astype(float), n - k), target)
            add = allocate(st.size, n, sd, min(ROUND, room))
            if add.sum() == 0:
                break
            order.append(rng.permutation(np.repeat(np.arange(h), add)))
            n, room, total = n + add, room - int(add.sum()), total + int(add.sum())
        else:
            total, room = total + room, 0
        if total >= check or room <= 0:  # look at the certificate at doubling checkpoints
            of = np.concatenate(order)[:total]
            wrong = np.zeros(of.size)
            for s in range(h):
                at = np.flatnonzero(of == s)
                wrong[at] = seqs[s][: at.size]
            first = _first_certified(of, wrong, st, alpha, target)
            if first is not None:
                return first
            check = 2 * total
    return None


def _summary(found: list[int | None], max_labels: int) -> dict[str, Any]:
    x = np.array([math.inf if f is None else f for f in found], dtype=float)

    def q(p: float) -> int | None:
        v = float(np.quantile(x, p, method="inverted_cdf"))
        return None if math.isinf(v) else int(v)

    return {"median": q(0.5), "p10": q(0.1), "p90": q(0.9),
            "certified_share": float(np.isfinite(x).mean()), "trials": len(found), "max_labels": max_labels}


def labels_to_certify(lab: Labelled | Traffic, target_error: float, confidence: float, *, trials: int = TRIALS,
                      max_labels: int = MAX_LABELS, seed: int | None = 0, uniform: bool = True) -> dict[str, Any]:
    """The labels the plan needs to certify (see the module's contract), and uniform sampling's."""
    tr = lab.traffic if isinstance(lab, Labelled) else lab
    given = lab if isinstance(lab, Labelled) else None
    if not 1 <= trials <= MAX_TRIALS:
        raise CalibError(f"--trials must be between 1 and {MAX_TRIALS:,}, got {trials}")
    if max_labels < 1:
        raise CalibError(f"--max-labels must be at least 1, got {max_labels}")
    st = strata(tr)
    truth = np.clip(fitted_rates(tr, st, given), *P_CLIP)
    alpha = (1 - confidence) / len(st)
    rng = np.random.default_rng(seed)
    out = {"plan": _summary([_trial(tr, st, truth, given, target_error, alpha, max_labels, rng, False)
                             for _ in range(trials)], max_labels)}
    if uniform:
        out["uniform"] = _summary([_trial(tr, st, truth, given, target_error, alpha, max_labels, rng, True)
                                   for _ in range(trials)], max_labels)
    return out


def _ht_se(size: np.ndarray, n: np.ndarray, p: np.ndarray, domain: np.ndarray) -> float | None:
    """The stratified HT standard error of a domain mean (whole strata) at rates ``p``."""
    size, n = size.astype(float), n.astype(float)
    m = size[domain].sum()
    if m == 0 or np.any(n[domain] == 0):
        return None
    var = size**2 * (1 - n / size) * p * (1 - p) / np.maximum(n, 1)
    return float(math.sqrt(var[domain].sum()) / m)


def detectable(tr: Traffic, lab: Labelled | None, labels: int, target_error: float | None,
               confidence: float) -> dict[str, Any]:
    """What ``labels`` planned labels can detect (see the module's contract)."""
    if labels < 1:
        raise CalibError(f"--planned must be at least 1, got {labels}")
    st = strata(tr)
    p = np.clip(fitted_rates(tr, st, lab), *P_CLIP)
    sd, focus = neyman_sd(tr, st, p, target_error)
    n = allocate(st.size, np.zeros(len(st), dtype=int), sd, labels)
    alpha = 1 - confidence
    zz = _z(1 - alpha / 2) + _z(POWER)
    acc_se = _ht_se(st.size, n, p, np.ones(len(st), dtype=bool))
    c = 0 if focus is None else focus
    err_se = _ht_se(st.size, n, p, np.arange(len(st)) >= c)
    a = float((st.size * p).sum() / st.size.sum())
    pe = a * a + (1 - a) ** 2
    se0 = math.sqrt(max(pe + pe * pe - 2 * (a**3 + (1 - a) ** 3), 0.0) / (labels * (1 - pe) ** 2)) if pe < 1 else None
    return {
        "labels": labels, "allocation": {st.name(h, tr.top): int(n[h]) for h in range(len(st))},
        "accepted_from": st.name(c, tr.top),
        "drift_accuracy": None if acc_se is None else zz * math.sqrt(2) * acc_se,
        "drift_error_accepted": None if err_se is None else zz * math.sqrt(2) * err_se,
        "kappa": None if se0 is None else (_z(1 - alpha) + _z(POWER)) * se0,
        "power": POWER,
    }


def budget(lab: Labelled | Traffic, target_error: float, confidence: float, *, planned: int | None = None,
           trials: int = TRIALS, max_labels: int = MAX_LABELS, seed: int | None = 0) -> dict[str, Any]:
    """``calib budget --json``: ``labels_to_certify`` (plan and uniform) and ``detectable`` for
    ``planned`` labels (default: the plan's median labels to certify, else ``max_labels``)."""
    if not 0 < target_error < 1:
        raise CalibError(f"--target-error must be in (0, 1), got {target_error:g}")
    if not 0 < confidence < 1:
        raise CalibError(f"--confidence must be in (0, 1), got {confidence:g}")
    tr = lab.traffic if isinstance(lab, Labelled) else lab
    given = lab if isinstance(lab, Labelled) else None
    need = labels_to_certify(lab, target_error, confidence, trials=trials, max_labels=max_labels, seed=seed)
    n = planned if planned is not None else (need["plan"]["median"] or max_labels)
    return {
        "traffic": tr.name, "items": len(tr), "labelled": 0 if given is None else int(given.rows.size),
        "target_error": target_error, "confidence": confidence, "labels_to_certify": need,
        "detectable": detectable(tr, given, int(n), target_error, confidence),
        "assumes": "the fitted map is the truth (before any label: the stated confidence), rates clipped to "
                   f"[{P_CLIP[0]:g}, {P_CLIP[1]:g}]; the spread is the sampling spread at it",
    }
