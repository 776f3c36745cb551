"""LangSmith feedback reader, checked on runs and feedback serialised by the langsmith 0.15.1 SDK.

The expected reading of every run comes from the SDK's own parse of the same file
(``tests/data/langsmith-0.15.1/tool_reading.json``), joined here by hand.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.readers.base import LoadOptions

DIR = Path(__file__).parent / "data" / "langsmith-0.15.1"
FILE = DIR / "runs_feedback.json"
TOOL = json.loads((DIR / "tool_reading.json").read_text())


def expected(outcome: str = "human_correct") -> dict[str, tuple[float, bool, str]]:
    by: dict[str, dict[str, object]] = defaultdict(dict)
    session = {}
    for f in TOOL["feedback"]:
        by[f["run_id"]][f["key"]] = f["score"]
        session[f["run_id"]] = f["session_id"]
    return {run: (float(k["correctness"]), bool(k[outcome]), session[run]) for run, k in by.items()
            if k.get("correctness") is not None and k.get(outcome) is not None}


def reading(ds) -> dict[str, tuple[float, bool, str]]:  # type: ignore[no-untyped-def]
    r = ds.rows
    return {str(i): (float(s), bool(c), str(g)) for i, s, c, g in zip(r.item_id, r.stated, r.correct, r.group,
                                                                       strict=True)}


def test_recognised_without_a_format() -> None:
    assert sniff_format(FILE.name, FILE.read_bytes()) == "langsmith"
    assert load(FILE).report.format == "langsmith"


def test_model_feedback_against_app_feedback_by_run() -> None:
    ds = load(FILE)
    want = expected()
    assert reading(ds) == want and len(want) == 35
    assert len(set(ds.rows.group.tolist())) == 2  # the two experiments
    r = ds.report
    assert r.fields["confidence"] == "correctness" and r.fields["outcome"] == "human_correct"
    assert r.dropped_by_reason == {"no confidence": 1, "no outcome": 4}
    failed = next(i for i in r.issues if i.reason == "no confidence")
    assert "evaluator failed" in failed.detail


def test_api_feedback_only_when_named() -> None:
    ds = load(FILE, options=LoadOptions(outcome_key="user_thumb"))
    want = expected("user_thumb")
    assert reading(ds) == want and len(want) == 8


def test_feedback_alone_as_json_lines(tmp_path: Path) -> None:
    doc = json.loads(FILE.read_text())
    p = tmp_path / "feedback.jsonl"
    p.write_text("".join(json.dumps(f) + "\n" for f in doc["feedback"]) + '{"key": "x"}\n')
    ds = load(p)
    assert ds.report.format == "langsmith"
    assert ds.rows.group is None
    r = ds.rows
    got = {str(i): (float(s), bool(c)) for i, s, c in zip(r.item_id, r.stated, r.correct, strict=True)}
    assert got == {k: v[:2] for k, v in expected().items()}
    bad = next(i for i in ds.report.issues if i.reason == "malformed feedback")
    assert "line 85" in bad.message() and "no run" in bad.detail


def test_feedback_on_child_runs_clusters_by_trace(tmp_path: Path) -> None:
    doc = json.loads(FILE.read_text())
    fb = doc["feedback"]
    for f in fb:  # every run's feedback moved to the trace of q00
        f["trace_id"] = fb[0]["trace_id"] if f["run_id"] in {fb[0]["run_id"], fb[3]["run_id"]} else f["trace_id"]
    p = tmp_path / "fb.json"
    p.write_text(json.dumps({"feedback": fb}))
    ds = load(p)
    assert ds.table.clusters is not None and ds.table.clusters.count == len(ds.rows) - 1


def test_malformed_feedback_is_reported(tmp_path: Path) -> None:
    doc = json.loads(FILE.read_text())
    fb = doc["feedback"]
    fb[0] = 3
    fb[1]["run_id"] = {"not": "text"}
    del fb[2]["key"]
    p = tmp_path / "fb.json"
    p.write_text(json.dumps(doc))
    ds = load(p)
    assert ds.report.dropped_by_reason["malformed feedback"] == 3


def test_not_feedback_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "fb.json"
    p.write_text('{"runs": [], "feedback": {"run_id": "x"}}')
    with pytest.raises(CalibError, match="not LangSmith feedback"):
        load(p)
