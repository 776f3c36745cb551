"""The eval platforms' readers read traffic (items a judge scored, no outcome yet) when, and
only when, the user says so (``traffic=True``), as every other reader does.

Expected values come from the raw files (the JSON read here, the softmax by hand) or from
the audit's reading of the unstripped file, which each reader's own test checks against the
tool's reading (``tests/test_readers_*.py``).
"""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from calib.errors import CalibError
from calib.loading import load, read_rows
from calib.readers.base import TRAFFIC_NOTE, LoadOptions
from calib.traffic.read import load_traffic

DATA = Path(__file__).parent / "data"
FIXTURES = [
    "promptfoo-0.121.20/results.json", "deepeval-4.3.1/latest_test_run.json", "langfuse-5.2.0/scores_v2.json",
    "langfuse-5.2.0/scores_v3.json", "langsmith-0.15.1/runs_feedback.json", "phoenix-20.26.1/span_annotations.jsonl",
    "otel-sdk-1.45.2/evaluation_events.json", "openai-3.60.0/eval_output_items.json",
    "openai-3.60.0/batch_output.jsonl", "mlflow-3.18.0/search_traces.jsonl", "helm-0.5.16/per_instance_stats.json",
    next((DATA / "lighteval-0.13.0").glob("details_*.parquet")).relative_to(DATA).as_posix(),
]
TRAFFIC = LoadOptions(traffic=True)


def _softmax_top(xs: list[float]) -> float:
    best = max(xs)
    return 1.0 / sum(math.exp(x - best) for x in xs)


@pytest.mark.parametrize("rel", FIXTURES)
def test_every_audited_item_is_traffic_with_the_same_confidence(rel: str) -> None:
    """Traffic keeps every item the audit keeps, with the same stated value, and says the
    outcome was not read; items the audit dropped for want of an outcome are kept too."""
    f = DATA / rel
    audit = load(f)
    _, kind, read = read_rows(f, options=TRAFFIC)
    assert read is not None and kind == audit.report.format
    rows, report = read
    assert TRAFFIC_NOTE in report.notes and report.fields.get("outcome") is None
    assert not {"no outcome", "outcome not binary", "no gold", "bad gold"} & set(report.dropped_by_reason)
    got = dict(zip(rows.line.tolist(), rows.stated.tolist(), strict=True))
    want = dict(zip(audit.rows.line.tolist(), audit.rows.stated.tolist(), strict=True))
    assert want.items() <= got.items()
    no_outcome = sum(n for r, n in audit.report.dropped_by_reason.items() if "outcome" in r or "gold" in r)
    assert len(got) == len(want) + no_outcome
    tr = load_traffic(str(f))
    assert len(tr) == len(got) and TRAFFIC_NOTE in tr.notes


def test_langfuse_eval_scores_without_annotations(tmp_path: Path) -> None:
    """Langfuse EVAL scores without any ANNOTATION: the audit is refused (nothing to check
    the judge against), traffic is every trace's EVAL score, read from the raw JSON here."""
    doc = json.loads((DATA / "langfuse-5.2.0/scores_v2.json").read_text())
    doc["data"] = [s for s in doc["data"] if s["source"] != "ANNOTATION"]
    f = tmp_path / "scores.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(CalibError, match="nothing to be checked against"):
        load(f)
    want = {s["traceId"]: float(s["value"]) for s in doc["data"]
            if s["source"] == "EVAL" and s["name"] == "correctness" and isinstance(s["value"], int | float)}
    _, _, read = read_rows(f, options=TRAFFIC)
    assert read is not None
    rows = read[0]
    assert dict(zip(rows.item_id.tolist(), rows.stated.tolist(), strict=True)) == want
    assert not rows.correct.any()  # the placeholder nothing reads


def test_openai_batch_without_gold_letters(tmp_path: Path) -> None:
    """OpenAI Batch output with no answer key: refused as an audit, traffic's confidence the
    letters' softmax computed here from each line's top_logprobs."""
    lines = [json.loads(x) for x in (DATA / "openai-3.60.0/batch_output.jsonl").read_text().splitlines() if x.strip()]
    want = {}
    for obj in lines:
        obj.pop("gold", None)
        logprobs = obj["response"]["body"]["choices"][0]["logprobs"] if obj.get("response") else None
        if not logprobs:
            continue  # a failed request (q07), no logprobs (q11): bad lines in traffic as in an audit
        content = logprobs["content"]
        letter_tok = next(t for t in content if re.fullmatch(r"\s*[A-H]\s*", t["token"]))
        want[obj["custom_id"]] = _softmax_top([t["logprob"] for t in letter_tok["top_logprobs"]])
    f = tmp_path / "batch.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in lines))
    with pytest.raises(CalibError, match="no gold"):
        load(f)
    tr = load_traffic(str(f))
    assert tr.prob is not None and list(tr.keys) == list(want)
    np.testing.assert_allclose(tr.prob, list(want.values()), rtol=1e-12)


def test_lighteval_details_without_gold_index(tmp_path: Path) -> None:
    """lighteval details with no ``doc.gold_index``: not lighteval details to an audit, traffic
    to a plan; each sample's confidence the softmax top of its log-likelihoods, by hand."""
    rows = [{"doc": {"id": f"s{i}"}, "model_response": {"logprobs": [-0.2 * i, -1.0, -2.5]}} for i in range(6)]
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf)
    f = tmp_path / "details_t_2026.parquet"
    f.write_bytes(buf.getvalue())
    with pytest.raises(CalibError, match="not lighteval details"):
        load(f)
    tr = load_traffic(str(f))
    assert list(tr.keys) == [f"s{i}" for i in range(6)] and tr.prob is not None
    np.testing.assert_allclose(tr.prob, [_softmax_top(r["model_response"]["logprobs"]) for r in rows], rtol=1e-12)


def test_a_helm_run_folder_is_traffic() -> None:
    """A HELM run folder (as ``calib audit`` takes it) is read as traffic, not as an lm-eval folder."""
    folder = DATA / "helm-0.5.16"
    tr = load_traffic(str(folder))
    audit = load(folder)
    assert len(tr) >= len(audit.rows) and TRAFFIC_NOTE in tr.notes
