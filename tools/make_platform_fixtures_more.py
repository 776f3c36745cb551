"""The second half of tools/make_platform_fixtures.py (Phoenix, OpenTelemetry, OpenAI, MLflow,
HELM, lighteval), kept apart to keep each file short; run through that script, whose
docstring gives the versions and commands."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from make_platform_fixtures import LETTERS, items


# ------------------------------------------------------------------ Arize Phoenix
def phoenix_fixture(out: Path, base_url: str) -> None:
    """Spans and span annotations from a local Phoenix server (``phoenix serve``, SQLite,
    offline): 40 spans ``answer q00``..``answer q39`` sent through ``phoenix.otel``, two per
    trace; span annotations logged with the Phoenix client: ``correctness`` by an ``LLM``
    (the judge: score 0-1 and label; on q07 a label without a score), ``exact_match`` by
    ``CODE`` (score 1/0) on every span, ``human_label`` by a ``HUMAN`` (label
    correct/incorrect) on q00-q35. Then ``get_spans_dataframe`` and
    ``get_span_annotations_dataframe``, as JSON Lines (``to_json(orient="records",
    lines=True)``): the annotations alone, and joined to the spans' trace id and name."""
    import time

    import pandas as pd
    import phoenix
    from phoenix.client import Client
    from phoenix.otel import register

    project = f"calib-fixture-{int(time.time())}"  # a new project: the server may hold earlier runs
    provider = register(project_name=project, endpoint=f"{base_url}/v1/traces", batch=False, set_global_tracer_provider=False)
    tracer = provider.get_tracer("calib")
    rows = items()
    span_of: dict[str, str] = {}
    for k in range(0, len(rows), 2):
        with tracer.start_as_current_span(f"question pair {k // 2}"):
            for d in rows[k:k + 2]:
                with tracer.start_as_current_span(f"answer {d['id']}") as span:
                    span.set_attribute("input.value", d["question"])
                    span.set_attribute("output.value", d["answer"])
                    span.set_attribute("metadata", json.dumps({"subject": d["subject"]}))
                    span_of[d["id"]] = format(span.get_span_context().span_id, "016x")
    provider.force_flush()
    client = Client(base_url=base_url)
    time.sleep(3)
    for k, d in enumerate(rows):
        right = d["answer"] == d["gold"]
        sid = span_of[d["id"]]
        client.spans.add_span_annotation(span_id=sid, annotation_name="correctness", annotator_kind="LLM",
                                         label="correct" if d["judge"] >= 0.5 else "incorrect",
                                         score=None if d["id"] == "q07" else d["judge"], explanation="stub judge",
                                         sync=True)
        client.spans.add_span_annotation(span_id=sid, annotation_name="exact_match", annotator_kind="CODE",
                                         score=float(right), sync=True)
        if k < 36:
            client.spans.add_span_annotation(span_id=sid, annotation_name="human_label", annotator_kind="HUMAN",
                                             label="correct" if right else "incorrect", sync=True)
    spans = client.spans.get_spans_dataframe(project_identifier=project)
    spans = spans[spans["name"].str.startswith("answer ")].reset_index(drop=True)
    ann = client.spans.get_span_annotations_dataframe(spans_dataframe=spans, project_identifier=project)
    out.mkdir(parents=True, exist_ok=True)
    ann.reset_index().to_json(out / "span_annotations.jsonl", orient="records", lines=True)
    joined = ann.reset_index().merge(spans[["context.span_id", "context.trace_id", "name"]],
                                     left_on="span_id", right_on="context.span_id", how="left")
    joined.to_json(out / "span_annotations_with_spans.jsonl", orient="records", lines=True)
    reading = {"tool": "phoenix.client Client.spans.get_span_annotations_dataframe / get_spans_dataframe",
               "annotations": json.loads(ann.reset_index().to_json(orient="records")),
               "trace_of_span": dict(zip(spans["context.span_id"], spans["context.trace_id"], strict=True)),
               "span_of_item": span_of}
    (out / "tool_reading.json").write_text(json.dumps(reading, indent=1, default=str) + "\n")
    print(f"arize-phoenix {phoenix.__version__}: wrote {out}; columns {list(pd.read_json(out / 'span_annotations.jsonl', lines=True).columns)}")


# ------------------------------------------------------------------ OpenTelemetry GenAI
def otel_fixture(out: Path) -> None:
    """``gen_ai.evaluation.result`` log events emitted with opentelemetry-sdk, one trace per
    item (a ``chat`` span, the evaluated operation, with ``gen_ai.response.id``), encoded
    by opentelemetry-exporter-otlp-proto-common's ``encode_logs`` (what the OTLP exporter
    sends) and written as OTLP/JSON (protobuf's JSON mapping, with trace and span ids in
    hex and 64-bit integers as strings, as the OTLP/JSON spec and the collector's file
    exporter write them). Per item: ``correctness`` (the judge: ``score.value`` 0-1 and
    ``score.label``; on q07 only a label and ``error.type``) and ``exact_match``
    (``score.value`` 1/0, label pass/fail)."""
    import base64

    import opentelemetry.sdk
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import set_span_in_context

    resource = Resource.create({"service.name": "calib-fixture"})
    exporter = InMemoryLogRecordExporter()
    logs = LoggerProvider(resource=resource)
    logs.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = logs.get_logger("calib.evaluator")
    tracer = TracerProvider(resource=resource).get_tracer("calib")
    for d in items():
        right = d["answer"] == d["gold"]
        with tracer.start_as_current_span("chat stub-model") as span:
            span.set_attribute("gen_ai.response.id", f"resp-{d['id']}")
            ctx = set_span_in_context(span)
            judge = {"gen_ai.evaluation.name": "correctness", "gen_ai.response.id": f"resp-{d['id']}",
                     "gen_ai.evaluation.score.label": "correct" if d["judge"] >= 0.5 else "incorrect",
                     "gen_ai.evaluation.explanation": "stub judge"}
            if d["id"] == "q07":
                judge["error.type"] = "judge_unparseable"
            else:
                judge["gen_ai.evaluation.score.value"] = d["judge"]
            logger.emit(event_name="gen_ai.evaluation.result", attributes=judge, context=ctx)
            logger.emit(event_name="gen_ai.evaluation.result", context=ctx, attributes={
                "gen_ai.evaluation.name": "exact_match", "gen_ai.response.id": f"resp-{d['id']}",
                "gen_ai.evaluation.score.value": float(right),
                "gen_ai.evaluation.score.label": "pass" if right else "fail"})
    records = exporter.get_finished_logs()
    doc = MessageToDict(encode_logs(records))
    for rl in doc["resourceLogs"]:
        for sl in rl["scopeLogs"]:
            for rec in sl["logRecords"]:
                for k in ("traceId", "spanId"):  # OTLP/JSON: hex, not protobuf JSON's base64
                    if k in rec:
                        rec[k] = base64.b64decode(rec[k]).hex()
    out.mkdir(parents=True, exist_ok=True)
    (out / "evaluation_events.json").write_text(json.dumps(doc, indent=1) + "\n")
    reading = {"tool": "opentelemetry-sdk ReadableLogRecord (before encoding)", "events": [
        {"span_id": format(r.log_record.span_id, "016x"), "trace_id": format(r.log_record.trace_id, "032x"),
         "event_name": r.log_record.event_name, "attributes": dict(r.log_record.attributes or {})}
        for r in records]}
    (out / "tool_reading.json").write_text(json.dumps(reading, indent=1) + "\n")
    print(f"opentelemetry-sdk {opentelemetry.sdk.version.__version__ if hasattr(opentelemetry.sdk, 'version') else '?'}: wrote {out}")


# ------------------------------------------------------------------ OpenAI
def openai_fixture(out: Path) -> None:
    """OpenAI outputs built with the openai SDK's own models (the API does not run here):
    ``batch_output.jsonl``, Batch API output lines whose ``response.body`` is a
    ``ChatCompletion`` with ``logprobs`` (the answer letter's ``top_logprobs`` over A-D; half
    the answers "B", half "Answer: B"), the gold letter joined by ``custom_id`` as ``gold``
    (q07's request failed; q11 has no logprobs); and ``eval_output_items.json``, an Evals
    API output-item list (``OutputItemListResponse``): a ``score_model`` grader (the judge,
    0-1; missing on q07) and a ``string_check`` grader per item."""
    import math
    import random as rnd

    import openai
    from openai.types.chat import ChatCompletion
    from openai.types.evals.runs.output_item_list_response import OutputItemListResponse

    rng = rnd.Random(2026)
    lines, evals = [], []
    for k, d in enumerate(items()):
        p_top = 0.3 + 0.69 * d["judge"]  # the chosen letter's probability
        rest = [rng.random() + 0.05 for _ in range(3)]
        others = [x for x in LETTERS if x != d["answer"]]
        probs = {d["answer"]: p_top} | {o: (1 - p_top) * r / sum(rest) for o, r in zip(others, rest, strict=True)}
        top = sorted(({"token": t, "logprob": math.log(p), "bytes": list(t.encode())} for t, p in probs.items()),
                     key=lambda x: -x["logprob"])
        letter = {"token": d["answer"], "logprob": math.log(p_top), "bytes": list(d["answer"].encode()),
                  "top_logprobs": top}
        words = [] if k % 2 else [{"token": t, "logprob": -0.01, "bytes": list(t.encode()),
                                    "top_logprobs": [{"token": t, "logprob": -0.01, "bytes": list(t.encode())}]}
                                   for t in ("Answer", ":", " ")]
        content = words + [letter]
        body = {"id": f"chatcmpl-{d['id']}", "object": "chat.completion", "created": 1796342400, "model": "gpt-stub",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "".join(t["token"] for t in content)},
                             "logprobs": None if d["id"] == "q11" else {"content": content, "refusal": None}}],
                "usage": {"prompt_tokens": 50, "completion_tokens": len(content), "total_tokens": 50 + len(content)}}
        body = json.loads(ChatCompletion.model_validate(body).model_dump_json(exclude_unset=True))
        line = {"id": f"batch_req_{d['id']}", "custom_id": d["id"],
                "response": None if d["id"] == "q07" else {"status_code": 200, "request_id": f"req_{d['id']}",
                                                            "body": body},
                "error": {"code": "server_error", "message": "The server had an error"} if d["id"] == "q07" else None,
                "gold": d["gold"]}
        lines.append(line)
        results = [{"name": "exact-3f2a3b4c-0000-4000-8000-000000000001", "type": "string_check",
                    "score": float(d["answer"] == d["gold"]), "passed": d["answer"] == d["gold"]}]
        if d["id"] != "q07":
            results.insert(0, {"name": "correctness-3f2a3b4c-0000-4000-8000-000000000002", "type": "score_model",
                               "score": d["judge"], "passed": d["judge"] >= 0.5})
        evals.append(OutputItemListResponse.model_validate({
            "id": f"outputitem_{d['id']}", "object": "eval.run.output_item", "created_at": 1796342400,
            "datasource_item": {"id": d["id"], "question": d["question"], "gold": d["gold"]},
            "datasource_item_id": k, "eval_id": "eval_stub", "run_id": "evalrun_stub", "status": "pass",
            "results": results,
            "sample": {"error": {"code": "", "message": ""}, "finish_reason": "stop", "input": [],
                       "max_completion_tokens": 16, "model": "gpt-stub", "output": [{"role": "assistant",
                       "content": d["answer"]}], "seed": 0, "temperature": 0.0, "top_p": 1.0,
                       "usage": {"cached_tokens": 0, "completion_tokens": 1, "prompt_tokens": 50, "total_tokens": 51}}}))
    out.mkdir(parents=True, exist_ok=True)
    (out / "batch_output.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    doc = {"object": "list", "data": [json.loads(e.model_dump_json()) for e in evals], "first_id": evals[0].id,
           "last_id": evals[-1].id, "has_more": False}
    (out / "eval_output_items.json").write_text(json.dumps(doc, indent=1) + "\n")
    # the SDK's reading of both files
    back = []
    for x in (json.loads(t) for t in (out / "batch_output.jsonl").read_text().splitlines()):
        if not x["response"]:
            back.append({"custom_id": x["custom_id"], "top_logprobs": None})
            continue
        c = ChatCompletion.model_validate(x["response"]["body"])
        lp = c.choices[0].logprobs
        tok = next((t for t in lp.content if len(t.token.strip()) == 1 and t.token.strip() in LETTERS), None) if lp else None
        back.append({"custom_id": x["custom_id"], "gold": x["gold"],
                     "top_logprobs": None if tok is None else {t.token: t.logprob for t in tok.top_logprobs}})
    ev = [OutputItemListResponse.model_validate(e) for e in json.loads((out / "eval_output_items.json").read_text())["data"]]
    reading = {"tool": "openai.types ChatCompletion / OutputItemListResponse", "batch": back,
               "eval_items": [{"id": e.datasource_item["id"], "results": [{"name": r.name, "type": r.type,
                               "score": r.score, "passed": r.passed} for r in e.results]} for e in ev]}
    (out / "tool_reading.json").write_text(json.dumps(reading, indent=1) + "\n")
    print(f"openai {openai.__version__}: wrote {out}")


# ------------------------------------------------------------------ MLflow 3
def _mlflow_log(mlflow: Any) -> None:
    """The fixture's traces and assessments logged to ``mlflow``'s current tracking store."""
    from mlflow.entities import AssessmentError, AssessmentSource

    mlflow.set_experiment("calib-fixture")
    judge = AssessmentSource(source_type="LLM_JUDGE", source_id="stub-judge")
    for k, d in enumerate(items()):
        right = d["answer"] == d["gold"]
        with mlflow.start_span(name=f"answer {d['id']}") as span:
            span.set_inputs({"question": d["question"]})
            span.set_outputs({"answer": d["answer"]})
            mlflow.update_current_trace(metadata={"mlflow.trace.session": f"session-{k // 2:02d}"})
        tid = span.trace_id
        if d["id"] == "q07":
            mlflow.log_feedback(trace_id=tid, name="correctness", source=judge,
                                error=AssessmentError(error_code="JUDGE_FAILED", error_message="no score in reply"))
        elif d["id"] == "q03":
            first = mlflow.log_feedback(trace_id=tid, name="correctness", value=0.2, source=judge)
            mlflow.override_feedback(trace_id=tid, assessment_id=first.assessment_id, value=d["judge"],
                                     rationale="re-judged", source=judge)
        else:
            mlflow.log_feedback(trace_id=tid, name="correctness", value=d["judge"], rationale="stub judge",
                                source=judge)
        mlflow.log_feedback(trace_id=tid, name="exact_match", value=right,
                            source=AssessmentSource(source_type="CODE", source_id="exact_match"))
        if k < 36:
            mlflow.log_feedback(trace_id=tid, name="human_correct", value=right,
                                source=AssessmentSource(source_type="HUMAN", source_id="alice"))
        mlflow.log_expectation(trace_id=tid, name="expected_answer", value=d["gold"],
                               source=AssessmentSource(source_type="HUMAN", source_id="alice"))


def mlflow_fixture(out: Path) -> None:
    """MLflow 3 traces and assessments in a local store (the file store, offline), read back
    with ``mlflow.search_traces()`` and written as records (``df.drop(columns="trace")
    .to_json(orient="records", lines=True)``). 40 traces ``answer qNN``, two per session
    (``mlflow.trace.session``); per trace: feedback ``correctness`` from an ``LLM_JUDGE``
    (0-1; on q07 an error instead of a value), ``exact_match`` from ``CODE`` (bool),
    ``human_correct`` from a ``HUMAN`` (bool) on q00-q35, an expectation
    ``expected_answer`` (the gold letter); on q03 the judge's first feedback was
    overridden (the old one is kept with ``valid: false``)."""
    import os
    import tempfile

    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
    import mlflow

    store = Path(tempfile.mkdtemp())
    mlflow.set_tracking_uri(f"file://{store}/mlruns")
    _mlflow_log(mlflow)
    df = mlflow.search_traces()
    out.mkdir(parents=True, exist_ok=True)
    df.drop(columns=["trace"]).to_json(out / "search_traces.jsonl", orient="records", lines=True)
    text = (out / "search_traces.jsonl").read_text().replace(str(store).replace("/", "\\/"), "/home/user/evals")
    (out / "search_traces.jsonl").write_text(text)
    reading = _mlflow_reading(mlflow)
    (out / "tool_reading.json").write_text(json.dumps(reading, indent=1) + "\n")
    print(f"mlflow {mlflow.__version__}: wrote {out}")


def _mlflow_reading(mlflow: Any) -> dict[str, Any]:
    """MLflow's own reading of its current store: ``search_traces(return_type="list")``'s
    assessments per trace."""
    reading: dict[str, Any] = {"tool": "mlflow.search_traces(return_type='list'): Trace.info.assessments",
                               "traces": []}
    for t in mlflow.search_traces(return_type="list"):
        reading["traces"].append({
            "trace_id": t.info.trace_id, "session": t.info.trace_metadata.get("mlflow.trace.session"),
            "assessments": [{"name": a.name, "source_type": a.source.source_type, "valid": a.valid,
                             "feedback": None if a.feedback is None else a.feedback.value,
                             "error": None if a.feedback is None or a.feedback.error is None else a.feedback.error.error_code,
                             "expectation": None if a.expectation is None else a.expectation.value}
                            for a in t.info.assessments]})
    return reading


def mlflow_db_fixture(out: Path) -> None:
    """The same traces and assessments as :func:`mlflow_fixture` in MLflow's SQLite tracking
    store (``--backend-store-uri sqlite:///mlflow.db``, MLflow 3's default store), the
    database file itself copied to ``out / "mlflow.db"`` (vacuumed), with MLflow's own
    reading of it (``tool_reading_db.json``)."""
    import os
    import sqlite3
    import tempfile

    os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
    import mlflow

    store = Path(tempfile.mkdtemp())
    mlflow.set_tracking_uri(f"sqlite:///{store}/mlflow.db")
    _mlflow_log(mlflow)
    reading = _mlflow_reading(mlflow)
    reading["mlflow"] = mlflow.__version__
    out.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(store / "mlflow.db") as con:  # compacted: the file MLflow wrote, free pages dropped
        con.execute("VACUUM INTO ?", (str(store / "vacuumed.db"),))
    # gzip-compressed (1.2 MB of mostly empty tables, 64 kB): calib reads .gz as the file it holds
    (out / "mlflow.db.gz").write_bytes(gzip.compress((store / "vacuumed.db").read_bytes(), 9, mtime=0))
    (out / "tool_reading_db.json").write_text(json.dumps(reading, indent=1) + "\n")
    print(f"mlflow {mlflow.__version__}: wrote {out / 'mlflow.db.gz'}")


# ------------------------------------------------------------------ HELM
def helm_fixture(out: Path) -> None:
    """A HELM run folder's per-instance and aggregate stats, made with crfm-helm 0.5.16's own
    code (installed without its model dependencies: no model runs here): ``PerInstanceStats``
    of ``Stat(MetricName("max_prob"))`` (the softmax top probability HELM's multiple-choice
    metric computes), ``exact_match``, ``predicted_index`` and ``logprob`` per instance, written as
    ``helm-run`` writes them (``remove_per_instance_stats_nans``, ``asdict_without_nones``);
    ``stats.json`` holds HELM's own ``compute_calibration_metrics`` (ECE) and means. The
    instances ``id0``..``id39``; ``id1``..``id4`` have a second trial
    (``train_trial_index`` 1); ``id7`` has no ``max_prob`` (a model without logprobs)."""
    import math

    import dacite
    from helm.benchmark.metrics.basic_metrics import compute_calibration_metrics
    from helm.benchmark.metrics.metric import PerInstanceStats
    from helm.benchmark.metrics.metric_name import MetricName
    from helm.benchmark.metrics.statistic import Stat, merge_stat
    from helm.benchmark.runner import remove_per_instance_stats_nans
    from helm.common.general import asdict_without_nones

    rows = items()
    per, by_instance = [], {}
    for k, d in enumerate(rows):
        for trial in ((0, 1) if 1 <= k <= 4 else (0,)):
            right = (d["answer"] == d["gold"]) == (trial == 0)  # the second trial flips the outcome
            stats = [Stat(MetricName("exact_match", split="test")).add(float(right)),
                     Stat(MetricName("predicted_index", split="test")).add(float(LETTERS.index(d["answer"])))]
            if d["id"] != "q07":  # q07: a model without logprobs, so no max_prob
                p_top = 0.25 + 0.75 * d["judge"]
                stats.insert(0, Stat(MetricName("max_prob", split="test")).add(p_top))
                stats.append(Stat(MetricName("logprob", split="test")).add(math.log(min(p_top, 0.999))))
            p = PerInstanceStats(instance_id=f"id{k}", perturbation=None, train_trial_index=trial, stats=stats)
            per.append(p)
            by_instance[(f"id{k}", trial)] = stats
    per = remove_per_instance_stats_nans(per)
    out.mkdir(parents=True, exist_ok=True)
    (out / "per_instance_stats.json").write_text(json.dumps([asdict_without_nones(p) for p in per], indent=2))
    merged: dict = {}
    for stats in by_instance.values():
        for st in stats:
            merge_stat(merged, st)
    agg = list(merged.values()) + compute_calibration_metrics(
        {key: stats for key, stats in by_instance.items() if any(s.name.name == "max_prob" for s in stats)})
    (out / "stats.json").write_text(json.dumps([asdict_without_nones(s) for s in agg], indent=2))
    back = [dacite.from_dict(PerInstanceStats, x) for x in json.loads((out / "per_instance_stats.json").read_text())]
    reading = {"tool": "dacite.from_dict(PerInstanceStats) as HELM's summarize reads it", "instances": [
        {"instance_id": p.instance_id, "train_trial_index": p.train_trial_index,
         "stats": {s.name.name: s.mean for s in p.stats}} for p in back],
        "aggregate": {s.name.name: s.mean for s in agg}}
    (out / "tool_reading.json").write_text(json.dumps(reading, indent=1) + "\n")
    print(f"crfm-helm: wrote {out}")


# ------------------------------------------------------------------ lighteval
def lighteval_fixture(out: Path) -> None:
    """A lighteval details file made by lighteval 0.13.0's own code (``DetailsLogger.Detail``
    of ``Doc`` and ``ModelResponse``, then exactly what ``EvaluationTracker.save`` does:
    ``Dataset.from_list([asdict(d)])``, columns sorted, ``to_parquet``), for a
    loglikelihood multiple-choice task: per sample the four choices' log-likelihoods in
    ``model_response.logprobs``, ``doc.gold_index`` and lighteval's ``loglikelihood_acc``
    as ``metric.acc``; q07's logprobs are empty (a failed sample). No model runs here:
    the log-likelihoods come from :func:`items` (the answer's probability from the judge)."""
    import math
    from dataclasses import asdict

    import lighteval
    from datasets import Dataset
    from lighteval.logging.info_loggers import DetailsLogger
    from lighteval.models.model_output import ModelResponse
    from lighteval.tasks.requests import Doc

    details = []
    for d in items():
        gold = LETTERS.index(d["gold"])
        p_top = 0.3 + 0.69 * d["judge"]
        lps = [math.log((1 - p_top) / 3)] * 4
        lps[LETTERS.index(d["answer"])] = math.log(p_top)
        if d["id"] == "q07":
            lps = []
        doc = Doc(query=d["question"], choices=[f" {x}" for x in LETTERS], gold_index=gold,
                  specific={"id": d["id"], "subject": d["subject"]})
        resp = ModelResponse(logprobs=lps, argmax_logits_eq_gold=[lp == max(lps) for lp in lps] if lps else [])
        acc = float(bool(lps) and max(range(4), key=lambda j: lps[j]) == gold)
        details.append(DetailsLogger.Detail(doc=doc, model_response=resp, metric={"acc": acc}))
    dataset = Dataset.from_list([asdict(x) for x in details])
    dataset = dataset.select_columns(sorted(c for c in dataset.column_names if c != "id"))
    out.mkdir(parents=True, exist_ok=True)
    name = "details_custom_calib_mc_2026-12-04T00-00-00.000000.parquet"  # lighteval: details_{task}_{date}
    dataset.to_parquet(str(out / name))
    back = Dataset.from_parquet(str(out / name))  # lighteval's load_details_datasets reads it so
    reading = {"tool": "datasets.Dataset.from_parquet, as lighteval's load_details_datasets",
               "rows": [{"id": r["doc"]["specific"]["id"], "gold_index": r["doc"]["gold_index"],
                         "logprobs": r["model_response"]["logprobs"], "acc": r["metric"]["acc"]} for r in back]}
    (out / "tool_reading.json").write_text(json.dumps(reading, indent=1) + "\n")
    print(f"lighteval {lighteval.__version__}: wrote {out}")
