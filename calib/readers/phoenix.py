"""Reader for Arize Phoenix span annotations (with the spans' trace ids when joined).

Layout (read from files made with a local ``phoenix serve``, arize-phoenix 20.26.1 and
its client 3.5.0): ``Client.spans.get_span_annotations_dataframe()`` written as records
(``df.reset_index().to_json(orient="records"[, lines=True])``), one annotation per
record: ``span_id``, ``annotation_name``, ``annotator_kind`` (``LLM``, ``HUMAN``,
``CODE``), ``result.label``, ``result.score``, ``result.explanation``, ``metadata``,
``identifier``, ``source``. Joined to ``get_spans_dataframe()`` it also carries
``context.trace_id`` and the span's ``name``. The REST API's
``GET /v1/projects/{id}/span_annotations`` (``{"data": [...]}`` with ``name`` and a nested
``result``) is read too. JSON Lines, a JSON array and ``{"data": [...]}`` are accepted.

Which is which (the rule is :mod:`calib.readers.verdicts`')
    The annotations of one span are one item, joined by ``span_id``, each a score named by
    its annotation name. ``LLM`` is a **judge**, read by its score (a label without a
    score is no confidence); ``HUMAN`` is **human** and ``CODE`` **code**, read by their
    label when it says right/wrong (``correct``, ``pass``, ``yes``...), else their score
    (1/0).
Group and cluster
    No group (``--group-key`` names a field of the span's first record, ``name``). The
    spans of one trace (``context.trace_id`` or ``trace_id``) are one cluster when a trace
    holds several annotated spans.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from calib.errors import CalibError
from calib.readers.base import IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import JsonLines, get_or, is_missing, short_text
from calib.readers.verdicts import (
    CODE,
    HUMAN,
    JUDGE,
    OTHER,
    Item,
    Platform,
    Score,
    finish,
    load_document,
    outcome_of,
)

PLATFORM = Platform("phoenix", "Phoenix span annotations", cluster_how="Phoenix trace (its annotated spans)")
KINDS = {"LLM": JUDGE, "HUMAN": HUMAN, "CODE": CODE}


def read(source: Source, options: LoadOptions) -> Read:
    """Read Phoenix span annotations into judgments."""
    issues = IssueCollector(source.name, options.strict)
    first = source.data.lstrip(b"\xef\xbb\xbf \t\r\n")
    line = first.split(b"\n", 1)[0].strip()
    if first[:1] == b"{" and line.endswith(b"}") and b'"annotator_kind"' in line and b'"data"' not in line[:12]:
        records: list[tuple[int, Any]] = list(JsonLines(source, options, issues))
        plat = Platform(PLATFORM.fmt, PLATFORM.described, cluster_how=PLATFORM.cluster_how, unit="line")
    else:
        doc = load_document(source, options, PLATFORM.described)
        data = doc.get("data") if isinstance(doc, dict) else doc
        if not isinstance(data, list):
            raise CalibError(f"{source.name}: not Phoenix span annotations (expected a list of annotations, "
                             "or an object whose data is one)")
        records = list(enumerate(data, start=1))
        plat = PLATFORM
    items, n_ann = _items(records, issues)
    counts = Counter(it.cluster for it in items if it.cluster is not None)
    for it in items:
        if it.cluster is not None and counts[it.cluster] < 2:
            it.cluster = None
    kinds = Counter(s.kind for it in items for s in it.scores)
    notes = [f"Phoenix span annotations: {n_ann:,} annotation(s) on {len(items):,} span(s); "
             f"{kinds.get(JUDGE, 0):,} LLM, {kinds.get(HUMAN, 0):,} HUMAN, {kinds.get(CODE, 0):,} CODE"]
    return finish(source, options, plat, items, issues, notes, len(items) + issues.dropped)


def _field(rec: dict[str, Any], *paths: str) -> Any:
    """The first of ``paths`` present (flat ``result.score`` columns and nested ``result``)."""
    for p in paths:
        v = get_or(rec, p)
        if v is not None and not is_missing(v):
            return v
    return None


def _value(rec: dict[str, Any], kind: str) -> Any:
    """A judge's score; a person's or code's label when it says right/wrong, else the score."""
    score = _field(rec, "result.score")
    label = _field(rec, "result.label")
    if kind == JUDGE:
        return score if score is not None else label
    return label if label is not None and outcome_of(label) is not None else score if score is not None else label


def _items(records: list[tuple[int, Any]], issues: IssueCollector) -> tuple[list[Item], int]:
    """The spans with their annotations as scores, and the number of annotations read."""
    items: dict[str, Item] = {}
    n = 0
    for pos, rec in records:
        if not isinstance(rec, dict):
            issues.bad(pos, None, "malformed annotation", f"annotation {pos} is not a JSON object")
            continue
        span = _field(rec, "span_id", "context.span_id")
        name = _field(rec, "annotation_name") if "annotation_name" in rec else rec.get("name")
        kind_of = rec.get("annotator_kind")
        if not isinstance(span, str) or not span:
            issues.bad(pos, "span_id", "malformed annotation", "the annotation names no span (span_id)")
            continue
        if not isinstance(name, str) or not name or not isinstance(kind_of, str):
            issues.bad(pos, "annotation_name", "malformed annotation",
                       "the annotation has no name or no annotator_kind", sample_id=short_text(span)[:120])
            continue
        kind = KINDS.get(kind_of.upper(), OTHER)
        it = items.get(span)
        if it is None:
            trace = _field(rec, "context.trace_id", "trace_id")
            it = items[span] = Item(pos=pos, id=short_text(span)[:120], raw=rec,
                                    cluster=trace if isinstance(trace, str) and trace else None,
                                    text=short_text(rec.get("name")) if "annotation_name" in rec else "")
        it.scores.append(Score(name, _value(rec, kind), kind))
        n += 1
    return list(items.values()), n
