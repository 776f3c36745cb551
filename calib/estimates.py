"""One value type for a figure and its interval: :class:`Estimate`.

A number the engine reports carries its uncertainty; :class:`Estimate` holds both in one
value (the figure, the ends of its interval, the interval's level and how it was made),
so results, tables and sentences read one thing instead of a figure and a parallel
``x_ci`` field that could drift apart. The JSON schemas keep their ``x`` and ``x_ci``
keys: :attr:`Estimate.ci` and :meth:`Estimate.to_list` give the ``[lo, hi]`` they hold.

Missing is ``None``: a figure undefined on the data, an interval not computed (no
resamples) or undefined in too many resamples. The map scores of :mod:`calib.maps.scoring`
keep NaN from their kernels instead (their readers test ``math.isnan``); :meth:`Estimate.to_dict`
writes both as ``null``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from calib.numbers import finite_or_none

#: :attr:`Estimate.method` of the percentile bootstrap interval (Efron & Tibshirani 1993, ch. 13).
PERCENTILE = "percentile bootstrap"
#: :attr:`Estimate.method` of the Wilson score interval of a proportion (Wilson 1927).
WILSON = "Wilson"
#: :attr:`Estimate.method` of a figure given without an interval.
NONE = "none"
#: :attr:`Estimate.method` of the ECE's interval (:func:`calib.bootstrap.ece_interval`;
#: the audit's JSON ``ece_ci_method``).
POPULATION_ECE = ("interval for the population ECE: lower end the basic-bootstrap bound of the debiased ECE, "
                  "upper end the percentile bound of the plug-in ECE (calib.bootstrap.ece_interval)")
#: :attr:`Estimate.note` of the plug-in ECE beside the interval for the population ECE.
POPULATION_ECE_NOTE = ("the interval is for the population ECE; the plug-in ECE is biased upward by each bin's "
                       "noise and can lie above it")


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its interval.

    Attributes
    ----------
    value:
        The estimate (``None`` where undefined).
    lo, hi:
        The interval's ends (``None`` when not computed or undefined).
    level:
        The interval's confidence level, e.g. 0.95 (``None`` without an interval).
    method:
        How the interval was made (:data:`PERCENTILE`, :data:`WILSON`, or a sentence).
    note:
        Why the interval may not hold :attr:`value`, when it is built so (e.g. an
        interval for the population ECE beside the upward-biased plug-in ECE): an
        interval never excludes its own estimate without saying why. Also why a figure
        is undefined or has no interval, where its result says (the labels' ``reason``).

    Examples
    --------
    >>> e = Estimate(0.783, 0.757, 0.808, 0.95, PERCENTILE)
    >>> e.ci
    (0.757, 0.808)
    >>> e.to_list()
    [0.757, 0.808]
    >>> e.contains(0.8), e.contains(0.81)
    (True, False)
    >>> e.excludes_own_estimate
    False

    Without resamples there is no interval, and nothing can be said to lie in it:

    >>> bare = Estimate.point(0.5)
    >>> bare.ci, bare.has_interval, bare.contains(0.5)
    ((None, None), False, None)
    >>> bare.to_dict()
    {'value': 0.5, 'ci': [None, None]}

    A most-used value's bootstrap share is the largest of many counts, biased upward, so
    its percentile interval can miss the estimate (1 answer in 80 at the top value):

    >>> Estimate(1 / 80, 0.038, 0.075, 0.95, PERCENTILE).excludes_own_estimate
    True
    """

    value: float | None
    lo: float | None
    hi: float | None
    level: float | None
    method: str
    note: str = ""

    @classmethod
    def point(cls, value: float | None) -> Estimate:
        """A figure without an interval."""
        return cls(value, None, None, None, NONE)

    @classmethod
    def of(cls, value: float | None, ci: tuple[float | None, float | None] | None, level: float | None,
           method: str, note: str = "") -> Estimate:
        """From a figure and a ``(lo, hi)`` pair (``None``: no interval)."""
        lo, hi = (None, None) if ci is None else ci
        return cls(value, lo, hi, level, method, note)

    @property
    def ci(self) -> tuple[float | None, float | None]:
        """``(lo, hi)``: the interval as the JSON's ``x_ci`` holds it."""
        return (self.lo, self.hi)

    def to_list(self) -> list[float | None]:
        """``[lo, hi]`` for JSON."""
        return [self.lo, self.hi]

    @property
    def has_interval(self) -> bool:
        """Both ends of the interval are known."""
        return self.lo is not None and self.hi is not None

    def contains(self, x: float) -> bool | None:
        """Whether ``lo <= x <= hi`` (``None`` without an interval)."""
        if self.lo is None or self.hi is None:
            return None
        return self.lo <= x <= self.hi

    @property
    def excludes_own_estimate(self) -> bool:
        """The interval is known and does not hold :attr:`value` (then :attr:`note`
        should say why)."""
        return self.value is not None and self.contains(self.value) is False

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "ci": [lo, hi]}``, strict JSON (non-finite numbers as ``None``)."""
        return {"value": finite_or_none(self.value), "ci": [finite_or_none(self.lo), finite_or_none(self.hi)]}
