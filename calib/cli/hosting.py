"""``calib hosting migrate``: move a server's share store from its SQLite data directory
to PostgreSQL, the catalog several replicas share (issue 27; :mod:`calib.hosting.migrate`).

    calib hosting migrate --from /srv/calib-data --to postgresql://calib@db:5432/calib

The URL may come from ``CALIB_DATABASE_URL`` instead of ``--to`` (a password then stays
out of the shell history). Stop the server first: shares made during the copy would not
be copied. Then start the replicas with ``CALIB_DATABASE_URL`` set and ``CALIB_DATA_DIR``
on the same data directory (its ``blobs/`` folder stays where it is, mounted by every
replica).
"""

from __future__ import annotations

import argparse
import os

from calib.cli.output import EXIT_OK
from calib.errors import CalibError


def add_hosting(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "hosting",
        help="administer a hosted server's share store",
        description="calib hosting migrate copies a data directory's SQLite catalog into PostgreSQL.",
    )
    act = p.add_subparsers(dest="hosting_action", metavar="ACTION")
    act.required = True
    mig = act.add_parser(
        "migrate",
        help="copy a data directory's catalog into an empty PostgreSQL database",
        description="Copy the share links, their datasets' records, the review settings and every label of an "
        "SQLite data directory into an empty PostgreSQL database, in one transaction, and count them again on "
        "both sides. The stored files stay in the data directory (CALIB_DATA_DIR): mount it on every replica.",
    )
    mig.add_argument("--from", dest="source", metavar="DATA_DIR", required=True,
                     help="the server's data directory (the one holding catalog.sqlite3)")
    mig.add_argument("--to", dest="target", metavar="URL",
                     help="postgresql://user:password@host:port/database (default: CALIB_DATABASE_URL)")
    mig.set_defaults(func=run_migrate)


def run_migrate(args: argparse.Namespace) -> int:
    from calib.hosting.migrate import migrate

    url = args.target or os.environ.get("CALIB_DATABASE_URL", "").strip()
    if not url:
        raise CalibError("calib hosting migrate needs --to postgresql://… (or CALIB_DATABASE_URL)")
    report = migrate(args.source, url)
    print("\n".join(report.lines()))
    print(f"Next: start the servers with CALIB_DATABASE_URL set and CALIB_DATA_DIR={args.source} "
          "(the stored files stay there).")
    return EXIT_OK
