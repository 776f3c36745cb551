"""The share store's crash-safe storage: a data directory of content-addressed blobs and
a SQLite catalog, and the upkeep that keeps the two consistent.

Layout of the data directory (``CALIB_DATA_DIR``, default ``./.calib-data``)::

    catalog.sqlite3        SQLite catalog in WAL mode (+ -wal / -shm files)
    blobs/ab/abcdef...     one file per distinct uploaded file, named by the
                           SHA-256 of its bytes (stored once, whoever uploads it)

Catalog tables (their DDL and versions are :mod:`calib.hosting.schema`'s):

- ``blobs(hash, size, created)`` — the files; ``hash`` = SHA-256 hex of the bytes.
- ``datasets(id, spec, created)`` — how to rebuild one :class:`~calib.dataset.Dataset`:
  ``spec`` is canonical JSON (name, format, load options, files as name + hash + size)
  and ``id`` its SHA-256, so the same upload with the same options is stored once.
- ``dataset_blobs(dataset_id, position, blob_hash)`` — which files a dataset reads.
- ``shares(id, token_hash, owner_hash, owner_user, view, created, expires, revoked)``.
- ``share_datasets(share_id, position, dataset_id)``.
- ``reviewing(share_id, enabled, sample_size, seed, changed)`` — the owner's review
  setting of a share (no row = reviewing off).
- ``labels(id, share_id, dataset, item, correct, note, reviewer, time, kind)`` — every
  label a reviewer gave, append-only: a changed label is a new row, so the history is
  kept; the current label is the latest row per (share, dataset, item, reviewer). Both
  tables go with their share (``ON DELETE CASCADE``), in the transaction that deletes
  it. Their rules are :mod:`calib.hosting.labels`'.
- ``login_failures(id, client, at)`` — the password lock-out's failures when replicas
  share a catalog (:mod:`calib.hosting.lockout`).

An older catalog is migrated in place when it is opened, in one transaction; a catalog
of a newer version is refused.

The database
------------
The catalog is an SQLite file in the data directory by default; with
``CALIB_DATABASE_URL=postgresql://…`` it is a PostgreSQL database that several replicas
share (:mod:`calib.hosting.database`: the same schema, the same serialised,
all-or-nothing writes). The blobs stay files in the data directory's ``blobs/`` folder
either way (or in ``CALIB_BLOB_DIR``), so with PostgreSQL every replica must mount the
same blob directory (a shared volume): a replica that cannot see a blob another replica
wrote would drop its share as damaged on :meth:`Catalog.open`. The blob files are
content-addressed, written atomically (temporary file, ``fsync``, ``os.replace``) and
named by writer host and process, so replicas on several hosts write the same folder
safely.

Crash safety
------------
A blob is written to a temporary file in its final folder, flushed with ``fsync``,
renamed over its final name with :func:`os.replace` (atomic on POSIX) and the folder is
fsynced; only then are the catalog rows written, in one serialised write transaction
(SQLite's ``BEGIN IMMEDIATE``, or PostgreSQL's under the catalog's advisory lock) that
re-checks every blob it references. A crash before the commit leaves at most a temporary
file or an unreferenced blob, never a catalog row without its file; the database's
write-ahead log makes the commit itself all-or-nothing. :meth:`Catalog.open`
removes temporary files of writers that are gone, and drops from the catalog any
share whose blob is missing or has the wrong size; every read re-hashes the bytes
it returns. Several threads and processes may use one data directory at once
(the database serialises the writers); with the SQLite catalog it must be on a local disk
(SQLite's locking is unreliable on network file systems).

Permissions
-----------
The data directory and the blob folders are 0700 and every file in them 0600, owned by
the server's user, whatever its umask: blobs are written with :func:`tempfile.mkstemp`
(0600), the catalog is created 0600 before SQLite opens it (SQLite gives its -wal and
-shm files the catalog's mode), and :meth:`Catalog.open` tightens a directory or catalog
left looser (by an older calib or a ``docker volume create``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import re
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Self, TypeVar

from calib.errors import CalibError
from calib.hosting.database import Connection, SQLiteDatabase, is_database_error, open_database
from calib.hosting.schema import SCHEMA_VERSION
from calib.hosting.shares import SweepReport
from calib.hosting.shutdown import WRITES
from calib.limits import MB

log = logging.getLogger(__name__)

_HASH_RE = re.compile(r"[0-9a-f]{64}")
#: Temporary files and unreferenced blobs younger than this may belong to a writer
#: still at work in another process, so :meth:`Catalog.open` leaves them alone.
GRACE_SECONDS = 3600.0
#: :meth:`calib.hosting.store.Store.share` sweeps expired and revoked shares at most this often.
SWEEP_EVERY_SECONDS = 3600.0

def _host_tag() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: The data directory and its folders: the server's user only (the blobs are users' uploads,
#: the catalog their share views and owner digests). Files are created 0600 (``mkstemp``,
#: and the catalog by :meth:`Catalog._init`), folders 0700, independent of the umask.
DIR_MODE = 0o700
FILE_MODE = 0o600


def _make_private(path: Path, mode: int) -> None:
    """Set ``path`` to ``mode`` if it has other permission bits (a directory made by an
    older calib, or by ``docker volume create``); a path the server may not change is
    logged, not fatal (its owner must fix it)."""
    try:
        current = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return
    if current == mode:
        return
    try:
        os.chmod(path, mode)
    except PermissionError:
        log.warning("%s has mode %o and cannot be made %o: other users may read it", path, current, mode)


def write_private(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` readable by this user only (0600, whatever the umask),
    as the store keeps its own files: for what leaves the store into a file (the labels'
    export: reviewers' names and notes). An existing regular file is tightened to 0600
    before a byte is written; a device (``/dev/stdout``) is written as it is."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "wb") as fh:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.fchmod(fd, FILE_MODE)
        fh.write(data)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


#: What a user is told when the store itself fails (disk full, permissions, a lock
#: held too long); the details go to the server log.
STORE_FAILED_MESSAGE = (
    "Shared links are not available on this server right now (the share store failed; "
    "the server log has the details). Try again in a moment."
)

_F = TypeVar("_F", bound=Callable[..., Any])


def reported(fn: _F) -> _F:
    """Turn a failure of the disk or of SQLite into a :class:`CalibError` with
    :data:`STORE_FAILED_MESSAGE` (logged with its traceback), so that no traceback
    reaches a user."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if not (isinstance(exc, OSError) or is_database_error(exc)):
                raise
            log.exception("share store: %s failed", fn.__name__)
            raise CalibError(STORE_FAILED_MESSAGE) from None

    return wrapper  # type: ignore[return-value]


class Catalog:
    """The storage under the share store (:class:`calib.hosting.store.Store`): one data
    directory's blobs and catalog, written crash-safe, and its upkeep (repair, sweep,
    garbage collection). Open it with :meth:`open`.

    Parameters
    ----------
    data_dir:
        The data directory (created if missing, mode 0700).
    retention_days:
        Lifetime of a share; ``0`` keeps shares until they are revoked.
    max_file_bytes:
        Largest single file accepted (the upload cap).
    max_store_bytes:
        Total size of all blobs; ``0`` for no quota.
    clock:
        Unix time source (tests inject a fake one).
    on_stage:
        Test instrumentation: called with ``"blob_partial"`` (half of a blob written
        to its temporary file), ``"blobs_written"`` (all blobs durable, catalog not yet
        written) and ``"before_commit"`` (catalog rows written, not committed).
    database_url:
        A ``postgresql://`` URL: the catalog lives in that database
        (:class:`~calib.hosting.database.PostgresDatabase`) instead of the data directory's
        SQLite file; the blobs stay in the data directory.
    blob_dir:
        Where the blobs go instead of the data directory's ``blobs/`` (``CALIB_BLOB_DIR``):
        a directory every replica mounts. Its files are named by their SHA-256, written
        atomically, 0600 in 0700 folders, and under the same caps. Several servers may share
        it only when they share the catalog too (``database_url``): :meth:`repair` removes
        the files its own catalog does not list.
    """

    def __init__(
        self,
        data_dir: str | Path,
        *,
        retention_days: float = 30.0,
        max_file_bytes: int = 200 * MB,
        max_store_bytes: int = 0,
        clock: Callable[[], float] = time.time,
        on_stage: Callable[[str], None] | None = None,
        database_url: str | None = None,
        blob_dir: str | Path | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.blob_dir = self.data_dir / "blobs" if blob_dir is None else Path(blob_dir).resolve()
        self.catalog_path = self.data_dir / "catalog.sqlite3"
        self.retention_days = float(retention_days)
        self.max_file_bytes = int(max_file_bytes)
        self.max_store_bytes = int(max_store_bytes)
        self.clock = clock
        self.on_stage = on_stage
        self.db = open_database(database_url, self.catalog_path)
        self._sweep_lock = threading.Lock()
        self._last_sweep = float("-inf")

    # ------------------------------------------------------------ opening
    @classmethod
    @reported
    def open(cls, data_dir: str | Path, **kwargs: Any) -> Self:
        """Open (creating if needed) a data directory, then tidy it: remove temporary
        files left by crashed writers, drop catalog entries whose blob is gone, and
        sweep expired and revoked shares. Safe to call from several processes."""
        store = cls(data_dir, **kwargs)
        store._init()
        store.repair()
        store.sweep()
        return store

    def _init(self) -> None:
        self.data_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        _make_private(self.data_dir, DIR_MODE)
        self.blob_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        _make_private(self.blob_dir, DIR_MODE)
        if isinstance(self.db, SQLiteDatabase):
            # Created here, 0600, before SQLite opens it: SQLite gives the -wal and -shm files
            # the catalog's own mode, whatever the process's umask. Only when it is missing
            # (O_EXCL): closing a descriptor of a file drops every POSIX lock this process
            # holds on it, so opening and closing an existing catalog while another thread's
            # connection holds a lock would let a second writer in and corrupt it (SQLite's
            # "How To Corrupt Your Database Files", 2.2).
            with contextlib.suppress(FileExistsError):
                os.close(os.open(self.catalog_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, FILE_MODE))
            for suffix in ("", "-wal", "-shm"):
                _make_private(Path(f"{self.catalog_path}{suffix}"), FILE_MODE)
            self.db.wal()
        was = self.db.migrate()
        if 0 < was < SCHEMA_VERSION:
            log.info("%s: catalog migrated from schema %d to %d", self.db.describe(), was, SCHEMA_VERSION)

    def _connect(self) -> contextlib.AbstractContextManager[Connection]:
        return self.db.connect()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Connection]:
        """One write transaction, counted in :data:`~calib.hosting.shutdown.WRITES`: a
        server told to stop lets it commit (:mod:`calib.hosting.shutdown`)."""
        with WRITES.writing(), self.db.transaction() as con:
            yield con

    def _stage(self, name: str) -> None:
        if self.on_stage is not None:
            self.on_stage(name)

    # -------------------------------------------------------------- blobs
    def _blob_path(self, digest: str) -> Path:
        # Paths are only ever built from a validated hex digest: nothing a user
        # typed reaches the file system.
        if _HASH_RE.fullmatch(digest) is None:
            raise ValueError(f"not a sha256 hex digest: {digest!r}")
        return self.blob_dir / digest[:2] / digest

    def _blob_ok(self, digest: str, size: int) -> bool:
        try:
            return self._blob_path(digest).stat().st_size == size
        except FileNotFoundError:
            return False

    def _read_blob(self, digest: str) -> bytes | None:
        try:
            data = self._blob_path(digest).read_bytes()
        except (FileNotFoundError, ValueError):
            return None
        if hashlib.sha256(data).hexdigest() != digest:
            log.error("blob %s does not match its hash; the share using it is withheld", digest)
            return None
        return data

    def _write_blob(self, digest: str, data: bytes) -> None:
        """Make the blob durable at its final path (no-op when an intact copy exists)."""
        final = self._blob_path(digest)
        if final.exists() and self._read_blob(digest) is not None:
            return
        folder = final.parent
        folder.mkdir(mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".tmp-{_host_tag()}-{os.getpid()}-", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                view = memoryview(data)
                half = len(view) // 2
                fh.write(view[:half])
                if self.on_stage is not None:
                    fh.flush()
                    self._stage("blob_partial")
                fh.write(view[half:])
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        _fsync_dir(folder)

    # ---------------------------------------------------------- housekeeping
    @reported
    def sweep(self) -> SweepReport:
        """Remove expired shares and revoked ones without reviewers' labels, then datasets and
        files no share uses. A revoked share with labels stays (it no longer opens) until its
        owner deletes it or it expires: revoking stops the labelling, it does not throw the
        reviewers' work away."""
        now = self.clock()
        with self._transaction() as con:
            n = con.execute(
                "DELETE FROM shares WHERE (revoked IS NOT NULL AND id NOT IN (SELECT share_id FROM labels)) "
                "OR (expires IS NOT NULL AND expires <= ?)",
                (now,),
            ).rowcount
            d, b = self._collect_garbage(con)
        with self._sweep_lock:
            self._last_sweep = time.monotonic()
        return SweepReport(shares=n, datasets=d, blobs=b)

    def _maybe_sweep(self) -> None:
        with self._sweep_lock:
            due = time.monotonic() - self._last_sweep >= SWEEP_EVERY_SECONDS
        if due:
            self.sweep()

    def _collect_garbage(self, con: Connection) -> tuple[int, int]:
        """Delete unreferenced datasets and blobs, and the blob files, inside the caller's
        transaction. Files go before the commit: a writer that wants to reuse a blob
        re-checks it inside its own transaction, which SQLite orders after this one."""
        d = con.execute(
            "DELETE FROM datasets WHERE id NOT IN (SELECT dataset_id FROM share_datasets)"
        ).rowcount
        dead = [r[0] for r in con.execute(
            "SELECT hash FROM blobs WHERE hash NOT IN (SELECT blob_hash FROM dataset_blobs)"
        )]
        for digest in dead:
            con.execute("DELETE FROM blobs WHERE hash = ?", (digest,))
            with contextlib.suppress(FileNotFoundError, ValueError):
                self._blob_path(digest).unlink()
        return d, len(dead)

    @reported
    def repair(self, *, grace_seconds: float = GRACE_SECONDS) -> SweepReport:
        """Tidy after crashes: remove temporary files of dead writers (or older than
        ``grace_seconds``), drop every catalog entry whose blob is missing or has the
        wrong size (with the shares that use it), and remove unreferenced blob files
        older than ``grace_seconds``. Run by :meth:`open`."""
        now = time.time()
        host = _host_tag()
        temps = 0
        if self.blob_dir.is_dir():
            for folder in self.blob_dir.iterdir():
                if not folder.is_dir():
                    continue
                for f in folder.glob(".tmp-*"):
                    parts = f.name.split("-")
                    dead = False
                    if len(parts) >= 4 and parts[1] == host and parts[2].isdigit():
                        dead = not _pid_alive(int(parts[2]))
                    try:
                        old = now - f.stat().st_mtime > grace_seconds
                    except FileNotFoundError:
                        continue
                    if dead or old:
                        with contextlib.suppress(FileNotFoundError):
                            f.unlink()
                            temps += 1
        with self._transaction() as con:
            rows = con.execute("SELECT hash, size FROM blobs").fetchall()
            bad = [h for h, size in rows if not self._blob_ok_safe(h, size)]
            shares = datasets = 0
            for digest in bad:
                log.error("blob %s is missing or truncated; dropping the shares that use it", digest)
                ds_ids = [r[0] for r in con.execute(
                    "SELECT dataset_id FROM dataset_blobs WHERE blob_hash = ?", (digest,)
                )]
                for ds in ds_ids:
                    shares += con.execute(
                        "DELETE FROM shares WHERE id IN (SELECT share_id FROM share_datasets WHERE dataset_id = ?)",
                        (ds,),
                    ).rowcount
                    con.execute("DELETE FROM share_datasets WHERE dataset_id = ?", (ds,))
                    datasets += con.execute("DELETE FROM datasets WHERE id = ?", (ds,)).rowcount
                con.execute("DELETE FROM dataset_blobs WHERE blob_hash = ?", (digest,))
                con.execute("DELETE FROM blobs WHERE hash = ?", (digest,))
            known = {h for h, _ in rows} - set(bad)
            orphans = 0
            if self.blob_dir.is_dir():
                for folder in self.blob_dir.iterdir():
                    if not folder.is_dir():
                        continue
                    for f in folder.iterdir():
                        if _HASH_RE.fullmatch(f.name) and f.name not in known:
                            try:
                                if now - f.stat().st_mtime > grace_seconds:
                                    f.unlink()
                                    orphans += 1
                            except FileNotFoundError:
                                pass
        return SweepReport(shares=shares, datasets=datasets, blobs=len(bad) + orphans, temp_files=temps)

    def _blob_ok_safe(self, digest: str, size: int) -> bool:
        try:
            return self._blob_ok(digest, size)
        except ValueError:
            return False

    def integrity_check(self) -> str:
        """``"ok"`` when the catalog is sound (SQLite's ``PRAGMA integrity_check``; a
        PostgreSQL catalog that answers a query)."""
        return self.db.integrity_check()

    def ping(self) -> None:
        """Raise unless the catalog answers a query (the readiness probe)."""
        self.db.ping()
