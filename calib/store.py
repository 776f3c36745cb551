"""Shared datasets: uploads stored server-side and reopened by an unguessable link.

A *share* is one or more datasets plus a view state (thresholds, map, binning,
page), addressed by a random token. The link carries only the token; the token
never appears in a path and the catalog keeps only its SHA-256, so neither a file
name, nor a content hash, nor a copy of the catalog opens a share.

Layout of the data directory (``CALIB_DATA_DIR``, default ``./.calib-data``)::

    catalog.sqlite3        SQLite catalog in WAL mode (+ -wal / -shm files)
    blobs/ab/abcdef...     one file per distinct uploaded file, named by the
                           SHA-256 of its bytes (stored once, whoever uploads it)

Catalog tables (schema version 1, ``PRAGMA user_version``):

- ``blobs(hash, size, created)`` — the files; ``hash`` = SHA-256 hex of the bytes.
- ``datasets(id, spec, created)`` — how to rebuild one :class:`~calib.dataset.Dataset`:
  ``spec`` is canonical JSON (name, format, load options, files as name + hash + size)
  and ``id`` its SHA-256, so the same upload with the same options is stored once.
- ``dataset_blobs(dataset_id, position, blob_hash)`` — which files a dataset reads.
- ``shares(id, token_hash, owner_hash, owner_user, view, created, expires, revoked)``.
- ``share_datasets(share_id, position, dataset_id)``.

What is stored is the *input*, not the parsed result: the uploaded bytes, their file
names, the load options and the format, so reopening calls :func:`calib.loading.load`
(or :func:`~calib.loading.load_many`) exactly as the upload did and yields the same
dataset, under the server's current limits (:meth:`DatasetSpec.load`).

Crash safety
------------
A blob is written to a temporary file in its final folder, flushed with ``fsync``,
renamed over its final name with :func:`os.replace` (atomic on POSIX) and the folder is
fsynced; only then are the catalog rows written, in one ``BEGIN IMMEDIATE``
transaction that re-checks every blob it references. A crash before the commit leaves
at most a temporary file or an unreferenced blob, never a catalog row without its
file; SQLite's WAL journal makes the commit itself all-or-nothing. :meth:`Store.open`
removes temporary files of writers that are gone, and drops from the catalog any
share whose blob is missing or has the wrong size; every read re-hashes the bytes
it returns. Several threads and processes may use one data directory at once
(SQLite serialises the writers); it must be on a local disk (SQLite's locking is
unreliable on network file systems).

Permissions
-----------
The data directory and the blob folders are 0700 and every file in them 0600, owned by
the server's user, whatever its umask: blobs are written with :func:`tempfile.mkstemp`
(0600), the catalog is created 0600 before SQLite opens it (SQLite gives its -wal and
-shm files the catalog's mode), and :meth:`Store.open` tightens a directory or catalog
left looser (by an older calib or a ``docker volume create``).

Access
------
Anyone holding a link can open it (read-only): look, move thresholds in their own
session. Revoking, deleting or changing a share takes the owner's proof: the owner
secret returned by :meth:`Store.share` (only its SHA-256 is kept), or the logged-in
user the share was made by. Lookups of a missing, revoked, expired, damaged or
malformed token all return the same "no longer available" :class:`Lookup`; a token
that is not exactly :data:`TOKEN_CHARS` URL-safe characters is refused before any
file or database access.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import socket
import sqlite3
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.limits import MB, Limits, env_float, env_int
from calib.loading import FORMATS, LoadOptions, load, load_many
from calib.scale import Scale

log = logging.getLogger(__name__)

#: Random bytes in a share token: 192 bits (the issue asks for at least 128).
TOKEN_BYTES = 24
#: Characters of a token: ``secrets.token_urlsafe(24)`` is 32 URL-safe base64 characters.
TOKEN_CHARS = 32
#: Random bytes in an owner secret (256 bits; 43 characters).
OWNER_SECRET_BYTES = 32
OWNER_SECRET_CHARS = 43
_TOKEN_RE = re.compile(rf"[A-Za-z0-9_-]{{{TOKEN_CHARS}}}")
_OWNER_RE = re.compile(rf"[A-Za-z0-9_-]{{{OWNER_SECRET_CHARS}}}")
_HASH_RE = re.compile(r"[0-9a-f]{64}")

#: The query parameter the dashboard puts the token in: ``?share=<token>``.
SHARE_PARAM = "share"
#: Largest view state (canonical JSON), bytes.
MAX_VIEW_BYTES = 64 * 1024
#: Most datasets in one share, and files in one dataset.
MAX_DATASETS = 20
MAX_FILES = 1000
#: Longest dataset or file name, characters.
MAX_NAME_CHARS = 1024
#: Temporary files and unreferenced blobs younger than this may belong to a writer
#: still at work in another process, so :meth:`Store.open` leaves them alone.
GRACE_SECONDS = 3600.0
#: :meth:`Store.share` sweeps expired and revoked shares at most this often.
SWEEP_EVERY_SECONDS = 3600.0

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS blobs (
    hash TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS datasets (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS dataset_blobs (
    dataset_id TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    blob_hash TEXT NOT NULL REFERENCES blobs(hash),
    PRIMARY KEY (dataset_id, position)
);
CREATE INDEX IF NOT EXISTS dataset_blobs_blob ON dataset_blobs(blob_hash);
CREATE TABLE IF NOT EXISTS shares (
    id TEXT PRIMARY KEY,
    token_hash BLOB NOT NULL UNIQUE,
    owner_hash BLOB NOT NULL,
    owner_user TEXT,
    view TEXT NOT NULL,
    created REAL NOT NULL,
    expires REAL,
    revoked REAL
);
CREATE INDEX IF NOT EXISTS shares_owner_user ON shares(owner_user);
CREATE TABLE IF NOT EXISTS share_datasets (
    share_id TEXT NOT NULL REFERENCES shares(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    dataset_id TEXT NOT NULL REFERENCES datasets(id),
    PRIMARY KEY (share_id, position)
);
CREATE INDEX IF NOT EXISTS share_datasets_dataset ON share_datasets(dataset_id);
"""

#: What a viewer is told for every token that does not open a share. One message for
#: all causes, so that probing tokens learns nothing.
UNAVAILABLE_MESSAGE = (
    "This shared link is no longer available: it has expired, its owner revoked or deleted it, "
    "or it was copied incompletely. Ask the person who sent it for a new link."
)
NOT_OWNER_MESSAGE = (
    "Only the owner of this link can revoke, delete or change it. Anyone with the link can "
    "look at the data and move the thresholds in their own view."
)

# LoadOptions fields that are the server's limits, not the user's choices: they are
# not stored (so they do not split identical uploads into two datasets) and are
# re-applied from the server's current Limits when a share is reopened.
_LIMIT_FIELDS = frozenset({"max_rows", "max_line_chars", "max_decompressed_bytes"})


# ----------------------------------------------------------------- value types
@dataclass(frozen=True)
class InputFile:
    """One uploaded file: the name it was uploaded under and its exact bytes."""

    name: str
    data: bytes = field(repr=False)

    @functools.cached_property
    def sha256(self) -> str:
        """SHA-256 hex digest of the bytes (computed once; a 200 MB upload takes ~0.3 s)."""
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class DatasetSpec:
    """How to rebuild one dataset: its file(s), its name, its load options, its format.

    One file is read with :func:`calib.loading.load`; several (an lm-eval output
    folder) with :func:`calib.loading.load_many`.
    """

    name: str
    files: tuple[InputFile, ...]
    options: LoadOptions = field(default_factory=LoadOptions)
    fmt: str = "auto"

    @classmethod
    def from_upload(
        cls, name: str, filename: str, data: bytes, options: LoadOptions | None = None, fmt: str = "auto"
    ) -> DatasetSpec:
        """The spec of one uploaded file (``st.file_uploader``'s ``.name`` and ``.getvalue()``)."""
        return cls(name, (InputFile(filename, bytes(data)),), options or LoadOptions(), fmt)

    @classmethod
    def from_path(
        cls, path: str | Path, *, name: str | None = None, options: LoadOptions | None = None, fmt: str = "auto"
    ) -> DatasetSpec:
        """The spec of a file on disk (a sample) or of every file in a folder."""
        p = Path(path)
        try:
            if p.is_dir():
                files = tuple(InputFile(f.name, f.read_bytes()) for f in sorted(p.iterdir()) if f.is_file())
            else:
                files = (InputFile(p.name, p.read_bytes()),)
        except OSError as exc:
            raise CalibError(f"{p}: cannot read ({exc.strerror})") from None
        return cls(name or p.name, files, options or LoadOptions(), fmt)

    def load(self, limits: Limits | None = None) -> Dataset:
        """Rebuild the dataset, applying ``limits`` (the server's caps) when given."""
        options = limits.load_options(self.options) if limits is not None else self.options
        if len(self.files) == 1:
            f = self.files[0]
            return load(f.name, f.data, name=self.name, options=options, fmt=self.fmt)
        return load_many([(f.name, f.data) for f in self.files], name=self.name, options=options)

    def canonical(self) -> dict[str, Any]:
        """The JSON-able record kept in the catalog (the bytes are kept as blobs)."""
        return {
            "v": 1,
            "name": self.name,
            "fmt": self.fmt,
            "options": options_to_dict(self.options),
            "files": [{"name": f.name, "sha256": f.sha256, "size": len(f.data)} for f in self.files],
        }

    @property
    def nbytes(self) -> int:
        return sum(len(f.data) for f in self.files)


@dataclass(frozen=True)
class ShareReceipt:
    """What :meth:`Store.share` hands back to the owner.

    ``token`` goes in the link (``?share=<token>``). ``owner_secret`` proves ownership
    (revoke, delete); show it to the owner once and never put it in the link.
    ``expires_at`` is a Unix time, or ``None`` when shares do not expire.
    """

    token: str = field(repr=False)
    owner_secret: str = field(repr=False)
    share_id: str
    expires_at: float | None


@dataclass(frozen=True)
class Share:
    """An opened share: its datasets (with their bytes) and its view state."""

    share_id: str
    datasets: tuple[DatasetSpec, ...]
    view_json: str = field(repr=False)
    created_at: float
    expires_at: float | None
    owner_user: str | None = None

    @property
    def view(self) -> dict[str, Any]:
        """A fresh copy of the view state (the caller may change it freely)."""
        return json.loads(self.view_json)

    def load_datasets(self, limits: Limits | None = None) -> list[Dataset]:
        """Rebuild every dataset (may raise :class:`CalibError` if today's limits refuse it)."""
        return [spec.load(limits) for spec in self.datasets]


@dataclass(frozen=True)
class Lookup:
    """The result of opening a token.

    ``status`` is ``"ok"`` or why not (``"malformed"``, ``"unknown"``, ``"revoked"``,
    ``"expired"``, ``"damaged"``) for logs and tests; a viewer is shown
    :attr:`message`, which is the same for every cause.
    """

    status: str
    share: Share | None = None

    @property
    def available(self) -> bool:
        return self.status == "ok" and self.share is not None

    @property
    def message(self) -> str:
        return "" if self.available else UNAVAILABLE_MESSAGE


@dataclass(frozen=True)
class Outcome:
    """The result of an owner action: ``ok``, a ``status`` and a message for the user.

    Statuses: ``"revoked"``, ``"deleted"``, ``"updated"`` (ok), ``"not_owner"``,
    ``"not_available"``.
    """

    ok: bool
    status: str
    message: str


@dataclass(frozen=True)
class ShareInfo:
    """A share as listed to its logged-in owner (no token: only its hash is kept)."""

    share_id: str
    dataset_names: tuple[str, ...]
    created_at: float
    expires_at: float | None
    status: str


@dataclass(frozen=True)
class SweepReport:
    """What a sweep or a repair removed."""

    shares: int = 0
    datasets: int = 0
    blobs: int = 0
    temp_files: int = 0


# ------------------------------------------------------------- serialisation
def options_to_dict(options: LoadOptions) -> dict[str, Any]:
    """The user's load choices as JSON-able values (the server's limits left out)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(LoadOptions):
        if f.name in _LIMIT_FIELDS:
            continue
        value = getattr(options, f.name)
        if isinstance(value, Scale):
            value = value.to_dict()
        elif isinstance(value, Mapping):
            value = {str(k): str(v) for k, v in sorted(value.items())}
        out[f.name] = value
    return out


def options_from_dict(data: Mapping[str, Any]) -> LoadOptions:
    """Inverse of :func:`options_to_dict`; fields this version does not know are ignored,
    so a share written by a newer version still opens."""
    known = {f.name for f in dataclasses.fields(LoadOptions)} - _LIMIT_FIELDS
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            continue
        if key == "rescale" and value is not None:
            value = Scale(float(value["lo"]), float(value["hi"]), str(value["name"]), str(value.get("how", "")))
        elif key == "extra":
            value = dict(value)
        kwargs[key] = value
    return LoadOptions(**kwargs)


def _canonical_json(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("ascii")).digest()


def valid_token(token: object) -> bool:
    """True when ``token`` has the exact shape of a share token (32 URL-safe characters).

    Pure string check: anything else (a path, ``../``, percent-encoding, NUL, a
    truncated or overlong token, a non-string) is refused before any lookup."""
    return isinstance(token, str) and _TOKEN_RE.fullmatch(token) is not None


def _valid_owner_secret(secret: object) -> bool:
    return isinstance(secret, str) and _OWNER_RE.fullmatch(secret) is not None


def _norm_user(user: str | None) -> str | None:
    if user is None:
        return None
    user = user.strip().lower()
    return user or None


def _check_name(kind: str, name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise CalibError(f"a {kind} name must be non-empty text")
    if len(name) > MAX_NAME_CHARS:
        raise CalibError(f"{kind} name {name[:60]!r}...: longer than {MAX_NAME_CHARS} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise CalibError(f"{kind} name {name[:60]!r}: contains control characters")
    return name


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
#: and the catalog by :meth:`Store._init`), folders 0700, independent of the umask.
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


def _reported(fn: _F) -> _F:
    """Turn a failure of the disk or of SQLite into a :class:`CalibError` with
    :data:`STORE_FAILED_MESSAGE` (logged with its traceback), so that no traceback
    reaches a user."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (sqlite3.Error, OSError):
            log.exception("share store: %s failed", fn.__name__)
            raise CalibError(STORE_FAILED_MESSAGE) from None

    return wrapper  # type: ignore[return-value]


# --------------------------------------------------------------------- store
class Store:
    """The share store over one data directory. Create it with :meth:`open`.

    One instance per process is enough (``st.cache_resource``); it holds no open
    connection (each call opens its own, which is cheap and survives ``fork``), so
    it is safe to use from many threads at once.

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
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.blob_dir = self.data_dir / "blobs"
        self.catalog_path = self.data_dir / "catalog.sqlite3"
        self.retention_days = float(retention_days)
        self.max_file_bytes = int(max_file_bytes)
        self.max_store_bytes = int(max_store_bytes)
        self.clock = clock
        self.on_stage = on_stage
        self._sweep_lock = threading.Lock()
        self._last_sweep = float("-inf")

    # ------------------------------------------------------------ opening
    @classmethod
    @_reported
    def open(cls, data_dir: str | Path, **kwargs: Any) -> Store:
        """Open (creating if needed) a data directory, then tidy it: remove temporary
        files left by crashed writers, drop catalog entries whose blob is gone, and
        sweep expired and revoked shares. Safe to call from several processes."""
        store = cls(data_dir, **kwargs)
        store._init()
        store.repair()
        store.sweep()
        return store

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **kwargs: Any) -> Store:
        """:meth:`open` configured from the environment.

        ``CALIB_DATA_DIR`` (default ``./.calib-data``), ``CALIB_RETENTION_DAYS``
        (default 30; 0 = until revoked), ``CALIB_STORE_MAX_MB`` (default 0 = no quota);
        the file cap is the upload cap of :class:`~calib.limits.Limits`.
        """
        env = os.environ if env is None else env
        limits = Limits.from_env(env)
        kwargs.setdefault("retention_days", env_float(env, "CALIB_RETENTION_DAYS", 30.0))
        kwargs.setdefault("max_store_bytes", env_int(env, "CALIB_STORE_MAX_MB", 0) * MB)
        kwargs.setdefault("max_file_bytes", limits.max_upload_mb * MB)
        return cls.open(env.get("CALIB_DATA_DIR") or ".calib-data", **kwargs)

    def _init(self) -> None:
        self.data_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        _make_private(self.data_dir, DIR_MODE)
        self.blob_dir.mkdir(mode=DIR_MODE, exist_ok=True)
        _make_private(self.blob_dir, DIR_MODE)
        # Created here, 0600, before SQLite opens it: SQLite gives the -wal and -shm files
        # the catalog's own mode, whatever the process's umask.
        os.close(os.open(self.catalog_path, os.O_RDWR | os.O_CREAT, FILE_MODE))
        for suffix in ("", "-wal", "-shm"):
            _make_private(Path(f"{self.catalog_path}{suffix}"), FILE_MODE)
        con = sqlite3.connect(self.catalog_path, timeout=30.0, isolation_level=None)
        try:
            con.execute("PRAGMA busy_timeout=30000")
            mode = con.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise CalibError(f"{self.catalog_path}: cannot switch the catalog to WAL mode (got {mode})")
            con.execute("BEGIN IMMEDIATE")
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                con.execute("ROLLBACK")
                raise CalibError(
                    f"{self.catalog_path}: written by a newer calib (schema {version}); upgrade calib"
                )
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    con.execute(stmt)
            con.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            con.execute("COMMIT")
        finally:
            con.close()

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        con = sqlite3.connect(self.catalog_path, timeout=30.0, isolation_level=None, check_same_thread=False)
        try:
            con.execute("PRAGMA busy_timeout=30000")
            con.execute("PRAGMA foreign_keys=ON")
            # FULL: a link handed to the user survives a power cut, not only a crash.
            con.execute("PRAGMA synchronous=FULL")
            yield con
        finally:
            con.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            else:
                con.execute("COMMIT")

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

    # -------------------------------------------------------------- share
    @_reported
    def share(
        self,
        datasets: Sequence[DatasetSpec],
        view: Mapping[str, Any] | None = None,
        *,
        owner_user: str | None = None,
        ttl_days: float | None = None,
    ) -> ShareReceipt:
        """Store ``datasets`` and ``view`` and return a new link token and owner secret.

        Each distinct file is stored once (by the SHA-256 of its bytes) and each
        distinct dataset spec once; a new share always gets a new token.

        Parameters
        ----------
        datasets:
            1 to :data:`MAX_DATASETS` dataset specs.
        view:
            JSON-able view state (thresholds, map, binning, page), at most
            :data:`MAX_VIEW_BYTES` as JSON.
        owner_user:
            The logged-in user's e-mail, when there is one: they may then revoke or
            delete the share without the owner secret.
        ttl_days:
            Lifetime, capped at the store's retention (default: the retention).

        Raises
        ------
        CalibError
            An input over a limit, a view that is not JSON, or a full store.
        """
        self._maybe_sweep()
        specs = self._check_specs(datasets)
        view_json = self._check_view(view)
        now = self.clock()
        expires = self._expiry(now, ttl_days)

        files: dict[str, InputFile] = {}
        for spec in specs:
            for f in spec.files:
                files.setdefault(f.sha256, f)
        self._check_quota(files)

        for digest, f in files.items():
            self._write_blob(digest, f.data)
        self._stage("blobs_written")

        token = secrets.token_urlsafe(TOKEN_BYTES)
        owner_secret = secrets.token_urlsafe(OWNER_SECRET_BYTES)
        share_id = secrets.token_hex(12)
        for attempt in range(3):
            try:
                with self._transaction() as con:
                    missing = [d for d, f in files.items() if not self._blob_ok(d, len(f.data))]
                    if missing:
                        raise _BlobVanished(missing)
                    self._check_quota(files, con)
                    for digest, f in files.items():
                        con.execute(
                            "INSERT OR IGNORE INTO blobs(hash, size, created) VALUES (?, ?, ?)",
                            (digest, len(f.data), now),
                        )
                    ds_ids = [self._insert_dataset(con, spec, now) for spec in specs]
                    con.execute(
                        "INSERT INTO shares(id, token_hash, owner_hash, owner_user, view, created, expires)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (share_id, _digest(token), _digest(owner_secret), _norm_user(owner_user), view_json,
                         now, expires),
                    )
                    for pos, ds_id in enumerate(ds_ids):
                        con.execute(
                            "INSERT INTO share_datasets(share_id, position, dataset_id) VALUES (?, ?, ?)",
                            (share_id, pos, ds_id),
                        )
                    self._stage("before_commit")
                break
            except _BlobVanished as exc:
                # A concurrent sweep removed a blob we meant to reuse: write it again.
                if attempt == 2:
                    raise CalibError("could not store the shared files (they were removed concurrently); retry") from None
                for digest in exc.digests:
                    self._write_blob(digest, files[digest].data)
        return ShareReceipt(token, owner_secret, share_id, expires)

    def _insert_dataset(self, con: sqlite3.Connection, spec: DatasetSpec, now: float) -> str:
        ds_id = _spec_id(spec)
        cur = con.execute(
            "INSERT OR IGNORE INTO datasets(id, spec, created) VALUES (?, ?, ?)",
            (ds_id, _canonical_json(spec.canonical()), now),
        )
        if cur.rowcount:
            for pos, f in enumerate(spec.files):
                con.execute(
                    "INSERT INTO dataset_blobs(dataset_id, position, blob_hash) VALUES (?, ?, ?)",
                    (ds_id, pos, f.sha256),
                )
        return ds_id

    def _check_specs(self, datasets: Sequence[DatasetSpec]) -> tuple[DatasetSpec, ...]:
        specs = tuple(datasets)
        if not 1 <= len(specs) <= MAX_DATASETS:
            raise CalibError(f"a share holds 1 to {MAX_DATASETS} datasets, got {len(specs)}")
        for spec in specs:
            if not isinstance(spec, DatasetSpec):
                raise TypeError(f"expected DatasetSpec, got {type(spec).__name__}")
            _check_name("dataset", spec.name)
            if spec.fmt != "auto" and spec.fmt not in FORMATS:
                raise CalibError(f"{spec.name}: unknown format {spec.fmt!r}; choose one of {', '.join(FORMATS)}")
            if not 1 <= len(spec.files) <= MAX_FILES:
                raise CalibError(f"{spec.name}: a dataset holds 1 to {MAX_FILES} files, got {len(spec.files)}")
            for f in spec.files:
                _check_name("file", f.name)
                if len(f.data) > self.max_file_bytes:
                    raise CalibError(
                        f"{f.name}: {len(f.data) / MB:,.1f} MB is more than this server stores "
                        f"({self.max_file_bytes / MB:,.0f} MB per file)"
                    )
        return specs

    @staticmethod
    def _check_view(view: Mapping[str, Any] | None) -> str:
        view = {} if view is None else view
        if not isinstance(view, Mapping) or not all(isinstance(k, str) for k in view):
            raise CalibError("the view state must be a mapping with text keys")
        try:
            text = _canonical_json(dict(view))
        except (TypeError, ValueError) as exc:
            raise CalibError(f"the view state cannot be stored as JSON: {exc}") from None
        if len(text.encode()) > MAX_VIEW_BYTES:
            raise CalibError(f"the view state is larger than {MAX_VIEW_BYTES // 1024} KB")
        return text

    def _expiry(self, now: float, ttl_days: float | None) -> float | None:
        if ttl_days is not None and not ttl_days > 0:
            raise CalibError(f"a share's lifetime must be positive, got {ttl_days} days")
        days = self.retention_days if ttl_days is None else ttl_days
        if self.retention_days > 0:
            days = min(days, self.retention_days)
        elif ttl_days is None:
            return None
        return now + days * 86400.0

    def _check_quota(self, files: Mapping[str, InputFile], con: sqlite3.Connection | None = None) -> None:
        if not self.max_store_bytes:
            return
        with contextlib.ExitStack() as stack:
            if con is None:
                con = stack.enter_context(self._connect())
            used = con.execute("SELECT COALESCE(SUM(size), 0) FROM blobs").fetchone()[0]
            known = {
                r[0] for r in con.execute(
                    f"SELECT hash FROM blobs WHERE hash IN ({','.join('?' * len(files))})", list(files)
                )
            }
        new = sum(len(f.data) for d, f in files.items() if d not in known)
        if used + new > self.max_store_bytes:
            raise CalibError(
                f"the server's share storage is full ({used / MB:,.0f} of {self.max_store_bytes / MB:,.0f} MB used); "
                "ask the administrator, or delete links you no longer need"
            )

    # --------------------------------------------------------------- open
    @_reported
    def open_share(self, token: object) -> Lookup:
        """Open the share a link token names; never raises for a bad token.

        The token's shape is checked first (:func:`valid_token`), with no file or
        database access; then the catalog is searched by the token's SHA-256."""
        if not valid_token(token):
            return Lookup("malformed")
        assert isinstance(token, str)
        th = _digest(token)
        with self._connect() as con:
            row = con.execute(
                "SELECT id, token_hash, view, created, expires, revoked, owner_user FROM shares WHERE token_hash = ?",
                (th,),
            ).fetchone()
            if row is None or not hmac.compare_digest(bytes(row[1]), th):
                return Lookup("unknown")
            share_id, _, view_json, created, expires, revoked, owner_user = row
            if revoked is not None:
                return Lookup("revoked")
            if expires is not None and expires <= self.clock():
                return Lookup("expired")
            specs_json = [
                r[0] for r in con.execute(
                    "SELECT d.spec FROM share_datasets s JOIN datasets d ON d.id = s.dataset_id"
                    " WHERE s.share_id = ? ORDER BY s.position",
                    (share_id,),
                )
            ]
        specs: list[DatasetSpec] = []
        for text in specs_json:
            spec = self._spec_from_json(text)
            if spec is None:
                return Lookup("damaged")
            specs.append(spec)
        if not specs:
            return Lookup("damaged")
        return Lookup("ok", Share(share_id, tuple(specs), view_json, created, expires, owner_user))

    def _spec_from_json(self, text: str) -> DatasetSpec | None:
        try:
            rec = json.loads(text)
            files = []
            for f in rec["files"]:
                data = self._read_blob(str(f["sha256"]))
                if data is None or len(data) != int(f["size"]):
                    return None
                files.append(InputFile(str(f["name"]), data))
            return DatasetSpec(str(rec["name"]), tuple(files), options_from_dict(rec["options"]), str(rec["fmt"]))
        except (KeyError, TypeError, ValueError) as exc:
            log.error("unreadable dataset record in the catalog: %s", exc)
            return None

    # ------------------------------------------------------- owner actions
    def revoke(self, token: object, *, owner_secret: str | None = None, user: str | None = None) -> Outcome:
        """Stop a link from opening (its data is removed at the next sweep)."""
        return self._owner_action(token, None, owner_secret, user, "revoke")

    def delete(self, token: object, *, owner_secret: str | None = None, user: str | None = None) -> Outcome:
        """Remove a share now, with every stored file no other share uses."""
        return self._owner_action(token, None, owner_secret, user, "delete")

    def update_view(
        self, token: object, view: Mapping[str, Any], *, owner_secret: str | None = None, user: str | None = None
    ) -> Outcome:
        """Replace the view state a link opens with (owner only)."""
        view_json = self._check_view(view)
        return self._owner_action(token, None, owner_secret, user, "update", view_json)

    def revoke_by_id(self, share_id: str, *, user: str) -> Outcome:
        """Revoke one of the logged-in ``user``'s shares listed by :meth:`list_owned`."""
        return self._owner_action(None, share_id, None, user, "revoke")

    def delete_by_id(self, share_id: str, *, user: str) -> Outcome:
        """Delete one of the logged-in ``user``'s shares listed by :meth:`list_owned`."""
        return self._owner_action(None, share_id, None, user, "delete")

    @_reported
    def _owner_action(
        self,
        token: object,
        share_id: str | None,
        owner_secret: str | None,
        user: str | None,
        action: str,
        view_json: str | None = None,
    ) -> Outcome:
        unavailable = Outcome(False, "not_available", UNAVAILABLE_MESSAGE)
        if share_id is None and not valid_token(token):
            return unavailable
        if share_id is not None and not re.fullmatch(r"[0-9a-f]{24}", str(share_id)):
            return unavailable
        with self._transaction() as con:
            if share_id is None:
                assert isinstance(token, str)
                row = con.execute(
                    "SELECT id, owner_hash, owner_user, revoked, expires FROM shares WHERE token_hash = ?",
                    (_digest(token),),
                ).fetchone()
            else:
                row = con.execute(
                    "SELECT id, owner_hash, owner_user, revoked, expires FROM shares WHERE id = ?", (share_id,)
                ).fetchone()
            if row is None:
                return unavailable
            sid, owner_hash, owner_user, revoked, expires = row
            if not _is_owner(bytes(owner_hash), owner_user, owner_secret, user):
                return Outcome(False, "not_owner", NOT_OWNER_MESSAGE)
            if action == "revoke":
                if revoked is None:
                    con.execute("UPDATE shares SET revoked = ? WHERE id = ?", (self.clock(), sid))
                return Outcome(True, "revoked", "The link is revoked: it no longer opens.")
            if action == "update":
                if revoked is not None or (expires is not None and expires <= self.clock()):
                    return unavailable
                con.execute("UPDATE shares SET view = ? WHERE id = ?", (view_json, sid))
                return Outcome(True, "updated", "The link now opens with this view.")
            con.execute("DELETE FROM shares WHERE id = ?", (sid,))
            self._collect_garbage(con)
        return Outcome(True, "deleted", "The link and the data stored for it are deleted.")

    @_reported
    def list_owned(self, user: str) -> list[ShareInfo]:
        """The shares a logged-in user made, newest first (revoked and expired included
        until the next sweep)."""
        who = _norm_user(user)
        if who is None:
            return []
        now = self.clock()
        out = []
        with self._connect() as con:
            rows = con.execute(
                "SELECT id, created, expires, revoked FROM shares WHERE owner_user = ? ORDER BY created DESC", (who,)
            ).fetchall()
            for sid, created, expires, revoked in rows:
                names = tuple(
                    json.loads(r[0])["name"] for r in con.execute(
                        "SELECT d.spec FROM share_datasets s JOIN datasets d ON d.id = s.dataset_id"
                        " WHERE s.share_id = ? ORDER BY s.position",
                        (sid,),
                    )
                )
                status = "revoked" if revoked is not None else (
                    "expired" if expires is not None and expires <= now else "ok"
                )
                out.append(ShareInfo(sid, names, created, expires, status))
        return out

    # ---------------------------------------------------------- housekeeping
    @_reported
    def sweep(self) -> SweepReport:
        """Remove revoked and expired shares, then datasets and files no share uses."""
        now = self.clock()
        with self._transaction() as con:
            n = con.execute(
                "DELETE FROM shares WHERE revoked IS NOT NULL OR (expires IS NOT NULL AND expires <= ?)", (now,)
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

    def _collect_garbage(self, con: sqlite3.Connection) -> tuple[int, int]:
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

    @_reported
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
        """SQLite's ``PRAGMA integrity_check`` of the catalog (``"ok"`` when sound)."""
        with self._connect() as con:
            return "; ".join(r[0] for r in con.execute("PRAGMA integrity_check"))


class _BlobVanished(Exception):
    def __init__(self, digests: list[str]) -> None:
        super().__init__(digests)
        self.digests = digests


def _spec_id(spec: DatasetSpec) -> str:
    return hashlib.sha256(_canonical_json(spec.canonical()).encode()).hexdigest()


def _is_owner(owner_hash: bytes, owner_user: str | None, owner_secret: str | None, user: str | None) -> bool:
    if _valid_owner_secret(owner_secret) and hmac.compare_digest(owner_hash, _digest(str(owner_secret))):
        return True
    who = _norm_user(user)
    return who is not None and owner_user is not None and hmac.compare_digest(
        who.encode("utf-8"), owner_user.encode("utf-8")
    )
