"""``calib sql``: print the aggregation query for the user's warehouse (:mod:`calib.readers.sql`).

The query reduces a table of judgments to the count table ``[group,] value, n, correct``
with the stated reader's value rules; its result is audited with ``calib audit
counts.csv`` (or ``.parquet``). ``--dropped`` prints the query counting the rows it
leaves out, by reason. Nothing is run: the user's warehouse runs it.
"""

from __future__ import annotations

import argparse

from calib.cli.output import EXIT_OK
from calib.errors import CalibError
from calib.settings import SQL_DIALECTS


def add_sql(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "sql", help="print the GROUP BY that reduces a warehouse table to a count table",
        description="Prints the SQL that reduces a table of judgments (one row each) to a count table "
                    "(group, value, n, correct) with calib's rules for confidences and outcomes; run it in "
                    "your warehouse, save the result as CSV or Parquet and run `calib audit` on it.",
    )
    p.add_argument("--dialect", choices=SQL_DIALECTS, default="duckdb", help="the warehouse (default duckdb)")
    p.add_argument("--confidence-key", required=True, metavar="K", help="the column of stated confidences")
    p.add_argument("--outcome-key", required=True, metavar="K", help="the column of outcomes (right/wrong)")
    p.add_argument("--group-key", metavar="K", help="a column to audit by (subject, task...)")
    p.add_argument("--table", default="judgments", metavar="T",
                   help="the table or source (default judgments; DuckDB: read_parquet('logs/*.parquet'))")
    p.add_argument("--dropped", action="store_true", help="print the query counting the rows left out, by reason")
    p.set_defaults(func=cmd_sql)


def cmd_sql(args: argparse.Namespace) -> int:
    from calib.readers.sql import aggregation_query, dropped_query

    for flag, key in (("--confidence-key", args.confidence_key), ("--outcome-key", args.outcome_key),
                      ("--group-key", args.group_key), ("--table", args.table)):
        if key is not None and not key.strip():
            raise CalibError(f"{flag}: empty; give a column name")
    if args.dropped:
        print(dropped_query(args.dialect, args.confidence_key, args.outcome_key, table=args.table) + ";")
    else:
        print(aggregation_query(args.dialect, args.confidence_key, args.outcome_key, group_key=args.group_key,
                                table=args.table) + ";")
    return EXIT_OK
