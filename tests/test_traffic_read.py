"""Traffic without outcomes: the reader and the label join, the plan, the estimates, the certificate.

Every expected figure is computed here independently: by hand, by brute force, or by ``ppi_py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from calib.errors import CalibError
from calib.labels.records import Label
from calib.traffic.read import Traffic, join_labels, read_traffic


def _traffic(values: list[float], top: float = 100.0) -> Traffic:
    n = len(values)
    return Traffic("t", np.array([f"i{k}" for k in range(n)], dtype=object), np.asarray(values, float), top)


def _label(item: str, correct: bool, k: int, reviewer: str = "a") -> Label:
    return Label(item, correct, reviewer=reviewer, time=f"2026-12-01T10:{k // 60:02d}:{k % 60:02d}Z", kind="audit")


# ------------------------------------------------------------------ reading traffic
def test_traffic_rows_need_no_outcome_and_bad_lines_are_named() -> None:
    data = (b'{"id": "a", "confidence": 90}\n{"id": "b", "confidence": 70, "correct": true}\n'
            b'{"id": "c"}\n{"id": "a", "confidence": 80}\n{"id": "d", "confidence": 140}\nnot json\n'
            b'{"id": "e", "confidence": "NaN"}\n')
    tr = read_traffic(data, "t.jsonl")
    assert list(tr.keys) == ["a", "b"] and list(tr.stated) == [90, 70] and tr.top == 100
    joined = "\n".join(tr.messages)
    for no, why in ((3, "confidence missing"), (4, "repeats line 1"), (5, "outside 0-100"), (6, "not valid JSON"),
                    (7, "not a finite number")):
        assert f"t.jsonl line {no}: " in joined and why in joined


def test_traffic_csv_without_ids_keys_by_line() -> None:
    tr = read_traffic(b"confidence,question\n0.9,x\n0.5,y\n", "t.csv")
    assert list(tr.keys) == ["line 2", "line 3"] and tr.top == 1.0
    with pytest.raises(CalibError, match="no confidence field"):
        read_traffic(b"id,answer\n1,x\n", "t.csv")


def test_labels_join_by_majority_in_arrival_order() -> None:
    tr = _traffic([90, 80, 70])
    labels = [_label("i2", True, 5), _label("i0", False, 1), _label("i0", True, 2, "b"), _label("i0", False, 3, "c"),
              _label("i1", True, 4), _label("i1", False, 6, "b"), _label("zz", True, 7)]
    lab = join_labels(tr, labels)
    # i0 first (time 1, majority wrong), i2 (time 5, right); i1 is a tie: left unlabelled
    assert list(lab.rows) == [0, 2] and list(lab.correct) == [False, True]
    assert (lab.ties, lab.unknown, lab.unknown_items) == (1, 1, ("zz",))
    assert lab.summary()["labels_by_reviewer"] == {"a": 3, "b": 2, "c": 1}


