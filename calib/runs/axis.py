"""Where a review threshold can sit, for a face's widgets: the positions a slider offers,
whether a score is continuous, the one rule for two thresholds (:mod:`calib.thresholds`),
the default thresholds of a scale (:func:`calib.routing.default_thresholds`).

Light on purpose (numpy only at import): the dashboard's threshold panel is on every
page, the Data page's first paint included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from calib.thresholds import band_upper, is_continuous, positions, snap_position

if TYPE_CHECKING:
    from calib.scale import Scale

__all__ = ["band_upper", "default_thresholds", "is_continuous", "positions", "snap_position"]


def default_thresholds(scale: Scale, on: str = "stated") -> tuple[float, float]:
    """``(lower, upper)`` default thresholds of ``scale`` (:func:`calib.routing.default_thresholds`)."""
    from calib.routing import default_thresholds as run

    return run(scale, on)
