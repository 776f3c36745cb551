"""The one formatter set: how every number, interval, p-value and piece of user text is written.

Every face (CLI text, text report, HTML report, dashboard, figures) writes figures through
these functions, so one quantity reads the same everywhere and a missing figure always
shows as :data:`MISSING`. The three formats the engine's own sentences need (:func:`pct`,
:func:`value`, :func:`p_value`) are defined in :mod:`calib.wording` and exported from here.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from calib.wording import MISSING, missing, p_value, pct, value

__all__ = ["MISSING", "ci_text", "count", "esc", "estimate", "interval", "level_interval", "money", "num", "p_value", "pct",
           "points", "sig", "signed", "term", "value"]


def num(x: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals: ``0.1234`` -> ``0.123``."""
    return MISSING if missing(x) else f"{x:.{digits}f}"


def sig(x: float | None, digits: int = 3) -> str:
    """A number with ``digits`` significant digits: ``94.62`` -> ``94.6``, ``0.9462`` -> ``0.946``."""
    return MISSING if missing(x) else f"{x:.{digits}g}"


def signed(x: float | None, digits: int = 3) -> str:
    """A change, always with its sign: ``-0.0123`` -> ``-0.012``, ``0.05`` -> ``+0.050``."""
    return MISSING if missing(x) else f"{x:+.{digits}f}"


def points(x: float | None, digits: int = 1) -> str:
    """A difference of proportions in percentage points, signed: ``0.167`` -> ``+16.7 pts``."""
    return MISSING if missing(x) else f"{100 * x:+.{digits}f} pts"  # type: ignore[operator]


def count(n: float | None) -> str:
    """A count with thousands separators: ``12345`` -> ``12,345`` (a float, such as an
    interval's end, rounded to a whole number)."""
    if isinstance(n, int):
        return f"{n:,}"
    return MISSING if missing(n) else f"{n:,.0f}"


def money(x: float | None, digits: int = 2) -> str:
    """A cost with thousands separators: ``1958`` -> ``1,958.00``."""
    return MISSING if missing(x) else f"{x:,.{digits}f}"


def term(coef: float, digits: int = 4) -> str:
    """A coefficient added to a formula, with its own sign: ``-0.8824`` -> ``- 0.8824``,
    ``0.5`` -> ``+ 0.5000`` (never ``+ -0.8824``)."""
    return f"{'-' if coef < 0 else '+'} {abs(coef):.{digits}f}"


def estimate(x: float | None, lo: float | None, hi: float | None,
             fmt: Callable[[float | None], str] = num) -> str:
    """A figure with its interval, both ends written like the figure:
    ``1,958.00 [1,724.98, 2,204.05]``; the figure alone without an interval."""
    ci = interval(lo, hi, fmt)
    return f"{fmt(x)} {ci}" if ci and not missing(x) else fmt(x)


def interval(lo: float | None, hi: float | None, fmt: Callable[[float | None], str] = num) -> str:
    """``[lo, hi]`` written with ``fmt``; empty when either end is missing."""
    return "" if missing(lo) or missing(hi) else f"[{fmt(lo)}, {fmt(hi)}]"


def level_interval(level: float, lo: float | None, hi: float | None,
                   fmt: Callable[[float | None], str] = num) -> str:
    """An interval with its level, as headline metrics show it: ``95% [0.120, 0.160]``
    (:data:`calib.present.explain.INTERVAL_PATTERN`); empty when either end is missing."""
    text = interval(lo, hi, fmt)
    return f"{100 * level:g}% {text}" if text else ""


def ci_text(ci: Sequence[float | None] | None, digits: int = 3, *, as_pct: bool = False) -> str:
    """An interval given as a pair: ``[0.120, 0.160]``, or ``[12.0, 16.0]`` in percentage
    points with ``as_pct`` (the unit is the figure's beside it); empty when missing."""
    if ci is None or len(ci) != 2:
        return ""
    lo, hi = ci
    if as_pct:
        return interval(lo, hi, lambda x: f"{100 * x:.1f}")  # type: ignore[operator]
    return interval(lo, hi, lambda x: num(x, digits))


def esc(text: object) -> str:
    """User text made inert for HTML (the HTML report, Plotly's HTML-like labels)."""
    return html.escape(str(text), quote=True)
