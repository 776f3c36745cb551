"""Confidence in words (issue 26, item 3): phrases read as an ordered stated scale.

The fixture ``tests/data/verbal-5phrases.jsonl`` (``tools/make_verbal_fixture.py``):
2,000 items stating one of five phrases, and an unknown phrase on line 777. Every figure
is checked against a computation made here from the file's text: per-phrase counts and
Wilson intervals by the closed form, the held-out isotonic map by scikit-learn, the
certified threshold by a brute-force fixed-sequence Clopper-Pearson scan.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats
from sklearn.isotonic import IsotonicRegression

from calib.errors import CalibError
from calib.loading import load
from calib.readers.base import LoadOptions
from calib.verbal import BUILT_IN, normalise, parse_phrases
from tests.cli_run import run, run_json

FIXTURE = Path(__file__).parent / "data" / "verbal-5phrases.jsonl"
ORDER = ("very low", "low", "medium", "high", "very high")


def _independent_rows() -> tuple[np.ndarray, np.ndarray]:
    """(rank 1..5, correct) of the fixture's valid lines, read with json and str methods only."""
    ranks, right = [], []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        word = obj["confidence"].lower().replace("-", " ")
        if word in ORDER:
            ranks.append(ORDER.index(word) + 1)
            right.append(bool(obj["correct"]))
    return np.array(ranks), np.array(right)


def _wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    z = NormalDist().inv_cdf(0.5 + level / 2)
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * np.sqrt(k * (n - k) / n + z * z / 4)
    return centre - half, centre + half


def test_fixture_per_phrase_hit_rates_and_intervals(capsys: pytest.CaptureFixture[str]) -> None:
    ranks, right = _independent_rows()
    assert ranks.size == 2000
    d = run_json(["audit", FIXTURE, "--reps", 0], capsys)
    rows = {r["value"]: r for r in d["per_value"]}
    assert list(rows) == list(ORDER)
    for r, phrase in enumerate(ORDER, start=1):
        n, k = int((ranks == r).sum()), int(right[ranks == r].sum())
        row = rows[phrase]
        assert (row["n"], row["correct"]) == (n, k)
        assert row["hit_rate"] == pytest.approx(k / n)
        assert row["hit_rate_ci"] == pytest.approx(_wilson(k, n), abs=1e-12)
        assert row["rank"] == r
    assert d["scale"]["labels"] == list(ORDER)
    assert d["distinct_values"] == 5
    assert d["top_value"]["value"] == "high"


def test_unknown_phrase_is_a_bad_line_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["audit", FIXTURE, "--reps", 0], capsys)
    assert code == 0
    assert "line 777" in out and '"kinda sure"' in out and "unknown phrase" in out
    ds = load(FIXTURE)
    (issue,) = ds.report.issues
    assert (issue.line, issue.reason) == (777, "unknown phrase")
    assert ds.report.kept == 2000


def test_held_out_isotonic_map_on_phrases(capsys: pytest.CaptureFixture[str]) -> None:
    """The odd/even split: fitted on the 1st, 3rd... kept rows, scored on the others."""
    ranks, right = _independent_rows()
    d = run_json(["fit", FIXTURE, "--method", "isotonic", "--reps", 0], capsys)
    assert d["scoring"] == "oddeven"
    fit_r, fit_y, ev_r, ev_y = ranks[0::2], right[0::2], ranks[1::2], right[1::2]
    iso = IsotonicRegression(out_of_bounds="clip").fit(fit_r, fit_y.astype(float))
    got = {row["stated"]: row["prob"] for row in d["table"]}
    for r in range(1, 6):
        assert got[r] == pytest.approx(float(iso.predict([r])[0]), abs=1e-12)
    brier_after = float(np.mean((iso.predict(ev_r) - ev_y) ** 2))
    brier_stated = float(np.mean(((ev_r - 0.5) / 5 - ev_y) ** 2))  # the midpoints 0.1 ... 0.9
    assert d["after"]["brier"]["value"] == pytest.approx(brier_after, abs=1e-12)
    assert d["before"]["brier"]["value"] == pytest.approx(brier_stated, abs=1e-12)
    assert brier_after < brier_stated


def _fixed_sequence(ranks: np.ndarray, right: np.ndarray, alpha: float = 0.05, delta: float = 0.05) -> float | None:
    """The lowest rank t, scanning from the top, whose accepted set (rank >= t) has a
    one-sided Clopper-Pearson upper bound on its error rate at most ``alpha``."""
    best = None
    for t in sorted(set(ranks.tolist()), reverse=True):
        acc = ranks >= t
        n, errors = int(acc.sum()), int((~right[acc]).sum())
        upper = 1.0 if errors == n else float(stats.beta.ppf(1 - delta, errors + 1, n - errors))
        if upper > alpha:
            break
        best = float(t)
    return best


def test_certified_threshold_on_phrases(capsys: pytest.CaptureFixture[str]) -> None:
    ranks, right = _independent_rows()
    want = _fixed_sequence(ranks, right)
    assert want is not None
    d = run_json(["route", FIXTURE, "--reps", 0], capsys)
    rec = d["recommendation"]
    assert rec["holds"] and rec["threshold"] == want
    assert rec["accepted"] == int((ranks >= want).sum())
    code, out, _ = run(["route", FIXTURE, "--reps", 0], capsys)
    assert code == 0 and f'accept at or above "{ORDER[int(want) - 1]}"' in out


def test_given_order_and_its_bad_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [{"confidence": w, "correct": y} for w, y in
             [("meh", False), ("OK", True), ("great", True), ("ok", False), ("great", True), ("superb", True),
              (90, True)]]
    f = tmp_path / "own.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    ds = load(f, options=LoadOptions(phrases="meh, ok ,great"))
    assert ds.table.scale.labels == ("meh", "ok", "great")
    assert ds.rows.stated.tolist() == [1, 2, 3, 2, 3]
    reasons = {i.line: (i.reason, i.detail) for i in ds.report.issues}
    assert reasons[6][0] == "unknown phrase" and '"superb"' in reasons[6][1]
    assert reasons[7][0] == "number among phrases"
    # the CLI flag, and a refused order
    d = run_json(["audit", f, "--phrases", "meh,ok,great", "--reps", 0], capsys)
    assert d["scale"]["labels"] == ["meh", "ok", "great"]
    code, _, err = run(["audit", f, "--phrases", "meh,ok,meh"], capsys)
    assert code == 2 and "'meh' given twice" in err


def test_family_choice_languages_and_spelling() -> None:
    def scale_of(words: list[str]) -> tuple[str, ...]:
        from calib.verbal import choose

        codes = np.array([BUILT_IN.code(w) for w in words], dtype=float)
        return choose(BUILT_IN, codes)[0].labels

    assert scale_of(["low", "High", "medium"]) == ("low", "medium", "high")
    assert len(scale_of(["low", "very high"])) == 5
    assert scale_of(["Très probable", "probable", "improbable"])[5:7] == ("probable", "très probable")
    assert len(scale_of(["B+", "a-", "C"])) == 13
    assert normalise("  Very-High. ") == "very high" and normalise("B-") == "b-"
    with pytest.raises(CalibError, match="'high', 'likely'.*--phrases"):
        scale_of(["high", "likely"])
    with pytest.raises(CalibError, match="at least two"):
        parse_phrases("only")


def test_api_argument(tmp_path: Path) -> None:
    import calib

    a = calib.audit(str(FIXTURE), reps=0)
    assert list(a.per_value_frame()["phrase"]) == list(ORDER)
    frame = {"confidence": ["b", "a", "c"] * 40, "correct": [True, False, True] * 40}
    a2 = calib.audit(frame, phrases=["c", "b", "a"], reps=0)
    assert a2.to_dict()["scale"]["labels"] == ["c", "b", "a"]


def test_docs_list_every_built_in_spelling() -> None:
    from calib.verbal import FAMILIES

    page = (Path(__file__).parent.parent / "docs" / "verbal.md").read_text(encoding="utf-8")
    missing = [s for f in FAMILIES for p in f.positions for s in p if f"`{s}`" not in page]
    assert not missing


def test_scale_figures_label_the_axis_with_phrases() -> None:
    from calib import metrics
    from calib.present import scale_figures

    table = load(FIXTURE).table
    hist = scale_figures.stated_histogram([("judge", table)], {})
    dots = scale_figures.per_value([("judge", table, metrics.per_value(table))], {})
    for fig in (hist, dots):
        assert list(fig.layout.xaxis.ticktext) == [ORDER[int(v) - 1] for v in fig.layout.xaxis.tickvals]


def test_threshold_given_as_a_phrase(capsys: pytest.CaptureFixture[str]) -> None:
    ranks, right = _independent_rows()
    d = run_json(["route", FIXTURE, "--threshold", "High", "--reps", 0], capsys)
    assert d["lower"] == 4 and d["accepted"] == int((ranks >= 4).sum())
    assert d["errors_slipping"] == int((~right[ranks >= 4]).sum())
    code, _, err = run(["route", FIXTURE, "--threshold", "kinda sure"], capsys)
    assert code == 2 and "not a phrase" in err and "very high" in err
