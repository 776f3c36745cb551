"""The Drift page's map transport: a recalibration map checked on the new run by the
engine (:func:`calib.maps.transport.transport`: the calibration test, the held-out score
then and now, the advice keep / refit / retire) and shown. The map is the view's, fitted on
the old run as the Recalibration page fits it, or a saved map file uploaded here (what
``calib transport MAP.json NEW`` reads). The words are :mod:`calib.present.transport`'s;
nothing here renders user text as markdown or HTML.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.hosting import view as views
from calib.present import format as fmt
from calib.present import transport as words
from dashboard.context import Context
from dashboard.entries import cache_key, digest_bytes
from dashboard.layout import METHOD_LABELS, metric, show_error
from dashboard.results import fit_for, map_key
from dashboard.runtime import heavy
from dashboard.state import bind, get_view

if TYPE_CHECKING:
    from calib.maps import CalibrationMap
    from calib.maps.transport import Transport


@st.cache_data(max_entries=32, show_spinner="Checking the map on the new run…")
def _transport_cached(k_map: tuple[object, ...], k_new: str, level: float, seed: int,
                      _cmap: CalibrationMap, _new: Dataset) -> Transport:
    from calib.runs.maps import transport
    from calib.runs.settings import Settings

    with heavy("checking the map on the new run"):
        return transport(_cmap, _new, Settings(level=level, seed=seed))


def transport_for(ctx: Context, old: Dataset, new: Dataset) -> Transport | None:
    """The view's map fitted on ``old`` and checked on ``new`` (``None`` when the view has
    no map). Raises :class:`CalibError` when the map cannot be fitted or checked."""
    fit = fit_for(ctx, old)
    if fit is None:
        return None
    v = ctx.view
    return _transport_cached((cache_key(old), *map_key(v)), cache_key(new), v.level, v.seed, fit.map, new)


def file_transport(data: bytes, new: Dataset, v: views.View) -> tuple[Transport, str]:
    """A saved map's bytes read (under the size limit) and checked on ``new``; and its method."""
    from calib.runs.maps import read_uploaded_map

    cmap = read_uploaded_map(data)
    t = _transport_cached(("file", digest_bytes(data)), cache_key(new), v.level, v.seed, cmap, new)
    return t, cmap.method


def _from_view(ctx: Context, old: Dataset, new: Dataset) -> tuple[Transport, str] | None:
    st.selectbox("Map fitted on the old run", views.METHODS, format_func=METHOD_LABELS.__getitem__,
                 **bind("method", "drift_method"), help="The same choice as the Recalibration page's map.")
    ctx = replace(ctx, view=get_view())
    t = transport_for(ctx, old, new)
    if t is None:
        st.info(words.NO_MAP)
        return None
    return t, METHOD_LABELS[ctx.view.method]


def _from_file(ctx: Context, new: Dataset) -> tuple[Transport, str] | None:
    up = st.file_uploader(words.FILE_LABEL, type=["json"], key="drift_map_file")
    if up is None:
        st.info(words.NO_FILE)
        return None
    t, method = file_transport(up.getvalue(), new, ctx.view)
    return t, METHOD_LABELS.get(method, method)


def show_transport(ctx: Context, old: Dataset, new: Dataset) -> None:
    """The section: where the map comes from, then the advice, the test, then vs now."""
    st.subheader("Does the map still hold?")
    st.caption(words.PAGE_NOTE)
    # a share's read-only viewer checks the view's map; uploading a file is for the session's owner
    source = words.MAP_SOURCES[0] if ctx.access.read_only else st.radio(
        "Map", words.MAP_SOURCES, horizontal=True, key="drift_map_source")
    from_file = source == words.MAP_SOURCES[1]
    try:
        got = _from_file(ctx, new) if from_file else _from_view(ctx, old, new)
    except CalibError as exc:
        show_error(exc)
        return
    if got is not None:
        _show(got[0], got[1], from_file)


def _show(t: Transport, label: str, from_file: bool) -> None:
    c1, c2 = st.columns(2)
    metric(c1, "Map advice", t.advice)
    metric(c2, "Brier gain of the map now", fmt.signed(t.gain_now.value, 4),
           fmt.level_interval(t.level, *t.gain_now.ci, lambda x: fmt.num(x, 4)))
    st.text(words.advice_sentence(t))
    st.text(words.calibration_sentence(t))
    st.dataframe(pd.DataFrame(words.then_now_rows(t)), hide_index=True)
    st.text(words.fitted_on(t, label, from_file))
