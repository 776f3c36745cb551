"""Routing at review thresholds: counts against a per-row loop, intervals against a direct bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calib import maps, routing, thresholds
from calib.bootstrap import resample_counts
from calib.errors import CalibError
from calib.rows import Judgments
from calib.scale import Scale
from calib.table import from_counts, from_judgments

S100 = Scale(0.0, 100.0, "0-100")


def random_rows(seed, n=500, values=(40, 60, 70, 80, 85, 90, 95, 100)):
    rng = np.random.default_rng(seed)
    s = rng.choice(values, size=n).astype(float)
    y = rng.random(n) < np.clip(s / 100 - 0.15, 0, 1)
    return Judgments(
        stated=s, prob=s / 100, correct=y, line=np.arange(1, n + 1),
        item_id=np.array([f"q{i}" for i in range(n)]), scale=S100,
        group=np.where(np.arange(n) % 3 == 0, "math", "law"), text=np.array([f"question {i}" for i in range(n)]),
    )


def loop(score, y, lower, upper=None):
    """The routing rule written out per row."""
    upper = lower if upper is None else upper
    out = dict(to_person=0, middle=0, accepted=0, accepted_correct=0, errors_caught=0, reviewed_needlessly=0,
               middle_correct=0)
    for s, ok in zip(score, y, strict=True):
        if s < lower:
            out["to_person"] += 1
            out["errors_caught" if not ok else "reviewed_needlessly"] += 1
        elif s >= upper:
            out["accepted"] += 1
            out["accepted_correct"] += int(ok)
        else:
            out["middle"] += 1
            out["middle_correct"] += int(ok)
    return out


@pytest.mark.parametrize(("lower", "upper"), [(80, None), (85, 95), (0, None), (101, None), (90, 90), (62.5, 99.9)])
def test_counts_match_a_row_loop(lower, upper):
    r = random_rows(1)
    res = routing.route(routing.basis(from_judgments(r)), lower, upper)
    ref = loop(r.stated, r.correct, lower, upper)
    for k, v in ref.items():
        assert getattr(res, k) == v, k
    assert res.errors_slipping == ref["accepted"] - ref["accepted_correct"]
    if ref["accepted"]:
        assert res.accuracy_accepted == pytest.approx(ref["accepted_correct"] / ref["accepted"])
        assert res.risk == pytest.approx(1 - res.accuracy_accepted)
    else:
        assert res.accuracy_accepted is None and res.risk is None


def test_a_threshold_equal_to_a_stated_value_accepts_it():
    t = from_counts(np.array([80.0, 90.0]), np.array([10, 10]), np.array([5, 9]), scale=S100)
    res = routing.route(routing.basis(t), 90)
    assert res.to_person == 10 and res.accepted == 10 and res.accepted_correct == 9


def test_calibrated_thresholds_match_a_row_loop():
    r = random_rows(2)
    m = maps.fit_map(from_judgments(r), "platt")
    q = m.apply(r.stated)
    b = routing.basis(from_judgments(r), calibration=m)
    assert b.on == "calibrated"
    for lo in (0.3, float(np.median(q)), 0.75):
        res = routing.route(b, lo)
        ref = loop(q, r.correct, lo)
        assert res.to_person == ref["to_person"] and res.accepted_correct == ref["accepted_correct"]
    iso = maps.fit_map(from_judgments(r), "isotonic")
    b = routing.basis(from_judgments(r), calibration=iso)
    assert b.score.size == np.unique(iso.apply(r.stated)).size  # values with one probability merge


def test_costs():
    r = random_rows(3)
    res = routing.route(routing.basis(from_judgments(r)), 85, cost_review=2.0, cost_miss=7.5)
    assert res.cost_total == pytest.approx(2.0 * res.to_person + 7.5 * res.errors_slipping)
    assert routing.route(routing.basis(from_judgments(r)), 85).cost_total is None
    with pytest.raises(CalibError, match="cost per review must be a non-negative number"):
        routing.route(routing.basis(from_judgments(r)), 85, cost_review=-1)


def test_intervals_match_a_direct_bootstrap():
    r = random_rows(4)
    t = from_judgments(r)
    reps, seed = 400, 11
    b = routing.basis(t, reps=reps, seed=seed)
    res = routing.route(b, 85, 95, cost_review=1, cost_miss=4, level=0.9)
    n_b, k_b = resample_counts(t.pooled_over_groups(), reps, seed)
    v = t.pooled_over_groups().value
    low, high = v < 85, v >= 95
    person = n_b[:, low].sum(1)
    acc = n_b[:, high].sum(1)
    acc_k = k_b[:, high].sum(1)
    expect = {
        "to_person": person, "accepted": acc, "accuracy_accepted": acc_k / acc,
        "errors_slipping": acc - acc_k, "errors_caught": person - k_b[:, low].sum(1),
        "coverage": acc / n_b.sum(1), "cost_total": person + 4 * (acc - acc_k),
    }
    for name, draws in expect.items():
        lo, hi = np.quantile(draws, [0.05, 0.95])
        e = res.estimates[name]
        assert e.lo == pytest.approx(lo) and e.hi == pytest.approx(hi), name
        assert e.value == getattr(res, name) and e.level == 0.9 and e.method == "percentile bootstrap", name
    assert routing.route(routing.basis(t), 85).estimates == {}


def test_sweep_and_lowest_threshold_match_brute_force():
    r = random_rows(5, n=800)
    b = routing.basis(from_judgments(r))
    s = routing.sweep(b)
    for i, t in enumerate(s.threshold):
        acc = r.stated >= t
        assert s.accepted[i] == acc.sum() and s.coverage[i] == pytest.approx(acc.mean())
        assert s.risk[i] == pytest.approx(1 - r.correct[acc].mean())
    assert s.coverage[0] == 1 and np.all(np.diff(s.coverage) < 0)
    for target in (0.05, 0.15, 0.2, 0.3):
        ok = [t for t in s.threshold if 1 - r.correct[r.stated >= t].mean() <= target]
        choice = routing.lowest_threshold(b, target)
        if ok:
            assert choice.threshold == min(ok) and "accept items at or above" in choice.message
        else:
            assert choice.threshold is None and "no threshold keeps the error rate" in choice.message
    strict = routing.lowest_threshold(b, 0.2, bound="wilson")
    loose = routing.lowest_threshold(b, 0.2)
    assert strict.threshold is None or loose.threshold is None or strict.threshold >= loose.threshold


def test_review_queue_lists_the_rows_below_the_threshold():
    r = random_rows(6)
    q = routing.review_queue(r, 80)
    assert list(q.columns) == ["line", "id", "stated", "prob", "correct", "group", "text"]
    below = np.flatnonzero(r.stated < 80)
    assert sorted(q["line"]) == sorted(r.line[below]) and len(q) == below.size
    assert np.all(np.diff(q["stated"]) >= 0)
    row = q.iloc[0]
    i = int(row["line"]) - 1
    assert row["id"] == r.item_id[i] and row["group"] == r.group[i] and row["text"] == r.text[i]
    m = maps.fit_map(from_judgments(r), "platt")
    qc = routing.review_queue(r, 0.6, calibration=m)
    assert len(qc) == int(np.sum(m.apply(r.stated) < 0.6)) and np.all(qc["prob"] < 0.6)


def test_bad_thresholds_are_refused_with_a_reason():
    b = routing.basis(from_judgments(random_rows(7)))
    with pytest.raises(CalibError, match=r"upper threshold \(80\) must not be below the lower one \(90\)"):
        routing.route(b, 90, 80)
    with pytest.raises(CalibError, match="finite number"):
        routing.route(b, float("nan"))
    with pytest.raises(CalibError, match="target error rate"):
        routing.lowest_threshold(b, 1.5)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 100), st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=25),
    st.floats(-10, 110), st.floats(0, 50),
)
def test_routing_counts_add_up(cells, lower, width):
    v = np.array([c[0] for c in cells], float)
    k = np.array([c[1] for c in cells])
    n = k + np.array([c[2] for c in cells])
    if n.sum() == 0:
        return
    t = from_counts(v, n, k, scale=S100)
    res = routing.route(routing.basis(t), lower, lower + width)
    assert res.to_person + res.middle + res.accepted == res.total == n.sum()
    assert res.errors_caught + res.reviewed_needlessly == res.to_person
    assert res.accepted_correct + res.errors_slipping == res.accepted
    assert res.reviewed_needlessly + res.middle_correct + res.accepted_correct == k.sum()


def test_queue_csv_neutralises_spreadsheet_formulas(tmp_path):
    """Ids and question text starting like a formula are written as inert text,
    by the library the CLI's --queue and the dashboard's download both use."""
    import csv
    import io
    import json as _json

    from calib.loading import load
    from calib.routing import queue_to_csv, review_queue

    lines = [
        {"id": "=HYPERLINK(\"http://203.0.113.1\",\"x\")", "confidence": 50, "correct": False, "question": "+1+1"},
        {"id": "@SUM(A1)", "confidence": 60, "correct": True, "question": "-2"},
        {"id": "plain", "confidence": 95, "correct": True, "question": "fine"},
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(_json.dumps(x) for x in lines) + "\n")
    ds = load(path)
    out = list(csv.DictReader(io.StringIO(queue_to_csv(review_queue(ds.rows, 90)).decode())))
    assert [r["id"] for r in out] == ["'=HYPERLINK(\"http://203.0.113.1\",\"x\")", "'@SUM(A1)"]
    assert [r["text"] for r in out] == ["'+1+1", "'-2"]


def test_review_queue_counts_float_noise_as_the_table_does() -> None:
    from calib.options import softmax
    from calib.rows import Judgments
    from calib.scale import PROBABILITY
    from calib.table import from_judgments

    # top probability 0.4 in real arithmetic, reached by different logit vectors
    one = np.array([np.log(2), 0, 0, 0])
    logits = np.array([one, one - 32.5, one + 100] * 10)
    top = softmax(logits).max(axis=1)
    assert top.min() < 0.4 < top.max()  # noise on both sides of 0.4
    y = np.arange(top.size) % 3 == 0
    rows = Judgments(stated=top, prob=top.copy(), correct=y, line=np.arange(1, top.size + 1),
                     item_id=np.array([f"i{i}" for i in range(top.size)]), scale=PROBABILITY)
    b = routing.basis(from_judgments(rows))
    for lower, sent in ((0.4, 0), (0.41, top.size)):
        assert routing.route(b, lower).to_person == sent
        assert len(routing.review_queue(rows, lower)) == sent


# ------------------------------------------------------------------ slider positions
def _routed(used, t):
    """Which used values go to a person at threshold ``t``, written out (``< t``)."""
    return frozenset(v for v in used if v < t)


@pytest.mark.parametrize("used", [
    (60.0, 70.0, 80.0, 90.0, 95.0, 100.0),  # the six-value judge: 93 routed as 95
    (80.0, 90.0, 95.0),  # the top of the scale above every value: "everything to a person"
    (0.0, 12.5, 50.0, 99.5),
    (100.0,),
    tuple(float(x) for x in range(101)),
])
def test_slider_positions_are_the_distinct_routings(used):
    """Issue 22: on a six-value scale the slider had 101 positions, several routing alike.
    The positions are exactly the distinct routings a threshold on [0, 100] can give (found
    here by trying every threshold on a 0.25 grid), one position each, and any threshold
    snaps to the position that routes as it does."""
    where = thresholds.positions(np.array(used), 100.0)
    grid = np.arange(0.0, 100.0 + 1e-9, 0.25)
    reachable = {_routed(used, t) for t in grid}
    at_positions = [_routed(used, p) for p in where]
    assert len(set(at_positions)) == len(where)  # no two positions route alike
    assert set(at_positions) == reachable  # and every routing has its position
    assert all(0.0 <= p <= 100.0 for p in where)
    for t in grid:
        assert _routed(used, thresholds.snap_position(where, t)) == _routed(used, t)


def test_key_presses_on_the_six_value_scale_move_to_the_next_routing():
    where = thresholds.positions(np.array([60.0, 70.0, 80.0, 90.0, 95.0, 100.0]), 100.0)
    assert where == (60.0, 70.0, 80.0, 90.0, 95.0, 100.0)
    assert thresholds.snap_position(where, 93.0) == 95.0 and thresholds.snap_position(where, 80.0) == 80.0
    start = where.index(80.0)
    assert [where[min(start + k, len(where) - 1)] for k in (1, 2, 3, 15)] == [90.0, 95.0, 100.0, 100.0]


def test_a_continuous_score_keeps_quantile_positions_with_its_extras():
    u = np.linspace(0.5, 1.0, 3000)
    where = thresholds.positions(u, 1.0, (0.8, 0.9, 0.91234))
    assert {0.8, 0.9, 0.91234} <= set(where)
    assert len(where) <= thresholds.MAX_POSITIONS + 3
    assert set(where) - {0.8, 0.9, 0.91234} <= set(u.tolist())


def test_equal_thresholds_make_no_band_in_the_engine_the_view_and_the_widgets():
    """Issue 23: one rule for two thresholds. [t, t) holds no item, so an upper threshold
    equal to the lower one routes as none: the engine reports no band (it used to keep
    upper = lower while the dashboard dropped it), the link's view drops it, and the
    widgets' current thresholds have no upper one."""
    from calib.hosting import view as views
    from dashboard.threshold import ThresholdAxis, current_thresholds

    t = from_counts(np.array([60.0, 70.0, 80.0]), np.array([10, 10, 10]), np.array([4, 7, 9]), scale=S100)
    b = routing.basis(t)
    same, alone = routing.route(b, 70, 70), routing.route(b, 70)
    assert same.upper is None
    assert (same.to_person, same.middle, same.accepted) == (alone.to_person, alone.middle, alone.accepted) == (10, 0, 20)
    with pytest.raises(CalibError, match="must not be below"):
        routing.route(b, 70, 60)
    v, notes = views.validate(views.View(lo=70.0, hi=70.0))
    assert v.hi is None and any("upper threshold must be above" in n for n in notes)
    axis = ThresholdAxis("stated", 0.0, 100.0, 1.0, 60.0, 80.0, "", (60.0, 70.0, 80.0, 100.0), False)
    assert current_thresholds(views.View(lo=70.0, hi=70.0), axis) == (70.0, None)
    assert current_thresholds(views.View(lo=70.0, hi=80.0), axis) == (70.0, 80.0)
