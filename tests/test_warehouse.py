"""Globs of logs reduced in DuckDB (calib.readers.warehouse) agree with the Python readers.

The reference is the stated JSONL reader (calib.readers.stated) on the same rows: a
generated file holding every kind of bad value the rules know (missing, null, boolean,
array, object, "1e400", "NaN", unknown outcome tokens, numbers other than 0/1, invalid
JSON lines, non-object lines, blank lines, values outside the scale, percent strings,
strings with spaces). The glob's load report must have the same counts per reason and
its audit the same JSON (floats to 1e-9: a GROUP BY sums cells in another order).
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from calib.audit import audit
from calib.errors import CalibError
from calib.loading import load
from calib.readers import warehouse
from calib.readers.base import LoadOptions
from calib.scale import parse_rescale
from tests.json_compare import same_json

ROOT = Path(__file__).resolve().parents[1]
BAD_CONF = [None, "abc", True, False, [1], {"x": 1}, "1e400", "NaN", "", "85%%", "%85"]
BAD_OUT = [None, "maybe", 2, 0.5, [1], {"y": 1}, "", -1]
GOOD_CONF = [40, 55, 70, 85, 90.5, 95, 100, "85", " 70 ", "90%", "95 %", 0.0, 100.0]
GOOD_OUT = [True, False, 1, 0, "yes", "no", " C ", "i", "1.0", 1.0, 0.0, "TRUE", "Pass", "wrong"]


def _objects(seed: int, n: int) -> list[object]:
    """Judgments with every kind of bad value, plus raw lines (str) that are not objects."""
    rng = random.Random(seed)
    out: list[object] = []
    for i in range(n):
        r = rng.random()
        conf: object = rng.choice(GOOD_CONF) if rng.random() > 0.02 else 150
        outcome: object = rng.choice(GOOD_OUT)
        if r < 0.04:
            conf = rng.choice(BAD_CONF)
        elif r < 0.08:
            outcome = rng.choice(BAD_OUT)
        obj: dict[str, object] = {"id": f"q{i}", "meta": {"c": conf}}
        if rng.random() < 0.9:
            obj["subject"] = rng.choice(["bio", "law", "math", None])
        if conf is not None or rng.random() < 0.5:  # absent and null are both "missing"
            obj["confidence"] = conf
        if outcome is not None or rng.random() < 0.5:
            obj["correct"] = outcome
        out.append(obj)
        if rng.random() < 0.01:
            out.append(rng.choice(["", "   ", "not json {", "[1, 2]", "42", '"text"']))
    return out


def _write_jsonl(path: Path, objects: list[object]) -> None:
    text = "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objects)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)


COUNTS = ("lines_read", "blank", "kept", "dropped", "dropped_by_reason", "scale", "forms")


def _same_load(ref_path: Path, glob: str, options: LoadOptions) -> None:
    ref, got = load(ref_path, options=options), load(glob, options=options)
    assert ref.rows is not None and ref.rows.cluster is None  # unique ids: no clusters
    for k in COUNTS:
        assert getattr(got.report, k) == getattr(ref.report, k), k
    for role in ("confidence", "outcome", "group"):
        assert got.report.fields[role] == ref.report.fields[role], role
    a_ref = audit(ref.table, reps=200, seed=7, name="j", load_report=ref.report).to_dict()
    a_got = audit(got.table, reps=200, seed=7, name="j", load_report=got.report).to_dict()
    a_ref.pop("load_report"), a_got.pop("load_report")
    same_json(a_got, a_ref)


@pytest.mark.parametrize("group", [None, "subject"], ids=["pooled", "by-group"])
def test_jsonl_glob_equals_the_python_reader(tmp_path: Path, group: str | None) -> None:
    objects = _objects(1, 4000)
    _write_jsonl(tmp_path / "all.jsonl", objects)
    logs = tmp_path / "logs"
    logs.mkdir()
    # the same lines split over three files, one gzipped
    for i, part in enumerate((objects[:1500], objects[1500:2500], objects[2500:])):
        _write_jsonl(logs / (f"part{i}.jsonl" + (".gz" if i == 1 else "")), part)
    ref = load(tmp_path / "all.jsonl", options=LoadOptions(group_key=group)).report
    # every kind of reason occurs, so the comparison covers them
    assert set(ref.dropped_by_reason) >= {"missing confidence", "non-numeric confidence", "NaN/Infinity",
                                          "missing outcome", "unknown outcome token", "outside the scale",
                                          "invalid JSON", "not a JSON object"}
    assert ref.blank > 0 and ref.forms.get("percent", 0) > 0
    _same_load(tmp_path / "all.jsonl", str(logs / "part*.jsonl*"), LoadOptions(group_key=group))


def test_nested_and_given_keys_and_rescale(tmp_path: Path) -> None:
    objects = _objects(2, 2000)
    _write_jsonl(tmp_path / "a.jsonl", objects)
    shutil.copy(tmp_path / "a.jsonl", tmp_path / "b1.jsonl")
    opts = LoadOptions(confidence_key="meta.c", outcome_key="correct", rescale=parse_rescale("0,200"))
    _same_load(tmp_path / "a.jsonl", str(tmp_path / "b*.jsonl"), opts)


def _frame(seed: int, n: int) -> pd.DataFrame:
    """Typed rows, as a Parquet or CSV export holds them: string confidences (some bad)
    and string outcomes, or numbers and booleans."""
    rng = random.Random(seed)
    conf = [rng.choice(["40", "85", " 70 ", "90%", "abc", None, "1e400", "95"]) for _ in range(n)]
    out = [rng.choice(["yes", "no", "C", "I", "maybe", None, "true", "0"]) for _ in range(n)]
    return pd.DataFrame({"id": [f"q{i}" for i in range(n)], "subject": [rng.choice(["a", "b"]) for _ in range(n)],
                         "confidence": conf, "correct": out})


def _as_jsonl(df: pd.DataFrame, path: Path) -> None:
    # a missing cell (None, or NaN in a pandas string column) is an absent key, as in a log
    rows = [{k: v for k, v in r.items() if not pd.isna(v)} for r in df.to_dict(orient="records")]
    _write_jsonl(path, rows)  # type: ignore[arg-type]


@pytest.mark.parametrize("group", [None, "subject"])
def test_parquet_folder_equals_the_python_reader(tmp_path: Path, group: str | None) -> None:
    df = _frame(3, 3000)
    _as_jsonl(df, tmp_path / "ref.jsonl")
    logs = tmp_path / "logs"
    logs.mkdir()
    df.iloc[:1000].to_parquet(logs / "a.parquet")
    df.iloc[1000:].to_parquet(logs / "b.parquet")
    assert warehouse.is_glob_input(logs)  # a folder of Parquet files only
    _same_load(tmp_path / "ref.jsonl", str(logs), LoadOptions(group_key=group))


def test_typed_parquet_and_csv_gz_globs(tmp_path: Path) -> None:
    rng = random.Random(4)
    n = 3000
    df = pd.DataFrame({"id": [f"q{i}" for i in range(n)],
                       "confidence": [rng.choice([0.4, 0.55, 0.7, 0.9, 1.0, None]) for _ in range(n)],
                       "correct": [rng.choice([True, False, None]) for _ in range(n)]})
    _as_jsonl(df, tmp_path / "ref.jsonl")
    df.to_parquet(tmp_path / "t1.parquet")
    _same_load(tmp_path / "ref.jsonl", str(tmp_path / "t*.parquet"), LoadOptions())
    df.to_csv(tmp_path / "c1.csv.gz", index=False)
    _same_load(tmp_path / "ref.jsonl", str(tmp_path / "c*.csv.gz"), LoadOptions())


def test_scale_sample_keeps_every_count_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    objects = _objects(5, 3000)
    _write_jsonl(tmp_path / "x1.jsonl", objects)
    full = load(str(tmp_path / "x*.jsonl"))
    monkeypatch.setattr(warehouse, "WAREHOUSE_SCALE_ROWS", 50)  # the bulk rule on a proportional sample
    sampled = load(str(tmp_path / "x*.jsonl"))
    assert sampled.report.dropped_by_reason == full.report.dropped_by_reason
    assert sampled.table.n.tolist() == full.table.n.tolist()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "calib", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.slow  # two CLI subprocesses on 9,000 rows: 6 s
def test_cli_audit_glob_json_and_bad_input(tmp_path: Path) -> None:
    objects = _objects(6, 1500)
    _write_jsonl(tmp_path / "ref.jsonl", objects)
    _write_jsonl(tmp_path / "p1.jsonl.gz", objects)
    got = _cli("audit", str(tmp_path / "p*.jsonl.gz"), "--json", "--reps", "100")
    ref = _cli("audit", str(tmp_path / "ref.jsonl"), "--json", "--reps", "100")
    assert got.returncode == ref.returncode, got.stderr
    a, b = json.loads(got.stdout), json.loads(ref.stdout)
    la, lb = a.pop("load_report"), b.pop("load_report")
    assert la["dropped_by_reason"] == lb["dropped_by_reason"] and la["kept"] == lb["kept"]
    a.pop("name", None), b.pop("name", None)
    same_json(a, b)
    # bad input: exit 2 with the pattern and the reason, never a traceback
    (tmp_path / "m.csv").write_text("confidence,correct\n0.5,1\n")
    (tmp_path / "m.parquet").write_bytes(b"")
    for args, words in (([str(tmp_path / "none*.parquet")], "no file matches"),
                        ([str(tmp_path / "m.*")], "several formats"),
                        ([str(tmp_path / "p*.jsonl.gz"), "--confidence-key", "nope"], "no usable row"),
                        ([str(tmp_path / "m*.csv"), "--outcome-key", "absent"], "cannot read with DuckDB")):
        out = _cli("audit", *args)
        assert out.returncode == 2, (args, out.stderr)
        assert words in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_bom_and_crlf_lines(tmp_path: Path) -> None:
    objects = _objects(7, 1500)
    text = "\ufeff" + "".join((o if isinstance(o, str) else json.dumps(o)) + "\r\n" for o in objects)
    (tmp_path / "ref.jsonl").write_bytes(text.encode())
    (tmp_path / "w1.jsonl").write_bytes(text.encode())
    _same_load(tmp_path / "ref.jsonl", str(tmp_path / "w*.jsonl"), LoadOptions())


def test_bad_memory_setting_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_jsonl(tmp_path / "m1.jsonl", _objects(8, 50))
    monkeypatch.setenv("CALIB_DUCKDB_MEMORY", "lots")
    with pytest.raises(CalibError, match="CALIB_DUCKDB_MEMORY"):
        load(str(tmp_path / "m*.jsonl"))


def test_out_of_core_strict_and_cell_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory limit far below the data still gives the same counts (DuckDB spills);
    --strict refuses bad rows; more cells than max_cells are refused before the table."""
    n = 200_000
    rng = random.Random(9)
    df = pd.DataFrame({"confidence": [rng.randrange(0, 101) for _ in range(n)],
                       "correct": [rng.random() < 0.6 for _ in range(n)],
                       "subject": [f"s{rng.randrange(5000)}" for _ in range(n)]})
    df.to_parquet(tmp_path / "big.parquet")
    ref = df.groupby(["subject", "confidence"])["correct"].agg(["size", "sum"])
    monkeypatch.setenv("CALIB_DUCKDB_MEMORY", "40MB")
    # 5,000 groups: over the default groups cap, raised here (this test is of the memory and cells)
    got = load(str(tmp_path / "b*.parquet"),
               options=LoadOptions(group_key="subject", max_cells=10**6, max_groups=10**4))
    assert got.table.total == n and got.table.cells == len(ref)
    assert sorted(got.table.n.tolist()) == sorted(ref["size"].tolist())
    with pytest.raises(CalibError, match="distinct"):
        load(str(tmp_path / "b*.parquet"), options=LoadOptions(group_key="subject", max_cells=1000))
    _write_jsonl(tmp_path / "s1.jsonl", _objects(10, 500))
    with pytest.raises(CalibError, match="strict"):
        load(str(tmp_path / "s*.jsonl"), options=LoadOptions(strict=True))


# ---------------------------------------------------------------- clusters (--cluster-key)
def _clustered_objects(seed: int, items: int, epochs: int) -> list[object]:
    """Each item judged ``epochs`` times (a JSONL of epochs), its label in ``item`` of
    every kind a log may hold: text, whole numbers, booleans (two items share ``true``),
    and rows without one (absent, null, "", an object, an array), plus the bad values of
    :func:`_objects` on some rows."""
    rng = random.Random(seed)
    kinds: list[object] = []
    for i in range(items):
        r = rng.random()
        kinds.append(f"q{i}" if r < 0.7 else i if r < 0.85 else True if r < 0.87 else
                     rng.choice([None, "", {"x": 1}, [1], "absent"]))
    out: list[object] = []
    bad = _objects(seed, items * epochs)
    for e in range(epochs):
        for i in range(items):
            obj = bad[e * items + i]
            if isinstance(obj, str):
                out.append(obj)
                continue
            obj = dict(obj)  # type: ignore[arg-type]
            obj.pop("id", None)
            if kinds[i] != "absent":
                obj["item"] = kinds[i]
            # an item's skill: its rows agree more than independent rows would
            obj["correct"] = obj.get("correct") if rng.random() < 0.3 else (i % 3 != 0)
            out.append(obj)
    return out


def _same_clustered(ref_path: Path, glob: str, options: LoadOptions) -> None:
    ref, got = load(ref_path, options=options), load(glob, options=options)
    assert ref.table.clusters is not None and got.table.clusters is not None
    for k in COUNTS:
        assert getattr(got.report, k) == getattr(ref.report, k), k
    assert got.report.fields["cluster"] == ref.report.fields["cluster"] == options.cluster_key
    # the same clusters: the note (counts, rows without a value) and the per-cluster counts
    note = next(x for x in ref.report.notes if x.startswith("clusters: "))
    assert note in got.report.notes
    for part in ("n", "k"):
        a, b = getattr(ref.table.clusters, part), getattr(got.table.clusters, part)
        assert sorted(map(tuple, a.toarray().tolist())) == sorted(map(tuple, b.toarray().tolist())), part
    a_ref = audit(ref.table, reps=200, seed=7, name="j", load_report=ref.report).to_dict()
    a_got = audit(got.table, reps=200, seed=7, name="j", load_report=got.report).to_dict()
    a_ref.pop("load_report"), a_got.pop("load_report")
    assert a_ref["clusters"]["count"] == ref.table.clusters.count
    same_json(a_got, a_ref)


@pytest.mark.parametrize("group", [None, "subject"], ids=["pooled", "by-group"])
def test_jsonl_glob_with_clusters_equals_the_python_reader(tmp_path: Path, group: str | None) -> None:
    objects = _clustered_objects(11, 300, 4)
    _write_jsonl(tmp_path / "all.jsonl", objects)
    logs = tmp_path / "logs"
    logs.mkdir()
    for i, part in enumerate((objects[:500], objects[500:900], objects[900:])):
        _write_jsonl(logs / (f"epochs{i}.jsonl" + (".gz" if i == 2 else "")), part)
    opts = LoadOptions(group_key=group, cluster_key="item")
    ref = load(tmp_path / "all.jsonl", options=opts)
    assert "row(s) without a value are each their own cluster" in " ".join(ref.report.notes)
    _same_clustered(tmp_path / "all.jsonl", str(logs / "epochs*"), opts)
    # the intervals widen as they do for the file: clusters are resampled, not rows
    def width(options: LoadOptions) -> float:
        lo, hi = audit(load(str(logs / "epochs*"), options=options).table, reps=400, seed=1).to_dict()["accuracy_ci"]
        return hi - lo

    assert width(opts) > 1.3 * width(LoadOptions(group_key=group))


def test_parquet_glob_with_clusters_text_and_integer_columns(tmp_path: Path) -> None:
    rng = random.Random(12)
    rows = [{"item": f"q{i % 250}", "num": i % 250, "flag": (i % 250) < 3, "confidence": rng.choice([60, 80, 95]),
             "correct": rng.random() < 0.3 + 0.002 * (i % 250)} for i in range(1000)]
    df = pd.DataFrame(rows)
    df.loc[df.index % 97 == 0, "item"] = None  # rows without a label: their own clusters
    _as_jsonl(df, tmp_path / "ref.jsonl")
    logs = tmp_path / "logs"
    logs.mkdir()
    df.iloc[:400].to_parquet(logs / "a.parquet")
    df.iloc[400:].to_parquet(logs / "b.parquet")
    for key in ("item", "num", "flag"):
        _same_clustered(tmp_path / "ref.jsonl", str(logs), LoadOptions(cluster_key=key))


def test_glob_cluster_key_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    df = pd.DataFrame({"item": [f"q{i}" for i in range(40)], "confidence": [80] * 40, "correct": [True] * 40})
    df.to_parquet(tmp_path / "a.parquet")
    with pytest.raises(CalibError, match=r"--cluster-key nope: the files have no column 'nope'; columns: item, "):
        load(str(tmp_path / "*.parquet"), options=LoadOptions(cluster_key="nope"))
    _write_jsonl(tmp_path / "x1.jsonl", [{"confidence": 80, "correct": True}] * 5)
    with pytest.raises(CalibError, match=r"--cluster-key item: no row has the field 'item'"):
        load(str(tmp_path / "x*.jsonl"), options=LoadOptions(cluster_key="item"))
    monkeypatch.setattr(warehouse, "WAREHOUSE_MAX_CLUSTER_PAIRS", 30)
    with pytest.raises(CalibError, match=r"more than 30 \(cluster, confidence\) pairs; refused"):
        load(str(tmp_path / "*.parquet"), options=LoadOptions(cluster_key="item"))
    # "none", or no key: independent rows, and the note says how to name the clusters
    for key in (None, "none"):
        ds = load(str(tmp_path / "*.parquet"), options=LoadOptions(cluster_key=key))
        assert ds.table.clusters is None
        assert any("--cluster-key to resample items" in n for n in ds.report.notes)


def test_duckdb_draws_no_progress_bar(tmp_path: Path) -> None:
    """A query past two seconds would draw DuckDB's progress bar on the terminal, in the
    middle of the report or of the JSON the command prints."""
    con = warehouse._connect(str(tmp_path))
    try:
        assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False
    finally:
        con.close()


# --------------------------------------------------------------- globs that never loop or re-expand (issue 22)
def _good_jsonl(path: Path, n: int) -> None:
    path.write_text("".join(json.dumps({"confidence": 50 + 10 * (i % 5), "correct": i % 2 == 0}) + "\n"
                            for i in range(n)))


def test_a_recursive_glob_never_follows_a_symlink_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``logs/loop -> logs``: glob.glob descended it until the kernel's 40-link limit (one
    loop: each file read ~40 times; two loops: 2**40 paths). Each file is read once."""
    logs = tmp_path / "logs"
    (logs / "sub").mkdir(parents=True)
    _good_jsonl(logs / "a.jsonl", 7)
    _good_jsonl(logs / "sub" / "b.jsonl", 5)
    (logs / "loop").symlink_to(logs, target_is_directory=True)
    ds = load(str(logs / "**" / "*.jsonl"))
    assert ds.report.kept == 12
    assert any("from 2 jsonl file(s)" in n for n in ds.report.notes)
    monkeypatch.setattr(warehouse, "MAX_FILES", 1)
    with pytest.raises(CalibError, match="matches more than 1 files"):
        load(str(logs / "**" / "*.jsonl"))


def test_a_file_name_with_glob_characters_is_read_once(tmp_path: Path) -> None:
    """DuckDB expands ``*``, ``?`` and ``[`` in the names it is given: ``run1*.jsonl``
    read ``run1.jsonl`` and ``run12.jsonl`` a second time."""
    d = tmp_path / "runs"
    d.mkdir()
    sizes = {"run1.jsonl": 3, "run1*.jsonl": 5, "run12.jsonl": 11, "run[12].jsonl": 13, "run?.jsonl": 17}
    for name, n in sizes.items():
        _good_jsonl(d / name, n)
    ds = load(str(d / "*.jsonl"))
    assert ds.report.kept == sum(sizes.values())


def test_a_bad_file_in_a_glob_is_named_and_skipped(tmp_path: Path) -> None:
    """A CSV with a ragged line past DuckDB's sniffing sample, among good files: it used
    to refuse the whole glob with "CSV Error on Line: 30002" and no file name. It is
    skipped as a bad line is, the report naming it with the reason and the line; --strict
    refuses it by name."""
    d = tmp_path / "csvs"
    d.mkdir()
    for name, n in (("a.csv", 4), ("c.csv", 6)):
        (d / name).write_text("confidence,correct\n" + "".join(f"{60 + 10 * (i % 3)},{i % 2}\n" for i in range(n)))
    bad = d / "b.csv"
    bad.write_text("confidence,correct\n" + "80,1\n" * 30_000 + "90,0,extra\n70,1\n")
    ds = load(str(d / "*.csv"))
    assert ds.report.kept == 10
    issues = [i for i in ds.report.issues if i.source == str(bad)]
    assert len(issues) == 1 and issues[0].reason == "unreadable file" and issues[0].line == 30_002, ds.report.issues
    assert "Expected Number of Columns: 2 Found: 3" in issues[0].detail
    assert any(str(bad) in n for n in ds.report.notes)
    with pytest.raises(CalibError, match="strict mode refuses") as err:
        load(str(d / "*.csv"), options=LoadOptions(strict=True))
    assert str(bad) in str(err.value)
    out = subprocess.run([sys.executable, "-m", "calib", "audit", str(d / "*.csv"), "--reps", "0"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and str(bad) in out.stdout + out.stderr, out.stdout + out.stderr


def test_a_glob_over_the_groups_cap_is_refused_as_a_file_is(tmp_path: Path) -> None:
    """CALIB_MAX_GROUPS (LoadOptions.max_groups) holds for a glob as for one file, with
    the same words, at load (before any per-group audit): 5 groups with a cap of 4."""
    rows = [{"confidence": 60 + 10 * (i % 4), "correct": i % 3 > 0, "subject": f"s{i % 5}"} for i in range(200)]
    _write_jsonl(tmp_path / "one.jsonl", rows)  # type: ignore[arg-type]
    (tmp_path / "logs").mkdir()
    _write_jsonl(tmp_path / "logs" / "a.jsonl", rows[:100])  # type: ignore[arg-type]
    _write_jsonl(tmp_path / "logs" / "b.jsonl", rows[100:])  # type: ignore[arg-type]
    capped = LoadOptions(group_key="subject", max_groups=4)
    with pytest.raises(CalibError) as file_error:
        load(tmp_path / "one.jsonl", options=capped)
    pattern = str(tmp_path / "logs" / "*.jsonl")
    with pytest.raises(CalibError) as glob_error:
        load(pattern, options=capped)
    assert "5 groups" in str(glob_error.value) and "CALIB_MAX_GROUPS" in str(glob_error.value)
    # the same words, after the input's name (the pattern, as in the glob's other messages)
    assert str(file_error.value).startswith("one.jsonl: ") and str(glob_error.value).startswith(pattern + ": ")
    assert str(glob_error.value)[len(pattern):] == str(file_error.value)[len("one.jsonl"):]
    # at the cap, both load, with the groups the rows have
    at_cap = LoadOptions(group_key="subject", max_groups=5)
    assert sorted(load(pattern, options=at_cap).table.groups) == [f"s{i}" for i in range(5)]
