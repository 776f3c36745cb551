"""The Reliability page's calibration against a covariate: a field of the rows chosen, the
per-segment residual table (cluster-robust intervals, Holm-corrected verdict, thin segments
said so; :func:`calib.covariate.covariate_calibration`) and, for a field of categories,
one certified review threshold per segment (:func:`calib.covariate.slice_thresholds`, the
per-group machinery of :mod:`calib.decision.groups`).

The field is read from the bytes this session loaded, by the rows' line numbers, as
``calib audit --covariate`` reads it from the file. Field names and segment labels are user
text: they reach the page through ``st.text``, a selectbox and dataframes, never markdown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.present import covariate as words
from dashboard.entries import source_bytes
from dashboard.layout import show_error
from dashboard.runtime import heavy

if TYPE_CHECKING:
    from calib.covariate import CovariateCalibration
    from calib.decision.groups import PerGroup
    from calib.rows import Judgments
    from dashboard.context import Context


@st.cache_data(max_entries=16, show_spinner=False)
def _fields_cached(digest: str, exclude: tuple[str, ...], _data: bytes, _rows: Judgments) -> list[str]:
    from calib.readers.covariate import field_names

    return field_names(_data, _rows, exclude)


@st.cache_data(max_entries=16, show_spinner="Testing calibration per segment…")
def _covariate_cached(digest: str, key: str, level: float, seed: int, target: float, confidence: float,
                      _data: bytes, _rows: Judgments) -> tuple[CovariateCalibration, PerGroup | None, str]:
    from calib.readers.covariate import covariate_values
    from calib.runs.audit import covariate, slice_thresholds
    from calib.runs.settings import Settings

    s = Settings(level=level, seed=seed, target=target, confidence=confidence)
    with heavy("calibration per segment"):
        values = covariate_values(_data, _rows, key, "the file")
        cov = covariate(_rows, values, key, s)
        if cov.kind != "categorical":
            return cov, None, "per-slice thresholds need a field of categories; this one is numeric"
        try:
            return cov, slice_thresholds(_rows, values, key, s), ""
        except CalibError as exc:
            return cov, None, str(exc)


def show_covariate(ctx: Context, ds: Dataset) -> None:
    """The section: the field chooser, the headline, the segment table, per-slice thresholds."""
    from calib.settings import DEFAULT_TARGET
    from dashboard.entries import cache_key

    st.subheader("Calibration against a field")
    st.caption(words.SECTION_NOTE)
    data = source_bytes(ds)
    exclude = tuple(v for k, v in ds.report.fields.items() if k in ("confidence", "outcome", "id") and v)
    fields = [] if data is None else _fields_cached(cache_key(ds), exclude, data, ds.rows)
    if not fields:
        st.info(words.NO_FIELDS)
        return
    key = st.selectbox("Field", ["(choose a field)", *fields], key="covariate_field",
                       help="A field of the rows: a language, a model version, an answer length.")
    if key == "(choose a field)":
        return
    v = ctx.view
    target = DEFAULT_TARGET if v.target is None else v.target
    try:
        cov, slices, why = _covariate_cached(cache_key(ds), key, v.level, v.seed, target, v.confidence,
                                             data, ds.rows)
    except CalibError as exc:
        show_error(exc)
        return
    st.text(words.headline(cov))
    if cov.slope.value is not None:
        st.text(words.slope_sentence(cov))
    st.dataframe(pd.DataFrame(words.segment_rows(cov)), hide_index=True)
    st.text("\n".join(cov.notes))
    st.subheader("Per-slice certified thresholds")
    st.caption(words.SLICE_NOTE)
    if slices is None:
        st.info(why)
        return
    st.text(slices.message)
    st.dataframe(pd.DataFrame(words.slice_rows(slices)), hide_index=True)
