"""The text report and the JSON rendering of an audit."""

from __future__ import annotations

import json
import re

import numpy as np

from calib.audit import audit
from calib.loadreport import LineIssue, LoadReport
from calib.present.text_report import render_text, to_json
from calib.scale import Scale
from calib.table import from_counts

PCT = Scale(0.0, 100.0, "0-100", "values from 85 to 100: assumed the 0-100 scale")


def qwen(group: np.ndarray | None = None):  # type: ignore[no-untyped-def]
    v = np.array([85.0, 90.0, 95.0, 100.0])
    n, k = np.array([60, 10, 878, 52]), np.array([34, 7, 694, 48])
    if group is not None:
        v, n, k = np.tile(v, 2), np.tile(n, 2), np.tile(k, 2)
    return from_counts(v, n, k, scale=PCT, group=group)


def test_text_report_reads_like_the_reference_post() -> None:
    issue = LineIssue(line=3, field=None, reason="invalid JSON", detail="not valid JSON", source="qwen.jsonl")
    rep = LoadReport(source="qwen.jsonl", format="stated", lines_read=1001, kept=1000, dropped=1,
                     dropped_by_reason={"invalid JSON": 1}, issues=(issue,), scale=PCT.to_dict())
    text = render_text(audit(qwen(), reps=300, name="qwen2.5:14b", load_report=rep))
    assert text.startswith("Calibration audit: qwen2.5:14b\n")
    assert "read 1,001 lines: kept 1,000, dropped 1 (1 invalid JSON)" in text
    assert "qwen.jsonl:line 3: not valid JSON" in text
    assert "A stated 95 meant 79% [76, 82], and it meant it 878 times." in text
    # the per-value table: stated, n, share, right, interval, gap
    row = next(line for line in text.splitlines() if re.match(r"\s+95\s+878\s", line))
    assert "87.8%" in row and "79.0%" in row and "+16.0" in row
    assert re.search(r"Brier score\s+0\.194\s+\[", text)
    assert "Spiegelhalter Z (not used)" in text
    assert "nan" not in text.lower()


def test_groups_table_and_no_resamples() -> None:
    g = np.array(["llama"] * 4 + ["qwen"] * 4)
    text = render_text(audit(qwen(g), reps=0, name="both"))
    assert "By group (2)" in text
    assert re.search(r"^\s+qwen\s+1,000\s+78\.3%", text, flags=re.M)
    assert "interval (" not in text  # no bootstrap, no interval column


def test_json_rendering_is_strict_and_parses_back() -> None:
    a = audit(from_counts(np.array([80.0, 90.0]), np.array([5, 5]), np.array([5, 5]), scale=PCT), reps=50)
    s = to_json(a)
    assert "NaN" not in s and "Infinity" not in s
    d = json.loads(s)
    assert d["auroc"] is None and d["n"] == 10
    assert json.loads(to_json(a, indent=None)) == d
