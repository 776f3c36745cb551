"""Brent's root finder and the pool-adjacent-violators algorithm, ported from SciPy bit for bit.

Importing ``scipy.optimize`` costs a fresh process 0.15 to 0.2 s (it imports linprog,
shgo, scipy.linalg, scipy.sparse.linalg and parses their docstrings), more than a small
audit's whole computation. These are the two routines calib takes from it, translated
operation for operation from SciPy 1.17.1, so that they return the same floats bit for bit
(``tests/test_solvers.py`` checks it against SciPy on random and edge-case inputs):

- :func:`brentq`: ``scipy.optimize.brentq``, the C routine ``scipy/optimize/Zeros/brentq.c``
  (Charles Harris) with the checks of its wrappers (``_zeros_py.py``, ``zeros.c``). Brent's
  method keeps a bracket ``[xcur, xblk]`` with ``f`` of opposite signs and steps by inverse
  quadratic (or linear) interpolation when it shrinks the bracket fast enough, else by
  bisection; it stops when half the bracket is below ``(xtol + rtol |xcur|) / 2``.
  Brent, R. P. (1973), *Algorithms for Minimization without Derivatives*, ch. 3-4.
- :func:`isotonic_regression` and :func:`isotonic_regression_rows`:
  ``scipy.optimize.isotonic_regression(y, weights=w).x``, the C++ routine
  ``scipy/optimize/_pava/pava_pybind.cpp``: Algorithm 1 of Busing, F. M. T. A. (2022),
  *Monotone Regression: A Simple and Fast O(n) PAVA Implementation*, Journal of
  Statistical Software, Code Snippets 102(1), with SciPy's ``>=`` merge rule. It solves
  ``min sum_i w_i (y_i - x_i)^2`` subject to ``x_1 <= x_2 <= ...``; a merged block's value
  is recomputed from the running weighted sum, ``sb / wb``, in the order the algorithm
  meets the elements, which is why only the same order gives the same bits.

Python floats are IEEE doubles and numpy's elementwise ``+ - * /`` round as C's do, so the
same operations in the same order give the same results, provided the compiled SciPy fused
no multiply-add into one rounding (an FMA): its x86-64 wheels do not, and the tests'
``==`` comparisons would fail on a build that did.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

import numpy as np

#: SciPy's smallest ``rtol`` for brentq: four machine epsilons.
BRENTQ_MIN_RTOL = 4 * float(np.finfo(float).eps)


def _signbit(x: float) -> bool:
    return math.copysign(1.0, x) < 0


def _div(a: float, b: float) -> float:
    """``a / b`` as C computes it: a zero denominator gives an infinity or NaN, not an error."""
    if b != 0 or math.isnan(b):
        return a / b
    if math.isnan(a) or a == 0:
        return math.nan
    return -math.inf if _signbit(a) != _signbit(b) else math.inf


def brentq(f: Callable[[float], float], a: float, b: float, *, xtol: float = 2e-12,
           rtol: float = BRENTQ_MIN_RTOL, maxiter: int = 100) -> float:
    """A root of ``f`` in ``[a, b]`` by Brent's method: ``scipy.optimize.brentq(f, a, b,
    xtol=xtol, rtol=rtol, maxiter=maxiter)`` to the bit (see the module docstring).

    Raises ``ValueError`` as SciPy does when ``xtol <= 0``, ``rtol`` is below
    :data:`BRENTQ_MIN_RTOL`, ``maxiter < 0``, ``f(a)`` and ``f(b)`` have the same sign, or
    ``f`` returns NaN; ``RuntimeError`` when ``maxiter`` iterations do not converge.

    >>> round(brentq(lambda x: x * x - 2.0, 0.0, 2.0), 10)  # the root is sqrt(2)
    1.4142135624
    """
    maxiter = operator.index(maxiter)
    if xtol <= 0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < BRENTQ_MIN_RTOL:
        raise ValueError(f"rtol too small ({rtol:g} < {BRENTQ_MIN_RTOL:g})")
    if maxiter < 0:
        raise ValueError("maxiter must be >= 0")

    def call(x: float) -> float:
        fx = float(f(x))
        if math.isnan(fx):
            raise ValueError(f"The function value at x={x} is NaN; solver cannot continue.")
        return fx

    # the names follow brentq.c: pre(vious), cur(rent), bl(oc)k, s(tep)
    xpre, xcur = float(a), float(b)
    xblk = fblk = spre = scur = 0.0
    fpre, fcur = call(xpre), call(xcur)
    if fpre == 0:
        return xpre
    if fcur == 0:
        return xcur
    if _signbit(fpre) == _signbit(fcur):
        raise ValueError("f(a) and f(b) must have different signs")
    for _ in range(maxiter):
        if fpre != 0 and fcur != 0 and _signbit(fpre) != _signbit(fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:  # interpolate
                stry = _div(-fcur * (xcur - xpre), fcur - fpre)
            else:  # extrapolate
                dpre = _div(fpre - fcur, xpre - xcur)
                dblk = _div(fblk - fcur, xblk - xcur)
                stry = _div(-fcur * (fblk * dblk - fpre * dpre), dblk * dpre * (fblk - fpre))
            bound = 3 * abs(sbis) - delta
            if 2 * abs(stry) < (abs(spre) if abs(spre) < bound else bound):  # good short step
                spre, scur = scur, stry
            else:  # bisect
                spre = scur = sbis
        else:  # bisect
            spre = scur = sbis
        xpre, fpre = xcur, fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0 else -delta
        fcur = call(xcur)
    raise RuntimeError(f"Failed to converge after {maxiter} iterations.")


def isotonic_regression(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The non-decreasing weighted least-squares fit of ``y``:
    ``scipy.optimize.isotonic_regression(y, weights=w).x`` to the bit (see the module
    docstring). A Python loop, about 0.4 microseconds per element.

    >>> isotonic_regression(np.array([1.0, 3.0, 2.0, 4.0]), np.array([1.0, 1.0, 1.0, 1.0]))
    array([1. , 2.5, 2.5, 4. ])
    """
    x = np.asarray(y, dtype=np.float64).tolist()
    wt = np.asarray(w, dtype=np.float64).tolist()
    n = len(x)
    if n != len(wt):
        raise ValueError("Input arrays y and w must have one dimension of equal length.")
    if n == 0:
        return np.zeros(0)
    if min(wt) <= 0:
        raise ValueError("Weights w must be strictly positive.")
    # pava_pybind.cpp line for line: x and wt hold the blocks' values and weights at
    # 0..b (b <= i), the elements not yet read beyond i; ends[k] is where block k ends
    ends = [1] * n
    b = 0
    xb_prev, wb_prev = x[0], wt[0]
    i = 1
    while i < n:
        b += 1
        xb, wb = x[i], wt[i]
        if xb_prev >= xb:
            b -= 1
            sb = wb_prev * xb_prev + wb * xb
            wb += wb_prev
            xb = sb / wb
            while i < n - 1 and xb >= x[i + 1]:
                i += 1
                sb += wt[i] * x[i]
                wb += wt[i]
                xb = sb / wb
            while b > 0 and x[b - 1] >= xb:
                b -= 1
                sb += wt[b] * x[b]
                wb += wt[b]
                xb = sb / wb
        x[b] = xb_prev = xb
        wt[b] = wb_prev = wb
        ends[b] = i + 1
        i += 1
    sizes = np.diff(np.array([0] + ends[: b + 1]))
    return np.repeat(np.array(x[: b + 1]), sizes)


def isotonic_regression_rows(y: np.ndarray, w: np.ndarray, length: np.ndarray) -> np.ndarray:
    """:func:`isotonic_regression` of every row at once: row ``r``'s first ``length[r]``
    entries of ``y`` and ``w`` (shape ``(rows, width)``) are fitted as SciPy would fit
    them alone, bit for bit; entries beyond ``length[r]`` are returned as they came.

    The rows advance in lockstep, one step of SciPy's loop per row per numpy pass (a new
    element, or one pooling with the next element or the previous block), so the cost is
    about ``2 * width`` passes over ``rows`` values: cheap for many short rows (2,000
    resamples of a 0-100 scale), slower than SciPy's compiled loop for wide rows.
    """
    x, wt = np.array(y, dtype=np.float64, order="C"), np.array(w, dtype=np.float64, order="C")
    rows, width = x.shape
    length = np.asarray(length, dtype=np.int64)
    if rows == 0 or width == 0:
        return x
    if np.any(wt[np.arange(width)[None, :] < length[:, None]] <= 0):
        raise ValueError("Weights w must be strictly positive.")
    xf, wf = x.reshape(-1), wt.reshape(-1)  # views: blocks are written in place, as in SciPy
    base = np.arange(rows, dtype=np.int64) * width
    last = base + np.maximum(length, 1) - 1  # flat index of each row's last element
    ends = np.zeros(rows * width, dtype=np.int64)  # ends[base + k]: where block k ends
    ends[base] = 1
    at = base.copy()  # flat index of the current element i
    blk = base.copy()  # flat index of the current block b
    xb_prev, wb_prev = xf[base].copy(), wf[base].copy()
    xb, wb, sb = np.zeros(rows), np.ones(rows), np.zeros(rows)
    next_, up, down, done = 0, 1, 2, 3
    phase = np.where(length > 1, next_, done)
    with np.errstate(divide="ignore", invalid="ignore"):
        while True:
            # rows pooling: one more element (up violations), else one more block (down)
            in_up = phase == up
            nxt = np.minimum(at + 1, last)
            grow = in_up & (at < last) & (xb >= xf[nxt])
            check = (phase == down) | (in_up & ~grow)
            shrink = check & (blk > base) & (xf[np.maximum(blk - 1, base)] >= xb)
            store = check & ~shrink
            at = at + grow
            blk = blk - shrink
            pool = grow | shrink
            if pool.any():
                src = np.where(grow, at, blk)
                wv = wf[src]
                sb = np.where(pool, sb + wv * xf[src], sb)
                wb = np.where(pool, wb + wv, wb)
                xb = np.where(pool, sb / wb, xb)
                phase = np.where(shrink, down, phase)
            if store.any():
                s = blk[store]
                xf[s], wf[s], ends[s] = xb[store], wb[store], at[store] - base[store] + 1
                xb_prev = np.where(store, xb, xb_prev)
                wb_prev = np.where(store, wb, wb_prev)
                phase = np.where(store, next_, phase)
            # rows at a new element: a new block, or the start of a pooling
            in_next = phase == next_
            if not in_next.any():
                if not (phase != done).any():
                    break
                continue
            finished = in_next & (at >= last)
            go = in_next & ~finished
            phase = np.where(finished, done, phase)
            at = at + go
            xv, wv = xf[at], wf[at]
            viol = go & (xb_prev >= xv)
            new = go & ~viol
            if new.any():
                blk = blk + new
                s, a = blk[new], at[new]
                xf[s], wf[s], ends[s] = xf[a], wf[a], a - base[new] + 1
                xb_prev = np.where(new, xv, xb_prev)
                wb_prev = np.where(new, wv, wb_prev)
            if viol.any():
                sb = np.where(viol, wb_prev * xb_prev + wv * xv, sb)
                wb = np.where(viol, wv + wb_prev, wb)
                xb = np.where(viol, sb / wb, xb)
                phase = np.where(viol, up, phase)
    fitted = _spread_blocks(x, ends.reshape(rows, width), blk - base + 1)
    inside = np.arange(width)[None, :] < length[:, None]
    return np.where(inside, fitted, np.asarray(y, dtype=np.float64))


def _spread_blocks(values: np.ndarray, ends: np.ndarray, nblocks: np.ndarray) -> np.ndarray:
    """Every element takes its block's value: block ``k`` of row ``r`` holds
    ``values[r, k]`` and ends before ``ends[r, k]`` (SciPy's last loop, for all rows)."""
    rows, width = values.shape
    valid = np.arange(width)[None, :] < (nblocks - 1)[:, None]  # the ends of all blocks but the last
    mark = np.zeros((rows, width + 1), dtype=np.int64)
    mark[np.broadcast_to(np.arange(rows)[:, None], (rows, width))[valid], ends[valid]] = 1
    block_of = np.cumsum(mark[:, :width], axis=1)
    return np.take_along_axis(values, np.minimum(block_of, width - 1), axis=1)
