"""promptfoo results reader, checked on files written by promptfoo 0.121.20.

The expected reading of every result is taken here by hand from the JSON (the assertion
components by type), never from the reader's code, and checked against promptfoo's own
summary counts in the same file.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.readers.base import LoadOptions

DIR = Path(__file__).parent / "data" / "promptfoo-0.121.20"
RESULTS, EXPORT = DIR / "results.json", DIR / "export.json"


def by_type(result: dict) -> dict[str, dict]:
    return {c["assertion"]["type"]: c for c in result["gradingResult"]["componentResults"]}


def expected(path: Path, outcome: str) -> dict[str, tuple[float, bool]]:
    doc = json.loads(path.read_text())
    want = {}
    for r in doc["results"]["results"]:
        comps = by_type(r)
        judge = comps["llm-rubric"]
        if judge.get("metadata", {}).get("graderError") or outcome not in comps:
            continue
        want[r["vars"]["id"]] = (float(judge["score"]), comps[outcome]["pass"])
    return want


def reading(ds) -> dict[str, tuple[float, bool]]:  # type: ignore[no-untyped-def]
    r = ds.rows
    return {str(i): (float(s), bool(c)) for i, s, c in zip(r.item_id, r.stated, r.correct, strict=True)}


@pytest.mark.parametrize("path", [RESULTS, EXPORT])
def test_recognised_without_a_format(path: Path) -> None:
    assert sniff_format(path.name, path.read_bytes()) == "promptfoo"
    assert load(path).report.format == "promptfoo"


def test_eval_output_judge_score_against_the_equals_check() -> None:
    ds = load(RESULTS)
    want = expected(RESULTS, "equals")
    assert reading(ds) == want and len(want) == 39
    doc = json.loads(RESULTS.read_text())
    # promptfoo's own count: a test passes when every assertion passes
    passed = sum(all(c["pass"] for c in by_type(r).values()) for r in doc["results"]["results"])
    assert passed == doc["results"]["stats"]["successes"] == 29
    assert ds.report.fields["confidence"] == "llm-rubric" and ds.report.fields["outcome"] == "equals"
    assert any("a code check against the reference" in n for n in ds.report.notes)


def test_the_grader_error_is_no_confidence_not_a_zero() -> None:
    doc = json.loads(RESULTS.read_text())
    q07 = next(r for r in doc["results"]["results"] if r["vars"]["id"] == "q07")
    assert by_type(q07)["llm-rubric"]["score"] == 0  # what promptfoo writes
    r = load(RESULTS).report
    assert [(i.sample_id, i.reason) for i in r.issues] == [("q07", "no confidence")]
    assert "the grader failed" in r.issues[0].detail
    assert any(n.startswith("no confidence on 1 item(s): q07") for n in r.notes)


def test_export_with_manual_ratings_reads_the_human_outcome() -> None:
    ds = load(EXPORT)
    want = expected(EXPORT, "human")
    assert reading(ds) == want and len(want) == 29
    got = reading(ds)
    # the person disagrees with the equals check on q03 and q11: the human rating wins
    eq = expected(EXPORT, "equals")
    assert {k for k in got if got[k][1] != eq[k][1]} == {"q03", "q11"}
    r = ds.report
    assert r.fields["outcome"] == "human" and r.dropped_by_reason == {"no confidence": 1, "no outcome": 10}
    assert any("no usable outcome 'human' on 10 item(s): q30" in n and "equals" in n for n in r.notes)
    # the override reads the check instead, on every item
    ds2 = load(EXPORT, options=LoadOptions(outcome_key="equals"))
    assert reading(ds2) == eq and len(eq) == 39


def _write(tmp_path: Path, doc: dict) -> Path:
    p = tmp_path / "results.json"
    p.write_text(json.dumps(doc))
    return p


def test_providers_are_groups_and_repeats_clusters(tmp_path: Path) -> None:
    doc = json.loads(RESULTS.read_text())
    res = doc["results"]["results"]
    other = copy.deepcopy(res)
    for r in other:
        r["provider"] = {"id": "openai:gpt-x", "label": ""}
    again = copy.deepcopy(res[:5])  # --repeat 2 on five tests of the echo provider
    doc["results"]["results"] = res + other + again
    ds = load(_write(tmp_path, doc))
    groups = ds.rows.group.tolist()
    assert groups.count("echo") == 39 + 5 and groups.count("openai:gpt-x") == 39
    assert ds.table.clusters is not None
    assert ds.report.fields["group"] == "provider"
    # five clusters of two rows, every other row its own
    assert ds.table.clusters.to_dict()["count"] == len(ds.rows) - 5


def test_malformed_results_are_reported_and_the_rest_kept(tmp_path: Path) -> None:
    doc = json.loads(RESULTS.read_text())
    res = doc["results"]["results"]
    res[0]["gradingResult"] = None
    res[1] = "text"
    res[2]["gradingResult"]["componentResults"][1]["score"] = "high"
    res[3]["failureReason"] = 2
    res[3]["error"] = "rate limited"
    res[4]["gradingResult"]["componentResults"][0] = {"pass": True}
    ds = load(_write(tmp_path, doc))
    assert len(ds.rows) == 34
    assert ds.report.dropped_by_reason == {"malformed result": 3, "no confidence": 2, "result error": 1}
    assert "rate limited" in " ".join(i.detail for i in ds.report.issues)


def test_a_judge_without_a_check_is_refused(tmp_path: Path) -> None:
    doc = json.loads(RESULTS.read_text())
    for r in doc["results"]["results"]:
        r["gradingResult"]["componentResults"] = [c for c in r["gradingResult"]["componentResults"]
                                                  if c["assertion"]["type"] == "llm-rubric"]
    with pytest.raises(CalibError, match="nothing to be checked against"):
        load(_write(tmp_path, doc))


def test_not_results_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CalibError, match="not a promptfoo results file"):
        load(_write(tmp_path, {"evalId": "x", "results": {"version": 3, "results": "no"}}))


def test_the_data_page_lines_name_the_tool_and_the_choice() -> None:
    from calib.present.tables import load_lines, platform_line

    ds = load(EXPORT)
    lines = load_lines(ds.report, ds.table.scale)  # what the Data page prints under "Format: promptfoo"
    text = "\n".join(lines)
    assert "promptfoo eval eval-" in text and "promptfoo 0.121.20" in text
    assert "the confidence is judge score 'llm-rubric'; the outcome 'human', a human label" in text
    assert "fields: confidence <- llm-rubric, outcome <- human" in text
    assert platform_line(ds.report).startswith("Format: promptfoo (promptfoo eval")
