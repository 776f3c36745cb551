"""Comparing two audits' JSON: equal keys and values, floats to 1e-9 relative (cell sums
from a GROUP BY and from rows may differ in the last bit)."""

from __future__ import annotations

import pytest


def same_json(a: object, b: object, path: str = "") -> None:
    """Assert ``a`` and ``b`` are the same JSON value (floats to 1e-9 relative), naming
    the path of the first difference."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), path
        for k in a:
            same_json(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same_json(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and not isinstance(b, bool) and isinstance(b, int | float):
        assert b == pytest.approx(a, rel=1e-9, abs=1e-12), path
    else:
        assert a == b, path
