"""The SQL value rules (calib.readers.sql) judge every value as the Python rules do, and the
``calib sql`` query, run for real in DuckDB, gives the audit of the rows.

The reference is :mod:`calib.readers.stated.rules` (``_conf_value``, ``_outcome_value``)
value by value, and the stated JSONL reader on the same rows. The Spark query is run
for real in tests/test_sql_spark.py (a local PySpark session); BigQuery and Snowflake
are not run (no engine here): their queries, and Spark's, are checked for their literals,
and every dialect's quoting by that dialect's parser in sqlglot (and by DuckDB and Spark
themselves) on hostile column names.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from calib.audit import audit
from calib.errors import CalibError
from calib.loading import load
from calib.readers import sql
from calib.readers.base import LoadOptions
from calib.readers.stated.rules import (
    _CONF_REASON,
    _OK,
    _OUT_REASON,
    FALSE_TOKENS,
    TRUE_TOKENS,
    _conf_value,
    _outcome_value,
)
from tests.json_compare import same_json

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ["85", " 85 ", "85%", "85 %", " 85% ", "85%%", "%85", "+5", "-5", "5.", ".5", "1e3", "1E-2", "1e400",
          "-1e400", "NaN", "nan", "inf", "Infinity", "0x10", "1_000", "", " ", "abc", "true", "false", "1.0",
          "0.0", "1", "0", "yes", " No ", "C", "i", "T", "F", "pass", "FAILED", "right", "Wrong", "y", "n",
          "2", "0.5", "1.00", "٣", "1,5", "5e", "e5", "--5", "+.5e+2"]


def _random_strings(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = "0123456789.+-eE% abcnyI"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(n)]


def _judge(values: list[object | None]) -> list[tuple]:
    """Each value through the SQL rules, as a warehouse column of text."""
    r = sql.rules(sql.dialect("duckdb"), "c", "ck", "c", "ck")
    df = pd.DataFrame({"i": range(len(values)), "c": pd.Series(values, dtype=object)})
    con = duckdb.connect()
    con.register("v", df)
    return con.execute(
        f"SELECT i, {r.conf_reason}, {r.conf_value}, {r.conf_percent}, {r.outcome_reason}, {r.correct} "
        "FROM (SELECT i, c, CASE WHEN c IS NULL THEN 'N' ELSE 'S' END AS ck FROM v) ORDER BY i"
    ).fetchall()


def _agrees_with_python(v: object, c_reason: object, c_value: object, pct: object, o_reason: object,
                        right: object) -> None:
    """The SQL rules' reasons and values for ``v`` are the Python rules'."""
    status, x, is_pct = _conf_value(v)
    assert c_reason == _CONF_REASON.get(status), v
    if status == _OK:
        assert c_value == x and bool(pct) == is_pct, v
    o_status, o_right = _outcome_value(v)
    assert o_reason == _OUT_REASON.get(o_status), v
    if o_status == _OK:
        assert bool(right) == o_right, v


def test_text_rules_agree_with_python_value_by_value() -> None:
    values: list[object | None] = [None, *CORPUS, *_random_strings(0, 3000), *TRUE_TOKENS, *FALSE_TOKENS]
    for (_, c_reason, c_value, pct, o_reason, right), v in zip(_judge(values), values, strict=True):
        _agrees_with_python(v, c_reason, c_value, pct, o_reason, right)


def test_json_kinds_agree_with_python() -> None:
    """JSON values of every type (the glob reader's path): kind from json_type."""
    from calib.readers.warehouse import _json_value

    values = [None, True, False, 0, 1, 2, -1, 0.5, 1.0, 0.0, 85, 1e300, 10**30, [1], {"a": 1}, "85", "1e400",
              "85%", "yes", "C", " true ", *CORPUS]
    text, kind = _json_value(("x",))
    r = sql.rules(sql.dialect("duckdb"), "ct", "ck", "ct", "ck")
    lines = [json.dumps({"x": v}) if v is not None else "{}" for v in values] + ['{"x": null}']
    con = duckdb.connect()
    con.register("v", pd.DataFrame({"i": range(len(lines)), "line": lines}))
    got = con.execute(
        f"SELECT {r.conf_reason}, {r.conf_value}, {r.conf_percent}, {r.outcome_reason}, {r.correct} FROM "
        f"(SELECT i, {text} AS ct, {kind} AS ck FROM (SELECT i, CAST(line AS JSON) AS j FROM v)) ORDER BY i"
    ).fetchall()
    for (c_reason, c_value, pct, o_reason, right), v in zip(got, [*values, None], strict=True):
        _agrees_with_python(v, c_reason, c_value, pct, o_reason, right)


def _rows(seed: int, n: int) -> pd.DataFrame:
    rng = random.Random(seed)
    return pd.DataFrame({
        "id": [f"q{i}" for i in range(n)],
        "subject": [rng.choice(["bio", "law", None]) for _ in range(n)],
        "confidence": [rng.choice(["40", "55", " 70 ", "85", "90%", "95", "100", "abc", None, "1e400"]) for _ in range(n)],
        "correct": [rng.choice(["yes", "no", "C", "I", "1", "0", "true", "maybe", None]) for _ in range(n)],
    })


@pytest.mark.parametrize("group", [None, "subject"])
def test_duckdb_query_run_for_real_gives_the_audit_of_the_rows(tmp_path: Path, group: str | None) -> None:
    df = _rows(1, 4000)
    src = tmp_path / "judgments.parquet"
    df.to_parquet(src)
    jsonl = tmp_path / "judgments.jsonl"
    jsonl.write_text("".join(json.dumps({k: v for k, v in r.items() if not pd.isna(v)}) + "\n"
                             for r in df.to_dict(orient="records")))
    table = f"read_parquet('{src.as_posix()}')"
    query = sql.aggregation_query("duckdb", "confidence", "correct", group_key=group, table=table)
    counts = tmp_path / "counts.csv"
    duckdb.sql(f"COPY ({query}) TO '{counts.as_posix()}' (FORMAT CSV, HEADER)")
    ref = load(jsonl, options=LoadOptions(group_key=group))
    got = load(counts, options=LoadOptions(rescale=ref.table.scale))
    assert got.table.total == ref.report.kept
    dropped = dict(duckdb.sql(sql.dropped_query("duckdb", "confidence", "correct", table=table)).fetchall())
    assert dropped == ref.report.dropped_by_reason
    a = audit(got.table, reps=200, seed=7, name="j", load_report=got.report).to_dict()
    b = audit(ref.table, reps=200, seed=7, name="j", load_report=ref.report).to_dict()
    a.pop("load_report"), b.pop("load_report")
    same_json(a, b)


def _unescape_backslashes(literal: str) -> str:
    """A Spark/BigQuery/Snowflake string literal's value (backslash escapes)."""
    assert literal[0] == literal[-1] == "'"
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


@pytest.mark.parametrize("name", ["spark", "bigquery", "snowflake"])
def test_other_dialects_quote_and_escape(name: str) -> None:
    q = sql.aggregation_query(name, "conf", "ok", group_key="subject", table="db.judgments")
    quote = "`" if name in ("spark", "bigquery") else '"'
    assert f"{quote}conf{quote}" in q and f"{quote}subject{quote}" in q and f"{quote}group{quote}" in q
    assert q.count("(") == q.count(")") and "FROM db.judgments" in q
    # the regex literals mean, once the dialect unescapes them, the patterns of calib.readers.sql
    d = sql.dialect(name)
    for regex in (sql.CONF_PATTERN, sql.NUMBER_PART, sql.STRIP_PATTERN):
        lit = sql._lit(d, sql.pattern(d, regex))
        assert lit in q
        assert _unescape_backslashes(lit) == sql.pattern(d, regex)
        if name != "snowflake":  # the number is the only capturing group (BigQuery allows one)
            assert re.compile(sql.pattern(d, regex)).groups == (1 if regex == sql.NUMBER_PART else 0)
    assert _unescape_backslashes(sql._lit(d, "it's")) == "it's"


def test_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown SQL dialect"):
        sql.dialect("oracle")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "calib", "sql", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_prints_the_query_and_refuses_bad_flags(tmp_path: Path) -> None:
    out = _cli("--dialect", "duckdb", "--confidence-key", "confidence", "--outcome-key", "correct",
               "--table", "judgments")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == sql.aggregation_query("duckdb", "confidence", "correct") + ";"
    out = _cli("--confidence-key", "c", "--outcome-key", "o", "--dropped")
    assert out.returncode == 0 and "reason" in out.stdout
    for args, words in ((["--confidence-key", " ", "--outcome-key", "o"], "--confidence-key: empty"),
                        (["--dialect", "oracle", "--confidence-key", "c", "--outcome-key", "o"], "invalid choice"),
                        (["--outcome-key", "o"], "--confidence-key")):
        bad = _cli(*args)
        assert bad.returncode == 2 and words in bad.stderr and "Traceback" not in bad.stderr, bad.stderr


# --------------------------------------------------------------- quoting per dialect (issue 22)
#: Column names that break a quoting that is wrong for its dialect: BigQuery reads backslash
#: escapes inside backticks, so a name ending in a backslash used to swallow the closing
#: backtick and run the next key as SQL.
HOSTILE_KEYS = ["ends\\", "back`tick", "\\`", "it's", 'say "hi"', "new\nline", "tab\tcr\r",
                "é 中文 🙂", "`, 1 AS pwned, `", '", 1 AS pwned, "', "a\\\\`b'c\"d"]


def _column_names(query: str, dialect: str) -> list[str]:
    import sqlglot
    from sqlglot import exp

    return [c.name for c in sqlglot.parse_one(query, read=dialect).find_all(exp.Column)]


@pytest.mark.parametrize("name", ["bigquery", "snowflake", "spark", "duckdb"])
def test_every_key_is_exactly_one_identifier_in_the_dialects_own_parser(name: str) -> None:
    """sqlglot's parser for each dialect (BigQuery and Snowflake have no engine here; Spark
    and DuckDB also run for real): with hostile keys in place of plain ones, the query's
    columns are the plain query's with each key once, byte for byte."""
    def queries(c: str, o: str, g: str) -> list[str]:
        return [sql.aggregation_query(name, c, o, group_key=g), sql.dropped_query(name, c, o)]

    plain = [_column_names(q, name) for q in queries("kc", "ko", "kg")]
    assert all(cols.count(k) == 1 for cols in plain[:1] for k in ("kc", "ko", "kg"))
    for i, key in enumerate(HOSTILE_KEYS):
        other, third = HOSTILE_KEYS[(i + 1) % len(HOSTILE_KEYS)], HOSTILE_KEYS[(i + 2) % len(HOSTILE_KEYS)]
        as_key = {"kc": key, "ko": other, "kg": third}
        for q, cols in zip(queries(key, other, third), plain, strict=True):
            assert sorted(_column_names(q, name)) == sorted(as_key.get(c, c) for c in cols), (key, q)


def test_duckdb_runs_the_query_with_hostile_column_names() -> None:
    """DuckDB's own parser and engine: a table whose columns carry the hostile names, the
    counts against a direct count of the rows."""
    keys = HOSTILE_KEYS[:3]  # confidence, outcome, group
    rows = [("80", "true", "a"), ("80", "false", "a"), ("90", "true", "b"), ("x", "true", "b"), ("90", "yes", "b")]
    df = pd.DataFrame(rows, columns=keys)
    con = duckdb.connect()
    con.register("judgments", df)
    got = con.execute(sql.aggregation_query("duckdb", *keys[:2], group_key=keys[2])).fetchall()
    assert got == [("a", 80.0, 2, 1), ("b", 90.0, 2, 2)]
    assert con.execute(sql.dropped_query("duckdb", *keys[:2])).fetchall() == [("non-numeric confidence", 1)]


def test_a_name_with_a_nul_character_is_refused() -> None:
    for name in sql.DIALECTS:
        with pytest.raises(CalibError, match="NUL"):
            sql.aggregation_query(name, "a\x00b", "o")
