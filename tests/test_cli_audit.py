"""``calib audit`` on the command line: flags, output, exit codes, messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from calib.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def counts(tmp_path: Path) -> Path:
    p = tmp_path / "qwen.csv"
    p.write_text("value,n,correct\n85,60,34\n90,10,7\n95,878,694\n100,52,48\n")
    return p


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    lines = []
    for i in range(300):
        conf = (80, 90, 95, 100)[i % 4]
        right = (i * 7) % 10 < 7
        lines.append(json.dumps({"id": f"q{i}", "confidence": conf, "correct": right,
                                 "subject": "math" if i % 2 else "law"}))
    lines.insert(10, "{not json")
    p = tmp_path / "judge.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_on_a_count_table(counts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["audit", str(counts), "--json", "--reps", "200"], capsys)
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["n"] == 1000 and d["accuracy"] == pytest.approx(0.783) and d["reps"] == 200
    assert d["load_report"]["format"] == "counts" and d["name"] == "qwen"
    assert d["per_value"][2]["value"] == 95 and d["per_value"][2]["n"] == 878


def test_text_report(counts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["audit", str(counts), "--reps", "100"], capsys)
    assert code == 0
    assert "A stated 95 meant 79%" in out and "Verdict" in out


def test_options_reach_the_audit(counts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["audit", str(counts), "--json", "--scheme", "width", "--bins", "5", "--reps", "0",
                        "--seed", "4", "--level", "0.9", "--below", "90"], capsys)
    d = json.loads(out)
    assert code == 0
    assert (d["scheme"], d["bins"], d["reps"], d["seed"], d["level"]) == ("width", 5, 0, 4, 0.9)
    assert d["share_below"] == {"value": 90.0, "share": 0.06, "share_ci": [None, None]}
    assert d["ece_ci"] == [None, None]


def test_fail_above_ece(counts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["audit", str(counts), "--reps", "0", "--json", "--fail-above-ece", "0.1"], capsys)
    assert code == 1 and json.loads(out)["ece"] > 0.1
    assert "above --fail-above-ece 0.1" in err
    code, _, err = run(["audit", str(counts), "--reps", "0", "--fail-above-ece", "0.5"], capsys)
    assert code == 0 and err == ""


def test_jsonl_with_a_bad_line_keeps_the_rest(jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["audit", str(jsonl), "--json", "--reps", "50"], capsys)
    d = json.loads(out)
    assert code == 0 and d["n"] == 300
    assert d["load_report"]["dropped"] == 1 and d["load_report"]["issues"][0]["line"] == 11
    assert d["distinct_values"] == 4


def test_strict_fails_on_the_first_bad_line(jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["audit", str(jsonl), "--strict"], capsys)
    assert code == 2 and out == ""
    assert "line 11" in err and "Traceback" not in err


def test_group_key_and_keys(jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["audit", str(jsonl), "--json", "--reps", "0", "--group-key", "subject",
                        "--confidence-key", "confidence", "--label-key", "correct"], capsys)
    d = json.loads(out)
    assert code == 0
    assert [g["group"] for g in d["groups"]] == ["law", "math"] and sum(g["n"] for g in d["groups"]) == 300


def test_rescale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "ten.jsonl"
    p.write_text("".join(json.dumps({"conf": c, "correct": c > 6}) + "\n" for c in (5, 7, 9, 10) * 20))
    code, out, _ = run(["audit", str(p), "--json", "--reps", "0", "--rescale", "0,10"], capsys)
    d = json.loads(out)
    assert code == 0 and d["scale"]["lo"] == 0 and d["scale"]["hi"] == 10
    assert d["mean_confidence"] == pytest.approx(0.775)


@pytest.mark.parametrize(
    "args, message",
    [
        (["audit", "/no/such/file.jsonl"], "no such file"),
        (["audit", "{counts}", "--level", "1.5"], "level must be between 0 and 1"),
        (["audit", "{counts}", "--rescale", "zero,100"], "--rescale wants two numbers"),
        (["audit", "{empty}"], "empty"),
        (["audit", "{zero}"], "nothing to audit"),
    ],
)
def test_unusable_input_exits_2_with_a_message(args, message, counts, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    zero = tmp_path / "zero.csv"  # a count table whose counts are all 0
    zero.write_text("value,n,correct\n90,0,0\n")
    args = [a.format(counts=counts, empty=empty, zero=zero) for a in args]
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_bad_flag_values_exit_2(counts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for bad in (["--bins", "x"], ["--scheme", "quantile"], ["--reps", "-1"], ["--level", "nan"]):
        with pytest.raises(SystemExit) as exc:
            main(["audit", str(counts), *bad])
        assert exc.value.code == 2
        assert "error" in capsys.readouterr().err


def test_python_dash_m_calib(counts: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "calib", "audit", str(counts), "--json", "--reps", "20"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n"] == 1000
    r = subprocess.run([sys.executable, "-m", "calib", "audit", str(counts) + ".missing"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "no such file" in r.stderr and "Traceback" not in r.stderr
