"""The one logistic solver: maximum-likelihood logistic regression on binomial cells.

A cell (a row of the design matrix ``X``, shape ``(cells, p)``) holds ``n`` answers of
which ``k`` were right; the model is ``logit P(right) = X beta`` and the log-likelihood

.. math:: \\ell(\\beta) = \\sum_c k_c \\eta_c - n_c \\log(1 + e^{\\eta_c}), \\quad \\eta = X \\beta

is concave, so Newton's method with step halving finds the global maximum when one
exists (McCullagh & Nelder 1989, sect. 4.4: this is iteratively reweighted least squares).
:func:`newton` fits many count vectors on the same cells at once (the bootstrap's
resamples, the Monte Carlo draws of :mod:`calib.metrics.cox`); :func:`logistic_fit` is one
fit with an intercept, as the recalibration maps (:mod:`calib.maps`) use it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit, log_expit

#: A fit whose linear predictor reaches this size in some cell has its maximum at infinity
#: (the outcomes are separated): the fitted probabilities saturate in double precision.
SEPARATED_ETA = 30.0


def loglik(eta: np.ndarray, n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Binomial log-likelihood per row of ``eta, n, k`` (shape ``(..., cells)``)."""
    # k log s(eta) + (n - k) log s(-eta) = (k - n) eta + n log s(eta)
    return ((k - n) * eta + n * log_expit(eta)).sum(axis=-1)


def _newton_step(h: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``h^-1 g`` per row; 0 where the information matrix ``h`` is singular (the maximum
    is at infinity there, or the rep has no information) or the step is not finite."""
    step = np.zeros_like(g)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ok = np.linalg.det(h) > 0
        if ok.any():
            try:
                step[ok] = np.linalg.solve(h[ok], g[ok][..., None])[..., 0]
            except np.linalg.LinAlgError:  # pragma: no cover - det > 0 makes h invertible
                step[ok] = 0.0
    return np.where(np.isfinite(step), step, 0.0)


def _halve(cur: np.ndarray, beta: np.ndarray, step: np.ndarray, X: np.ndarray, n: np.ndarray,
           k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step lengths ``t`` (halved up to 40 times) so that no row's likelihood drops, and
    the likelihood there."""
    t = np.ones(beta.shape[0])
    new = loglik((beta + step) @ X.T, n, k)
    for _ in range(40):
        worse = new < cur - 1e-12 * np.abs(cur)
        if not worse.any():
            break
        t = np.where(worse, t / 2, t)
        new = np.where(worse, loglik((beta + t[:, None] * step) @ X.T, n, k), new)
    return t, new


def newton(
    X: np.ndarray, n: np.ndarray, k: np.ndarray, beta: np.ndarray, *, safe: bool, iters: int,
    need_ll: bool = True, gtol: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Newton iterations for ``logit P = X beta``, one fit per row of ``n, k``.

    Parameters
    ----------
    X:
        Design matrix, shape ``(cells, p)`` (a 1-d array is one column).
    n, k:
        Answers and right answers per cell, shape ``(reps, cells)``.
    beta:
        Starting coefficients, shape ``(reps, p)``.
    safe:
        Halve steps that lower the likelihood (guaranteed ascent; needed from a cold
        start and under separation); without it the plain Newton step is taken, which
        converges quadratically from a warm start.
    iters:
        Most Newton steps.
    need_ll:
        Without ``safe``: whether to compute the final log-likelihood (else zeros).
    gtol:
        Also stop a fit, as settled, where every component of the gradient is below this.

    Returns
    -------
    beta, ll, settled:
        Coefficients ``(reps, p)``, log-likelihood ``(reps,)`` and whether each fit's
        last step was below ``1e-10`` of its coefficients' size (or its gradient below ``gtol``).
    """
    X = np.asarray(X, dtype=np.float64)
    X = X[:, None] if X.ndim == 1 else X
    beta = np.array(beta, dtype=np.float64)
    p = X.shape[1]
    cur = loglik(beta @ X.T, n, k) if safe else np.zeros(beta.shape[0])
    done = np.zeros(beta.shape[0], dtype=bool)
    xx = (X[:, :, None] * X[:, None, :]).reshape(X.shape[0], p * p)  # information as one product
    # only the rows still moving are iterated: most resamples settle in 3 or 4 steps
    act, na, ka = np.arange(beta.shape[0]), n, k
    for _ in range(iters):
        bb = beta[act]
        mu = expit(bb @ X.T)
        nmu = na * mu
        g = (ka - nmu) @ X
        step = _newton_step(((nmu - nmu * mu) @ xx).reshape(-1, p, p), g)
        flat = np.zeros(act.size, dtype=bool) if gtol is None else np.max(np.abs(g), axis=1) < gtol
        t = np.ones(act.size)
        if safe:
            t, new = _halve(cur[act], bb, step, X, na, ka)
            cur[act] = np.where(flat, cur[act], new)
        t = np.where(flat, 0.0, t)
        bb = bb + t[:, None] * step
        beta[act] = bb
        settled = flat | (np.max(np.abs(t[:, None] * step), axis=1) < 1e-10 * (1 + np.abs(bb).sum(axis=1)))
        done[act] = settled
        if settled.all():
            break
        if settled.any():
            act, na, ka = act[~settled], na[~settled], ka[~settled]
    if not safe and need_ll:
        cur = loglik(beta @ X.T, n, k)
    return beta, cur, done


def logistic_fit(
    x: np.ndarray, n: np.ndarray, k: np.ndarray, *, intercept: bool = True, max_iter: int = 100
) -> tuple[np.ndarray, bool]:
    """Maximum-likelihood logistic regression on cells (binomial counts).

    Maximises ``sum_c k_c eta_c - n_c log(1 + e^eta_c)`` with ``eta = X beta``
    by Newton's method with step halving (:func:`newton`); the loss is convex so this
    finds the global optimum when one exists. Rows of ``x`` are cells; ``n`` rows per
    cell of which ``k`` were right.

    Returns
    -------
    beta, converged:
        Coefficients (intercept last when ``intercept``); ``converged`` is False when
        the maximum is at infinity (the outcomes are separated by ``x``) or Newton
        did not settle in ``max_iter`` steps.
    """
    X = np.asarray(x, dtype=np.float64)
    X = X[:, None] if X.ndim == 1 else X
    n = np.asarray(n, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if intercept:
        X = np.column_stack([X, np.ones(X.shape[0])])
    beta = np.zeros(X.shape[1])
    tot = n.sum()
    if intercept and tot > 0 and 0 < k.sum() < tot:
        beta[-1] = math.log(k.sum() / (tot - k.sum()))
    gtol = 1e-11 * max(tot, 1.0)
    fitted, _, settled = newton(X, n[None, :], k[None, :], beta[None, :], safe=True, iters=max_iter, gtol=gtol)
    beta = fitted[0]
    eta = X @ beta
    flat = np.max(np.abs(X.T @ (n * expit(eta) - k))) < gtol
    return beta, bool(flat or (settled[0] and np.max(np.abs(eta)) < SEPARATED_ETA))
