"""lighteval details reader, checked on a details Parquet written by lighteval 0.13.0's own code.

The expected reading comes from the file read back with ``datasets`` as lighteval reads it
(``tool_reading.json``), the softmax computed here by hand, and lighteval's ``metric.acc``.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.readers.base import LoadOptions

DIR = Path(__file__).parent / "data" / "lighteval-0.13.0"
FILE = next(DIR.glob("details_*.parquet"))
TOOL = json.loads((DIR / "tool_reading.json").read_text())


def test_recognised_by_its_name() -> None:
    assert sniff_format(FILE.name, FILE.read_bytes()) == "lighteval"
    assert sniff_format("table.parquet", FILE.read_bytes()) == "counts"


def test_every_sample_by_hand_and_lightevals_acc() -> None:
    ds = load(FILE)
    assert ds.report.format == "lighteval"
    want = {}
    for r in TOOL["rows"]:
        if not r["logprobs"]:
            continue
        z = sum(math.exp(x) for x in r["logprobs"])
        pred = max(range(len(r["logprobs"])), key=lambda j: r["logprobs"][j])
        want[r["id"]] = (math.exp(r["logprobs"][pred]) / z, pred == r["gold_index"])
        assert (pred == r["gold_index"]) == (r["acc"] == 1.0)  # lighteval's own reading agrees
    got = {str(i): (float(p), bool(c)) for i, p, c in zip(ds.rows.item_id, ds.rows.prob, ds.rows.correct,
                                                           strict=True)}
    assert got.keys() == want.keys() and len(want) == 39
    for k, (p, c) in want.items():
        assert got[k][0] == pytest.approx(p, abs=1e-12) and got[k][1] == c
    r = ds.report
    assert [(i.sample_id, i.reason) for i in r.issues] == [("q07", "no logprobs")]
    assert "agrees with the argmax on 39 of 39" in " ".join(r.notes)


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf)
    p = tmp_path / "details_t_2026.parquet"
    p.write_bytes(buf.getvalue())
    return p


def test_bad_samples_and_several_golds(tmp_path: Path) -> None:
    good = [{"doc": {"gold_index": [0, 1], "id": f"s{i}"}, "model_response": {"logprobs": [-0.5, -1.0, -2.0]},
             "metric": {"acc": 1.0}} for i in range(5)]
    bad = [{"doc": {"gold_index": [7], "id": "out"}, "model_response": {"logprobs": [-0.5, -1.0, -2.0]},
            "metric": {"acc": 0.0}},
           {"doc": {"gold_index": [0], "id": "none"}, "model_response": {"logprobs": []}, "metric": {"acc": 0.0}}]
    ds = load(_write(tmp_path, good + bad))
    assert len(ds.rows) == 5 and ds.rows.correct.all()  # the argmax (0) is one of two golds
    assert ds.report.dropped_by_reason == {"bad gold": 1, "no logprobs": 1}


def test_row_cap_before_reading(tmp_path: Path) -> None:
    rows = [{"doc": {"gold_index": 0}, "model_response": {"logprobs": [-0.1, -2.0]}, "metric": {"acc": 1.0}}] * 30
    with pytest.raises(CalibError, match="metadata says 30"):
        load(_write(tmp_path, rows), options=LoadOptions(max_rows=10))


def test_not_details_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CalibError, match="not lighteval details"):
        load(_write(tmp_path, [{"value": 0.5, "n": 1, "correct": 1}]))
