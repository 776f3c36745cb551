"""``calib audit`` on the command line: flags, output, exit codes, messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from calib.cli import main
from tests.cli_run import run, strict

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


# ----------------------------------------------------- files LLM evaluations write
SAMPLES = ROOT / "sample_data"
LMEVAL = SAMPLES / "lmeval_calib_mc"
BUILTIN = next((SAMPLES / "inspect").glob("*calib-mc-builtin*.eval"))


@pytest.mark.parametrize("variant", ["acc", "acc_norm"])
def test_lmeval_folder_by_task_matches_the_harness_own_figures(variant, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(["audit", str(LMEVAL), "--variant", variant, "--reps", "0", "--json"], capsys)
    assert code == 0
    d = strict(out)
    results = json.loads(next(LMEVAL.glob("results_*.json")).read_text())["results"]
    assert {g["group"] for g in d["groups"]} == set(results)
    for g in d["groups"]:
        # lm-eval's own accuracy for the task, written by the harness itself
        assert g["accuracy"] == pytest.approx(results[g["group"]][f"{variant},none"], abs=1e-12)
    assert d["n"] == sum(g["n"] for g in d["groups"]) == 80


def test_inspect_log_with_token_probabilities(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(["audit", str(BUILTIN), "--reps", "0"], capsys)
    assert code == 2 and out == ""
    assert "no confidence" in err and "--confidence-key logprob" in err
    code, out, _ = run(["audit", str(BUILTIN), "--reps", "0", "--json", "--confidence-key", "logprob"], capsys)
    d = strict(out)
    from calib.audit import audit
    from calib.loading import load
    from calib.readers.base import LoadOptions

    ds = load(BUILTIN, options=LoadOptions(confidence_key="logprob"))
    ref = audit(ds.table, reps=0, name=ds.name, load_report=ds.report).to_dict()
    assert code == 0 and d == ref and d["n"] == 40 and (d["scale"]["lo"], d["scale"]["hi"]) == (0, 1)


def test_normalisation_flag_reaches_the_reader(capsys) -> None:  # type: ignore[no-untyped-def]
    f = SAMPLES / "logprobs_weak_calibrated_synthetic.jsonl"
    code, _, err = run(["audit", str(f), "--normalisation", "char"], capsys)
    assert code == 2 and "normalisation 'char' needs the choice texts per option" in err


def test_calikit_command_on_a_judge_file(capsys) -> None:  # type: ignore[no-untyped-def]
    f = SAMPLES / "judge_a_synthetic.jsonl"
    code, out, _ = run(["audit", str(f), "--rescale", "0,100", "--reps", "200", "--json"], capsys)
    d = strict(out)
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    right = [r["correct"] for r in rows]
    assert code == 0 and d["n"] == 1000 and d["accuracy"] == pytest.approx(sum(right) / 1000)
    assert d["scale"]["how"] == "given: --rescale 0,100"
    assert d["brier"] == pytest.approx(sum((r["confidence"] / 100 - r["correct"]) ** 2 for r in rows) / 1000)


# -------------------------------------------------------------------- --plot
def test_plot_html_is_self_contained_and_escapes_the_name(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    import re

    name = '<img src=x onerror=alert(1)>'
    src = tmp_path / f"{name}.jsonl"
    src.write_bytes((SAMPLES / "judge_b_synthetic.jsonl").read_bytes())
    plot = tmp_path / "diagram.html"
    code, out, err = run(["audit", str(src), "--reps", "100", "--plot", str(plot)], capsys)
    assert code == 0 and err == ""
    assert f"Reliability diagram written to {plot}." in out
    page = plot.read_text()
    assert page.startswith("<!DOCTYPE html>") and "Plotly.newPlot" in page
    assert len(page) > 1_000_000  # plotly.js embedded, not fetched
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I)
    assert not re.search(r"<link[^>]*\bhref\s*=\s*[\"']?https?:", page, re.I)
    assert name not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "hit rate at each stated value" in page and "CORP isotonic curve" in page


def test_plot_shows_each_values_hit_rate(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from calib.present import figures

    made = []

    def spy(*a, **k):  # type: ignore[no-untyped-def]
        fig = real(*a, **k)
        made.append(fig)
        return fig

    real = figures.reliability_one
    monkeypatch.setattr(figures, "reliability_one", spy)
    f = SAMPLES / "judge_b_synthetic.jsonl"
    code, _, _ = run(["audit", str(f), "--reps", "0", "--plot", str(tmp_path / "d.html")], capsys)
    assert code == 0 and len(made) == 1
    pts = next(t for t in made[0].data if t.name == "hit rate at each stated value")
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    values = sorted({r["confidence"] for r in rows})
    hit = [100 * sum(r["correct"] for r in rows if r["confidence"] == v) / sum(r["confidence"] == v for r in rows)
           for v in values]
    assert list(pts.x) == pytest.approx(values) and list(pts.y) == pytest.approx(hit)


def test_plot_with_json_keeps_stdout_one_object(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    plot = tmp_path / "d.html"
    code, out, err = run(["audit", str(SAMPLES / "judge_a_synthetic.jsonl"), "--reps", "50", "--json",
                          "--plot", str(plot)], capsys)
    assert code == 0 and strict(out)["n"] == 1000 and plot.exists()
    assert "Reliability diagram written to" in err


def test_plot_svg(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    plot = tmp_path / "d.svg"
    code, _, err = run(["audit", str(SAMPLES / "judge_c_synthetic.jsonl"), "--reps", "50", "--plot", str(plot)],
                       capsys)
    assert code == 0, err
    svg = plot.read_text()
    assert svg.startswith("<svg") and "Reliability diagram: judge_c_synthetic" in svg


@pytest.mark.parametrize("path, message", [("d.pdf", "must end in .html, .png or .svg"),
                                           ("no/such/dir/d.html", "cannot write the file")])
def test_plot_bad_path_exits_2(path, message, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(["audit", str(SAMPLES / "judge_a_synthetic.jsonl"), "--reps", "0",
                          "--plot", str(tmp_path / path)], capsys)
    assert code == 2 and out == "" and message in err


# ------------------------------------------------------------- internal errors
def test_internal_error_exits_3_traceback_only_on_request(counts, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def boom(*a, **k):  # type: ignore[no-untyped-def]
        raise RuntimeError("kaboom")

    monkeypatch.setattr("calib.audit.audit", boom)
    code, out, err = run(["audit", str(counts)], capsys)
    assert code == 3 and out == ""
    assert "internal error (RuntimeError: kaboom); please report it" in err and "Traceback" not in err
    monkeypatch.setenv("CALIB_DEBUG", "1")
    code, _, err = run(["audit", str(counts)], capsys)
    assert code == 3 and "Traceback" in err and "kaboom" in err
