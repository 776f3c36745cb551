"""``calib drift`` on the command line: the planted shift named, no drift on two samples
of one population, exit codes for CI, and the messages of bad input (exit 2, no traceback).
Figures in the JSON are recomputed here from the files written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from calib.cli import main

VALUES = np.array([60.0, 70.0, 80.0, 90.0, 95.0])
USE = np.array([0.05, 0.10, 0.20, 0.40, 0.25])
HIT = np.array([0.55, 0.65, 0.75, 0.82, 0.88])


def write(path: Path, stated, correct, ids=None, scale: float = 1.0) -> Path:
    with path.open("w") as f:
        for i, (s, c) in enumerate(zip(stated, correct, strict=True)):
            row = {"confidence": float(s) * scale, "correct": bool(c)}
            if ids is not False:
                row["id"] = f"q{i}" if ids is None else ids[i]
            f.write(json.dumps(row) + "\n")
    return path


def runs(tmp: Path, n: int, seed: int, shift: float = 0.0, paired: bool = True) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)

    def items():
        b = rng.choice(5, size=n, p=USE)
        return b, np.clip(HIT[b] + rng.normal(0, 0.1, n), 0.02, 0.98)

    def one(b, q, s, name):
        v = VALUES[np.where(rng.random(n) < 0.8, b, rng.choice(5, size=n, p=USE))]
        return write(tmp / name, v, rng.random(n) < np.clip(q - s * (v == 90), 0, 1))

    b, q = items()
    old = one(b, q, 0.0, "old.jsonl")
    if not paired:
        b, q = items()
    return old, one(b, q, shift, "new.jsonl")


def call(args, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_planted_shift_is_named_and_fails_the_gate(tmp_path, capsys):
    old, new = runs(tmp_path, 2500, 1, shift=0.15)
    code, out, _ = call(["drift", old, new, "--fail-on-drift", "--reps", "400"], capsys)
    assert code == 1
    assert "Verdict: DRIFT" in out and "values that moved: 90" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("stated 90:"))
    assert "MOVED" in line and "hit rate" in line
    assert all("MOVED" not in x for x in out.splitlines() if x.strip().startswith("stated") and "stated 90" not in x)


def test_same_population_passes_the_gate(tmp_path, capsys):
    old, new = runs(tmp_path, 2500, 2)
    code, out, _ = call(["drift", old, new, "--fail-on-drift", "--reps", "400"], capsys)
    assert code == 0 and "Verdict: no drift" in out


def test_json_figures_recomputed_from_the_files(tmp_path, capsys):
    old, new = runs(tmp_path, 800, 3, shift=0.15)
    code, out, _ = call(["drift", old, new, "--json", "--reps", "200", "--threshold", "90",
                         "--target-error", "0.2"], capsys)
    assert code == 0
    d = json.loads(out)
    a = [json.loads(x) for x in old.read_text().splitlines()]
    b = [json.loads(x) for x in new.read_text().splitlines()]
    ya, yb = np.array([r["correct"] for r in a]), np.array([r["correct"] for r in b])
    assert d["paired"] is True and d["schema"] == "calib.drift/1"
    assert d["changes"]["accuracy"]["diff"] == pytest.approx(yb.mean() - ya.mean())
    bb, cc = int(np.sum(ya & ~yb)), int(np.sum(~ya & yb))
    assert d["changes"]["accuracy"]["p"] == pytest.approx(stats.binomtest(bb, bb + cc, 0.5).pvalue)
    sb = np.array([r["confidence"] for r in b])
    m = sb >= 90
    assert d["threshold"]["accepted_new"] == m.sum() and d["threshold"]["errors_new"] == (~yb[m]).sum()


def test_threshold_that_no_longer_meets_its_target_fails_the_gate(tmp_path, capsys):
    old, new = runs(tmp_path, 1500, 4, shift=0.3)
    code, out, _ = call(["drift", old, new, "--threshold", "90", "--target-error", "0.2", "--fail-on-drift",
                         "--reps", "100"], capsys)
    assert code == 1 and "does NOT meet the target" in out


def test_series_over_a_folder(tmp_path, capsys):
    rng = np.random.default_rng(5)
    folder = tmp_path / "runs"
    folder.mkdir()
    for k in range(8):
        b = rng.choice(5, size=2000, p=USE)
        write(folder / f"judge_2026-{k + 1:02d}-01.jsonl", VALUES[b], rng.random(2000) < HIT[b] - (0.12 if k >= 5 else 0))
    code, out, _ = call(["drift", folder, "--series", "--reference", "3", "--threshold", "90", "--fail-on-drift"],
                        capsys)
    assert code == 1 and "first crosses the limit" in out
    code, out, _ = call(["drift", folder, "--series", "--reference", "3", "--json"], capsys)
    s = json.loads(out)
    assert code == 0 and s["schema"] == "calib.drift-series/1" and s["first_alarm"] >= 5
    assert [Path(f).name for f in s["files"]] == sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("make, args, message", [
    ("scales", [], "share a scale"),
    ("noshared", ["--paired"], "share 0 item id"),
    ("noids", ["--paired"], "no item id on every row"),
    ("three", [], "for three or more add --series"),
    ("missing", [], "no such file"),
    ("folder", [], "needs --series"),
    ("ok", ["--target-error", "1.5"], "--target-error"),
    ("ok", ["--level", "2"], "--level"),
    ("ok", ["--series", "--paired"], "--paired/--unpaired"),
])
def test_bad_input_exits_2_with_a_message(tmp_path, capsys, make, args, message):
    old, new = runs(tmp_path, 100, 6)
    files = [old, new]
    if make == "scales":
        files = [old, write(tmp_path / "p.jsonl", [0.6, 0.9, 0.95, 0.7] * 10, [1, 0, 1, 1] * 10)]
    elif make == "noshared":
        files = [old, write(tmp_path / "x.jsonl", [60, 90, 95, 70] * 10, [1, 0, 1, 1] * 10,
                            ids=[f"x{i}" for i in range(40)])]
    elif make == "noids":
        files = [old, write(tmp_path / "x.jsonl", [60, 90, 95, 70] * 10, [1, 0, 1, 1] * 10, ids=False)]
    elif make == "three":
        files = [old, new, old]
    elif make == "missing":
        files = [old, tmp_path / "nope.jsonl"]
    elif make == "folder":
        files = [tmp_path]
    code, _, err = call(["drift", *files, *args, "--reps", "20"], capsys)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_subprocess_exit_codes(tmp_path):
    old, new = runs(tmp_path, 300, 7)
    r = subprocess.run([sys.executable, "-m", "calib", "drift", str(old), str(new), "--reps", "50"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "Drift:" in r.stdout
    r = subprocess.run([sys.executable, "-m", "calib", "drift", str(old)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "give two runs" in r.stderr


def near_target_runs(tmp: Path, n: int, seed: int) -> tuple[Path, Path]:
    """Two runs of one unchanged judge (fresh items each run): half stated 90, right 95.4% of the
    time (error 4.6% among the accepted at 90, near a 5% target), half stated 70, right 70%."""
    rng = np.random.default_rng(seed)
    paths = []
    for name in ("old.jsonl", "new.jsonl"):
        v = np.where(rng.random(n) < 0.5, 90.0, 70.0)
        paths.append(write(tmp / name, v, rng.random(n) < np.where(v == 90, 0.954, 0.70),
                           ids=[f"{name}{i}" for i in range(n)]))
    return paths[0], paths[1]


def test_an_uncertified_threshold_is_not_drift_and_has_its_own_exit_code(tmp_path, capsys):
    # issue 22: --fail-on-drift exited 1 whenever the new run could not certify the threshold,
    # 89-91% of unchanged pairs at a population error of 4.6% (bench/sim_drift.py, (d))
    old, new = near_target_runs(tmp_path, 2000, 4)
    b = [json.loads(x) for x in new.read_text().splitlines()]
    acc = [r for r in b if r["confidence"] >= 90]
    wrong = sum(not r["correct"] for r in acc)
    bound = stats.beta.ppf(0.95, wrong + 1, len(acc) - wrong)  # Clopper-Pearson, one-sided 95%
    assert bound > 0.05  # the new run does not certify 90 at 5%: the case under test
    flags = ["--threshold", "90", "--target-error", "0.05", "--reps", "200"]
    code, out, _ = call(["drift", old, new, *flags, "--fail-on-drift"], capsys)
    assert "Verdict: no drift" in out
    assert code == 0 and "NOT certified on the new run" in out and "not a test of change" in out
    code, out, _ = call(["drift", old, new, *flags, "--fail-on-uncertified"], capsys)
    assert code == 4
    code, out, _ = call(["drift", old, new, *flags, "--fail-on-drift", "--fail-on-uncertified", "--json"], capsys)
    d = json.loads(out)
    assert code == 4 and d["exit_code"] == 4 and "not certified" in d["exit_reason"]
    assert d["judge_changed"] is False and d["drift"] is False and d["threshold_certified"] is False
    assert d["threshold"]["holds"] is False and d["threshold"]["error_upper_new"] == pytest.approx(bound)


def test_exit_codes_are_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["drift", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "1 the judge changed (--fail-on-drift)" in text and "4 the threshold is not certified" in text
