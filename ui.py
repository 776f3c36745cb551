"""Shared Streamlit layout of the dashboard: session state, loaded data, sidebar panels.

Every page (``app.py`` and ``pages/*.py``) starts with ``ctx = ui.page_setup("<page>")``.
That one call

1. runs the access hook (:func:`access`: the place hosting adds a password gate,
   a login, read-only links and ``?share=TOKEN`` loading);
2. restores the view from ``st.query_params`` on the first run of a session, so a
   deep link to any page works even when it is the first script run;
3. loads the sample files the view names (cached by content hash + options);
4. renders the sidebar: the data selector and the recalibration panel;
5. writes the view back to the URL.

The review-threshold panel is a fragment (:func:`threshold_panel`): moving the
slider reruns only it, not the page. Pages call it where the routing detail goes.

State lives in ``st.session_state`` under keys that are not widget keys
(:data:`VIEW_KEY`, :data:`ENTRIES_KEY`): widget state is per page in Streamlit's
automatic multipage mode and is dropped on a page switch, so each widget is seeded
from the view before it renders and writes back through its ``on_change``
callback.

Safety: user-supplied text (file names, model names, ids, question text) is shown
only through escaping elements (``st.text``, ``st.code``, ``st.dataframe``,
selectbox options, text inputs). Labels passed to markdown-rendering elements
(``st.markdown``, ``st.caption``, ``st.metric``, ``st.info``, widget labels) are
fixed strings written here.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from calib import view as views
from calib.access import UPLOAD_SESSIONS, AccessConfig, PasswordGate, user_allowed
from calib.dataset import Dataset
from calib.errors import CalibError
from calib.limits import HeavyGate, Limits, MemoryLedger, SessionBudget, estimated_bytes
from calib.loading import LoadOptions, load, load_many
from calib.scale import Scale, parse_rescale
from calib.store import (
    SHARE_PARAM,
    UNAVAILABLE_MESSAGE,
    DatasetSpec,
    InputFile,
    Outcome,
    Store,
    valid_token,
)

if TYPE_CHECKING:  # pandas costs half a second to import: not on the cold start's path
    import pandas as pd

LOG = logging.getLogger("calib.ui")
ROOT = Path(__file__).resolve().parent
SAMPLE_DIR = ROOT / "sample_data"
SAMPLE_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".eval", ".csv", ".parquet", ".ndjson")

#: Page name -> script path relative to the app root (for st.switch_page / st.page_link).
PAGE_FILES: dict[str, str] = {
    "data": "app.py",
    "overview": "pages/1_Overview.py",
    "scale": "pages/2_Scale.py",
    "reliability": "pages/3_Reliability.py",
    "recalibration": "pages/4_Recalibration.py",
    "routing": "pages/5_Routing.py",
    "report": "pages/6_Report.py",
}
PAGE_TITLES: dict[str, str] = {
    "data": "Data",
    "overview": "Overview",
    "scale": "How the scale was used",
    "reliability": "Reliability",
    "recalibration": "Recalibration",
    "routing": "Routing",
    "report": "Report",
}

VIEW_KEY = "calib_view"
ENTRIES_KEY = "calib_entries"
NOTES_KEY = "calib_link_notes"
UPLOAD_COUNTER_KEY = "calib_upload_round"

METHOD_LABELS = {
    "none": "none (stated confidence)",
    "platt": "Platt (logistic)",
    "isotonic": "isotonic",
    "temperature": "temperature",
    "beta": "beta",
    "histogram": "histogram binning",
}
SCORING_LABELS = {
    "insample": "in-sample (optimistic)",
    "oddeven": "odd/even split",
    "kfold": "k-fold cross-fit",
    "file": "a second file",
}
SCHEME_LABELS = {
    "auto": "automatic",
    "values": "per stated value",
    "width": "equal-width bins",
    "mass": "equal-mass bins",
    "corp": "CORP isotonic curve",
}
#: "mixed": bare numbers up to 1 are probabilities, above 1 on the detected scale (``--mixed-scales``)
SCALE_CHOICES = ("auto", "0-1", "0-100", "1-10", "1-5", "mixed", "custom")


# =========================================================================== access
@dataclass(frozen=True)
class Access:
    """Who is looking and what they may do.

    Filled in by :func:`access`: a shared password, an OIDC login, and read-only
    share links. Locally everything is allowed.
    """

    allowed: bool = True
    read_only: bool = False
    user: str | None = None


#: Session-state keys of the hosting layer (not widget keys).
UNLOCKED_KEY = "calib_unlocked"          # this session gave the right password
SHARED_KEY = "calib_shared_token"        # the share link this session was opened with
OWNER_KEY = "calib_owner"                # token -> owner secret of the links this session made
LAST_SHARE_KEY = "calib_last_share"      # the link made last in this session (shown in the sidebar)
OWNED_OPEN_KEY = "calib_owned_open"      # the logged-in owner asked for the list of their links
SHARE_NOTICE_KEY = "calib_share_notice"  # (ok, message) of the last share / revoke / delete
BUDGET_KEY = "calib_budget"              # this session's calib.limits.SessionBudget
USER_KEY = "calib_user"                  # the logged-in user's e-mail (OIDC), for owner actions


@dataclass(frozen=True)
class Runtime:
    """Process-wide hosting state: one per server (``st.cache_resource``)."""

    limits: Limits
    config: AccessConfig
    gate: PasswordGate | None
    ledger: MemoryLedger
    heavy: HeavyGate


@st.cache_resource(show_spinner=False)
def runtime() -> Runtime:
    """Limits, access configuration, password gate, memory ledger and heavy-work gate,
    read once from the environment (and ``st.secrets``). A setting that does not parse
    raises :class:`CalibError` naming it (not cached, so fixing it and reloading works)."""
    limits = Limits.from_env(max_upload_mb=st.get_option("server.maxUploadSize"))
    try:
        # reading st.secrets also promotes its root keys to os.environ (Community Cloud)
        pw = st.secrets.get("CALIB_PASSWORD")
    except Exception:  # no secrets.toml: nothing to read
        pw = None
    cfg = AccessConfig.from_env(password=str(pw) if pw else None)
    return Runtime(
        limits=limits, config=cfg,
        gate=PasswordGate.from_config(cfg) if cfg.password else None,
        ledger=MemoryLedger.from_limits(limits), heavy=HeavyGate.from_limits(limits),
    )


@st.cache_resource(show_spinner=False)
def share_store() -> Store:
    """The share store (``CALIB_DATA_DIR``), opened on first use: a session that never
    shares or opens a link never touches the disk."""
    return Store.from_env()


def heavy(what: str) -> contextlib.AbstractContextManager[None]:
    """``with heavy("…"):`` around a parse or a bootstrap: at most ``CALIB_HEAVY_JOBS`` at once."""
    return runtime().heavy.slot(what)


def _budget() -> SessionBudget:
    budget = st.session_state.get(BUDGET_KEY)
    if budget is None:
        budget = st.session_state[BUDGET_KEY] = runtime().ledger.open_session()
    return budget


def _client_key() -> str:
    """The address password failures are counted under: the connection's peer, or behind
    a proxy listed in ``CALIB_TRUSTED_PROXIES`` the right-most ``X-Forwarded-For`` hop
    that is not one (the web server sets it: :func:`calib.webguard.install_proxy_policy`).
    Streamlit reports loopback as ``None``."""
    ip = st.context.ip_address
    return ip if isinstance(ip, str) and ip else "unknown"


def access() -> Access:
    """Decide whether this session may see the app, and what it may change.

    1. ``CALIB_AUTH=oidc``: ``st.login`` first; then the verified e-mail's domain must
       be in ``CALIB_ALLOWED_DOMAINS`` (:func:`calib.access.user_allowed`).
    2. ``CALIB_PASSWORD`` (environment or ``st.secrets``): a password form, checked in
       constant time with lock-out (:class:`calib.access.PasswordGate`); once right,
       the session stays unlocked.
    3. A session opened from ``?share=TOKEN`` is read-only unless this session made
       the link: it can move thresholds, not change, revoke or delete the data.

    Shows the login / password / error screen itself and returns ``allowed=False``
    (the page then stops). Locally (nothing configured): everyone, read-write.
    """
    try:
        rt = runtime()
    except CalibError as exc:
        st.title("calib")
        show_error(f"This server is not configured correctly: {exc}")
        return Access(allowed=False)
    cfg = rt.config
    user: str | None = None
    if cfg.oidc:
        if not st.user.is_logged_in:
            st.title("calib")
            st.markdown("This dashboard is for registered users. Log in to continue.")
            st.button("Log in", key="calib_login", type="primary", on_click=st.login,
                      args=(cfg.oidc_provider,) if cfg.oidc_provider else ())
            return Access(allowed=False)
        decision = user_allowed(st.user.to_dict(), cfg.allowed_domains)
        if not decision.allowed:
            st.title("calib")
            show_error(decision.message)
            st.button("Log out", key="calib_logout", on_click=st.logout)
            return Access(allowed=False)
        user = str(st.user.email)
    st.session_state[USER_KEY] = user
    if rt.gate is not None and not st.session_state.get(UNLOCKED_KEY):
        _password_form(rt.gate)
        return Access(allowed=False, user=user)
    token = st.session_state.get(SHARED_KEY)
    if token is None:
        raw = st.query_params.get(SHARE_PARAM)
        token = None if raw is None else str(raw)
    read_only = token is not None and token not in st.session_state.get(OWNER_KEY, {})
    _allow_uploads(not read_only)
    return Access(allowed=True, read_only=read_only, user=user)


def _allow_uploads(allowed: bool) -> None:
    """Tell the web server's upload guard (:mod:`calib.webguard`) whether this session
    may upload: only once it is allowed in and not read-only."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    if allowed:
        UPLOAD_SESSIONS.add(ctx.session_id)
    else:
        UPLOAD_SESSIONS.discard(ctx.session_id)


def _password_form(gate: PasswordGate) -> None:
    st.title("calib")
    st.markdown("This dashboard is protected by a password.")
    with st.form("calib_password", clear_on_submit=True):
        attempt = st.text_input("Password", type="password", key="calib_password_input")
        submitted = st.form_submit_button("Unlock", type="primary")
    if submitted:
        verdict = gate.check(_client_key(), attempt)
        if verdict.ok:
            st.session_state[UNLOCKED_KEY] = True
            st.rerun()
        show_error(verdict.message)


def restore_shared(token: str) -> tuple[list[Entry], views.View] | None:
    """Reopen a shared analysis from ``?share=TOKEN``: its uploaded files (with the
    field and scale choices) as entries, and its view.

    A token that does not open a share (malformed, unknown, revoked, expired,
    damaged) shows the "no longer available" page and stops; the same page for
    every cause, so probing tokens learns nothing. A malformed token is refused
    before the store is even opened.
    """
    if not valid_token(token):
        _unavailable()
    try:
        got = share_store().open_share(token)
    except CalibError as exc:
        st.title("This link cannot be opened right now")
        show_error(exc)
        st.stop()
    if not got.available:
        _unavailable()
    share = got.share
    state = share.view
    params = state.get("params") if isinstance(state.get("params"), dict) else {}
    metas = state.get("datasets") if isinstance(state.get("datasets"), list) else []
    v, notes = views.from_params(params, available_samples=available_samples())
    items: list[Entry] = []
    for i, spec in enumerate(share.datasets):
        meta = metas[i] if i < len(metas) and isinstance(metas[i], dict) else {}
        files = [(f.name, f.data) for f in spec.files]
        folder = meta.get("kind") == "folder" or len(files) > 1
        e = new_upload_entry(files, folder=folder, folder_name=str(meta.get("filename") or spec.name))
        items.append(replace(e, name=spec.name, overrides=_overrides_from(meta.get("overrides"))))
    st.session_state[SHARED_KEY] = token
    if notes:
        st.session_state[NOTES_KEY] = notes
    return items, v


def _overrides_from(raw: object) -> Overrides:
    """Overrides from a stored share, keeping only known fields of the right type."""
    if not isinstance(raw, dict):
        return Overrides()
    ok: dict[str, Any] = {}
    for f in Overrides.__dataclass_fields__:
        val = raw.get(f)
        if isinstance(val, str) or (val is None and f in ("confidence_key", "outcome_key", "group_key", "cluster_key")):
            ok[f] = val
    return Overrides(**ok)


def _unavailable() -> NoReturn:
    """The page a dead link shows (fixed text only), then stop."""
    st.title("This link is no longer available")
    st.markdown(UNAVAILABLE_MESSAGE)
    st.button("Start a new analysis", key="calib_leave_share", on_click=_leave_share)
    st.stop()


def _leave_share() -> None:
    st.session_state.pop(SHARED_KEY, None)
    st.query_params.clear()


def share_link(token: str) -> str:
    """The link of a share: the app's address as the browser sees it + ``?share=TOKEN``."""
    return f"{_base_url()}?{SHARE_PARAM}={token}"


def _base_url() -> str:
    """The app's address in the user's browser: ``st.context.url`` (no query) without
    the page's own path segment (``/Routing/``); ``/`` when unknown (no browser)."""
    url = st.context.url
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return "/"
    head, _, last = url.rstrip("/").rpartition("/")
    page_paths = {Path(f).stem.split("_", 1)[-1].lower() for f in PAGE_FILES.values() if f != "app.py"}
    if "//" in head and last.lower() in page_paths:
        url = head
    return url if url.endswith("/") else url + "/"


def _share_now() -> None:
    """The Share button: store this session's uploads and the view, keep the owner key."""
    uploads = [e for e in entries() if e.kind != "sample" and e.dataset is not None]
    v = get_view()
    if not uploads:  # samples only: the server has them, the URL alone is the link
        st.session_state[LAST_SHARE_KEY] = {"params": share_params(v)}
        st.session_state.pop(SHARE_NOTICE_KEY, None)
        return
    specs = [DatasetSpec(e.name, tuple(InputFile(n, d) for n, d in e.files), e.overrides.options())
             for e in uploads]
    state = {
        "v": 1,
        "params": share_params(v),
        "datasets": [{"kind": e.kind, "filename": e.filename, "overrides": _asdict(e.overrides)} for e in uploads],
    }
    try:
        r = share_store().share(specs, state, owner_user=st.session_state.get(USER_KEY))
    except CalibError as exc:
        st.session_state[SHARE_NOTICE_KEY] = (False, str(exc))
        return
    st.session_state.setdefault(OWNER_KEY, {})[r.token] = r.owner_secret
    st.session_state[LAST_SHARE_KEY] = {"token": r.token, "secret": r.owner_secret, "expires": r.expires_at,
                                        "id": r.share_id}
    st.session_state[SHARE_NOTICE_KEY] = (True, "Shared. Send the link; keep the owner key.")


def _asdict(ov: Overrides) -> dict[str, Any]:
    return {f: getattr(ov, f) for f in Overrides.__dataclass_fields__}


def _owner_action(action: str, token: str, secret_key: str | None = None) -> None:
    """Revoke / delete / update a link, with the owner key (this session's, or typed in)."""
    owned = st.session_state.get(OWNER_KEY, {})
    secret = owned.get(token) or (str(st.session_state.get(secret_key) or "").strip() if secret_key else "") or None
    user = st.session_state.get(USER_KEY)
    store = share_store()
    try:
        if action == "revoke":
            out = store.revoke(token, owner_secret=secret, user=user)
        elif action == "delete":
            out = store.delete(token, owner_secret=secret, user=user)
        else:
            v = get_view()
            out = _update_view(store, token, secret, user, {"v": 1, "params": share_params(v), "datasets": []})
    except CalibError as exc:
        st.session_state[SHARE_NOTICE_KEY] = (False, str(exc))
        return
    if secret_key:
        st.session_state[secret_key] = ""
    st.session_state[SHARE_NOTICE_KEY] = (out.ok, out.message)
    if out.ok and action in ("revoke", "delete"):
        owned.pop(token, None)
        last = st.session_state.get(LAST_SHARE_KEY) or {}
        if last.get("token") == token:
            st.session_state.pop(LAST_SHARE_KEY, None)


def _update_view(store: Store, token: str, secret: str | None, user: str | None, state: dict[str, Any]) -> Outcome:
    """Keep the stored datasets' field choices; replace the view parameters."""
    got = store.open_share(token)
    if got.available:
        old = got.share.view
        if isinstance(old.get("datasets"), list):
            state["datasets"] = old["datasets"]
    return store.update_view(token, state, owner_secret=secret, user=user)


def _share_panel(acc: Access, ds: list[Dataset]) -> None:
    """The sidebar's Share section: the Share button and the link it made, or, on a
    link opened read-only, what a viewer may do (and an owner-key form)."""
    st.subheader("Share")
    notice = st.session_state.get(SHARE_NOTICE_KEY)
    if acc.read_only:
        st.caption("You opened a shared link: read-only. Move the thresholds and the map freely; "
                   "the shared data and the link stay as they are.")
        token = st.session_state.get(SHARED_KEY)
        if token:
            with st.expander("Owner of this link?"):
                st.text_input("Owner key", type="password", key="calib_owner_key",
                              help="The key shown when the link was made. Logged-in owners can leave it empty.")
                c1, c2 = st.columns(2)
                c1.button("Revoke", key="calib_revoke_viewer", on_click=_owner_action,
                          args=("revoke", token, "calib_owner_key"))
                c2.button("Delete", key="calib_delete_viewer", on_click=_owner_action,
                          args=("delete", token, "calib_owner_key"))
        _show_notice(notice)
        return
    if acc.user:
        _owned_links(acc.user)
    if not ds:
        st.caption("Load data to share a link to this view.")
        return
    st.button("Share this view", key="calib_share", on_click=_share_now,
              help="Stores the uploaded file(s) on this server and gives a link that reopens this data and "
                   "this view (page, thresholds, map, binning) for anyone who has it, read-only.")
    _show_notice(notice)
    last = st.session_state.get(LAST_SHARE_KEY)
    if not last:
        return
    if "token" not in last:
        from urllib.parse import urlencode

        st.caption("Only sample files are loaded: this link reproduces the view, nothing is stored.")
        st.code(f"{_base_url()}?{urlencode(last['params'])}", language=None, wrap_lines=True)
        return
    st.caption("Link (anyone who has it can look, read-only):")
    st.code(share_link(last["token"]), language=None, wrap_lines=True)
    st.caption("Owner key (keep it private: with it you can revoke or delete the link later):")
    st.code(last["secret"], language=None, wrap_lines=True)
    if last.get("expires"):
        st.caption(f"The link expires on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(last['expires']))}.")
    c1, c2, c3 = st.columns(3)
    c1.button("Update", key="calib_update_share", on_click=_owner_action, args=("update", last["token"]),
              help="Make the link open with the view as it is now.")
    c2.button("Revoke", key="calib_revoke_share", on_click=_owner_action, args=("revoke", last["token"]),
              help="The link stops opening at once.")
    c3.button("Delete", key="calib_delete_share", on_click=_owner_action, args=("delete", last["token"]),
              help="The link stops opening and its files are removed from the server.")


def _owned_links(user: str) -> None:
    """A logged-in user's links (from any session or device), each with Revoke and
    Delete: the login proves ownership, no owner key needed. Listed on request, so
    that other runs do not open the share store."""
    if not st.session_state.get(OWNED_OPEN_KEY):
        st.button("Your shared links", key="calib_list_links", on_click=_set_owned_open, args=(True,),
                  help="Every link you made while logged in, from any session or device, with Revoke and Delete.")
        return
    try:
        owned = share_store().list_owned(user)
    except CalibError as exc:
        show_error(exc)
        return
    with st.container(border=True):
        st.markdown(f"**Your shared links** ({len(owned)})")
        if not owned:
            st.caption("None yet: links you make while logged in are listed here.")
        for info in owned:
            when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(info.created_at))
            until = ("" if info.expires_at is None else
                     f", expires {time.strftime('%Y-%m-%d', time.gmtime(info.expires_at))}")
            # dataset names are user text: st.text, never markdown
            st.text(f"{when} · {', '.join(info.dataset_names)}\n{info.status}{until}")
            if info.status == "revoked":
                st.button("Delete", key=f"calib_del_{info.share_id}", on_click=_owned_action,
                          args=("delete", info.share_id))
            else:
                c1, c2 = st.columns(2)
                c1.button("Revoke", key=f"calib_rev_{info.share_id}", on_click=_owned_action,
                          args=("revoke", info.share_id))
                c2.button("Delete", key=f"calib_del_{info.share_id}", on_click=_owned_action,
                          args=("delete", info.share_id))
        st.button("Hide the list", key="calib_hide_links", on_click=_set_owned_open, args=(False,))


def _set_owned_open(value: bool) -> None:
    st.session_state[OWNED_OPEN_KEY] = value


def _owned_action(action: str, share_id: str) -> None:
    """Revoke or delete one of the logged-in user's links (by its id: the list has no tokens)."""
    user = st.session_state.get(USER_KEY)
    if not user:
        return
    try:
        store = share_store()
        out = (store.revoke_by_id if action == "revoke" else store.delete_by_id)(share_id, user=user)
    except CalibError as exc:
        st.session_state[SHARE_NOTICE_KEY] = (False, str(exc))
        return
    st.session_state[SHARE_NOTICE_KEY] = (out.ok, out.message)
    last = st.session_state.get(LAST_SHARE_KEY) or {}
    if out.ok and last.get("id") == share_id:
        st.session_state.pop(LAST_SHARE_KEY, None)


def _show_notice(notice: tuple[bool, str] | None) -> None:
    if not notice:
        return
    ok, message = notice
    if ok:
        st.success(md_escape(message))
    else:
        show_error(message)


# =========================================================================== entries
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
            self.custom_scale.strip(), self.normalisation, self.variant, self.cluster_key,
        )


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


def load_entry(entry: Entry) -> Entry:
    """Load (or reload after an override change) one entry; errors are kept, not raised."""
    key = entry.overrides.key()
    if entry.loaded_key == key and (entry.dataset is not None or entry.error is not None):
        return entry
    try:
        # the server's caps (rows, line length, decompressed size) on top of the user's choices
        options = runtime().limits.load_options(entry.overrides.options())
        ds = _load_cached(entry.digest, entry.kind, entry.filename, key, entry.files, options)
        # refused (CalibError) when this session, or the server, would hold too much
        _budget().reserve(entry.id, estimated_bytes(ds) + sum(len(d) for _, d in entry.files), entry.filename)
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
        set_view(views.with_changes(v, model=focus.name))


def add_entry(entry: Entry) -> Entry:
    """Add (or replace an entry with the same id) and load it."""
    entry = load_entry(entry)
    items = [e for e in entries() if e.id != entry.id]
    items.append(entry)
    set_entries(items)
    return next(e for e in entries() if e.id == entry.id)


def remove_entry(entry_id: str) -> None:
    _budget().release(entry_id)
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


# =========================================================================== view
def get_view() -> views.View:
    v = st.session_state.get(VIEW_KEY)
    return v if isinstance(v, views.View) else views.DEFAULT


def set_view(v: views.View) -> None:
    st.session_state[VIEW_KEY] = v


def _restore_view() -> views.View:
    """First run of a session: the view comes from the URL (a copied link)."""
    if VIEW_KEY in st.session_state:
        return get_view()
    params = st.query_params.to_dict()
    token = params.get("share")
    if token is not None:
        shared = restore_shared(str(token))
        if shared is not None:
            items, v = shared
            set_entries([load_entry(e) for e in items])
            set_view(v)
            return v
    v, notes = views.from_params(params, available_samples=available_samples())
    st.session_state[NOTES_KEY] = notes
    set_view(v)
    return v


def sync_url(v: views.View) -> None:
    """Write the view into the URL, keeping parameters this app does not own (``share``)."""
    current = st.query_params.to_dict()
    foreign = {k: val for k, val in current.items() if k not in views.PARAMS}
    wanted = {**foreign, **views.to_params(v)}
    token = st.session_state.get(SHARED_KEY)
    if token:  # a page switch drops the query: keep the link a reload reopens
        wanted[SHARE_PARAM] = token
    if wanted != current:
        st.query_params.from_dict(wanted)


def share_params(v: views.View) -> dict[str, str]:
    """HOSTING HOOK: the query parameters of a share link (the page included)."""
    return views.to_params(v, include_page=True)


# ----------------------------------------------------------------- widget binding
def _on_widget(field_name: str, key: str, convert: Callable[[Any], Any]) -> None:
    value = convert(st.session_state[key])
    set_view(views.with_changes(get_view(), **{field_name: value}))


def bind(field_name: str, key: str, *, to_widget: Callable[[Any], Any] = lambda x: x,
         from_widget: Callable[[Any], Any] = lambda x: x) -> dict[str, Any]:
    """Seed widget ``key`` from the view and return the kwargs that write it back.

    Use as ``st.selectbox(label, options, **ui.bind("scheme", "w_scheme"))``.
    """
    st.session_state[key] = to_widget(getattr(get_view(), field_name))
    return {"key": key, "on_change": _on_widget, "args": (field_name, key, from_widget)}


# =========================================================================== page context
@dataclass(frozen=True)
class Context:
    """What a page gets from :func:`page_setup`."""

    page: str
    view: views.View
    access: Access
    datasets: tuple[Dataset, ...]
    colors: dict[str, str]

    @property
    def focus(self) -> Dataset | None:
        """The dataset the single-model views show (the one named by ``view.model``)."""
        for d in self.datasets:
            if d.name == self.view.model:
                return d
        return self.datasets[0] if self.datasets else None

    def by_name(self, name: str) -> Dataset | None:
        return next((d for d in self.datasets if d.name == name), None)


#: Imported by :func:`warm_up`: what the first upload and the first audit need.
WARM_MODULES = (
    "pandas", "pyarrow.json", "scipy.optimize", "scipy.special", "scipy.fft", "scipy.sparse",
    "calib.readers.stated", "calib.readers.logprobs", "calib.readers.lmeval", "calib.readers.inspect",
    "calib.audit", "calib.compare", "calib.curves", "calib.maps", "calib.routing", "calib.figures",
)
_warmed = False


def warm_up() -> None:
    """Import the libraries the first upload needs, once per server process.

    Called at the end of the Data page's run: its widgets are already on their way to
    the browser, so the cold start's first paint does not wait for pandas, scipy and
    the readers (about 1.5 s on two cores), and the person picking a file pays
    nothing for them. In the script thread, not a background one: concurrent imports
    of the same packages from two threads can deadlock on the import locks.
    """
    global _warmed
    if _warmed:
        return
    _warmed = True
    import importlib

    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # a broken install shows where the module is used, not on every page
            LOG.exception("warm-up: importing %s failed", name)


def page_setup(page: str) -> Context:
    """Start a page: access, view from the URL, data, sidebar. See the module docstring."""
    st.set_page_config(page_title=f"calib · {PAGE_TITLES[page]}", layout="wide")
    acc = access()
    if not acc.allowed:
        st.stop()
    v = _restore_view()
    if page == "data" and ("page" in st.query_params or SHARED_KEY in st.session_state) and v.page != "data" \
            and not st.session_state.get("calib_page_jumped"):
        # a share link opens the entry page with ?page=...: go where it points, once
        st.session_state["calib_page_jumped"] = True
        st.switch_page(PAGE_FILES[v.page])
    if v.page != page:
        v = views.with_changes(v, page=page)
        set_view(v)
    sync_samples(v)
    ds = datasets()
    if ds and v.model not in {d.name for d in ds}:
        v = views.with_changes(v, model=ds[0].name)
        set_view(v)
    from calib import figures

    colors = figures.palette([d.name for d in ds])
    with st.sidebar:
        _data_panel(ds, page)
        _share_panel(acc, ds)
        _recalibration_panel(ds)
    notes = st.session_state.pop(NOTES_KEY, ())
    for n in notes:
        st.warning(md_escape(n))
    v = get_view()
    sync_url(v)
    ctx = Context(page=page, view=v, access=acc, datasets=tuple(ds), colors=colors)
    if page not in ("routing", "data"):
        # the Routing page calls the panel itself, with its detail in the main area; the
        # Data page calls it after its load reports, so that a fresh upload's report shows
        # before the routing resamples are drawn (a second on a 14,000-sample folder)
        with st.sidebar:
            threshold_panel(ctx)
    return ctx


def _data_panel(ds: list[Dataset], page: str) -> None:
    st.subheader("Data")
    failed = sum(1 for e in entries() if e.error is not None)
    if failed:
        st.caption(f"{failed} input(s) could not be loaded: see the Data page.")
    if not ds:
        st.caption("No data loaded yet.")
        if page != "data":
            link("data", "Upload a file or pick a sample")
        return
    names = [d.name for d in ds]
    st.selectbox("Model", names, **bind("model", "w_model"),
                 help="The model or judge shown on single-model views.")
    st.caption(f"{len(ds)} dataset(s) loaded")


def _recalibration_panel(ds: list[Dataset]) -> None:
    st.subheader("Recalibration")
    if not ds:
        # no widgets to seed: the view keeps its map (from the URL) for when data arrives
        st.caption("Load data to fit a recalibration map.")
        return
    st.selectbox("Map", views.METHODS, format_func=METHOD_LABELS.__getitem__, **bind("method", "w_method"))
    v = get_view()
    if v.method != "none":
        st.selectbox("Scored on", views.SCORINGS, format_func=SCORING_LABELS.__getitem__,
                     **bind("scoring", "w_scoring"))
        if v.scoring == "kfold":
            st.number_input("Folds", min_value=views.FOLDS_RANGE[0], max_value=views.FOLDS_RANGE[1], step=1,
                            **bind("folds", "w_folds"))
        if v.scoring == "file":
            others = [d.name for d in ds if d.name != v.model]
            if not others:
                st.caption("Load a second file (same model, other items) to score the map on it.")
            else:
                if v.eval_model not in others:
                    set_view(views.with_changes(v, eval_model=others[0]))
                st.selectbox("Second file", others, **bind("eval_model", "w_eval"))


# =========================================================================== caching of engine results
def cache_key(ds: Dataset) -> str:
    """Content key of a loaded dataset: digest + options of the entry that made it."""
    for e in entries():
        if e.dataset is not None and e.dataset.name == ds.name:
            return f"{e.digest}:{e.overrides.key()!r}"
    return f"anon:{id(ds)}"


def link(page: str, label: str, icon: str | None = None) -> None:
    """A link to another page; plain text when the page is not reachable (a page run
    as its own entry script, as tests do for deep links)."""
    from streamlit.errors import StreamlitAPIException

    try:
        st.page_link(PAGE_FILES[page], label=label, icon=icon)
    except StreamlitAPIException:
        st.caption(f"{label}: open the {PAGE_TITLES[page]} page.")


def no_data() -> None:
    """What a page shows before anything is loaded (never an exception)."""
    st.info("No data loaded yet. Upload a file or pick a sample on the Data page.")
    link("data", "Go to the Data page", icon="📂")


def safe_filename(name: str, suffix: str) -> str:
    """A download file name from a model name: letters, digits, ``._-`` only."""
    base = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "_" for ch in name).strip("._")
    return f"{base[:80] or 'calib'}{suffix}"


def ece_scheme(v: views.View) -> str:
    """The binning scheme of every ECE figure (the CORP view reads its ECE per value / auto)."""
    return v.scheme if v.scheme in ("auto", "values", "width", "mass") else "auto"


@st.cache_data(max_entries=64, show_spinner="Computing the reliability curve…")
def _curve_cached(key: str, kind: str, bins: int, level: float, reps: int, seed: int, _table: Any) -> Any:
    from calib import curves

    with heavy("the reliability curve's bootstrap"):
        return curves.reliability(_table, kind, bins=bins, level=level, reps=reps, seed=seed)


def curve_for(ds: Dataset, v: views.View, table: Any = None, *, key_extra: str = "") -> Any:
    """The reliability curve of the view's scheme for a dataset (cached by content)."""
    from calib import metrics

    t = ds.table if table is None else table
    kind = v.scheme if v.scheme != "auto" else metrics.resolve_scheme(t, "auto")
    return _curve_cached(cache_key(ds) + key_extra, kind, v.bins, v.level, v.reps, v.seed, t)


@st.cache_data(max_entries=64, show_spinner="Fitting and scoring the map…")
def _fit_cached(key: str, eval_key: str, method: str, scoring: str, folds: int, seed: int, reps: int,
                level: float, scheme: str, bins: int, _data: Any, _eval: Any) -> Any:
    from calib import maps

    with heavy("fitting the map"):
        return maps.fit(_data, method, scoring=scoring, eval_data=_eval, folds=folds, seed=seed, reps=reps,
                        level=level, ece_scheme=scheme, ece_bins=bins)


def fit_for(ctx: Context, ds: Dataset) -> Any:
    """The view's recalibration fit for ``ds`` (``None`` for method "none" or a missing
    second file). Raises :class:`CalibError` for data the method cannot use."""
    v = ctx.view
    if v.method == "none":
        return None
    ev = None
    if v.scoring == "file":
        ev = ctx.by_name(v.eval_model)
        if ev is None or ev.name == ds.name:
            return None
    return _fit_cached(cache_key(ds), "" if ev is None else cache_key(ev), v.method, v.scoring, v.folds, v.seed,
                       v.reps, v.level, ece_scheme(v), v.bins, ds, ev)


@st.cache_data(max_entries=64, show_spinner="Auditing (bootstrap intervals)…")
def _audit_cached(key: str, scheme: str, bins: int, reps: int, seed: int, level: float, _table: Any,
                  _report: Any) -> Any:
    from calib import audit

    with heavy("the audit's bootstrap"):
        return audit.audit(_table, scheme=scheme, bins=bins, reps=reps, seed=seed, level=level,
                           load_report=_report)


def audit_for(ds: Dataset, v: views.View, *, groups: bool = False) -> Any:
    """The engine's audit (:func:`calib.audit.audit`) of a dataset with the view's
    binning and bootstrap, exactly as ``calib audit`` computes it (cached by content
    and settings; renaming the model does not recompute it). Raises
    :class:`CalibError` when there is nothing to audit.

    A dataset of several groups (subjects, tasks) is audited with its groups pooled
    unless ``groups``: the pooled audit is the same (same table, same seed) as the
    pooled part of ``calib audit``, and the pages show only it (per-group figures come
    from :func:`group_comparison`). The per-group audits are for the JSON download:
    57 MMLU subjects at 2,000 resamples each cost 17 s, the pooled audit under 1 s.
    """
    table = ds.table if groups or len(ds.table.groups) < 2 else ds.table.pooled_over_groups()
    key = cache_key(ds) + ("" if table is ds.table else ":pooled")
    a = _audit_cached(key, ece_scheme(v), v.bins, v.reps, v.seed, v.level, table, ds.report)
    return replace(a, name=ds.name)


@st.cache_data(max_entries=32, show_spinner="Comparing the models…")
def _compare_cached(keys: tuple[str, ...], scheme: str, bins: int, reps: int, seed: int, level: float,
                    _datasets: Any) -> Any:
    from calib import compare

    with heavy("comparing the models"):
        return compare.compare(list(_datasets), scheme=scheme, bins=bins, reps=reps, seed=seed, level=level)


def comparison_for(ctx: Context, v: views.View) -> Any:
    """The comparison table of every loaded model (cached by content and settings)."""
    keys = tuple(f"{d.name}|{cache_key(d)}" for d in ctx.datasets)
    return _compare_cached(keys, ece_scheme(v), v.bins, v.reps, v.seed, v.level, ctx.datasets)


@st.cache_data(max_entries=16, show_spinner="Comparing the groups…")
def _groups_cached(key: str, scheme: str, bins: int, reps: int, seed: int, level: float, _table: Any) -> Any:
    from calib import compare

    with heavy("comparing the groups"):
        return compare.compare({g: _table.select(i) for i, g in enumerate(_table.groups)}, scheme=scheme,
                               bins=bins, reps=reps, seed=seed, level=level)


def group_comparison(ds: Dataset, v: views.View) -> Any:
    """The comparison table of a dataset's groups (subjects, tasks), or ``None`` with one group."""
    if len(ds.table.groups) < 2:
        return None
    return _groups_cached(cache_key(ds), ece_scheme(v), v.bins, v.reps, v.seed, v.level, ds.table)


def settings_text(v: views.View) -> str:
    """The settings behind every number, in one line (printed on the report)."""
    parts = [
        f"binning {SCHEME_LABELS[v.scheme]}" + (f" ({v.bins} bins)" if v.scheme in ("width", "mass") else ""),
        f"{v.reps:,} bootstrap resamples, seed {v.seed}, {100 * v.level:g}% intervals",
        f"map {METHOD_LABELS[v.method]}" + ("" if v.method == "none" else f", scored on {SCORING_LABELS[v.scoring]}"),
    ]
    if v.lo is not None:
        parts.append(f"review threshold {v.lo:g}" + ("" if v.hi is None else f", upper {v.hi:g}")
                     + (" on the recalibrated probability" if v.on == "calibrated" else ""))
    return "; ".join(parts)


#: The Overview's headline figures: (label, metric name, as a percentage, digits).
HEADLINE: tuple[tuple[str, str, bool, int], ...] = (
    ("Accuracy", "accuracy", True, 1),
    ("Mean stated confidence", "mean_confidence", True, 1),
    ("ECE", "ece", False, 3),
    ("Brier score", "brier", False, 4),
    ("Brier of the constant", "brier_base_rate", False, 4),
    ("AUROC", "auroc", False, 3),
)


def headline(a: Any) -> tuple[tuple[str, str, str], ...]:
    """``(label, value, interval)`` of the headline figures of an audit, as the Overview
    prints them (the HTML report prints the same strings)."""
    out = []
    for label, key, pct, digits in HEADLINE:
        x = a.metrics.get(key)
        ci = a.ci.get(key)
        value = fmt_pct(x, digits) if pct else fmt_num(x, digits)
        out.append((label, value, fmt_ci(ci, digits, pct=pct) if ci and ci[0] is not None else ""))
    return tuple(out)


def better_forecast(a: Any) -> str | None:
    """Which has the lower Brier score: "the constant" (the model's own hit rate for
    every answer) or "the stated confidence" (``None`` when undefined)."""
    bs, base = a.metrics.get("brier"), a.metrics.get("brier_base_rate")
    if bs is None or base is None:
        return None
    return "the constant" if base < bs else "the stated confidence"


@dataclass(frozen=True, eq=False)
class ReportParts:
    models: tuple[Any, ...]
    comparison: pd.DataFrame | None
    comparison_figures: tuple[Any, ...]
    audits: tuple[Any, ...]


def report_parts(ctx: Context) -> ReportParts:
    """Every engine result the HTML report shows (all cached), as report blocks."""
    import pandas as pd

    from calib import figures, routing
    from calib import html_report as hr

    v = ctx.view
    models = []
    audits = []
    for d in ctx.datasets:
        a = audit_for(d, v, groups=True)  # the JSON download is what `calib audit --json` prints
        audits.append(a)
        t = d.table
        pv = a.per_value
        color = {d.name: ctx.colors.get(d.name, figures.PALETTE[0])}
        figs = [
            figures.stated_histogram([(d.name, t)], color),
            figures.reliability([(d.name, curve_for(d, v))], color),
        ]
        tables = []
        if pv and not t.pooled and len(pv) <= 101:
            figs.insert(1, figures.per_value([(d.name, t.pooled_over_groups(), pv)], color, level=v.level))
            tables.append(("Per stated value", pd.DataFrame(
                [{"stated": r.value, "answers": r.n, "right": r.correct, "hit rate (%)": round(100 * r.hit_rate, 1),
                  "CI (%)": f"{100 * r.lo:.1f} to {100 * r.hi:.1f}", "gap (percentage points)": round(100 * r.gap, 1)}
                 for r in pv])))
        sections = []
        if d.name == (ctx.focus.name if ctx.focus else None):
            fit = None
            if v.method != "none":
                try:
                    fit = fit_for(ctx, d)
                except CalibError as exc:
                    sections.append(("Recalibration", (hr.Paragraph(str(exc), kind="warning"),)))
            if fit is not None:
                blocks: list[Any] = []
                if fit.useless:
                    blocks.append(hr.Paragraph(f"The map is useless: {fit.reason}", kind="warning"))
                rows = []
                for name, key in (("Brier score", "brier"), ("log loss", "log_loss"), ("ECE", "ece")):
                    b, af, br = (getattr(s, key) for s in (fit.before, fit.after, fit.base_rate))
                    rows.append({"metric": name, "stated": f"{b.value:.4f} {fmt_ci((b.lo, b.hi), 4)}",
                                 "after the map": f"{af.value:.4f} {fmt_ci((af.lo, af.hi), 4)}",
                                 "base rate": f"{br.value:.4f} {fmt_ci((br.lo, br.hi), 4)}"})
                blocks.append(hr.Paragraph(f"{METHOD_LABELS[fit.method]}, scored on {SCORING_LABELS[fit.scoring]}: "
                                           f"fitted on {fit.n_fit:,} answers, scored on {fit.n_eval:,}."))
                blocks.append(hr.Table(pd.DataFrame(rows)))
                if fit.table:
                    import numpy as np

                    grid = np.linspace(t.scale.lo, t.scale.hi, 401)
                    blocks.append(hr.Figure(figures.recalibration_map(
                        d.name, color[d.name], scale_lo=t.scale.lo, scale_hi=t.scale.hi, curve_x=grid,
                        curve_y=fit.map.apply(grid), table=fit.table, method_label=METHOD_LABELS[fit.method],
                        useless=fit.useless)))
                    blocks.append(hr.Table(pd.DataFrame(list(fit.table))))
                sections.append(("Recalibration", tuple(blocks)))
            try:
                r, axis, b, cmap, note = route_now(ctx, d, v)
            except CalibError as exc:
                sections.append(("Routing", (hr.Paragraph(str(exc), kind="warning"),)))
            else:
                sw = routing.sweep(b, level=r.level)
                items = (
                    ("Review threshold", fmt_threshold(r.lower, axis) + axis.unit, ""),
                    ("Sent to a person", f"{r.to_person:,}", ""),
                    ("Accepted unseen", f"{r.accepted:,}", ""),
                    ("Accuracy among accepted", fmt_pct(r.accuracy_accepted), ""),
                    ("Errors slipping through", f"{r.errors_slipping:,}", ""),
                    ("Errors caught", f"{r.errors_caught:,}", ""),
                )
                blocks = [hr.KeyFigures(items)]
                if note:
                    blocks.append(hr.Paragraph(note, kind="meta"))
                blocks.append(hr.Figure(figures.risk_coverage(d.name, color[d.name], sw, coverage=r.coverage,
                                                              risk=r.risk, unit=axis.unit)))
                sections.append(("Routing at the review threshold", tuple(blocks)))
        models.append(hr.ModelResults(
            name=d.name, headline=headline(a), verdict=a.verdict[0] if a.verdict else "",
            sentences=tuple(a.verdict[1:]), warnings=tuple(a.notes), figures=tuple(figs), tables=tuple(tables),
            sections=tuple(sections), load_summary=f"{d.report.source}: {d.report.summary()}",
        ))
    comparison, cfigs = None, ()
    if len(ctx.datasets) > 1:
        cmp = comparison_for(ctx, v)
        comparison = cmp.to_table()
        cfigs = (figures.brier_vs_constant(cmp.rows, ctx.colors),
                 figures.reliability([(d.name, curve_for(d, v)) for d in ctx.datasets], ctx.colors,
                                     consistency_for=()))
    return ReportParts(tuple(models), comparison, tuple(cfigs), tuple(audits))


FIGURES_KEY = "calib_figures"
#: Figures kept per session for threshold moves (a few, the views of one page).
MAX_SESSION_FIGURES = 6


def session_figure(key: tuple[object, ...], build: Callable[[], Any]) -> Any:
    """A figure built once per session and key, then reused (and changed in place).

    For figures redrawn on every threshold move: only the threshold traces change
    (:func:`calib.figures.move_threshold_lines`, :func:`calib.figures.move_marker`),
    so rebuilding the whole figure each time would be wasted. Kept in the session,
    never shared between sessions, so changing it in place is safe.
    """
    store: dict[tuple[object, ...], Any] = st.session_state.setdefault(FIGURES_KEY, {})
    if key in store:
        fig = store.pop(key)
    else:
        fig = build()
        while len(store) >= MAX_SESSION_FIGURES:
            store.pop(next(iter(store)))
    store[key] = fig
    return fig


def show_error(message: object) -> None:
    """A user-fixable problem: its message (escaped) in an error box, never a traceback."""
    st.error(md_escape(str(message)), icon="⚠️")


def fmt_pct(x: float | None, digits: int = 1) -> str:
    return "—" if x is None or x != x else f"{100 * x:.{digits}f}%"


def fmt_num(x: float | None, digits: int = 3) -> str:
    return "—" if x is None or x != x else f"{x:.{digits}f}"


def fmt_ci(ci: tuple[float, float] | list[float] | None, digits: int = 3, pct: bool = False) -> str:
    if ci is None or len(ci) != 2 or any(c is None or c != c for c in ci):
        return ""
    if pct:
        return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def load_report_frames(ds: Dataset) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(dropped by reason, offending lines) of a dataset's load report, for st.dataframe."""
    import pandas as pd

    r = ds.report
    reasons = pd.DataFrame(
        sorted(r.dropped_by_reason.items(), key=lambda kv: -kv[1]), columns=["reason", "lines dropped"]
    )
    issues = pd.DataFrame(
        [
            {"line": i.line, "field": i.field or "", "reason": i.reason, "detail": i.detail,
             "preview": i.preview, "source": i.source, "sample": i.sample_id or ""}
            for i in r.issues
        ],
        columns=["line", "field", "reason", "detail", "preview", "source", "sample"],
    )
    return reasons, issues


def md_escape(text: str) -> str:
    """Text made inert for a markdown-rendering element (``st.error``, ``st.warning``).

    Every ASCII punctuation character is backslash-escaped (CommonMark allows this
    for all of them), so a file name or line preview cannot become a link, an image
    (an outside request), emphasis, a Streamlit directive (``:red[...]``) or LaTeX.
    Newlines become hard breaks so a multi-line message keeps its lines.
    """
    out = []
    for ch in str(text):
        if ch in _MD_PUNCT:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("  \n")
        else:
            out.append(ch)
    return "".join(out)


_MD_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


# =========================================================================== routing
@dataclass(frozen=True)
class ThresholdAxis:
    """Where a threshold can sit for one dataset: bounds, step, defaults, units."""

    on: str
    lo: float
    hi: float
    step: float
    default_lo: float
    default_hi: float
    unit: str  # shown after numbers: "" for a stated scale, " (probability)" for calibrated

    @property
    def format(self) -> str:
        """printf format of the slider: as many decimals as the step has."""
        import math

        decimals = max(0, -math.floor(math.log10(self.step) + 1e-9))
        return f"%.{decimals}f"

    def to_percent(self, x: float, scale: Scale) -> float:
        """Position on the reliability diagram's x axis (probability in %)."""
        return 100.0 * (float(scale.to_prob(x)) if self.on == "stated" else x)


def threshold_axis(ds: Dataset, on: str) -> ThresholdAxis:
    """The slider's range: the stated scale, or [0, 1] for calibrated probabilities.

    The step is a hundredth of the range's order of magnitude (1 on 0-100, 0.01 on
    0-1); the default is the value of probability 0.8 (80 on 0-100), where the
    review threshold of most judge pipelines sits, and 0.9 for the upper one.
    """
    import math

    if on == "calibrated":
        return ThresholdAxis("calibrated", 0.0, 1.0, 0.01, 0.8, 0.9, " (probability)")
    s = ds.table.scale
    span = s.hi - s.lo
    step = 10 ** math.floor(math.log10(span)) / 100 if span > 0 else 0.01
    return ThresholdAxis(
        "stated", float(s.lo), float(s.hi), float(step), round(float(s.to_stated(0.8)) / step) * step,
        round(float(s.to_stated(0.9)) / step) * step, "",
    )


@st.cache_resource(max_entries=16, show_spinner="Preparing the routing resamples…")
def _basis_cached(key: str, mkey: tuple[object, ...], reps: int, seed: int, _table: Any, _cmap: Any) -> Any:
    """The routing basis (cells sorted by score, bootstrap drawn once), shared read-only:
    ``cache_resource`` hands out the same object, so a threshold move costs a lookup,
    not an unpickling of the resamples."""
    from calib import routing

    with heavy("the routing resamples"):
        return routing.basis(_table, calibration=_cmap, reps=reps, seed=seed)


def map_key(v: views.View) -> tuple[object, ...]:
    return (v.method, v.scoring, v.folds, v.eval_model, v.seed, v.reps, v.level, ece_scheme(v), v.bins)


def routing_basis(ctx: Context, ds: Dataset, v: views.View) -> tuple[Any, Any, str | None]:
    """``(basis, map or None, note)`` for the view's threshold setting on ``ds``.

    Thresholds on the calibrated probability need a map; without one (method
    "none", or a map that cannot be fitted) the note says why and the stated value is used.
    """
    cmap, note = None, None
    if v.on == "calibrated":
        try:
            fit = fit_for(ctx, ds) if v.method != "none" else None
        except CalibError as exc:
            fit, note = None, f"no map ({exc}); thresholds are on the stated value"
        if fit is None and note is None:
            note = "choose a map in the Recalibration panel to threshold on the calibrated probability"
        elif fit is not None and fit.map.method == "softmax_temperature":
            fit, note = None, "a softmax temperature maps option scores, not stated values: thresholds are on the stated value"
        if fit is not None:
            cmap = fit.map
    key = map_key(v) if cmap is not None else ()
    return _basis_cached(cache_key(ds), key, v.reps, v.seed, ds.table, cmap), cmap, note


def _on_threshold_on(key: str) -> None:
    set_view(views.with_changes(get_view(), on=st.session_state[key], lo=None, hi=None))


def _on_lo(key: str, axis: ThresholdAxis) -> None:
    v = get_view()
    lo = float(st.session_state[key])
    hi = v.hi
    if hi is not None and hi <= lo:
        hi = lo + axis.step if lo + axis.step <= axis.hi else None
    set_view(views.with_changes(v, lo=lo, hi=hi))


def _on_hi(key: str) -> None:
    set_view(views.with_changes(get_view(), hi=float(st.session_state[key])))


def _on_hi_toggle(key: str, axis: ThresholdAxis) -> None:
    v = get_view()
    if st.session_state[key]:
        lo = axis.default_lo if v.lo is None else v.lo
        hi = max(axis.default_hi, lo + axis.step)
        set_view(views.with_changes(v, lo=lo, hi=hi if hi <= axis.hi else None))
    else:
        set_view(views.with_changes(v, hi=None))


def current_thresholds(v: views.View, axis: ThresholdAxis) -> tuple[float, float | None]:
    """The view's thresholds inside the axis, the default where not set."""
    vv = views.clamp_thresholds(v, axis.lo, axis.hi)
    lo = axis.default_lo if vv.lo is None else vv.lo
    hi = vv.hi
    if hi is not None and hi <= lo:
        hi = None
    return lo, hi


def fmt_threshold(x: float, axis: ThresholdAxis) -> str:
    return f"{x:.2f}" if axis.on == "calibrated" or axis.step < 1 else f"{x:g}"


def _threshold_widgets(ds: Dataset, v: views.View) -> ThresholdAxis:
    """The sidebar controls of the review threshold (inside the fragment)."""
    st.subheader("Review threshold")
    on_disabled = v.method == "none"
    on = v.on if not on_disabled else "stated"
    st.session_state["w_on"] = on
    st.selectbox("Threshold on", views.THRESHOLD_ON,
                 format_func={"stated": "stated confidence", "calibrated": "recalibrated probability"}.__getitem__,
                 key="w_on", on_change=_on_threshold_on, args=("w_on",), disabled=on_disabled,
                 help="Recalibrated: the probability the map of the Recalibration panel gives each stated value."
                      + (" Choose a map there first (Map, above)." if on_disabled else ""))
    axis = threshold_axis(ds, on)
    lo, hi = current_thresholds(replace(v, on=on), axis)
    st.session_state["w_lo"] = float(lo)
    st.slider("Review threshold", min_value=axis.lo, max_value=axis.hi, step=axis.step, key="w_lo",
              format=axis.format,
              on_change=_on_lo, args=("w_lo", axis),
              help="Items below it go to a person; items at or above it are accepted unseen.")
    st.session_state["w_hi_on"] = hi is not None
    st.checkbox("Add an upper threshold", key="w_hi_on", on_change=_on_hi_toggle, args=("w_hi_on", axis),
                help="Then only items at or above the upper threshold are accepted unseen; the ones between "
                     "the two thresholds form a middle band.")
    if hi is not None:
        st.session_state["w_hi"] = float(hi)
        st.slider("Upper threshold", min_value=min(axis.hi, lo + axis.step), max_value=axis.hi, step=axis.step,
                  key="w_hi", on_change=_on_hi, args=("w_hi",), format=axis.format)
    return axis


def route_now(ctx: Context, ds: Dataset, v: views.View) -> tuple[Any, ThresholdAxis, Any, Any, str | None]:
    """Routing of ``ds`` at the view's thresholds: ``(routing, axis, basis, map, note)``."""
    from calib import routing

    b, cmap, note = routing_basis(ctx, ds, v)
    axis = threshold_axis(ds, b.on)
    lo, hi = current_thresholds(replace(v, on=b.on), axis)
    cost_r = v.cost_review if v.cost_review or v.cost_miss else None
    cost_m = v.cost_miss if v.cost_review or v.cost_miss else None
    r = routing.route(b, lo, hi, cost_review=cost_r, cost_miss=cost_m, level=v.level)
    return r, axis, b, cmap, note


def review_queue_csv(rows: Any, lower: float, cmap: Any = None) -> bytes:
    """The review queue (items below ``lower``) as CSV bytes for download, with
    spreadsheet formulas neutralised (:func:`calib.routing.queue_to_csv`)."""
    from calib import routing

    return routing.queue_to_csv(routing.review_queue(rows, lower, calibration=cmap))


def metric(container: Any, label: str, value: str, interval: str | None = None, **kwargs: Any) -> None:
    """``st.metric`` with its interval printed beside it, not hidden in a tooltip.

    ``label`` and ``interval`` are fixed strings and numbers written by the app (never
    user text): the caption renders markdown.
    """
    container.metric(label, value, help=interval, **kwargs)
    if interval:
        container.caption(interval)


def routing_metrics(r: Any, compact: bool = False) -> None:
    """The routing numbers under their stable labels (browser tests look them up by label)."""
    def ci(name: str, pct: bool = False) -> str | None:
        iv = r.ci.get(name)
        if iv is None or iv.lo is None:
            return None
        if pct:
            return f"{100 * r.level:g}% interval {100 * iv.lo:.1f}% to {100 * iv.hi:.1f}%"
        return f"{100 * r.level:g}% interval {iv.lo:,.0f} to {iv.hi:,.0f}"

    items = [
        ("Sent to a person", f"{r.to_person:,}", ci("to_person")),
        ("Accepted unseen", f"{r.accepted:,}", ci("accepted")),
        ("Accuracy among accepted", fmt_pct(r.accuracy_accepted), ci("accuracy_accepted", pct=True)),
        ("Errors slipping through", f"{r.errors_slipping:,}", ci("errors_slipping")),
        ("Errors caught", f"{r.errors_caught:,}", ci("errors_caught")),
    ]
    if r.upper is not None:
        items.append(("Middle band", f"{r.middle:,}", None))
    if compact:
        for label, value, help_ in items:
            metric(st, label, value, help_)
        return
    # six in one row truncate their labels at laptop width: two rows of three then
    per_row = 3 if len(items) > 5 else len(items)
    for start in range(0, len(items), per_row):
        row = items[start:start + per_row]
        for c, (label, value, help_) in zip(st.columns(per_row), row, strict=False):
            metric(c, label, value, help_)


def threshold_panel(ctx: Context, detail: Callable[[Context, Dataset, Any, ThresholdAxis, Any, Any], None] | None = None) -> None:
    """The review-threshold panel: sliders in the sidebar, numbers next to them, and
    (on the Routing page) ``detail`` in the main area — all in one fragment, so a
    threshold move reruns only this, not the page."""
    if not ctx.datasets:
        return
    _threshold_fragment(ctx, detail)


#: Session-state key where the last threshold-panel run leaves its duration (seconds),
#: read by ``bench/bench_dashboard.py``.
FRAGMENT_TIMING_KEY = "calib_threshold_seconds"


@st.fragment
def _threshold_fragment(ctx: Context, detail: Any) -> None:
    started = time.perf_counter()
    try:
        _threshold_body(ctx, detail)
    finally:
        st.session_state[FRAGMENT_TIMING_KEY] = time.perf_counter() - started


def _threshold_body(ctx: Context, detail: Any) -> None:
    v = get_view()
    ds = next((d for d in ctx.datasets if d.name == v.model), ctx.datasets[0])
    with st.sidebar:
        _threshold_widgets(ds, v)
    v = get_view()
    try:
        r, axis, b, cmap, note = route_now(ctx, ds, v)
    except CalibError as exc:
        with st.sidebar:
            show_error(exc)
        return
    if detail is None:
        with st.sidebar:
            if note:
                st.caption(md_escape(note))
            routing_metrics(r, compact=True)
    else:
        if note:
            st.info(md_escape(note))
        detail(ctx, ds, r, axis, b, cmap)
    sync_url(get_view())
