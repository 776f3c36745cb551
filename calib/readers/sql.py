"""The stated reader's value rules as SQL, and the aggregation query per warehouse dialect.

Contract
--------
Plain strings, no database: :func:`rules` gives the SQL expressions that judge one
confidence and one outcome exactly as :mod:`calib.readers.stated.rules` does in Python
(``_conf_value``, ``_outcome_value``: the same reasons, in the same order), and
:func:`aggregation_query` the ``GROUP BY`` that reduces a table of judgments to a count
table ``group, value, n, correct`` (what :func:`calib.readers.counts.read_counts` reads). The
DuckDB reader of globs (:mod:`calib.readers.warehouse`) and ``calib sql`` both take
their rules from here: this is the one place they are written in SQL.

A value is judged from two expressions: its *text* (``NULL`` when missing) and its
*kind*, one of ``'N'`` (missing or null), ``'B'`` (a boolean), ``'F'`` (a number),
``'S'`` (a string), ``'O'`` (an object or array). A JSON input has both (DuckDB's
``json_type``); a warehouse column is judged by its text (kind ``'S'``): a boolean
``true`` reads ``'true'`` and a number ``1`` reads ``'1'``, which the rules treat as
Python treats them, except for numbers written unusually (``1.00`` or ``1e0`` as an
outcome is right in Python, an unknown token as text) and ``NaN`` (Python: not finite;
text: not a number).
"""

from __future__ import annotations

from dataclasses import dataclass

from calib.errors import CalibError
from calib.readers.stated.rules import (
    FALSE_TOKENS,
    R_BAD_OUTCOME,
    R_MISSING_CONF,
    R_MISSING_OUTCOME,
    R_NON_NUMERIC,
    R_NOT_FINITE,
    TRUE_TOKENS,
)
from calib.settings import SQL_DIALECTS

DIALECTS = SQL_DIALECTS

# Python's _NUMBER after str.strip() and an optional trailing "%" (rules._conf_value);
# [0-9] because the Python pattern is re.ASCII
# non-capturing inner groups: BigQuery's REGEXP_EXTRACT allows one capturing group
_NUM = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
CONF_PATTERN = r"^\s*" + _NUM + r"\s*%?\s*$"
NUMBER_PART = r"^\s*(" + _NUM + r")"
PERCENT_PATTERN = r"^.*%\s*$"  # anchored: Snowflake matches whole strings
STRIP_PATTERN = r"^\s+|\s+$"


@dataclass(frozen=True)
class Dialect:
    """How one warehouse spells what the rules need."""

    name: str
    matches: str        # {s} matches regex {p}
    extract: str        # first group of {p} in {s}
    to_double: str      # {x} as a double, NULL when it is not one
    text: str           # {x} as text
    strip: str          # {s} without surrounding whitespace
    quote: str          # the identifier quote: '"' (standard SQL) or '`'
    is_finite: str      # {x} (a double) is finite


_DIALECTS = {
    "duckdb": Dialect("duckdb", "regexp_matches({s}, {p})", "regexp_extract({s}, {p}, 1)",
                      "TRY_CAST({x} AS DOUBLE)", "CAST({x} AS VARCHAR)",
                      "regexp_replace({s}, {ws}, '', 'g')", '"', "isfinite({x})"),
    "spark": Dialect("spark", "({s} RLIKE {p})", "regexp_extract({s}, {p}, 1)",
                     "TRY_CAST({x} AS DOUBLE)", "CAST({x} AS STRING)",
                     "regexp_replace({s}, {ws}, '')", "`",
                     "({x} NOT IN (double('inf'), double('-inf')) AND NOT isnan({x}))"),
    "bigquery": Dialect("bigquery", "REGEXP_CONTAINS({s}, {p})", "REGEXP_EXTRACT({s}, {p})",
                        "SAFE_CAST({x} AS FLOAT64)", "CAST({x} AS STRING)",
                        "REGEXP_REPLACE({s}, {ws}, '')", "`",
                        "NOT (IS_INF({x}) OR IS_NAN({x}))"),
    "snowflake": Dialect("snowflake", "REGEXP_LIKE({s}, {p})", "REGEXP_SUBSTR({s}, {p}, 1, 1, 'e', 1)",
                         "TRY_TO_DOUBLE({x})", "CAST({x} AS VARCHAR)",
                         "REGEXP_REPLACE({s}, {ws}, '')", '"',
                         "({x} NOT IN ('inf'::FLOAT, '-inf'::FLOAT) AND {x} = {x})"),
}


def dialect(name: str) -> Dialect:
    """The :class:`Dialect` called ``name`` (one of :data:`DIALECTS`)."""
    try:
        return _DIALECTS[name]
    except KeyError:
        raise ValueError(f"unknown SQL dialect {name!r}; choose one of {', '.join(DIALECTS)}") from None


def pattern(d: Dialect, regex: str) -> str:
    """``regex`` as ``d`` writes it: Snowflake's POSIX regular expressions have no
    non-capturing groups, and take group 1 by number, so plain groups do there."""
    return regex.replace("(?:", "(") if d.name == "snowflake" else regex


def _lit(d: Dialect, text: str) -> str:
    """A string literal: standard SQL doubles quotes (DuckDB); Spark, BigQuery and
    Snowflake read backslash escapes in literals, so both are escaped there."""
    if d.name == "duckdb":
        return "'" + text.replace("'", "''") + "'"
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _tokens(d: Dialect, tokens: frozenset[str]) -> str:
    return ", ".join(_lit(d, t) for t in sorted(tokens))


@dataclass(frozen=True)
class Rules:
    """SQL expressions of one confidence and one outcome (see :func:`rules`)."""

    conf_reason: str     # NULL, or the reason the confidence drops the row
    conf_value: str      # the confidence as a double (meaningful when conf_reason is NULL)
    conf_percent: str    # the confidence was written "85%"
    outcome_reason: str  # NULL, or the reason the outcome drops the row
    correct: str         # the outcome is right (meaningful when outcome_reason is NULL)

    def reason(self) -> str:
        """The row's reason, checked in the reader's order: confidence, then outcome."""
        return f"COALESCE({self.conf_reason}, {self.outcome_reason})"


def rules(d: Dialect, conf_text: str, conf_kind: str, out_text: str, out_kind: str) -> Rules:
    """The value rules of :mod:`calib.readers.stated.rules` over the text and kind of a
    confidence and of an outcome (SQL expressions, see the module docstring).

    Confidence: missing or null -> ``missing confidence``; a boolean, object, array or a
    string that is not a number (``"85%"`` and ``" 85 "`` are) -> ``non-numeric
    confidence``; a number that is not finite (``1e400``) -> ``NaN/Infinity``. Outcome:
    missing or null -> ``missing outcome``; a number other than 0 and 1, or a string not in
    :data:`~calib.readers.stated.rules.TRUE_TOKENS` / ``FALSE_TOKENS`` (case and
    surrounding spaces ignored) -> ``unknown outcome token``.
    """
    ct, ck, ot, ok = conf_text, conf_kind, out_text, out_kind
    num = d.to_double.format(x=d.extract.format(s=ct, p=_lit(d, pattern(d, NUMBER_PART))))
    as_number = d.to_double.format(x=ct)
    value = f"(CASE WHEN {ck} = 'F' THEN {as_number} ELSE {num} END)"
    is_num_text = d.matches.format(s=ct, p=_lit(d, pattern(d, CONF_PATTERN)))
    conf_reason = (
        f"(CASE WHEN {ck} = 'N' OR {ct} IS NULL THEN {_lit(d, R_MISSING_CONF)} "
        f"WHEN {ck} IN ('B', 'O') THEN {_lit(d, R_NON_NUMERIC)} "
        f"WHEN {ck} = 'S' AND NOT {is_num_text} THEN {_lit(d, R_NON_NUMERIC)} "
        f"WHEN {value} IS NULL OR NOT {d.is_finite.format(x=value)} THEN {_lit(d, R_NOT_FINITE)} END)"
    )
    percent = f"({ck} = 'S' AND {d.matches.format(s=ct, p=_lit(d, pattern(d, PERCENT_PATTERN)))})"
    token = f"lower({d.strip.format(s=ot, ws=_lit(d, pattern(d, STRIP_PATTERN)))})"
    as_out = d.to_double.format(x=ot)
    right = f"(({ok} = 'B' AND {token} = 'true') OR ({ok} = 'F' AND {as_out} = 1) OR ({ok} = 'S' AND {token} IN ({_tokens(d, TRUE_TOKENS)})))"
    wrong = f"(({ok} = 'B' AND {token} = 'false') OR ({ok} = 'F' AND {as_out} = 0) OR ({ok} = 'S' AND {token} IN ({_tokens(d, FALSE_TOKENS)})))"
    outcome_reason = (
        f"(CASE WHEN {ok} = 'N' OR {ot} IS NULL THEN {_lit(d, R_MISSING_OUTCOME)} "
        f"WHEN {right} OR {wrong} THEN NULL ELSE {_lit(d, R_BAD_OUTCOME)} END)"
    )
    return Rules(conf_reason, value, percent, outcome_reason, right)


#: BigQuery's named escapes (its quoted identifiers read the escapes of its string literals).
_BQ_ESCAPES = {"\\": "\\\\", "`": "\\`", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def identifier(d: Dialect, name: str) -> str:
    r"""``name`` as one quoted identifier of dialect ``d``, whatever it holds.

    DuckDB and Snowflake (standard SQL) double a ``"``; Spark doubles a backtick; BigQuery
    reads backslash escapes inside backticks (`Lexical structure
    <https://cloud.google.com/bigquery/docs/reference/standard-sql/lexical>`_), so a
    backslash, a backtick and a control character are escaped there (``\\``, ``\```,
    ``\n``, ``\u0001``): doubling a backtick would end the identifier at ``\```."""
    if "\x00" in name:
        raise CalibError(f"column name {name!r} holds a NUL character, which no SQL dialect reads")
    if d.name == "bigquery":
        body = "".join(_BQ_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 or c == "\x7f" else c)
                       for c in name)
    else:
        body = name.replace(d.quote, d.quote * 2)
    return d.quote + body + d.quote


def column(d: Dialect, key: str) -> str:
    """A column named ``key`` (a dotted key is a path: ``meta.conf`` is ``meta``.``conf``)."""
    return ".".join(identifier(d, part) for part in key.split("."))


def aggregation_query(
    dialect_name: str, confidence_key: str, outcome_key: str, *, group_key: str | None = None,
    table: str = "judgments",
) -> str:
    """The ``GROUP BY`` that reduces ``table`` to the count table ``[group,] value, n, correct``.

    Rows the rules drop (:func:`rules`) are left out; a percent string (``"85%"``) counts
    as its number, so a table mixing ``"85%"`` with 0-1 numbers needs the DuckDB reader
    of globs (which reads each value by its written form). :func:`dropped_query` counts
    the rows left out, by reason.
    """
    d = dialect(dialect_name)
    qg = identifier(d, "group")
    sel = f"{qg}, " if group_key else ""
    keys = "1, 2" if group_key else "1"
    return (
        _judged(d, confidence_key, outcome_key, group_key, table)
        + f"SELECT {sel}value, COUNT(*) AS n, SUM(CASE WHEN is_right THEN 1 ELSE 0 END) AS correct\n"
        + f"FROM judged\nWHERE reason IS NULL\nGROUP BY {keys}\nORDER BY {keys}"
    )


def dropped_query(dialect_name: str, confidence_key: str, outcome_key: str, *, table: str = "judgments") -> str:
    """The rows :func:`aggregation_query` leaves out, counted by reason (``reason, n``)."""
    d = dialect(dialect_name)
    return (_judged(d, confidence_key, outcome_key, None, table)
            + "SELECT reason, COUNT(*) AS n\nFROM judged\nWHERE reason IS NOT NULL\nGROUP BY 1\nORDER BY 1")


def _judged(d: Dialect, confidence_key: str, outcome_key: str, group_key: str | None, table: str) -> str:
    """``WITH t AS (...), judged AS (...)``: each row's text, then its reason, value and
    outcome. Warehouse columns are judged by their text (kind ``'S'``, or ``'N'`` if null)."""
    group = (f",\n         COALESCE({d.text.format(x=column(d, group_key))}, '(missing)') AS {identifier(d, 'group')}"
             if group_key else "")
    r = rules(d, "c", "ck", "o", "ok")
    return (
        f"WITH t AS (\n  SELECT {d.text.format(x=column(d, confidence_key))} AS c,\n"
        f"         {d.text.format(x=column(d, outcome_key))} AS o{group}\n  FROM {table}\n),\n"
        "k AS (\n  SELECT *, CASE WHEN c IS NULL THEN 'N' ELSE 'S' END AS ck,\n"
        "            CASE WHEN o IS NULL THEN 'N' ELSE 'S' END AS ok\n  FROM t\n),\n"
        f"judged AS (\n  SELECT *,\n    {r.reason()} AS reason,\n    {r.conf_value} AS value,\n"
        f"    {r.correct} AS is_right\n  FROM k\n)\n"
    )
