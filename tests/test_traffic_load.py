"""Every reader reads traffic (rows without an outcome) when, and only when, the user says so.

The expected keys and confidences are computed here from the raw files (softmax by hand,
the JSON read directly), never by the reader under test; without ``traffic`` the same
inputs keep today's refusal of a missing outcome.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calib
from calib.cli.main import main
from calib.errors import CalibError
from calib.loading import load
from calib.readers.base import LoadOptions
from calib.traffic.read import Traffic, load_traffic

DATA = Path(__file__).parent / "data"
LMEVAL = sorted((DATA / "lm-eval-0.4.13-dummy").glob("samples_*.jsonl"))[0]
INSPECT_JSON = next((DATA / "inspect-0.3.285").glob("*calib-mc-json*.json"))


def _softmax_top(xs: list[float]) -> float:
    best = max(xs)
    return 1.0 / sum(math.exp(x - best) for x in xs)


def test_stated_jsonl_without_outcomes_is_traffic_only_when_said(tmp_path: Path) -> None:
    f = tmp_path / "t.jsonl"
    f.write_text('{"id": "a", "confidence": 90}\n{"id": "b", "confidence": 70}\n{"id": "c", "confidence": "x"}\n')
    with pytest.raises(CalibError, match="no outcome field"):
        load(str(f))  # an audit never accepts a missing outcome
    tr = load_traffic(str(f))
    assert list(tr.keys) == ["a", "b"] and list(tr.stated) == [90, 70] and tr.top == 100
    assert any("line 3" in m for m in tr.messages)
    assert any("outcome: not read" in n for n in tr.notes)


def test_a_row_missing_its_outcome_is_dropped_in_an_audit_and_kept_as_traffic(tmp_path: Path) -> None:
    rows = [{"id": f"i{k}", "confidence": 60 + k, "correct": k % 2 == 0} for k in range(6)]
    del rows[3]["correct"]
    f = tmp_path / "mixed.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load(str(f))
    assert ds.report.kept == 5 and ds.report.dropped_by_reason == {"missing outcome": 1}
    assert list(load_traffic(str(f)).keys) == [f"i{k}" for k in range(6)]


def test_logprobs_without_gold(tmp_path: Path) -> None:
    lines = [{"id": "q1", "logprobs": [-0.1, -2.5, -3.0]}, {"id": "q2", "logprobs": [-1.0, -1.2, -0.4]}]
    f = tmp_path / "lp.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(CalibError):
        load(str(f))
    tr = load_traffic(str(f))
    assert list(tr.keys) == ["q1", "q2"]
    np.testing.assert_allclose(tr.prob, [_softmax_top(x["logprobs"]) for x in lines], rtol=1e-12)


def test_lmeval_samples_without_targets(tmp_path: Path) -> None:
    raw = [json.loads(line) for line in LMEVAL.read_text().splitlines() if line.strip()]
    for s in raw:
        s.pop("target", None)
    f = tmp_path / LMEVAL.name
    f.write_text("".join(json.dumps(s) + "\n" for s in raw))
    with pytest.raises(CalibError, match="no usable"):
        load(str(f))
    tr = load_traffic(str(f))
    assert list(tr.keys) == [str(s["doc_id"]) for s in raw]
    want = [_softmax_top([float(r[0]) for r in s["filtered_resps"]]) for s in raw]
    np.testing.assert_allclose(tr.prob, want, rtol=1e-9)


def test_inspect_log_of_unscored_samples(tmp_path: Path) -> None:
    log = json.loads(INSPECT_JSON.read_text())
    audited = load(str(INSPECT_JSON))
    for s in log["samples"]:
        s.pop("scores", None)
    f = tmp_path / "unscored.json"
    f.write_text(json.dumps(log))
    with pytest.raises(CalibError):
        load(str(f))
    tr = load_traffic(str(f))
    # the same samples and confidences as the scored log's audit reads (the confidence is the
    # model's stated one, not the scorer's)
    want = dict(zip(audited.rows.item_id, audited.rows.stated, strict=True))
    assert dict(zip(tr.keys, tr.stated, strict=True)) == want


def test_dataframe_traffic_and_the_audit_refusal() -> None:
    df = pd.DataFrame({"qid": ["x", "y", "z"], "confidence": [0.9, 0.6, 0.75]})
    with pytest.raises(CalibError, match="no outcome field"):
        calib.load(df)
    tr = calib.load(df, traffic=True)
    assert isinstance(tr, Traffic) and list(tr.keys) == ["x", "y", "z"] and list(tr.stated) == [0.9, 0.6, 0.75]
    with pytest.raises(CalibError, match="traffic has no outcomes"):
        calib.load(df, outcome="confidence", traffic=True)
    arrays = calib.load(confidence=[0.5, 0.7], id=["u", "v"], traffic=True)
    assert list(arrays.keys) == ["u", "v"]


def test_a_verbal_scale_maps_to_probabilities(tmp_path: Path) -> None:
    f = tmp_path / "v.jsonl"
    f.write_text("".join(json.dumps({"id": f"i{k}", "confidence": v}) + "\n" for k, v in enumerate([1, 2, 3, 4, 5])))
    tr = load_traffic(str(f), options=LoadOptions(rescale=calib.scale.parse_rescale("1,5")))
    np.testing.assert_allclose(tr.prob, [0, 0.25, 0.5, 0.75, 1.0])


def test_cli_plans_on_an_inspect_log_without_scores(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    log = json.loads(INSPECT_JSON.read_text())
    for s in log["samples"]:
        s.pop("scores", None)
    f = tmp_path / "unscored.json"
    f.write_text(json.dumps(log))
    assert main(["plan", str(f), "--budget", "3", "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ids = {str(s["id"]) for s in log["samples"]}
    assert len(out["items"]) == 3 and {it["id"] for it in out["items"]} <= ids


def test_lmeval_folder_without_targets_is_traffic(tmp_path: Path) -> None:
    raw = {}
    for f in sorted(LMEVAL.parent.iterdir()):
        if f.name.startswith("samples_"):
            rows = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
            for s in rows:
                s.pop("target", None)
            raw[f.name] = rows
            (tmp_path / f.name).write_text("".join(json.dumps(s) + "\n" for s in rows))
        else:
            (tmp_path / f.name).write_bytes(f.read_bytes())
    tr = load_traffic(str(tmp_path))
    assert len(tr) == sum(len(v) for v in raw.values()) and len(set(tr.keys)) == len(tr)
    assert not any("DIFFERS" in n or "WARNING" in n for n in tr.notes)
    assert any("outcome: not read" in n for n in tr.notes)
