"""The stated scale: which range a model's confidence numbers live on.

A judge asked for "0 to 100" states integers on that scale; the analysis keeps the
raw stated value (the values the model actually used) and maps it to a probability
with the affine rule ``p = (v - lo) / (hi - lo)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from calib.errors import CalibError

#: Scales tried by :func:`detect_scale`, smallest first.
KNOWN_SCALES: tuple[tuple[str, float, float], ...] = (
    ("0-1", 0.0, 1.0),
    ("1-5", 1.0, 5.0),
    ("1-10", 1.0, 10.0),
    ("0-10", 0.0, 10.0),
    ("0-100", 0.0, 100.0),
)


@dataclass(frozen=True)
class Scale:
    """An affine stated scale ``[lo, hi]`` mapped onto probabilities ``[0, 1]``.

    Attributes
    ----------
    lo, hi:
        Ends of the stated scale; ``lo`` maps to probability 0 and ``hi`` to 1.
    name:
        ``"0-1"``, ``"0-100"``, ``"1-10"``, ``"1-5"``, ``"percent"`` (strings like
        ``"85%"``, on 0-100) or ``"LO-HI"`` for a user-given range.
    how:
        Why this scale was chosen, in words (shown in the load report).
    """

    lo: float
    hi: float
    name: str
    how: str = ""

    def __post_init__(self) -> None:
        if not (np.isfinite(self.lo) and np.isfinite(self.hi)) or self.hi <= self.lo:
            raise CalibError(f"scale [{self.lo}, {self.hi}] is not a valid range: need LO < HI")

    def to_prob(self, stated: np.ndarray | float) -> np.ndarray:
        """Map stated values to probabilities: ``(v - lo) / (hi - lo)``."""
        return (np.asarray(stated, dtype=np.float64) - self.lo) / (self.hi - self.lo)

    def to_stated(self, prob: np.ndarray | float) -> np.ndarray:
        """Inverse of :meth:`to_prob`."""
        return self.lo + np.asarray(prob, dtype=np.float64) * (self.hi - self.lo)

    def contains(self, stated: np.ndarray) -> np.ndarray:
        """Boolean mask: which values lie inside ``[lo, hi]``."""
        v = np.asarray(stated, dtype=np.float64)
        return (v >= self.lo) & (v <= self.hi)

    def to_dict(self) -> dict[str, object]:
        return {"lo": self.lo, "hi": self.hi, "name": self.name, "how": self.how}


PROBABILITY = Scale(0.0, 1.0, "0-1", "probabilities")

#: The continuity correction's constant ``c`` in ``(s - lo + c) / (hi - lo + 2c)``.
CORRECTION = 0.5


# ---------------------------------------------------------------- finite probabilities
def scale_steps(scale: Scale) -> float:
    """Number of unit steps in a scale, the unit of the continuity correction.

    A scale spanning 2 or more (0-100, 1-10, 1-5) is counted in steps of 1; a
    probability scale (0-1) in hundredths, so a judge stating 0.95 and one stating
    95 get the same finite probability.
    """
    span = scale.hi - scale.lo
    return float(span) if span >= 2 else 100.0


def finite_from_prob(p: np.ndarray | float, scale: Scale, *, c: float = CORRECTION) -> np.ndarray:
    """Continuity-corrected probability for probabilities ``p = (s - lo) / (hi - lo)``.

    .. math:: f = \\frac{m p + c}{m + 2c}

    with ``m`` = :func:`scale_steps` of ``scale``; ``p`` is clipped to [0, 1] first.
    See :func:`finite_prob`, which takes stated values.
    """
    if not c > 0:
        raise CalibError(f"the continuity correction constant must be positive, got {c:g}")
    steps = scale_steps(scale)
    return (np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0) * steps + c) / (steps + 2 * c)


def finite_prob(stated: np.ndarray | float, scale: Scale, *, c: float = CORRECTION) -> np.ndarray:
    """Continuity-corrected probability of stated values, strictly inside (0, 1).

    .. math:: f(s) = \\frac{u + c}{m + 2c}, \\quad u = m \\frac{s - lo}{hi - lo}

    with ``m`` = :func:`scale_steps` (``hi - lo`` for integer scales), so for a 0-100
    scale and ``c = 1/2``: ``f(s) = (s + 1/2) / 101``; a stated 100 gets
    ``logit(f) = ln 201 = 5.30`` instead of infinity. This is the add-one-half rule
    of Haldane (1956) and Anscombe (1956) for a proportion ``s`` out of ``hi - lo``.
    The recalibration maps (:mod:`calib.maps`) read stated values through it, and
    the calibration tests of :mod:`calib.metrics` read the ends of the scale
    through it.

    Parameters
    ----------
    stated:
        Stated values on ``scale``.
    scale:
        The stated scale.
    c:
        The constant (> 0).
    """
    return finite_from_prob(scale.to_prob(stated), scale, c=c)


def parse_rescale(text: str) -> Scale:
    """Parse a ``--rescale LO,HI`` option such as ``"0,100"``."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2:
        raise CalibError(f"--rescale wants two numbers LO,HI (e.g. 0,100), got {text!r}")
    try:
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        raise CalibError(f"--rescale wants two numbers LO,HI (e.g. 0,100), got {text!r}") from None
    return Scale(lo, hi, f"{parts[0]}-{parts[1]}", f"given: --rescale {parts[0]},{parts[1]}")


def detect_scale(values: np.ndarray, *, percent_strings: bool = False) -> Scale:
    """Choose the smallest known scale that holds (nearly) every value.

    Rules, stated in :attr:`Scale.how` so the user sees what was assumed:

    - values written as percent strings ("85%") are on 0-100;
    - otherwise the first of 0-1, 1-5, 1-10, 0-10, 0-100 that holds at least 99% of
      the finite values wins. The 1% slack keeps one typo ("850") from changing how
      every other line is read; the values outside the chosen scale are then
      reported as bad lines ("outside the scale"), never clipped.

    Half points count: a judge asked for 1-5 that answers 3.5 is still on 1-5 (read
    as 0-100, 3.5 would mean 3.5%). A file whose values are all 0 or 1 is read as
    probabilities 0-1; integers 0-10 with some 0s as 0-10, not as 0-100. Small
    scales are ambiguous by nature (a 0-100 judge that only ever said 1 to 5 looks
    like 1-5), which is why the assumption is stated and ``--rescale`` overrides it.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if percent_strings:
        return Scale(0.0, 100.0, "percent", 'values written as percentages ("85%"): 0-100')
    if v.size == 0:
        return Scale(0.0, 1.0, "0-1", "no values to detect from; assumed 0-1")
    for name, lo, hi in KNOWN_SCALES:
        inside = v[(v >= lo) & (v <= hi)]
        if inside.size < 0.99 * v.size:
            continue
        outside = v.size - inside.size
        extra = f"; {outside} value(s) outside it" if outside else ""
        return Scale(
            lo, hi, name,
            f"values from {inside.min():g} to {inside.max():g}: assumed the {name} scale{extra}",
        )
    raise CalibError(
        f"cannot tell the confidence scale: values run from {v.min():g} to {v.max():g}, "
        "more than 1% of them outside 0-100; give the scale with --rescale LO,HI"
    )


#: Significant digits, relative to the scale's span, kept by :func:`snap`.
SNAP_DIGITS = 12


def snap(values: np.ndarray, scale: Scale) -> np.ndarray:
    """Stated values rounded to a decimal grid of about ``1e-12`` of the scale's span.

    The grid step is ``10 ** -d`` with ``d = SNAP_DIGITS - ceil(log10(hi - lo))``:
    1e-12 on 0-1, 1e-11 on 1-5, 1-10 and 0-10, 1e-10 on 0-100 (1e-12 to 1e-11 of
    the span). Why: one value reached by different floating-point paths (the top
    softmax probability of different logit vectors, a percentage divided back)
    differs in its last bits (``0.39999999999999997`` vs ``0.4000000000000001``)
    and would otherwise make two cells, two "distinct values" and, at a bin edge,
    two bins. Double-precision noise is about ``1e-16`` of the value, 10,000 times
    below the grid; real steps of a scale (0.4 vs 0.4001, 95 vs 95.5) are millions
    of grid steps apart and stay distinct.

    A value with at most ``d`` decimals (95, 0.95, 0.4001) is returned unchanged,
    bit for bit (``np.round`` multiplies by ``10**d``, rounds to an integer and
    divides back, which gives the double nearest that decimal); others move by at
    most half a step (1/3 becomes 0.333333333333 on 0-1). Noise that straddles the
    midpoint between two grid points (a true value within about 1e-16 of a
    midpoint, which no stated decimal is) can still split in two cells, as
    before. On a scale far from 0 (1000-1001) the grid is coarser than 1e-12 of the
    span so that ``v * 10**d`` stays an exact integer. ``-0.0`` becomes ``0.0``.
    """
    v = np.asarray(values, dtype=np.float64)
    span = float(scale.hi - scale.lo)
    size = max(abs(float(scale.lo)), abs(float(scale.hi)), span)
    # the second bound keeps v * 10**d below 1e15 < 2**53 (exact integers) on scales far from 0
    decimals = min(SNAP_DIGITS - math.ceil(math.log10(span)), 15 - math.ceil(math.log10(size)))
    return np.round(v, decimals) + 0.0
