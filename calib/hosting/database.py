"""The database under the share store's catalog: SQLite (the embedded default, one file
in the data directory) or PostgreSQL (``CALIB_DATABASE_URL=postgresql://…``, for several
replicas on one catalog), behind one small interface the catalog's SQL is written against.

Both give the catalog the same guarantees:

- **Serialised writers.** A write is one transaction that holds the catalog's write lock
  from its first statement: SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's transaction-scoped
  advisory lock (``pg_advisory_xact_lock``, :data:`WRITE_LOCK`) taken right after
  ``BEGIN``. So a check and the write it guards (a link that still opens, the labels' cap,
  a blob that is still there) see no other writer in between, on every replica.
- **All or nothing.** A transaction killed before its ``COMMIT`` leaves nothing (SQLite's
  WAL journal with ``synchronous=FULL``; PostgreSQL's WAL with its default
  ``synchronous_commit=on``): a label acknowledged to a reviewer survives a SIGKILL, a
  label whose write was killed is not stored.
- **Reads outside a transaction** see each statement's committed state (SQLite's
  autocommit, PostgreSQL's autocommit at ``READ COMMITTED``).

The catalog's SQL uses ``?`` placeholders and only syntax both accept (``INSERT … ON
CONFLICT DO NOTHING``, ``ON CONFLICT (…) DO UPDATE``); the PostgreSQL connection turns
``?`` into psycopg's ``%s`` (no statement of calib has a ``?`` or ``%`` of its own).
The schema and its versions are :mod:`calib.hosting.schema`'s.

psycopg is imported only when a PostgreSQL URL is given: the embedded default does not
need it installed. PostgreSQL connections are kept in a small per-process pool (dropped
after a ``fork``); a connection that failed is closed, not reused, and one idle for more
than :data:`VALIDATE_AFTER_S` is checked before use, so that a database restart or
failover costs no request.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from calib.errors import CalibError
from calib.hosting.schema import SCHEMA_VERSION, statements

#: The key of PostgreSQL's advisory lock that serialises the catalog's writers ("calib").
WRITE_LOCK = 0x63616C6962
#: Idle PostgreSQL connections one process keeps.
POOL_SIZE = 8
#: How long a statement waits for a lock (SQLite's busy timeout, PostgreSQL's lock_timeout).
LOCK_TIMEOUT_S = 30
#: A pooled PostgreSQL connection idle longer than this is checked (``SELECT 1``) before use.
VALIDATE_AFTER_S = 5.0
#: Connections a forked child inherited from its parent's pool (never used, never closed).
_FORKED_AWAY: list[Any] = []


class Connection(Protocol):
    """What the catalog calls on a connection (``sqlite3.Connection`` has it as it is)."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any: ...


def is_database_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the database's failure (SQLite's or psycopg's), not calib's."""
    if isinstance(exc, sqlite3.Error):
        return True
    mod = type(exc).__module__ or ""
    return mod == "psycopg" or mod.startswith(("psycopg.", "psycopg_"))


def redact(url: str) -> str:
    """``url`` without its password (what messages and logs may show)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    user = parts.username or ""
    port = f":{parts.port}" if parts.port else ""
    return parts._replace(netloc=f"{user}:***@{host}{port}").geturl()


def check_url(url: str) -> str:
    """``url`` if it names a PostgreSQL database, else a :class:`CalibError` naming the setting."""
    scheme = urlsplit(url).scheme
    if scheme not in ("postgresql", "postgres"):
        raise CalibError(
            f"CALIB_DATABASE_URL must be a postgresql://user:password@host:port/database URL, got a {scheme or 'bare'!s} "
            "address (leave it unset for the embedded SQLite catalog)"
        )
    return url


class Database:
    """One catalog database: :meth:`migrate` once, then :meth:`connect` (reads) and
    :meth:`transaction` (writes, serialised)."""

    dialect = ""

    def connect(self) -> contextlib.AbstractContextManager[Connection]:
        raise NotImplementedError

    def transaction(self) -> contextlib.AbstractContextManager[Connection]:
        raise NotImplementedError

    def describe(self) -> str:
        """The database as a message may name it (no password)."""
        raise NotImplementedError

    def version(self, con: Connection) -> int:
        raise NotImplementedError

    def _set_version(self, con: Connection, version: int) -> None:
        raise NotImplementedError

    def migrate(self, upto: int = SCHEMA_VERSION) -> int:
        """Bring the schema to version ``upto`` (default: the current one) in one write
        transaction, from whatever version it has; returns the version it had. A newer
        version than calib knows is refused (:class:`CalibError`: upgrade calib)."""
        with self.transaction() as con:
            version = self.version(con)
            if version > SCHEMA_VERSION:
                raise CalibError(f"{self.describe()}: written by a newer calib (schema {version}); upgrade calib")
            for v in range(version, upto):
                for stmt in statements(v, self.dialect):
                    con.execute(stmt)
            if version < upto:
                self._set_version(con, upto)
        return version

    def integrity_check(self) -> str:
        """``"ok"`` when the database says it is sound."""
        with self.connect() as con:
            con.execute("SELECT 1").fetchone()
        return "ok"

    def ping(self) -> None:
        """Raise unless the database answers a query (the readiness probe)."""
        with self.connect() as con:
            con.execute("SELECT 1").fetchone()


class SQLiteDatabase(Database):
    """The embedded catalog: one SQLite file in WAL mode (``synchronous=FULL``)."""

    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path

    def describe(self) -> str:
        return str(self.path)

    def wal(self) -> None:
        """Switch the file to WAL mode (kept in the file), or refuse to use it."""
        con = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT_S, isolation_level=None)
        try:
            mode = con.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        finally:
            con.close()
        if str(mode).lower() != "wal":
            raise CalibError(f"{self.path}: cannot switch the catalog to WAL mode (got {mode})")

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        con = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            con.execute(f"PRAGMA busy_timeout={LOCK_TIMEOUT_S * 1000}")
            con.execute("PRAGMA foreign_keys=ON")
            # FULL: a link handed to the user survives a power cut, not only a crash.
            con.execute("PRAGMA synchronous=FULL")
            yield con
        finally:
            con.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Connection]:
        with self.connect() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            else:
                con.execute("COMMIT")

    def version(self, con: Connection) -> int:
        return int(con.execute("PRAGMA user_version").fetchone()[0])

    def _set_version(self, con: Connection, version: int) -> None:
        con.execute(f"PRAGMA user_version={int(version)}")

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` (``"ok"`` when sound)."""
        with self.connect() as con:
            return "; ".join(r[0] for r in con.execute("PRAGMA integrity_check"))


class _PgConnection:
    """A psycopg connection with the catalog's ``?`` placeholders."""

    def __init__(self, con: Any) -> None:
        self.raw = con

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(sql.replace("?", "%s"), tuple(params) if params else None)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        cur = self.raw.cursor()
        cur.executemany(sql.replace("?", "%s"), [tuple(r) for r in rows])
        return cur


class PostgresDatabase(Database):
    """A catalog in a PostgreSQL database (psycopg 3), shared by every replica."""

    dialect = "postgresql"

    def __init__(self, url: str) -> None:
        try:
            import psycopg  # noqa: F401  (installed with calib's requirements)
        except ImportError:
            raise CalibError("CALIB_DATABASE_URL needs psycopg: pip install 'psycopg[binary]'") from None
        self.url = check_url(url)
        self._lock = threading.Lock()
        self._idle: list[Any] = []
        self._pid = os.getpid()

    def describe(self) -> str:
        return redact(self.url)

    def _take(self) -> Any:
        import psycopg
        from psycopg.pq import TransactionStatus

        while True:
            with self._lock:
                if self._pid != os.getpid():
                    # A forked child must not use its parent's sockets, nor close them (closing
                    # sends the server a Terminate that would end the parent's session): they
                    # are kept, unused, until the child exits.
                    _FORKED_AWAY.extend(con for con, _ in self._idle)
                    self._idle, self._pid = [], os.getpid()
                if not self._idle:
                    break
                con, since = self._idle.pop()
            if con.closed or con.info.transaction_status != TransactionStatus.IDLE:
                con.close()
                continue
            if time.monotonic() - since < VALIDATE_AFTER_S:
                return con
            try:  # idle a while: the server may have closed it (a restart, a failover, an idle timeout)
                con.execute("SELECT 1")
                return con
            except psycopg.Error:
                con.close()
        con = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        con.execute(f"SET lock_timeout = '{LOCK_TIMEOUT_S}s'")
        return con

    def _give_back(self, con: Any, ok: bool) -> None:
        from psycopg.pq import TransactionStatus

        keep = ok and not con.closed and con.info.transaction_status == TransactionStatus.IDLE
        with self._lock:
            if keep and self._pid == os.getpid() and len(self._idle) < POOL_SIZE:
                self._idle.append((con, time.monotonic()))
                return
        con.close()

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        con = self._take()
        ok = False
        try:
            yield _PgConnection(con)
            ok = True
        finally:
            self._give_back(con, ok)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Connection]:
        with self.connect() as con:
            con.execute("BEGIN")
            try:
                con.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")
                yield con
            except BaseException:
                with contextlib.suppress(Exception):
                    con.execute("ROLLBACK")
                raise
            else:
                con.execute("COMMIT")

    def version(self, con: Connection) -> int:
        con.execute("CREATE TABLE IF NOT EXISTS calib_schema (version INTEGER NOT NULL)")
        row = con.execute("SELECT version FROM calib_schema").fetchone()
        if row is None:
            con.execute("INSERT INTO calib_schema(version) VALUES (0)")
            return 0
        return int(row[0])

    def _set_version(self, con: Connection, version: int) -> None:
        con.execute("UPDATE calib_schema SET version = ?", (int(version),))

    def close(self) -> None:
        """Close the idle connections (tests; a server keeps them until it exits)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for con, _ in idle:
            con.close()


def open_database(url: str | None, sqlite_path: Path) -> Database:
    """PostgreSQL at ``url`` when one is given, else the SQLite file ``sqlite_path``."""
    if url:
        return PostgresDatabase(url)
    return SQLiteDatabase(sqlite_path)
