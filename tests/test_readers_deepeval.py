"""DeepEval test-run reader, checked on a test run written by deepeval 4.3.1.

The expected reading of every test case comes from DeepEval itself
(``tests/data/deepeval-4.3.1/tool_reading.json``: its ``TestRun`` model on the same file,
written by ``tools/make_platform_fixtures.py``), never from the reader's code.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.readers.base import LoadOptions

DIR = Path(__file__).parent / "data" / "deepeval-4.3.1"
RUN = DIR / "latest_test_run.json"
TOOL = json.loads((DIR / "tool_reading.json").read_text())
JUDGE, CHECK = "Correctness [GEval]", "Exact Match"


def test_recognised_without_a_format() -> None:
    assert sniff_format(RUN.name, RUN.read_bytes()) == "deepeval"
    assert load(RUN).report.format == "deepeval"


def test_every_case_read_as_deepeval_reads_it() -> None:
    ds = load(RUN)
    rows = ds.rows
    got = {str(i): (float(s), bool(c), str(g)) for i, s, c, g in zip(rows.item_id, rows.stated, rows.correct,
                                                                       rows.group, strict=True)}
    want = {name: (case["metrics"][JUDGE]["score"], case["metrics"][CHECK]["success"], case["tags"][0])
            for name, case in TOOL["cases"].items() if case["metrics"][JUDGE]["error"] is None}
    assert got == want
    assert len(got) == 39
    assert ds.report.scale["name"] == "0-1"
    # the judge is the metric with an evaluation model, the check the one without
    assert TOOL["cases"]["q00"]["metrics"][JUDGE]["evaluation_model"] and \
        not TOOL["cases"]["q00"]["metrics"][CHECK]["evaluation_model"]
    assert ds.report.fields["confidence"] == JUDGE and ds.report.fields["outcome"] == CHECK


def test_the_errored_metric_is_listed_by_id() -> None:
    errored = [n for n, c in TOOL["cases"].items() if c["metrics"][JUDGE]["error"]]
    assert errored == ["q07"]
    r = load(RUN).report
    assert r.dropped_by_reason == {"no confidence": 1}
    assert [i.sample_id for i in r.issues] == ["q07"] and "the metric failed" in r.issues[0].detail
    assert "record 8" in r.issues[0].message()
    assert any(n.startswith("no confidence on 1 item(s): q07") for n in r.notes)


def test_the_judges_own_verdict_is_not_the_outcome(tmp_path: Path) -> None:
    doc = json.loads(RUN.read_text())
    for case in doc["testRunData"]["testCases"]:
        case["metricsData"] = [m for m in case["metricsData"] if m["name"] == JUDGE]
    p = tmp_path / "run.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(CalibError, match="nothing to be checked against.*--outcome-key"):
        load(p)


def test_an_outcome_named_in_the_test_case(tmp_path: Path) -> None:
    doc = json.loads(RUN.read_text())
    cases = doc["testRunData"]["testCases"]
    for k, case in enumerate(cases):
        case["metadata"] = {"human": "correct" if k % 3 else "incorrect"}
    cases[3]["metadata"] = {"human": "maybe"}
    p = tmp_path / "run.json"
    p.write_text(json.dumps(doc))
    ds = load(p, options=LoadOptions(outcome_key="metadata.human"))
    by_id = dict(zip(ds.rows.item_id.tolist(), ds.rows.correct.tolist(), strict=True))
    assert by_id["q01"] and not by_id["q00"] and "q03" not in by_id and "q07" not in by_id
    assert len(by_id) == 38
    assert ds.report.dropped_by_reason == {"no confidence": 1, "outcome not binary": 1}


def test_malformed_cases_are_reported_and_the_rest_kept(tmp_path: Path) -> None:
    doc = json.loads(RUN.read_text())
    cases = doc["testRunData"]["testCases"]
    cases[0]["metricsData"] = "oops"
    cases[1] = ["not", "a", "case"]
    cases[2]["metricsData"][0]["score"] = "high"
    p = tmp_path / "run.json"
    p.write_text(json.dumps(doc))
    ds = load(p)
    assert len(ds.rows) == 36
    r = ds.report
    assert r.dropped_by_reason == {"malformed test case": 2, "no confidence": 2}
    assert {i.sample_id for i in r.issues} >= {"q00", "q02", "q07"}
    assert np.all(np.isin(["q00", "q01", "q02", "q07"], ds.rows.item_id, invert=True))


def test_not_a_test_run_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "run.json"
    p.write_text('{"testRunData": {"testCases": "x", "metricsData": 1}}')
    with pytest.raises(CalibError, match="not a DeepEval test run"):
        load(p)


def test_the_cli_names_the_tool(capsys: pytest.CaptureFixture[str]) -> None:
    from calib.cli import main

    assert main(["audit", str(RUN), "--reps", "0"]) == 0
    out = capsys.readouterr().out
    assert "Format: deepeval (DeepEval test run: 40 test case(s)" in out
    assert "record 8 (sample q07)" in out
