"""MLflow 3 assessment reader, checked on a search_traces() export from a local mlflow 3.18.0 store.

The expected reading of every trace comes from MLflow's own ``search_traces(return_type="list")``
(``tests/data/mlflow-3.18.0/tool_reading.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.readers.base import LoadOptions

DIR = Path(__file__).parent / "data" / "mlflow-3.18.0"
FILE = DIR / "search_traces.jsonl"
TOOL = json.loads((DIR / "tool_reading.json").read_text())


def expected(outcome: str = "human_correct") -> dict[str, tuple[float, bool]]:
    want = {}
    for t in TOOL["traces"]:
        by = {a["name"]: a for a in t["assessments"] if a["valid"] is not False}
        j, o = by.get("correctness"), by.get(outcome)
        if j is None or j["feedback"] is None or o is None:
            continue
        want[t["trace_id"]] = (float(j["feedback"]), bool(o["feedback"]))
    return want


def reading(ds) -> dict[str, tuple[float, bool]]:  # type: ignore[no-untyped-def]
    r = ds.rows
    return {str(i): (float(s), bool(c)) for i, s, c in zip(r.item_id, r.stated, r.correct, strict=True)}


def test_recognised_and_read_as_mlflow_reads_it() -> None:
    assert sniff_format(FILE.name, FILE.read_bytes()) == "mlflow"
    ds = load(FILE)
    assert ds.report.format == "mlflow"
    want = expected()
    assert reading(ds) == want and len(want) == 35
    r = ds.report
    assert r.fields["confidence"] == "correctness" and r.fields["outcome"] == "human_correct"
    failed = [t["trace_id"] for t in TOOL["traces"] for a in t["assessments"] if a["error"]]
    assert [i.sample_id for i in r.issues if i.reason == "no confidence"] == failed
    assert "JUDGE_FAILED" in next(i.detail for i in r.issues if i.reason == "no confidence")


def test_the_overridden_judgement_is_skipped() -> None:
    invalid = [(t["trace_id"], a["feedback"]) for t in TOOL["traces"] for a in t["assessments"] if a["valid"] is False]
    assert len(invalid) == 1 and invalid[0][1] == 0.2
    got = reading(load(FILE))
    assert got[invalid[0][0]][0] != 0.2
    assert "1 overridden (valid: false) skipped" in load(FILE).report.notes[0]


def test_sessions_are_clusters() -> None:
    ds = load(FILE)
    session = {t["trace_id"]: t["session"] for t in TOOL["traces"]}
    assert ds.rows.cluster.tolist() == [session[i] for i in ds.rows.item_id.tolist()]
    assert ds.table.clusters.count == len({session[i] for i in ds.rows.item_id.tolist()})


def test_the_code_check_and_expected_letters() -> None:
    ds = load(FILE, options=LoadOptions(outcome_key="exact_match"))
    assert reading(ds) == expected("exact_match") and len(reading(ds)) == 39
    # an expectation holding the gold letter "C" is not a "correct" verdict
    with pytest.raises(CalibError, match="no usable item"):
        load(FILE, options=LoadOptions(outcome_key="expected_answer"))


def test_malformed_traces_are_reported(tmp_path: Path) -> None:
    recs = [json.loads(x) for x in FILE.read_text().splitlines()]
    recs[0]["assessments"] = "x"
    recs[1]["assessments"][0] = 5
    p = tmp_path / "t.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs) + "[1]\n")
    ds = load(p)
    assert ds.report.dropped_by_reason["malformed trace"] == 2
    assert ds.report.dropped_by_reason["not a JSON object"] == 1


def test_a_json_array_of_records(tmp_path: Path) -> None:
    recs = [json.loads(x) for x in FILE.read_text().splitlines()]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(recs))
    assert reading(load(p)) == expected()
