"""Reader for MLflow 3 assessments: a ``mlflow.search_traces()`` export, or the local
SQLite tracking store itself (``mlflow.db``, read by :mod:`.mlflow_store` into the same
trace records).

Layout (read from a local store written by mlflow 3.18.0, read back with its
``search_traces()``): the DataFrame as records (``df.drop(columns="trace").to_json(
orient="records"[, lines=True])``: JSON Lines or a JSON array), one trace per record:
``trace_id``, ``state``, ``request``, ``response``, ``trace_metadata`` (its
``mlflow.trace.session``), ``tags``, ``spans`` and ``assessments[]``: ``assessment_name``,
``source`` (``source_type``: ``LLM_JUDGE``, ``HUMAN``, ``CODE``; ``source_id``),
``feedback`` (``value``, ``error``) or ``expectation`` (``value``), ``rationale``,
``span_id``, ``valid`` (``false``: overridden by a later assessment).

Which is which (the rule is :mod:`calib.readers.verdicts`')
    The assessments of one trace are one item, each a score named by its
    ``assessment_name``. Feedback from an ``LLM_JUDGE`` is a **judge** (its value), from a
    ``HUMAN`` **human**, from ``CODE`` **code**. An expectation whose value says
    right/wrong (``true``, ``"correct"``...) is a **human** outcome; other expectations
    (an expected answer's text) are not scores and are counted in a note. An assessment
    with ``valid: false`` was overridden and is skipped (counted); a feedback with an
    ``error`` and no value is no confidence, with the error.
Group and cluster
    No group (``--group-key`` names a path in the trace record, ``tags.model``). The traces
    of one session (``trace_metadata["mlflow.trace.session"]``) are one cluster when a
    session holds several.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from calib.errors import CalibError
from calib.readers import mlflow_store
from calib.readers.base import IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import JsonLines, get_or, short_text
from calib.readers.verdicts import (
    CODE,
    HUMAN,
    JUDGE,
    OTHER,
    Item,
    Platform,
    Score,
    Unusable,
    finish,
    load_document,
    outcome_of,
)

PLATFORM = Platform("mlflow", "MLflow traces and assessments", cluster_how="MLflow session (mlflow.trace.session)")
KINDS = {"LLM_JUDGE": JUDGE, "HUMAN": HUMAN, "CODE": CODE}
SESSION = "mlflow.trace.session"


def read(source: Source, options: LoadOptions) -> Read:
    """Read a ``search_traces()`` export, or an ``mlflow.db`` tracking store, into judgments."""
    issues = IssueCollector(source.name, options.strict)
    text = source.data.strip(b"\xef\xbb\xbf \t\r\n")
    what = "MLflow traces"
    records: list[tuple[int, Any]]
    if mlflow_store.is_store(source.data):
        records, what = mlflow_store.records(source, options)
        plat = PLATFORM
    elif text[:1] == b"{" and b"\n" in text:
        records = list(JsonLines(source, options, issues))
        plat = Platform(PLATFORM.fmt, PLATFORM.described, cluster_how=PLATFORM.cluster_how, unit="line")
    else:
        doc = load_document(source, options, PLATFORM.described)
        data = doc.get("data", [doc]) if isinstance(doc, dict) else doc
        if not isinstance(data, list):
            raise CalibError(f"{source.name}: not an MLflow search_traces export (expected trace records)")
        records = list(enumerate(data, start=1))
        plat = PLATFORM
    tally: Counter[str] = Counter()
    items = [it for pos, rec in records if (it := _item(pos, rec, issues, tally)) is not None]
    counts = Counter(it.cluster for it in items if it.cluster is not None)
    for it in items:
        if it.cluster is not None and counts[it.cluster] < 2:
            it.cluster = None
    notes = [f"{what}: {len(records):,} trace(s), {tally['read']:,} assessment(s) read"
             + (f"; {tally['invalid']:,} overridden (valid: false) skipped" if tally["invalid"] else "")
             + (f"; {tally['expectation']:,} expectation(s) that are not right/wrong (an expected answer) "
                "not read as outcomes" if tally["expectation"] else "")]
    return finish(source, options, plat, items, issues, notes, len(records))


def _item(pos: int, rec: Any, issues: IssueCollector, tally: Counter[str]) -> Item | None:
    """One trace with its assessments as scores, or ``None`` (reported)."""
    if not isinstance(rec, dict):
        issues.bad(pos, None, "malformed trace", f"trace {pos} is not a JSON object")
        return None
    tid = rec.get("trace_id")
    tid = short_text(tid)[:120] if isinstance(tid, str) and tid else f"trace {pos}"
    assessments = rec.get("assessments")
    if not isinstance(assessments, list):
        issues.bad(pos, "assessments", "malformed trace", "assessments is missing or not a list", sample_id=tid)
        return None
    scores: list[Score] = []
    for a in assessments:
        if not isinstance(a, dict) or not isinstance(a.get("assessment_name"), str):
            issues.bad(pos, "assessments", "malformed trace", "an assessment is not an object with a name",
                       sample_id=tid)
            return None
        if a.get("valid") is False:
            tally["invalid"] += 1
            continue
        score = _score(a, tally)
        if score is not None:
            scores.append(score)
            tally["read"] += 1
    meta = rec.get("trace_metadata")
    session = meta.get(SESSION) if isinstance(meta, dict) else None  # a key with dots in it
    return Item(pos=pos, id=tid, scores=scores, raw=rec, cluster=session if isinstance(session, str) else None,
                text=short_text(rec.get("request")))


def _score(a: dict[str, Any], tally: Counter[str]) -> Score | None:
    kind = KINDS.get(str(get_or(a, "source.source_type") or "").upper(), OTHER)
    name = a["assessment_name"]
    if isinstance(a.get("expectation"), dict):
        value = a["expectation"].get("value")
        # a word or a boolean, not a letter: an expected answer "C" is not "correct"
        if outcome_of(value) is None or isinstance(value, str) and len(value.strip()) < 2:
            tally["expectation"] += 1
            return None
        return Score(name, value, HUMAN)
    fb = a.get("feedback")
    if not isinstance(fb, dict):
        return Score(name, Unusable("the assessment has neither feedback nor expectation"), kind)
    if fb.get("value") is None and fb.get("error"):
        err = fb["error"]
        code = err.get("error_code") or err.get("error_message") if isinstance(err, dict) else err
        return Score(name, Unusable(f"the judge failed: {short_text(code)[:100]}"), kind)
    return Score(name, fb.get("value"), kind)
