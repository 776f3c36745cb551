"""The ``calib sql --dialect spark`` query, run for real in a local PySpark session, gives
the audit of the rows; the Spark SQL rules judge every value as the Python rules do.

The reference is :mod:`calib.readers.stated.rules` (``_conf_value``, ``_outcome_value``)
value by value, and the stated JSONL reader on the same rows (tests/test_sql.py does the
same for DuckDB). One local session for the module (``local[1]``, 512 MB, no UI, bound to
the loopback address); CI gets Java from tests/run.sh (Debian's openjdk-17-jre-headless)
and PySpark from requirements-dev.txt, so nothing here is skipped.

A Parquet column has one type, so the rows come in two forms: every value a string (the
DuckDB test's rows: bad confidences, unknown tokens, percents, spaces), and typed columns
(integer and double confidences, integer, double and boolean outcomes, nulls). Spark reads
each column by its text, as the query says: ``CAST(x AS STRING)``.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from pyspark import SparkContext
from pyspark.sql import SparkSession

from calib.audit import audit
from calib.loading import load
from calib.readers import sql
from calib.readers.base import LoadOptions
from calib.readers.stated.rules import FALSE_TOKENS, TRUE_TOKENS
from tests.cli_run import run
from tests.json_compare import same_json
from tests.test_sql import CORPUS, _agrees_with_python, _random_strings, _rows

# PySpark 4.3 warns at start-up that it does not fully support pandas 3 (pyspark.testing.utils,
# imported by the session); these tests pass no pandas object to Spark (Parquet in, Rows out)
pytestmark = [
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
    pytest.mark.slow,  # a JVM starts: ~12 s before the first test
]


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """One small local Spark session, stopped at the end of the module."""
    work = tmp_path_factory.mktemp("spark")
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("calib-test-sql")
        .config("spark.driver.memory", "512m")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "1")  # a few thousand rows: one task per stage
        .config("spark.sql.warehouse.dir", str(work / "warehouse"))
        .config("spark.local.dir", str(work / "local"))
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # the JVM binds to loopback, no guess from the host name
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
        _stop_jvm()


def _stop_jvm() -> None:
    """End the JVM PySpark started: ``stop()`` leaves it (about 260 MB) running until this
    process exits, i.e. through the rest of the suite. It exits when its standard input
    closes (PySpark's gateway server watches for that)."""
    gateway = SparkContext._gateway
    if gateway is None:
        return
    gateway.shutdown()
    proc = getattr(gateway, "proc", None)
    if proc is not None:
        proc.stdin.close()
        proc.wait(timeout=60)
    SparkContext._gateway = SparkContext._jvm = None


def _spark_judge(spark: SparkSession, values: list[str | None], tmp: Path) -> list[tuple]:
    """Each value through the Spark SQL rules, as a string column (read from Parquet:
    quicker than sending Python rows to the JVM)."""
    r = sql.rules(sql.dialect("spark"), "c", "ck", "c", "ck")
    pd.DataFrame({"i": range(len(values)), "c": pd.Series(values, dtype=object)}).to_parquet(
        tmp / "v.parquet"
    )
    spark.read.parquet(str(tmp / "v.parquet")).createOrReplaceTempView("v")
    rows = spark.sql(
        f"SELECT i, {r.conf_reason}, {r.conf_value}, {r.conf_percent}, {r.outcome_reason}, {r.correct} "
        "FROM (SELECT i, c, CASE WHEN c IS NULL THEN 'N' ELSE 'S' END AS ck FROM v) ORDER BY i"
    ).collect()
    return [tuple(row) for row in rows]


def test_spark_text_rules_agree_with_python_value_by_value(spark: SparkSession, tmp_path: Path) -> None:
    values: list[str | None] = [
        None,
        *CORPUS,
        *_random_strings(0, 3000),
        *TRUE_TOKENS,
        *FALSE_TOKENS,
        "\t85\n",
        "yes\t",
        "1e-400",
        "00085",
        "+0",
        "-0.0",
    ]
    got = _spark_judge(spark, values, tmp_path)
    assert [row[0] for row in got] == list(range(len(values)))
    for (_, c_reason, c_value, pct, o_reason, right), v in zip(got, values, strict=True):
        _agrees_with_python(v, c_reason, c_value, pct, o_reason, right)


def _typed_rows(seed: int, n: int) -> pd.DataFrame:
    """Typed columns (Parquet int64, double, boolean, with nulls): numbers and booleans
    as outcomes, integer and double confidences."""
    rng = random.Random(seed)

    def pick(choices: list[object]) -> list[object]:
        return [rng.choice(choices) for _ in range(n)]

    return pd.DataFrame(
        {
            "id": [f"q{i}" for i in range(n)],
            "subject": pick(["bio", "law", "math", None]),
            "conf_int": pd.array(pick([40, 55, 70, 85, 95, 100, None]), dtype="Int64"),
            "conf_float": pd.array(
                pick([40.0, 55.5, 70.25, 85.0, 95.125, 100.0, 0.0, None]), dtype="Float64"
            ),
            "out_int": pd.array(pick([0, 1, 1, 0, 1, 2, -1, None]), dtype="Int64"),
            "out_float": pd.array(pick([0.0, 1.0, 1.0, 0.5, None]), dtype="Float64"),
            "out_bool": pd.array(pick([True, False, True, None]), dtype="boolean"),
        }
    )


def _jsonl(df: pd.DataFrame, path: Path) -> None:
    """The rows as JSON lines, nulls left out (the Python reader's input)."""
    with path.open("w") as f:
        for r in df.astype(object).to_dict(orient="records"):
            f.write(json.dumps({k: v for k, v in r.items() if v is not None and not pd.isna(v)}) + "\n")


def _cli_query(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """What ``calib sql --dialect spark ...`` prints (run in this process), without its
    closing semicolon."""
    code, out, err = run(["sql", "--dialect", "spark", *args], capsys)
    assert code == 0 and out.rstrip().endswith(";"), err
    return out.strip().removesuffix(";")


CASES = [  # (rows, confidence key, outcome key, group key)
    ("text", "confidence", "correct", None),
    ("text", "confidence", "correct", "subject"),
    ("typed", "conf_int", "out_int", "subject"),
    ("typed", "conf_float", "out_float", None),
    ("typed", "conf_int", "out_bool", None),
    ("typed", "conf_float", "out_bool", "subject"),
]


@pytest.mark.parametrize(("form", "conf", "outcome", "group"), CASES)
def test_spark_query_run_for_real_gives_the_audit_of_the_rows(
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    form: str,
    conf: str,
    outcome: str,
    group: str | None,
) -> None:
    df = _rows(1, 4000) if form == "text" else _typed_rows(2, 4000)
    src = tmp_path / "judgments.parquet"
    df.to_parquet(src)
    jsonl = tmp_path / "judgments.jsonl"
    _jsonl(df[["id", conf, outcome] + ([group] if group else [])], jsonl)
    spark.read.parquet(str(src)).createOrReplaceTempView("judgments")

    keys = ["--confidence-key", conf, "--outcome-key", outcome]
    rows = spark.sql(_cli_query(capsys, *keys, *(["--group-key", group] if group else []))).collect()
    counts = tmp_path / "counts.csv"
    with counts.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow((["group"] if group else []) + ["value", "n", "correct"])
        w.writerows(tuple(r) for r in rows)  # Python floats: repr round-trips every double

    ref = load(jsonl, options=LoadOptions(confidence_key=conf, outcome_key=outcome, group_key=group))
    got = load(counts, options=LoadOptions(rescale=ref.table.scale))
    assert got.table.total == ref.report.kept
    dropped = {r["reason"]: r["n"] for r in spark.sql(_cli_query(capsys, *keys, "--dropped")).collect()}
    assert dropped == ref.report.dropped_by_reason
    assert dropped  # the rows hold bad values of several kinds
    a = audit(got.table, reps=200, seed=7, name="j", load_report=got.report).to_dict()
    b = audit(ref.table, reps=200, seed=7, name="j", load_report=ref.report).to_dict()
    a.pop("load_report"), b.pop("load_report")
    same_json(a, b)


def test_spark_runs_the_query_with_hostile_column_names(spark: SparkSession) -> None:
    """Spark's own parser and engine on the hostile keys of tests/test_sql.py (backslash,
    backtick, quotes, newline, unicode, injections): each column found by its exact name,
    the counts against a direct count of the rows."""
    from pyspark.sql.types import StringType, StructField, StructType

    from tests.test_sql import HOSTILE_KEYS

    rows = [("80", "true", "a"), ("80", "false", "a"), ("90", "true", "b"), ("x", "true", "b"), ("90", "yes", "b")]
    for i in range(0, len(HOSTILE_KEYS), 3):
        keys = [HOSTILE_KEYS[(i + j) % len(HOSTILE_KEYS)] for j in range(3)]
        schema = StructType([StructField(k, StringType()) for k in keys])
        spark.createDataFrame(rows, schema).createOrReplaceTempView("judgments")
        got = [tuple(r) for r in spark.sql(sql.aggregation_query("spark", *keys[:2], group_key=keys[2])).collect()]
        assert got == [("a", 80.0, 2, 1), ("b", 90.0, 2, 2)], keys
        dropped = [tuple(r) for r in spark.sql(sql.dropped_query("spark", *keys[:2])).collect()]
        assert dropped == [("non-numeric confidence", 1)], keys
