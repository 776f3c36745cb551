"""OpenAI reader, checked on Batch output and Evals output items built with the openai 3.60.0 SDK.

The expected reading comes from the SDK's own parse of the same files
(``tests/data/openai-3.60.0/tool_reading.json``); the option probabilities are computed
here by hand (a softmax over the four letters' log-probabilities).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format

DIR = Path(__file__).parent / "data" / "openai-3.60.0"
BATCH, EVALS = DIR / "batch_output.jsonl", DIR / "eval_output_items.json"
TOOL = json.loads((DIR / "tool_reading.json").read_text())


@pytest.mark.parametrize("path", [BATCH, EVALS])
def test_recognised_without_a_format(path: Path) -> None:
    assert sniff_format(path.name, path.read_bytes()) == "openai"
    assert load(path).report.format == "openai"


def test_batch_letter_probabilities_by_hand() -> None:
    ds = load(BATCH)
    want = {}
    for b in TOOL["batch"]:
        if not b["top_logprobs"]:
            continue
        lp = {t.strip(): v for t, v in b["top_logprobs"].items()}
        z = sum(math.exp(v) for v in lp.values())
        pred = max(lp, key=lp.get)
        want[b["custom_id"]] = (math.exp(lp[pred]) / z, pred == b["gold"])
    assert len(want) == 38
    got = {str(i): (float(p), bool(c)) for i, p, c in zip(ds.rows.item_id, ds.rows.prob, ds.rows.correct,
                                                           strict=True)}
    assert got.keys() == want.keys()
    for k, (p, c) in want.items():
        assert got[k][0] == pytest.approx(p, abs=1e-12) and got[k][1] == c
    assert ds.rows.options is not None and ds.rows.options.letters == ("A", "B", "C", "D")
    r = ds.report
    assert {i.sample_id: i.reason for i in r.issues} == {"q07": "request failed", "q11": "no logprobs"}


def test_the_letter_is_a_choice_not_prose(tmp_path: Path) -> None:
    line = json.loads(BATCH.read_text().splitlines()[0])
    content = line["response"]["body"]["choices"][0]["logprobs"]["content"]
    prose = {"token": "I", "logprob": -0.1, "top_logprobs": [{"token": "I", "logprob": -0.1}]}
    line["response"]["body"]["choices"][0]["logprobs"]["content"] = [prose] + content
    p = tmp_path / "b.jsonl"
    p.write_text(json.dumps(line) + "\n")
    ds = load(p)
    assert ds.rows.options.letters == ("A", "B", "C", "D")


def test_a_line_without_gold_names_the_fix(tmp_path: Path) -> None:
    lines = BATCH.read_text().splitlines()
    first = json.loads(lines[0])
    del first["gold"]
    p = tmp_path / "b.jsonl"
    p.write_text(json.dumps(first) + "\n" + "\n".join(lines[1:]) + "\n")
    ds = load(p)
    issue = next(i for i in ds.report.issues if i.reason == "no gold")
    assert issue.sample_id == "q00" and "custom_id" in issue.detail


def test_eval_output_items_judge_against_string_check() -> None:
    ds = load(EVALS)
    want = {}
    for e in TOOL["eval_items"]:
        by = {r["type"]: r for r in e["results"]}
        if "score_model" in by:
            want[e["id"]] = (by["score_model"]["score"], by["string_check"]["passed"])
    got = {str(i): (float(s), bool(c)) for i, s, c in zip(ds.rows.item_id, ds.rows.stated, ds.rows.correct,
                                                           strict=True)}
    assert got == want and len(want) == 39
    assert ds.report.fields["confidence"] == "correctness" and ds.report.fields["outcome"] == "exact"


def test_malformed_output_items(tmp_path: Path) -> None:
    doc = json.loads(EVALS.read_text())
    doc["data"][0]["results"] = "x"
    doc["data"][1]["results"][0] = 4
    doc["data"][2] = None
    p = tmp_path / "items.json"
    p.write_text(json.dumps(doc))
    assert load(p).report.dropped_by_reason["malformed output item"] == 3


def test_no_usable_line_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "b.jsonl"
    p.write_text('{"custom_id": "a", "response": {"status_code": 500}, "error": null}\n')
    with pytest.raises(CalibError, match="no usable line.*status 500"):
        load(p)


@pytest.mark.parametrize("line", [
    b'{"custom_id": "a", "response": "B", "confidence": 90, "correct": true}\n',
    b'{"feedback": "ok", "run_id": "r1", "confidence": 90, "correct": true}\n',
    b'{"evalId": "e1", "confidence": 90, "correct": true}\n',
])
def test_stated_files_with_platform_words_stay_stated(line: bytes) -> None:
    assert sniff_format("judge.jsonl", line * 3) == "stated"
