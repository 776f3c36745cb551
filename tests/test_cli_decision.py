"""``calib route`` / ``calib compare`` / ``calib audit`` and the threshold decision (issue 11).

The CLI's JSON is checked against :mod:`calib.decision` called on the same file and
against references written out here from the file's rows: fixed-sequence
Clopper-Pearson testing with ``scipy.stats`` (binomial tail, beta quantile), the
cost of every threshold summed per row, the paired counts per shared item id.
Bad flags are checked for exit code 2 and their message, word for word where a
user needs it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import beta, binom

from calib import decision
from calib.loading import load
from tests.cli_run import run, run_json

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_data"
JA = SAMPLES / "judge_a_synthetic.jsonl"
JB = SAMPLES / "judge_b_synthetic.jsonl"
JC = SAMPLES / "judge_c_synthetic.jsonl"


# ----------------------------------------------------------------- helpers
def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def arrays(path: Path, group: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    rows = rows_of(path)
    s = np.array([r["confidence"] for r in rows], dtype=float)
    y = np.array([bool(r["correct"]) for r in rows])
    g = None if group is None else np.array([str(r[group]) for r in rows])
    return s, y, g


def write_judge(path: Path, seed: int, n: int = 1200, values: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
                groups: tuple[str, ...] = (), group_p: tuple[float, ...] = (), ids: list[str] | None = None) -> Path:
    """A 1-10 judge whose hit rate grows with the value; unique ids unless given."""
    rng = np.random.default_rng(seed)
    s = rng.choice(values, size=n)
    y = rng.random(n) < np.clip(0.45 + 0.055 * s, 0, 0.995)
    g = rng.choice(groups, size=n, p=group_p or None) if groups else None
    with path.open("w") as f:
        for i in range(n):
            row: dict[str, Any] = {"id": ids[i] if ids else f"q{i}", "confidence": int(s[i]), "correct": bool(y[i])}
            if g is not None:
                row["subject"] = str(g[i])
            f.write(json.dumps(row) + "\n")
    return path


def brute_recommend(s: np.ndarray, y: np.ndarray, alpha: float, delta: float) -> tuple[float | None, int, float | None]:
    """Fixed-sequence Clopper-Pearson from the rows: thresholds (distinct values) tested
    strictest first; those that could not be rejected even with no error ((1-alpha)^n > delta)
    passed over until the first that can; H0 risk > alpha rejected while
    P(Bin(n, alpha) <= errors) <= delta; the last rejected is the recommendation.
    Returns (threshold, accepted, one-sided CP upper bound at 1 - delta)."""
    best: tuple[float | None, int, float | None] = (None, 0, None)
    started = False
    for t in sorted(np.unique(s), reverse=True):
        acc = s >= t
        n, e = int(acc.sum()), int((acc & ~y).sum())
        if not started:
            if (1 - alpha) ** n > delta:
                continue
            started = True
        if binom.cdf(e, n, alpha) > delta:
            break
        upper = 1.0 if e >= n else float(beta.ppf(1 - delta, e + 1, n - e))
        best = (float(t), n, upper)
    return best


def brute_costs(s: np.ndarray, y: np.ndarray, c_r: float, c_m: float, c_ok: float) -> dict[float | None, float]:
    """Cost per item of every threshold (accept s >= t) and of reviewing everything (None)."""
    out: dict[float | None, float] = {}
    for t in [*sorted(np.unique(s)), None]:
        acc = np.zeros(s.size, bool) if t is None else s >= t
        caught = int((~acc & ~y).sum())
        needless = int((~acc & y).sum())
        slipped = int((acc & ~y).sum())
        out[t] = (c_r * caught + c_ok * needless + c_m * slipped) / s.size
    return out


# ------------------------------------------------------------ recommendation
@pytest.mark.parametrize("seed, target, conf", [(1, 0.1, 0.95), (2, 0.05, 0.9), (3, 0.15, 0.99), (4, 0.08, 0.95)])
def test_route_recommendation_is_fixed_sequence_clopper_pearson(seed, target, conf, tmp_path, capsys) -> None:
    f = write_judge(tmp_path / "j.jsonl", seed)
    d = run_json(["route", f, "--target-error", target, "--confidence", conf, "--reps", "0"], capsys)
    rec = d["recommendation"]
    s, y, _ = arrays(f)
    t, acc, upper = brute_recommend(s, y, target, 1 - conf)
    assert rec["threshold"] == t and rec["accepted"] == acc and rec["to_person"] == s.size - acc
    assert rec["holds"] is (t is not None)
    if t is not None:
        assert rec["error_upper"] == pytest.approx(upper, rel=1e-6)
        assert rec["error_rate"] == pytest.approx(((s >= t) & ~y).sum() / acc)
        assert rec["coverage"] == pytest.approx(acc / s.size)
    assert (rec["target"], rec["confidence"]) == (target, conf)
    assert rec["method"] == decision.GUARANTEED and rec["certified_on"] == "all rows"
    # the same as the library on the loaded dataset
    assert rec == decision.recommend(load(f), target=target, confidence=conf).to_dict()
    # routed at it when no --threshold is given
    assert d["routed_at"] == "recommendation"
    if t is not None:
        assert d["lower"] == t and d["accepted"] == acc


def test_route_recommendation_on_a_sample_file(capsys) -> None:
    d = run_json(["route", JB, "--target-error", "0.2", "--reps", "0"], capsys)
    s, y, _ = arrays(JB)
    t, acc, upper = brute_recommend(s, y, 0.2, 0.05)
    assert t is not None
    assert (d["recommendation"]["threshold"], d["recommendation"]["accepted"]) == (t, acc)
    assert d["recommendation"]["error_upper"] == pytest.approx(upper, rel=1e-6)
    for key in ("recommendation", "point_estimate", "cost_curve", "cheapest", "capacity", "per_group",
                "per_group_gain", "aurc", "aurc_ci", "aurc_oracle", "eaurc", "eaurc_ci"):
        assert key in d, key
    # today's keys are unchanged
    for key in ("schema", "name", "scale", "map", "lower", "upper", "to_person", "accepted", "ci", "target", "sweep",
                "queue", "warnings", "load_report"):
        assert key in d, key


def test_text_starts_with_the_recommendation(capsys) -> None:
    code, out, _ = run(["route", JB, "--target-error", "0.2", "--reps", "0"], capsys)
    assert code == 0
    first = out.splitlines()
    assert first[0] == "Recommendation: accept at or above 98 (0-100 scale)"
    assert "with 95% confidence (fixed-sequence Clopper–Pearson, Learn-then-Test)" in first[1]
    assert "54 of 1,000 items (5.4%) accepted unseen; 946 go to a person" in out
    assert "(routed at the recommended threshold; give --threshold to route at another)" in out
    assert out.index("Recommendation:") < out.index("Routing judge_b_synthetic")


def test_given_threshold_is_routed_at_and_recommendation_still_first(capsys) -> None:
    d = run_json(["route", JB, "--threshold", "95", "--target-error", "0.2", "--reps", "0"], capsys)
    s, _, _ = arrays(JB)
    assert d["routed_at"] == "threshold" and d["lower"] == 95 and d["accepted"] == int((s >= 95).sum())
    assert d["recommendation"]["threshold"] == 98


def test_nothing_qualifies_routes_everything_to_a_person_and_exit_code(capsys) -> None:
    code, out, _ = run(["route", JA, "--target-error", "0.01", "--reps", "0"], capsys)
    assert code == 0 and out.startswith("Recommendation: none qualifies")
    assert "Items go to a person, every one: no threshold qualifies" in out
    assert "The strictest target that qualifies with this data is" in out
    d = run_json(["route", JA, "--target-error", "0.01", "--reps", "0"], capsys)
    assert d["recommendation"]["threshold"] is None and d["recommendation"]["holds"] is False
    assert d["accepted"] == 0 and d["to_person"] == 1000
    code, _, _ = run(["route", JA, "--target-error", "0.01", "--reps", "0", "--fail-if-none"], capsys)
    assert code == 1
    code, _, _ = run(["route", JB, "--target-error", "0.2", "--reps", "0", "--fail-if-none"], capsys)
    assert code == 0


def test_point_estimate_leads_when_asked(capsys) -> None:
    s, y, _ = arrays(JB)
    d = run_json(["route", JB, "--target-error", "0.2", "--point-estimate", "--reps", "0"], capsys)
    ok = [v for v in np.unique(s) if 1 - y[s >= v].mean() <= 0.2]
    assert d["point_estimate"]["threshold"] == float(min(ok)) and d["routed_at"] == "point_estimate"
    assert d["lower"] == float(min(ok)) and d["point_estimate"]["method"] == "point estimate (no guarantee)"
    code, out, _ = run(["route", JB, "--target-error", "0.2", "--point-estimate", "--reps", "0"], capsys)
    assert "no guarantee (point estimate)" in out.splitlines()[1] and "for contrast, guaranteed" in out


def test_map_thresholds_are_calibrated_and_certified_as_fitted_elsewhere(tmp_path, capsys) -> None:
    mpath = tmp_path / "m.json"
    code, _, err = run(["fit", JA, "--method", "platt", "--reps", "0", "--out", mpath], capsys)
    assert code == 0, err
    d = run_json(["route", JB, "--map", mpath, "--target-error", "0.2", "--reps", "0"], capsys)
    rec = d["recommendation"]
    assert rec["certified_on"] == "all rows (map fitted on other data)"
    from calib.maps import read_map

    want = decision.recommend(load(JB), target=0.2, calibration=read_map(str(mpath))).to_dict()
    assert rec == want
    if rec["threshold"] is not None:
        assert 0 <= rec["threshold"] <= 1 and d["on"] == "calibrated"


def test_clustered_items_are_certified_on_their_effective_size(tmp_path, capsys) -> None:
    # every item judged three times, the three verdicts identical: 400 items, 1,200 rows
    base = write_judge(tmp_path / "b.jsonl", 7, n=400)
    rows = rows_of(base)
    f = tmp_path / "c.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows for _ in range(3)))
    d = run_json(["route", f, "--target-error", "0.1", "--reps", "0"], capsys)
    rec = d["recommendation"]
    assert "each counted once" in rec["method"]
    s, y, _ = arrays(base)
    t, acc, _ = brute_recommend(s, y, 0.1, 0.05)  # the items counted once: what repeats cannot add
    assert rec["threshold"] == t and (rec["accepted"] == 3 * acc if t is not None else True)
    naive = run_json(["route", f, "--target-error", "0.1", "--reps", "0", "--cluster-key", "none"], capsys)
    assert naive["recommendation"]["accepted"] >= rec["accepted"]


# ------------------------------------------------------------ costs and capacity
@pytest.mark.parametrize("c_r, c_m, c_ok", [(1.0, 5.0, None), (1.0, 20.0, 0.5), (2.0, 3.0, None)])
def test_cost_curve_and_cheapest_match_a_sweep(c_r, c_m, c_ok, tmp_path, capsys) -> None:
    f = write_judge(tmp_path / "j.jsonl", 11)
    args = ["route", f, "--cost-review", c_r, "--cost-miss", c_m, "--reps", "300"]
    if c_ok is not None:
        args += ["--cost-right", c_ok]
    d = run_json(args, capsys)
    s, y, _ = arrays(f)
    want = brute_costs(s, y, c_r, c_m, c_r if c_ok is None else c_ok)
    curve = {r["threshold"]: r for r in d["cost_curve"]}
    assert sorted(curve) == sorted(t for t in want if t is not None)
    for t, r in curve.items():
        assert r["cost"] == pytest.approx(want[t])
        lo, hi = r["cost_ci"]
        assert lo <= r["cost"] + 1e-9 and r["cost"] <= hi + 1e-9
    best = min(want.values())
    cheapest_t = min((t for t, v in want.items() if math.isclose(v, best) and t is not None), default=None)
    ch = d["cheapest"]
    assert ch["threshold"] == cheapest_t and ch["cost"] == pytest.approx(best)
    assert ch["saving_vs_review_all"] == pytest.approx(want[None] - best)
    assert ch["saving_vs_review_none"] == pytest.approx(want[min(s)] - best)
    assert ch["cost_ci"][0] <= best <= ch["cost_ci"][1]
    assert len(ch["threshold_ci"]) == 2


@pytest.mark.parametrize("cap", ["20%", "150"])
def test_capacity_keeps_to_person_within_it(cap, tmp_path, capsys) -> None:
    f = write_judge(tmp_path / "j.jsonl", 12)
    s, y, _ = arrays(f)
    d = run_json(["route", f, "--capacity", cap, "--cost-review", "1", "--cost-miss", "10", "--reps", "0"], capsys)
    limit = int(0.2 * s.size) if cap.endswith("%") else int(cap)
    c = d["capacity"]
    assert c["limit"] == limit and c["to_person"] <= limit
    assert c["to_person"] == int((s < c["threshold"]).sum()) and c["accepted"] == s.size - c["to_person"]
    want = brute_costs(s, y, 1.0, 10.0, 1.0)
    feasible = {t: v for t, v in want.items() if t is not None and int((s < t).sum()) <= limit}
    assert c["cost"] == pytest.approx(min(feasible.values()))


# ------------------------------------------------------------ per group
def test_by_group_thresholds_and_fallback(tmp_path, capsys) -> None:
    f = write_judge(tmp_path / "g.jsonl", 21, n=1500, groups=("big", "mid", "tiny"), group_p=(0.6, 0.39, 0.01))
    d = run_json(["route", f, "--by", "subject", "--target-error", "0.1", "--reps", "0"], capsys)
    s, y, g = arrays(f, "subject")
    assert g is not None
    pooled, _, _ = brute_recommend(s, y, 0.1, 0.05)
    rows = {r["group"]: r for r in d["per_group"]}
    assert set(rows) == {"big", "mid", "tiny"}
    assert {r["pooled_fallback"] for r in rows.values()} == {True, False}  # both branches of the rule
    for name, r in rows.items():
        m = g == name
        assert r["total"] == int(m.sum())
        floor = next(n for n in range(1, 1000) if 0.9 ** n <= 0.05)  # fewest items that could certify 10%
        if m.sum() < floor:  # too small to certify anything: every item to a person, said so
            assert r["pooled_fallback"] is True and r["threshold"] is None and "fewer than" in r["reason"]
            assert (r["accepted"], r["certified"], r["fallback"]) == (0, False, "review everything")
            continue
        t, acc, upper = brute_recommend(s[m], y[m], 0.1, 0.05)
        if t is None:
            assert r["pooled_fallback"] is True and r["threshold"] is None and r["accepted"] == 0
        else:
            assert (r["threshold"], r["accepted"], r["pooled_fallback"]) == (t, acc, False)
            assert r["error_upper"] == pytest.approx(upper, rel=1e-6)
    gain = d["per_group_gain"]
    assert gain["accepted"] == sum(r["accepted"] for r in rows.values())
    assert gain["accepted_pooled"] == (int((s >= pooled).sum()) if pooled is not None else 0)
    code, out, _ = run(["route", f, "--by", "subject", "--target-error", "0.1", "--reps", "0"], capsys)
    assert code == 0 and "Per group (each group at 95% confidence):" in out and "  tiny: " in out


def test_by_group_flags_agree(tmp_path, capsys) -> None:
    f = write_judge(tmp_path / "g.jsonl", 22, n=600, groups=("a", "b"))
    a = run_json(["route", f, "--by", "subject", "--reps", "0"], capsys)
    b = run_json(["route", f, "--by-group", "--group-key", "subject", "--reps", "0"], capsys)
    assert a["per_group"] == b["per_group"] and len(a["per_group"]) == 2
    s = run_json(["route", f, "--by", "subject", "--simultaneous", "--reps", "0"], capsys)
    assert s["per_group_gain"]["simultaneous"] is True
    assert s["per_group_gain"]["confidence_each"] == pytest.approx(1 - 0.05 / 2)


# ------------------------------------------------------------ bad flags
@pytest.mark.parametrize("extra, message", [
    (["--target-error", "0"], "--target-error: an error rate between 0 and 1 (exclusive, e.g. 0.05), got 0"),
    (["--target-error", "1"], "--target-error: an error rate between 0 and 1 (exclusive, e.g. 0.05), got 1"),
    (["--confidence", "1"], "--confidence: the confidence 1-delta must be strictly between 0 and 1 (e.g. 0.95), got 1"),
    (["--confidence", "0"], "--confidence: the confidence 1-delta must be strictly between 0 and 1"),
    (["--cost-review", "1", "--cost-miss", "-2"], "--cost-miss -2: the cost per missed error must be a non-negative"),
    (["--cost-review", "1", "--cost-miss", "2", "--cost-right", "-1"], "--cost-right -1: the cost of reviewing a right "
                                                                      "answer must be a non-negative number"),
    (["--cost-right", "1"], "--cost-right needs --cost-review or --cost-miss"),
    (["--capacity", "2x"], "--capacity: capacity must be a number of items or a percentage (200 or 20%), got '2x'"),
    (["--capacity", "12.5"], "capacity in items must be a whole number"),
    (["--capacity", "120%"], "--capacity: a share must be between 0% and 100%, got 120%"),
    (["--capacity", "5000"], "--capacity 5000: capacity (5,000 items) is larger than the data (1,000 items)"),
    (["--by", "nosuch"], "--by nosuch: " + str(JA) + ": no line has the field 'nosuch'; per-group thresholds need a "
                         "group field such as subject, task or source"),
    (["--by-group"], "--by-group: " + str(JA) + ": no group field (give --by FIELD or --group-key)"),
    (["--by", "subject", "--group-key", "id"], "--by 'subject' and --group-key 'id' name different fields"),
    (["--report", "out.txt"], "--report out.txt: the file name must end in .html"),
])
def test_bad_decision_flags_exit_2(extra, message, capsys) -> None:
    code, out, err = run(["route", JA, "--reps", "0", *extra], capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert message in err


def test_non_finite_cost_is_refused_by_the_parser() -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "calib", "route", str(JA), "--cost-review", "1", "--cost-miss", "inf"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "argument --cost-miss: expected a finite number, got 'inf'" in r.stderr
    assert "Traceback" not in r.stderr


# ------------------------------------------------------------ compare
def test_compare_target_error_columns_and_paired(capsys) -> None:
    d = run_json(["compare", JA, JB, JC, "--target-error", "0.2", "--reps", "400"], capsys)
    judges = {j["name"]: j for j in d["judges"]}
    for path in (JA, JB, JC):
        s, y, _ = arrays(path)
        t, acc, upper = brute_recommend(s, y, 0.2, 0.05)
        j = judges[path.name.removesuffix(".jsonl")]
        assert (j["threshold"], j["accepted"]) == (t, acc)
        assert j["recommendation"] == decision.recommend(load(path), target=0.2).to_dict()
    assert d["target_error"] == 0.2 and d["confidence"] == 0.95
    pairs = {(p["a"], p["b"]): p for p in d["paired"]}
    assert len(pairs) == 3
    p = pairs[("judge_a_synthetic", "judge_b_synthetic")]
    ids_a = {r["id"]: r for r in rows_of(JA)}
    ids_b = {r["id"]: r for r in rows_of(JB)}
    shared = sorted(set(ids_a) & set(ids_b))
    ta, tb = judges["judge_a_synthetic"]["threshold"], judges["judge_b_synthetic"]["threshold"]

    def accepted(rows: dict[str, Any], t: float | None) -> tuple[int, int]:
        acc = [i for i in shared if t is not None and rows[i]["confidence"] >= t]
        return len(acc), sum(not rows[i]["correct"] for i in acc)

    (aa, ea), (ab, eb) = accepted(ids_a, ta), accepted(ids_b, tb)
    assert (p["shared"], p["accepted_a"], p["accepted_b"], p["errors_a"], p["errors_b"]) == (len(shared), aa, ab, ea, eb)
    assert p["difference"] == aa - ab
    lo, hi = p["difference_ci"]
    assert lo <= aa - ab <= hi
    assert p["better"] == ("judge_b_synthetic" if hi < 0 else "judge_a_synthetic" if lo > 0 else None)


def test_compare_text_has_the_recommendation_columns(capsys) -> None:
    code, out, _ = run(["compare", JA, JB, "--target-error", "0.2", "--cost-review", "1", "--cost-miss", "5",
                        "--reps", "200"], capsys)
    assert code == 0
    for label in ("Recommended threshold", "Accepted unseen", "Error among accepted (bound)",
                  "Cheapest cost per item", "Paired on shared item ids"):
        assert label in out, label
    line_b = next(x for x in out.splitlines() if x.strip().startswith("judge_b_synthetic ") and "98" in x)
    assert "54 of 1,000 (5.4%)" in line_b and "9.3% (≤ 18.5%)" in line_b
    code, md, _ = run(["compare", JA, JB, "--target-error", "0.2", "--reps", "0", "--markdown"], capsys)
    assert code == 0 and "| Recommended threshold |" in md
    code, plain, _ = run(["compare", JA, JB, "--reps", "0"], capsys)
    assert "Recommended threshold" not in plain  # only when asked


def test_compare_bad_target(capsys) -> None:
    code, out, err = run(["compare", JA, JB, "--target-error", "1.5", "--reps", "0"], capsys)
    assert code == 2 and out == "" and "--target-error: an error rate between 0 and 1" in err


# ------------------------------------------------------------ audit and report
def test_audit_carries_the_decision(capsys) -> None:
    code, out, _ = run(["audit", JB, "--target-error", "0.2", "--reps", "0"], capsys)
    assert code == 0
    assert out.index("Threshold decision") < out.index("Figures")
    assert "Recommendation: accept at or above 98 (0-100 scale)" in out
    d = run_json(["audit", JB, "--target-error", "0.2", "--reps", "0"], capsys)
    assert d["decision"]["recommendation"] == decision.recommend(load(JB), target=0.2).to_dict()
    plain = run_json(["audit", JB, "--reps", "0"], capsys)
    assert "decision" not in plain


def test_route_report_html(tmp_path, capsys) -> None:
    f = write_judge(tmp_path / "j.jsonl", 31, groups=("<b>x</b>", "y"))
    out = tmp_path / "r.html"
    code, _, err = run(["route", f, "--by", "subject", "--target-error", "0.1", "--cost-review", "1",
                        "--cost-miss", "5", "--reps", "100", "--report", out], capsys)
    assert code == 0, err
    page = out.read_text()
    d = run_json(["route", f, "--by", "subject", "--target-error", "0.1", "--cost-review", "1", "--cost-miss", "5",
                  "--reps", "100"], capsys)
    rec = d["recommendation"]
    assert "Review threshold" in page and f"{rec['threshold']:g} (1-10 scale)" in page
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "Per-group thresholds" in page and "Expected cost at each threshold" in page
    assert f"expected cost {d['cheapest']['cost']:.3f} per item" in page


def test_route_procedure_flag_reaches_the_certificate(tmp_path, capsys):
    """``calib route --procedure fallback`` (issue 22): a judge whose 100 is worse than its 95
    (2,000 at 100 with 8% wrong, 6,000 at 95 with 2% wrong, 2,000 at 90 with 10% wrong; the
    error among items at 95 or above is 3.5% by construction). The fixed sequence stops at
    100 (its Clopper-Pearson bound for 160 wrong of 2,000 is above 5%); the fallback
    procedure certifies 95 at its share of the level, checked here with scipy's beta."""
    s = np.repeat([100, 95, 90], [2000, 6000, 2000])
    y = np.concatenate([np.arange(2000) % 25 >= 2, np.arange(6000) % 50 != 0, np.arange(2000) % 10 != 0])
    f = tmp_path / "nonmonotone.jsonl"
    f.write_text("".join(json.dumps({"confidence": int(a), "correct": bool(b)}) + "\n" for a, b in zip(s, y, strict=True)))
    assert beta.ppf(0.95, 161, 2000 - 160) > 0.05
    fixed = run_json(["route", f, "--target-error", 0.05, "--reps", 0], capsys)["recommendation"]
    assert fixed["threshold"] is None and fixed["procedure"] == "fixed-sequence"
    fb = run_json(["route", f, "--target-error", 0.05, "--reps", 0, "--procedure", "fallback"],
                  capsys)["recommendation"]
    assert (fb["threshold"], fb["procedure"]) == (95, "fallback")
    with pytest.raises(SystemExit) as exc:
        run(["route", f, "--procedure", "bonferroni"], capsys)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--procedure" in err and "invalid choice: 'bonferroni'" in err
