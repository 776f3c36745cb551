"""The failure-prediction figures on the dashboard (issue 28 item 6), driven headless with
AppTest: the Overview's table beside AUROC checked against scikit-learn and a by-hand
count on the rows read with json; the Reliability page's cumulative-differences plot
checked against the running sum computed here."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score
from streamlit.testing.v1 import AppTest

from tests.apptest import ROOT, app, ok

SAMPLES = ROOT / "sample_data"
B = "judge_b_synthetic.jsonl"

pytestmark = pytest.mark.usefixtures("fresh_caches")


def page(path: str, sample: str = B) -> AppTest:
    at = app()
    at.query_params.update({"sample": sample, "reps": "100"})
    at.switch_page(path)
    return ok(at.run())


def rows(name: str) -> tuple[np.ndarray, np.ndarray]:
    recs = [json.loads(x) for x in (SAMPLES / name).read_text().splitlines() if x.strip()]
    return (np.array([float(r["confidence"]) for r in recs]), np.array([float(bool(r["correct"])) for r in recs]))


def top_share_accuracy(s: np.ndarray, y: np.ndarray, coverage: float) -> float:
    """Accuracy among the most confident ``coverage`` share, the tied block at the cut counted by
    its share (its mean), by brute force over the sorted values."""
    k = coverage * s.size
    right, taken = 0.0, 0.0
    for v in sorted(set(s.tolist()), reverse=True):
        block = y[s == v]
        use = min(block.size, k - taken)
        right += use * block.mean()
        taken += use
        if taken >= k:
            break
    return right / k


def test_overview_shows_the_figures_beside_auroc():
    at = page("pages/1_Overview.py")
    assert any(e.label.startswith("Failure prediction") for e in at.expander)
    frames = [d.value for d in at.dataframe if "figure" in d.value.columns]
    assert len(frames) == 1
    f = frames[0].set_index("figure")
    s, y = rows(B)
    assert f.index[0].startswith("AUROC")
    assert float(f.iloc[0]["value"]) == pytest.approx(roc_auc_score(y, s), abs=6e-4)
    auprc = f.loc[[i for i in f.index if i.startswith("AUPRC for errors")][0]]
    assert float(auprc["value"]) == pytest.approx(average_precision_score(1 - y, -s), abs=6e-4)
    for cov in (10, 50, 80):
        shown = f.loc[f"Right among top {cov}%", "value"]
        assert float(shown.rstrip("%")) == pytest.approx(100 * top_share_accuracy(s, y, cov / 100), abs=0.06)
    # every figure carries its interval, and the interval holds its estimate
    for name, r in f.iterrows():
        lo, hi = (float(x.rstrip("%")) for x in r["95% interval"].strip("[]").split(","))
        assert lo <= float(r["value"].rstrip("%")) <= hi, name
    assert "PRR (0 chance, 1 oracle)" in f.index
    texts = [t.value for t in at.text]
    # the cumulative-differences test's p-value (here p=0: wrong answers stated at 100)
    assert any(t.startswith("Cumulative differences (no bins)") and "p=" in t for t in texts)


def figure(at: AppTest, title: str) -> dict:
    """The Plotly figure a page drew in its chart frame, as the JSON the frame receives."""
    for e in at.get("component_instance"):
        args = json.loads(e.proto.json_args)
        if "spec" in args and json.loads(args["spec"])["layout"]["title"]["text"].startswith(title):
            return json.loads(args["spec"])
    raise AssertionError(f"no figure titled {title!r}")


def array(v: object) -> np.ndarray:
    """A trace's numbers: a list, or plotly's typed array ({dtype, bdata: base64})."""
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).astype(float)
    return np.asarray(v, dtype=float)


def test_reliability_page_draws_the_cumulative_differences():
    at = page("pages/3_Reliability.py")
    fig = figure(at, "Cumulative differences")
    path = [t for t in fig["data"] if t.get("mode", "").startswith("lines+markers")]
    assert len(path) == 1
    s, y = rows(B)
    values = np.unique(s)
    # by hand: answers sorted by stated confidence, the running sum of right minus stated, in points of
    # all answers, read at the end of each stated value
    want_y = [100 * np.sum((y - s / 100)[s <= v]) / s.size for v in values]
    want_x = [100 * np.mean(s <= v) for v in values]
    got_x, got_y = array(path[0]["x"]), array(path[0]["y"])
    got = {round(a, 6): b for a, b in zip(got_x, got_y, strict=True)}
    for x, want in zip(want_x, want_y, strict=True):
        assert got[round(x, 6)] == pytest.approx(want, abs=1e-9)
    assert any(c.value.replace("\\", "").startswith("Cumulative differences (no bins)") for c in at.caption)


def mc_prr(s: np.ndarray, y: np.ndarray, orders: int = 2000) -> float:
    """PRR from its definition: AURC (mean over k of the error rate of the k most confident)
    averaged over random orders of the tied answers; chance the error rate; the oracle every
    right answer first."""
    rng = np.random.default_rng(0)
    wrong = 1 - y
    k = np.arange(1, s.size + 1)
    aurc = []
    for _ in range(orders):
        perm = rng.permutation(s.size)
        order = perm[np.argsort(-s[perm], kind="stable")]
        aurc.append(np.mean(np.cumsum(wrong[order]) / k))
    oracle = np.mean(np.cumsum(np.sort(wrong)) / k)
    e = wrong.mean()
    return float((e - np.mean(aurc)) / (e - oracle))


def test_routing_page_shows_prr_beside_aurc():
    at = page("pages/5_Routing.py")
    m = {x.label: x for x in at.main.metric}
    assert "AURC" in m and "PRR (prediction rejection ratio)" in m
    s, y = rows(B)
    prr = m["PRR (prediction rejection ratio)"]
    assert float(prr.value) == pytest.approx(mc_prr(s, y), abs=2e-3)  # 0.191 both; Monte Carlo sd ~3e-4
    assert prr.delta.startswith("95% [")
    assert "AUPRC for errors" in prr.help and f"{average_precision_score(1 - y, -s):.3f}" in prr.help
