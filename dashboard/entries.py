"""The session's inputs: sample files, uploaded files and uploaded folders, each an
:class:`Entry` with its field and scale :class:`Overrides`, loaded once per content and
options (``st.cache_data``) and booked against the session's memory budget.

Entries live in ``st.session_state`` (:data:`dashboard.keys.ENTRIES_KEY`), in load
order: the datasets' colours follow it. Model names are kept unique.

Uploads are kept in the browser session only (never on disk, never in the address): a
refresh starts a new session without them. So that the Data page can say so instead of
showing an empty list without a word, the address counts them (:data:`UPLOADS_PARAM`,
:func:`count_uploads_in_url`), and a session whose address counts uploads it does not hold
remembers how many were cleared (:func:`note_lost_uploads`, :func:`lost_uploads_notice`).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.hosting import view as views
from calib.hosting.budget import estimated_bytes
from calib.loading import load, load_many
from calib.readers.base import LoadOptions
from calib.scale import Scale, parse_rescale
from dashboard.keys import ENTRIES_KEY, LOST_UPLOADS_KEY
from dashboard.layout import ROOT
from dashboard.runtime import budget, heavy, runtime
from dashboard.state import change_view, get_view, set_view

if TYPE_CHECKING:  # the traffic reader brings the labels' modules: imported when a file is traffic
    from calib.traffic.read import Traffic

LOG = logging.getLogger("calib.ui")
SAMPLE_DIR = ROOT / "sample_data"
SAMPLE_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".eval", ".csv", ".parquet", ".ndjson")
#: What an input holds: outcomes (an audit) or none (traffic, issue 24).
MODES = ("audit", "traffic")


@dataclass(frozen=True)
class Overrides:
    """Field and scale overrides a person chose for one input (None / "auto" = detect)."""

    confidence_key: str | None = None
    outcome_key: str | None = None
    group_key: str | None = None
    scale: str = "auto"
    custom_scale: str = ""
    normalisation: str = "none"
    variant: str = "acc"
    #: field grouping dependent rows (``--cluster-key``); ``"none"``: rows independent
    cluster_key: str | None = None
    #: ``"audit"`` (every row has its outcome) or ``"traffic"`` (no outcomes: read by
    #: :func:`calib.traffic.read.load_traffic`, only when the person says so, issue 24)
    mode: str = "audit"

    def options(self) -> LoadOptions:
        """The :class:`LoadOptions` these overrides stand for (raises CalibError on a bad scale)."""
        rescale: Scale | None = None
        if self.scale == "custom" and self.custom_scale.strip():
            rescale = parse_rescale(self.custom_scale)
        elif self.scale not in ("auto", "custom", "mixed"):
            lo, hi = self.scale.split("-")
            rescale = parse_rescale(f"{lo},{hi}")
        return LoadOptions(
            confidence_key=self.confidence_key or None,
            outcome_key=self.outcome_key or None,
            group_key=self.group_key or None,
            cluster_key=self.cluster_key or None,
            rescale=rescale,
            mixed_scales=self.scale == "mixed",
            normalisation=self.normalisation,
            variant=self.variant,
        )

    def key(self) -> tuple[object, ...]:
        return (
            self.confidence_key, self.outcome_key, self.group_key, self.scale,
            self.custom_scale.strip(), self.normalisation, self.variant, self.cluster_key, self.mode,
        )

    def to_dict(self) -> dict[str, Any]:
        """The overrides as stored with a share."""
        return {f: getattr(self, f) for f in Overrides.__dataclass_fields__}

    @classmethod
    def from_stored(cls, raw: object) -> Overrides:
        """Overrides from a stored share, keeping only known fields of the right type."""
        if not isinstance(raw, dict):
            return cls()
        ok: dict[str, Any] = {}
        for f in cls.__dataclass_fields__:
            val = raw.get(f)
            if isinstance(val, str) or (val is None and f in ("confidence_key", "outcome_key", "group_key", "cluster_key")):
                ok[f] = val
        if ok.get("mode") not in MODES:
            ok.pop("mode", None)
        return cls(**ok)


@dataclass(frozen=True)
class Entry:
    """One input of this session: a sample file, an uploaded file, or an uploaded folder.

    Attributes
    ----------
    id:
        Stable id: ``"sample:<file>"`` or ``"upload:<sha256 prefix>"``.
    kind:
        ``"sample"``, ``"file"`` or ``"folder"``.
    files:
        ``(file name, bytes)`` of the upload (empty for samples: read from disk).
    digest:
        SHA-256 of the content (file names included for folders): the cache key.
    filename:
        Display file name (for a folder, its name).
    name:
        Dataset (model) name, editable.
    overrides:
        Field / scale overrides.
    dataset, error:
        The loaded dataset, or the message of the :class:`CalibError` that stopped it.
    traffic:
        The loaded traffic when the person said the file has no outcomes (then ``dataset`` is ``None``).
    """

    id: str
    kind: str
    filename: str
    digest: str
    name: str
    files: tuple[tuple[str, bytes], ...] = ()
    overrides: Overrides = field(default_factory=Overrides)
    dataset: Dataset | None = None
    error: str | None = None
    loaded_key: tuple[object, ...] | None = None
    #: the loaded traffic (``overrides.mode == "traffic"``), instead of a dataset
    traffic: Traffic | None = None


def _digest_files(files: list[tuple[str, bytes]]) -> str:
    h = hashlib.sha256()
    for name, data in files:
        h.update(name.encode("utf-8", "replace") + b"\0")
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


#: Loaded datasets kept for all sessions together: few, since one 200 MB upload can hold
#: gigabytes once parsed, and each session also keeps its own copy (counted by the
#: memory ledger); an hour without use drops an entry.
LOAD_CACHE_ENTRIES = 8
LOAD_CACHE_TTL = 3600


@st.cache_data(max_entries=LOAD_CACHE_ENTRIES, ttl=LOAD_CACHE_TTL, show_spinner="Loading…")
def _load_cached(digest: str, kind: str, filename: str, options_key: tuple[object, ...],
                 _files: tuple[tuple[str, bytes], ...], _options: LoadOptions) -> Dataset:
    """Load an input once per (content, options); the bytes are not hashed again."""
    with heavy(f"loading {filename}"):
        if kind == "sample":
            return load(SAMPLE_DIR / filename, options=_options)
        if kind == "folder":
            return load_many(list(_files), name=filename, options=_options)
        name, data = _files[0]
        return load(name, data, options=_options)


@st.cache_data(max_entries=LOAD_CACHE_ENTRIES, ttl=LOAD_CACHE_TTL, show_spinner="Loading the traffic…")
def _traffic_cached(digest: str, filename: str, options_key: tuple[object, ...], _data: bytes,
                    _confidence_key: str | None, _options: LoadOptions) -> Traffic:
    """Read a traffic file once per (content, options), in any format an audit reads
    (:func:`calib.traffic.read.load_traffic`: JSONL, CSV, option log-probs, lm-eval, Inspect)."""
    from dataclasses import replace as with_

    from calib.runs.traffic import load_traffic

    options = _options if _confidence_key is None else with_(_options, confidence_key=_confidence_key)
    with heavy(f"loading {filename}"):
        return load_traffic(filename, _data, options=options)


def entry_bytes(entry: Entry) -> bytes:
    """The bytes of a one-file entry (an upload, or a sample read from disk)."""
    if entry.kind == "sample":
        return (SAMPLE_DIR / entry.filename).read_bytes()
    return entry.files[0][1]


def _load_traffic(entry: Entry, key: tuple[object, ...]) -> Entry:
    """Load an entry the person marked as traffic; errors are kept, not raised."""
    name = entry.filename
    try:
        if entry.kind == "folder" or (entry.kind == "sample" and (SAMPLE_DIR / name).is_dir()):
            raise CalibError(f"{name}: a folder cannot be read as traffic here; upload one file (the command line "
                             "reads an lm-eval folder as traffic: calib plan FOLDER)")
        data = entry_bytes(entry)
        options = runtime().limits.load_options(entry.overrides.options())
        tr = _traffic_cached(entry.digest, name, key, data, entry.overrides.confidence_key or None, options)
        budget().reserve(entry.id, tr.keys.nbytes + tr.stated.nbytes + 64 * len(tr) + len(data), name)
    except CalibError as exc:
        return replace(entry, dataset=None, traffic=None, error=str(exc), loaded_key=key)
    except OSError as exc:
        return replace(entry, dataset=None, traffic=None, error=f"{name}: cannot read ({exc.strerror})",
                       loaded_key=key)
    return replace(entry, dataset=None, traffic=tr, error=None, loaded_key=key)


def load_entry(entry: Entry) -> Entry:
    """Load (or reload after an override change) one entry; errors are kept, not raised."""
    key = entry.overrides.key()
    if entry.loaded_key == key and (entry.dataset is not None or entry.traffic is not None
                                    or entry.error is not None):
        return entry
    if entry.overrides.mode == "traffic":
        return _load_traffic(entry, key)
    entry = replace(entry, traffic=None)
    try:
        # the server's caps (rows, line length, decompressed size) on top of the user's choices
        options = runtime().limits.load_options(entry.overrides.options())
        ds = _load_cached(entry.digest, entry.kind, entry.filename, key, entry.files, options)
        # refused (CalibError) when this session, or the server, would hold too much
        budget().reserve(entry.id, estimated_bytes(ds) + sum(len(d) for _, d in entry.files), entry.filename)
    except CalibError as exc:
        return replace(entry, dataset=None, error=str(exc), loaded_key=key)
    except MemoryError:  # pragma: no cover - resource exhaustion
        return replace(entry, dataset=None, error=f"{entry.filename}: too large to load in memory", loaded_key=key)
    except Exception as exc:  # a bug in a reader must not take the page down
        LOG.exception("loading %s failed", entry.filename)
        return replace(
            entry, dataset=None, loaded_key=key,
            error=f"{entry.filename}: could not be read because of an internal error ({type(exc).__name__}); "
                  "this is a bug in calib, the details are in the server log",
        )
    return replace(entry, dataset=replace(ds, name=entry.name), error=None, loaded_key=key)


def source_bytes(ds: Dataset) -> bytes | None:
    """The decoded bytes of the one JSON Lines file ``ds`` was loaded from, for a field
    read from the rows' lines (a covariate, an answer); ``None`` when it is not one."""
    from calib.readers.covariate import COVARIATE_FORMATS
    from calib.readers.source import read_source

    if ds.rows is None or ds.report.format not in COVARIATE_FORMATS:
        return None
    entry = next((e for e in entries() if e.name == ds.name and e.kind != "folder"), None)
    if entry is None:
        return None
    try:
        return read_source(entry.filename, entry_bytes(entry)).data
    except (CalibError, OSError):
        return None


def new_upload_entry(files: list[tuple[str, bytes]], *, folder: bool = False,
                     folder_name: str = "") -> Entry:
    """An entry for uploaded bytes (one file, or several read as one lm-eval folder)."""
    digest = _digest_files(files) if folder else digest_bytes(files[0][1])
    if folder:
        filename = folder_name or "folder"
        name = filename
    else:
        filename = files[0][0]
        name = default_name(filename)
    return Entry(id=f"upload:{digest[:16]}{':folder' if folder else ''}", kind="folder" if folder else "file",
                 filename=filename, digest=digest, name=name, files=tuple(files))


def new_sample_entry(filename: str) -> Entry:
    path = SAMPLE_DIR / filename
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
        digest = _digest_files([(str(p.relative_to(path)), p.read_bytes()) for p in files])
    else:
        digest = digest_bytes(path.read_bytes())
    return Entry(id=f"sample:{filename}", kind="sample", filename=filename, digest=digest,
                 name=default_name(filename))


def default_name(filename: str) -> str:
    base = Path(filename).name
    for ext in (".gz",):
        if base.lower().endswith(ext):
            base = base[: -len(ext)]
    for ext in (".jsonl", ".ndjson", ".json", ".eval", ".csv", ".parquet"):
        if base.lower().endswith(ext):
            return base[: -len(ext)]
    return base


def available_samples() -> tuple[str, ...]:
    """Files (and lm-eval folders) in ``sample_data/`` that can be loaded."""
    if not SAMPLE_DIR.is_dir():
        return ()
    out = []
    for p in sorted(SAMPLE_DIR.iterdir()):
        if p.name.startswith((".", "_")):
            continue
        if p.is_file() and p.name.lower().endswith(SAMPLE_SUFFIXES) or p.is_dir() and any(p.glob("samples_*")):
            out.append(p.name)
    return tuple(out)


def entries() -> list[Entry]:
    return list(st.session_state.get(ENTRIES_KEY, []))


def set_entries(items: list[Entry]) -> None:
    st.session_state[ENTRIES_KEY] = _unique_names(items)
    count_uploads_in_url()


#: The query parameter that counts the session's uploaded files and folders (a number, not
#: their names: file names never go into the address).
UPLOADS_PARAM = "uploads"


def uploads_held() -> int:
    """How many of the session's inputs are uploads (files or folders), not samples."""
    return sum(1 for e in entries() if e.kind != "sample")


def count_uploads_in_url() -> None:
    """Write the number of uploaded inputs into the address (remove it when there are none),
    so that the next session opened on this address (a refresh) knows uploads were here."""
    n = uploads_held()
    current = st.query_params.get(UPLOADS_PARAM)
    if n and current != str(n):
        st.query_params[UPLOADS_PARAM] = str(n)
    elif not n and current is not None:
        del st.query_params[UPLOADS_PARAM]


def note_lost_uploads() -> None:
    """On a session's first run: the address counts uploads this session does not hold (the
    page was refreshed, or the address opened in a new tab), so remember how many were cleared."""
    raw = str(st.query_params.get(UPLOADS_PARAM) or "")
    held = uploads_held()
    if raw.isdigit() and int(raw) > held and len(raw) <= 4:
        st.session_state[LOST_UPLOADS_KEY] = int(raw) - held


def lost_uploads_notice() -> str | None:
    """What the Data page says while uploads cleared by a refresh have not been replaced."""
    lost = st.session_state.get(LOST_UPLOADS_KEY, 0)
    if not lost or uploads_held():
        return None
    files = "1 uploaded file or folder was" if lost == 1 else f"{lost:,} uploaded files or folders were"
    return (f"{files} cleared: uploads live only in the browser session that uploaded them, and the page was "
            "refreshed (or opened anew), which starts a new session. Upload them again below; the samples "
            "and settings come back from the address.")


def _unique_names(items: list[Entry]) -> list[Entry]:
    """Model names must be unique (they select the model and key its colour)."""
    seen: set[str] = set()
    out = []
    for e in items:
        name = e.name.strip() or default_name(e.filename) or "model"
        base, i = name, 2
        while name in seen:
            name = f"{base} ({i})"
            i += 1
        seen.add(name)
        if name != e.name:
            e = replace(e, name=name, dataset=None if e.dataset is None else replace(e.dataset, name=name))
        out.append(e)
    return out


def rename_entry(entry_id: str, name: str) -> None:
    items = entries()
    for i, e in enumerate(items):
        if e.id == entry_id:
            name = name.strip()[: views.MAX_TEXT] or default_name(e.filename)
            items[i] = replace(e, name=name, dataset=None if e.dataset is None else replace(e.dataset, name=name))
    set_entries(items)
    v = get_view()
    # keep the focus on the renamed model
    focus = next((e for e in entries() if e.id == entry_id), None)
    if focus is not None and v.model and v.model not in {e.name for e in entries()}:
        change_view(model=focus.name)


def add_entry(entry: Entry) -> Entry:
    """Add (or replace an entry with the same id) and load it."""
    entry = load_entry(entry)
    items = [e for e in entries() if e.id != entry.id]
    items.append(entry)
    set_entries(items)
    return next(e for e in entries() if e.id == entry.id)


def remove_entry(entry_id: str) -> None:
    budget().release(entry_id)
    items = [e for e in entries() if e.id != entry_id]
    set_entries(items)
    if entry_id.startswith("sample:"):
        v = get_view()
        name = entry_id.split(":", 1)[1]
        set_view(views.with_changes(v, samples=tuple(s for s in v.samples if s != name)))


def set_overrides(entry_id: str, overrides: Overrides) -> None:
    items = entries()
    for i, e in enumerate(items):
        if e.id == entry_id:
            items[i] = load_entry(replace(e, overrides=overrides))
    set_entries(items)


def sync_samples(v: views.View) -> None:
    """Make the loaded samples match the view: load missing ones, drop deselected ones."""
    items = entries()
    have = {e.id for e in items}
    wanted = {f"sample:{s}" for s in v.samples}
    items = [e for e in items if e.kind != "sample" or e.id in wanted]
    changed = len(items) != len(have)
    for s in v.samples:
        if f"sample:{s}" not in have:
            try:
                items.append(load_entry(new_sample_entry(s)))
            except OSError as exc:
                items.append(Entry(id=f"sample:{s}", kind="sample", filename=s, digest="", name=default_name(s),
                                   error=f"{s}: cannot read ({exc.strerror})"))
            changed = True
    if changed:
        set_entries(items)


def datasets() -> list[Dataset]:
    """The loaded datasets, in load order (their colours follow this order)."""
    return [e.dataset for e in entries() if e.dataset is not None]


def traffic_entries() -> list[Entry]:
    """The inputs loaded as traffic (no outcomes), in load order."""
    return [e for e in entries() if e.traffic is not None]


def cache_key(ds: Dataset) -> str:
    """Content key of a loaded dataset: digest + options of the entry that made it."""
    for e in entries():
        if e.dataset is not None and e.dataset.name == ds.name:
            return f"{e.digest}:{e.overrides.key()!r}"
    return f"anon:{id(ds)}"
