"""The one sanitiser: a number as a plain float, or ``None`` when it is missing or not finite.

Results leave the engine as JSON (strict: no NaN or Infinity), so every optional figure
passes through :func:`finite_or_none` on its way out.
"""

from __future__ import annotations

import math

import numpy as np


def finite_or_none(x: object) -> float | None:
    """A plain float, or ``None`` for NaN/inf/None.

    A one-element array (a kernel's result for one rep) gives its element: this is
    how point estimates leave the batch kernels for JSON (strict: no NaN)."""
    if x is None:
        return None
    v = float(np.asarray(x).reshape(-1)[0]) if np.ndim(x) else float(x)  # type: ignore[arg-type]
    return v if math.isfinite(v) else None
