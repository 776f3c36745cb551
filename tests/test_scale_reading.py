"""Scales read right, or flagged (issue 9, item 6).

Each case here failed on the code before it: one noisy 1.0000000000000002 made a 0-1 file
"0-10"; one typo in 20 to 50 rows refused the file; 0.85 next to 85 was read as 0.85%;
free-text confidences of one Inspect log were read on one scale; ``--rescale`` and
``route --threshold`` that contradict the data were applied without a word; one
unreadable Inspect sample refused the whole archive. Expected values are computed
directly from the values written in the file, not taken from the code under test.
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest

from calib.cli import main
from calib.errors import CalibError
from calib.loading import load
from calib.readers import inspect as inspect_reader
from calib.readers import stated
from calib.readers.base import LoadOptions, Source
from calib.scale import PROBABILITY, Scale, detect_scale, parse_rescale, rescale_warnings, threshold_check
from tests.test_inspect_reader import JSON_EVAL, JSON_JSON, OLD_EVAL, unzip


def jsonl(values: list[object], correct: list[bool] | None = None) -> bytes:
    rng = random.Random(0)
    ys = correct if correct is not None else [rng.random() < 0.7 for _ in values]
    return b"".join(json.dumps({"id": f"q{i}", "confidence": v, "correct": y}).encode() + b"\n"
                    for i, (v, y) in enumerate(zip(values, ys, strict=True)))


def read(values: list[object], **opts: object) -> tuple[object, object]:
    return stated.read(Source("t.jsonl", jsonl(values)), LoadOptions(**opts))  # type: ignore[arg-type]


# ------------------------------------------------------------- floating-point noise
def test_a_value_one_ulp_above_1_is_1_on_the_0_1_scale() -> None:
    values = [round(0.02 * i, 2) for i in range(49)] + [1.0000000000000002]
    rows, report = read(values)
    assert rows.scale.name == "0-1"  # the old code read the whole file as 0-10
    assert rows.stated[-1] == 1.0 and rows.prob.max() == 1.0
    assert rows.prob[:-1].tolist() == values[:-1]  # the others untouched, bit for bit
    assert report.kept == 50
    assert any("1 value(s) within 1e-09" in n and "read as that end" in n for n in report.notes)


def test_noise_below_0_is_0_and_beyond_the_tolerance_is_outside() -> None:
    s = detect_scale(np.r_[np.linspace(0, 1, 30), -1e-17])
    assert s.name == "0-1"
    rows, report = read([0.5] * 30 + [-1e-17, 1 + 1e-6])
    assert rows.stated.tolist() == [0.5] * 30 + [0.0]
    assert report.dropped_by_reason == {"outside the scale": 1}  # 1.000001 is not noise


# ------------------------------------------------------------- the bulk rule
@pytest.mark.parametrize(("n", "typos"), [(20, 1), (50, 1), (50, 2), (100, 2), (100, 5)])
def test_a_few_typos_never_block_the_valid_lines(n: int, typos: int) -> None:
    rng = random.Random(n + typos)
    values: list[object] = [rng.randint(50, 100) for _ in range(n - typos)] + [850] * typos
    rng.shuffle(values)
    rows, report = read(values)
    assert rows.scale.name == "0-100"
    assert report.kept == n - typos and report.dropped_by_reason == {"outside the scale": typos}
    assert sorted(rows.stated.tolist()) == sorted(v for v in values if v != 850)
    bad = [i for i in report.issues if i.reason == "outside the scale"]
    assert bad[0].detail == "confidence 850 is outside the 0-100 scale [0, 100]"
    assert bad[0].line == values.index(850) + 1


def test_more_typos_than_five_percent_refuse_with_counts() -> None:
    values: list[object] = [70] * 94 + [850] * 6
    with pytest.raises(CalibError, match=r"t.jsonl: cannot tell the confidence scale: values run from 70 to 850, "
                                         r"and 6 of 100 lie outside 0-100 \(at most 5 may\)"):
        read(values)
    assert "up to 5% of the values outside it, here 5 of 100" in detect_scale(np.r_[[70.0] * 95, [850.0] * 5]).how


def test_small_files_allow_no_outsider_below_ten_values() -> None:
    with pytest.raises(CalibError, match="cannot tell the confidence scale"):
        detect_scale(np.array([50.0, 60, 70, 850]))
    assert detect_scale(np.r_[[60.0] * 9, 850]).name == "0-100"


# ------------------------------------------------------------- two ranges
def _mixed(n: int = 1000, seed: int = 3) -> tuple[list[object], list[float], list[bool]]:
    """Values written three ways, and the probability each was meant as."""
    rng = random.Random(seed)
    values: list[object] = []
    meant: list[float] = []
    for _ in range(n):
        p = rng.choice([0.6, 0.7, 0.8, 0.9, 0.95])
        k = rng.random()
        values.append(p if k < 0.3 else round(100 * p) if k < 0.8 else f"{round(100 * p)}%")
        meant.append(p)
    return values, meant, [rng.random() < p - 0.1 for p in meant]


def test_a_file_in_two_ranges_is_refused_with_counts_and_the_fix() -> None:
    values, _, ys = _mixed()
    n_low = sum(isinstance(v, float) for v in values)
    n_high = sum(isinstance(v, int) for v in values)
    n_pct = sum(isinstance(v, str) for v in values)
    data = jsonl(values, ys)
    with pytest.raises(CalibError) as exc:
        stated.read(Source("m.jsonl", data), LoadOptions())
    msg = str(exc.value)
    assert msg.startswith(f"m.jsonl: the confidences sit in two ranges: {n_low:,} value(s) between 0 and 1 (e.g. ")
    assert f"and {n_high:,} above 1 on 0-100" in msg and f"({n_pct:,} more written as percentages" in msg
    assert "--mixed-scales" in msg and "--rescale 0,100" in msg and "--rescale 0,1" in msg


def test_mixed_scales_reads_each_value_by_its_range() -> None:
    values, meant, ys = _mixed()
    rows, report = stated.read(Source("m.jsonl", jsonl(values, ys)), LoadOptions(mixed_scales=True))
    assert rows.prob.tolist() == pytest.approx(meant, abs=1e-12)
    assert rows.scale.lo == 0 and rows.scale.hi == 100
    assert report.forms == {"0-100": sum(isinstance(v, int) for v in values),
                            "probability": sum(isinstance(v, float) for v in values),
                            "percent": sum(isinstance(v, str) for v in values)}
    assert any(n.startswith("forms: ") for n in report.notes)


def test_rescale_0_100_reads_the_probabilities_as_percent_when_asked() -> None:
    values, _, ys = _mixed()
    rows, _ = stated.read(Source("m.jsonl", jsonl(values, ys)), LoadOptions(rescale=parse_rescale("0,100")))
    expect = [float(v) / 100 if not isinstance(v, str) else float(v[:-1]) / 100 for v in values]
    assert rows.prob.tolist() == pytest.approx(expect)


def test_more_probabilities_than_allowed_among_integers_refuse() -> None:
    values: list[object] = [80] * 40 + [0.85, 90, 70] * 3 + [60]  # 3 of 50: more than the 2 allowed
    with pytest.raises(CalibError, match=r"t.jsonl: the confidences sit in two ranges: 3 value\(s\) between 0 and 1 "
                                         r"\(e.g. 0.85\) and 47 above 1 on 0-100 \(e.g. 80\)"):
        read(values)


def test_up_to_five_percent_of_probabilities_among_integers_are_bad_lines() -> None:
    values: list[object] = [80] * 60 + [90, 70] * 19 + [0.85, 0.4]
    rows, report = read(values)
    assert rows.scale.name == "0-100" and report.kept == 98
    assert report.dropped_by_reason == {"ambiguous scale": 2}
    first = next(i for i in report.issues if i.reason == "ambiguous scale")
    assert first.line == 99 and first.detail.startswith(
        "confidence 0.85 lies between 0 and 1 in a file on 0-100: a probability (85%) or 0.85 on 0-100? ")
    assert first.preview == '{"id": "q98", "confidence": 0.85, "correct": ' + json.dumps(
        json.loads(jsonl(values).splitlines()[98])["correct"]) + "}"


def test_half_points_and_continuous_scores_are_not_two_ranges() -> None:
    # a 0-10 judge's half point 0.5 and uniform continuous 0-10 scores are one range
    rows, report = read([0.5, 3, 7, 10, 8] * 10)
    assert rows.scale.name == "0-10" and report.kept == 50
    rng = np.random.default_rng(5)
    v = np.round(rng.uniform(0, 10, 3000), 3)
    rows, report = read(v.tolist())
    assert rows.scale.name == "0-10" and report.kept == 3000


def test_the_half_point_check_agrees_with_fmod_at_the_edges() -> None:
    """:func:`calib.scale._halves` (``2 r`` whole, the grid test of the two-ranges rule)
    against its definition, ``np.fmod(r, 0.5) == 0`` for every value, on draws mixing
    the largest doubles (``2 r`` overflows), subnormals, NaN and infinities."""
    from calib.scale import _halves

    pool = np.array([0.5, 1.0, 1.5, 0.25, -7.5, 0.0, -0.0, 3.0000000000000004, np.nextafter(0.5, 1.0), 2.0**60,
                     1e308, np.finfo(float).max, -np.finfo(float).max, 5e-324, np.nan, np.inf, -np.inf])
    rng = np.random.default_rng(5)
    for _ in range(3000):
        r = rng.choice(pool, int(rng.integers(1, 6)))
        with np.errstate(invalid="ignore"):
            want = bool(np.all(np.fmod(r, 0.5) == 0))
        assert _halves(r) == want, r


def test_percent_strings_in_a_file_of_probabilities_are_percentages() -> None:
    values: list[object] = [0.7, 0.9, 0.8, 0.6] * 10 + ["85%", "30%"]
    rows, report = read(values)  # the old code dropped "85%" as outside 0-1
    assert rows.scale.name == "0-1" and report.kept == 42
    assert rows.prob.tolist() == pytest.approx([0.7, 0.9, 0.8, 0.6] * 10 + [0.85, 0.30])
    assert report.forms == {"0-1": 40, "percent": 2}


# ------------------------------------------------------------- Inspect free text
def _log(tmp_path: Path, completions: list[str]) -> Path:
    log = json.loads(JSON_JSON.read_text())
    log["samples"] = log["samples"][:len(completions)]
    for s, text in zip(log["samples"], completions, strict=True):
        s["scores"]["json_letter"]["metadata"] = {}
        s["output"]["completion"] = text
    p = tmp_path / "free.json"
    p.write_text(json.dumps(log))
    return p


def test_free_text_confidences_are_read_by_their_written_form(tmp_path: Path) -> None:
    texts = ["ANSWER: B\nconfidence=65", "ANSWER: B\nConfidence: 0.60", "ANSWER: B\nCONFIDENCE: 95%",
             'ANSWER: B\n{"answer": "B", "confidence": 0.7}', "ANSWER: C\nconfidence: .3",
             "ANSWER: A\nI am 80% confident", "ANSWER: A\nconfidence: 1.0", "ANSWER: A\nconfidence: 1"]
    ds = load(_log(tmp_path, texts))
    # 65 on 0-100, 0.60 a probability, 95%; a JSON float 0.7; ".3"; 80%; "1.0" a probability;
    # the integer 1 a bare number, on the 0-100 scale of the other bare number (65): 1%
    assert ds.rows.prob.tolist() == pytest.approx([0.65, 0.60, 0.95, 0.70, 0.30, 0.80, 1.0, 0.01])
    assert ds.report.forms == {"0-100": 2, "percent": 2, "probability": 4}
    assert any(n.startswith("forms: 2 on 0-100, 2 written as percentages") for n in ds.report.notes)


def test_free_text_integers_alone_get_their_own_scale(tmp_path: Path) -> None:
    ds = load(_log(tmp_path, ["ANSWER: B\nconfidence: 7", "ANSWER: B\nconfidence: 9", "ANSWER: B\nconfidence: 4"]))
    assert ds.rows.scale.name == "1-10" and ds.rows.prob.tolist() == pytest.approx([6 / 9, 8 / 9, 3 / 9])


# ------------------------------------------------------------- options against the data
def test_rescale_warnings() -> None:
    v = np.arange(1, 10.0)
    assert rescale_warnings(v, parse_rescale("0,100")) == [
        "--rescale 0,100: every value lies in 1-10 (from 1 to 9): did you mean --rescale 1,10? "
        "Read on [0, 100], a 9 means 9%"]
    assert rescale_warnings(v, parse_rescale("1,10")) == []
    assert rescale_warnings(v, parse_rescale("0,10")) == []  # 0-10 vs 1-10: both plausible
    (w,) = rescale_warnings(np.arange(1, 100.0), parse_rescale("0,10"))
    assert w.startswith("--rescale 0,10: 89 of 99 values lie outside [0, 10] and are dropped")
    assert w.endswith("the values look like 0-100 (--rescale 0,100)")


def test_threshold_check() -> None:
    v = np.arange(1, 10.0)
    one_ten = Scale(1, 10, "1-10")
    c = threshold_check(v, one_ten, 80)
    assert c.refuse and c.message == ("--threshold 80 lies above the top of the 1-10 scale [1, 10]: every item "
                                      "would go to a person; if 80 was meant as 80%, the same point on this "
                                      "scale is 8.2")
    c = threshold_check(v, one_ten, 9.5)
    assert not c.refuse and "above every stated value (the highest is 9" in str(c.message)
    assert threshold_check(v, one_ten, 1).message is None  # the scale's bottom: everything accepted, as asked
    assert threshold_check(v, one_ten, 5).message is None
    # noise beyond the top is on the scale (not refused), but still above a stated 1: warned
    c = threshold_check(np.array([0.5, 1.0]), PROBABILITY, 1.0000000000000002)
    assert not c.refuse and "every item goes to a person" in str(c.message)


@pytest.fixture()
def ten(tmp_path: Path) -> Path:
    rng = random.Random(1)
    p = tmp_path / "ten.jsonl"
    vals = [rng.randint(1, 9) for _ in range(200)]
    p.write_bytes(jsonl(vals, [rng.random() < v / 10 for v in vals]))
    return p


def test_cli_rescale_that_contradicts_the_data_warns(ten: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(ten), "--rescale", "0,100", "--reps", "0", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "calib: warning: --rescale 0,100: every value lies in 1-10" in err
    report = json.loads(out)["load_report"]
    assert report["warnings"] == [err.strip().removeprefix("calib: warning: ")]
    assert "warning: " + report["warnings"][0] in report["notes"]


def test_cli_route_threshold_outside_the_scale_exits_2(ten: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["route", str(ten), "--threshold", "80", "--reps", "0"]) == 2
    assert "--threshold 80 lies above the top of the 1-10 scale [1, 10]" in capsys.readouterr().err
    assert main(["route", str(ten), "--threshold", "9.5", "--reps", "0", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "calib: warning: --threshold 9.5 is above every stated value" in err
    assert json.loads(out)["warnings"] == [err.strip().removeprefix("calib: warning: ")]


# ------------------------------------------------------------- unreadable Inspect samples
def _rezip(path: Path, edit: dict[str, bytes]) -> bytes:
    members = unzip(path)
    members.update(edit)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    return buf.getvalue()


@pytest.mark.parametrize("path", [JSON_EVAL, OLD_EVAL], ids=["0.3.285", "0.3.180"])
def test_an_unreadable_member_is_one_bad_sample(path: Path) -> None:
    members = unzip(path)
    good = inspect_reader.read(Source(path.name, path.read_bytes()), LoadOptions())[1]
    name = "samples/q003_epoch_1.json"
    cut = members[name][: len(members[name]) // 2]
    data = _rezip(path, {name: cut, "samples/q004_epoch_1.json": b'{"id": "q004", "scores": [1, 2]}'})
    rows, report = inspect_reader.read(Source(path.name, data), LoadOptions())
    assert report.lines_read == good.lines_read
    assert report.kept == good.kept - 2
    issues = {i.sample_id: i for i in report.issues}
    assert issues["q003"].reason == "unreadable sample"
    assert issues["q003"].detail.startswith(f"member {name} is not valid JSON")
    assert issues["q004"].reason == "malformed sample"
    assert issues["q004"].detail == "samples/q004_epoch_1.json: 'scores' is a list, not an object"
    assert "q003" not in rows.item_id.tolist() and "q005" in rows.item_id.tolist()


def test_malformed_samples_of_a_json_log_are_bad_samples() -> None:
    log = json.loads(JSON_JSON.read_text())
    ss = log["samples"][:6]
    log["samples"] = ss
    ss[0]["output"] = "just text"
    ss[1]["attachments"] = ["x"]
    ss[2]["scores"]["json_letter"]["value"] = 10 ** 400  # float() of it overflows
    ss[3]["epoch"] = 10 ** 400
    ss[4]["metadata"] = [1, 2]
    rows, report = inspect_reader.read(Source("x.json", json.dumps(log).encode()), LoadOptions())
    reasons = {i.sample_id: i.reason for i in report.issues}
    assert reasons == {"q000": "malformed sample", "q001": "malformed sample", "q002": "outcome not binary",
                       "q004": "malformed sample"}
    assert rows.item_id.tolist() == ["q003", "q005"]


# ------------------------------------------------------------- the dashboard
def test_dashboard_warns_and_reads_mixed_scales(ten: Path) -> None:
    from calib.present.tables import scale_words
    from dashboard.layout import md_escape
    from tests.apptest import app, ok, upload

    at = upload(ok(app().run()), "ten.jsonl", ten.read_bytes())
    at.selectbox(key="ov0_scale").set_value("0-100")
    ok(at.run())
    (w,) = [w.value for w in at.warning if "every value lies in" in w.value]
    # the engine's warning, in the dashboard's words (no command-line flag on a page)
    assert w == md_escape(scale_words(rescale_warnings(np.arange(1, 10.0), parse_rescale("0,100"))[0]))
    assert "rescale" not in w and "did you mean the scale 1 to 10" in w.replace("\\", "")
    values, meant, ys = _mixed(200)
    at = upload(ok(app().run()), "mixed.jsonl", jsonl(values, ys))
    assert any("sit in two ranges" in e.value for e in at.error)
    at.selectbox(key="ov0_scale").set_value("mixed")
    ok(at.run())
    assert not at.error and any(t.value.startswith("read 200 lines: kept 200") for t in at.text)


def test_dashboard_routing_warns_when_the_threshold_is_above_every_stated_value(ten: Path) -> None:
    from tests.apptest import app, ok, upload

    top = max(json.loads(line)["confidence"] for line in ten.read_bytes().splitlines())
    assert top == 9  # 1-10 scale, nobody said 10
    at = upload(ok(app().run()), "ten.jsonl", ten.read_bytes())
    at.switch_page("pages/5_Routing.py")
    ok(at.run())
    assert not [w for w in at.warning if "above every stated value" in w.value]
    at.select_slider(key="w_lo").set_value(10.0)
    ok(at.run())
    (w,) = [w.value for w in at.warning if "above every stated value" in w.value]
    assert w == ui_escape("Review threshold 10 is above every stated value (the highest is 9 on 1-10): every item "
                          "goes to a person")


def ui_escape(text: str) -> str:
    from dashboard.layout import md_escape

    return md_escape(text)
