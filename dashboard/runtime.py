"""Process-wide hosting state, one per server: the limits, the access configuration, the
password gate, the memory ledger, the heavy-work gate and the share store; and this
session's memory budget; whether the share link a session opened still opens.

The process-wide objects are held by :mod:`calib.hosting.resident`, not
``st.cache_resource``: any client can empty Streamlit's caches (a ``clear_cache``
message), and with them every lock-out, booking and slot."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import streamlit as st

from calib.errors import CalibError
from calib.hosting.access import AccessConfig, PasswordGate, check_auth_secrets
from calib.hosting.budget import HeavyGate, MemoryLedger, SessionBudget
from calib.hosting.lockout import CatalogFailures
from calib.hosting.resident import resident
from calib.hosting.shares import ended_message
from calib.hosting.store import Store, database_url_from_env
from calib.limits import Limits
from dashboard.keys import BUDGET_KEY, SHARED_KEY


@dataclass(frozen=True)
class Runtime:
    """Process-wide hosting state: one per server (:mod:`calib.hosting.resident`)."""

    limits: Limits
    config: AccessConfig
    gate: PasswordGate | None
    ledger: MemoryLedger
    heavy: HeavyGate


def runtime() -> Runtime:
    """Limits, access configuration, password gate, memory ledger and heavy-work gate,
    read once per process from the environment (and ``st.secrets``). A setting that does
    not parse raises :class:`CalibError` naming it (not kept, so fixing it and reloading
    works)."""
    return resident("runtime", _read_runtime)


def _read_runtime() -> Runtime:
    limits = Limits.from_env(max_upload_mb=st.get_option("server.maxUploadSize"))
    try:
        # reading st.secrets also promotes its root keys to os.environ (Community Cloud)
        pw = st.secrets.get("CALIB_PASSWORD")
    except Exception:  # no secrets.toml: nothing to read
        pw = None
    cfg = AccessConfig.from_env(password=str(pw) if pw else None)
    if cfg.oidc:  # st.login would fail on the first click with Streamlit's generic error
        check_auth_secrets(_secrets_section("auth"), cfg.oidc_provider)
    return Runtime(
        limits=limits, config=cfg,
        gate=PasswordGate.from_config(cfg, failures=_shared_failures()) if cfg.password else None,
        ledger=MemoryLedger.from_limits(limits), heavy=HeavyGate.from_limits(limits),
    )


def _shared_failures() -> CatalogFailures | None:
    """The lock-out's failures in the catalog the replicas share (``CALIB_DATABASE_URL``),
    or ``None``: this process's memory (one server)."""
    if database_url_from_env() is None:
        return None
    return CatalogFailures(share_store())


def _secrets_section(name: str) -> object:
    """A section of ``st.secrets`` as a plain mapping, or ``None`` (no such section, or
    no secrets at all)."""
    try:
        section = st.secrets.get(name)
    except Exception:  # no secrets.toml: nothing to read
        return None
    to_dict = getattr(section, "to_dict", None)
    return to_dict() if callable(to_dict) else section


def share_store() -> Store:
    """The share store (``CALIB_DATA_DIR``), opened once per process on first use: a
    session that never shares or opens a link never touches the disk."""
    return resident("share_store", Store.from_env)


def heavy(what: str) -> contextlib.AbstractContextManager[None]:
    """``with heavy("…"):`` around a parse or a bootstrap: at most ``CALIB_HEAVY_JOBS`` at once."""
    return runtime().heavy.slot(what)


def budget() -> SessionBudget:
    """This session's memory budget (opened on first use, kept in the session state)."""
    b = st.session_state.get(BUDGET_KEY)
    if b is None:
        b = st.session_state[BUDGET_KEY] = runtime().ledger.open_session()
    return b


def link_ended(token: str | None) -> str | None:
    """Why the share link ``token`` no longer opens (the words the dead-link page says),
    or ``None`` while it does (or for no link: a session of one's own data). Safe outside
    a script run (a deferred download runs on a server thread): reads nothing from the
    session. A store that cannot answer counts as ended: show nothing rather than what
    may be gone."""
    if token is None:
        return None
    try:
        status = share_store().link_status(token)
    except CalibError as exc:
        return str(exc)
    return ended_message(status)


def session_link() -> str | None:
    """The share link this session opened (its token), or ``None``."""
    return st.session_state.get(SHARED_KEY)


def rerun_if_link_gone() -> None:
    """For a part of a page that runs on its own (a fragment, issue 22): if the session's
    link ended since the page ran, run the whole app again, whose :func:`end_if_link_gone`
    then shows the dead-link page in place of every part of the page."""
    if link_ended(session_link()) is not None:
        st.rerun(scope="app")
