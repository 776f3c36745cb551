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
- the value rules and their reasons: :func:`calib.readers.sql.rules` (the SQL twin of
  :mod:`calib.readers.stated.rules`), and for JSONL lines ``invalid JSON`` / ``not a
  JSON object`` and blank lines;
- the scale: :func:`calib.scale.read_scale` on the distinct (value, form) cells, each
  repeated by its count (beyond :data:`calib.settings.WAREHOUSE_SCALE_ROWS` in
  proportion to it: every count stays exact, only the bulk rule's 5% is then judged on
  the proportional sample); ``outside the scale`` and ``ambiguous scale`` count whole cells.

``--strict`` refuses a glob with any bad row (the counts by reason, no line numbers); more
than ``options.max_cells`` distinct (group, value) cells are refused (round continuous
probabilities first); ``options.max_rows`` does not apply: this path is for big inputs.

Clusters: with ``--cluster-key K`` (``options.cluster_key``) the GROUP BY also keeps
field ``K``, and the (cluster, cell) counts come back (at most
:data:`calib.settings.WAREHOUSE_MAX_CLUSTER_PAIRS`) as the table's
:class:`~calib.clusters.Clusters`, as :func:`calib.clusters.infer` makes them from a
single JSONL file: the field's value as text (``True``/``False`` for booleans), a row
without it (absent, null, ``""``, an object or an array) its own cluster. Without the
key, rows are independent: a glob reads no ids, so repeated ids are not looked for.

Not read here (said in the report's notes): ids and question text, examples of bad lines, an outcome
derived from a prediction and a gold answer (name ``--outcome-key``), and the
per-line checks pyarrow and Python disagree on (``not UTF-8``, ``duplicate key``,
``truncated line``, ``line too long``).
"""

from __future__ import annotations

import glob as globlib
import os
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.limits import check_groups
from calib.loadreport import LineIssue, LoadReport
from calib.readers.base import LoadOptions
from calib.readers.jsonl import R_JSON, R_NOT_OBJECT
from calib.readers.sql import dialect, rules
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
from calib.settings import WAREHOUSE_MAX_CLUSTER_PAIRS, WAREHOUSE_MEMORY, WAREHOUSE_SCALE_ROWS
from calib.table import from_counts

KINDS = {"parquet": (".parquet",), "jsonl": (".jsonl", ".ndjson", ".json"), "csv": (".csv",)}
_BLANK = "\x00blank"
R_UNREADABLE = "unreadable file"
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


#: Most files one glob may match (each is opened by DuckDB and probed alone when one is bad).
MAX_FILES = 10_000


def _matches(pattern: str) -> list[str]:
    """The files ``pattern`` matches, at most :data:`MAX_FILES` (more are refused).

    A recursive ``**`` is expanded by :meth:`pathlib.Path.glob`, which never descends a
    symlinked directory there (:func:`glob.glob` does, and loops forever on ``a/loop -> a``);
    a pattern without ``**`` has a fixed depth. Matches are read lazily, so the cap stops
    the walk."""
    p = Path(pattern)
    if p.is_dir():
        found: Any = (str(f) for f in sorted(p.iterdir()))
    elif "**" in pattern:
        parts = p.parts
        first = next(i for i, part in enumerate(parts) if any(c in part for c in "*?["))
        base = Path(*parts[:first]) if first else Path(".")
        found = (str(f) for f in base.glob(str(Path(*parts[first:]))))
    else:
        found = globlib.iglob(pattern)
    files: list[str] = []
    for f in found:
        if Path(f).is_file():
            files.append(f)
            if len(files) > MAX_FILES:
                raise CalibError(f"{pattern}: matches more than {MAX_FILES:,} files; refused (narrow the pattern, "
                                 "or merge the files)")
    return sorted(files)


def _files(pattern: str) -> tuple[list[str], str]:
    """The files matched and their kind (``parquet``, ``jsonl`` or ``csv``; ``.gz`` allowed)."""
    files = _matches(pattern)
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


def _links(files: list[str], kind: str, temp: str) -> dict[str, str]:
    """Each file under a plain name (``000001.jsonl.gz``, a symbolic link in ``temp``) ->
    its own name: DuckDB expands ``*``, ``?`` and ``[`` in every name it is given, so a file
    called ``run1*.jsonl`` would read its siblings again."""
    folder = Path(temp) / "files"
    folder.mkdir()
    links = {}
    for i, f in enumerate(files):
        ext = ".gz" if f.lower().endswith(".gz") else ""
        link = folder / f"{i:06d}.{kind}{ext}"
        link.symlink_to(Path(f).resolve())
        links[str(link)] = f
    return links


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
    # a query past two seconds draws a progress bar on the terminal, in the middle of the
    # report (or of the JSON) the command prints
    con.execute("SET enable_progress_bar = false")
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
    """(text, kind) of a JSON field (:mod:`calib.readers.sql`'s kinds, from ``json_type``)."""
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


def _cluster_value(kind: str, path: tuple[str, ...], types: dict[str, str]) -> str:
    """The cluster label of a row as text, NULL when it has none, as
    :func:`calib.clusters.infer` reads it (Python's ``str`` of the value: ``True`` for a
    JSON true; no label for null, ``""``, an object or an array)."""
    if kind == "jsonl":
        jp = _json_path(path)
        kind_of = f"json_type(json_extract(j, {jp}))"
        text = (f"CASE {kind_of} WHEN 'BOOLEAN' THEN CASE WHEN json_extract_string(j, {jp}) = 'true' "
                f"THEN 'True' ELSE 'False' END WHEN 'OBJECT' THEN NULL WHEN 'ARRAY' THEN NULL "
                f"ELSE json_extract_string(j, {jp}) END")
    else:
        col, k = _column_value(path, types)
        text = ("NULL" if col == "NULL" or k == "'O'" else
                f"CASE WHEN {col} THEN 'True' ELSE 'False' END" if k == "'B'" else f"CAST({col} AS VARCHAR)")
    return f"NULLIF({text}, '')"


def _cluster_path(options: LoadOptions, kind: str, types: dict[str, str], name: str) -> tuple[str, ...] | None:
    """The dotted path of ``--cluster-key``, or ``None`` (no key, or ``none``); a column
    absent from Parquet or CSV files is refused here, before the query runs."""
    from calib.clusters import turned_off

    key = options.cluster_key
    if key is None or turned_off(key):
        return None
    path = tuple(key.split("."))
    if kind != "jsonl" and path[0] not in types:
        raise CalibError(f"{name}: --cluster-key {key}: the files have no column {path[0]!r}; "
                         f"columns: {', '.join(types)}")
    return path


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


def _query(kind: str, src: str, fields: _Fields, types: dict[str, str],
           cluster: tuple[str, ...] | None = None) -> str:
    """The GROUP BY over (reason, group, value, percent[, cluster]). The rows never leave
    DuckDB and are grouped first by their raw values (native columns: fast), so that the
    rules (:func:`calib.readers.sql.rules`) run once per distinct (confidence, outcome, group)."""
    assert fields.outcome is not None
    cl = "NULL" if cluster is None else _cluster_value(kind, cluster, types)
    keys = [fields.confidence, fields.outcome, *([fields.group] if fields.group else [])]
    if kind == "jsonl":
        (ct, ck), (ot, ok), *grp = (_json_value(k.path) for k in keys)
        g = grp[0][0] if grp else "NULL"
        line_reason = (f"CASE WHEN line IS NULL OR trim(line, ' \t\r') = '' THEN '{_BLANK}' "
                       f"WHEN j IS NULL THEN '{R_JSON}' WHEN json_type(j) <> 'OBJECT' THEN '{R_NOT_OBJECT}' END")
        inner = f"(SELECT *, CASE WHEN json_valid(line) THEN CAST(line AS JSON) END AS j FROM {src})"
        raw = (f"SELECT {line_reason} AS lr, {ct} AS ct, {ck} AS ck, {ot} AS ot, {ok} AS ok, {g} AS g, "
               f"{cl} AS cl, COUNT(*) AS n FROM {inner} GROUP BY ALL")
        typed = "SELECT * FROM raw"
    else:
        (c0, ck), (o0, ok), *grp = (_column_value(k.path, types) for k in keys)
        g0 = grp[0][0] if grp else "NULL"
        raw = f"SELECT {c0} AS c0, {o0} AS o0, {g0} AS g0, {cl} AS cl, COUNT(*) AS n FROM {src} GROUP BY ALL"
        typed = (f"SELECT NULL AS lr, CAST(c0 AS VARCHAR) AS ct, CASE WHEN c0 IS NULL THEN 'N' ELSE {ck} END AS ck, "
                 f"CAST(o0 AS VARCHAR) AS ot, CASE WHEN o0 IS NULL THEN 'N' ELSE {ok} END AS ok, "
                 "CAST(g0 AS VARCHAR) AS g, cl, n FROM raw")
    r = rules(dialect("duckdb"), "ct", "ck", "ot", "ok")
    return (
        f"WITH raw AS ({raw}),\nt AS ({typed}),\n"
        f"judged AS (SELECT COALESCE(lr, {r.reason()}) AS reason, COALESCE(g, '{MISSING_GROUP}') AS g, "
        f"{r.conf_value} AS v, {r.conf_percent} AS pct, {r.correct} AS y, cl, n FROM t)\n"
        "SELECT reason, CASE WHEN reason IS NULL THEN g END AS g, CASE WHEN reason IS NULL THEN v END AS v, "
        "CASE WHEN reason IS NULL THEN pct END AS pct, SUM(n) AS n, "
        "SUM(CASE WHEN reason IS NULL AND y THEN n ELSE 0 END) AS k, CASE WHEN reason IS NULL THEN cl END AS cl\n"
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
    with tempfile.TemporaryDirectory(prefix="calib-duckdb-") as temp:
        links = _links(files, kind, temp)
        con = _connect(temp)
        try:
            try:
                fields, notes, cells, columns = _reduce(con, kind, list(links), pattern, options)
                skipped: list[LineIssue] = []
            except _DuckError as whole:
                skipped = _bad_files(con, kind, links)
                if not skipped:  # no file fails alone: the files disagree with each other
                    raise CalibError(f"{pattern}: cannot read with DuckDB: {whole.text(links)}") from None
                if options.strict:
                    raise CalibError(f"{pattern}: {len(skipped):,} unreadable file(s); strict mode refuses them: "
                                     + "; ".join(i.message() for i in skipped)) from None
                good = [link for link, f in links.items() if f not in {i.source for i in skipped}]
                if not good:
                    raise CalibError(f"{pattern}: no readable file: "
                                     + "; ".join(i.message() for i in skipped)) from None
                try:
                    fields, notes, cells, columns = _reduce(con, kind, good, pattern, options)
                except _DuckError as exc:
                    raise CalibError(f"{pattern}: cannot read with DuckDB: {exc.text(links)}") from None
        finally:
            con.close()
    pairs = None
    if columns is not None:
        if len(columns["n"]) > WAREHOUSE_MAX_CLUSTER_PAIRS:
            raise CalibError(f"{pattern}: --cluster-key {options.cluster_key}: more than "
                             f"{WAREHOUSE_MAX_CLUSTER_PAIRS:,} (cluster, confidence) pairs; refused (read fewer "
                             "files at once, or --cluster-key none to treat rows as independent)")
        cells, pairs = _pairs(columns)
    assert cells is not None
    notes = [*notes, *(f"skipped {i.source}: {i.detail}" for i in skipped)]
    ds = _dataset(ds_name, pattern, kind, len(files) - len(skipped), fields, notes, cells, options, pairs)
    if skipped:
        from dataclasses import replace

        ds = replace(ds, report=replace(ds.report, issues=(*ds.report.issues, *skipped)))
    return ds


class _DuckError(Exception):
    """DuckDB could not read the files (its message, with the plain names in it)."""

    def text(self, links: dict[str, str]) -> str:
        lines = str(self).splitlines() or ["unreadable"]
        # DuckDB's first line, and its "Expected Number of Columns: 2 Found: 3" when it says one
        msg = "; ".join([lines[0], *(x.strip() for x in lines[1:] if x.startswith("Expected"))])
        for link, f in links.items():
            msg = msg.replace(link, f)
        return msg


def _reduce(con: Any, kind: str, files: list[str], pattern: str,
            options: LoadOptions) -> tuple[_Fields, list[str], list[tuple] | None, dict | None]:
    """The fields, and the cells (or, with clusters, the (cluster, cell) columns) of ``files``."""
    src = _source(kind, files)
    try:
        fields, notes, types = _fields(con, kind, src, pattern, options)
        cluster = _cluster_path(options, kind, types, pattern)
        # at most max_cells + 1 cells come back (continuous values need ROUND first); with
        # clusters, one row per (cluster, cell): at most the pair cap + 1
        cap = options.max_cells if cluster is None else WAREHOUSE_MAX_CLUSTER_PAIRS
        query = _query(kind, src, fields, types, cluster) + f" LIMIT {cap + 2}"
        if cluster is not None:  # numbered in DuckDB: no label or text reaches Python
            query = ("SELECT reason, g, v, pct, n, k, cl IS NULL AS none, dense_rank() OVER (ORDER BY cl) "
                     f"AS cid, dense_rank() OVER (ORDER BY reason, g, v, pct) AS qid FROM ({query})")
        result = con.execute(query)
        # cells: a few tuples; (cluster, cell) rows: up to millions, as numpy columns
        cells = [row[:6] for row in result.fetchall()] if cluster is None else None
        columns = result.fetchnumpy() if cluster is not None else None
    except CalibError:
        raise
    except Exception as exc:  # duckdb raises many types for unreadable files or absent columns
        raise _DuckError(str(exc)) from None
    return fields, notes, cells, columns


def _bad_files(con: Any, kind: str, links: dict[str, str]) -> list[LineIssue]:
    """The files DuckDB cannot read alone (every column of every row: ``count(t)`` of the
    whole row), each as a whole-file issue (``unreadable file``, DuckDB's message, its line
    when it gives one), as a bad line is reported. A key absent from the files is not a
    bad file: the files read, the query does not."""
    bad = []
    for link, f in links.items():
        try:
            con.execute(f"SELECT count(t) FROM {_source(kind, [link])} AS t").fetchall()
        except Exception as exc:  # duckdb's many error types for an unreadable file
            bad.append((f, _DuckError(str(exc)).text(links)))
    out = []
    for f, msg in bad:
        m = re.search(r"on line:? (\d+)", msg, re.IGNORECASE)
        out.append(LineIssue(int(m.group(1)) if m else 0, None, R_UNREADABLE, msg, source=f))
    return out


@dataclass(frozen=True)
class _Pairs:
    """The good (cluster, cell) rows of a clustered query: each one's good cell (its index
    among the cells' good entries), rows, right answers, cluster number (DuckDB's rank of
    the label) and whether it has no label (a cluster per row then)."""

    cell: np.ndarray
    n: np.ndarray
    k: np.ndarray
    cluster: np.ndarray
    none: np.ndarray


def _pairs(columns: dict[str, Any]) -> tuple[list[tuple], _Pairs]:
    """The cells (in DuckDB's cell numbering, good and bad) of the (cluster, cell) rows,
    summed over clusters, and the good rows themselves."""
    qid = np.asarray(columns["qid"], dtype=np.int64) - 1
    n = np.asarray(columns["n"], dtype=np.int64)
    k = np.asarray(columns["k"], dtype=np.int64)
    _, first = np.unique(qid, return_index=True)  # ranks are dense: cell q is first[q]'s
    n_c = np.bincount(qid, weights=n, minlength=first.size).tolist()
    k_c = np.bincount(qid, weights=k, minlength=first.size).tolist()
    reason = np.asarray(columns["reason"], dtype=object)[first]
    g = np.asarray(columns["g"], dtype=object)[first]
    v = np.ma.getdata(columns["v"])[first].astype(np.float64)
    pct = np.ma.getdata(columns["pct"])[first].astype(bool)
    cells = [(None, str(g[q]), float(v[q]), bool(pct[q]), int(n_c[q]), int(k_c[q])) if reason[q] is None
             else (reason[q], None, None, None, int(n_c[q]), int(k_c[q])) for q in range(first.size)]
    is_good = np.equal(reason, None)
    good_pos = np.where(is_good, np.cumsum(is_good) - 1, -1)
    rows = good_pos[qid] >= 0
    return cells, _Pairs(good_pos[qid][rows], n[rows], k[rows], np.asarray(columns["cid"], dtype=np.int64)[rows],
                         np.ma.getdata(columns["none"]).astype(bool)[rows])


def _dataset(name: str, pattern: str, kind: str, n_files: int, fields: _Fields, notes: list[str],
             cells: list[tuple], options: LoadOptions, pairs: _Pairs | None = None) -> Dataset:
    """The cells DuckDB returned as a count table and a load report (with ``pairs``, the
    good rows per (cluster, cell), the table's clusters)."""
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
    check_groups(len(table.groups), pattern, options.max_groups, options.group_key)  # as a file's reader does
    cluster_note, fields_seen = None, _field_names(fields)
    if pairs is not None:
        key = str(options.cluster_key)
        table, cluster_note = _with_clusters(table, good, pairs, stated, keep, reading.scale, key, pattern)
        fields_seen["cluster"] = key
    notes = [*notes, *reading.notes, *(f"warning: {w}" for w in reading.warnings),
             f"read in DuckDB from {n_files:,} {kind} file(s): {table.total:,} judgments in {table.cells:,} cells",
             cluster_note or "ids and question text are not read from a glob: rows are treated as independent "
             "(name the item's field with --cluster-key to resample items)",
             f"scale: {reading.scale.how or reading.scale.name}"]
    report = LoadReport(
        source=pattern, format="stated", lines_read=table.total + int(sum(counts.values())) + blank, blank=blank, kept=table.total, dropped=int(sum(counts.values())),
        dropped_by_reason=dict(sorted(counts.items())), fields=fields_seen,
        scale=reading.scale.to_dict(), notes=tuple(notes), forms=dict(reading.forms),
        warnings=tuple(reading.warnings),
    )
    return Dataset(name, table, report, None)


def _with_clusters(table: Any, good: list[tuple], pairs: _Pairs, stated: np.ndarray, keep: np.ndarray,
                   scale: Any, key: str, pattern: str) -> tuple[Any, str]:
    """``table`` with its :class:`~calib.clusters.Clusters` from the (cluster, cell) rows,
    and the note :func:`calib.clusters.infer` writes. A good cell's table cell is found
    from its stated value, snapped and put on the scale's ends as
    :func:`calib.table.from_counts` does; a row without a label is its own cluster."""
    from dataclasses import replace

    from calib import clusters
    from calib.scale import onto_ends

    values, _ = onto_ends(snap(stated, scale), scale)
    names = table.groups
    where = {(names[int(gc)], float(v)): i for i, (gc, v) in enumerate(zip(table.group, table.value, strict=True))}
    to_table = np.array([where[(c[1] if names != ("",) else "", float(values[q]))] if keep[q] else -1
                         for q, c in enumerate(good)], dtype=np.int64)
    cell = to_table[pairs.cell]
    use = cell >= 0  # cells outside the scale or ambiguous are dropped with their rows
    cell, n, k, cid, none = cell[use], pairs.n[use], pairs.k[use], pairs.cluster[use], pairs.none[use]
    missing = int(n[none].sum())
    if missing == table.total:
        raise CalibError(f"{pattern}: --cluster-key {key}: no row has the field {key!r}")
    if missing + int((~none).sum()) > WAREHOUSE_MAX_CLUSTER_PAIRS:
        raise CalibError(f"{pattern}: --cluster-key {key}: more than {WAREHOUSE_MAX_CLUSTER_PAIRS:,} clusters "
                         f"and (cluster, confidence) pairs ({missing:,} rows without the field are one "
                         "cluster each); refused")
    # a row without a label is a cluster of its own: the first k rows of a pair right
    n_m, k_m = n[none], k[none]
    first = np.repeat(np.cumsum(n_m) - n_m, n_m)
    single_y = (np.arange(missing) - first) < np.repeat(k_m, n_m)
    labelled = cid[~none]  # DuckDB's ranks: gaps (the no-label rank) leave empty rows, dropped
    how = f"field {key!r}"
    cl_counts = clusters.from_codes(
        np.concatenate([np.arange(missing), missing + labelled]),
        np.concatenate([np.repeat(cell[none], n_m), cell[~none]]),
        np.concatenate([np.ones(missing, dtype=np.int64), n[~none]]),
        np.concatenate([single_y.astype(np.int64), k[~none]]), table.cells, how)
    return replace(table, clusters=cl_counts), clusters.named_note(how, cl_counts.count, table.total, missing)


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
