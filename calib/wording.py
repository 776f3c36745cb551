"""How the engine writes a number into its own sentences: a proportion, a stated value, a
p-value, a threshold.

The audit's verdict and notes and the threshold decision's message are engine output
(they are part of the CLI's ``--json``), so the engine needs these formats; the engine never imports the faces, so they live
here, and :mod:`calib.present.format`, the one formatter set of the faces, re-exports them.
A p-value thus reads the same in a verdict sentence and in a table, and a missing figure is
always :data:`MISSING`.
"""

from __future__ import annotations

import math

#: What a missing (``None``) or non-finite figure reads as, everywhere.
MISSING = "—"


def missing(x: float | None) -> bool:
    """True for ``None``, NaN and infinity: a figure that is not there."""
    return x is None or not math.isfinite(x)


def pct(x: float | None, digits: int = 1) -> str:
    """A proportion as a percentage: ``0.1234`` -> ``12.3%``."""
    return MISSING if missing(x) else f"{100 * x:.{digits}f}%"  # type: ignore[operator]


def value(v: float) -> str:
    """A stated value as people write it: ``95``, ``87.5``, ``0.95``."""
    return f"{v:.0f}" if abs(v - round(v)) < 1e-9 else f"{v:.4g}"


def p_value(p: float | None, log10_p: float | None = None, *, bound: bool = False) -> str:
    """A p-value for reading: ``p=0.032``, ``p=3e-12``, ``p<1e-300``; ``p<=2e-04``
    when it is only an upper bound (a Monte Carlo test no draw reached); ``p=0`` for
    data impossible under the hypothesis (:func:`calib.metrics.impossible`)."""
    if p is None:
        return "p undefined"
    if p == 0:
        return "p=0"
    if log10_p is not None and log10_p < -300:
        return "p<1e-300"
    sign = "<=" if bound else "="
    if p >= 0.001:
        return f"p{sign}{p:.3f}"
    return f"p{sign}{p:.0e}"


def short_pct(x: float) -> str:
    """A share as a percentage with at most one decimal (5%, 2.5%)."""
    return f"{100 * x:.1f}".rstrip("0").rstrip(".") + "%"


def threshold_text(t: float) -> str:
    """A threshold as written for a reader: short (``90``), unless shortening would move
    it past a score (``0.909554632`` stays whole: 0.909555 would accept fewer)."""
    short = f"{t:g}"
    return short if float(short) == t else repr(float(t))
