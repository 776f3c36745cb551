"""The owner's Review page shows what the labels say (issue 25, items 6 and 7), driven
headless with AppTest on a fixed labels file of three reviewers: the agreement table's
figures equal the engine's (:func:`calib.labels.report.review_report`, whose statistics
are checked against statsmodels and krippendorff in tests/test_agreement.py), and the
confusion matrix, sensitivity, specificity, accuracy with their Wilson intervals and each
reviewer's agreement with the final labels equal a computation written here from the
file and the labels alone (the final-label rule by hand, the Wilson interval by its
formula)."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest

from calib import settings
from calib.labels.records import read_labels
from calib.labels.report import review_report
from calib.loading import load
from tests.apptest import clear_caches, ok
from tests.test_app_review import DATA, LO, ROWS, owner_share

T = "2026-03-04T05:06:{:02d}Z"


def labels_file() -> bytes:
    """Ann labels every item, Bob the even ones, Cat every third; each errs on a fixed
    pattern; Cat is unsure of one item."""
    lines = []
    for i, r in enumerate(ROWS):
        kind = "queue" if r["confidence"] < LO else "audit"
        for who, takes, flips in (("ann", True, i % 15 == 7), ("bob", i % 2 == 0, i % 14 == 10),
                                  ("cat", i % 3 == 0, i == 3)):
            if takes:
                lines.append({"item": r["id"], "correct": r["correct"] != flips, "reviewer": who,
                              "time": T.format(i), "kind": kind, "dataset": "", "note": "",
                              "unsure": who == "cat" and i == 9})
    return "".join(json.dumps(x) + "\n" for x in lines).encode()


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    for var in ("CALIB_PASSWORD", "CALIB_AUTH", "CALIB_ALLOWED_DOMAINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CALIB_DATA_DIR", str(tmp_path / "data"))
    clear_caches()
    yield
    clear_caches()


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return mid - half, mid + half


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def table(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_the_owners_page_shows_agreement_the_file_against_final_labels_and_the_reviewers_error(tmp_path):
    owner, _ = owner_share()
    owner.sidebar.toggle(key="calib_review_on").set_value(True)
    ok(owner.run())
    owner.switch_page("pages/8_Review.py")
    ok(owner.run())
    data = labels_file()
    owner.file_uploader[0].set_value(("labels.jsonl", data, "application/json"))
    ok(owner.run())
    assert not owner.warning, [w.value for w in owner.warning]
    labels, _ = read_labels(data, "labels.jsonl")
    rows = load("judge.jsonl", DATA).rows
    eng = review_report(labels, rows, threshold=LO, target=settings.DEFAULT_TARGET, reps=settings.REPS,
                        seed=0, level=0.95, dataset="")
    # the agreement table equals the engine's figures, written at two decimals (percent: one)
    agree = table(owner, "statistic").set_index("statistic")
    for name, key in (("Fleiss' kappa", "fleiss_kappa"), ("Krippendorff's alpha (nominal)", "krippendorff_alpha")):
        s = getattr(eng.agreement, key)
        assert agree.loc[name, "estimate"] == f"{s.value:.2f}"
        assert agree.loc[name, "interval"] == f"95% [{s.lo:.2f}, {s.hi:.2f}]"
    cohen = agree.loc["Cohen's kappa (two reviewers)"]  # three reviewers: none, and why
    assert cohen["interval"] == "" and cohen["note"] == eng.agreement.cohen_kappa.note
    assert "for two reviewers and these labels have 3" in cohen["note"]
    # final labels by hand: the majority of the right/wrong labels, ties and unsure-only have none
    votes: dict[str, list[bool]] = {}
    for lab in labels:
        if not lab.unsure:
            votes.setdefault(lab.item, []).append(lab.correct)
    final = {k: sum(v) > len(v) / 2 for k, v in votes.items() if sum(v) * 2 != len(v)}
    pairs = [(sum(v) * (sum(v) - 1) + (len(v) - sum(v)) * (len(v) - sum(v) - 1)) / (len(v) * (len(v) - 1))
             for v in votes.values() if len(v) >= 2]
    assert agree.loc["Percent agreement", "estimate"] == pct(sum(pairs) / len(pairs))
    # the file's outcomes against the final labels
    truth = {r["id"]: r["correct"] for r in ROWS}
    cm = {(f, t): sum(1 for k, v in final.items() if truth[k] == f and v == t) for f in (1, 0) for t in (1, 0)}
    confusion = table(owner, "final label: right")
    assert confusion["final label: right"].tolist() == [cm[1, 1], cm[0, 1]]
    assert confusion["final label: wrong"].tolist() == [cm[1, 0], cm[0, 0]]
    stats = table(owner, "figure").set_index("figure")
    for name, k, n in (("Sensitivity", cm[1, 1], cm[1, 1] + cm[0, 1]), ("Specificity", cm[0, 0], cm[1, 0] + cm[0, 0]),
                       ("Accuracy", cm[1, 1] + cm[0, 0], len(final))):
        lo, hi = wilson(k, n)
        assert (stats.loc[name, "estimate"], stats.loc[name, "interval"]) == (pct(k / n), f"95% [{pct(lo)}, {pct(hi)}]")
    # each reviewer against the final labels
    per = table(owner, "compared with a final label").set_index("reviewer")
    for who in ("ann", "bob", "cat"):
        mine = [(lab.item, lab.correct) for lab in labels if lab.reviewer == who and not lab.unsure]
        same = [c == final[i] for i, c in mine if i in final]
        lo, hi = wilson(sum(same), len(same))
        assert per.loc[who, "agree"] == sum(same) and per.loc[who, "agreement"] == pct(sum(same) / len(same))
        assert per.loc[who, "interval"] == f"95% [{pct(lo)}, {pct(hi)}]"
    # the reviewers' error and the certificate at its upper end: the engine's sentences
    texts = [t.value for t in owner.text]
    assert eng.reviewer_error.sentence() in texts and eng.bound.sentence() in texts
    holds = eng.bound.worst_ci[1] <= settings.DEFAULT_TARGET
    assert any(t.endswith(("still holds" if holds else "does not hold") + " at the upper end of the reviewers' "
                          "error.") for t in texts)

    # the hand-off: final labels, assignment, agreement, each as JSONL and CSV
    keys = {b.key for b in owner.get("download_button")}
    for kind in ("final", "assignment", "agreement"):
        assert {f"calib_handoff_{kind}_jsonl", f"calib_handoff_{kind}_csv"} <= keys
    # a final-labels file imports back as adjudications, one per item with a final label
    from calib.labels import handoff

    final = handoff.final_records(labels, dataset="")
    owner.file_uploader[0].set_value(("final.csv", handoff.to_csv(final, "final"), "text/csv"))
    ok(owner.run())
    assert not owner.warning, [w.value for w in owner.warning]
    with sqlite3.connect(tmp_path / "data" / "catalog.sqlite3") as con:
        got = dict(con.execute("SELECT item, correct FROM adjudications").fetchall())
    assert got == {r["item"]: int(r["correct"]) for r in final if r["correct"] is not None}
    assert len(got) == 27  # 30 items, 3 tied
