"""The Routing page's route stability (issue 28, item 3): when the loaded file holds items
judged more than once (repeated item ids, Inspect epochs: :func:`calib.runs.decide.repeated`),
the share of items whose route flips at the review threshold with its interval, the spread of
the stated confidence within an item, and the threshold certificate with the item as the unit,
from :func:`calib.runs.decide.stability`, written by :mod:`calib.present.two_stage`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from calib.dataset import Dataset
from calib.hosting import view as views
from calib.runs.decide import repeated
from calib.runs.settings import Settings
from dashboard.entries import cache_key
from dashboard.layout import metric
from dashboard.results import settings_of
from dashboard.runtime import heavy

if TYPE_CHECKING:
    from calib.decision.stability import Stability  # a result type, not a call
    from calib.maps import CalibrationMap
    from calib.routing import Routing
    from calib.rows import Judgments


@st.cache_data(max_entries=16, show_spinner="Following the repeated items…")
def _stability_cached(key: str, threshold: float | None, s: Settings, _rows: Judgments) -> Stability:
    from calib.runs.decide import stability

    with heavy("route stability"):
        return stability(_rows, s, threshold)


@st.cache_data(max_entries=64, show_spinner=False)
def _repeated_cached(key: str, _rows: Judgments | None) -> bool:
    """:func:`calib.runs.decide.repeated` once per dataset (``key``: its content key):
    when ids repeat it numbers every row's item (0.3 s or more at 1,000,000 rows; distinct
    ids are proved distinct in 0.01 s), which each threshold move (a rerun of the
    Routing page's fragment) would pay again for the same answer."""
    return repeated(_rows)


def show_stability(ds: Dataset, v: views.View, r: Routing, cmap: CalibrationMap | None) -> None:
    """Route stability at the review threshold (at the item-level certified one when the
    threshold is on a map's scale); nothing when no item is judged twice."""
    from calib.present.two_stage import (
        STABILITY_CAPTION,
        STABILITY_ON_MAP,
        stability_figures,
        stability_lines,
    )

    if not _repeated_cached(cache_key(ds), ds.rows):
        return
    st.subheader("Route stability")
    st.caption(STABILITY_CAPTION)
    threshold = float(r.lower) if cmap is None else None
    if cmap is not None:
        st.caption(STABILITY_ON_MAP)
    settings = settings_of(v).only("level", "seed", "target", "confidence")
    s = _stability_cached(cache_key(ds), threshold, settings, ds.rows)
    for col, (label, value, ci, text) in zip(st.columns(3), stability_figures(s), strict=True):
        metric(col, label, value, ci, help=text)
    st.text("\n".join(stability_lines(s)[2:]))  # plain text: the lines may quote the unit's source
