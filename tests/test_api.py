"""The Python API (:mod:`calib.api`, :mod:`calib.present.notebook`, ``import calib``).

Every frame-shaped input (pandas, polars, pyarrow, a mapping, bare arrays) must give
the audit the same data written as a JSONL file gives (:func:`calib.load` of the
path): same counts, same load report (but its source), same audit JSON. Figures the
result shows are checked against counts taken from the raw rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import calib
from calib.errors import CalibError

ROOT = Path(__file__).resolve().parents[1]


def _rows(seed: int = 3, n: int = 600, continuous: bool = False) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        conf = float(rng.uniform(0.3, 1.0)) if continuous else int(rng.choice([60, 70, 80, 90, 95, 100]))
        right = bool(rng.random() < (conf if continuous else conf / 100) - 0.1)
        out.append({"qid": f"q{i // 2}", "conf": conf, "correct": right, "subject": ["law", "math", "bio"][i % 3]})
    out[5]["conf"] = None  # a missing confidence: the same reason in a file and in a frame
    return out


def _write(rows: list[dict], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _same(a: dict, b: dict) -> None:
    """Two audit JSONs equal except for the dataset name and the report's source."""
    a, b = dict(a), dict(b)
    for d in (a, b):
        d.pop("name")
        d["load_report"] = {k: v for k, v in d["load_report"].items() if k != "source"}
        d["load_report"]["issues"] = [{k: v for k, v in i.items() if k != "source"}
                                      for i in d["load_report"]["issues"]]
        for g in d.get("groups", []):
            g.pop("name", None)
    assert a == b


KW = dict(confidence="conf", outcome="correct", group="subject", cluster="qid", reps=200, seed=1)


@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("kind", ["pandas", "polars", "pyarrow", "mapping", "arrays"])
def test_frames_audit_like_the_file(kind: str, continuous: bool, tmp_path: Path) -> None:
    rows = _rows(continuous=continuous)
    path = _write(rows, tmp_path / "judge.jsonl")
    want = calib.audit(str(path), **KW)
    df = pd.DataFrame(rows)
    if kind == "pandas":
        got = calib.audit(df, **KW)
    elif kind == "polars":
        got = calib.audit(pl.DataFrame(rows), **KW)
    elif kind == "pyarrow":
        got = calib.audit(pa.Table.from_pylist(rows), **KW)
    elif kind == "mapping":
        got = calib.audit({c: df[c].tolist() for c in df.columns}, **KW)
    else:  # bare arrays are the columns confidence, outcome, group, cluster of a file
        got = calib.audit(confidence=df["conf"].to_numpy(), outcome=df["correct"].to_numpy(),
                          group=df["subject"].tolist(), cluster=df["qid"].tolist(), reps=200, seed=1)
        renamed = [{"confidence": r["conf"], "outcome": r["correct"], "group": r["subject"], "cluster": r["qid"]}
                   for r in rows]
        want = calib.audit(str(_write(renamed, tmp_path / "arrays.jsonl")), confidence="confidence",
                           outcome="outcome", group="group", cluster="cluster", reps=200, seed=1)
    _same(got.to_dict(), want.to_dict())
    report = got.to_dict()["load_report"]
    assert report["kept"] == len(rows) - 1 and report["dropped_by_reason"] == {"missing confidence": 1}
    assert got.to_dict()["clusters"]["count"] == len(rows) // 2  # two rows per item id


def test_load_of_a_frame_equals_load_of_the_path(tmp_path: Path) -> None:
    rows = _rows(seed=9)
    path = _write(rows, tmp_path / "j.jsonl")
    a = calib.load(pd.DataFrame(rows), group="subject")
    b = calib.load(path, group="subject")
    assert a.table.groups == b.table.groups
    assert np.array_equal(a.table.n, b.table.n) and np.array_equal(a.table.correct, b.table.correct)
    assert a.report.fields == b.report.fields and a.report.notes == b.report.notes


def test_route_on_a_frame_equals_route_on_the_file(tmp_path: Path) -> None:
    rows = _rows(seed=4, n=2000)
    path = _write(rows, tmp_path / "j.jsonl")
    args = dict(target=0.2, confidence_level=0.9, cost_review=1.0, cost_miss=10.0, capacity="30%", reps=100)
    a = calib.route(pd.DataFrame(rows), group="subject", **args).to_dict()
    b = calib.route(str(path), group="subject", **args).to_dict()
    assert a == b and a["recommendation"]["confidence"] == 0.9 and len(a["per_group"]) == 3
    assert calib.decide is calib.route


def test_fit_and_compare_on_frames(tmp_path: Path) -> None:
    rows = _rows(seed=5)
    f1 = calib.fit(pd.DataFrame(rows), "platt", reps=50).to_dict()
    f2 = calib.fit(_write(rows, tmp_path / "j.jsonl"), "platt", reps=50).to_dict()
    assert f1 == f2
    c = calib.compare({"a": pd.DataFrame(rows), "b": pd.DataFrame(_rows(seed=6))}, reps=50).to_dict()
    assert [m["model"] for m in c["models"]] == ["a", "b"]


def test_result_views_against_the_raw_rows() -> None:
    rows = [r for r in _rows(seed=7) if r["conf"] is not None]
    a = calib.audit(pd.DataFrame(rows), confidence="conf", outcome="correct", reps=100)
    pv = a.per_value
    for _, r in pv.iterrows():  # counts and hit rates computed here from the rows
        at = [x["correct"] for x in rows if x["conf"] == r["value"]]
        assert r["n"] == len(at) and r["correct"] == sum(at)
        assert r["lo"] <= r["hit_rate"] <= r["hi"]
    assert pv["n"].sum() == len(rows)
    frame = a.to_frame()
    acc = sum(x["correct"] for x in rows) / len(rows)
    assert frame.loc["accuracy", "estimate"] == pytest.approx(acc)
    assert frame.loc["accuracy", "lo"] < acc < frame.loc["accuracy", "hi"]
    assert (frame["n"] == len(rows)).all()
    assert a.bins["n"].sum() == len(rows)
    assert isinstance(a.bins, pd.DataFrame) and a.audit.bins == a.to_dict()["bins"]  # the engine's int stays


def test_verdict_reads_as_text() -> None:
    a = calib.audit(pd.DataFrame(_rows()), confidence="conf", outcome="correct", reps=0)
    text = str(a.verdict)
    assert text.split("\n") == list(a.verdict) == a.to_dict()["verdict"]
    assert text.startswith("599 answers") and not text.startswith("(")
    assert a.verdict == tuple(a.to_dict()["verdict"])  # still a tuple for code


def test_repr_html_escapes_user_text_and_shows_the_diagram() -> None:
    rows = _rows()
    for r in rows:
        r["subject"] = "<script>alert(1)</script>" if r["subject"] == "law" else r["subject"]
    a = calib.audit(pd.DataFrame(rows), group="subject", name="<img src=x onerror=alert(1)>", reps=50)
    html = a._repr_html_()
    assert "<script>" not in html and "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;script&gt;" in html
    assert "<svg" in html and "Reliability diagram" in html
    lo, hi = a.ci["ece"]
    assert f"[{lo:.3f}, {hi:.3f}]" in html and "599 answers" in html


@pytest.mark.parametrize("call, message", [
    (lambda df: calib.audit(df, confidence="conf2"), 'confidence=\'conf2\': no such column; columns are qid, conf'),
    (lambda df: calib.audit(df, outcome="nope"), "outcome='nope': no such column"),
    (lambda df: calib.audit(df, confidence=3), "confidence=: with a DataFrame, name the column"),
    (lambda df: calib.audit(df, scale="0,100,3"), "wants two numbers"),
    (lambda df: calib.audit(df[["qid", "subject"]]), "Name it with confidence="),
    (lambda df: calib.audit(df, bogus=1), "audit() got an unexpected argument bogus="),
    (lambda df: calib.audit(confidence=[1, 2], outcome=[True]), "confidence= has 2, outcome= has 1"),
    (lambda df: calib.audit(object()), "data: expected a path, a pandas or polars DataFrame"),
    (lambda df: calib.audit(df, cluster="qidx"), "cluster='qidx': no such column"),
    (lambda df: calib.audit(calib.load(df), group="subject"), "group=: the dataset is already loaded"),
    (lambda df: calib.audit(calib.load(df).table, outcome="correct"), "outcome=: a count table has no fields"),
])
def test_errors_name_the_python_argument(call, message: str) -> None:  # type: ignore[no-untyped-def]
    df = pd.DataFrame(_rows())
    with pytest.raises(CalibError) as exc:
        call(df)
    assert message in str(exc.value) and "--" not in str(exc.value)


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_calib_is_light() -> None:
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import calib; calib.__version__"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0 and "calib" in out.stderr
    heavy = [ln for ln in out.stderr.splitlines() if any(m in ln for m in ("numpy", "pandas", "scipy"))]
    assert heavy == []
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "calib", "--help"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0 and "audit" in out.stdout
    assert not [ln for ln in out.stderr.splitlines() if any(m in ln for m in ("numpy", "pandas", "scipy"))]


SAMPLE = str(ROOT / "sample_data" / "judge_a_synthetic.jsonl")


@pytest.mark.parametrize("first", [
    "import calib",
    "from calib.audit import Audit",
    "import calib.audit as m",
    "from calib import audit",
    "from calib.compare import compare",
    "import calib.cli.audit",
])
def test_audit_is_both_function_and_module_in_any_import_order(first: str) -> None:
    code = f"""{first}
import calib, calib.audit as m
from calib.audit import Audit
from calib import audit as fa
a = calib.audit({SAMPLE!r}, reps=0)
assert isinstance(a.audit, Audit) and m is fa is calib.audit and m.Audit is Audit
b = fa({SAMPLE!r}, reps=0)
assert b.to_dict() == a.to_dict()
import calib.compare
c = calib.compare([{SAMPLE!r}, {SAMPLE!r}], reps=0)
assert [r['model'] for r in c.to_dict()['models']] == ['judge_a_synthetic', 'judge_a_synthetic (2)']
assert calib.compare.Comparison is type(c.comparison)
from calib import decision
assert decision.decide is calib.decision.decide
print('ok')
"""
    assert _fresh(code).strip() == "ok"


def test_route_result_views_against_the_raw_rows() -> None:
    rows = [r for r in _rows(seed=11, n=1500) if r["conf"] is not None]
    for i, r in enumerate(rows):
        r["subject"] = "<b onmouseover=x>" if i % 3 == 0 else r["subject"]
    d = calib.route(pd.DataFrame(rows), group="subject", target=0.25, cost_review=1.0, cost_miss=10.0, reps=100)
    n = len(rows)
    frame = d.cost_frame()
    assert len(frame) > 0
    for _, c in frame.iterrows():  # cost per item at "accept at or above t", counted here from the rows
        review = sum(r["conf"] < c["threshold"] for r in rows)
        slipped = sum(r["conf"] >= c["threshold"] and not r["correct"] for r in rows)
        assert c["cost"] == pytest.approx((review * 1.0 + slipped * 10.0) / n)
        assert c["lo"] <= c["cost"] <= c["hi"]
    g = d.groups_frame()
    assert sorted(g["group"]) == sorted({r["subject"] for r in rows})
    assert (g["total"] == [sum(r["subject"] == name for r in rows) for name in g["group"]]).all()
    html = d._repr_html_()
    assert "<b onmouseover" not in html and "&lt;b onmouseover=x&gt;" in html
    rec = d.to_dict()["recommendation"]
    assert str(d) == rec["message"] and rec["target"] == 0.25
    assert f"{100 * rec['error_upper']:.1f}%" in html or rec["error_upper"] is None


def test_bad_values_get_the_file_reasons(tmp_path: Path) -> None:
    rows = _rows(seed=12, n=300)
    rows[7]["conf"] = float("inf")  # json.dumps writes Infinity, as a frame's inf is written
    rows[9]["correct"] = "maybe"
    rows[11]["conf"] = "high"
    frame = calib.load(pd.DataFrame(rows).astype({"conf": object, "correct": object})).report.to_dict()
    file = calib.load(_write(rows, tmp_path / "bad.jsonl")).report.to_dict()
    assert frame["dropped_by_reason"] == file["dropped_by_reason"]
    assert set(frame["dropped_by_reason"]) == {"missing confidence", "NaN/Infinity", "non-numeric confidence",
                                              "unknown outcome token"}
    assert [(i["line"], i["reason"]) for i in frame["issues"]] == [(i["line"], i["reason"]) for i in file["issues"]]


@pytest.mark.parametrize("kind", ["pandas", "arrow", "arrays"])
def test_a_frame_over_the_groups_cap_is_refused_as_a_file_is(kind: str, monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    """CALIB_MAX_GROUPS holds for a DataFrame, an Arrow table and arrays as for a file:
    the same words after the input's name, at load (before any per-group audit)."""
    monkeypatch.setenv("CALIB_MAX_GROUPS", "4")
    conf, correct, subject = [60 + 10 * (i % 4) for i in range(50)], [i % 3 > 0 for i in range(50)], \
        [f"s{i % 5}" for i in range(50)]
    f = tmp_path / "one.jsonl"
    f.write_text("".join(json.dumps({"confidence": c, "correct": o, "subject": s}) + "\n"
                         for c, o, s in zip(conf, correct, subject, strict=True)))
    with pytest.raises(CalibError) as file_error:
        calib.load(str(f), group="subject")
    df = pd.DataFrame({"confidence": conf, "correct": correct, "subject": subject})
    with pytest.raises(CalibError) as frame_error:
        if kind == "arrays":
            calib.load(confidence=conf, outcome=correct, group=subject)
        else:
            calib.load(df if kind == "pandas" else pa.Table.from_pandas(df), group="subject")
    words = str(file_error.value)[len("one.jsonl"):]
    if kind == "arrays":  # the group= array is the column 'group' of what is read
        words = words.replace("'subject'", "'group'")
    assert "5 groups" in words and str(frame_error.value).endswith(words)


def test_every_api_name_stays_callable_once_every_module_is_imported() -> None:
    """A submodule named like an API function replaces it on import (``calib/estimate.py``
    once turned ``calib.estimate`` into a module: "'module' object is not callable" after
    any audit). Every module of the package is imported, then every API name is called
    for its signature."""
    code = """
import importlib, pkgutil, calib
for m in pkgutil.walk_packages(calib.__path__, 'calib.'):
    if not m.name.startswith(('calib.cli.__main__', 'calib.__main__')):
        importlib.import_module(m.name)
bad = [n for n in calib.API if not callable(getattr(calib, n))]
assert not bad, bad
print('ok')
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
