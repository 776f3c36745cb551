"""The decisions in the eval platforms' own import forms (``--decisions-format``).

Each item's decision (:class:`calib.writeback.Decisions`) becomes what the platform
stores for a judged trace or span, keyed by the item's id (the trace, span or response
id the reader took from the platform's export):

- ``langfuse``: the body of Langfuse's ``POST /api/public/scores`` (a JSON array of
  ``CreateScoreRequest``), two scores per item: ``calib_probability`` (``NUMERIC``, the
  probability) and ``calib_route`` (``CATEGORICAL``, ``person`` or ``accepted``),
  ``traceId`` the item id, ``source`` ``API``, the threshold and certificate in
  ``metadata``. Score ids are UUID 5 of (item id, line, name), so importing twice
  updates the scores instead of doubling them;
- ``phoenix``: the body of Phoenix's ``POST /v1/span_annotations``
  (``{"data": [...]}``): one annotation per item, ``name`` ``calib_route``,
  ``annotator_kind`` ``CODE``, ``result`` ``{label: route, score: probability,
  explanation}``, ``span_id`` the item id, ``identifier`` ``calib``;
- ``mlflow``: MLflow 3 assessments as JSON lines, each the dictionary form of
  ``mlflow.entities.Feedback`` (``Assessment.from_dictionary`` reads it): per item
  ``calib_probability`` (the probability) and ``calib_route`` (the route), ``trace_id``
  the item id, ``source`` ``{source_type: CODE, source_id: calib}``, metadata as strings;
- ``otel``: OTLP JSON logs (``{"resourceLogs": [...]}``, as an OTLP/HTTP JSON exporter
  or the collector's file exporter writes them) of one ``gen_ai.evaluation.result``
  event per item: ``gen_ai.evaluation.name`` ``calib_route``,
  ``gen_ai.evaluation.score.value`` the probability, ``gen_ai.evaluation.score.label`` the
  route, ``gen_ai.evaluation.explanation``, ``gen_ai.response.id`` the item id.

``docs/writeback.md`` gives the versions each form was read back with
(``tools/writeback_roundtrip.py``).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from calib.errors import CalibError

if TYPE_CHECKING:
    from calib.writeback import Decisions

#: The evaluation names written.
PROBABILITY_NAME, ROUTE_NAME = "calib_probability", "calib_route"
#: The namespace of the Langfuse score ids (UUID 5).
_NAMESPACE = uuid.UUID("6f1d4c1e-26a0-4c4b-9b1e-ca11b0000026")


def _explanation(rec: dict[str, Any]) -> str:
    """One sentence per item: how the route was decided."""
    on = "calibrated probability" if rec["on"] == "calibrated" else "stated probability"
    where = "at or above" if rec["route"] == "accepted" else "below"
    cert = rec["certificate"]
    guarantee = (f"; certified: at most {100 * cert['target']:g}% wrong among accepted with "
                 f"{100 * cert['confidence']:g}% confidence ({cert['method']})" if cert["certified"]
                 else "; not the certified threshold")
    return (f"stated {rec['stated']}: {on} {rec['probability']:.4g} {where} the threshold {rec['threshold']:g}, "
            f"so {'accepted unseen' if rec['route'] == 'accepted' else 'sent to a person'}{guarantee}")


def _meta(rec: dict[str, Any]) -> dict[str, Any]:
    return {"threshold": rec["threshold"], "on": rec["on"], "map": rec["map"], "stated": rec["stated"],
            "line": rec["line"], "certificate": rec["certificate"]}


def langfuse(d: Decisions, now: str) -> list[dict[str, Any]]:
    """The body of Langfuse's ``POST /api/public/scores`` (see the module docstring)."""
    out = []
    for rec in d.records():
        meta = _meta(rec)
        for name, value, kind in ((PROBABILITY_NAME, rec["probability"], "NUMERIC"),
                                  (ROUTE_NAME, rec["route"], "CATEGORICAL")):
            out.append({"id": str(uuid.uuid5(_NAMESPACE, json.dumps([rec["id"], rec["line"], name]))),
                        "traceId": rec["id"], "name": name, "value": value, "dataType": kind, "source": "API",
                        "timestamp": now, "comment": _explanation(rec), "metadata": meta})
    return out


def phoenix(d: Decisions) -> dict[str, Any]:
    """A span-annotations request body (see the module docstring)."""
    return {"data": [
        {"span_id": rec["id"], "name": ROUTE_NAME, "annotator_kind": "CODE",
         "result": {"label": rec["route"], "score": rec["probability"], "explanation": _explanation(rec)},
         "metadata": _meta(rec), "identifier": "calib"}
        for rec in d.records()
    ]}


def mlflow(d: Decisions, now: str) -> list[dict[str, Any]]:
    """MLflow assessments, the dictionary form (see the module docstring)."""
    millis = int(datetime.fromisoformat(now.replace("Z", "+00:00")).timestamp() * 1000)
    out = []
    for rec in d.records():
        meta = {k: v if isinstance(v, str) else json.dumps(v) for k, v in _meta(rec).items()}
        for name, value in ((PROBABILITY_NAME, rec["probability"]), (ROUTE_NAME, rec["route"])):
            out.append({"assessment_name": name, "trace_id": rec["id"],
                        "source": {"source_type": "CODE", "source_id": "calib"},
                        "create_time": _rfc3339(millis), "last_update_time": _rfc3339(millis),
                        "feedback": {"value": value}, "rationale": _explanation(rec), "metadata": meta,
                        "valid": True})
    return out


def _rfc3339(millis: int) -> str:
    return datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _attr(key: str, value: Any) -> dict[str, Any]:
    """An OTLP JSON attribute (``AnyValue``: 64-bit integers as strings, as OTLP JSON writes them)."""
    if isinstance(value, bool):
        v: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}
    elif isinstance(value, float):
        v = {"doubleValue": value}
    else:
        v = {"stringValue": str(value)}
    return {"key": key, "value": v}


def otel(d: Decisions, now: str) -> dict[str, Any]:
    """OTLP JSON logs of ``gen_ai.evaluation.result`` events (see the module docstring)."""
    nanos = str(int(datetime.fromisoformat(now.replace("Z", "+00:00")).timestamp()) * 10**9)
    records = []
    for rec in d.records():
        cert = rec["certificate"]
        attrs = [
            _attr("gen_ai.evaluation.name", ROUTE_NAME),
            _attr("gen_ai.evaluation.score.value", float(rec["probability"])),
            _attr("gen_ai.evaluation.score.label", rec["route"]),
            _attr("gen_ai.evaluation.explanation", _explanation(rec)),
            _attr("gen_ai.response.id", rec["id"]),
            _attr("calib.stated", rec["stated"]),
            _attr("calib.line", int(rec["line"])),
            _attr("calib.threshold", float(rec["threshold"])),
            _attr("calib.threshold_on", rec["on"]),
            _attr("calib.certificate", json.dumps(cert)),
        ]
        records.append({"timeUnixNano": nanos, "observedTimeUnixNano": nanos, "eventName": "gen_ai.evaluation.result",
                        "severityNumber": 9, "severityText": "INFO", "attributes": attrs})
    return {"resourceLogs": [{
        "resource": {"attributes": [_attr("service.name", "calib")]},
        "scopeLogs": [{"scope": {"name": "calib"}, "logRecords": records}],
    }]}


def write(d: Decisions, fmt: str, *, now: str) -> bytes:
    """``d`` in the platform form ``fmt`` as UTF-8 JSON (JSON lines for ``mlflow``)."""
    if fmt == "langfuse":
        doc: Any = langfuse(d, now)
    elif fmt == "phoenix":
        doc = phoenix(d)
    elif fmt == "mlflow":
        return "".join(json.dumps(a, ensure_ascii=False, allow_nan=False) + "\n"
                       for a in mlflow(d, now)).encode("utf-8")
    elif fmt == "otel":
        doc = otel(d, now)
    else:
        raise CalibError(f"--decisions-format {fmt}: choose one of jsonl, csv, langfuse, phoenix, mlflow, otel")
    return (json.dumps(doc, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
