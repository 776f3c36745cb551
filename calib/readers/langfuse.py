"""Reader for Langfuse scores: the scores API's JSON (v2 and v3), a JSON array or JSON Lines of scores.

Layout (checked against the langfuse 5.2.0 Python SDK's API models, which the fixture is
serialised with; a Langfuse server does not run offline): one record per score, with
``id``, ``name``, ``source`` (``EVAL``: an LLM-as-a-judge evaluator; ``ANNOTATION``: a
person, in the UI or an annotation queue; ``API``: posted by code), ``dataType``
(``NUMERIC``, ``BOOLEAN``, ``CATEGORICAL``), ``value``, ``comment``, ``configId``,
``metadata`` and what it scores: in v2 (``GET /api/public/v2/scores``, the blob-storage
export's ``scores`` JSONL) ``traceId`` / ``observationId`` / ``sessionId`` and a
``stringValue`` for categorical and boolean scores; in v3 (``GET /api/public/v3/scores``)
``subject: {"kind": "trace" | "observation" | "session", "id", "traceId"}`` and ``value``
a number, a boolean or a category. The API's ``{"data": [...], "meta": {...}}``, a bare
JSON array and JSON Lines of score records are all read.

Which is which (the rule is :mod:`calib.readers.verdicts`')
    The scores of one subject (an observation, else a trace, else a session) are one
    item, joined by that id. An ``EVAL`` score is a **judge**, an ``ANNOTATION`` score
    the **human** outcome; an ``API`` score is neither until ``--confidence-key`` or
    ``--outcome-key`` names it (code posts judges and user feedback alike). A numeric
    score is read by its value, a boolean one as right/wrong, a categorical one by its
    category (``correct``/``incorrect``, ``pass``/``fail``...). Two different values
    of one score name on one subject are no usable value, said with both.
Group and cluster
    No group (``--group-key`` is a path in the subject's first score record,
    ``metadata.model``). When observations are scored, the observations of one trace are
    one cluster.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from calib.errors import CalibError
from calib.readers.base import IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import JsonLines, short_text
from calib.readers.verdicts import HUMAN, JUDGE, OTHER, Item, Platform, Score, finish, load_document

PLATFORM = Platform("langfuse", "Langfuse scores", cluster_how="Langfuse trace (its scored observations)")
KINDS = {"EVAL": JUDGE, "ANNOTATION": HUMAN}


def read(source: Source, options: LoadOptions) -> Read:
    """Read Langfuse score records into judgments."""
    issues = IssueCollector(source.name, options.strict)
    head = source.data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if head == b"{" and _is_jsonl(source.data):
        records: list[tuple[int, Any]] = list(JsonLines(source, options, issues))
        plat = Platform(PLATFORM.fmt, PLATFORM.described, cluster_how=PLATFORM.cluster_how, unit="line")
    else:
        doc = load_document(source, options, PLATFORM.described)
        data = doc.get("data") if isinstance(doc, dict) else doc
        if not isinstance(data, list):
            raise CalibError(f"{source.name}: not Langfuse scores (expected a list of scores, or an object "
                             "whose data is one)")
        records = list(enumerate(data, start=1))
        plat = PLATFORM
    items, n_scores = _items(records, issues)
    _clusters(items)
    n = len(items) + issues.dropped  # one per subject, and one per bad line or record
    sources = Counter(s.kind for it in items for s in it.scores)
    notes = [f"Langfuse scores: {n_scores:,} score(s) on {len(items):,} trace(s) or observation(s); "
             f"{sources.get(JUDGE, 0):,} EVAL, {sources.get(HUMAN, 0):,} ANNOTATION, {sources.get(OTHER, 0):,} API"]
    return finish(source, options, plat, items, issues, notes, n)


def _is_jsonl(data: bytes) -> bool:
    """Several JSON objects, one per line (not one object spread over lines)."""
    first = data.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].strip()
    return first.endswith(b"}") and first.count(b"{") >= 1 and b'"data"' not in first[:20]


def _subject(rec: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """``(kind, id, trace id)`` of what the score is on, or ``None``."""
    sub = rec.get("subject")
    if isinstance(sub, dict) and isinstance(sub.get("id"), str) and sub["id"]:
        trace = sub.get("traceId") if sub.get("kind") == "observation" else sub["id"] if sub.get("kind") == "trace" else None
        return str(sub.get("kind")), sub["id"], trace if isinstance(trace, str) else None
    for kind, key in (("observation", "observationId"), ("trace", "traceId"), ("session", "sessionId")):
        v = rec.get(key)
        if isinstance(v, str) and v:
            trace = rec.get("traceId")
            return kind, v, trace if isinstance(trace, str) else None
    return None


def _value(rec: dict[str, Any]) -> Any:
    """A score's value: a number, a boolean, or the category (``stringValue`` in v2)."""
    dtype = rec.get("dataType")
    value = rec.get("value")
    if dtype == "CATEGORICAL":
        sv = rec.get("stringValue")
        return sv if isinstance(sv, str) else value
    if dtype == "BOOLEAN" and not isinstance(value, bool):
        sv = rec.get("stringValue")
        return sv if isinstance(sv, str) else value
    return value


def _items(records: list[tuple[int, Any]], issues: IssueCollector) -> tuple[list[Item], int]:
    """The subjects with their scores, and the number of scores read."""
    by_subject: dict[tuple[str, str], Item] = {}
    n_scores = 0
    for pos, rec in records:
        sid = rec.get("id") if isinstance(rec, dict) else None
        sid = sid if isinstance(sid, str) else None
        if not isinstance(rec, dict):
            issues.bad(pos, None, "malformed score", f"score {pos} is not a JSON object")
            continue
        name, src = rec.get("name"), rec.get("source")
        subject = _subject(rec)
        if not isinstance(name, str) or not name or not isinstance(src, str):
            issues.bad(pos, "name", "malformed score", "the score has no name or no source", sample_id=sid)
            continue
        if subject is None:
            issues.bad(pos, "traceId", "malformed score", "the score names no trace, observation or session",
                       sample_id=sid)
            continue
        kind, oid, trace = subject
        it = by_subject.get((kind, oid))
        if it is None:
            it = by_subject[(kind, oid)] = Item(pos=pos, id=short_text(oid)[:120], raw=rec, cluster=trace)
        it.scores.append(Score(name, _value(rec), KINDS.get(src.upper(), OTHER)))
        n_scores += 1
    return list(by_subject.values()), n_scores


def _clusters(items: list[Item]) -> None:
    """A trace is a cluster only when several of its observations are items."""
    counts = Counter(it.cluster for it in items if it.cluster is not None)
    for it in items:
        if it.cluster is not None and counts[it.cluster] < 2:
            it.cluster = None
