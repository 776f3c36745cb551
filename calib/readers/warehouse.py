"""Logs bigger than memory: a glob or folder of Parquet, JSONL or CSV files reduced in DuckDB.

Contract
--------
:func:`load_glob` takes a pattern (``logs/*.parquet``, ``runs/*.jsonl.gz``) or a folder
of Parquet files and returns a :class:`~calib.dataset.Dataset` with a count table and no
rows. The rows never reach Python: DuckDB (embedded, ``SET memory_limit``, spilling to a
temporary folder) reads only the used columns and runs one ``GROUP BY`` over
(reason, group, value, written form). What is decided is decided as the stated reader
decides it, in one place each:

- the fields: :func:`calib.readers.stated.fields._resolve` on the first objects (JSONL:
  the first lines parsed by the stated reader's sampler; Parquet/CSV: the first rows);
- the value rules and their reasons: :func:`calib.sql.rules` (the SQL twin of
  :mod:`calib.readers.stated.rules`), and for JSONL lines ``invalid JSON`` / ``not a
  JSON object`` and blank lines;
- the scale: :func:`calib.scale.read_scale` on the distinct (value, form) cells, each
  repeated by its count (beyond :data:`calib.settings.WAREHOUSE_SCALE_ROWS` in
  proportion to it: every count stays exact, only the bulk rule's 5% is then judged on
  the proportional sample); ``outside the scale`` and ``ambiguous scale`` count whole cells.

``--strict`` refuses a glob with any bad row (the counts by reason, no line numbers); more
than ``options.max_cells`` distinct (group, value) cells are refused (round continuous
probabilities first); ``options.max_rows`` does not apply: this path is for big inputs.

Not read here (said in the report's notes): ids and question text (so no clusters of
repeated ids: intervals treat rows as independent), examples of bad lines, an outcome
derived from a prediction and a gold answer (name ``--outcome-key``), and the
per-line checks pyarrow and Python disagree on (``not UTF-8``, ``duplicate key``,
``truncated line``, ``line too long``).
"""

from __future__ import annotations

import glob as globlib
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.loadreport import LoadReport
from calib.readers.base import LoadOptions
from calib.readers.jsonl import R_JSON, R_NOT_OBJECT
from calib.readers.stated.fields import (
    SAMPLE_LINES,
    SAMPLE_OBJECTS,
    _Fields,
    _resolve,
    _Sample,
    _sample,
)
from calib.readers.stated.rules import MISSING_GROUP, R_AMBIGUOUS, R_OUTSIDE
from calib.scale import AMBIGUOUS, FORM_NUMBER, FORM_PERCENT, OUTSIDE, read_scale, snap
from calib.settings import WAREHOUSE_MEMORY, WAREHOUSE_SCALE_ROWS
from calib.sql import dialect, rules
from calib.table import from_counts

KINDS = {"parquet": (".parquet",), "jsonl": (".jsonl", ".ndjson", ".json"), "csv": (".csv",)}
_BLANK = "\x00blank"
_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
            "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL")


def is_glob_input(path: str | Path) -> bool:
    """Whether ``path`` is for this reader: a glob pattern, or a folder holding only
    Parquet files (a folder of JSONL is an lm-eval output folder: :mod:`calib.readers.lmeval`)."""
    text = str(path)
    if any(c in text for c in "*?[") and not Path(text).exists():
        return True
    p = Path(text)
    if not p.is_dir():
        return False
    files = [f for f in p.iterdir() if f.is_file()]
    return bool(files) and all(f.name.lower().endswith(".parquet") for f in files)


def _default_name(pattern: str) -> str:
    """The folder's name, or the pattern's fixed start (``logs/run-*.jsonl`` -> ``run``)."""
    p = Path(pattern.rstrip("/"))
    stem = p.name.split("*")[0].split("?")[0].split("[")[0].rstrip("_-.")
    if p.is_dir() or not stem:
        return (p if p.is_dir() else p.parent).name or "logs"
    return stem


def _files(pattern: str) -> tuple[list[str], str]:
    """The files matched and their kind (``parquet``, ``jsonl`` or ``csv``; ``.gz`` allowed)."""
    p = Path(pattern)
    files = sorted(str(f) for f in p.iterdir() if f.is_file()) if p.is_dir() else sorted(
        f for f in globlib.glob(pattern, recursive=True) if Path(f).is_file())
    if not files:
        raise CalibError(f"{pattern}: no file matches this pattern")
    kinds = set()
    for f in files:
        low = f.lower().removesuffix(".gz")
        kind = next((k for k, ends in KINDS.items() if low.endswith(ends)), None)
        if kind is None:
            raise CalibError(f"{f}: matched by {pattern} but not .parquet, .jsonl, .ndjson, .json or .csv "
                             "(optionally .gz); narrow the pattern")
        kinds.add(kind)
    if len(kinds) > 1:
        raise CalibError(f"{pattern}: matches files of several formats ({', '.join(sorted(kinds))}); "
                         "give one pattern per format")
    return files, kinds.pop()


def _connect(temp: str) -> Any:
    """An in-memory DuckDB that spills to ``temp`` beyond its memory limit."""
    try:
        import duckdb
    except ImportError:  # pragma: no cover - duckdb is a runtime requirement
        raise CalibError("reading a glob of files needs the duckdb package (pip install duckdb)") from None
    con = duckdb.connect(":memory:")
    limit = os.environ.get("CALIB_DUCKDB_MEMORY", WAREHOUSE_MEMORY)
    try:
        con.execute(f"SET memory_limit = '{limit.replace(chr(39), '')}'")
    except duckdb.Error:
        con.close()
        raise CalibError(f"CALIB_DUCKDB_MEMORY: {limit!r} is not a memory size (e.g. 512MB, 2GB)") from None
    con.execute(f"SET temp_directory = '{temp.replace(chr(39), chr(39) * 2)}'")
    con.execute("SET preserve_insertion_order = false")  # lets the GROUP BY stream
    return con


def _list(files: list[str]) -> str:
    return "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"


def _source(kind: str, files: list[str]) -> str:
    """The FROM clause of the files; JSONL as one text column ``line`` (blank lines NULL)."""
    if kind == "parquet":
        return f"read_parquet({_list(files)}, union_by_name = true)"
    if kind == "csv":
        return f"read_csv({_list(files)}, union_by_name = true)"
    # one column per line: the delimiter is a raw U+0001, which valid JSON never holds
    # unescaped; a byte-order mark at a line's start is dropped, as the line reader does
    lines = (f"read_csv({_list(files)}, columns = {{'line': 'VARCHAR'}}, delim = '\x01', quote = '', "
             "escape = '', header = false, auto_detect = false, strict_mode = false)")
    return f"(SELECT ltrim(line, '\ufeff') AS line FROM {lines})"


def _json_path(path: tuple[str, ...]) -> str:
    return "'$" + "".join('."' + p.replace('"', '\\"').replace("'", "''") + '"' for p in path) + "'"


def _json_value(path: tuple[str, ...]) -> tuple[str, str]:
    """(text, kind) of a JSON field (:mod:`calib.sql`'s kinds, from ``json_type``)."""
    jp = _json_path(path)
    kind = (f"CASE json_type(json_extract(j, {jp})) WHEN 'BOOLEAN' THEN 'B' WHEN 'VARCHAR' THEN 'S' "
            f"WHEN 'BIGINT' THEN 'F' WHEN 'UBIGINT' THEN 'F' WHEN 'DOUBLE' THEN 'F' WHEN 'HUGEINT' THEN 'F' "
            f"WHEN 'OBJECT' THEN 'O' WHEN 'ARRAY' THEN 'O' ELSE 'N' END")
    return f"json_extract_string(j, {jp})", kind


def _column_value(path: tuple[str, ...], types: dict[str, str]) -> tuple[str, str]:
    """(column, kind) of a typed column (a struct field for a dotted path); the kind of a
    non-null value, from the column's type."""
    col = ".".join('"' + p.replace('"', '""') + '"' for p in path)
    top = types.get(path[0], "")
    if len(path) > 1 and not top.startswith("STRUCT"):
        return "NULL", "'N'"
    base = top.split("(")[0] if len(path) == 1 else "STRUCT"
    k = "'B'" if base == "BOOLEAN" else "'F'" if base in _NUMERIC else "'S'" if base == "VARCHAR" else "'O'"
    return col, k


def _fields(con: Any, kind: str, src: str, name: str, options: LoadOptions) -> tuple[_Fields, list[str], dict]:
    """The fields, found by the stated reader's rules on the first lines or rows."""
    types: dict[str, str] = {}
    if kind == "jsonl":
        lines = con.execute(f"SELECT line FROM {src} LIMIT {SAMPLE_LINES}").fetchall()
        data = "\n".join(line or "" for (line,) in lines).encode("utf-8")
        sample = _sample(data, name, options.max_line_chars)
    else:
        rel = con.sql(f"SELECT * FROM {src} LIMIT {SAMPLE_OBJECTS}")
        types = dict(zip(rel.columns, map(str, rel.types), strict=True))
        sample = _Sample([dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall()])
    fields, notes = _resolve(sample, options, name)
    if fields.outcome is None:
        raise CalibError(f"{name}: no outcome field found (a prediction and a gold answer are compared "
                         "only by the line reader); name it with --outcome-key")
    return fields, notes, types


def _query(kind: str, src: str, fields: _Fields, types: dict[str, str]) -> str:
    """The GROUP BY over (reason, group, value, percent). The rows never leave DuckDB and
    are grouped first by their raw values (native columns: fast), so that the rules
    (:func:`calib.sql.rules`) run once per distinct (confidence, outcome, group)."""
    assert fields.outcome is not None
    keys = [fields.confidence, fields.outcome, *([fields.group] if fields.group else [])]
    if kind == "jsonl":
        (ct, ck), (ot, ok), *grp = (_json_value(k.path) for k in keys)
        g = grp[0][0] if grp else "NULL"
        line_reason = (f"CASE WHEN line IS NULL OR trim(line, ' \t\r') = '' THEN '{_BLANK}' "
                       f"WHEN j IS NULL THEN '{R_JSON}' WHEN json_type(j) <> 'OBJECT' THEN '{R_NOT_OBJECT}' END")
        inner = f"(SELECT *, CASE WHEN json_valid(line) THEN CAST(line AS JSON) END AS j FROM {src})"
        raw = (f"SELECT {line_reason} AS lr, {ct} AS ct, {ck} AS ck, {ot} AS ot, {ok} AS ok, {g} AS g, "
               f"COUNT(*) AS n FROM {inner} GROUP BY ALL")
        typed = "SELECT * FROM raw"
    else:
        (c0, ck), (o0, ok), *grp = (_column_value(k.path, types) for k in keys)
        g0 = grp[0][0] if grp else "NULL"
        raw = f"SELECT {c0} AS c0, {o0} AS o0, {g0} AS g0, COUNT(*) AS n FROM {src} GROUP BY ALL"
        typed = (f"SELECT NULL AS lr, CAST(c0 AS VARCHAR) AS ct, CASE WHEN c0 IS NULL THEN 'N' ELSE {ck} END AS ck, "
                 f"CAST(o0 AS VARCHAR) AS ot, CASE WHEN o0 IS NULL THEN 'N' ELSE {ok} END AS ok, "
                 "CAST(g0 AS VARCHAR) AS g, n FROM raw")
    r = rules(dialect("duckdb"), "ct", "ck", "ot", "ok")
    return (
        f"WITH raw AS ({raw}),\nt AS ({typed}),\n"
        f"judged AS (SELECT COALESCE(lr, {r.reason()}) AS reason, COALESCE(g, '{MISSING_GROUP}') AS g, "
        f"{r.conf_value} AS v, {r.conf_percent} AS pct, {r.correct} AS y, n FROM t)\n"
        "SELECT reason, CASE WHEN reason IS NULL THEN g END AS g, CASE WHEN reason IS NULL THEN v END AS v, "
        "CASE WHEN reason IS NULL THEN pct END AS pct, SUM(n) AS n, "
        "SUM(CASE WHEN reason IS NULL AND y THEN n ELSE 0 END) AS k\n"
        "FROM judged GROUP BY ALL"
    )


def load_glob(pattern: str, *, name: str | None = None, options: LoadOptions | None = None) -> Dataset:
    """Reduce the files ``pattern`` matches to a count table in DuckDB (module docstring).

    Raises
    ------
    CalibError
        No file matches, mixed formats, no confidence or outcome field, a named field
        absent from the files, no usable row, an undetectable scale.
    """
    options = options or LoadOptions()
    files, kind = _files(pattern)
    ds_name = name or _default_name(pattern)
    src = _source(kind, files)
    with tempfile.TemporaryDirectory(prefix="calib-duckdb-") as temp:
        con = _connect(temp)
        try:
            fields, notes, types = _fields(con, kind, src, pattern, options)
            # at most max_cells + 1 cells come back: continuous values need ROUND first
            cells = con.execute(_query(kind, src, fields, types) + f" LIMIT {options.max_cells + 2}").fetchall()
        except CalibError:
            raise
        except Exception as exc:  # duckdb raises many types for unreadable files or absent columns
            raise CalibError(f"{pattern}: cannot read with DuckDB: {str(exc).splitlines()[0]}") from None
        finally:
            con.close()
    return _dataset(ds_name, pattern, kind, len(files), fields, notes, cells, options)


def _dataset(name: str, pattern: str, kind: str, n_files: int, fields: _Fields, notes: list[str],
             cells: list[tuple], options: LoadOptions) -> Dataset:
    """The cells DuckDB returned as a count table and a load report."""
    counts: Counter[str] = Counter()
    good = [c for c in cells if c[0] is None]
    for reason, _g, _v, _p, n, _k in cells:
        if reason is not None:
            counts[reason] += int(n)
    blank = counts.pop(_BLANK, 0)
    if len(good) > options.max_cells:
        raise CalibError(f"{pattern}: more than {options.max_cells:,} distinct (group, confidence) cells; refused "
                         "(continuous probabilities: round them first, or raise CALIB_MAX_CELLS)")
    if options.strict and counts:
        raise CalibError(f"{pattern}: {sum(counts.values()):,} bad rows ({', '.join(sorted(counts))}); strict "
                         "mode refuses them (a glob gives no line numbers: read one file to find them)")
    g = np.array([c[1] for c in good], dtype=object)
    v = np.array([c[2] for c in good], dtype=np.float64)
    form = np.where(np.array([bool(c[3]) for c in good], dtype=bool), FORM_PERCENT, FORM_NUMBER)
    n = np.array([c[4] for c in good], dtype=np.int64)
    k = np.array([c[5] for c in good], dtype=np.int64)
    if not good:
        raise CalibError(f"{pattern}: no usable row: all {sum(counts.values()):,} non-blank rows were dropped; "
                         f"reasons: {dict(counts.most_common())}")
    reading, stated, bad = _scale(v, form, n, options, pattern)
    for code, reason in ((OUTSIDE, R_OUTSIDE), (AMBIGUOUS, R_AMBIGUOUS)):
        if (bad == code).any():
            counts[reason] += int(n[bad == code].sum())
    keep = bad == 0
    if not keep.any():
        raise CalibError(f"{pattern}: no usable row: every value is outside the scale or ambiguous")
    table = from_counts(snap(stated[keep], reading.scale), n[keep], k[keep], scale=reading.scale,
                        group=None if fields.group is None else g[keep].astype(str))
    notes = [*notes, *reading.notes, *(f"warning: {w}" for w in reading.warnings),
             f"read in DuckDB from {n_files:,} {kind} file(s): {table.total:,} judgments in {table.cells:,} cells",
             "ids and question text are not read from a glob: rows are treated as independent",
             f"scale: {reading.scale.how or reading.scale.name}"]
    report = LoadReport(
        source=pattern, format="stated", lines_read=table.total + int(sum(counts.values())) + blank, blank=blank, kept=table.total, dropped=int(sum(counts.values())),
        dropped_by_reason=dict(sorted(counts.items())), fields=_field_names(fields),
        scale=reading.scale.to_dict(), notes=tuple(notes), forms=dict(reading.forms),
        warnings=tuple(reading.warnings),
    )
    return Dataset(name, table, report, None)


def _field_names(f: _Fields) -> dict[str, str | None]:
    """The report's ``fields``; ids and text are not read from a glob."""
    roles = (("confidence", f.confidence), ("outcome", f.outcome), ("prediction", None), ("gold", None),
             ("group", f.group), ("id", None), ("text", None))
    return {role: None if key is None else key.name for role, key in roles}


def _scale(v: np.ndarray, form: np.ndarray, n: np.ndarray, options: LoadOptions,
           name: str) -> tuple[Any, np.ndarray, np.ndarray]:
    """:func:`calib.scale.read_scale` on the cells, each repeated by its count (in proportion
    beyond :data:`WAREHOUSE_SCALE_ROWS`); returns the reading, each cell's stated value and
    its bad code (a cell's rows share value and form, hence their verdict)."""
    total = int(n.sum())
    reps = n if total <= WAREHOUSE_SCALE_ROWS else np.maximum(1, np.rint(n * (WAREHOUSE_SCALE_ROWS / total)))
    reps = reps.astype(np.int64)
    first = np.concatenate([[0], np.cumsum(reps)[:-1]])
    try:
        reading = read_scale(np.repeat(v, reps), np.repeat(form, reps), given=options.rescale,
                             mixed=options.mixed_scales)
    except CalibError as exc:
        raise CalibError(f"{name}: {exc}") from None
    return reading, reading.stated[first], reading.bad[first]
