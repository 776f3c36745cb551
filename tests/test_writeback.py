"""Write the decision back (issue 26, item 4): ``calib route --decisions OUT``.

Expected probabilities are computed here: the stated probability of a phrase's rank, or
scikit-learn's isotonic fit on the map's fitting half; the routes from the threshold. The
platform forms are checked against JSON Schemas written here from each platform's
documented types (Langfuse's ``CreateScoreRequest`` of ``POST /api/public/scores``,
Phoenix's ``SpanAnnotationData`` of ``POST /v1/span_annotations``, MLflow's
``Assessment.to_dictionary``, OTLP JSON ``LogsData``), then read back item by item.
``tools/writeback_roundtrip.py`` reads the same files with the platforms' own packages
(docs/writeback.md has its output).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from tests.cli_run import run, run_json

FIXTURE = Path(__file__).parent / "data" / "verbal-5phrases.jsonl"
ORDER = ("very low", "low", "medium", "high", "very high")


def _items() -> list[tuple[str, int, bool]]:
    """(id, rank, correct) of the fixture's valid lines, read independently."""
    out = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        word = obj["confidence"].lower().replace("-", " ")
        if word in ORDER:
            out.append((obj["id"], ORDER.index(word) + 1, bool(obj["correct"])))
    return out


@pytest.fixture(scope="module")
def mapped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The isotonic map fitted on the fixture, and each item's expected probability with it."""
    from calib.cli import main

    d = tmp_path_factory.mktemp("wb")
    assert main(["fit", str(FIXTURE), "--method", "isotonic", "--out", str(d / "map.json"), "--reps", "0"]) == 0
    items = _items()
    ranks = np.array([r for _, r, _ in items])
    right = np.array([y for _, _, y in items], dtype=float)
    iso = IsotonicRegression(out_of_bounds="clip").fit(ranks[0::2], right[0::2])  # the odd/even fitting half
    prob = {i: float(iso.predict([r])[0]) for i, r, _ in items}
    return {"dir": d, "map": d / "map.json", "prob": prob}


def _route(args: list[Any], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return run_json(["route", FIXTURE, "--reps", 0, *args], capsys)


def test_jsonl_with_a_map(mapped: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    out = mapped["dir"] / "d.jsonl"
    d = _route(["--map", mapped["map"], "--threshold", 0.8, "--decisions", out], capsys)
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    items = _items()
    assert [r["id"] for r in rows] == [i for i, _, _ in items]
    for r, (i, rank, _) in zip(rows, items, strict=True):
        assert r["stated"] == ORDER[rank - 1]
        assert r["probability"] == pytest.approx(mapped["prob"][i], abs=1e-12)
        assert r["route"] == ("accepted" if mapped["prob"][i] >= 0.8 else "person")
        assert (r["threshold"], r["on"], r["map"]) == (0.8, "calibrated", "isotonic")
        assert r["certificate"]["certified"] is False and r["certificate"]["routed_at"] == "threshold"
    accepted = sum(r["route"] == "accepted" for r in rows)
    assert d["decisions"] == {"path": str(out), "format": "jsonl", "rows": len(rows), "person": len(rows) - accepted,
                              "accepted": accepted, "certificate": rows[0]["certificate"]}


def test_csv_on_stated_phrases_at_the_recommendation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "d.csv"
    d = _route(["--decisions", out], capsys)
    rec = d["recommendation"]
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    items = _items()
    assert len(rows) == len(items)
    for r, (i, rank, _) in zip(rows, items, strict=True):
        assert (r["id"], r["stated"]) == (i, ORDER[rank - 1])
        assert float(r["probability"]) == pytest.approx((rank - 0.5) / 5)  # the rank's midpoint: no map
        assert r["route"] == ("accepted" if rank >= rec["threshold"] else "person")
        assert (r["on"], r["map"], r["certificate_certified"]) == ("stated", "", "true")
        assert float(r["certificate_recommended"]) == rec["threshold"] == float(r["threshold"])
        assert float(r["certificate_error_upper"]) == pytest.approx(rec["error_upper"])


def test_csv_is_spreadsheet_safe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "ids.jsonl"
    ids = ["=HYPERLINK(\"http://x\")", "+1", "ok\r\n=2", "'quoted"] * 10
    f.write_text("".join(json.dumps({"id": i, "confidence": 50 + k, "correct": k % 3 > 0}) + "\n"
                         for k, i in enumerate(ids)), encoding="utf-8")
    out = tmp_path / "d.csv"
    code, _, err = run(["route", f, "--threshold", 60, "--decisions", out, "--reps", 0], capsys)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out.read_bytes().decode("utf-8"), newline="")))
    assert [r["id"] for r in rows[:4]] == ["'=HYPERLINK(\"http://x\")", "'+1", "ok\r\n=2", "''quoted"]
    assert [r["route"] for r in rows[:12]] == ["accepted" if 50 + k >= 60 else "person" for k in range(12)]


# ------------------------------------------------------------------ platform forms
_STR, _NUM = {"type": "string"}, {"type": "number"}
#: From Langfuse's API reference (``CreateScoreRequest``, a list posted to /api/public/scores).
LANGFUSE = {"type": "array", "items": {
    "type": "object", "additionalProperties": False, "required": ["name", "value"],
    "properties": {"id": _STR, "traceId": _STR, "sessionId": _STR, "observationId": _STR, "datasetRunId": _STR,
                   "name": _STR, "value": {"type": ["number", "string"]}, "comment": _STR,
                   "metadata": {"type": "object"}, "environment": _STR, "queueId": _STR,
                   "dataType": {"enum": ["NUMERIC", "BOOLEAN", "CATEGORICAL", "CORRECTION", "TEXT"]},
                   "configId": _STR, "source": {"enum": ["API", "ANNOTATION"]}, "timestamp": _STR}}}
#: From Phoenix's REST API (``AnnotateSpansRequestBody`` of /v1/span_annotations).
PHOENIX = {"type": "object", "additionalProperties": False, "required": ["data"], "properties": {"data": {
    "type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["name", "annotator_kind", "span_id"],
        "properties": {"name": _STR, "annotator_kind": {"enum": ["LLM", "CODE", "HUMAN"]}, "span_id": _STR,
                       "result": {"type": "object", "additionalProperties": False,
                                  "properties": {"label": _STR, "score": _NUM, "explanation": _STR}},
                       "metadata": {"type": "object"}, "identifier": _STR}}}}}
#: From MLflow 3's ``Assessment.to_dictionary`` (a Feedback): metadata values are strings.
MLFLOW = {"type": "object", "additionalProperties": False,
          "required": ["assessment_name", "trace_id", "source", "feedback"],
          "properties": {"assessment_name": _STR, "trace_id": _STR, "span_id": _STR,
                         "source": {"type": "object", "required": ["source_type", "source_id"],
                                    "properties": {"source_type": {"enum": ["HUMAN", "LLM_JUDGE", "CODE"]},
                                                   "source_id": _STR}},
                         "create_time": _STR, "last_update_time": _STR,
                         "feedback": {"type": "object", "required": ["value"]}, "rationale": _STR,
                         "metadata": {"type": "object", "additionalProperties": _STR}, "valid": {"type": "boolean"}}}
_ANY = {"type": "object", "minProperties": 1, "maxProperties": 1, "properties": {
    "stringValue": _STR, "doubleValue": _NUM, "boolValue": {"type": "boolean"},
    "intValue": {"type": "string", "pattern": "^-?[0-9]+$"}}, "additionalProperties": False}
_KV = {"type": "object", "required": ["key", "value"], "additionalProperties": False,
       "properties": {"key": _STR, "value": _ANY}}
#: From OTLP's JSON encoding of ``LogsData`` (opentelemetry-proto logs/v1), the fields written.
OTEL = {"type": "object", "required": ["resourceLogs"], "additionalProperties": False, "properties": {
    "resourceLogs": {"type": "array", "items": {"type": "object", "additionalProperties": False, "properties": {
        "resource": {"type": "object", "properties": {"attributes": {"type": "array", "items": _KV}}},
        "scopeLogs": {"type": "array", "items": {"type": "object", "additionalProperties": False, "properties": {
            "scope": {"type": "object", "properties": {"name": _STR}},
            "logRecords": {"type": "array", "items": {
                "type": "object", "additionalProperties": False, "required": ["timeUnixNano", "eventName", "attributes"],
                "properties": {"timeUnixNano": {"type": "string", "pattern": "^[0-9]+$"},
                               "observedTimeUnixNano": {"type": "string", "pattern": "^[0-9]+$"},
                               "eventName": {"const": "gen_ai.evaluation.result"},
                               "severityNumber": {"type": "integer"}, "severityText": _STR,
                               "attributes": {"type": "array", "items": _KV}}}}}}}}}}}}


def _langfuse(doc: Any) -> dict[str, tuple[float, str]]:
    jsonschema.validate(doc, LANGFUSE)
    by: dict[str, dict[str, Any]] = {}
    for s in doc:
        by.setdefault(s["traceId"], {})[s["name"]] = s["value"]
    return {k: (v["calib_probability"], v["calib_route"]) for k, v in by.items()}


def _phoenix(doc: Any) -> dict[str, tuple[float, str]]:
    jsonschema.validate(doc, PHOENIX)
    return {a["span_id"]: (a["result"]["score"], a["result"]["label"]) for a in doc["data"]}


def _mlflow(lines: list[Any]) -> dict[str, tuple[float, str]]:
    by: dict[str, dict[str, Any]] = {}
    check = jsonschema.Draft202012Validator(MLFLOW)  # compiled once: 4,000 assessments
    for a in lines:
        check.validate(a)
        by.setdefault(a["trace_id"], {})[a["assessment_name"]] = a["feedback"]["value"]
    return {k: (v["calib_probability"], v["calib_route"]) for k, v in by.items()}


def _otel(doc: Any) -> dict[str, tuple[float, str]]:
    jsonschema.validate(doc, OTEL)
    out = {}
    for rec in doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]:
        a = {kv["key"]: next(iter(kv["value"].values())) for kv in rec["attributes"]}
        out[a["gen_ai.response.id"]] = (a["gen_ai.evaluation.score.value"], a["gen_ai.evaluation.score.label"])
    return out


@pytest.mark.parametrize("fmt", ["langfuse", "phoenix", "mlflow", "otel"])
def test_platform_forms_read_back_per_item(fmt: str, mapped: dict[str, Any],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = mapped["dir"] / f"d.{fmt}"
    _route(["--map", mapped["map"], "--threshold", 0.8, "--decisions", out, "--decisions-format", fmt], capsys)
    text = out.read_text(encoding="utf-8")
    doc = [json.loads(x) for x in text.splitlines()] if fmt == "mlflow" else json.loads(text)
    got = {"langfuse": _langfuse, "phoenix": _phoenix, "mlflow": _mlflow, "otel": _otel}[fmt](doc)
    want = {i: (p, "accepted" if p >= 0.8 else "person") for i, p in mapped["prob"].items()}
    assert got.keys() == want.keys()
    assert all(got[i][1] == want[i][1] and got[i][0] == pytest.approx(want[i][0], abs=1e-12) for i in want)


def test_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "d.jsonl"
    for args, says in (
        (["--threshold", 3, "--upper", 4, "--decisions", out], "--upper"),
        (["--decisions-format", "otel"], "--decisions OUT"),
        (["--by-group", "--decisions", out], "--by"),
    ):
        code, _, err = run(["route", FIXTURE, *args], capsys)
        assert code == 2 and says in err
    counts = tmp_path / "c.csv"
    counts.write_text("value,n,correct\n80,10,8\n90,10,9\n", encoding="utf-8")
    code, _, err = run(["route", counts, "--decisions", out, "--reps", 0], capsys)
    assert code == 2 and "count table" in err
    assert not out.exists()
