"""A threshold certificate on traffic that stays valid however often it is checked.

Contract
--------
- Candidates are fixed before any outcome: the lower edges of the strata of
  :func:`calib.traffic.plan.strata` (at most :data:`~calib.traffic.plan.MAX_VALUE_STRATA`).
  At candidate ``t`` (accept ``stated >= t``) the accepted items are whole strata ``h >= c``,
  so the error among accepted is ``sum_{h>=c} N_h e_h / M_c``, ``e_h`` stratum ``h``'s error
  rate: the inclusion weights of the stratified design are these ``N_h / M_c``.
- Per stratum, an anytime-valid upper confidence sequence for ``e_h`` from its labels in
  arrival order: the betting (capital process) sequence of Waudby-Smith & Ramdas (JRSS-B
  2024), one-sided: ``K_t(m) = prod_i (1 + lambda_i (m - X_i))`` with ``X_i`` = wrong and the
  predictable plug-in bet ``lambda_i = min(sqrt(2 log(1/alpha) / (sigma^2_{i-1} i log(1+i))),
  c/(1-m))``, ``c = 3/4``; ``m`` is rejected once ``K_t(m) >= 1/alpha``, the bound is the
  largest unrejected ``m`` on a grid of step 1/:data:`GRID` rounded up. ``alpha = delta / H``
  over the ``H`` strata (a union bound); the candidates share the strata's sequences, so no
  union over candidates is needed, and every bound at every label holds at once with
  probability ``>= 1 - delta``. Labels of a stratum are taken as draws with replacement
  from it (the plan draws without, which only helps when ``n_h`` is far below ``N_h``);
  a stratum labelled in full has its error known exactly. A review-queue stratum (a plan with
  ``queue_below``: reviewed whole, in no random order) keeps the bound 1 until it is labelled
  in full.
- Bookkeeping (:func:`certify`): after label ``k`` (all labels in arrival order) each
  candidate's bound is ``sum N_h U_h(k) / M_c`` (``U_h = 1`` before a stratum's first label).
  The certified threshold is the lowest candidate whose bound is ``<= target`` after the
  last label; ``since_label`` the first label of the run of labels through the last at which
  it stayed ``<= target``. A candidate certified at some label whose bound is now above the
  target is *withdrawn* (an alarm). ``labels_needed``: when nothing is certified, about how
  many more labels the strata a candidate accepts need for its bound to fall under the
  target if each stratum's error rate stays what its labels show (a projection, not a promise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.traffic.plan import FLOOR, Strata, strata
from calib.traffic.read import Labelled

#: Grid steps of the bound on [0, 1].
GRID = 1000
#: The bet's cap as a share of its largest safe value.
BET_CAP = 0.75
#: Multipliers of the current labels tried by the ``labels_needed`` projection.
PROJECTION = (1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)


def betting_upper(x: np.ndarray, alpha: float) -> np.ndarray:
    """Per prefix of ``x`` (values in [0, 1], in order) the betting upper confidence bound
    for their mean (see the module's contract); anytime-valid at level ``1 - alpha``."""
    x = np.asarray(x, dtype=float)
    n = x.size
    if n == 0:
        return np.zeros(0)
    t = np.arange(1, n + 1, dtype=float)
    mu = (0.5 + np.cumsum(x)) / (t + 1)
    var = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    prev_var = np.concatenate([[0.25], var[:-1]])
    lam = np.sqrt(2 * math.log(1 / alpha) / (prev_var * t * np.log1p(t)))
    m = np.arange(GRID + 1) / GRID
    cap = BET_CAP / np.maximum(1 - m, 1e-12)
    bets = np.minimum(lam[:, None], cap[None, :])
    logk = np.cumsum(np.log1p(bets * (m[None, :] - x[:, None])), axis=0)
    rejected = logk >= math.log(1 / alpha)
    # the largest unrejected grid point, rounded up one step
    kept = np.where(~rejected, m[None, :], -1.0).max(axis=1)
    return np.minimum(kept + 1.0 / GRID, 1.0)


@dataclass(frozen=True)
class Certificate:
    """What :func:`certify` found; :meth:`to_dict` is ``calib certify --json``."""

    certified: bool
    threshold: float | None
    bound: float | None
    since_label: int | None
    withdrawn: bool
    labels_needed: int | None
    target_error: float
    confidence: float
    labels: int
    candidates: tuple[dict[str, Any], ...]
    withdrawn_thresholds: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "certified": self.certified, "threshold": self.threshold, "bound": self.bound,
            "since_label": self.since_label, "withdrawn": self.withdrawn, "labels_needed": self.labels_needed,
            "target_error": self.target_error, "confidence": self.confidence, "labels": self.labels,
            "withdrawn_thresholds": list(self.withdrawn_thresholds), "candidates": list(self.candidates),
            "method": "anytime-valid betting confidence sequence per stratum (Waudby-Smith & Ramdas 2024), "
                      "union bound over strata, stratum weights N_h/M; valid at every label at once",
        }


def stratum_bounds(of: np.ndarray, wrong: np.ndarray, size: np.ndarray, alpha: float,
                   whole: np.ndarray | None = None) -> np.ndarray:
    """``(labels, H)``: after each label (arrival order; ``of`` its stratum) each stratum's upper
    bound. ``whole`` per stratum: reviewed whole in no random order (the review queue), so its
    bound stays 1 until it is labelled in full."""
    n, h = of.size, size.size
    out = np.ones((n, h))
    for s in range(h):
        at = np.flatnonzero(of == s)
        if at.size == 0:
            continue
        u = betting_upper(wrong[at], alpha) if whole is None or not whole[s] else np.ones(at.size)
        if at.size >= size[s]:  # the stratum labelled in full: its error is known
            u[size[s] - 1:] = wrong[at][: int(size[s])].mean()
        col = np.full(n, np.nan)
        col[at] = u
        # carry each stratum's latest bound forward over other strata's labels (1 before its first)
        idx = np.where(~np.isnan(col), np.arange(n), -1)
        idx = np.maximum.accumulate(idx)
        out[:, s] = np.where(idx >= 0, col[np.maximum(idx, 0)], 1.0)
    return out


def _projection(of: np.ndarray, wrong: np.ndarray, size: np.ndarray, alpha: float, target: float) -> int | None:
    """About how many more labels until some candidate's bound is under ``target`` (see contract)."""
    h = size.size
    n = np.bincount(of, minlength=h)
    k = np.bincount(of, weights=wrong, minlength=h)
    rate = np.divide(k, n, out=np.full(h, 0.5), where=n > 0)  # the current rate; 1/2 before any label
    for f in PROJECTION:
        want = np.minimum(np.ceil(f * np.maximum(n, FLOOR)).astype(int), size)
        u = np.empty(h)
        for s in range(h):
            w = np.zeros(want[s])
            hits = int(round(rate[s] * want[s]))
            if hits:
                w[np.linspace(0, want[s] - 1, hits).astype(int)] = 1.0
            u[s] = betting_upper(w, alpha)[-1] if want[s] < size[s] else rate[s]
        more = [int((want[c:] - n[c:]).sum()) for c in range(h)
                if (size[c:] * u[c:]).sum() / size[c:].sum() <= target]
        if more:
            return min(more)
    return None


def bound_path(lab: Labelled, confidence: float, queue_below: float | None = None) -> tuple[Strata, np.ndarray]:
    """The strata and ``(labels, candidates)``: after each label, each candidate's upper bound on
    the error among accepted (candidate ``c`` accepts strata ``c`` and above); ``queue_below`` the
    plan's review threshold (strata split at it)."""
    st = strata(lab.traffic, queue_below)
    size = st.size.astype(float)
    whole = None if queue_below is None else st.high < queue_below
    per = stratum_bounds(st.of[lab.rows], (~lab.correct).astype(float), st.size, (1 - confidence) / len(st), whole)
    tail = np.cumsum((per * size)[:, ::-1], axis=1)[:, ::-1]
    return st, tail / np.cumsum(size[::-1])[::-1]


def certify(lab: Labelled, target_error: float, confidence: float, *,
            queue_below: float | None = None) -> Certificate:
    """The certificate for ``lab``'s traffic (see the module's contract); ``queue_below`` the
    plan's review threshold, when its plan had one (the same strata)."""
    if not 0 < target_error < 1:
        raise CalibError(f"--target-error must be in (0, 1), got {target_error:g}")
    if not 0 < confidence < 1:
        raise CalibError(f"--confidence must be in (0, 1), got {confidence:g}")
    st, bounds = bound_path(lab, confidence, queue_below)
    h = len(st)
    alpha = (1 - confidence) / h
    of = st.of[lab.rows]
    wrong = (~lab.correct).astype(float)
    size = st.size.astype(float)
    ok = bounds <= target_error
    nlab = of.size
    cands, withdrawn = [], []
    best = None
    for c in range(h):
        since = None
        if nlab and ok[-1, c]:
            run = np.flatnonzero(~ok[:, c])
            since = int(run[-1] + 2) if run.size else 1
            if best is None:
                best = c
        elif nlab and ok[:, c].any():
            withdrawn.append(float(st.low[c]))
        cands.append({"threshold": float(st.low[c]), "accepted": int(size[c:].sum()),
                      "bound": float(bounds[-1, c]) if nlab else 1.0, "certified_since_label": since})
    needed = 0 if best is not None else _projection(of, wrong, st.size, alpha, target_error)
    return Certificate(
        best is not None, None if best is None else float(st.low[best]),
        None if best is None else float(bounds[-1, best]),
        None if best is None else cands[best]["certified_since_label"], bool(withdrawn), needed,
        target_error, confidence, nlab, tuple(cands), tuple(withdrawn))
