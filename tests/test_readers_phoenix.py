"""Phoenix span-annotation reader, checked on annotations read back from a local Phoenix 20.26.1.

The expected reading of every span comes from Phoenix's own dataframes of the same
annotations (``tests/data/phoenix-20.26.1/tool_reading.json``), joined here by hand.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.readers.base import LoadOptions

DIR = Path(__file__).parent / "data" / "phoenix-20.26.1"
ALONE, JOINED = DIR / "span_annotations.jsonl", DIR / "span_annotations_with_spans.jsonl"
TOOL = json.loads((DIR / "tool_reading.json").read_text())


def expected(outcome: str = "human_label") -> dict[str, tuple[float, bool]]:
    by: dict[str, dict[str, dict]] = defaultdict(dict)
    for a in TOOL["annotations"]:
        by[a["span_id"]][a["annotation_name"]] = a
    want = {}
    for span, anns in by.items():
        judge, out = anns.get("correctness"), anns.get(outcome)
        if judge is None or judge["result.score"] is None or out is None:
            continue
        right = out["result.label"] == "correct" if out["result.label"] else out["result.score"] == 1.0
        want[span] = (judge["result.score"], right)
    return want


def reading(ds) -> dict[str, tuple[float, bool]]:  # type: ignore[no-untyped-def]
    r = ds.rows
    return {str(i): (float(s), bool(c)) for i, s, c in zip(r.item_id, r.stated, r.correct, strict=True)}


@pytest.mark.parametrize("path", [ALONE, JOINED])
def test_recognised_and_read_as_phoenix_reads_it(path: Path) -> None:
    assert sniff_format(path.name, path.read_bytes()) == "phoenix"
    ds = load(path)
    assert ds.report.format == "phoenix"
    want = expected()
    assert reading(ds) == want and len(want) == 35
    r = ds.report
    assert r.fields["confidence"] == "correctness" and r.fields["outcome"] == "human_label"
    q07 = TOOL["span_of_item"]["q07"]
    assert [i.sample_id for i in r.issues if i.reason == "no confidence"] == [q07]
    assert any(n.startswith(f"no confidence on 1 item(s): {q07}") for n in r.notes)


def test_joined_spans_cluster_by_trace() -> None:
    ds = load(JOINED)
    traces = TOOL["trace_of_span"]
    assert ds.rows.cluster.tolist() == [traces[s] for s in ds.rows.item_id.tolist()]
    assert ds.table.clusters is not None
    assert ds.table.clusters.count == len({traces[s] for s in ds.rows.item_id.tolist()})
    assert load(ALONE).rows.cluster is None


def test_the_code_check_when_named() -> None:
    ds = load(JOINED, options=LoadOptions(outcome_key="exact_match"))
    want = expected("exact_match")
    assert reading(ds) == want and len(want) == 39


def test_rest_api_records_with_nested_result(tmp_path: Path) -> None:
    data = [{"id": a["id"], "span_id": a["span_id"], "name": a["annotation_name"],
             "annotator_kind": a["annotator_kind"], "result": {"label": a["result.label"],
                                                               "score": a["result.score"]}}
            for a in TOOL["annotations"]]
    p = tmp_path / "annotations.json"
    p.write_text(json.dumps({"data": data, "next_cursor": None}))
    ds = load(p)
    assert ds.report.format == "phoenix" and reading(ds) == expected()


def test_malformed_annotations_are_reported(tmp_path: Path) -> None:
    lines = JOINED.read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    recs[0]["span_id"] = recs[0]["context.span_id"] = None
    recs[1]["annotator_kind"] = 3
    p = tmp_path / "a.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n[1]\n")
    ds = load(p)
    assert ds.report.dropped_by_reason["malformed annotation"] == 2
    assert ds.report.dropped_by_reason["not a JSON object"] == 1


def test_not_annotations_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "a.json"
    p.write_text('{"data": {"annotator_kind": "LLM", "span_id": "x"}}')
    with pytest.raises(CalibError, match="not Phoenix span annotations"):
        load(p)
