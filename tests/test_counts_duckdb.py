"""A warehouse GROUP BY gives the same count table as the rows it summarises.

The SQL below is the one the manual documents (docs/inputs.md): a user with 100M judgments in a
table runs it in DuckDB (or Spark / BigQuery: quote ``group`` with backticks there)
and audits the small result with ``calib``. DuckDB is also what `calib audit GLOB` runs (calib.readers.warehouse).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from calib.audit import audit
from calib.loading import load
from calib.readers.base import LoadOptions
from calib.readers.counts import read_counts
from calib.table import CountTable, from_judgments
from tests.json_compare import same_json

SQL_BY_GROUP = """
SELECT subject AS "group",
       confidence AS value,
       COUNT(*) AS n,
       SUM(CASE WHEN correct THEN 1 ELSE 0 END) AS correct
FROM read_parquet('{src}')
GROUP BY subject, confidence
ORDER BY 1, 2
"""

SQL = """
SELECT confidence AS value,
       COUNT(*) AS n,
       SUM(CASE WHEN correct THEN 1 ELSE 0 END) AS correct
FROM read_parquet('{src}')
GROUP BY confidence
ORDER BY 1
"""


def _rows(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    conf = rng.choice([40, 55, 70, 80, 85, 90, 95, 99, 100], size=n)
    return pd.DataFrame({
        "id": [f"q{i}" for i in range(n)],
        "subject": rng.choice(["biology", "law", "math"], size=n),
        "confidence": conf,
        "correct": rng.random(n) < conf / 120,
    })


def _same_table(a: CountTable, b: CountTable) -> None:
    assert a.groups == b.groups
    assert a.group.tolist() == b.group.tolist()
    assert a.value.tolist() == b.value.tolist()
    assert a.n.tolist() == b.n.tolist()
    assert a.correct.tolist() == b.correct.tolist()
    assert (a.scale.lo, a.scale.hi) == (b.scale.lo, b.scale.hi)
    for f in ("prob", "py_sum", "sq_sum", "nll_sum"):
        assert np.allclose(getattr(a, f), getattr(b, f), rtol=1e-12, atol=1e-12), f


@pytest.mark.parametrize("grouped", [False, True], ids=["pooled", "by-group"])
@pytest.mark.parametrize("out", ["parquet", "csv"])
def test_duckdb_group_by_gives_the_same_table_as_the_rows(tmp_path: Path, grouped: bool, out: str) -> None:
    df = _rows(3, 5000)
    src = tmp_path / "judgments.parquet"
    df.to_parquet(src)
    # the same rows as the JSONL a judge pipeline writes
    jsonl = tmp_path / "judgments.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in df.to_dict(orient="records")))

    sql = (SQL_BY_GROUP if grouped else SQL).format(src=src.as_posix())
    counts = tmp_path / f"counts.{out}"
    fmt = "PARQUET" if out == "parquet" else "CSV, HEADER"
    duckdb.sql(f"COPY ({sql}) TO '{counts.as_posix()}' (FORMAT {fmt})")

    ds_rows = load(jsonl, options=LoadOptions(group_key="subject" if grouped else None))
    from_sql = read_counts(counts)
    _same_table(from_sql, ds_rows.table)
    # loading the count file through the front door gives the same table
    ds_counts = load(counts)
    _same_table(ds_counts.table, ds_rows.table)
    assert ds_counts.rows is None and ds_counts.report.format == "counts"
    # and an independent per-row reference for the numbers in the cells
    ref = df.groupby(["subject", "confidence"] if grouped else ["confidence"])["correct"].agg(["size", "sum"])
    assert from_sql.n.tolist() == ref["size"].tolist()
    assert from_sql.correct.tolist() == ref["sum"].tolist()
    assert from_judgments(ds_rows.rows).n.tolist() == ref["size"].tolist()  # type: ignore[arg-type]
    # the audit of the GROUP BY result is the audit of the rows (same seed), apart
    # from the load report, which describes different files
    a_counts = audit(ds_counts.table, reps=200, seed=7, name="judge", load_report=ds_counts.report).to_dict()
    a_rows = audit(ds_rows.table, reps=200, seed=7, name="judge", load_report=ds_rows.report).to_dict()
    assert a_counts.pop("load_report")["format"] == "counts"
    assert a_rows.pop("load_report")["format"] == "stated"
    same_json(a_counts, a_rows)
    assert a_rows["n"] == len(df) and a_rows["correct"] == int(df["correct"].sum())
    assert len(a_rows.get("groups", [])) == (3 if grouped else 0)
