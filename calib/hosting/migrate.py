"""Copy an SQLite data directory's catalog into PostgreSQL: ``calib hosting migrate``
(:mod:`calib.cli.hosting`), the one step from the embedded default to replicas sharing a
catalog (issue 27).

What it does, in order:

1. Opens the source data directory as a server start does
   (:meth:`calib.hosting.catalog.Catalog.open`): its catalog is brought to the current
   schema and tidied (temporary files of crashed writers removed, shares whose file is
   missing dropped, expired shares swept), so only what a server would serve is copied.
2. Brings the target database to the current schema (:mod:`calib.hosting.schema`) and
   refuses to go on if it already holds a share, a blob or a label: a migration never
   merges two catalogs.
3. Copies every table (:data:`calib.hosting.schema.TABLES`, parents first), row for row
   with the same values (ids, link and owner digests, times, revoked marks, the labels'
   history in its order), in **one** target transaction under the catalog's write lock:
   a migration cut short leaves the target empty. The labels' id sequence is moved past
   the copied ids, so the next label is appended after them.
4. Counts each table again on both sides and raises if one differs.

The blobs are not copied: they stay files in the data directory's ``blobs/`` folder,
which the servers then mount (``CALIB_DATA_DIR``, the same directory, shared by every
replica). The source catalog file is left in place (nothing reads it once
``CALIB_DATABASE_URL`` is set); keep it as the backup of the moment of the migration.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from calib.errors import CalibError
from calib.hosting.catalog import Catalog
from calib.hosting.database import PostgresDatabase, check_url, is_database_error
from calib.hosting.schema import TABLES

#: Tables whose id is drawn from a sequence on PostgreSQL (moved past the copied ids).
_SERIAL = ("labels", "login_failures", "adjudications")


@dataclass(frozen=True)
class MigrationReport:
    """What a migration copied: rows per table, and the shares among them that were revoked."""

    rows: dict[str, int]
    revoked: int
    target: str

    def lines(self) -> list[str]:
        """The report for a person, one line per fact."""
        r = self.rows
        return [
            f"Copied to {self.target}:",
            f"  {r['shares']:,} share link(s), {self.revoked:,} of them revoked",
            f"  {r['datasets']:,} dataset(s) reading {r['blobs']:,} stored file(s)",
            f"  {r['labels']:,} label(s) (the whole history) and {r['reviewing']:,} review setting(s)",
            "Every table was counted again on both sides: the same.",
        ]


def migrate(data_dir: str | Path, url: str) -> MigrationReport:
    """Copy the catalog of the SQLite data directory ``data_dir`` into the empty
    PostgreSQL database ``url`` (see the module docstring)."""
    source_dir = Path(data_dir)
    if not (source_dir / "catalog.sqlite3").is_file():
        raise CalibError(f"{source_dir}: no catalog.sqlite3 here; --from takes a calib data directory")
    source = Catalog.open(source_dir)
    target = PostgresDatabase(check_url(url))
    try:
        return _copy(source, target)
    except Exception as exc:
        if not is_database_error(exc):
            raise
        raise CalibError(f"{target.describe()}: {exc}; nothing was copied") from None
    finally:
        target.close()


def _copy(source: Catalog, target: PostgresDatabase) -> MigrationReport:
    """Steps 2-4 of the module docstring."""
    target.migrate()
    with source._connect() as src, target.transaction() as dst:
        held = {t: dst.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("shares", "blobs", "labels")}
        if any(held.values()):
            raise CalibError(
                f"{target.describe()} already holds a calib catalog ({held['shares']:,} share(s), "
                f"{held['labels']:,} label(s)); migrate into an empty database"
            )
        rows = {t: _copy_table(src, dst, t) for t in TABLES}
        for table in _SERIAL:
            dst.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE(MAX(id), 0) + 1, false) "
                f"FROM {table}"
            )
        for table, n in rows.items():
            again = dst.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            if again != n:
                raise CalibError(f"{table}: {n:,} row(s) read but {again:,} written; nothing was copied")
        revoked = src.execute("SELECT COUNT(*) FROM shares WHERE revoked IS NOT NULL").fetchone()[0]
    return MigrationReport(rows, int(revoked), target.describe())


def _copy_table(src, dst, table: str) -> int:  # noqa: ANN001  (two databases' connections)
    """Copy every row of ``table`` (names from calib's own schema, never from input)."""
    cur = src.execute(f"SELECT * FROM {table}")
    columns = [d[0] for d in cur.description]
    insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    n = 0
    while batch := cur.fetchmany(1000):
        dst.executemany(insert, [tuple(r) for r in batch])
        n += len(batch)
    return n
