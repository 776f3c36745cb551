"""The ``--json`` of ``calib audit`` (``--labels`` too), ``route``, ``fit``, ``compare``, ``cascade``,
``drift``, ``transport`` and ``labels agreement``, and the owner's review report, are a contract:
the engine's result types may change inside (issue 23 item 4: one
:class:`calib.estimates.Estimate` for a figure and its interval instead of parallel ``x`` and
``x_ci`` fields), their JSON may not, byte for byte.

The golden files in ``tests/data/golden/`` were written by main at b67ccf0, BEFORE
the results held :class:`~calib.estimates.Estimate` values (the commit adding them changes
nothing else), with the commands of :data:`CASES` run from the repository root
(``compare_judges_ab.json``, ``route_stability.json``, ``cascade_ac.json``,
``drift_ab.json`` and ``covariate_length.json`` from ``git archive b67ccf0``, the same
code, when those results were converted; ``transport_ab.json`` from ``git archive a39329f``,
with ``map_judge_a.json`` written there by ``calib fit sample_data/judge_a_synthetic.jsonl
--method isotonic --out tests/data/golden/map_judge_a.json``;
the labels' files (``labels_agreement_a*.json``, ``audit_labels_a*.json`` and, by
:func:`review_report_json`, ``review_report_a*.json``) from ``git archive a39329f`` too, with
``labels_judge_a.jsonl`` written there: a review plan of judge A (threshold 80, 60 items, seed
3) labelled by "ann" (every 17th label flipped from the file's outcome) and, on two items in
three, "bob" (flipped at j % 13 == 5, unsure at j % 19 == 1), one adjudication by "lead";
``repeated_judge_a.jsonl`` is the first 400 rows of ``judge_a_synthetic.jsonl``, two
judgments per item id; ``covariate_judge_a.jsonl`` the same rows with a numeric field
``length``, 3 x the subject's length + the row number mod 7).
If a deliberate change to a schema or a computation alters one, regenerate it with that
command and say why in the commit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_run import run

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "golden"
SAMPLE = ROOT / "sample_data"

#: golden file -> the CLI arguments that wrote it (``--json`` last)
CASES: dict[str, list[str]] = {
    "audit_judge_a.json": ["audit", "sample_data/judge_a_synthetic.jsonl", "--json"],
    "route_judge_a.json": ["route", "sample_data/judge_a_synthetic.jsonl", "--threshold", "90",
                           "--cost-review", "1", "--cost-miss", "5", "--json"],
    "fit_judge_a.json": ["fit", "sample_data/judge_a_synthetic.jsonl", "--method", "isotonic", "--json"],
    "compare_judge_ab.json": ["compare", "sample_data/judge_a_synthetic.jsonl",
                              "sample_data/judge_b_synthetic.jsonl", "--reps", "200", "--json"],
    "route_stability.json": ["route", "tests/data/golden/repeated_judge_a.jsonl", "--stability", "--threshold", "90",
                             "--reps", "50", "--json"],
    "cascade_ac.json": ["cascade", "sample_data/judge_a_synthetic.jsonl", "sample_data/judge_c_synthetic.jsonl",
                        "--prices", "0.01,0.1", "--person-price", "5", "--target-error", "0.4", "--reps", "100",
                        "--json"],
    "drift_ab.json": ["drift", "sample_data/judge_a_synthetic.jsonl", "sample_data/judge_b_synthetic.jsonl",
                      "--reps", "200", "--json"],
    "covariate_length.json": ["audit", "tests/data/golden/covariate_judge_a.jsonl", "--covariate", "length",
                              "--reps", "50", "--json"],
    "compare_judges_ab.json": ["compare", "sample_data/judge_a_synthetic.jsonl", "sample_data/judge_b_synthetic.jsonl",
                               "--target-error", "0.2", "--reps", "200", "--json"],
    "transport_ab.json": ["transport", "tests/data/golden/map_judge_a.json", "sample_data/judge_b_synthetic.jsonl",
                          "--json"],
    "labels_agreement_a.json": ["labels", "agreement", "tests/data/golden/labels_judge_a.jsonl", "--reps", "200",
                                "--json"],
    "labels_agreement_a_no_reps.json": ["labels", "agreement", "tests/data/golden/labels_judge_a.jsonl", "--reps", "0",
                                        "--json"],
    "audit_labels_a.json": ["audit", "sample_data/judge_a_synthetic.jsonl", "--labels",
                            "tests/data/golden/labels_judge_a.jsonl", "--reps", "100", "--json"],
    "audit_labels_a_no_reps.json": ["audit", "sample_data/judge_a_synthetic.jsonl", "--labels",
                                    "tests/data/golden/labels_judge_a.jsonl", "--reps", "0", "--json"],
}

#: golden file -> the certificate's target of :func:`calib.labels.report.review_report` (no CLI
#: prints its error bound and the file against the final labels: the Review page and the hand-off do)
REVIEW_CASES: dict[str, float | None] = {"review_report_a.json": 0.3, "review_report_a_no_target.json": None}


@pytest.mark.parametrize("name", sorted(CASES))
def test_json_is_byte_for_byte_main_s(name: str, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run(CASES[name], capsys)
    assert code == 0, err
    assert out == (GOLDEN / name).read_text(encoding="utf-8"), f"calib {' '.join(CASES[name])} changed its JSON"


def review_report_json(target: float | None) -> str:
    """The owner's review report of ``labels_judge_a.jsonl`` on judge A at threshold 80, as
    its golden file holds it."""
    import json

    from calib.labels.report import review_report
    from calib.labels.reviewers import as_labels
    from calib.loading import load

    labels, _ = as_labels(GOLDEN / "labels_judge_a.jsonl")
    rows = load(str(SAMPLE / "judge_a_synthetic.jsonl")).rows
    d = review_report(labels, rows, threshold=80.0, target=target, reps=200, seed=0, level=0.95).to_dict()
    return json.dumps(d, indent=2) + "\n"


@pytest.mark.parametrize("name", sorted(REVIEW_CASES))
def test_review_report_is_byte_for_byte_main_s(name: str) -> None:
    assert review_report_json(REVIEW_CASES[name]) == (GOLDEN / name).read_text(encoding="utf-8")
