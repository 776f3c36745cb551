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

    python3 -m venv /tmp/fixvenv_ml && /tmp/fixvenv_ml/bin/pip install mlflow-skinny==3.18.0 pandas \
        sqlalchemy==2.1.9 alembic==1.20.1   # the last two: the SQLite tracking store
    /tmp/fixvenv_ml/bin/python tools/make_platform_fixtures.py mlflow
    /tmp/fixvenv_ml/bin/python tools/make_platform_fixtures.py mlflow-db

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


def main(argv: list[str] | None = None) -> int:
    from importlib.metadata import version

    import make_platform_fixtures_more as more

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool", choices=["deepeval", "promptfoo", "langfuse", "langsmith", "phoenix", "otel", "openai",
                                     "mlflow", "mlflow-db", "helm", "lighteval"])
    ap.add_argument("--phoenix-url", default="http://127.0.0.1:6006", help="a running `phoenix serve`")
    ap.add_argument("--promptfoo", default="promptfoo", help="the promptfoo command")
    a = ap.parse_args(argv)
    makers = {
        "deepeval": lambda: deepeval_fixture(DATA / f"deepeval-{version('deepeval')}"),
        "promptfoo": lambda: promptfoo_fixture(DATA, a.promptfoo),
        "langfuse": lambda: langfuse_fixture(DATA / f"langfuse-{version('langfuse')}"),
        "langsmith": lambda: langsmith_fixture(DATA / f"langsmith-{version('langsmith')}"),
        "phoenix": lambda: more.phoenix_fixture(DATA / f"phoenix-{version('arize-phoenix')}", a.phoenix_url),
        "otel": lambda: more.otel_fixture(DATA / f"otel-sdk-{version('opentelemetry-sdk')}"),
        "openai": lambda: more.openai_fixture(DATA / f"openai-{version('openai')}"),
        "mlflow": lambda: more.mlflow_fixture(DATA / f"mlflow-{version('mlflow-skinny')}"),
        "mlflow-db": lambda: more.mlflow_db_fixture(DATA / f"mlflow-{version('mlflow-skinny')}"),
        "helm": lambda: more.helm_fixture(DATA / f"helm-{version('crfm-helm')}"),
        "lighteval": lambda: more.lighteval_fixture(DATA / f"lighteval-{version('lighteval')}"),
    }
    makers[a.tool]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
