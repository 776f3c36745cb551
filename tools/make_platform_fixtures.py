"""Regenerate the eval-platform fixtures in tests/data/ with the tools themselves (issue 26).

Each fixture is written by the real tool (or, for a hosted service that cannot run here,
built and serialised with its own SDK's models, said in the fixture folder's README),
installed from its registry into a throwaway environment, never the project's, offline,
with a local stand-in for every model. The versions used:

    python3 -m venv /tmp/fixvenv
    /tmp/fixvenv/bin/pip install deepeval==4.3.1 langfuse==5.2.0 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-common==1.45.2 arize-phoenix==20.26.1
    /tmp/fixvenv/bin/python tools/make_platform_fixtures.py deepeval
    /tmp/fixvenv/bin/python tools/make_platform_fixtures.py langfuse
    /tmp/fixvenv/bin/python tools/make_platform_fixtures.py otel
    PHOENIX_PORT=16006 PHOENIX_GRPC_PORT=16007 PHOENIX_WORKING_DIR=/tmp/phx /tmp/fixvenv/bin/phoenix serve &
    /tmp/fixvenv/bin/python tools/make_platform_fixtures.py phoenix --phoenix-url http://127.0.0.1:16006

    python3 -m venv /tmp/fixvenv_ls && /tmp/fixvenv_ls/bin/pip install langsmith==0.15.1 openai==3.60.0
    /tmp/fixvenv_ls/bin/python tools/make_platform_fixtures.py langsmith
    /tmp/fixvenv_ls/bin/python tools/make_platform_fixtures.py openai

    python3 -m venv /tmp/fixvenv_ml && /tmp/fixvenv_ml/bin/pip install mlflow-skinny==3.18.0 pandas
    /tmp/fixvenv_ml/bin/python tools/make_platform_fixtures.py mlflow

    python3 -m venv /tmp/fixvenv_helm && /tmp/fixvenv_helm/bin/pip install --no-deps crfm-helm==0.5.16
    /tmp/fixvenv_helm/bin/pip install dacite filelock numpy scipy pyhocon tqdm zstandard pyyaml colorlog \
        sqlitedict mako cattrs nltk rouge_score datasets requests uncertainty-calibration retrying pydantic
    /tmp/fixvenv_helm/bin/python tools/make_platform_fixtures.py helm
    /tmp/fixvenv_helm/bin/pip install --no-deps lighteval==0.13.0   # then its imports: pytablewriter,
    #   torch, gitpython, sacrebleu, transformers, inspect_ai, aenum, latex2sympy2_extended==1.0.6
    /tmp/fixvenv_helm/bin/python tools/make_platform_fixtures.py lighteval

    mkdir /tmp/pfnpm && cd /tmp/pfnpm && npm init -y && npm install promptfoo@0.121.20   # Node 20
    python3 tools/make_platform_fixtures.py promptfoo --promptfoo /tmp/pfnpm/node_modules/.bin/promptfoo

The items are the same everywhere (:func:`items`): 40 multiple-choice questions with a
gold letter; a stand-in "model" answers right on a fixed-seed share of them, and a
stand-in judge states a 0-1 score that is higher, on average, when the answer is right
(seed 26). A few items are made unusable on purpose (no judge score, an errored metric,
a failed request), to be listed by id. Each fixture folder also holds
``tool_reading.json``, the tool's own reading of the same file, where the tool has one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
N = 40
LETTERS = "ABCD"


def items(seed: int = 26) -> list[dict]:
    """The 40 items: question, gold, the model's answer, the judge's score (0-1)."""
    rng = random.Random(seed)
    out = []
    for i in range(N):
        gold = LETTERS[rng.randrange(4)]
        right = rng.random() < 0.7
        answer = gold if right else LETTERS[(LETTERS.index(gold) + 1 + rng.randrange(3)) % 4]
        base = 0.75 if right else 0.45
        score = min(1.0, max(0.0, round(base + rng.uniform(-0.3, 0.25), 1)))
        out.append({"id": f"q{i:02d}", "question": f"Question {i}: which letter?", "gold": gold,
                    "answer": answer, "judge": score, "subject": ("algebra", "history")[i % 2]})
    return out


# ------------------------------------------------------------------ DeepEval
def deepeval_fixture(out: Path) -> None:
    """A DeepEval test run: GEval (judge, a local stub model answering GEval's prompts) and
    ExactMatchMetric (code, the reference check) on each test case; ``evaluate`` saves the
    run to ``.deepeval/.latest_test_run.json``, copied as the fixture."""
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
    os.environ.setdefault("DEEPEVAL_GRPC_LOGGING", "NO")
    import deepeval
    from deepeval import evaluate
    from deepeval.metrics import ExactMatchMetric, GEval
    from deepeval.models import DeepEvalBaseLLM
    from deepeval.test_case import LLMTestCase, LLMTestCaseParams

    data = items()
    by_q = {d["question"]: d for d in data}

    class StubJudge(DeepEvalBaseLLM):
        """Answers GEval's two prompts: the steps, then a 0-10 score for the test case."""

        def __init__(self) -> None:
            self.name = "stub-judge"

        def load_model(self):  # type: ignore[no-untyped-def]
            return self

        def _answer(self, prompt: str, schema=None):  # type: ignore[no-untyped-def]
            q = next((d for k, d in by_q.items() if k in prompt), None)
            if q is None:  # the evaluation steps
                payload = {"steps": ["Compare the answer letter with the expected letter."]}
            elif q["id"] == "q07":  # a judge that returns no number: the metric errors
                payload = {"reason": "unsure"}
            else:
                payload = {"score": round(10 * q["judge"]), "reason": "stub judge"}
            if schema is not None:
                try:
                    return schema(**payload)
                except Exception:
                    raise ValueError(f"stub judge: no {schema.__name__}") from None
            return json.dumps(payload)

        def generate(self, prompt: str, schema=None, **kw):  # type: ignore[no-untyped-def]
            return self._answer(prompt, schema)

        async def a_generate(self, prompt: str, schema=None, **kw):  # type: ignore[no-untyped-def]
            return self._answer(prompt, schema)

        def get_model_name(self) -> str:
            return "stub-judge"

    judge = GEval(name="Correctness", criteria="Is the answer letter the expected one?",
                  evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT,
                                     LLMTestCaseParams.EXPECTED_OUTPUT],
                  model=StubJudge(), threshold=0.5, async_mode=False)
    cases = [LLMTestCase(input=d["question"], actual_output=d["answer"], expected_output=d["gold"],
                         name=d["id"], tags=[d["subject"]]) for d in data]
    work = Path(tempfile.mkdtemp())
    cwd = os.getcwd()
    os.chdir(work)
    try:
        from deepeval.evaluate.configs import AsyncConfig, DisplayConfig, ErrorConfig
        evaluate(cases, [judge, ExactMatchMetric()], async_config=AsyncConfig(run_async=False),
                 display_config=DisplayConfig(print_results=False, show_indicator=False),
                 error_config=ErrorConfig(ignore_errors=True))
        latest = work / ".deepeval" / ".latest_test_run.json"
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(latest, out / "latest_test_run.json")
        _deepeval_reading(out)
    finally:
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)
    print(f"deepeval {deepeval.__version__}: wrote {out / 'latest_test_run.json'}")


def _deepeval_reading(out: Path) -> None:
    """DeepEval's own reading of the fixture (its TestRun model), per test case, for the tests."""
    from deepeval.test_run import TestRun

    run = TestRun.model_validate(json.loads((out / "latest_test_run.json").read_text())["testRunData"])
    cases = {}
    for case in run.test_cases:
        ms = {m.name: {"score": m.score, "success": m.success, "error": m.error,
                       "evaluation_model": m.evaluation_model} for m in case.metrics_data or []}
        cases[case.name] = {"metrics": ms, "tags": case.tags}
    reading = {"tool": "deepeval.test_run.TestRun.model_validate", "test_passed": run.test_passed,
               "test_failed": run.test_failed, "cases": cases}
    (out / "tool_reading.json").write_text(json.dumps(reading, indent=1, sort_keys=True) + "\n")


# ------------------------------------------------------------------ promptfoo
JUDGE_JS = """// A local stand-in for the grading model: answers llm-rubric's prompt with the fixed
// score of the item named in the rubric ("Item q07: ..."); no score: not JSON (a grader error).
const scores = JSON.parse(require('fs').readFileSync(__dirname + '/scores.json', 'utf8'));
class Judge {
  id() { return 'stub-judge'; }
  async callApi(prompt) {
    const m = /Item (q\\d+)/.exec(prompt);
    const s = m ? scores[m[1]] : undefined;
    if (s === undefined || s === null) return { output: 'I cannot grade this.' };
    return { output: JSON.stringify({ reason: 'stub judge', pass: s >= 0.5, score: s }) };
  }
}
module.exports = Judge;
"""
#: Items a person rated in promptfoo's viewer (``export.json``), and those where the person
#: disagrees with the exact-match check.
RATED, DISAGREE = 30, ("q03", "q11")


def promptfoo_fixture(data: Path, cmd: str) -> None:
    """``promptfoo eval -o results.json`` (echo provider: the answer letter; ``equals`` the
    gold; ``llm-rubric`` graded by a local JS provider), then manual ratings on 30 results
    posted to the local viewer's API as the viewer's rating buttons post them, then
    ``promptfoo export eval`` of the same eval (``export.json``)."""
    import urllib.request

    work = Path(tempfile.mkdtemp())
    rows = items()
    (work / "judge.js").write_text(JUDGE_JS)
    (work / "scores.json").write_text(json.dumps({d["id"]: None if d["id"] == "q07" else d["judge"] for d in rows}))
    tests = "\n".join(f"  - vars: {{id: {d['id']}, answer: {d['answer']}, gold: {d['gold']}, "
                       f"subject: {d['subject']}}}" for d in rows)
    (work / "promptfooconfig.yaml").write_text(
        "description: calib fixture\nprompts: ['{{answer}}']\nproviders: [echo]\ndefaultTest:\n  assert:\n"
        "    - type: equals\n      value: '{{gold}}'\n    - type: llm-rubric\n"
        "      value: 'Item {{id}}: the answer letter should be {{gold}}'\n      provider: file://judge.js\n"
        f"tests:\n{tests}\n")
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(work / "cfg"), "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_SHARING": "1"}
    out = data / "promptfoo-0.121.20"
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([cmd, "eval", "-c", "promptfooconfig.yaml", "-o", "results.json", "--no-cache",
                    "--no-progress-bar", "-j", "1"], cwd=work, env=env, check=False, capture_output=True)
    doc = json.loads((work / "results.json").read_text())
    port = 15599
    view = subprocess.Popen([cmd, "view", "-n", "-p", str(port)], cwd=work, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import time
        for _ in range(120):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except OSError:
                time.sleep(1)
        for r in doc["results"]["results"]:
            vid = r["vars"]["id"]
            if int(vid[1:]) >= RATED:
                continue
            ok = (r["vars"]["answer"] == r["vars"]["gold"]) != (vid in DISAGREE)
            gr = dict(r["gradingResult"])
            human = {"pass": ok, "score": float(ok), "reason": "Manual result (overrides all other grading results)",
                     "comment": "rated by hand", "assertion": {"type": "human"}}
            body = {**gr, "pass": ok, "score": float(ok), "comment": "rated by hand",
                    "componentResults": [*gr.get("componentResults", []), human]}
            req = urllib.request.Request(f"http://127.0.0.1:{port}/api/eval/{doc['evalId']}/results/{r['id']}/rating",
                                         data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
            urllib.request.urlopen(req, timeout=30).read()
    finally:
        view.terminate()
        view.wait(30)
    subprocess.run([cmd, "export", "eval", doc["evalId"], "-o", str(work / "export.json")], cwd=work, env=env,
                   check=True, capture_output=True)
    for name in ("results.json", "export.json"):
        text = (work / name).read_text().replace(str(work), "/home/user/evals")
        (out / name).write_text(text)
    shutil.rmtree(work, ignore_errors=True)
    print(f"promptfoo {doc['metadata'].get('promptfooVersion')}: wrote {out}")


# ------------------------------------------------------------------ Langfuse
def langfuse_fixture(out: Path) -> None:
    """Langfuse scores as its API returns them, built and serialised with the langfuse SDK's
    own API models (a Langfuse server needs Postgres and ClickHouse: it does not run here):
    ``scores_v2.json`` (``GET /api/public/v2/scores``: commons ``Score`` + ``MetaResponse``)
    and ``scores_v3.json`` (``GET /api/public/v3/scores``: ``GetScoresV3Response``, the
    scores on observations, two per trace). Per item: an ``EVAL`` numeric ``correctness``
    (the judge, 0-1), an ``ANNOTATION`` categorical ``human_label`` on 36 items (q36-q39
    not yet annotated), an ``API`` boolean ``thumbs_up`` on every fifth; q07 has no EVAL
    score, and q05 two annotations that disagree."""
    import datetime as dt

    import langfuse
    from langfuse.api.commons.types.score import Score_Boolean, Score_Categorical, Score_Numeric
    from langfuse.api.core.pydantic_utilities import parse_obj_as
    from langfuse.api.scores.types.get_scores_v3response import GetScoresV3Response
    from langfuse.api.utils.pagination.types.meta_response import MetaResponse

    t0 = dt.datetime(2026, 11, 1, 12, 0, tzinfo=dt.UTC)
    base = {"timestamp": t0, "createdAt": t0, "updatedAt": t0, "environment": "default"}
    v2: list = []
    v3: list = []
    for k, d in enumerate(items()):
        right = d["answer"] == d["gold"]
        trace, obs = f"trace-{d['id']}", f"obs-{d['id']}"
        # v3: the scores on observations, two observations per trace
        subject = {"kind": "observation", "id": obs, "traceId": f"trace-{k // 2:02d}"}
        common = {**base, "metadata": {"subject": d["subject"]}}
        if d["id"] != "q07":
            v2.append(parse_obj_as(Score_Numeric, dict(
                id=f"s-{d['id']}-e", traceId=trace, name="correctness", source="EVAL", value=d["judge"],
                comment="judge", **common)))
            v3.append({"dataType": "NUMERIC", "id": f"s-{d['id']}-e", "projectId": "p1", "name": "correctness",
                       "source": "EVAL", "value": d["judge"], "subject": subject, **common})
        labels = [] if k >= 36 else ["correct" if right else "incorrect"]
        if d["id"] == "q05":
            labels.append("incorrect" if right else "correct")
        for j, lab in enumerate(labels):
            v2.append(parse_obj_as(Score_Categorical, dict(
                id=f"s-{d['id']}-h{j}", traceId=trace, name="human_label", source="ANNOTATION",
                value=float(lab == "correct"), stringValue=lab, authorUserId="u1", configId="cfg-label", **common)))
            v3.append({"dataType": "CATEGORICAL", "id": f"s-{d['id']}-h{j}", "projectId": "p1",
                       "name": "human_label", "source": "ANNOTATION", "value": lab, "subject": subject,
                       "authorUserId": "u1", "configId": "cfg-label", **common})
        if k % 5 == 0:
            v2.append(parse_obj_as(Score_Boolean, dict(
                id=f"s-{d['id']}-u", traceId=trace, name="thumbs_up", source="API", value=float(right),
                stringValue=str(right), **common)))
    out.mkdir(parents=True, exist_ok=True)
    meta = parse_obj_as(MetaResponse, {"page": 1, "limit": 100, "totalItems": len(v2), "totalPages": 1})
    # the SDK's own serialisation (.json(): aliases, ISO timestamps)
    doc2 = {"data": [json.loads(s.json(exclude_none=True)) for s in v2], "meta": json.loads(meta.json())}
    (out / "scores_v2.json").write_text(json.dumps(doc2, indent=1) + "\n")
    doc3 = parse_obj_as(GetScoresV3Response, {"data": v3, "meta": {"limit": 100}})
    (out / "scores_v3.json").write_text(json.dumps(json.loads(doc3.json(exclude_none=True)), indent=1) + "\n")
    _langfuse_reading(out)
    print(f"langfuse {langfuse.__version__ if hasattr(langfuse, '__version__') else '?'}: wrote {out}")


def _langfuse_reading(out: Path) -> None:
    """The SDK's own reading of both files (its pydantic models), score by score."""
    from langfuse.api.commons.types.score import Score
    from langfuse.api.core.pydantic_utilities import parse_obj_as
    from langfuse.api.scores.types.get_scores_v3response import GetScoresV3Response

    # parse_obj_as is what the SDK's client applies to the API's JSON
    v2 = parse_obj_as(list[Score], json.loads((out / "scores_v2.json").read_text())["data"])
    v3 = parse_obj_as(GetScoresV3Response, json.loads((out / "scores_v3.json").read_text()))
    reading = {
        "tool": "langfuse.api parse_obj_as: list[Score] (v2), GetScoresV3Response (v3)",
        "v2": [{"trace_id": s.trace_id, "name": s.name, "source": str(s.source), "data_type": s.data_type,
                "value": s.value, "string_value": getattr(s, "string_value", None)} for s in v2],
        "v3": [{"subject": s.subject.id, "trace_id": s.subject.trace_id, "name": s.name, "source": str(s.source),
                "data_type": s.data_type, "value": s.value} for s in v3.data],
    }
    (out / "tool_reading.json").write_text(json.dumps(reading, indent=1) + "\n")


# ------------------------------------------------------------------ LangSmith
def langsmith_fixture(out: Path) -> None:
    """LangSmith runs and feedback as ``Client.list_runs()`` / ``Client.list_feedback()``
    return them, built with the langsmith SDK's own ``schemas.Run`` / ``schemas.Feedback``
    and dumped (LangSmith is a hosted service: it does not run here). 40 runs in two
    experiments (q00-q19, q20-q39), each with ``correctness`` feedback from a ``model``
    evaluator (the judge, 0-1; none on q07: the evaluator failed), ``human_correct`` from
    the ``app`` (a person, score 1/0) on q00-q35, and ``user_thumb`` from the ``api`` on
    every fifth run."""
    import datetime as dt
    import uuid

    import langsmith
    from langsmith import schemas

    t0 = dt.datetime(2026, 11, 1, 12, 0, tzinfo=dt.UTC)
    ns = uuid.UUID("00000000-0000-0000-0000-000000000026")
    runs, feedback = [], []
    for k, d in enumerate(items()):
        right = d["answer"] == d["gold"]
        rid = uuid.uuid5(ns, f"run-{d['id']}")
        session = uuid.uuid5(ns, "exp-a" if k < 20 else "exp-b")
        runs.append(schemas.Run(id=rid, name="judge_mc", start_time=t0, end_time=t0, run_type="chain",
                                inputs={"question": d["question"]}, outputs={"answer": d["answer"]},
                                trace_id=rid, session_id=session, dotted_order=f"20261101T120000000000Z{rid}"))

        def fb(key: str, score: object, src: str, comment: str | None = None, d: dict = d,
               rid: uuid.UUID = rid) -> None:
            feedback.append(schemas.Feedback(
                id=uuid.uuid5(ns, f"fb-{d['id']}-{key}"), created_at=t0, modified_at=t0, run_id=rid, trace_id=rid,
                key=key, score=score, value=None, comment=comment, feedback_source={"type": src}))

        if d["id"] == "q07":
            fb("correctness", None, "model", "evaluator failed: no score in the judge's reply")
        else:
            fb("correctness", d["judge"], "model")
        if k < 36:
            fb("human_correct", int(right), "app")
        if k % 5 == 0:
            fb("user_thumb", bool(right), "api")
    out.mkdir(parents=True, exist_ok=True)
    doc = {"runs": [json.loads(r.model_dump_json()) for r in runs],
           "feedback": [json.loads(f.model_dump_json()) for f in feedback]}
    (out / "runs_feedback.json").write_text(json.dumps(doc, indent=1) + "\n")
    # the SDK's reading of the same file
    back = [schemas.Feedback(**f) for f in json.loads((out / "runs_feedback.json").read_text())["feedback"]]
    runs_back = {str(r.id): r for r in (schemas.Run(**r) for r in doc["runs"])}
    reading = {"tool": "langsmith.schemas.Feedback / Run", "feedback": [
        {"run_id": str(f.run_id), "key": f.key, "score": f.score, "source": (f.feedback_source.type
         if f.feedback_source else None), "session_id": str(runs_back[str(f.run_id)].session_id)} for f in back]}
    (out / "tool_reading.json").write_text(json.dumps(reading, indent=1) + "\n")
    print(f"langsmith {langsmith.__version__}: wrote {out}")


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
    from mlflow.entities import AssessmentError, AssessmentSource

    store = Path(tempfile.mkdtemp())
    mlflow.set_tracking_uri(f"file://{store}/mlruns")
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
    df = mlflow.search_traces()
    out.mkdir(parents=True, exist_ok=True)
    df.drop(columns=["trace"]).to_json(out / "search_traces.jsonl", orient="records", lines=True)
    text = (out / "search_traces.jsonl").read_text().replace(str(store).replace("/", "\\/"), "/home/user/evals")
    (out / "search_traces.jsonl").write_text(text)
    reading = {"tool": "mlflow.search_traces(return_type='list'): Trace.info.assessments", "traces": []}
    for t in mlflow.search_traces(return_type="list"):
        reading["traces"].append({
            "trace_id": t.info.trace_id, "session": t.info.trace_metadata.get("mlflow.trace.session"),
            "assessments": [{"name": a.name, "source_type": a.source.source_type, "valid": a.valid,
                             "feedback": None if a.feedback is None else a.feedback.value,
                             "error": None if a.feedback is None or a.feedback.error is None else a.feedback.error.error_code,
                             "expectation": None if a.expectation is None else a.expectation.value}
                            for a in t.info.assessments]})
    (out / "tool_reading.json").write_text(json.dumps(reading, indent=1) + "\n")
    print(f"mlflow {mlflow.__version__}: wrote {out}")


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool", choices=["deepeval", "promptfoo", "langfuse", "langsmith", "phoenix", "otel", "openai", "mlflow", "helm", "lighteval"])
    ap.add_argument("--phoenix-url", default="http://127.0.0.1:6006", help="a running `phoenix serve`")
    ap.add_argument("--promptfoo", default="promptfoo", help="the promptfoo command")
    a = ap.parse_args(argv)
    if a.tool == "lighteval":
        from importlib.metadata import version
        lighteval_fixture(DATA / f"lighteval-{version('lighteval')}")
    elif a.tool == "helm":
        from importlib.metadata import version
        helm_fixture(DATA / f"helm-{version('crfm-helm')}")
    elif a.tool == "mlflow":
        from importlib.metadata import version
        mlflow_fixture(DATA / f"mlflow-{version('mlflow-skinny')}")
    elif a.tool == "openai":
        from importlib.metadata import version
        openai_fixture(DATA / f"openai-{version('openai')}")
    elif a.tool == "otel":
        from importlib.metadata import version
        otel_fixture(DATA / f"otel-sdk-{version('opentelemetry-sdk')}")
    elif a.tool == "phoenix":
        phoenix_fixture(DATA / f"phoenix-{__import__('phoenix').__version__}", a.phoenix_url)
    elif a.tool == "langsmith":
        langsmith_fixture(DATA / f"langsmith-{__import__('langsmith').__version__}")
    elif a.tool == "langfuse":
        langfuse_fixture(DATA / "langfuse-5.2.0")
    elif a.tool == "deepeval":
        deepeval_fixture(DATA / "deepeval-4.3.1")
    else:
        promptfoo_fixture(DATA, a.promptfoo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
