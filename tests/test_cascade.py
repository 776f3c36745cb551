"""Certified cascades (issue 28, item 5): every configuration's counts and cost against a
brute-force walk item by item, the chosen chain's test by scipy's binomial, its cost per
1,000 items by hand, a fixed-seed miniature of the failure rate, refusals and the CLI."""

from __future__ import annotations

import json
from itertools import permutations, product
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from calib.decision.cascade import _config_counts, _grid, cascade
from calib.errors import CalibError
from calib.present.two_stage import cascade_lines
from calib.rows import Judgments
from calib.scale import Scale
from tests.cli_run import run, strict

PCT = Scale(0.0, 100.0, "0-100")
PRICES = [0.01, 0.1, 1.0]


def rows(stated, correct, ids) -> Judgments:
    stated = np.asarray(stated, float)
    return Judgments(stated=stated, prob=stated / 100, correct=np.asarray(correct, bool),
                     line=np.arange(1, stated.size + 1), item_id=np.asarray(ids), scale=PCT)


def judges(n, rng, sharp=(0.8, 1.6, 2.5)):
    y = rng.random(n) < 0.7
    ids = np.array([f"i{i}" for i in range(n)])
    out = []
    for s in sharp:
        z = s * (2 * y - 1) + rng.normal(0, 1, n) + 0.5
        out.append(rows(np.round(100 / (1 + np.exp(-z)) / 5) * 5, y, ids))
    return out


def walk(stated, wrong, chain, thresholds, prices, person):
    """One item at a time: (accepted, errors, cost) of a chain with thresholds (None: never)."""
    acc = err = 0
    cost = 0.0
    for i in range(stated.shape[1]):
        for k, t in zip(chain, thresholds, strict=True):
            cost += prices[k]
            if t is not None and stated[k, i] >= t:
                acc += 1
                err += int(wrong[k, i])
                break
        else:
            cost += person
    return acc, err, cost


def test_config_counts_against_a_walk():
    rng = np.random.default_rng(0)
    runs = judges(60, rng)
    stated = np.stack([r.stated for r in runs])
    wrong = np.stack([~r.correct for r in runs])
    grids = [_grid(s) for s in stated]
    G = np.array([g.size for g in grids])
    rank = np.stack([np.searchsorted(grids[k], stated[k], side="right") for k in range(3)])
    items = np.arange(0, 60, 2)  # a subset, as the halves are
    for chain in [c for m in (1, 2, 3) for c in permutations(range(3), m)]:
        acc, err, cost = _config_counts(rank, wrong, chain, items, G, np.array(PRICES), 5.0)
        for g in product(*(range(int(G[k]) + 1) for k in chain)):
            th = tuple(None if gi == G[k] else grids[k][gi] for k, gi in zip(chain, g, strict=True))
            a, e, c = walk(stated[:, items], wrong[:, items], chain, th, PRICES, 5.0)
            assert (acc[g], err[g]) == (a, e)
            assert cost[g] == pytest.approx(c)


def test_chosen_chain_passes_its_test_and_costs_what_it_says():
    runs = judges(1500, np.random.default_rng(1))
    c = cascade(runs, ["cheap", "mid", "strong"], PRICES, 5.0, target_error=0.05, reps=200, seed=3)
    assert c.best is not None
    b = c.best
    assert stats.binom.cdf(b.errors, b.accepted, 0.05) <= 0.05
    by = dict(zip(["cheap", "mid", "strong"], runs, strict=True))
    pos = np.array([int(np.flatnonzero(runs[0].item_id == t)[0]) for t in c.test_ids])
    stated = np.stack([by[j].stated[pos] for j in b.judges])
    wrong = np.stack([~by[j].correct[pos] for j in b.judges])
    a, e, cost = walk(stated, wrong, range(len(b.judges)), b.thresholds,
                      [PRICES[["cheap", "mid", "strong"].index(j)] for j in b.judges], 5.0)
    assert (b.accepted, b.errors) == (a, e)
    assert b.cost_per_1000.value == pytest.approx(1000 * cost / len(c.test_ids))
    assert b.cost_per_1000.contains(b.cost_per_1000.value) and b.cost_per_1000.method == "percentile bootstrap"
    person = c.plans[-1]
    assert person.label == "a person alone" and person.cost_per_1000.value == pytest.approx(5000)
    assert [p.label for p in c.plans[1:4]] == ["cheap alone", "mid alone", "strong alone"]
    assert "Cheapest certified chain" in "\n".join(cascade_lines(c))


def test_failure_rate_miniature():
    """Fixed-seed miniature of bench/sim_judge_change.py (c): 30 datasets of 800 items; the
    chosen chain's error on 200,000 fresh items above the target in at most 4."""
    pop = judges(200_000, np.random.default_rng(99))
    rng = np.random.default_rng(5)
    fails = 0
    for i in range(30):
        c = cascade(judges(800, rng), ["a", "b", "c"], PRICES, 5.0, target_error=0.05, reps=0, seed=i)
        if c.best is None:
            continue
        idx = ["a", "b", "c"]
        stated = np.stack([pop[idx.index(j)].stated for j in c.best.judges])
        wrong = np.stack([~pop[idx.index(j)].correct for j in c.best.judges])
        open_ = np.ones(stated.shape[1], bool)
        acc = err = 0
        for s, t in enumerate(c.best.thresholds):
            take = open_ & (stated[s] >= t) if t is not None else np.zeros_like(open_)
            acc += take.sum()
            err += (take & wrong[s]).sum()
            open_ &= ~take
        fails += acc > 0 and err / acc > 0.05
    assert fails <= 4


def test_refusals():
    a = rows([90, 80], [1, 1], ["x", "x"])
    b = rows([90, 80], [1, 1], ["x", "y"])
    with pytest.raises(CalibError, match="judges item 'x' 2 times"):
        cascade([a, b], ["a", "b"], [1, 1], 5, target_error=0.1)
    with pytest.raises(CalibError, match="share 0 item"):
        cascade([b, rows([90], [1], ["z"])], ["a", "b"], [1, 1], 5, target_error=0.1)
    with pytest.raises(CalibError, match="each with a name and a price"):
        cascade([b, b], ["a", "b"], [1], 5, target_error=0.1)


def _write(path: Path, j: Judgments) -> Path:
    with path.open("w") as f:
        for i in range(len(j)):
            f.write(json.dumps({"id": str(j.item_id[i]), "confidence": float(j.stated[i]) / 100,
                                "correct": bool(j.correct[i])}) + "\n")
    return path


def test_cli_cascade(tmp_path, capsys):
    runs = judges(1000, np.random.default_rng(2))
    files = [_write(tmp_path / f"{n}.jsonl", r) for n, r in zip("abc", runs, strict=True)]
    code, out, err = run(["cascade", *files, "--prices", "0.01,0.1,1", "--person-price", "5", "--target-error",
                          "0.05", "--reps", "50", "--json"], capsys)
    assert code == 0, err
    d = strict(out)
    assert d["best"] is not None and len(d["plans"]) == 5
    assert d["plans"][-1]["cost_per_1000"] == pytest.approx(5000)
    assert [p["label"] for p in d["plans"][1:4]] == ["a.jsonl alone", "b.jsonl alone", "c.jsonl alone"]
    code, out, _ = run(["cascade", *files, "--prices", "0.01,0.1,1", "--person-price", "5", "--target-error",
                        "0.05", "--reps", "50"], capsys)
    assert code == 0 and "a person alone" in out


def test_cli_cascade_refuses_prices_before_reading(tmp_path, capsys):
    code, _, err = run(["cascade", tmp_path / "a.jsonl", tmp_path / "b.jsonl", "--prices", "1",
                        "--person-price", "5", "--target-error", "0.05"], capsys)
    assert code == 2 and "--prices gives 1 price(s) for 2 run(s)" in err and "Traceback" not in err
