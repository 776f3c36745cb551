"""What a share is made of, and how it is written down: the value types of the share
store (:class:`InputFile`, :class:`DatasetSpec`, :class:`Share`, :class:`Lookup`...), the
shape of tokens and owner secrets, and the canonical JSON of a dataset's load options.

Pure values and checks: nothing here touches the disk (:mod:`calib.hosting.catalog`
does) or decides who may do what (:mod:`calib.hosting.store` does).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.limits import Limits
from calib.loading import load, load_many
from calib.readers.base import LoadOptions
from calib.scale import Scale

#: Random bytes in a share token: 192 bits (the issue asks for at least 128).
TOKEN_BYTES = 24
#: Characters of a token: ``secrets.token_urlsafe(24)`` is 32 URL-safe base64 characters.
TOKEN_CHARS = 32
#: Random bytes in an owner secret (256 bits; 43 characters).
OWNER_SECRET_BYTES = 32
OWNER_SECRET_CHARS = 43
_TOKEN_RE = re.compile(rf"[A-Za-z0-9_-]{{{TOKEN_CHARS}}}")
_OWNER_RE = re.compile(rf"[A-Za-z0-9_-]{{{OWNER_SECRET_CHARS}}}")

#: The query parameter the dashboard puts the token in: ``?share=<token>``.
SHARE_PARAM = "share"
#: Largest view state (canonical JSON), bytes.
MAX_VIEW_BYTES = 64 * 1024
#: Most datasets in one share, and files in one dataset.
MAX_DATASETS = 20
MAX_FILES = 1000
#: Longest dataset or file name, characters.
MAX_NAME_CHARS = 1024

#: What a viewer is told for every token that does not open a share. One message for
#: all causes, so that probing tokens learns nothing.
#: The title of the page (and of the download) a dead link gets.
UNAVAILABLE_TITLE = "This link is no longer available"
UNAVAILABLE_MESSAGE = (
    "This shared link is no longer available: it has expired, its owner revoked or deleted it, "
    "or it was copied incompletely. Ask the person who sent it for a new link."
)
#: What a session that had the link open is told when it stops opening (by cause: this
#: session held the link, so saying which tells a prober nothing).
ENDED_MESSAGES = {
    "revoked": "The owner revoked this shared link after this page opened it.",
    "expired": "This shared link expired after this page opened it.",
    "unknown": "The owner deleted this shared link after this page opened it.",
}
ENDED_TAIL = "Its data is no longer shown here. Ask the person who sent it for a new link."


def ended_message(status: str) -> str | None:
    """What a session that opened a share link is told when the link's status
    (:meth:`calib.hosting.store.Store.link_status`) is ``status``: ``None`` while it is
    ``"ok"``, else why it ended and :data:`ENDED_TAIL`."""
    return None if status == "ok" else f"{ENDED_MESSAGES.get(status, UNAVAILABLE_MESSAGE)} {ENDED_TAIL}"

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


def canonical_json(obj: object) -> str:
    """The one JSON text of ``obj`` (sorted keys, no spaces): what the catalog stores and hashes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def new_secret(nbytes: int) -> str:
    """A fresh token or owner secret: ``secrets.token_urlsafe(nbytes)`` drawn again while it
    begins with ``-``.

    A command line reads ``--token -Xy…`` as a missing value followed by an unknown
    option, so a value that could start with ``-`` fails one paste in 64. Refusing that
    first character costs log2(64/63) ≈ 0.02 bits of the 192 (token) or 256 (owner secret).
    """
    while True:
        secret = secrets.token_urlsafe(nbytes)
        if not secret.startswith("-"):
            return secret


def secret_digest(secret: str) -> bytes:
    """SHA-256 of a token or owner secret: the catalog keeps only this."""
    return hashlib.sha256(secret.encode("ascii")).digest()


def valid_token(token: object) -> bool:
    """True when ``token`` has the exact shape of a share token (32 URL-safe characters).

    Pure string check: anything else (a path, ``../``, percent-encoding, NUL, a
    truncated or overlong token, a non-string) is refused before any lookup."""
    return isinstance(token, str) and _TOKEN_RE.fullmatch(token) is not None


def _valid_owner_secret(secret: object) -> bool:
    return isinstance(secret, str) and _OWNER_RE.fullmatch(secret) is not None


def norm_user(user: str | None) -> str | None:
    """A user's e-mail as the catalog compares it (trimmed, lower case), ``None`` for none."""
    if user is None:
        return None
    user = user.strip().lower()
    return user or None


def check_name(kind: str, name: object) -> str:
    """``name`` when it is a storable dataset or file name, else a :class:`CalibError` saying why."""
    if not isinstance(name, str) or not name.strip():
        raise CalibError(f"a {kind} name must be non-empty text")
    if len(name) > MAX_NAME_CHARS:
        raise CalibError(f"{kind} name {name[:60]!r}...: longer than {MAX_NAME_CHARS} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise CalibError(f"{kind} name {name[:60]!r}: contains control characters")
    return name


def spec_id(spec: DatasetSpec) -> str:
    """The catalog id of a dataset spec: the SHA-256 of its canonical JSON."""
    return hashlib.sha256(canonical_json(spec.canonical()).encode()).hexdigest()


def is_owner(owner_hash: bytes, owner_user: str | None, owner_secret: str | None, user: str | None) -> bool:
    """Whether ``owner_secret`` (compared in constant time with the stored digest) or the
    logged-in ``user`` proves ownership of a share."""
    if _valid_owner_secret(owner_secret) and hmac.compare_digest(owner_hash, secret_digest(str(owner_secret))):
        return True
    who = norm_user(user)
    return who is not None and owner_user is not None and hmac.compare_digest(
        who.encode("utf-8"), owner_user.encode("utf-8")
    )
