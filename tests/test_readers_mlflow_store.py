"""MLflow 3's SQLite tracking store (``mlflow.db``), read without ``--format``.

The fixture is the store mlflow 3.18.0 wrote (``tools/make_platform_fixtures.py mlflow-db``,
gzip-compressed); the expected reading of every trace is MLflow's own
``search_traces(return_type="list")`` of that store, recorded beside it
(``tests/data/mlflow-3.18.0/tool_reading_db.json``).
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.readers import mlflow_store
from calib.readers.base import LoadOptions
from calib.traffic.read import load_traffic

DIR = Path(__file__).parent / "data" / "mlflow-3.18.0"
GZ = DIR / "mlflow.db.gz"
TOOL = json.loads((DIR / "tool_reading_db.json").read_text())


def expected(outcome: str = "human_correct") -> dict[str, tuple[float, bool]]:
    """Per trace, MLflow's valid ``correctness`` feedback and its ``outcome`` feedback."""
    want = {}
    for t in TOOL["traces"]:
        by = {a["name"]: a for a in t["assessments"] if a["valid"] is not False}
        j, o = by.get("correctness"), by.get(outcome)
        if j is None or j["feedback"] is None or o is None:
            continue
        want[t["trace_id"]] = (float(j["feedback"]), bool(o["feedback"]))
    return want


def reading(ds) -> dict[str, tuple[float, bool]]:  # type: ignore[no-untyped-def]
    r = ds.rows
    return {str(i): (float(s), bool(c)) for i, s, c in zip(r.item_id, r.stated, r.correct, strict=True)}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The store as the file MLflow leaves: ``mlflow.db``, uncompressed."""
    p = tmp_path / "mlflow.db"
    p.write_bytes(gzip.decompress(GZ.read_bytes()))
    return p


def test_recognised_and_read_as_mlflow_reads_it(db: Path) -> None:
    assert TOOL["mlflow"] == "3.18.0"
    assert sniff_format(db.name, db.read_bytes()) == "mlflow"
    ds = load(db)
    want = expected()
    assert ds.report.format == "mlflow" and reading(ds) == want and len(want) == 35
    assert reading(load(GZ)) == want  # the same store gzip-compressed
    r = ds.report
    assert r.fields["confidence"] == "correctness" and r.fields["outcome"] == "human_correct"
    assert r.notes[0].startswith("MLflow tracking store (SQLite, 1 experiment(s)): 40 trace(s)")
    failed = [t["trace_id"] for t in TOOL["traces"] for a in t["assessments"] if a["error"]]
    assert [i.sample_id for i in r.issues if i.reason == "no confidence"] == failed
    assert "JUDGE_FAILED" in next(i.detail for i in r.issues if i.reason == "no confidence")
    no_human = sorted(t["trace_id"] for t in TOOL["traces"] if "human_correct" not in {a["name"] for a in t["assessments"]})
    assert sorted(i.sample_id for i in r.issues if i.reason == "no outcome") == no_human and len(no_human) == 4


def test_overridden_skipped_sessions_clustered_and_the_code_check(db: Path) -> None:
    invalid = [(t["trace_id"], a["feedback"]) for t in TOOL["traces"] for a in t["assessments"] if a["valid"] is False]
    assert len(invalid) == 1 and invalid[0][1] == 0.2
    ds = load(db)
    assert reading(ds)[invalid[0][0]][0] != 0.2 and "1 overridden (valid: false) skipped" in ds.report.notes[0]
    session = {t["trace_id"]: t["session"] for t in TOOL["traces"]}
    assert ds.rows.cluster.tolist() == [session[i] for i in ds.rows.item_id.tolist()]
    code = load(db, options=LoadOptions(outcome_key="exact_match"))
    assert reading(code) == expected("exact_match") and len(expected("exact_match")) == 39


def test_the_file_is_opened_from_its_bytes_and_never_written(db: Path) -> None:
    before = db.read_bytes()
    load(db)
    assert db.read_bytes() == before and not list(db.parent.glob("mlflow.db-*"))  # no journal, no WAL


def test_the_session_from_older_schemas_metadata(db: Path) -> None:
    """Before ``trace_info.session_id`` the session was trace metadata: read from there."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT request_id, session_id FROM trace_info").fetchall()
        for (index,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = "
                                    "'trace_info' AND sql LIKE '%session_id%'").fetchall():
            con.execute(f'DROP INDEX "{index}"')
        con.execute("ALTER TABLE trace_info DROP COLUMN session_id")
        con.executemany("INSERT INTO trace_request_metadata (key, value, request_id) VALUES "
                        "('mlflow.trace.session', ?, ?)", [(s, t) for t, s in rows])
    ds = load(db)
    session = {t["trace_id"]: t["session"] for t in TOOL["traces"]}
    assert ds.rows.cluster.tolist() == [session[i] for i in ds.rows.item_id.tolist()]


def test_wrong_types_are_named_and_the_rest_kept(db: Path) -> None:
    want = expected()
    ids = sorted(want)
    with sqlite3.connect(db) as con:
        sql = "UPDATE assessments SET value = ? WHERE trace_id = ? AND name = 'correctness' AND valid = 1"
        con.execute(sql, (b"\x00\x01", ids[0]))
        con.execute(sql, ("0.7 (high)", ids[1]))
        con.execute(sql, (7, ids[2]))  # TEXT affinity stores it as the text '7': a number, out of 0-1
        con.execute("UPDATE trace_info SET request_id = 5 WHERE request_id = ?", (ids[3],))
    ds = load(db)
    got = reading(ds)
    assert {k: v for k, v in want.items() if k not in ids[:4]}.items() <= got.items()
    details = {i.sample_id: i.detail for i in ds.report.issues}
    assert "holds a BLOB" in details[ids[0]] and "not JSON: '0.7 (high)'" in details[ids[1]]
    assert ids[0] not in got and ids[1] not in got


def test_not_an_mlflow_store_a_view_and_corruption_are_refused(tmp_path: Path, db: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE t (x)")
    with pytest.raises(CalibError, match="not an MLflow 3 tracking store .table trace_info: no such table"):
        load(other)
    with sqlite3.connect(db) as con:
        con.execute("ALTER TABLE assessments RENAME TO a2")
        con.execute("CREATE VIEW assessments AS SELECT * FROM a2")
    with pytest.raises(CalibError, match="table assessments: no such table"):
        load(db)
    bad = tmp_path / "cut.db"
    bad.write_bytes(gzip.decompress(GZ.read_bytes())[:8192])
    with pytest.raises(CalibError, match="cut.db: "):
        load(bad)


def test_limits_apply_before_the_read(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CalibError, match="40 traces and 157 assessments, over the limit of 10 traces"):
        load(db, options=LoadOptions(max_rows=10))
    monkeypatch.setattr(mlflow_store, "MIN_STEPS", 1_000)
    monkeypatch.setattr(mlflow_store, "STEPS_PER_BYTE", 0)
    with pytest.raises(CalibError, match="could not be read .interrupted"):
        load(db)


def test_traffic_reads_the_judge_without_outcomes(db: Path) -> None:
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM assessments WHERE source_type IN ('HUMAN', 'CODE')")
    with pytest.raises(CalibError, match="nothing to be checked against"):
        load(db)
    tr = load_traffic(str(db))
    judge = {t["trace_id"]: a["feedback"] for t in TOOL["traces"] for a in t["assessments"]
             if a["name"] == "correctness" and a["valid"] is not False and a["feedback"] is not None}
    assert dict(zip(tr.keys, tr.stated.tolist(), strict=True)) == judge


def test_a_folder_holding_mlflow_db_and_an_mlruns_file_store(db: Path, tmp_path: Path) -> None:
    """The folder MLflow tracked into (``mlflow.db`` in it) is read as its store; an
    ``mlruns/`` file store (MLflow 3.18 writes ``<experiment>/traces/<trace>/trace_info.yaml``
    only with ``MLFLOW_ALLOW_FILE_STORE=true``) is refused with MLflow's own conversion."""
    assert reading(load(db.parent)) == expected()
    assert len(load_traffic(str(db.parent))) == 39  # the judge's items; q07's judge failed
    other = tmp_path / "project"
    (other / "mlruns" / "1" / "traces" / "tr-1").mkdir(parents=True)
    (other / "mlruns" / "1" / "traces" / "tr-1" / "trace_info.yaml").write_text("trace_id: tr-1\n")
    for folder in (other, other / "mlruns"):
        with pytest.raises(CalibError, match=r"an MLflow file store .*`mlflow migrate-filestore --source "):
            load(folder)
