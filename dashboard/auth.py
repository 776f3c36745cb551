"""Who may look: the access hook every page runs first, and the password form.

Locally (nothing configured) everyone may look and change everything. Hosted, the
decisions are :mod:`calib.hosting.access`'s; this module shows their screens.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from calib.errors import CalibError
from calib.hosting.access import UPLOAD_SESSIONS, PasswordGate, user_allowed
from calib.hosting.shares import SHARE_PARAM
from dashboard.context import Access
from dashboard.keys import OWNER_KEY, SHARED_KEY, UNLOCKED_KEY, USER_KEY
from dashboard.layout import show_error
from dashboard.runtime import runtime


def access() -> Access:
    """Decide whether this session may see the app, and what it may change.

    1. ``CALIB_AUTH=oidc``: ``st.login`` first; then the verified e-mail's domain must
       be in ``CALIB_ALLOWED_DOMAINS`` (:func:`calib.hosting.access.user_allowed`).
    2. ``CALIB_PASSWORD`` (environment or ``st.secrets``): a password form, checked in
       constant time with lock-out (:class:`calib.hosting.access.PasswordGate`); once
       right, the session stays unlocked.
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
    user: str | None = None
    if rt.config.oidc:
        logged_in = _login(rt.config.oidc_provider, rt.config.allowed_domains)
        if logged_in is None:
            return Access(allowed=False)
        user = logged_in
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


def _login(provider: str | None, allowed_domains: tuple[str, ...]) -> str | None:
    """The logged-in user's e-mail, or ``None`` after showing the login (or refusal) screen."""
    if not st.user.to_dict().get("is_logged_in"):  # no user record at all (a test run): logged out
        st.title("calib")
        st.markdown("This dashboard is for registered users. Log in to continue.")
        st.button("Log in", key="calib_login", type="primary", on_click=st.login,
                  args=(provider,) if provider else ())
        return None
    decision = user_allowed(st.user.to_dict(), allowed_domains)
    if not decision.allowed:
        st.title("calib")
        show_error(decision.message)
        st.button("Log out", key="calib_logout", on_click=st.logout)
        return None
    return str(st.user.email)


def _allow_uploads(allowed: bool) -> None:
    """Tell the web server's upload guard (:mod:`calib.hosting.webguard`) whether this
    session may upload: only once it is allowed in and not read-only."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    if allowed:
        UPLOAD_SESSIONS.add(ctx.session_id)
    else:
        UPLOAD_SESSIONS.discard(ctx.session_id)


def _client_key() -> str:
    """The address password failures are counted under: the connection's peer, or behind
    a proxy listed in ``CALIB_TRUSTED_PROXIES`` the right-most ``X-Forwarded-For`` hop
    that is not one (the web server sets it: :func:`calib.hosting.webguard.install_proxy_policy`).
    Streamlit reports loopback as ``None``."""
    ip = st.context.ip_address
    return ip if isinstance(ip, str) and ip else "unknown"


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
