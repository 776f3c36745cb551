"""``calib labels agreement LABELS`` (issue 25, item 8's contract): the JSON keys and
values against statsmodels, the ``krippendorff`` package and scikit-learn on the same
labels, JSONL and CSV alike, the text form, and bad input named by line."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa

from calib.labels import Label, labels_to_csv, labels_to_jsonl
from tests.cli_run import run, run_json

T0 = "2026-12-01T18:30:00Z"


def matrix_labels(m: np.ndarray, unsure: np.ndarray | None = None) -> list[Label]:
    """One label per non-missing cell of ``m`` (items by reviewers, -1 missing)."""
    out = []
    for i, row in enumerate(m):
        for j, v in enumerate(row):
            if v >= 0:
                u = bool(unsure is not None and unsure[i, j])
                out.append(Label(item=f"q{i}", correct=bool(v), reviewer=f"r{j}", time=T0, unsure=u))
    return out


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_json_contract_against_the_references(fmt, tmp_path, capsys):
    rng = np.random.default_rng(4)
    m = np.where(rng.random((50, 3)) < 0.75, (rng.random(50) < 0.6)[:, None], rng.random((50, 3)) < 0.5)
    m = m.astype(np.int8)
    path = tmp_path / f"labels.{fmt}"
    labels = matrix_labels(m)
    path.write_bytes(labels_to_jsonl(labels) if fmt == "jsonl" else labels_to_csv(labels))
    out = run_json(["labels", "agreement", path, "--reps", 300], capsys)
    assert {"cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "percent_agreement", "reviewers", "items"} <= set(out)
    assert (out["reviewers"], out["items"]) == (3, 50)
    counts = np.stack([(m == 1).sum(axis=1), (m == 0).sum(axis=1)], axis=1)
    assert out["fleiss_kappa"]["estimate"] == pytest.approx(fleiss_kappa(counts), abs=1e-10)
    alpha = krippendorff.alpha(reliability_data=m.T.astype(float), level_of_measurement="nominal")
    assert out["krippendorff_alpha"]["estimate"] == pytest.approx(alpha, abs=1e-10)
    for key in ("fleiss_kappa", "krippendorff_alpha", "percent_agreement"):
        lo, hi = out[key]["ci"]
        assert lo <= out[key]["estimate"] <= hi
    assert out["cohen_kappa"]["estimate"] is None and out["cohen_kappa"]["ci"] is None
    assert out["cohen_kappa"]["reason"].startswith("Cohen's kappa is for two reviewers and these labels have 3")
    d = 1 - out["percent_agreement"]["estimate"]
    assert out["reviewer_error"]["error"]["estimate"] == pytest.approx((1 - np.sqrt(1 - 2 * d)) / 2, abs=1e-12)
    assert out["reviewer_error"]["error_max"] == pytest.approx(1 - out["percent_agreement"]["ci"][0], abs=1e-12)


def test_two_reviewers_give_cohens_kappa_and_unsure_is_missing(tmp_path, capsys):
    rng = np.random.default_rng(9)
    m = (rng.random((40, 2)) < 0.6).astype(np.int8)
    unsure = rng.random((40, 2)) < 0.15
    path = tmp_path / "l.jsonl"
    path.write_bytes(labels_to_jsonl(matrix_labels(m, unsure)))
    out = run_json(["labels", "agreement", path, "--reps", 200], capsys)
    both = ~unsure.any(axis=1)
    assert out["cohen_kappa"]["estimate"] == pytest.approx(cohen_kappa_score(m[both, 0], m[both, 1]), abs=1e-12)
    assert out["unsure"] == int(unsure.sum()) and out["double_coded"] == int(both.sum())


def test_text_form(tmp_path, capsys):
    path = tmp_path / "l.jsonl"
    path.write_bytes(labels_to_jsonl(matrix_labels(np.array([[1, 1], [0, 0], [1, 0], [1, 1]], dtype=np.int8))))
    code, out, err = run(["labels", "agreement", path, "--reps", 100], capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"Reviewers' agreement in {path}"
    assert lines[1] == "8 labels by 2 reviewers on 4 items, 4 of them labelled by two or more."
    assert lines[2].startswith("Cohen's kappa: 0.50 (95% interval ")
    assert lines[5].startswith("Percent agreement: 75.0% (95% interval ")
    assert "Final labels for 3 of 4 items (0 adjudicated, 3 by majority); 1 tied have none" in out


def test_bad_lines_are_named_and_the_good_ones_kept(tmp_path, capsys):
    good = labels_to_jsonl(matrix_labels(np.array([[1, 1], [0, 0], [1, 0]], dtype=np.int8))).decode()
    bad = (
        '{"item": "q9", "reviewer": "r0", "correct": "yes", "time": "2026-12-01T18:30:00Z"}\n'
        '{"item": "q9", "reviewer": "r1", "correct": true, "time": "2026-12-01T18:30:00Z", "unsure": 1}\n'
        "not json\n"
    )
    path = tmp_path / "l.jsonl"
    path.write_text(good + bad)
    code, out, err = run(["labels", "agreement", path, "--json", "--reps", 50], capsys)
    msgs = [
        "l.jsonl line 7: correct must be true or false, got 'yes'",
        "l.jsonl line 8: unsure must be true or false, got 1",
    ]
    assert code == 0
    for msg in msgs:
        assert f"calib: warning: {msg}" in err
    got = json.loads(out)
    assert got["messages"][:2] == msgs and got["messages"][2].startswith("l.jsonl line 9: not valid JSON")
    assert (got["items"], got["reviewers"]) == (3, 2)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "no usable label (the file is empty)"),
        (b'{"item": "q", "correct": true, "time": "2026-12-01T18:30:00Z"}\n',
         "no usable label (x.jsonl line 1: reviewer is missing)"),
    ],
)
def test_unusable_files_exit_2_with_the_reason(content, message, tmp_path, capsys):
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    code, out, err = run(["labels", "agreement", path], capsys)
    assert (code, out) == (2, "") and err == f"calib: {path}: {message}\n"


def test_missing_file_and_bad_options(tmp_path, capsys):
    code, _, err = run(["labels", "agreement", tmp_path / "none.jsonl"], capsys)
    assert code == 2 and "cannot read the file" in err and "Traceback" not in err
    path = tmp_path / "l.jsonl"
    path.write_bytes(labels_to_jsonl(matrix_labels(np.array([[1, 1]], dtype=np.int8))))
    code, _, err = run(["labels", "agreement", path, "--reps", -1], capsys)
    assert code == 2 and err == "calib: --reps: between 0 and 100,000, got -1\n"
    code, _, err = run(["labels", "agreement", path, "--level", 1.5], capsys)
    assert code == 2 and "--level" in err


def test_python_api_gives_the_cli_json(tmp_path, capsys):
    import calib

    rng = np.random.default_rng(2)
    m = (rng.random((30, 3)) < 0.6).astype(np.int8)
    m[rng.random((30, 3)) < 0.2] = -1
    labels = matrix_labels(m)
    path = tmp_path / "l.jsonl"
    path.write_bytes(labels_to_jsonl(labels))
    cli = run_json(["labels", "agreement", path, "--reps", 200, "--seed", 3], capsys)
    del cli["file"]
    api = calib.agreement(str(path), reps=200, seed=3)
    assert json.loads(json.dumps(api)) == cli
    assert calib.agreement(labels, reps=200, seed=3) == api
    assert calib.agreement(path.read_bytes(), reps=200, seed=3) == api
    clustered = calib.agreement(labels, reps=200, seed=3, clusters={f"q{i}": i // 3 for i in range(30)})
    assert clustered["interval"]["clusters"] == 10 and clustered["fleiss_kappa"]["estimate"] == api[
        "fleiss_kappa"]["estimate"]


def test_labels_of_several_datasets_need_dataset(tmp_path, capsys):
    labels = [Label(item="q1", correct=True, reviewer=r, time=T0, dataset=d) for d in ("A", "B") for r in ("a", "b")]
    path = tmp_path / "l.jsonl"
    path.write_bytes(labels_to_jsonl(labels))
    code, _, err = run(["labels", "agreement", path], capsys)
    assert code == 2 and err == f"calib: {path}: the labels are of 2 datasets ('A', 'B'): say which with --dataset\n"
    out = run_json(["labels", "agreement", path, "--dataset", "B", "--reps", 0], capsys)
    assert (out["items"], out["reviewers"], out["percent_agreement"]["estimate"]) == (1, 2, 1.0)
