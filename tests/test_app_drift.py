"""The Drift page, driven headless with Streamlit's AppTest: two samples loaded through the
URL, the headline figures checked against a per-row count read with json, the verdict and
the threshold check shown, and with three runs the series chart."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import ROOT, app, ok

SAMPLES = ROOT / "sample_data"
A, B, C = "judge_a_synthetic.jsonl", "judge_b_synthetic.jsonl", "judge_c_synthetic.jsonl"


pytestmark = pytest.mark.usefixtures("fresh_caches")  # each test starts with empty caches


def drift_page(samples: str) -> AppTest:
    at = app()
    at.query_params.update({"sample": samples, "reps": "100"})
    at.switch_page("pages/7_Drift.py")
    return ok(at.run())


def accuracy(name: str) -> float:
    rows = [json.loads(x) for x in (SAMPLES / name).read_text().splitlines() if x.strip()]
    return sum(bool(r["correct"]) for r in rows) / len(rows)


def test_one_run_asks_for_two():
    at = drift_page(A)
    assert any("Load two or more runs" in i.value for i in at.info)


def test_two_runs_show_the_changes_and_the_threshold_check():
    at = drift_page(f"{A},{C}")
    assert not at.error, [e.value for e in at.error]
    m = {x.label: x for x in at.main.metric}
    assert m["Accuracy (new)"].value == f"{100 * accuracy(C):.1f}%"
    assert f"old {100 * accuracy(A):.1f}%" in m["Accuracy (new)"].help
    texts = "\n".join(t.value for t in at.text)
    assert "Verdict:" in texts and "Rule: drift when Holm" in texts
    assert "new run:" in texts and "accepted" in texts  # the threshold check
    assert len(at.dataframe) >= 1  # the per-value table
    assert at.selectbox(key="drift_old").value == "judge_a_synthetic"
    assert at.selectbox(key="drift_new").value == "judge_c_synthetic"


def test_swapping_the_runs_flips_the_change():
    at = drift_page(f"{A},{C}")
    at.selectbox(key="drift_old").set_value("judge_c_synthetic")
    at.selectbox(key="drift_new").set_value("judge_a_synthetic")
    ok(at.run())
    m = {x.label: x.value for x in at.main.metric}
    assert m["Accuracy (new)"] == f"{100 * accuracy(A):.1f}%"


def test_same_run_twice_is_refused_kindly():
    at = drift_page(f"{A},{C}")
    at.selectbox(key="drift_new").set_value("judge_a_synthetic")
    ok(at.run())
    assert any("Pick two different runs" in i.value for i in at.info)


def test_three_runs_show_the_series_chart():
    at = drift_page(f"{A},{B},{C}")
    assert not at.error, [e.value for e in at.error]
    texts = "\n".join(t.value for t in at.text)
    assert "accuracy:" in texts and "Verdict:" in texts
    assert any(s.value == "Runs over time" for s in at.subheader)
    # the sample names carry no date: the runs stay in the loaded order, and the page says so
    assert any(c.value.startswith("Runs ordered in the order they were loaded") for c in at.caption)


def test_a_value_used_in_one_run_only_is_named():
    # issue 22: judge A states 80 (440 answers), judge C never does: "80 disappeared" is said
    old = [json.loads(x)["confidence"] for x in (SAMPLES / A).read_text().splitlines() if x.strip()]
    new = {json.loads(x)["confidence"] for x in (SAMPLES / C).read_text().splitlines() if x.strip()}
    gone = sorted(set(old) - new)
    assert gone == [80]
    at = drift_page(f"{A},{C}")
    texts = "\n".join(t.value for t in at.text)
    assert f"stated 80: {old.count(80):,} answers" in texts and "none in the new: disappeared" in texts
    assert "values no longer used: 80" in texts
    # and the page's answer to its question says it too (issue 22)
    answer = "\n".join(m.value for m in at.main.markdown).replace("\\", "")  # markdown-escaped
    assert "values no longer used: 80" in answer, answer


def test_two_runs_show_who_moved():
    at = drift_page(f"{A},{C}")
    assert any(s.value == "Who moved: the judge or what it judges?" for s in at.subheader)
    texts = "\n".join(t.value for t in at.text)
    assert "come from the judge" in texts and "shared items" in texts
