"""The traffic reader on the hostile-input corpus: a clear refusal or the valid rows, never a crash."""

from __future__ import annotations

import numpy as np
import pytest

from calib.errors import CalibError
from calib.traffic.read import read_traffic
from tests.hostile import CASES, GOOD

PLAIN = [c for c in CASES if c.name.endswith((".jsonl", ".csv")) and not c.name.startswith(("parquet", "logprobs"))
         and "samples_" not in c.name]


@pytest.mark.parametrize("case", PLAIN, ids=[c.name for c in PLAIN])
def test_hostile_traffic_is_refused_or_kept_line_by_line(case) -> None:  # type: ignore[no-untyped-def]
    try:
        tr = read_traffic(case.bytes(), case.name)
    except CalibError as exc:
        assert case.name in str(exc)
        return
    assert all(m.startswith(f"{case.name} line ") or m.startswith("... and") for m in tr.messages)
    if case.exit == 0 and case.kept == GOOD:
        assert len(tr) >= GOOD


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_inputs_read_as_traffic_are_refused_clearly_or_kept(case) -> None:  # type: ignore[no-untyped-def]
    """Every format's reader with ``traffic=True`` (:func:`calib.traffic.read.load_traffic`): a
    ``CalibError`` naming the input, or items with unique keys, never a crash."""
    from calib.traffic.read import load_traffic

    try:
        tr = load_traffic(case.name, case.bytes())
    except CalibError as exc:
        assert str(exc)
        return
    assert len(tr) > 0 and len(set(tr.keys)) == len(tr)
    assert np.all((tr.prob >= 0) & (tr.prob <= 1))
