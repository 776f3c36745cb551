"""Estimates on the whole traffic from the labelled items: accuracy, error among accepted, hit rates.

Contract
--------
The design is the plan's (:mod:`calib.traffic.plan`): in each stratum ``h`` the ``n_h``
labelled items are a simple random sample of its ``N_h`` items. A quantity is the mean of
``z_i`` over a domain ``D`` of ``M`` items known without outcomes (all items for accuracy,
``z`` = right; items with stated value ``>= T`` for the error among accepted, ``z`` = wrong).

- **Design-based** (:func:`horvitz_thompson`): the stratified Horvitz-Thompson estimate
  ``(1/M) sum_h N_h zbar_h`` (``zbar_h`` over the stratum's labelled items, ``z = 0`` outside
  ``D``), variance ``(1/M^2) sum_h N_h^2 (1 - n_h/N_h) S_h^2 / n_h``, where ``S_h^2`` is the
  binary variance ``q(1-q) n_h/(n_h-1)`` at the smoothed share ``q = (k_h+1)/(n_h+2)`` (so a
  stratum whose labels all agree still carries variance).
- **Model-assisted** (:func:`difference`): prediction-powered inference with a power-tuned
  weight (Angelopoulos et al., *Science* 2023; PPI++, Angelopoulos, Duchi & Zrnic 2024),
  here the survey difference estimator: the predictor ``g_i`` is the fitted map's
  probability of ``z`` (:func:`calib.traffic.plan.fitted_rates` per stratum, times the
  item's stated value over its stratum's mean) for *every* item, known on the whole
  traffic; estimate ``(1/M) sum_h [lambda G_h + N_h rbar_h]`` with ``G_h`` the stratum's
  sum of ``g`` and ``r = z - lambda g`` on the labelled items; ``lambda`` minimises the
  variance (sum of ``a_h Cov_h(z, g)`` (labelled items) over sum of ``a_h Var_h(g)`` (all the stratum's items),
  ``a_h = N_h^2 (1 - n_h/N_h)/n_h``), and each stratum's residual variance is its smoothed ``S_h^2`` times the
  sample ratio ``Var(r)/Var(z)`` (no reduction claimed where the labels do not vary). With
  ``lambda = 0`` it is the design-based estimate, so it is never wider than labels alone in
  expectation; the narrower of the two is reported, the other kept beside it.
- Clusters (:attr:`calib.traffic.read.Traffic.cluster`: one conversation, Inspect epochs): the
  plan draws items, not clusters, so the interval above is design-valid for this traffic
  whatever the clusters; with clusters each stratum's variance is multiplied by its design
  effect (:func:`design_effects`, cluster-robust over independent, at least 1), so that the
  interval also holds for the judge on traffic like this, where labelled items of one cluster
  are not independent evidence (Kish 1965; Cameron & Miller 2015). Never narrower.
- The review queue (a plan with ``queue_below``): items below the review threshold are in
  strata of their own, each reviewed (inclusion probability 1); a queue stratum labelled in
  full is known exactly (its finite-population correction is 0); until then its labelled items
  stand for the rest of it.
- Intervals are normal at ``level``, clipped to [0, 1]; ``uniform_labels_equivalent`` is
  how many labels drawn uniformly from the traffic would give the same standard error:
  the fewest uniform labels ``n`` whose standard error by the same rule (the smoothed variance
  at the ``n M/N`` labels expected in the domain, share = the estimate, corrected for the finite
  traffic) is at most ``se`` (so an estimate of 0 or 1 is not taken as a variance of 0).
- ``per_value``: per stratum the labelled items' hit rate with a Wilson interval.

Refused (``estimate: null`` with the reason) when a stratum holding part of the domain
has no label: nothing in the labels speaks for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from calib.errors import CalibError
from calib.metrics.values import wilson_interval
from calib.settings import DEFAULT_UPPER_PROB, LEVEL
from calib.traffic.plan import Strata, fitted_rates, strata
from calib.traffic.read import Labelled


@dataclass(frozen=True)
class TrafficEstimate:
    """One quantity's survey estimate on the whole traffic, with its design details (not
    :class:`calib.estimates.Estimate`, the engine's figure-with-interval: this one adds the
    standard error, the labels behind it and the method not reported): ``method`` is ``"stratified Horvitz-Thompson"`` or
    ``"PPI++ (difference estimator)"``; ``se`` its standard error; ``labels`` the labelled
    items in the domain; ``other`` the method not reported, with its estimate and interval."""

    estimate: float | None
    ci: tuple[float, float] | None
    se: float | None
    method: str
    labels: int
    uniform_labels_equivalent: int | None
    reason: str = ""
    other: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"estimate": self.estimate, "ci": None if self.ci is None else list(self.ci),
               "method": self.method, "labels": self.labels,
               "uniform_labels_equivalent": self.uniform_labels_equivalent, "se": self.se}
        if self.reason:
            out["reason"] = self.reason
        if self.other is not None:
            out["alternative"] = self.other
        return out


def smoothed_var(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The binary variance ``q(1-q) n/(n-1)`` at ``q = (k+1)/(n+2)`` (``n = 1``: divided by 1)."""
    q = (k + 1.0) / (n + 2.0)
    return q * (1 - q) * n / np.maximum(n - 1.0, 1.0)


def _stats(of: np.ndarray, h: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per stratum the sum of ``x`` and of ``x^2`` over labelled items (``of`` their strata)."""
    return np.bincount(of, weights=x, minlength=h), np.bincount(of, weights=x * x, minlength=h)


def design_effects(of: np.ndarray, z: np.ndarray, cluster: np.ndarray | None, h: int) -> np.ndarray:
    """Per stratum the cluster design effect of the labelled items' mean of ``z``: the
    cluster-robust (sandwich) variance ``G/(G-1) sum_g e_g^2 / n^2``, ``e_g`` cluster ``g``'s sum of
    ``z - zbar_h`` over its ``G`` clusters (Cameron & Miller 2015), over the independent-items
    variance ``s^2 / n``; at least 1 (never narrower). One cluster: ``n`` (one effective label)."""
    out = np.ones(h)
    if cluster is None:
        return out
    for s in range(h):
        at = np.flatnonzero(of == s)
        n = at.size
        if n < 2:
            continue
        zs = z[at]
        keys, g = np.unique(np.asarray(cluster)[at].astype(str), return_inverse=True)
        if keys.size == n:
            continue
        if keys.size == 1:
            out[s] = float(n)
            continue
        e = np.bincount(g, weights=zs - zs.mean())
        robust = keys.size / (keys.size - 1) * float((e**2).sum()) / n**2
        iid = float(zs.var(ddof=1)) / n
        if iid > 0:
            out[s] = max(1.0, robust / iid)
    return out


def horvitz_thompson(size: np.ndarray, of: np.ndarray, z: np.ndarray, m: int,
                     deff: np.ndarray | None = None) -> tuple[float, float]:
    """``(estimate, se)`` of the domain mean (see the module's contract). ``size`` per stratum,
    ``of`` and ``z`` per labelled item; every stratum with ``z``'s domain needs a label; ``deff``
    per stratum the cluster design effect (:func:`design_effects`) multiplying its variance."""
    h = size.size
    n = np.bincount(of, minlength=h).astype(float)
    k, _ = _stats(of, h, z)
    used = n > 0
    zbar = np.divide(k, n, out=np.zeros(h), where=used)
    var = np.where(used, size**2 * (1 - n / size) * smoothed_var(k, n) / np.maximum(n, 1), 0.0)
    if deff is not None:
        var = var * deff
    return float((size * zbar).sum() / m), float(math.sqrt(var.sum()) / m)


def difference(size: np.ndarray, of: np.ndarray, z: np.ndarray, g_lab: np.ndarray, g_sum: np.ndarray,
               g_sq: np.ndarray, m: int, deff: np.ndarray | None = None) -> tuple[float, float, float]:
    """``(estimate, se, lambda)`` of the domain mean by the power-tuned difference estimator;
    ``g_sum`` and ``g_sq`` per stratum the sums of ``g`` and ``g^2`` over all its items (``Var(g)``
    is then the stratum's own, known without labels, as PPI++ takes it from the unlabelled data)."""
    h = size.size
    n = np.bincount(of, minlength=h).astype(float)
    sz, szz = _stats(of, h, z)
    sg, _ = _stats(of, h, g_lab)
    szg = np.bincount(of, weights=z * g_lab, minlength=h)
    ok = n >= 2
    d = np.maximum(n - 1, 1)
    cov = np.where(ok, (szg - sz * sg / np.maximum(n, 1)) / d, 0.0)
    vg = np.where(ok, (g_sq - g_sum**2 / size) / np.maximum(size - 1, 1), 0.0)
    vz = np.where(ok, (szz - sz**2 / np.maximum(n, 1)) / d, 0.0)
    a = np.where(n > 0, size**2 * (1 - n / size) / np.maximum(n, 1), 0.0)
    lam = float((a * cov).sum() / (a * vg).sum()) if (a * vg).sum() > 0 else 0.0
    vr = np.maximum(vz - 2 * lam * cov + lam**2 * vg, 0.0)
    ratio = np.where(ok & (vz > 0), vr / np.where(vz > 0, vz, 1.0), 1.0)
    var = a * smoothed_var(sz, n) * ratio * (1.0 if deff is None else deff)
    rbar = np.divide(sz - lam * sg, n, out=np.zeros(h), where=n > 0)
    est = (lam * g_sum + size * rbar).sum() / m
    return float(est), float(math.sqrt(var.sum()) / m), lam


def _interval(est: float, se: float, level: float) -> tuple[float, float]:
    zq = float(-special.ndtri((1 - level) / 2))
    return max(0.0, est - zq * se), min(1.0, est + zq * se)


def _uniform_equivalent(est: float, se: float, m: int, total: int) -> int | None:
    """The fewest labels drawn uniformly from the traffic whose standard error, by this module's
    own rule (the smoothed variance at ``n_d = n M/N`` labels in the domain with share ``est``,
    finite-population corrected), is at most ``se``; ``None`` when ``se`` is 0."""
    if se <= 0:
        return None

    def se_of(n: int) -> float:
        nd = max(n * m / total, 1.0)
        v = float(smoothed_var(np.array(est * nd), np.array(nd)))
        return math.sqrt(v * max(1.0 - n / total, 0.0) / nd) / 1.0

    lo, hi = 1, total
    if se_of(lo) <= se:
        return lo
    while hi - lo > 1:  # se_of falls as n grows
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if se_of(mid) <= se else (mid, hi)
    return hi


def domain_estimate(lab: Labelled, st: Strata, in_domain: np.ndarray, z_all: np.ndarray | None,
                    g_all: np.ndarray, level: float = LEVEL) -> TrafficEstimate:
    """The estimate of the mean of ``z`` over the items ``in_domain`` (see the module's contract).

    ``z_all`` is ``None`` and ``lab.correct`` used for right, or a per-labelled-item array;
    ``g_all`` per traffic item the predictor of ``z``."""
    rows = lab.rows
    z = lab.correct.astype(float) if z_all is None else z_all
    z = z * in_domain[rows]
    g = g_all * in_domain
    m = int(in_domain.sum())
    labels = int(in_domain[rows].sum())
    if m == 0:
        return TrafficEstimate(None, None, None, "none", 0, None, "no item in the domain")
    h = len(st)
    touched = np.bincount(st.of, weights=in_domain.astype(float), minlength=h) > 0
    n = np.bincount(st.of[rows], minlength=h)
    bare = touched & (n == 0)
    if bare.any():
        return TrafficEstimate(None, None, None, "none", labels, None,
                        f"{int(bare.sum())} stratum(s) holding part of it have no label yet; plan labels first")
    of = st.of[rows]
    cl = lab.traffic.cluster
    deff = design_effects(of, z, None if cl is None else cl[rows], h)
    ht = horvitz_thompson(st.size.astype(float), of, z, m, deff)
    g_sum = np.bincount(st.of, weights=g, minlength=h)
    g_sq = np.bincount(st.of, weights=g * g, minlength=h)
    dif = difference(st.size.astype(float), of, z, g[rows], g_sum, g_sq, m, deff)
    total = len(lab.traffic)
    cands = [("stratified Horvitz-Thompson", ht[0], ht[1]), ("PPI++ (difference estimator)", dif[0], dif[1])]
    cands.sort(key=lambda c: c[2])
    (name, est, se), (oname, oest, ose) = cands
    est = min(max(est, 0.0), 1.0)
    other = {"method": oname, "estimate": min(max(oest, 0.0), 1.0), "ci": list(_interval(oest, ose, level)),
             "se": ose}
    return TrafficEstimate(est, _interval(est, se, level), se, name, labels, _uniform_equivalent(est, se, m, total),
                    other=other)


def predictor(lab: Labelled, st: Strata) -> np.ndarray:
    """Per traffic item the fitted probability of right: the stratum's fitted rate, moved within
    the stratum in proportion to the item's stated value over the stratum's mean (clipped to [0, 1])."""
    tr = lab.traffic
    p = fitted_rates(tr, st, lab)
    mean = np.bincount(st.of, weights=tr.prob, minlength=len(st)) / st.size
    scale = np.divide(tr.prob, mean[st.of], out=np.ones(len(tr)), where=mean[st.of] > 0)
    return np.clip(p[st.of] * scale, 0.0, 1.0)


def _wilson(k: int, n: int, level: float) -> tuple[float, float]:
    lo, hi = wilson_interval(k, n, level)
    return float(lo), float(hi)


def estimate(lab: Labelled, threshold: float | None = None, level: float = LEVEL, *,
             queue_below: float | None = None) -> dict[str, Any]:
    """``calib estimate --json``: ``accuracy``, ``error_accepted`` (at ``threshold`` on the
    stated scale, default :data:`calib.settings.DEFAULT_UPPER_PROB` of it) and ``per_value``;
    ``queue_below`` the plan's review threshold (strata split at it, :func:`calib.traffic.plan.strata`)."""
    tr = lab.traffic
    t = DEFAULT_UPPER_PROB * tr.top if threshold is None else float(threshold)
    if not 0 <= t <= tr.top:
        raise CalibError(f"--threshold {t:g} is outside the stated scale 0-{tr.top:g}")
    st = strata(tr, queue_below)
    f = predictor(lab, st)
    everything = np.ones(len(tr), dtype=bool)
    accepted = tr.stated >= t
    acc = domain_estimate(lab, st, everything, None, f, level)
    err = domain_estimate(lab, st, accepted, (~lab.correct).astype(float), 1 - f, level)
    per = []
    n = np.bincount(st.of[lab.rows], minlength=len(st))
    k = np.bincount(st.of[lab.rows], weights=lab.correct.astype(float), minlength=len(st))
    for h in range(len(st)):
        e = float(k[h] / n[h]) if n[h] else None
        per.append({"stratum": st.name(h, tr.top), "items": int(st.size[h]), "labels": int(n[h]),
                    "estimate": e, "ci": list(_wilson(int(k[h]), int(n[h]), level)) if n[h] else None})
    return {"traffic": tr.name, "items": len(tr), "threshold": t, "accepted": int(accepted.sum()),
            "level": level, "accuracy": acc.to_dict(), "error_accepted": err.to_dict(), "per_value": per,
            "labels": lab.summary(),
            "design": "labelled items taken as a simple random sample of their stratum (the plan's design)"}
