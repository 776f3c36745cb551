"""The traffic reader on the hostile-input corpus: a clear refusal or the valid rows, never a crash."""

from __future__ import annotations

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
