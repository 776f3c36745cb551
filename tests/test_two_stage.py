"""Two thresholds certified together and route stability (issue 28, items 3 and 4): the
p-values and valid region against a brute-force loop over scipy's binomial, the chosen pair
by enumeration, the p-value map's outline by hand, route flips and spreads counted by hand,
the item-level certificate against one row per item, and the CLI keys and messages."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from calib.decision import recommend
from calib.decision.stability import stability
from calib.decision.two_thresholds import two_thresholds
from calib.present.two_stage import _outline, pvalue_map, stability_lines, two_threshold_lines
from calib.rows import Judgments
from calib.scale import Scale
from tests.cli_run import run, strict

PCT = Scale(0.0, 100.0, "0-100")
VALUES = np.arange(50, 101, 10).astype(float)


def rows(stated, correct, ids=None) -> Judgments:
    stated = np.asarray(stated, float)
    n = stated.size
    return Judgments(stated=stated, prob=stated / 100, correct=np.asarray(correct, bool), line=np.arange(1, n + 1),
                     item_id=np.array([""] * n if ids is None else ids), scale=PCT)


def judge(n, rng):
    v = rng.choice(VALUES, n)
    return rows(v, rng.random(n) < (v / 100) ** 1.5)


def brute(j: Judgments, alpha, beta, delta, procedure):
    """Every pair's p-value, the valid set and the chosen pair, by loops over scipy.stats.binom."""
    s, y = j.stated, j.correct
    grid = np.unique(s)
    n = s.size
    p_err = [stats.binom.cdf(int(((s >= u) & ~y).sum()), int((s >= u).sum()), alpha) for u in grid]
    p_share = [stats.binom.cdf(int((s < lo).sum()), n, beta) for lo in grid]
    pairs = {(i, k): max(p_share[i], p_err[k]) for i in range(grid.size) for k in range(i, grid.size)}
    if procedure == "bonferroni":
        valid = {q for q, p in pairs.items() if p <= delta / len(pairs)}
    else:
        ok_u, ok_l = set(), set()
        for k in range(grid.size - 1, -1, -1):  # strictest first, from the first with enough items
            if (1 - alpha) ** int((s >= grid[k]).sum()) > delta / 2:
                continue
            if p_err[k] > delta / 2:
                break
            ok_u.add(k)
        for i in range(grid.size):
            if p_share[i] > delta / 2:
                break
            ok_l.add(i)
        valid = {(i, k) for (i, k) in pairs if i in ok_l and k in ok_u}
    best = min(valid, key=lambda q: (int((s[(s >= grid[q[0]]) & (s < grid[q[1]])]).size),
                                     int((s < grid[q[0]]).sum()))) if valid else None
    return grid, pairs, valid, best


@pytest.mark.parametrize("procedure", ["fixed-sequence", "bonferroni"])
@pytest.mark.parametrize("seed,n,alpha,beta", [(0, 400, 0.15, 0.4), (1, 1500, 0.10, 0.3), (2, 60, 0.2, 0.5)])
def test_pvalues_region_and_pair_against_brute_force(procedure, seed, n, alpha, beta):
    j = judge(n, np.random.default_rng(seed))
    t = two_thresholds(j, target_error=alpha, max_review_share=beta, confidence=0.9, procedure=procedure)
    grid, pairs, valid, best = brute(j, alpha, beta, 0.1, procedure)
    assert list(t.grid) == list(grid)
    for (i, k), p in pairs.items():
        assert t.pvalues[i, k] == pytest.approx(p, rel=1e-9, abs=1e-300)
    assert {(int(i), int(k)) for i, k in zip(*np.nonzero(t.valid), strict=True)} == valid
    if best is None:
        assert not t.holds and t.to_person == n
    else:
        assert (t.lower, t.upper) == (grid[best[0]], grid[best[1]])
        assert t.to_person == int((j.stated < t.lower).sum())
        assert t.accepted == int((j.stated >= t.upper).sum())


def test_failure_rate_miniature():
    """Fixed-seed miniature of bench/sim_judge_change.py (b): targets just under the population
    values err(u = 90) = 8.4% and share(l = 70) = 40%; 60 datasets of 1,500: at most 5 fail."""
    use = np.full(VALUES.size, 1 / VALUES.size)
    hit = (VALUES / 100) ** 1.5
    rng = np.random.default_rng(11)
    fails = 0
    for _ in range(60):
        t = two_thresholds(judge(1500, rng), target_error=0.083, max_review_share=0.399, confidence=0.95)
        if t.holds:
            a = t.upper <= VALUES
            err = (use[a] * (1 - hit[a])).sum() / use[a].sum()
            fails += err > 0.083 or use[t.lower > VALUES].sum() > 0.399
    assert fails <= 5


def test_outline_of_an_l_shape_by_hand():
    valid = np.array([[True, True], [True, False]])
    xs, ys = _outline(valid)
    segs = {tuple(sorted(((xs[i], ys[i]), (xs[i + 1], ys[i + 1])))) for i in range(0, len(xs), 3)}
    # an L of three unit cells centred on (0,0), (1,0), (0,1): perimeter 8 unit edges
    assert len(segs) == 8
    assert ((-0.5, -0.5), (0.5, -0.5)) in segs and ((0.5, 0.5), (0.5, 1.5)) in segs
    assert ((0.5, 0.5), (1.5, 0.5)) in segs


def test_pvalue_map_and_lines():
    t = two_thresholds(judge(1500, np.random.default_rng(1)), target_error=0.1, max_review_share=0.3)
    fig = pvalue_map(t, "<b>judge</b>")
    assert [tr.type for tr in fig.data] == ["scatter"] * len(fig.data)
    assert "<b>" not in fig.layout.title.text
    assert any("valid region" in (tr.name or "") for tr in fig.data)
    assert "Two thresholds certified together" in two_threshold_lines(t)[0]


def test_stability_counted_by_hand():
    # A: 85, 70 (flips at 80); B: 90, 95 (no); C: 60 (once); D: 79, 80, 81 (flips)
    st = [85, 70, 90, 95, 60, 79, 80, 81]
    ids = ["A", "A", "B", "B", "C", "D", "D", "D"]
    s = stability(rows(st, [1] * 8, ids), 80.0)
    assert (s.items, s.items_repeated, s.judgments, s.flipped) == (4, 3, 7, 2)
    z = stats.norm.ppf(0.975)
    k, n = 2, 3
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
    assert s.flip.ci == pytest.approx((centre - half, centre + half))
    assert s.flip.value == s.flip_share == 2 / 3 and s.flip.method == "Wilson" and s.flip.level == 0.95
    sds = [np.std([85, 70], ddof=1), np.std([90, 95], ddof=1), np.std([79, 80, 81], ddof=1)]
    assert s.sd_median == pytest.approx(np.median(sds))
    assert s.range_max == 15
    assert "flips" in "\n".join(stability_lines(s))


def test_item_certificate_counts_an_item_once():
    """Each item judged three times identically: the item-level certificate is the one of a
    single judgment per item, not of three times the evidence."""
    rng = np.random.default_rng(4)
    one = judge(700, rng)
    ids = np.array([f"i{i}" for i in range(700)])
    triple = rows(np.repeat(one.stated, 3), np.repeat(one.correct, 3), np.repeat(ids, 3))
    s = stability(triple, target=0.08)
    single = recommend(one, target=0.08)
    assert s.certificate.threshold == single.threshold
    assert s.certificate.error_upper == pytest.approx(single.error_upper)
    assert s.flipped == 0 and s.sd_median == 0


def _write(path: Path, j: Judgments, ids=None) -> Path:
    with path.open("w") as f:
        for i in range(len(j)):
            row = {"confidence": float(j.stated[i]) / 100, "correct": bool(j.correct[i])}
            if ids is not None:
                row["id"] = ids[i]
            f.write(json.dumps(row) + "\n")
    return path


def test_cli_route_two_thresholds_and_stability(tmp_path, capsys):
    j = judge(1200, np.random.default_rng(2))
    f = _write(tmp_path / "run.jsonl", j)
    code, out, err = run(["route", f, "--two-thresholds", "--target-error", "0.12", "--max-review-share", "0.35",
                          "--reps", "20", "--json"], capsys)
    assert code == 0, err
    d = strict(out)
    t = two_thresholds(j, target_error=0.12, max_review_share=0.35)
    assert d["two_thresholds"]["lower"] == pytest.approx(t.lower / 100)
    assert d["two_thresholds"]["upper"] == pytest.approx(t.upper / 100)
    assert "stability" not in d
    code, out, _ = run(["route", f, "--two-thresholds", "--max-review-share", "0.35", "--reps", "20"], capsys)
    assert code == 0 and "Two thresholds certified together" in out
    g = _write(tmp_path / "repeated.jsonl", j, [f"i{i // 2}" for i in range(1200)])
    d = strict(run(["route", g, "--stability", "--reps", "20", "--json"], capsys)[1])
    assert d["stability"]["items_repeated"] == 600 and d["stability"]["unit"]
    code, out, _ = run(["route", g, "--stability", "--reps", "20"], capsys)
    assert code == 0 and "Route stability" in out
    code, _, err = run(["route", g, "--two-thresholds", "--max-review-share", "0.35"], capsys)
    assert code == 2 and "clustered" in err and "Traceback" not in err


def test_cli_two_thresholds_needs_the_cap(tmp_path, capsys):
    code, _, err = run(["route", tmp_path / "absent.jsonl", "--two-thresholds"], capsys)
    assert code == 2 and "--max-review-share" in err and "Traceback" not in err
    code, _, err = run(["route", tmp_path / "absent.jsonl", "--two-thresholds", "--max-review-share", "1.5"],
                       capsys)
    assert code == 2 and "strictly between 0 and 1" in err
