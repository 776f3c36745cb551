"""Gaps between probabilities are worded in the unit they are in: "points" only on a 0-100
scale (where a point of the scale is a percentage point), "percentage points" on any other
(on 1-10 "16 points" would read as 16 points of the scale)."""

from __future__ import annotations

import numpy as np
import pytest

from calib.audit import audit
from calib.scale import PROBABILITY, Scale
from calib.table import from_counts

# overconfident on every scale: stated 90% (of the scale) while 60-70% right
CASES = [
    (Scale(0.0, 100.0, "0-100"), [80.0, 90, 100], "points"),
    (Scale(1.0, 10.0, "1-10"), [8.2, 9.1, 10], "percentage points"),
    (Scale(1.0, 5.0, "1-5"), [4.2, 4.6, 5], "percentage points"),
    (PROBABILITY, [0.8, 0.9, 1.0], "percentage points"),
]


@pytest.mark.parametrize("scale, values, unit", CASES, ids=[c[0].name for c in CASES])
def test_overconfidence_is_worded_in_its_unit(scale, values, unit):
    t = from_counts(np.array(values), np.array([400, 400, 400]), np.array([240, 260, 280]), scale=scale)
    text = "\n".join(audit(t, reps=0).verdict)
    assert f" {unit} overconfident on average" in text, text
    assert f" {unit} on average" in text.split("Miscalibrated", 1)[-1], text
    if unit == "points":
        assert "percentage points" not in text
