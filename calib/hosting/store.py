"""Shared datasets: uploads stored server-side and reopened by an unguessable link.

A *share* is one or more datasets plus a view state (thresholds, map, binning,
page), addressed by a random token. The link carries only the token; the token
never appears in a path and the catalog keeps only its SHA-256, so neither a file
name, nor a content hash, nor a copy of the catalog opens a share.

What is stored is the *input*, not the parsed result: the uploaded bytes, their file
names, the load options and the format, so reopening calls :func:`calib.loading.load`
(or :func:`~calib.loading.load_many`) exactly as the upload did and yields the same
dataset, under the server's current limits (:meth:`~calib.hosting.shares.DatasetSpec.load`). How the
data directory is laid out is in :mod:`calib.hosting.catalog`.

Access
------
Anyone holding a link can open it (read-only): look, move thresholds in their own
session. Revoking, deleting or changing a share takes the owner's proof: the owner
secret returned by :meth:`Store.share` (only its SHA-256 is kept), or the logged-in
user the share was made by. Lookups of a missing, revoked, expired, damaged or
malformed token all return the same "no longer available" :class:`~calib.hosting.shares.Lookup`; a token
that is not exactly :data:`~calib.hosting.shares.TOKEN_CHARS` URL-safe characters is refused before any
file or database access.

The storage itself (blobs, catalog, crash safety, permissions, upkeep) is
:class:`calib.hosting.catalog.Catalog`; the value types are in :mod:`calib.hosting.shares`.
Reviewing inside a share (the owner's setting, the reviewers' labels) is
:class:`calib.hosting.labels.ReviewCatalog`'s and :class:`calib.hosting.assignment.AssignmentCatalog`'s, which :class:`Store` inherits.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from calib.errors import CalibError
from calib.hosting.assignment import AssignmentCatalog
from calib.hosting.catalog import reported
from calib.hosting.database import Connection
from calib.hosting.shares import (
    MAX_DATASETS,
    MAX_FILES,
    MAX_VIEW_BYTES,
    NOT_OWNER_MESSAGE,
    OWNER_SECRET_BYTES,
    TOKEN_BYTES,
    UNAVAILABLE_MESSAGE,
    DatasetSpec,
    InputFile,
    Lookup,
    Outcome,
    Share,
    ShareInfo,
    ShareReceipt,
    canonical_json,
    check_name,
    is_owner,
    new_secret,
    norm_user,
    options_from_dict,
    secret_digest,
    spec_id,
    valid_token,
)
from calib.limits import MB, Limits, env_float, env_int
from calib.loading import FORMATS

log = logging.getLogger(__name__)


class Store(AssignmentCatalog):
    """The share store over one data directory. Create it with :meth:`open` (see
    :class:`~calib.hosting.catalog.Catalog` for the parameters).

    One instance per process is enough (:mod:`calib.hosting.resident`); it holds no open
    connection (each call opens its own, which is cheap and survives ``fork``), so
    it is safe to use from many threads at once.
    """

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **kwargs: Any) -> Store:
        """:meth:`open` configured from the environment.

        ``CALIB_DATA_DIR`` (default ``./.calib-data``), ``CALIB_RETENTION_DAYS``
        (default 30; 0 = until revoked), ``CALIB_STORE_MAX_MB`` (default 0 = no quota);
        the file cap is the upload cap of :class:`~calib.limits.Limits`.
        ``CALIB_DATABASE_URL`` (``postgresql://user:password@host:port/database``; unset =
        the data directory's SQLite file): the catalog shared by several replicas
        (:mod:`calib.hosting.database`). ``CALIB_BLOB_DIR`` (unset = ``CALIB_DATA_DIR/blobs``):
        the stored files, in a directory every replica mounts.
        """
        env = os.environ if env is None else env
        limits = Limits.from_env(env)
        kwargs.setdefault("retention_days", env_float(env, "CALIB_RETENTION_DAYS", 30.0))
        kwargs.setdefault("max_store_bytes", env_int(env, "CALIB_STORE_MAX_MB", 0) * MB)
        kwargs.setdefault("max_file_bytes", limits.max_upload_mb * MB)
        kwargs.setdefault("database_url", database_url_from_env(env))
        kwargs.setdefault("blob_dir", (env.get("CALIB_BLOB_DIR") or "").strip() or None)
        return cls.open(env.get("CALIB_DATA_DIR") or ".calib-data", **kwargs)

    @reported
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

        return self._record_share(files, specs, view_json, owner_user, now, expires)

    def _record_share(self, files: Mapping[str, InputFile], specs: tuple[DatasetSpec, ...], view_json: str,
                      owner_user: str | None, now: float, expires: float | None) -> ShareReceipt:
        """Write the catalog rows of a new share (its blobs are already durable) in one
        transaction, with a fresh token, owner secret and id."""
        token = new_secret(TOKEN_BYTES)
        owner_secret = new_secret(OWNER_SECRET_BYTES)
        share_id = secrets.token_hex(12)
        for attempt in range(3):
            try:
                with self._transaction() as con:
                    missing = [d for d, f in files.items() if not self._blob_ok(d, len(f.data))]
                    if missing:
                        raise _BlobVanished(missing)
                    self._check_quota(files, con)
                    self._insert_share(con, files, specs, now, (
                        share_id, secret_digest(token), secret_digest(owner_secret), norm_user(owner_user),
                        view_json, now, expires))
                    self._stage("before_commit")
                break
            except _BlobVanished as exc:
                # A concurrent sweep removed a blob we meant to reuse: write it again.
                if attempt == 2:
                    raise CalibError("could not store the shared files (they were removed concurrently); retry") from None
                for digest in exc.digests:
                    self._write_blob(digest, files[digest].data)
        return ShareReceipt(token, owner_secret, share_id, expires)

    def _insert_share(self, con: Connection, files: Mapping[str, InputFile], specs: tuple[DatasetSpec, ...],
                      now: float, share_row: tuple[Any, ...]) -> None:
        """The rows of one share: its blobs and datasets (each once), the share, its datasets' order."""
        for digest, f in files.items():
            con.execute("INSERT INTO blobs(hash, size, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                        (digest, len(f.data), now))
        ds_ids = [self._insert_dataset(con, spec, now) for spec in specs]
        con.execute(
            "INSERT INTO shares(id, token_hash, owner_hash, owner_user, view, created, expires)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            share_row,
        )
        for pos, ds_id in enumerate(ds_ids):
            con.execute("INSERT INTO share_datasets(share_id, position, dataset_id) VALUES (?, ?, ?)",
                        (share_row[0], pos, ds_id))

    def _insert_dataset(self, con: Connection, spec: DatasetSpec, now: float) -> str:
        ds_id = spec_id(spec)
        cur = con.execute(
            "INSERT INTO datasets(id, spec, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (ds_id, canonical_json(spec.canonical()), now),
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
            check_name("dataset", spec.name)
            if spec.fmt != "auto" and spec.fmt not in FORMATS:
                raise CalibError(f"{spec.name}: unknown format {spec.fmt!r}; choose one of {', '.join(FORMATS)}")
            if not 1 <= len(spec.files) <= MAX_FILES:
                raise CalibError(f"{spec.name}: a dataset holds 1 to {MAX_FILES} files, got {len(spec.files)}")
            for f in spec.files:
                check_name("file", f.name)
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
            text = canonical_json(dict(view))
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

    def _check_quota(self, files: Mapping[str, InputFile], con: Connection | None = None) -> None:
        if not self.max_store_bytes:
            return
        with contextlib.ExitStack() as stack:
            if con is None:
                con = stack.enter_context(self._connect())
            used = con.execute("SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM blobs").fetchone()[0]
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
    @reported
    def open_share(self, token: object) -> Lookup:
        """Open the share a link token names; never raises for a bad token.

        The token's shape is checked first (:func:`valid_token`), with no file or
        database access; then the catalog is searched by the token's SHA-256."""
        if not valid_token(token):
            return Lookup("malformed")
        with self._connect() as con:
            status, row = self._find(con, token)
            if row is None:
                return Lookup(status)
            share_id, view_json, created, expires, owner_user = row
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

    @reported
    def link_status(self, token: object) -> str:
        """Whether the link still opens, without reading its files: ``"ok"``, or why not
        (``"malformed"``, ``"unknown"`` (never made, or deleted), ``"revoked"``,
        ``"expired"``). One indexed look-up: cheap enough for every page run of a session
        that opened the link (:func:`dashboard.sharing.end_if_link_gone`)."""
        if not valid_token(token):
            return "malformed"
        with self._connect() as con:
            return self._find(con, token)[0]

    def _find(self, con: Connection, token: object) -> tuple[str, tuple[Any, ...] | None]:
        """``("ok", (id, view, created, expires, owner_user))`` for a live link's token,
        else ``(why not, None)``. ``token`` has passed :func:`valid_token`."""
        th = secret_digest(str(token))
        row = con.execute(
            "SELECT id, token_hash, view, created, expires, revoked, owner_user FROM shares WHERE token_hash = ?",
            (th,),
        ).fetchone()
        if row is None or not hmac.compare_digest(bytes(row[1]), th):
            return "unknown", None
        share_id, _, view_json, created, expires, revoked, owner_user = row
        if revoked is not None:
            return "revoked", None
        if expires is not None and expires <= self.clock():
            return "expired", None
        return "ok", (share_id, view_json, created, expires, owner_user)

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

    @reported
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
                    (secret_digest(token),),
                ).fetchone()
            else:
                row = con.execute(
                    "SELECT id, owner_hash, owner_user, revoked, expires FROM shares WHERE id = ?", (share_id,)
                ).fetchone()
            if row is None:
                return unavailable
            sid, owner_hash, owner_user, revoked, expires = row
            if not is_owner(bytes(owner_hash), owner_user, owner_secret, user):
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

    @reported
    def list_owned(self, user: str) -> list[ShareInfo]:
        """The shares a logged-in user made, newest first (revoked and expired included
        until the next sweep)."""
        who = norm_user(user)
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


def database_url_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """``CALIB_DATABASE_URL`` (checked: a PostgreSQL URL), or ``None`` when unset or blank."""
    env = os.environ if env is None else env
    url = (env.get("CALIB_DATABASE_URL") or "").strip()
    if not url:
        return None
    from calib.hosting.database import check_url

    return check_url(url)


class _BlobVanished(Exception):
    def __init__(self, digests: list[str]) -> None:
        super().__init__(digests)
        self.digests = digests
