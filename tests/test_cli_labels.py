"""``calib audit FILE --labels LABELS``: the reviewers' labels as outcomes (the audit equals
the audit of a file whose outcomes were replaced by hand), agreement against scikit-learn,
the audit sample's estimate against Clopper-Pearson from scipy, the threshold decision on
human outcomes, and the messages of bad label files (exit 2, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from calib.labels import Label, labels_to_csv, labels_to_jsonl, review_plan
from calib.loading import load
from tests.cli_run import run, run_json

T0 = "2026-12-01T18:30:00Z"
N = 600


def write_judgments(path: Path, stated, correct, ids) -> Path:
    with path.open("w") as f:
        for s, c, i in zip(stated, correct, ids, strict=True):
            f.write(
                json.dumps({"id": i, "confidence": float(s), "correct": bool(c), "question": f"question {i}"})
                + "\n"
            )
    return path


@pytest.fixture()
def judged(tmp_path: Path):
    """A 0-100 judge with one accepted value (95) above the default threshold 80 and a queue below."""
    rng = np.random.default_rng(0)
    stated = rng.choice([40.0, 60.0, 70.0, 95.0], size=N, p=[0.1, 0.1, 0.2, 0.6])
    correct = rng.random(N) < np.where(stated == 95.0, 0.85, 0.6)
    ids = [f"item-{i}" for i in range(N)]
    path = write_judgments(tmp_path / "judge.jsonl", stated, correct, ids)
    return path, stated, correct, ids


def labels_for(judged, *, sample_size=80, flip_every=7, reviewer="ann"):
    """Labels of a plan's queue and audit sample; every ``flip_every``-th label disagrees with the file."""
    path, stated, correct, ids = judged
    ds = load(str(path))
    plan = review_plan(ds.rows, 80.0, sample_size=sample_size, seed=3)
    where = {k: i for i, k in enumerate(ids)}
    out = []
    for j, it in enumerate(plan.items):
        ok = bool(correct[where[it.item]])
        out.append(
            Label(
                item=it.item,
                correct=ok if j % flip_every else not ok,
                reviewer=reviewer,
                time=T0,
                kind=it.kind,
            )
        )
    return plan, out


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_audit_with_labels_equals_the_audit_of_the_relabelled_file(judged, fmt, tmp_path, capsys):
    path, stated, correct, ids = judged
    plan, labels = labels_for(judged)
    lab_path = tmp_path / f"labels.{fmt}"
    lab_path.write_bytes(labels_to_csv(labels) if fmt == "csv" else labels_to_jsonl(labels))
    human = correct.copy()
    where = {k: i for i, k in enumerate(ids)}
    for x in labels:
        human[where[x.item]] = x.correct
    relabelled = write_judgments(tmp_path / "judge.jsonl".replace("judge", "human"), stated, human, ids)
    args = ["--reps", 200, "--target-error", 0.2]
    with_labels = run_json(["audit", path, "--labels", lab_path, *args], capsys)
    by_hand = run_json(["audit", relabelled, *args], capsys)
    block = with_labels.pop("labels")
    for d in (with_labels, by_hand):
        d.pop("load_report"), d.pop("name")
    assert with_labels == by_hand  # every figure, the decision included, is on the human outcomes
    assert "decision" in with_labels

    o = block["outcomes"]
    changed = int(np.sum(human != correct))
    assert (o["labelled"], o["labels"], o["changed"]) == (len(labels), len(labels), changed)
    assert (o["from_queue"], o["from_audit"]) == (len(plan.queue), len(plan.audit))
    assert o["right_to_wrong"] == int(np.sum(correct & ~human)) and o["unknown"] == 0
    file_ok = np.array([correct[where[x.item]] for x in labels])
    reviewer_ok = np.array([x.correct for x in labels])
    assert block["agreement"]["kappa"] == pytest.approx(cohen_kappa_score(file_ok, reviewer_ok), abs=1e-12)

    # one stratum (95): the estimate is x / m and its interval Clopper-Pearson at (x, m)
    est = block["accepted_error"]
    audit = [x for x in labels if x.kind == "audit"]
    x, m = sum(not a.correct for a in audit), len(audit)
    assert (est["labelled"], est["errors"], est["accepted"]) == (m, x, int(np.sum(stated >= 80)))
    assert est["estimate"] == pytest.approx(x / m)
    assert est["ci"] == pytest.approx(
        [stats.beta.ppf(0.025, x, m - x + 1), stats.beta.ppf(0.975, x + 1, m - x)]
    )
    assert block["threshold"] == 80.0 and block["threshold_source"] == "default review threshold"
    assert block["read"] == len(labels) and block["bad_lines"] == 0 and block["messages"] == []


def test_labels_threshold_and_text_report(judged, tmp_path, capsys):
    _, labels = labels_for(judged)
    lab_path = tmp_path / "labels.jsonl"
    lab_path.write_bytes(
        labels_to_jsonl([*labels, Label("item-9999", True, reviewer="ann", time=T0, kind="audit")])
    )
    d = run_json(["audit", judged[0], "--labels", lab_path, "--labels-threshold", 70, "--reps", 50], capsys)
    est = d["labels"]["accepted_error"]
    assert d["labels"]["threshold"] == 70.0 and d["labels"]["threshold_source"] == "--labels-threshold"
    assert est["accepted"] == int(np.sum(judged[1] >= 70)) and len(est["strata"]) == 2
    assert d["labels"]["outcomes"]["unknown_items"] == ["item-9999"]
    code, out, err = run(["audit", judged[0], "--labels", lab_path, "--reps", 50], capsys)
    assert code == 0
    assert out.splitlines()[2] == (
        f"Outcomes: the reviewers' labels for {len(labels)} items ({len(range(0, len(labels), 7))} changed), the file's "
        'for the rest; see "Reviewers\' labels" at the end.'
    )  # every 7th label, from the first, disagrees with the file
    section = out[out.index("\nReviewers' labels") :]
    assert f"Read {len(labels) + 1} labels from {lab_path}." in section
    assert "1 label names an item not in the file ('item-9999') and was not used." in section
    assert "Cohen's kappa" in section and "Error rate among the" in section
    assert "Threshold 80 (default review threshold)." in section


def test_bad_lines_are_warned_and_listed(judged, tmp_path, capsys):
    _, labels = labels_for(judged)
    text = labels_to_csv(labels).decode() + '"","item-1","maybe","","ann","2026-12-01T18:30:00Z","audit","false","false",""\n'
    lab_path = tmp_path / "labels.csv"
    lab_path.write_text(text)
    bad = f"labels.csv line {len(labels) + 2}: correct must be true or false, got 'maybe'"
    code, out, err = run(["audit", judged[0], "--labels", lab_path, "--reps", 0, "--json"], capsys)
    assert code == 0 and f"calib: warning: {bad}" in err
    assert json.loads(out)["labels"]["messages"] == [bad]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "--labels {p}: no usable label (the file is empty)"),
        (
            b'{"item": "item-1", "correct": "maybe", "reviewer": "a", "time": "2026-12-01T18:30:00Z"}\n',
            "--labels {p}: no usable label (bad.labels line 1: correct must be true or false, got 'maybe')",
        ),
        (
            b"a,b\n1,2\n",
            "bad.labels line 1: not a labels file: the header ['a', 'b'] lacks item, correct, reviewer, "
            "time (JSONL lines start with '{{'; a CSV needs a header row)",
        ),
    ],
)
def test_unusable_label_files_exit_2(judged, content, message, tmp_path, capsys):
    p = tmp_path / "bad.labels"
    p.write_bytes(content)
    code, out, err = run(["audit", judged[0], "--labels", p], capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err == f"calib: {message.format(p=p)}\n"


def test_missing_labels_file_count_table_and_datasets(judged, tmp_path, capsys):
    code, _, err = run(["audit", judged[0], "--labels", tmp_path / "none.csv"], capsys)
    assert code == 2 and err.startswith(f"calib: --labels {tmp_path / 'none.csv'}: cannot read the file (")
    lab_path = tmp_path / "labels.jsonl"
    lab_path.write_bytes(
        labels_to_jsonl(
            [
                Label("item-1", True, reviewer="a", time=T0, kind="audit", dataset="A"),
                Label("item-1", False, reviewer="a", time=T0, kind="audit", dataset="B"),
            ]
        )
    )
    code, _, err = run(["audit", judged[0], "--labels", lab_path, "--reps", 0], capsys)
    assert code == 2 and err == (
        f"calib: --labels {lab_path}: the labels are of 2 datasets ('A', 'B'): choose one with --labels-dataset\n"
    )
    code, _, err = run(["audit", judged[0], "--labels", lab_path, "--labels-dataset", "C"], capsys)
    assert code == 2 and err == (
        f"calib: --labels-dataset 'C': no label of that dataset in {lab_path} (its labels are of 'A', 'B')\n"
    )
    d = run_json(["audit", judged[0], "--labels", lab_path, "--labels-dataset", "B", "--reps", 0], capsys)
    assert d["labels"]["dataset"] == "B" and d["labels"]["outcomes"]["labels"] == 1
    counts = tmp_path / "counts.csv"
    counts.write_text("value,n,correct\n90,10,8\n")
    code, _, err = run(["audit", counts, "--labels", lab_path], capsys)
    assert (
        code == 2
        and err == f"calib: --labels: {counts} is a count table, which has no items to join labels to\n"
    )


@pytest.mark.parametrize("flag, value", [("--labels-threshold", "80"), ("--labels-dataset", "A")])
def test_labels_flags_need_labels(judged, flag, value, capsys):
    code, out, err = run(["audit", judged[0], flag, value], capsys)
    assert code == 2 and out == ""
    assert err == f"calib: {flag} needs --labels LABELS (the reviewers' labels it applies to)\n"
