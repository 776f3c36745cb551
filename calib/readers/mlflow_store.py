"""MLflow 3's SQLite tracking store (``mlflow.db``) as the trace records :mod:`.mlflow` reads.

Layout (read from a store written by mlflow 3.18.0, ``sqlite:///mlflow.db``, MLflow 3's
default tracking store): table ``trace_info`` (``request_id``: the trace id,
``experiment_id``, ``timestamp_ms``, ``request_preview``, and in recent schemas
``session_id``), ``trace_request_metadata`` (``key``, ``value``, ``request_id``: the
session as ``mlflow.trace.session`` in older schemas) and ``assessments``
(``trace_id``, ``name``, ``assessment_type`` ``feedback`` / ``expectation``, ``value``
and ``error`` as JSON text, ``source_type``, ``valid``). Each trace becomes the record
of a ``search_traces()`` export (``trace_id``, ``request``, ``trace_metadata``,
``experiment_id``, ``assessments[]``), so the rule that picks the confidence and the
outcome is :mod:`.mlflow`'s, the same for both inputs.

The file is untrusted input
    It is opened from its bytes in memory (``sqlite3`` ``deserialize``), never from a
    path, never written (``query_only``), with ``trusted_schema`` off; only the three
    tables above are read, by fixed, parameterised SQL, after checking in
    ``sqlite_master`` that each is a table (never a view) with the columns used. The
    number of traces and of assessments is counted against ``max_rows`` before any is
    read, and every query runs under a step budget (a corrupt or crafted file cannot
    loop). A value that is not JSON, a column of the wrong type or a trace id that is
    not text is a bad assessment or trace, named; every other trace is kept.
"""

from __future__ import annotations

import sqlite3
from collections import Counter, defaultdict
from typing import Any

from calib.errors import CalibError
from calib.readers.base import LoadOptions, Source
from calib.readers.jsonl import json_loads, short_text
from calib.readers.verdicts import Unusable

#: The first bytes of every SQLite 3 database file.
MAGIC = b"SQLite format 3\x00"
SESSION = "mlflow.trace.session"
#: The columns read of each table (the first of each is required, with ``REQUIRED``'s).
REQUIRED = {"trace_info": ("request_id",),
            "assessments": ("trace_id", "name", "assessment_type", "value", "source_type", "valid")}
#: SQLite virtual-machine steps allowed per byte of the file, and at least (a progress
#: handler stops a query past them: a crafted file cannot make a read run forever).
STEPS_PER_BYTE, MIN_STEPS = 200, 50_000_000
#: Assessments allowed per trace on average, against ``max_rows`` (a limit before the read).
PER_TRACE = 50


def is_store(data: bytes) -> bool:
    """Is ``data`` a SQLite database (the only SQLite file calib reads is MLflow's store)?"""
    return data[:16] == MAGIC


def _open(source: Source) -> sqlite3.Connection:
    con = sqlite3.connect(":memory:", isolation_level=None)
    data = source.data
    if data[18:20] == b"\x02\x02":  # WAL mode: read as the rollback-journal file it also is
        data = data[:18] + b"\x01\x01" + data[20:]
    try:
        con.deserialize(data)
        con.execute("PRAGMA trusted_schema = OFF")
        con.execute("PRAGMA query_only = ON")
        con.execute("PRAGMA cell_size_check = ON")
        budget = max(MIN_STEPS, STEPS_PER_BYTE * len(source.data))
        steps = [0]

        def progress() -> int:
            steps[0] += 1000
            return 1 if steps[0] > budget else 0  # non-zero interrupts the query

        con.set_progress_handler(progress, 1000)
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except (sqlite3.DatabaseError, OverflowError, ValueError) as exc:
        con.close()
        raise CalibError(f"{source.name}: not a readable SQLite database ({exc})") from None
    return con


def _columns(con: sqlite3.Connection, table: str) -> set[str] | None:
    """The columns of ``table`` when it is a table of the file (a view is never read), else ``None``."""
    if con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()[0] != 1:
        return None
    return {str(r[0]) for r in con.execute("SELECT name FROM pragma_table_info(?)", (table,))}


def records(source: Source, options: LoadOptions) -> tuple[list[tuple[int, Any]], str]:
    """The store's traces as ``search_traces()`` records ``(position, record)`` in trace
    order (``timestamp_ms``, then id), and the store's description (the first note's start,
    with the assessments skipped for want of their trace)."""
    con = _open(source)
    try:
        return _records(con, source, options)
    except sqlite3.DatabaseError as exc:  # a corrupt page, the step budget (OperationalError: interrupted)
        raise CalibError(f"{source.name}: the MLflow store could not be read ({exc})") from None
    finally:
        con.close()


def _records(con: sqlite3.Connection, source: Source, options: LoadOptions,
             ) -> tuple[list[tuple[int, Any]], str]:  # long: fixed queries, then one pass
    cols = {t: _columns(con, t) for t in ("trace_info", "assessments", "trace_request_metadata")}
    for table, need in REQUIRED.items():
        have = cols[table]
        if have is None or not set(need) <= have:
            missing = "no such table" if have is None else "no column " + ", ".join(sorted(set(need) - have))
            raise CalibError(f"{source.name}: a SQLite database that is not an MLflow 3 tracking store "
                             f"(table {table}: {missing}); give mlflow.db, or a search_traces() export")
    ti, asm = cols["trace_info"] or set(), cols["assessments"] or set()
    n_traces = con.execute("SELECT count(*) FROM trace_info").fetchone()[0]
    n_assess = con.execute("SELECT count(*) FROM assessments").fetchone()[0]
    if n_traces > options.max_rows or n_assess > options.max_rows * PER_TRACE:
        raise CalibError(f"{source.name}: {n_traces:,} traces and {n_assess:,} assessments, over the limit of "
                         f"{options.max_rows:,} traces ({PER_TRACE} assessments each); refused")
    order = "timestamp_ms, request_id" if "timestamp_ms" in ti else "rowid"
    pick = ", ".join(c if c in ti else "NULL" for c in ("request_id", "request_preview", "experiment_id", "session_id"))
    traces = con.execute(f"SELECT {pick} FROM trace_info ORDER BY {order}").fetchall()  # fixed names only
    sessions: dict[Any, Any] = {}
    if "session_id" not in ti and {"key", "value", "request_id"} <= (cols["trace_request_metadata"] or set()):
        sessions = dict(con.execute("SELECT request_id, value FROM trace_request_metadata WHERE key = ?", (SESSION,)))
    a_pick = ", ".join(c if c in asm else "NULL" for c in ("trace_id", "name", "assessment_type", "value", "error",
                                                            "source_type", "valid"))
    a_order = "created_timestamp, assessment_id" if {"created_timestamp", "assessment_id"} <= asm else "rowid"
    by_trace: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for row in con.execute(f"SELECT {a_pick} FROM assessments ORDER BY {a_order}"):
        by_trace[row[0]].append(_assessment(row, options))
    out: list[tuple[int, Any]] = []
    for pos, (tid, preview, exp, session) in enumerate(traces, start=1):
        session = session if session is not None else sessions.get(tid)
        rec = {"trace_id": tid if isinstance(tid, str) else None, "request": preview if isinstance(preview, str) else "",
               "experiment_id": exp if isinstance(exp, int | str) else None,
               "trace_metadata": {SESSION: session} if isinstance(session, str) else {},
               "assessments": by_trace.pop(tid, [])}
        out.append((pos, rec))
    orphans = sum(len(v) for v in by_trace.values())
    exps = Counter(r["experiment_id"] for _, r in out)
    what = (f"MLflow tracking store (SQLite, {len(exps):,} experiment(s)"
            + (f"; {orphans:,} assessment(s) of traces not in trace_info skipped)" if orphans else ")"))
    return out, what


def _assessment(row: tuple[Any, ...], options: LoadOptions) -> dict[str, Any]:
    """One ``assessments`` row as an export's assessment: JSON text values decoded, an
    undecodable or mistyped one kept as :class:`~calib.readers.verdicts.Unusable` (named)."""
    _, name, kind, value, error, source_type, valid = row
    out: dict[str, Any] = {"assessment_name": name if isinstance(name, str) else None,
                           "source": {"source_type": source_type if isinstance(source_type, str) else ""},
                           "valid": valid not in (0, "0", "false", "False", False)}
    decoded = _json(value, "value", options)
    if kind == "expectation":
        out["expectation"] = {"value": decoded}
    elif kind == "feedback":
        err = _json(error, "error", options) if error is not None else None
        out["feedback"] = {"value": decoded, "error": err if err is not None and not isinstance(err, Unusable) else None}
    return out  # another assessment_type: neither feedback nor expectation (reported by the reader)


def _json(text: Any, column: str, options: LoadOptions) -> Any:
    if text is None:
        return None
    if not isinstance(text, str):
        held = {bytes: "a BLOB", int: "an INTEGER", float: "a REAL"}.get(type(text), type(text).__name__)
        return Unusable(f"the {column} column holds {held}, not JSON text")
    if len(text) > options.max_line_chars:
        return Unusable(f"the {column} is {len(text):,} characters, over {options.max_line_chars:,}")
    try:
        return json_loads(text)
    except ValueError:
        return Unusable(f"the {column} is not JSON: {short_text(text)[:60]!r}")
