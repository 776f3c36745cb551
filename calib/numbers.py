"""The one sanitiser: a number as a plain float, or ``None`` when it is missing or not finite.

Results leave the engine as JSON (strict: no NaN or Infinity), so every optional figure
passes through :func:`finite_or_none` on its way out.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def finite_or_none(x: object) -> float | None:
    """A plain float, or ``None`` for NaN/inf/None.

    A one-element array (a kernel's result for one rep) gives its element: this is
    how point estimates leave the batch kernels for JSON (strict: no NaN)."""
    if x is None:
        return None
    v = float(np.asarray(x).reshape(-1)[0]) if np.ndim(x) else float(x)  # type: ignore[arg-type]
    return v if math.isfinite(v) else None


def plain(x: Any) -> Any:
    """``x`` ready for strict JSON, recursively: numpy scalars made Python numbers, tuples made
    lists, keys made strings, and every non-finite float ``None`` (:func:`finite_or_none`)."""
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return finite_or_none(x)
    return x
