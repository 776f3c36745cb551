"""Who moved, on the Drift page (issue 28, item 1), driven headless with Streamlit's AppTest:
the two runs of tests/data/judge_change/ (400 shared items; the system changed some answers,
the judge moved its scale on the others) are uploaded; the page's judge / system / total
parts and the anchor items' hit rates per stated value are recomputed here from the JSON
lines with plain Python (the Shapley decomposition of the module docstring of
calib.drift.attribution, written out by hand)."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import ROOT, app, ok

DATA = ROOT / "tests" / "data" / "judge_change"
THRESHOLD = 80.0  # the Drift page's default review threshold on a 0-100 judge (probability 0.8)

pytestmark = pytest.mark.usefixtures("fresh_caches")


def rows(name: str) -> dict[str, tuple[float, bool]]:
    out = {}
    for line in (DATA / name).read_text().splitlines():
        r = json.loads(line)
        out[r["id"]] = (float(r["confidence"]), bool(r["correct"]))
    return out


def by_hand() -> tuple[dict[str, float], dict[float, tuple[int, int, int, int]], int]:
    """The three parts (judge, system, total) of the change in accuracy among accepted, the
    anchor items' (answers, right) per stated value then and now, and the anchor count."""
    old, new = rows("drift_old.jsonl"), rows("drift_new.jsonl")
    same = {i for i in old if old[i][1] == new[i][1]}  # no answer text: the outcome stands for it

    def acc(pick):  # pick(item) -> the row judging it
        accepted = [pick(i) for i in old if pick(i)[0] >= THRESHOLD]
        return sum(c for _, c in accepted) / len(accepted)

    a_old, a_new = acc(old.get), acc(new.get)
    a1 = acc(lambda i: new[i] if i in same else old[i])  # old answers, new judge
    a2 = acc(lambda i: old[i] if i in same else new[i])  # new answers, old judge
    parts = {"judge": ((a1 - a_old) + (a_new - a2)) / 2, "system": ((a2 - a_old) + (a_new - a1)) / 2,
             "total": a_new - a_old}
    per: dict[float, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for i in same:
        per[old[i][0]][0] += 1
        per[old[i][0]][1] += old[i][1]
        per[new[i][0]][2] += 1
        per[new[i][0]][3] += new[i][1]
    both = {v: tuple(c) for v, c in per.items() if c[0] and c[2]}
    return parts, both, len(same)


def drift_page() -> AppTest:
    at = app()
    at.query_params.update({"reps": "200"})
    ok(at.run())
    at.file_uploader[0].set_value([(n, (DATA / n).read_bytes(), "application/octet-stream")
                                   for n in ("drift_old.jsonl", "drift_new.jsonl")])
    ok(at.run())
    at.switch_page("pages/7_Drift.py")
    return ok(at.run())


def test_who_moved_table_equals_the_decomposition_by_hand():
    at = drift_page()
    assert not at.error, [e.value for e in at.error]
    parts, anchors, n_anchor = by_hand()
    assert parts["judge"] < -0.01 and parts["system"] < -0.05  # both planted changes show
    df = next(d.value for d in at.dataframe if "part" in d.value.columns)
    assert list(df["change in accuracy among accepted"]) == [f"{100 * parts[k]:+.1f} pts"
                                                            for k in ("judge", "system", "total")]
    for interval in df.iloc[:, 2]:  # every part carries an interval
        lo, hi = (float(x) for x in interval.strip("[]").split(","))
        assert lo <= hi
    m = {x.label: x.value for x in at.main.metric}
    assert m["Shared items"] == "400" and m["Anchor items"] == f"{n_anchor:,}"
    table = next(d.value for d in at.dataframe if "hit rate then" in d.value.columns)
    want = {f"{v:g}": (f"{c[0]:,}", f"{c[2]:,}", f"{100 * c[1] / c[0]:.1f}%", f"{100 * c[3] / c[2]:.1f}%")
            for v, c in anchors.items()}
    shown = {r["stated"]: (r["answers then"], r["answers now"], r["hit rate then"], r["hit rate now"])
             for _, r in table.iterrows()}
    assert shown == want


def test_values_used_in_one_run_only_are_named():
    at = drift_page()
    old = {v for v, _ in rows("drift_old.jsonl").values()}
    new = {v for v, _ in rows("drift_new.jsonl").values()}
    assert old - new == {60.0} and new - old == {98.0}  # what the generator planted
    texts = "\n".join(t.value for t in at.text)
    n60 = sum(1 for v, _ in rows("drift_old.jsonl").values() if v == 60)
    n98 = sum(1 for v, _ in rows("drift_new.jsonl").values() if v == 98)
    assert f"stated 60: {n60:,} answers" in texts and "in the old run, none in the new: disappeared" in texts
    assert f"stated 98: {n98:,} answers" in texts and "in the new run, none in the old: appeared" in texts


def test_a_fixed_anchor_set_typed_on_the_page():
    """Ids typed as the anchor set: the anchor table counts exactly those shared items, whether
    or not their answer changed (ids the runs do not share are counted apart)."""
    at = drift_page()
    old, new = rows("drift_old.jsonl"), rows("drift_new.jsonl")
    given = [f"q{i:03d}" for i in range(0, 400, 2)]  # every other item
    at.text_area(key="drift_anchors").set_value("\n".join(given + ["", "  not-an-item  "]))
    ok(at.run())
    m = {x.label: x.value for x in at.main.metric}
    assert m["Anchor items"] == "200"
    per: dict[float, list[int]] = defaultdict(lambda: [0, 0])
    for i in given:
        per[old[i][0]][0] += 1
        per[new[i][0]][1] += 1
    want = {f"{v:g}": (f"{c[0]:,}", f"{c[1]:,}") for v, c in per.items() if c[0] and c[1]}
    table = next(d.value for d in at.dataframe if "hit rate then" in d.value.columns)
    assert {r["stated"]: (r["answers then"], r["answers now"]) for _, r in table.iterrows()} == want
    texts = "\n".join(t.value for t in at.text)
    assert "Anchor set given: 200 of 201" in texts


def test_answers_compared_by_a_field_of_both_runs():
    """The answer field chosen on the page (calib drift --answer-key): an item is the same
    answer when its answer text is, whatever its outcome; the parts equal the decomposition
    by hand with that notion of "same", and differ from the outcome-based one."""
    import random

    rnd = random.Random(7)
    old_lines, new_lines, old, new, same = [], [], {}, {}, set()
    for i in range(300):
        ans_old = f"a{i}"
        keep = rnd.random() < 0.6
        ans_new = ans_old if keep else f"b{i}"
        c_old = rnd.choice([60, 70, 80, 90, 95])
        r_old = rnd.random() < c_old / 100
        c_new = min(99, c_old + rnd.choice([0, 5])) if keep else rnd.choice([60, 70, 80, 90, 95])
        r_new = r_old if keep else rnd.random() < 0.5  # a changed answer may keep its outcome
        old[f"q{i}"], new[f"q{i}"] = (float(c_old), r_old), (float(c_new), r_new)
        if keep:
            same.add(f"q{i}")
        old_lines.append(json.dumps({"id": f"q{i}", "confidence": c_old, "correct": r_old, "answer": ans_old}))
        new_lines.append(json.dumps({"id": f"q{i}", "confidence": c_new, "correct": r_new, "answer": ans_new}))

    def acc(pick):
        accepted = [pick(i) for i in old if pick(i)[0] >= THRESHOLD]
        return sum(c for _, c in accepted) / len(accepted)

    a_old, a_new = acc(old.get), acc(new.get)
    a1 = acc(lambda i: new[i] if i in same else old[i])
    a2 = acc(lambda i: old[i] if i in same else new[i])
    judge = ((a1 - a_old) + (a_new - a2)) / 2
    by_outcome = {i for i in old if old[i][1] == new[i][1]}
    assert by_outcome != same  # the two notions differ on this data

    at = app()
    at.query_params.update({"reps": "200"})
    ok(at.run())
    at.file_uploader[0].set_value([("ans_old.jsonl", "\n".join(old_lines).encode(), "application/octet-stream"),
                                   ("ans_new.jsonl", "\n".join(new_lines).encode(), "application/octet-stream")])
    ok(at.run())
    at.switch_page("pages/7_Drift.py")
    ok(at.run())
    box = at.selectbox(key="drift_answer_key")
    assert "answer" in box.options and "correct" not in box.options
    box.set_value("answer")
    ok(at.run())
    assert not at.error, [e.value for e in at.error]
    df = next(d.value for d in at.dataframe if "part" in d.value.columns)
    assert df["change in accuracy among accepted"].iloc[0] == f"{100 * judge:+.1f} pts"
    m = {x.label: x.value for x in at.main.metric}
    assert m["Anchor items"] == f"{len(same):,}"
