"""Langfuse scores reader, checked on API responses serialised by the langfuse 5.2.0 SDK.

The expected reading of every trace or observation comes from the SDK's own parse of the same
file (``tests/data/langfuse-5.2.0/tool_reading.json``), joined here by hand.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.readers.base import LoadOptions

DIR = Path(__file__).parent / "data" / "langfuse-5.2.0"
V2, V3 = DIR / "scores_v2.json", DIR / "scores_v3.json"
TOOL = json.loads((DIR / "tool_reading.json").read_text())


def expected(version: str, key: str, outcome: str = "human_label") -> dict[str, tuple[float, bool]]:
    by: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for s in TOOL[version]:
        value = s.get("string_value") or s["value"]
        by[s[key]][s["name"]].append(value)
    want = {}
    for item, names in by.items():
        conf, out = names.get("correctness"), names.get(outcome)
        if not conf or not out or len(set(map(str, out))) > 1:
            continue
        o = out[0]
        want[item] = (float(conf[0]), o in ("correct", "True", True))
    return want


def reading(ds) -> dict[str, tuple[float, bool]]:  # type: ignore[no-untyped-def]
    r = ds.rows
    return {str(i): (float(s), bool(c)) for i, s, c in zip(r.item_id, r.stated, r.correct, strict=True)}


@pytest.mark.parametrize("path", [V2, V3])
def test_recognised_without_a_format(path: Path) -> None:
    assert sniff_format(path.name, path.read_bytes()) == "langfuse"
    assert load(path).report.format == "langfuse"


def test_v2_eval_against_annotation_joined_by_trace() -> None:
    ds = load(V2)
    want = expected("v2", "trace_id")
    assert reading(ds) == want and len(want) == 34
    r = ds.report
    assert r.fields["confidence"] == "correctness" and r.fields["outcome"] == "human_label"
    assert r.dropped_by_reason == {"no confidence": 1, "no outcome": 4, "outcome not binary": 1}
    assert any(n.startswith("no confidence on 1 item(s): trace-q07") for n in r.notes)
    conflict = next(i for i in r.issues if i.sample_id == "trace-q05")
    assert "2 different values" in conflict.detail


def test_v3_observations_two_per_trace_are_clusters() -> None:
    ds = load(V3)
    want = expected("v3", "subject")
    assert reading(ds) == want and len(want) == 34
    traces = {s["subject"]: s["trace_id"] for s in TOOL["v3"]}
    assert ds.rows.cluster.tolist() == [traces[i] for i in ds.rows.item_id.tolist()]
    assert ds.table.clusters is not None and ds.table.clusters.count == len(set(traces[i] for i in ds.rows.item_id))


def test_an_api_score_is_read_only_when_named() -> None:
    ds = load(V2, options=LoadOptions(outcome_key="thumbs_up"))
    want = expected("v2", "trace_id", outcome="thumbs_up")
    assert reading(ds) == want and len(want) == 8  # every fifth of the 40 traces
    assert ds.report.dropped_by_reason == {"no confidence": 1, "no outcome": 31}


def test_json_lines_and_arrays_of_scores(tmp_path: Path) -> None:
    records = json.loads(V2.read_text())["data"]
    lines = tmp_path / "scores.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")
    ds = load(lines)
    assert ds.report.format == "langfuse" and reading(ds) == expected("v2", "trace_id")
    bad = next(i for i in ds.report.issues if i.reason == "invalid JSON")
    assert bad.message().endswith(bad.detail) and f"line {len(records) + 1}" in bad.message()
    arr = tmp_path / "scores.json"
    arr.write_text(json.dumps(records))
    assert reading(load(arr)) == expected("v2", "trace_id")


def test_malformed_scores_are_reported_and_the_rest_kept(tmp_path: Path) -> None:
    doc = json.loads(V2.read_text())
    data = doc["data"]
    data[0] = ["not", "a", "score"]  # q00's judge score
    data[2]["traceId"] = None  # q01's judge score: on nothing
    del data[4]["name"]
    p = tmp_path / "scores.json"
    p.write_text(json.dumps(doc))
    ds = load(p)
    r = ds.report
    assert r.dropped_by_reason["malformed score"] == 3
    assert "trace-q00" not in ds.rows.item_id.tolist()


def test_no_judge_score_is_refused(tmp_path: Path) -> None:
    doc = json.loads(V2.read_text())
    doc["data"] = [s for s in doc["data"] if s["source"] != "EVAL"]
    p = tmp_path / "scores.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(CalibError, match="no judge score.*--confidence-key"):
        load(p)
