"""Share links in the dashboard: reopening one (``?share=TOKEN``), the sidebar's Share
panel, and the owner's actions (update, revoke, delete; a logged-in owner's list of links;
the review switch and audit sample size of a link, issue 12).

The store and its rules are :mod:`calib.hosting.store`'s; this module keeps, in the
session, which links this session made (their owner keys), what the last action said,
and the view a link was opened with (the owner's decision, shown first to a
reviewer: :func:`decision_first`).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.hosting import view as views
from calib.hosting.shares import (
    SHARE_PARAM,
    UNAVAILABLE_MESSAGE,
    UNAVAILABLE_TITLE,
    DatasetSpec,
    InputFile,
    Outcome,
    ended_message,
    valid_token,
)
from calib.hosting.store import Store
from dashboard.context import Access, Context
from dashboard.decision_view import OWNER_VIEW_KEY, shared_decision
from dashboard.entries import Entry, Overrides, available_samples, entries, new_upload_entry, traffic_entries
from dashboard.keys import (
    ENTRIES_KEY,
    FIGURES_KEY,
    LAST_SHARE_KEY,
    NOTES_KEY,
    OWNED_OPEN_KEY,
    OWNER_KEY,
    SHARE_NOTICE_KEY,
    SHARED_KEY,
    USER_KEY,
    VIEW_KEY,
)
from dashboard.layout import PAGE_FILES, md_escape, show_error
from dashboard.runtime import budget, session_link, share_store
from dashboard.state import get_view, share_params


def decision_first(ctx: Context) -> None:
    """On a share link opened read-only: the owner's decision card, first on the page
    (:func:`dashboard.decision_view.shared_decision`)."""
    if ctx.access.read_only and ctx.datasets:
        shared_decision(ctx)


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
        items.append(replace(e, name=spec.name, overrides=Overrides.from_stored(meta.get("overrides"))))
    st.session_state[SHARED_KEY] = token
    st.session_state[OWNER_VIEW_KEY] = (token, v)  # the owner's decision, kept while a reviewer explores
    if notes:
        st.session_state[NOTES_KEY] = notes
    return items, v


def end_if_link_gone() -> None:
    """A session opened from a share link ends when the link does: run at every page
    start (:func:`dashboard.page.page_setup`). If the link was revoked, deleted or expired
    since this session opened it (by anyone, in any server process:
    :meth:`calib.hosting.store.Store.link_status` asks the catalog), the session forgets
    the link's data (its inputs, view and figures, and their memory bookings), is told
    why, and sees the dead-link page on every page until it starts a new analysis."""
    token = session_link()
    if token is None:
        return
    try:
        ended = ended_message(share_store().link_status(token))
    except CalibError as exc:  # the store cannot answer: show nothing rather than what may be gone
        st.title("This link cannot be opened right now")
        show_error(exc)
        st.stop()
    if ended is None:
        return
    for key in (ENTRIES_KEY, VIEW_KEY, FIGURES_KEY, OWNER_VIEW_KEY, NOTES_KEY):
        st.session_state.pop(key, None)
    budget().release()
    _unavailable(ended, st.session_state.pop(SHARE_NOTICE_KEY, None))  # "The link is revoked", to who just did


def _unavailable(message: str = UNAVAILABLE_MESSAGE, notice: tuple[bool, str] | None = None) -> NoReturn:
    """The page a dead link shows (fixed text only, and the notice of an owner action
    this session just took), then stop."""
    st.title(UNAVAILABLE_TITLE)
    st.markdown(message)
    _show_notice(notice)
    st.button("Start a new analysis", key="calib_leave_share", on_click=_leave_share)
    st.stop()


def _leave_share() -> None:
    st.session_state.pop(SHARED_KEY, None)
    st.query_params.clear()


def share_link(token: str, page: str = "data") -> str:
    """The link of a share: the app's address as the browser sees it, the path of the page
    it was shared from (none for the Data page) and ``?share=TOKEN``.

    Opened on its own page, the link runs that page at once; a link to the app's root (as
    links were made before) runs the Data page first, which then jumps to the view's page:
    a whole run more, about 0.3 s of a fresh browser's first figure
    (bench/bench_browser.py ``--only share`` opens the link this makes). Both work."""
    return f"{_base_url()}{page_path(page)}?{SHARE_PARAM}={token}"


def page_path(page: str) -> str:
    """The URL path ``st.navigation`` gives ``page`` below the app's address: its file's
    name without the order prefix (``pages/5_Routing.py`` -> ``Routing``); ``""`` for
    the Data page, served at the root."""
    from dashboard.navigation import url_path

    return "" if page == "data" else url_path(Path(PAGE_FILES[page]))


def _base_url() -> str:
    """The app's address in the user's browser: ``st.context.url`` (no query) without
    the page's own path segment (``/Routing/``); ``/`` when unknown (no browser)."""
    url = st.context.url
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return "/"
    head, _, last = url.rstrip("/").rpartition("/")
    page_paths = {page_path(name).lower() for name in PAGE_FILES if name != "data"}
    if "//" in head and last.lower() in page_paths:
        url = head
    return url if url.endswith("/") else url + "/"


def _share_now() -> None:
    """The Share button: store this session's uploads and the view, keep the owner key."""
    uploads = [e for e in entries() if e.kind != "sample" and (e.dataset is not None or e.traffic is not None)]
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
        "datasets": [{"kind": e.kind, "filename": e.filename, "overrides": e.overrides.to_dict()} for e in uploads],
    }
    try:
        r = share_store().share(specs, state, owner_user=st.session_state.get(USER_KEY))
    except CalibError as exc:
        st.session_state[SHARE_NOTICE_KEY] = (False, str(exc))
        return
    st.session_state.setdefault(OWNER_KEY, {})[r.token] = r.owner_secret
    st.session_state[LAST_SHARE_KEY] = {"token": r.token, "secret": r.owner_secret, "expires": r.expires_at,
                                        "id": r.share_id, "page": v.page}
    st.session_state[SHARE_NOTICE_KEY] = (True, "Shared. Send the link; keep the owner key.")


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


def share_panel(acc: Access, ds: list[Dataset]) -> None:
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
                _review_controls(token, "calib_owner_key")
        _show_notice(notice)
        return
    if acc.user:
        _owned_links(acc.user)
    if not ds and not traffic_entries():
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
        page = str(last["params"].get("page", "data"))
        st.code(f"{_base_url()}{page_path(page if page in PAGE_FILES else 'data')}?{urlencode(last['params'])}",
                language=None, wrap_lines=True)
        return
    st.caption("Link (anyone who has it can look, read-only):")
    st.code(share_link(last["token"], str(last.get("page", "data"))), language=None, wrap_lines=True)
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
    _review_controls(last["token"])


#: Widget keys of the owner's review switch and audit sample size.
REVIEW_ON_KEY, REVIEW_SIZE_KEY = "calib_review_on", "calib_review_size"


def _review_controls(token: str, secret_key: str | None = None) -> None:
    """The owner's review setting of the link (off by default): the switch and the audit
    sample size, written to the store at once (:meth:`calib.hosting.labels.ReviewCatalog.set_review`)
    with this session's owner key, the one typed in ``secret_key``, or the login."""
    from calib.hosting.labels import SAMPLE_SIZE_RANGE
    from calib.present.traffic import BUDGET_HELP

    try:
        setting = share_store().review_setting(token)
    except CalibError as exc:
        show_error(exc)
        return
    if setting is None:
        return
    st.session_state[REVIEW_ON_KEY] = setting.enabled
    st.session_state[REVIEW_SIZE_KEY] = setting.sample_size
    st.toggle("Enable reviewing", key=REVIEW_ON_KEY, on_change=_set_review, args=(token, setting.seed, secret_key),
              help="Reviewers with the link label the review queue and an audit sample of the items accepted "
                   "unseen on the Review page; their labels are kept on this server with the link.")
    st.number_input("Audit sample size", min_value=SAMPLE_SIZE_RANGE[0], max_value=SAMPLE_SIZE_RANGE[1], step=10,
                    key=REVIEW_SIZE_KEY, on_change=_set_review, args=(token, setting.seed, secret_key),
                    help="How many of the items accepted unseen reviewers check (a seeded random sample, "
                         "stratified by stated value): the real-world check of the threshold. " + BUDGET_HELP)


def _set_review(token: str, seed: int, secret_key: str | None) -> None:
    """The owner changed the switch or the sample size: store both."""
    typed = str(st.session_state.get(secret_key) or "").strip() if secret_key else ""
    secret = st.session_state.get(OWNER_KEY, {}).get(token) or typed or None
    try:
        out = share_store().set_review(
            token, enabled=bool(st.session_state.get(REVIEW_ON_KEY)),
            sample_size=int(st.session_state.get(REVIEW_SIZE_KEY) or 0), seed=seed,
            owner_secret=secret, user=st.session_state.get(USER_KEY))
    except CalibError as exc:
        st.session_state[SHARE_NOTICE_KEY] = (False, str(exc))
        return
    st.session_state[SHARE_NOTICE_KEY] = (out.ok, out.message)


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
