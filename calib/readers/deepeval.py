"""Reader for DeepEval test runs: ``.deepeval/.latest_test_run.json`` and saved test-run JSON.

Layout (read from files written by deepeval 4.3.1's ``evaluate``): either the test run
itself or ``{"testRunData": <test run>}`` (what ``.latest_test_run.json`` holds). The
test run has ``testCases[]`` and ``conversationalTestCases[]``, each with ``name``,
``input``, ``actualOutput``, ``expectedOutput``, ``tags``, ``metadata``, ``success`` and
``metricsData[]``: ``name`` (``"Correctness [GEval]"``), ``score`` (0-1), ``threshold``,
``success``, ``reason``, ``evaluationModel`` (set by the metrics that call a model),
``error`` (the metric failed; no score).

Which is which (:mod:`calib.readers.verdicts` holds the rule)
    Each metric is a score of the test case named by the metric's ``name``. A metric
    with an ``evaluationModel`` is a **judge** (GEval, answer relevancy...), one without
    is **code** (``Exact Match``, ``Pattern Match``, a custom metric). The confidence is
    the judge's ``score``; the outcome the code metric's ``success`` (a reference check,
    said in the report), or what ``--outcome-key`` names: another metric, or a path in
    the test case (``metadata.human_label``). The judge's own ``success`` is its score
    against its threshold, not an outcome, and is never used as one.
    A metric with an ``error`` has no score: its test case is listed as having no
    confidence, with the error.
Group and cluster
    The group is the test case's first tag; there is no cluster (``--cluster-key`` names
    a path, ``metadata.conversation``).
"""

from __future__ import annotations

from typing import Any

from calib.errors import CalibError
from calib.readers.base import IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import short_text
from calib.readers.verdicts import (
    CODE,
    JUDGE,
    Item,
    Platform,
    Score,
    Unusable,
    as_list,
    finish,
    load_document,
)

PLATFORM = Platform("deepeval", "DeepEval test run", group_how="tags[0]")


def read(source: Source, options: LoadOptions) -> Read:
    """Read a DeepEval test-run JSON file into judgments."""
    doc = load_document(source, options, PLATFORM.described)
    run = doc.get("testRunData", doc) if isinstance(doc, dict) else None
    if not isinstance(run, dict) or not isinstance(run.get("testCases", []), list):
        raise CalibError(f"{source.name}: not a DeepEval test run (expected an object with a testCases list)")
    cases = as_list(run.get("testCases")) + as_list(run.get("conversationalTestCases"))
    issues = IssueCollector(source.name, options.strict)
    items = [it for pos, case in enumerate(cases, start=1) if (it := _item(pos, case, issues)) is not None]
    notes = [f"DeepEval test run: {len(cases):,} test case(s); DeepEval counts {run.get('testPassed', '?')} "
             f"passed and {run.get('testFailed', '?')} failed"]
    return finish(source, options, PLATFORM, items, issues, notes, len(cases))


def _item(pos: int, case: Any, issues: IssueCollector) -> Item | None:
    """One test case with its metrics as scores, or ``None`` (reported) when it is malformed."""
    if not isinstance(case, dict):
        issues.bad(pos, None, "malformed test case", f"test case {pos} is not a JSON object")
        return None
    name = case.get("name")
    cid = str(name) if isinstance(name, str | int) and not isinstance(name, bool) else f"test case {pos}"
    metrics = case.get("metricsData")
    if not isinstance(metrics, list):
        issues.bad(pos, "metricsData", "malformed test case",
                   "metricsData is missing or not a list" if metrics is None else
                   f"metricsData is a {type(metrics).__name__}, not a list", sample_id=cid)
        return None
    scores: list[Score] = []
    for m in metrics:
        if not isinstance(m, dict) or not isinstance(m.get("name"), str):
            issues.bad(pos, "metricsData", "malformed test case", "a metric is not an object with a name",
                       sample_id=cid)
            return None
        kind = JUDGE if m.get("evaluationModel") else CODE
        if m.get("error"):
            value: Any = Unusable(f"the metric failed: {short_text(m['error'])[:120]}")
        else:
            value = m.get("score") if kind == JUDGE else m.get("success")
        scores.append(Score(m["name"], value, kind))
    tags = case.get("tags")
    group = str(tags[0]) if isinstance(tags, list) and tags and isinstance(tags[0], str | int) else ""
    return Item(pos=pos, id=cid, scores=scores, raw=case, group=group, text=short_text(case.get("input")))
