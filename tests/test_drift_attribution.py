"""Drift attribution (issue 28, item 1): the judge's and the system's parts of the change in
accuracy among accepted, checked by hand on four items, by the exact identity judge + system
= total in every resample, on the anchor set's per-value counts, and on the command line."""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest

from calib.drift.attribution import SCORE_INTERVAL, attribute
from calib.rows import Judgments
from calib.scale import Scale
from tests.cli_run import run, strict

PCT = Scale(0.0, 100.0, "0-100")


def rows(stated, correct, ids=None, text=None) -> Judgments:
    stated = np.asarray(stated, float)
    n = stated.size
    return Judgments(stated=stated, prob=stated / 100, correct=np.asarray(correct, bool), line=np.arange(1, n + 1),
                     item_id=np.array([f"i{i}" for i in range(n)] if ids is None else ids), scale=PCT,
                     text=None if text is None else np.asarray(text, dtype=object))


# four items, threshold 50: i0 same answer, the new judge drops it below 50; i1 same answer, wrong,
# accepted in both; i2 a new answer (right -> wrong); i3 same answer, right in both
OLD = rows([80, 80, 90, 60], [1, 0, 1, 1])
NEW = rows([40, 80, 90, 70], [1, 0, 0, 1])
ANS_OLD, ANS_NEW = np.array(["a", "b", "c", "e"]), np.array(["a", "b", "d", "e"])


def by_hand() -> tuple[F, F, F]:
    a_old = F(3, 4)            # all four accepted, three right
    a_new = F(1, 3)            # i1, i2, i3 accepted; i3 right
    a1 = F(2, 3)               # new rows on i0, i1, i3; old row on i2: i1, i2, i3 accepted, i2 and i3 right
    a2 = F(2, 4)               # old rows on i0, i1, i3; new row on i2: all accepted, i0 and i3 right
    judge = ((a1 - a_old) + (a_new - a2)) / 2
    system = ((a2 - a_old) + (a_new - a1)) / 2
    return judge, system, a_new - a_old


def test_four_items_by_hand():
    a = attribute(OLD, NEW, 50.0, answers_old=ANS_OLD, answers_new=ANS_NEW, reps=0)
    judge, system, total = by_hand()
    assert (judge, system) == (F(-1, 8), F(-7, 24))
    assert a.judge.value == pytest.approx(float(judge))
    assert a.system.value == pytest.approx(float(system))
    assert a.total.value == pytest.approx(float(total))
    assert (a.shared_items, a.same_answer, a.answer_match) == (4, 3, "answer text")
    assert a.old_answers_new_judge == pytest.approx(2 / 3)
    assert a.new_answers_old_judge == pytest.approx(1 / 2)


def test_outcome_proxy_reads_a_flipped_outcome_as_a_new_answer():
    a = attribute(OLD, NEW, 50.0, reps=0)  # no answer text: i2's outcome flipped, the rest kept theirs
    judge, system, _ = by_hand()
    assert a.answer_match == "outcome" and a.same_answer == 3
    assert a.judge.value == pytest.approx(float(judge)) and a.system.value == pytest.approx(float(system))
    assert any("outcome" in n for n in a.notes)


def test_matched_by_question_text_without_ids():
    q = ["q a", "q b", "q c", "q d"]
    old = rows([80, 80, 90, 60], [1, 0, 1, 1], ids=[""] * 4, text=q)
    new = rows([40, 80, 90, 70][::-1], [1, 0, 0, 1][::-1], ids=[""] * 4, text=q[::-1])  # order shuffled
    a = attribute(old, new, 50.0, reps=0)
    assert a.matched_by == "question text"
    assert a.judge.value == pytest.approx(float(by_hand()[0]))


def test_no_shared_item_gives_none():
    assert attribute(rows([80], [1], ids=["x"]), rows([80], [1], ids=["y"]), 50.0, reps=0) is None


def _planted(rng, n, judge_change, system_change):
    q = rng.beta(6, 2, n)
    yo = rng.random(n) < q
    moved = (rng.random(n) < 0.3) if system_change else np.zeros(n, bool)
    yn = np.where(moved, rng.random(n) < q - 0.25, yo)

    def judge(y, changed):
        z = (1.8 if changed else 1.0) + (0.6 if changed else 1.0) * (2 * y - 1) + rng.normal(0, 1, n)
        return np.round(100 / (1 + np.exp(-z)) / 5) * 5

    return rows(judge(yo, False), yo), rows(judge(yn, judge_change), yn), moved.astype(int).astype(str)


def test_parts_add_up_and_no_answer_change_means_no_system_part():
    rng = np.random.default_rng(3)
    old, new, moved = _planted(rng, 400, True, False)
    a = attribute(old, new, 80.0, answers_old=np.zeros(400, int).astype(str), answers_new=moved, reps=300)
    assert a.system.value == 0.0 and a.system.ci == (0.0, 0.0)
    assert a.judge.value == pytest.approx(a.total.value)
    assert a.judge.ci[0] <= a.judge.value <= a.judge.ci[1]
    old, new, moved = _planted(rng, 400, True, True)
    a = attribute(old, new, 80.0, answers_old=np.zeros(400, int).astype(str), answers_new=moved, reps=300)
    assert a.judge.value + a.system.value == pytest.approx(a.total.value)
    assert a.accuracy_new - a.accuracy_old == pytest.approx(a.total.value)


def test_planted_judge_change_is_attributed_to_the_judge():
    """Fixed-seed miniature of bench/sim_judge_change.py (a): the judge-only change's interval
    excludes 0 for the judge part; with both changes, the system part's interval excludes 0 too."""
    rng = np.random.default_rng(5)
    old, new, moved = _planted(rng, 1500, True, True)
    a = attribute(old, new, 80.0, answers_old=np.zeros(1500, int).astype(str), answers_new=moved, reps=400)
    assert a.judge.ci[1] < 0 and a.system.ci[1] < 0


def test_anchor_hit_rates_counted_by_hand():
    # 30 anchor items stating 90 in both runs: right 27 then, 12 now; 20 stating 60: 12 then, 12 now
    y_old = np.r_[np.ones(27), np.zeros(3), np.ones(12), np.zeros(8)]
    y_new = np.r_[np.ones(12), np.zeros(18), np.ones(12), np.zeros(8)]
    st = np.r_[np.full(30, 90.0), np.full(20, 60.0)]
    same = np.array(["x"] * 50)
    a = attribute(rows(st, y_old), rows(st, y_new), 50.0, answers_old=same, answers_new=same, reps=0)
    assert a.anchor_items == 50
    v = {x.value: x for x in a.anchors}
    assert (v[90.0].n_old, v[90.0].right_old, v[90.0].n_new, v[90.0].right_new) == (30, 27, 30, 12)
    assert (v[60.0].right_old, v[60.0].right_new) == (12, 12)
    assert v[90.0].moved and not v[60.0].moved and a.meaning_changed
    assert v[60.0].p == pytest.approx(1.0)
    d90 = v[90.0].diff  # 12/30 - 27/30 with its score interval, which excludes 0 (moved)
    assert d90.value == pytest.approx(-0.5) and d90.method == SCORE_INTERVAL and d90.contains(-0.5)
    assert not d90.contains(0.0)


def _write(path: Path, stated, correct, answers) -> Path:
    with path.open("w") as f:
        for i, (s, c, ans) in enumerate(zip(stated, correct, answers, strict=True)):
            f.write(json.dumps({"id": f"q{i}", "confidence": float(s) / 100, "correct": bool(c), "pred": ans}) + "\n")
    return path


def test_cli_drift_json_has_the_attribution(tmp_path, capsys):
    old = _write(tmp_path / "old.jsonl", [80, 80, 90, 60], [1, 0, 1, 1], ["a", "b", "c", "e"])
    new = _write(tmp_path / "new.jsonl", [40, 80, 90, 70], [1, 0, 0, 1], ["a", "b", "d", "e"])
    code, out, err = run(["drift", old, new, "--threshold", "0.5", "--answer-key", "pred", "--reps", "50",
                          "--json"], capsys)
    assert code == 0, err
    a = strict(out)["attribution"]
    assert set(a) >= {"judge", "system", "shared_items"}
    assert set(a["judge"]) == {"estimate", "ci"} and set(a["system"]) == {"estimate", "ci"}
    judge, system, _ = by_hand()
    assert a["judge"]["estimate"] == pytest.approx(float(judge))
    assert a["system"]["estimate"] == pytest.approx(float(system))
    assert a["shared_items"] == 4 and a["answer_match"] == "answer text"
    code, out, _ = run(["drift", old, new, "--threshold", "0.5", "--answer-key", "pred", "--reps", "50"], capsys)
    assert code == 0 and "come from the judge" in out


def test_cli_answer_key_missing_is_named(tmp_path, capsys):
    old = _write(tmp_path / "old.jsonl", [80, 80, 90, 60], [1, 0, 1, 1], ["a", "b", "c", "e"])
    new = _write(tmp_path / "new.jsonl", [40, 80, 90, 70], [1, 0, 0, 1], ["a", "b", "d", "e"])
    code, _, err = run(["drift", old, new, "--answer-key", "answer"], capsys)
    assert code == 2 and "line 1 has no field 'answer'" in err and "Traceback" not in err


def test_without_a_threshold_every_item_is_accepted_and_the_judge_cannot_move_accuracy():
    a = attribute(OLD, NEW, None, answers_old=ANS_OLD, answers_new=ANS_NEW, reps=0)
    assert a.accuracy_old == pytest.approx(3 / 4) and a.accuracy_new == pytest.approx(2 / 4)
    assert a.judge.value == pytest.approx(0.0) and a.system.value == pytest.approx(-1 / 4)


def test_cli_anchor_set_from_a_file(tmp_path, capsys):
    rng = np.random.default_rng(8)
    st = rng.choice([60, 90], 80)
    old = _write(tmp_path / "old.jsonl", st, rng.random(80) < 0.8, ["a"] * 80)
    new = _write(tmp_path / "new.jsonl", st, rng.random(80) < 0.8, ["a"] * 80)
    ids = tmp_path / "anchors.txt"
    ids.write_text("q0\nq1\n\nq2\nq3\nq4\nnot-an-item\n")
    d = strict(run(["drift", old, new, "--anchors", ids, "--reps", "20", "--json"], capsys)[1])["attribution"]
    assert d["anchor_items"] == 5
    assert sum(v["n_old"] for v in d["anchors"]) == 5  # the hit rates are counted on those five only
    assert any("5 of 6 ids" in n for n in d["notes"])
    code, _, err = run(["drift", old, new, "--anchors", tmp_path / "none.txt"], capsys)
    assert code == 2 and "--anchors" in err and "no such file" in err


def test_answer_key_needs_json_lines_and_undefined_accuracy_is_said(tmp_path, capsys):
    js = tmp_path / "old.json"  # one JSON array of records: read as rows, but not JSON Lines
    js.write_text(json.dumps([{"id": f"q{i}", "confidence": 0.9, "correct": True, "pred": "a"} for i in range(3)]))
    code, _, err = run(["drift", js, js, "--answer-key", "pred"], capsys)
    assert code == 2 and "JSON Lines" in err
    a = attribute(rows([90, 90, 90], [1, 1, 0]), rows([10, 10, 10], [1, 1, 0]), 50.0, reps=20)
    assert a.accuracy_new is None and a.judge.value is None
    assert any("accepts none" in n for n in a.notes)


def test_clusters_coarser_than_items_are_resampled_whole():
    old = rows([80, 80, 90, 60], [1, 0, 1, 1])
    new = rows([40, 80, 90, 70], [1, 0, 0, 1])
    from dataclasses import replace

    a = attribute(replace(old, cluster=np.array(["c1", "c1", "c2", "c2"])), new, 50.0, reps=200,
                  answers_old=ANS_OLD, answers_new=ANS_NEW)
    assert any("resamples the 2 groups" in n for n in a.notes)
    assert a.judge.value == pytest.approx(float(by_hand()[0]))  # the point estimate does not move
    # two groups resampled whole: each resample is {c1, c1}, {c2, c2} or {c1, c2}; by hand, the judge
    # part of {c1, c1} is that of items i0, i1 alone: old 1/2, new 0/1, A1 = 0/1, A2 = 1/2 -> judge -1/2
    assert a.judge.ci[0] == pytest.approx(-0.5)
    a = attribute(replace(old, cluster=np.array(["i0", "i1", "i2", "i3"])), new, 50.0, reps=0)
    assert not any("groups" in n for n in a.notes)


def test_a_widened_part_says_why_in_its_estimate():
    """A part whose percentile interval misses its estimate is widened to hold it (said in the
    notes); the :class:`~calib.estimates.Estimate` carries the reason too, so it never excludes
    its own estimate silently. Draws all above the estimate: the lower end becomes it."""
    from calib.drift.attribution import _part

    notes: list[str] = []
    e = _part(0.5, np.array([0.6, 0.7, 0.8] * 10), 0.9, "judge", notes)
    assert e.value == 0.5 and e.lo == 0.5 and e.hi == pytest.approx(0.8) and e.level == 0.9
    assert "widened" in e.note and not e.excludes_own_estimate and len(notes) == 1
    inside = _part(0.7, np.array([0.6, 0.7, 0.8] * 10), 0.9, "judge", notes)
    assert inside.note == "" and inside.ci == (pytest.approx(0.6), pytest.approx(0.8)) and len(notes) == 1
