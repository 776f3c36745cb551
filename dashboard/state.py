"""The view (:class:`calib.hosting.view.View`) in the session, and its binding to the
URL and to the widgets.

Widgets are seeded from the view before they render and write back through their
``on_change`` callback (:func:`bind`); the view goes back to the URL at the end of
every run (:func:`sync_url`), keeping parameters the view does not own (``share``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from calib.hosting import view as views
from calib.hosting.shares import SHARE_PARAM
from dashboard.keys import SHARED_KEY, VIEW_KEY


def get_view() -> views.View:
    v = st.session_state.get(VIEW_KEY)
    return v if isinstance(v, views.View) else views.DEFAULT


def set_view(v: views.View) -> None:
    st.session_state[VIEW_KEY] = v


def change_view(**changes: object) -> None:
    """Replace fields of the session's view (checked by :func:`calib.hosting.view.with_changes`)."""
    set_view(views.with_changes(get_view(), **changes))


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


def _on_widget(field_name: str, key: str, convert: Callable[[Any], Any]) -> None:
    change_view(**{field_name: convert(st.session_state[key])})


def bind(field_name: str, key: str, *, to_widget: Callable[[Any], Any] = lambda x: x,
         from_widget: Callable[[Any], Any] = lambda x: x) -> dict[str, Any]:
    """Seed widget ``key`` from the view and return the kwargs that write it back.

    Use as ``st.selectbox(label, options, **bind("scheme", "w_scheme"))``.
    """
    st.session_state[key] = to_widget(getattr(get_view(), field_name))
    return {"key": key, "on_change": _on_widget, "args": (field_name, key, from_widget)}
