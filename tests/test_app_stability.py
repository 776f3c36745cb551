"""Route stability on the Routing page (issue 28, item 3), driven headless with Streamlit's
AppTest: a file whose items are judged three times is uploaded; the share of items whose
route flips at the review threshold, its Wilson interval and the spread of the stated
confidence are counted here per item from the JSON lines (plain Python), not with calib."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import app, ok, upload

pytestmark = pytest.mark.usefixtures("fresh_caches")


def repeated_file(seed: int = 5, items: int = 150, epochs: int = 3) -> bytes:
    """Each item judged ``epochs`` times: its stated value jitters around its own level."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(items):
        level = rng.choice([60, 70, 80, 90])
        right = bool(rng.random() < level / 100)
        for _ in range(epochs):
            s = int(np.clip(level + rng.choice([-10, 0, 0, 10]), 0, 100))
            lines.append(json.dumps({"id": f"it{i}", "confidence": s, "correct": right}))
    return ("\n".join(lines) + "\n").encode()


def by_hand(data: bytes, threshold: float) -> tuple[int, int, tuple[float, float], float]:
    """Items repeated, items routed both ways, the 95% Wilson interval, median per-item SD."""
    items: dict[str, list[float]] = {}
    for line in data.decode().splitlines():
        row = json.loads(line)
        items.setdefault(row["id"], []).append(float(row["confidence"]))
    rep = [v for v in items.values() if len(v) >= 2]
    k = sum(1 for v in rep if min(v) < threshold <= max(v))
    n, z = len(rep), 1.959963984540054
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
    return n, k, (centre - half, centre + half), statistics.median(statistics.stdev(v) for v in rep)


def routing_after_upload(data: bytes) -> AppTest:
    at = app()
    at.query_params.update({"reps": "50"})
    at = upload(ok(at.run()), "epochs.jsonl", data)
    at.switch_page("pages/5_Routing.py")
    return ok(at.run())


def test_route_flips_at_the_review_threshold_per_item():
    data = repeated_file()
    at = routing_after_upload(data)
    assert any(s.value == "Route stability" for s in at.subheader)
    m = {x.label: x for x in at.main.metric}
    n, k, (lo, hi), sd = by_hand(data, 80.0)  # the default review threshold: probability 0.8 on 0-100
    assert 0 < k < n
    assert m["Items whose route flips"].value == f"{100 * k / n:.1f}% ({k:,} of {n:,})"
    assert m["Items whose route flips"].delta == f"95% [{100 * lo:.1f}%, {100 * hi:.1f}%]"
    assert m["Spread of stated confidence (median SD)"].value == f"{sd:.3g}"
    assert m["Items judged more than once"].value == f"{n:,}"
    texts = "\n".join(t.value for t in at.text)
    assert "Threshold certificate, the item as the unit" in texts
    assert any("The unit is the item" in c.value for c in at.caption)


def test_moving_the_threshold_recounts_the_flips():
    data = repeated_file()
    at = routing_after_upload(data)
    at.select_slider(key="w_lo").set_value(90.0)  # the review threshold, as a person moves it
    ok(at.run())
    n, k, _, _ = by_hand(data, 90.0)
    m = {x.label: x.value for x in at.main.metric}
    assert m["Items whose route flips"] == f"{100 * k / n:.1f}% ({k:,} of {n:,})"


def test_no_section_when_each_item_is_judged_once():
    data = b"".join(json.dumps({"id": f"u{i}", "confidence": 50 + i % 50, "correct": i % 3 > 0}).encode() + b"\n"
                    for i in range(300))
    at = routing_after_upload(data)
    assert not any(s.value == "Route stability" for s in at.subheader)
