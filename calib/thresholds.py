"""Where a review threshold can sit, and the rule for two of them.

One owner for three decisions the engine and the dashboard's widgets share:

- :func:`positions`: the thresholds a slider offers, one per distinct routing of the
  values the judge used (quantiles of them for a continuous score), and
  :func:`snap_position`, the position that routes as a given threshold does;
- :func:`is_continuous`: whether a score has too many distinct values for one position
  each (a softmax probability, not a 0-100 judge);
- :func:`band_upper`: below the lower threshold to a person, at or above the upper one
  accepted unseen, between them a middle band; an upper threshold at or below the lower
  one makes no band, and routes as no upper threshold does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Most threshold positions offered on a slider (beyond that, quantiles of the used values).
MAX_POSITIONS = 101


def positions(values: Sequence[float] | np.ndarray, top: float, extra: Sequence[float] = ()) -> tuple[float, ...]:
    """The thresholds a slider offers: one per distinct routing of the used ``values``.

    With ``< t`` to a person, thresholds ``t1 < t2`` route alike exactly when no used
    value lies in ``[t1, t2)``; so the distinct routings are ``t = v`` for each used
    value ``v`` (``v`` and above accepted; at the lowest, everything) and ``t = top``
    (the scale's top) when it is above every used value (everything to a person). A
    slider over these moves to the next distinct routing on every key press (issue 22:
    on a 0-100 scale with six used values, 93 routed as 95 did).

    Above :data:`MAX_POSITIONS` distinct values (a continuous score), quantiles of them
    (each a used value) with ``extra`` (default, current, recommended threshold) added;
    ``extra`` is ignored otherwise: :func:`snap_position` maps any threshold onto the
    position that routes alike.
    """
    u = np.unique(np.asarray(values, dtype=np.float64))
    out = {float(x) for x in u}
    if is_continuous(u):
        at = np.unique(np.round(np.linspace(0, u.size - 1, MAX_POSITIONS)).astype(np.int64))
        out = {float(x) for x in u[at]} | {float(x) for x in extra}
    if u.size == 0 or float(top) > float(u[-1]):
        out.add(float(top))
    return tuple(sorted(out))


def snap_position(where: Sequence[float], x: float) -> float:
    """The lowest position at or above ``x`` (the one routing as ``x`` does when the
    positions are :func:`positions` of every used value), else the highest."""
    above = [p for p in where if p >= x - 1e-12 * max(1.0, abs(x))]
    return float(above[0]) if above else float(where[-1])


def is_continuous(values: Sequence[float] | np.ndarray) -> bool:
    """Whether the used ``values`` are a continuous score: more than :data:`MAX_POSITIONS`
    distinct values, so a slider offers quantiles of them, not every one."""
    return int(np.unique(np.asarray(values, dtype=np.float64)).size) > MAX_POSITIONS


def band_upper(lower: float, upper: float | None) -> float | None:
    """The upper threshold that opens a middle band ``[lower, upper)``, or ``None``.

    ``upper`` when it is above ``lower``; ``None`` when there is none or it is at or
    below ``lower`` (``[t, t)`` holds no item: the routing is that of no upper
    threshold). :func:`calib.routing.route` refuses an upper threshold below the lower
    one given by a user; the dashboard's view drops it (a link's setting) or moves it
    above the lower one (a slider), each with this rule.

    >>> band_upper(60, 80), band_upper(60, 60), band_upper(60, None)
    (80, None, None)
    """
    return upper if upper is not None and upper > lower else None
