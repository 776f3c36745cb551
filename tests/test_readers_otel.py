"""OpenTelemetry GenAI evaluation-event reader, checked on OTLP/JSON encoded by opentelemetry-sdk 1.45.2.

The expected reading of every span comes from the SDK's own log records
(``tests/data/otel-sdk-1.45.2/tool_reading.json``), joined here by hand.
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.readers.base import LoadOptions

DIR = Path(__file__).parent / "data" / "otel-sdk-1.45.2"
FILE = DIR / "evaluation_events.json"
TOOL = json.loads((DIR / "tool_reading.json").read_text())


def expected() -> dict[str, tuple[float, bool]]:
    by: dict[str, dict[str, dict]] = defaultdict(dict)
    for e in TOOL["events"]:
        assert e["event_name"] == "gen_ai.evaluation.result"
        by[e["attributes"]["gen_ai.response.id"]][e["attributes"]["gen_ai.evaluation.name"]] = e["attributes"]
    return {resp: (ev["correctness"]["gen_ai.evaluation.score.value"],
                   ev["exact_match"]["gen_ai.evaluation.score.value"] == 1.0)
            for resp, ev in by.items() if "gen_ai.evaluation.score.value" in ev["correctness"]}


def reading(ds) -> dict[str, tuple[float, bool]]:  # type: ignore[no-untyped-def]
    r = ds.rows
    return {str(i): (float(s), bool(c)) for i, s, c in zip(r.item_id, r.stated, r.correct, strict=True)}


def test_recognised_and_read_as_the_sdk_wrote_it() -> None:
    assert sniff_format(FILE.name, FILE.read_bytes()) == "otel"
    ds = load(FILE)
    assert ds.report.format == "otel"
    want = expected()
    assert reading(ds) == want and len(want) == 39
    r = ds.report
    assert r.fields["confidence"] == "correctness" and r.fields["outcome"] == "exact_match"
    assert [(i.sample_id, i.reason) for i in r.issues] == [("resp-q07", "no confidence")]
    assert "judge_unparseable" in r.issues[0].detail
    # the hex ids of the file are the SDK's own
    doc = json.loads(FILE.read_text())
    recs = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert [x["spanId"] for x in recs] == [e["span_id"] for e in TOOL["events"]]


def test_one_request_per_line_and_other_records(tmp_path: Path) -> None:
    doc = json.loads(FILE.read_text())
    half = copy.deepcopy(doc)
    recs = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"] = recs[:40] + [{"body": {"stringValue": "hello"}}]
    half["resourceLogs"][0]["scopeLogs"][0]["logRecords"] = recs[40:]
    p = tmp_path / "logs.jsonl"
    p.write_text(json.dumps(doc) + "\n" + json.dumps(half) + "\n")
    ds = load(p)
    assert ds.report.format == "otel" and reading(ds) == expected()
    assert "1 other record(s) skipped" in ds.report.notes[0]


def test_evaluations_of_spans_in_one_trace_are_a_cluster(tmp_path: Path) -> None:
    doc = json.loads(FILE.read_text())
    recs = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    for r in recs[:8]:  # four spans (two events each) in one trace
        r["traceId"] = recs[0]["traceId"]
    p = tmp_path / "logs.json"
    p.write_text(json.dumps(doc))
    ds = load(p)
    assert ds.table.clusters is not None and ds.table.clusters.count == len(ds.rows) - 3


def test_without_a_graded_score_the_judge_is_named_by_hand(tmp_path: Path) -> None:
    doc = json.loads(FILE.read_text())
    for r in doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]:
        for a in r["attributes"]:
            if a["key"] == "gen_ai.evaluation.score.value" and "doubleValue" in a["value"]:
                a["value"]["doubleValue"] = float(a["value"]["doubleValue"] >= 0.5)
    p = tmp_path / "logs.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(CalibError, match="no judge score.*--confidence-key"):
        load(p)
    ds = load(p, options=LoadOptions(confidence_key="correctness"))
    assert len(ds.rows) == 39 and set(ds.rows.stated.tolist()) == {0.0, 1.0}


def test_malformed_events_are_reported(tmp_path: Path) -> None:
    doc = json.loads(FILE.read_text())
    recs = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    recs[0]["attributes"] = [a for a in recs[0]["attributes"] if a["key"] != "gen_ai.evaluation.name"]
    recs[2]["spanId"] = ""
    recs[2]["attributes"] = [a for a in recs[2]["attributes"] if a["key"] != "gen_ai.response.id"]
    recs[4] = "text"
    p = tmp_path / "logs.json"
    p.write_text(json.dumps(doc))
    ds = load(p)
    assert ds.report.dropped_by_reason["malformed event"] == 3


def test_not_otlp_logs_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "logs.json"
    p.write_text('{"resourceLogs": {"x": 1}}')
    with pytest.raises(CalibError, match="not OTLP/JSON logs"):
        load(p)
