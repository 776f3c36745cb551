"""Reader for OpenTelemetry GenAI evaluation events (``gen_ai.evaluation.result``) in OTLP/JSON.

Layout (read from events emitted with opentelemetry-sdk 1.45.2 and encoded by its OTLP
encoder): an ``ExportLogsServiceRequest`` in OTLP/JSON, ``{"resourceLogs": [{"resource",
"scopeLogs": [{"scope", "logRecords": [...]}]}]}``, one object per file or one per line (the
collector's file exporter). A log record is an evaluation event when its ``eventName`` (or
its ``event.name`` attribute) is ``gen_ai.evaluation.result``; its ``attributes`` (a list of
``{"key", "value": {"stringValue" | "doubleValue" | "intValue" | "boolValue"}}``) carry
``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``,
``gen_ai.evaluation.score.label``, ``gen_ai.evaluation.explanation``, ``gen_ai.response.id``
and ``error.type``; ``traceId`` / ``spanId`` name the evaluated operation's span. Other log
records are skipped and counted.

Which is which (the rule is :mod:`calib.readers.verdicts`')
    The evaluations of one span (``spanId``, else ``gen_ai.response.id``) are one item,
    each a score named by ``gen_ai.evaluation.name``, read by ``score.value``, else its
    ``score.label``. The conventions do not say who evaluated, so an evaluation name is a
    **judge** when some of its values are graded numbers (not only 0 and 1), and a
    **code** check (a right/wrong verdict) when every value is 0/1, a boolean or a label;
    a note says so, and ``--confidence-key`` / ``--outcome-key`` choose others. An event
    with ``error.type`` and no value is no confidence, with the error.
Id, group and cluster
    The item id is ``gen_ai.response.id`` when there is one, else the span id. No group
    (``--group-key`` names an attribute of the item's first event, ``gen_ai.request.model``).
    The spans of one trace are one cluster when a trace holds several items.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from calib.errors import CalibError
from calib.readers.base import IssueCollector, LoadOptions, Read, Source
from calib.readers.jsonl import JsonLines, as_number, short_text
from calib.readers.verdicts import CODE, JUDGE, Item, Platform, Score, Unusable, finish, load_document

PLATFORM = Platform("otel", "OpenTelemetry gen_ai.evaluation.result events",
                    cluster_how="OpenTelemetry trace (its evaluated spans)")
EVENT = "gen_ai.evaluation.result"
NAME, VALUE, LABEL = "gen_ai.evaluation.name", "gen_ai.evaluation.score.value", "gen_ai.evaluation.score.label"


def read(source: Source, options: LoadOptions) -> Read:
    """Read OTLP/JSON logs' evaluation events into judgments."""
    issues = IssueCollector(source.name, options.strict)
    text = source.data.strip(b"\xef\xbb\xbf \t\r\n")
    first = text.split(b"\n", 1)[0].strip()
    if b"\n" in text and first.endswith(b"}") and b'"resourceLogs"' in first[:40]:
        requests: list[Any] = [obj for _, obj in JsonLines(source, options, issues)]  # one request per line
    else:
        requests = [load_document(source, options, PLATFORM.described)]
    records = []
    for req in requests:
        rls = req.get("resourceLogs") if isinstance(req, dict) else None
        if not isinstance(rls, list):
            raise CalibError(f"{source.name}: not OTLP/JSON logs (expected an object with a resourceLogs list)")
        records += [rec for rl in rls if isinstance(rl, dict) for sl in _list(rl.get("scopeLogs"))
                    if isinstance(sl, dict) for rec in _list(sl.get("logRecords"))]
    items, n_events, skipped = _items(records, issues)
    judged = _kinds(items)
    notes = [f"OpenTelemetry logs: {len(records):,} log record(s), {n_events:,} {EVENT} event(s) on "
             f"{len(items):,} span(s)" + (f"; {skipped:,} other record(s) skipped" if skipped else ""),
             "evaluators: the conventions do not say who evaluated; graded scores read as judges ("
             + (", ".join(judged) or "none") + "), right/wrong ones as checks"]
    return finish(source, options, PLATFORM, items, issues, notes, len(items) + issues.dropped)


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def attributes(rec: dict[str, Any]) -> dict[str, Any]:
    """An OTLP/JSON attribute list as a dict (``intValue`` is a string in OTLP/JSON)."""
    out: dict[str, Any] = {}
    for kv in _list(rec.get("attributes")):
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str) or not isinstance(kv.get("value"), dict):
            continue
        val = kv["value"]
        for k in ("stringValue", "boolValue", "doubleValue"):
            if k in val:
                out[kv["key"]] = val[k]
                break
        else:
            if "intValue" in val:
                out[kv["key"]] = as_number(val["intValue"])
    return out


def _items(records: list[Any], issues: IssueCollector) -> tuple[list[Item], int, int]:
    """The spans with their evaluations, the number of evaluation events, the other records."""
    items: dict[str, Item] = {}
    n = skipped = 0
    for pos, rec in enumerate(records, start=1):
        if not isinstance(rec, dict):
            issues.bad(pos, None, "malformed event", f"log record {pos} is not a JSON object")
            continue
        attrs = attributes(rec)
        if rec.get("eventName", attrs.get("event.name")) != EVENT:
            skipped += 1
            continue
        name = attrs.get(NAME)
        resp = attrs.get("gen_ai.response.id")
        span = rec.get("spanId") if isinstance(rec.get("spanId"), str) and rec.get("spanId") else None
        key = span or (resp if isinstance(resp, str) and resp else None)
        if not isinstance(name, str) or not name:
            issues.bad(pos, NAME, "malformed event", f"the event has no {NAME}",
                       sample_id=short_text(key)[:120] if key else None)
            continue
        if key is None:
            issues.bad(pos, "spanId", "malformed event", "the event names no span and no gen_ai.response.id")
            continue
        value: Any = attrs.get(VALUE, attrs.get(LABEL))
        if VALUE not in attrs and attrs.get("error.type"):
            value = Unusable(f"the evaluation failed: {short_text(attrs['error.type'])[:100]}")
        it = items.get(key)
        if it is None:
            trace = rec.get("traceId")
            shown = resp if isinstance(resp, str) and resp else key
            it = items[key] = Item(pos=pos, id=short_text(shown)[:120], raw=attrs,
                                   cluster=trace if isinstance(trace, str) and trace.strip("0") else None)
        it.scores.append(Score(name, value, CODE))
        n += 1
    counts = Counter(it.cluster for it in items.values() if it.cluster is not None)
    for it in items.values():
        if it.cluster is not None and counts[it.cluster] < 2:
            it.cluster = None
    return list(items.values()), n, skipped


def _kinds(items: list[Item]) -> list[str]:
    """Mark as judges the evaluation names with a graded value (a number other than 0 and 1)."""
    graded = {s.name for it in items for s in it.scores
              if not isinstance(s.value, bool) and (v := as_number(s.value)) is not None and v not in (0.0, 1.0)}
    for it in items:
        it.scores = [Score(s.name, s.value, JUDGE if s.name in graded else CODE) for s in it.scores]
    return sorted(graded)
