"""The one formatter set: how every number, interval, p-value and piece of user text is written.

Every face (CLI text, text report, HTML report, dashboard, figures) writes figures through
these functions, so one quantity reads the same everywhere and a missing figure always
shows as :data:`MISSING`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence

#: What a missing (``None``) or non-finite figure reads as, everywhere.
MISSING = "—"


def _missing(x: float | None) -> bool:
    return x is None or not math.isfinite(x)


def pct(x: float | None, digits: int = 1) -> str:
    """A proportion as a percentage: ``0.1234`` -> ``12.3%``."""
    return MISSING if _missing(x) else f"{100 * x:.{digits}f}%"  # type: ignore[operator]


def num(x: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals: ``0.1234`` -> ``0.123``."""
    return MISSING if _missing(x) else f"{x:.{digits}f}"


def count(n: int | None) -> str:
    """A count with thousands separators: ``12345`` -> ``12,345``."""
    return MISSING if n is None else f"{n:,}"


def interval(lo: float | None, hi: float | None, fmt: Callable[[float | None], str] = num) -> str:
    """``[lo, hi]`` written with ``fmt``; empty when either end is missing."""
    return "" if _missing(lo) or _missing(hi) else f"[{fmt(lo)}, {fmt(hi)}]"


def ci_text(ci: Sequence[float | None] | None, digits: int = 3, *, as_pct: bool = False) -> str:
    """An interval given as a pair: ``[0.120, 0.160]``, or ``[12.0, 16.0]`` in percentage
    points with ``as_pct`` (the unit is the figure's beside it); empty when missing."""
    if ci is None or len(ci) != 2:
        return ""
    lo, hi = ci
    if as_pct:
        return interval(lo, hi, lambda x: f"{100 * x:.1f}")  # type: ignore[operator]
    return interval(lo, hi, lambda x: num(x, digits))


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


def esc(text: object) -> str:
    """User text made inert for HTML (the HTML report, Plotly's HTML-like labels)."""
    return html.escape(str(text), quote=True)
