"""The error rate among items accepted unseen, estimated from the labelled audit sample.

Contract
--------
:func:`accepted_error` rebuilds the strata of the accepted items from the rows and the
threshold (:func:`calib.labels.plan.strata`: the audit sample was drawn in them), takes the
labelled items of the audit sample (labels of kind ``"audit"``; each item's verdict the
final label, :func:`calib.labels.outcomes.human_correct`; tied or only-unsure items not counted) and estimates

    p = sum_h W_h p_h,    W_h = N_h / N,    p_h = x_h / m_h

(``N_h`` accepted and ``m_h`` labelled items of stratum ``h``, ``x_h`` of them wrong;
Cochran 1977, ch. 5), with the variance of a stratified random sample

    v = sum_h W_h^2 (1 - m_h / N_h) s_h^2 / m_h,   s_h^2 = m_h p_h (1 - p_h) / (m_h - 1)

(a stratum with one label borrows ``s^2 = p (1 - p)`` of the overall estimate). The interval
is Korn & Graubard's (1998) exact-style one: Clopper-Pearson evaluated at the effective
sample size ``n* = p (1 - p) / v``, adjusted for the degrees of freedom
``n* (t_{m-1} / t_{m-H})^2`` (``t_d`` the ``(1 + level)/2`` quantile of Student's t with
``d`` degrees of freedom, ``H`` the labelled strata), capped at the ``m`` labelled items and
set to ``m`` when ``p`` is 0 or 1 (as the NCHS standards for proportions do, Parker et al.
2017), with ``x* = n* p``:

    lower = B^{-1}((1 - level)/2; x*, n* - x* + 1),   upper = B^{-1}((1 + level)/2; x* + 1, n* - x*)

(0 and 1 at ``x* = 0`` and ``x* = n*``). Strata of accepted items with no labelled item make
the estimate incomplete: the point estimate is then over the labelled strata (their
weights renormalised) and the interval is widened to hold whatever the unlabelled strata
hold, ``[W lower, W upper + (1 - W)]`` with ``W`` the labelled strata's weight.
``bench/sim_audit_sample.py`` measures the coverage (README, "Human labels").

References: E. L. Korn and B. I. Graubard, "Confidence intervals for proportions with
small expected number of positive counts estimated from survey data", Survey Methodology
24 (1998) 193-201; J. D. Parker et al., "National Center for Health Statistics data
presentation standards for proportions", Vital Health Stat 2(175), 2017; W. G. Cochran,
Sampling Techniques, 3rd ed., 1977.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from calib.errors import CalibError
from calib.estimates import NONE, Estimate
from calib.labels.outcomes import human_correct, votes
from calib.labels.plan import strata
from calib.labels.records import ADJUDICATION, Label
from calib.routing import check_threshold
from calib.rows import Judgments


@dataclass(frozen=True)
class StratumError:
    """One stratum's share of the estimate.

    Attributes
    ----------
    value, upper:
        Its lowest and highest stated value.
    accepted:
        ``N_h``.
    labelled:
        ``m_h``: labelled audit-sample items in it.
    errors:
        ``x_h``: of them, the ones the reviewers call wrong.
    weight:
        ``W_h = N_h / N``.
    """

    value: float
    upper: float
    accepted: int
    labelled: int
    errors: int
    weight: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "upper": self.upper,
            "accepted": self.accepted,
            "labelled": self.labelled,
            "errors": self.errors,
            "weight": self.weight,
            "rate": self.errors / self.labelled if self.labelled else None,
        }


#: :attr:`Estimate.method` of :attr:`AcceptedError.rate` (formulas in the module).
KORN_GRAUBARD = "stratified estimate, Korn-Graubard interval"


@dataclass(frozen=True)
class AcceptedError:
    """The error rate among the accepted, from the audit sample (see the module).

    Attributes
    ----------
    threshold:
        On the stated scale; accepted means score ``>= threshold``.
    accepted:
        ``N``: items accepted unseen.
    labelled, errors:
        Labelled audit-sample items among them, and how many the reviewers call wrong.
    rate:
        The weighted error rate with its Korn-Graubard interval at ``level``
        (:data:`KORN_GRAUBARD`), an :class:`~calib.estimates.Estimate` (value ``None``
        with no labelled item).
    level:
        The interval level asked for.
    effective_n:
        ``n*`` of the interval.
    complete:
        Every stratum has a labelled item (else the interval is widened, see the module).
    labelled_weight:
        ``W``: the share of the accepted items in strata with a labelled item.
    strata:
        Per stratum.
    outside:
        Audit-sample labels of items not accepted at this threshold (the sample was
        drawn at another threshold): not used.
    unknown:
        Labels whose item is not in the file.
    no_final:
        Labelled audit-sample items without a final label (tied, or only unsure, and not
        adjudicated: :func:`calib.labels.final.final_rule`): not counted.
    """

    threshold: float
    accepted: int
    labelled: int
    errors: int
    rate: Estimate
    level: float
    effective_n: float | None
    complete: bool
    labelled_weight: float
    strata: tuple[StratumError, ...]
    outside: int
    unknown: int
    no_final: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "accepted": self.accepted,
            "labelled": self.labelled,
            "errors": self.errors,
            "estimate": self.rate.value,
            "ci": self.rate.to_list(),
            "level": self.level,
            "effective_n": self.effective_n,
            "complete": self.complete,
            "labelled_weight": self.labelled_weight,
            "method": "stratified estimate, Korn-Graubard interval",
            "strata": [s.to_dict() for s in self.strata],
            "outside": self.outside,
            "unknown": self.unknown,
            "no_final": self.no_final,
            "sentence": self.sentence(),
        }

    def sentence(self) -> str:
        """The estimate in words."""
        r = self.rate
        if r.value is None or r.lo is None or r.hi is None:
            return (
                f"No labelled item of the audit sample among the {self.accepted:,} items accepted unseen at "
                f"{self.threshold:g}: no estimate of their error rate."
            )
        text = (
            f"Error rate among the {self.accepted:,} items accepted unseen at {self.threshold:g}: "
            f"{r.value:.1%} ({self.level:.0%} interval {r.lo:.1%} to {r.hi:.1%}), from "
            f"{self.labelled:,} labelled items of the audit sample ({self.errors:,} wrong), weighted by stratum"
        )
        if not self.complete:
            text += (
                f"; strata holding {1 - self.labelled_weight:.0%} of the accepted have no label, so the "
                "interval allows anything for them"
            )
        if self.no_final:
            text += f"; {self.no_final:,} tied or only unsure items have no final label and are not counted"
        return text + "."


def accepted_error(
    rows: Judgments,
    labels: Sequence[Label],
    threshold: float,
    *,
    level: float = 0.95,
    dataset: str | None = None,
) -> AcceptedError:
    """The error rate among items accepted unseen at ``threshold``, from the labelled items
    of the audit sample, weighted by stratum, with a Korn-Graubard interval.

    Parameters
    ----------
    rows:
        The file's rows.
    labels:
        Labels, history included; only those of kind ``"audit"`` are used.
    threshold:
        The threshold the audit sample was drawn at (stated scale).
    level:
        Interval level, strictly between 0 and 1.
    dataset:
        The dataset the labels are of (default: the one the labels name).
    """
    t = check_threshold(threshold)
    if not 0 < level < 1:
        raise CalibError(f"the interval level must be between 0 and 1, got {level!r}")
    index, st = strata(rows, t)
    audit = [lab for lab in labels if lab.kind == "audit"]
    sampled = {(lab.dataset, lab.item) for lab in audit}  # an adjudication counts for an audit-sample item
    audit += [lab for lab in labels if lab.kind == ADJUDICATION and (lab.dataset, lab.item) in sampled]
    v = votes(rows, audit, dataset=dataset)
    ok, status = human_correct(rows, v)
    h_of = index[v.items]
    decided = (status != "tie") & (status != "unsure")  # no final label: not counted
    inside = (h_of >= 0) & decided
    H = len(st)
    m = np.bincount(h_of[inside], minlength=H).astype(np.int64)
    x = np.bincount(h_of[inside], weights=~ok[inside], minlength=H).astype(np.int64)
    big_n = np.array([s.accepted for s in st], dtype=np.int64)
    N = int(big_n.sum())
    w = big_n / N if N else np.zeros(0)
    per = tuple(
        StratumError(s.value, s.upper, s.accepted, int(m[h]), int(x[h]), float(w[h]))
        for h, s in enumerate(st)
    )
    est, lo, hi, n_eff, weight = korn_graubard(big_n, m, x, level)
    return AcceptedError(
        threshold=t,
        accepted=N,
        labelled=int(m.sum()),
        errors=int(x.sum()),
        rate=(Estimate(est, lo, hi, float(level), KORN_GRAUBARD) if lo is not None and hi is not None
              else Estimate(est, lo, hi, None, NONE)),
        level=float(level),
        effective_n=n_eff,
        complete=bool(H == 0 or np.all(m > 0)),
        labelled_weight=weight,
        strata=per,
        outside=int((h_of < 0).sum()),
        no_final=int(((h_of >= 0) & ~decided).sum()),
        unknown=v.unknown,
    )


def korn_graubard(
    sizes: np.ndarray, labelled: np.ndarray, errors: np.ndarray, level: float
) -> tuple[float | None, float | None, float | None, float | None, float]:
    """The stratified estimate and its Korn-Graubard interval (formulas in the module).

    Parameters
    ----------
    sizes, labelled, errors:
        Per stratum ``N_h``, ``m_h``, ``x_h``.
    level:
        Interval level.

    Returns
    -------
    estimate, lower, upper, effective_n, labelled_weight:
        ``None`` for the first four when nothing is labelled.
    """
    big_n = np.asarray(sizes, dtype=np.float64)
    m = np.asarray(labelled, dtype=np.float64)
    x = np.asarray(errors, dtype=np.float64)
    seen = m > 0
    if big_n.sum() == 0 or not seen.any():
        return None, None, None, None, 0.0
    weight = float(big_n[seen].sum() / big_n.sum())
    w = big_n[seen] / big_n[seen].sum()  # renormalised over the labelled strata
    mh, xh, nh = m[seen], x[seen], big_n[seen]
    ph = xh / mh
    p = float(np.sum(w * ph))
    s2 = np.where(mh > 1, mh * ph * (1 - ph) / np.maximum(mh - 1, 1), p * (1 - p))
    var = float(np.sum(w**2 * (1 - mh / nh) * s2 / mh))
    total = float(mh.sum())
    if p <= 0 or p >= 1 or var <= 0:
        n_eff = total
    else:
        n_eff = p * (1 - p) / var
        df = max(total - mh.size, 1.0)
        if total > 1:
            q = (1 + level) / 2
            n_eff *= (special.stdtrit(total - 1, q) / special.stdtrit(df, q)) ** 2
        n_eff = min(n_eff, total)
    lo, hi = _clopper_pearson(n_eff * p, n_eff, level)
    return p, weight * lo, weight * hi + (1 - weight), n_eff, weight


def _clopper_pearson(k: float, n: float, level: float) -> tuple[float, float]:
    """Clopper-Pearson bounds for ``k`` successes in ``n`` trials, both possibly not whole
    (beta quantiles: ``betaincinv(a, b, q)`` is the ``q`` quantile of Beta(a, b))."""
    a = (1 - level) / 2
    lo = 0.0 if k <= 0 else float(special.betaincinv(k, n - k + 1, a))
    hi = 1.0 if k >= n else float(special.betaincinv(k + 1, n - k, 1 - a))
    return lo, hi if math.isfinite(hi) else 1.0
