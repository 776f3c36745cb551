"""The Drift page's pieces: the cached engine calls (:func:`calib.drift.drift`,
:func:`calib.drift.series`) and how their results are shown.

Run names are user text: they reach the page only through ``st.text``, dataframes and
escaped figure labels, never markdown or HTML.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.hosting import view as views
from calib.present import explain
from calib.present import format as fmt
from calib.runs.settings import Settings
from dashboard.chart import show_figure
from dashboard.entries import cache_key, source_bytes
from dashboard.layout import metric, show_error
from dashboard.results import settings_of
from dashboard.runtime import heavy

if TYPE_CHECKING:
    import numpy as np

    from calib.rows import Judgments
    from calib.runs.drift import Drift, Series


def threshold_of(ds: Dataset, v: views.View) -> float:
    """The review threshold the check uses: the sidebar's (on the stated value), else the default."""
    from calib.runs.axis import default_thresholds

    if v.on == "stated" and v.lo is not None:
        return float(v.lo)
    return default_thresholds(ds.table.scale)[0]


@st.cache_data(max_entries=32, show_spinner="Comparing the two runs…")
def _drift_cached(k_old: str, k_new: str, pairing: str, threshold: float, s: Settings,
                  anchors: tuple[str, ...] | None, answer_key: str | None, _old: Dataset, _new: Dataset,
                  _answers: tuple | None) -> Drift:
    from calib.runs.drift import drift

    with heavy("comparing two runs"):
        return drift(_old, _new, s, threshold=threshold, pairing=pairing, answers=_answers,
                     anchors=None if anchors is None else list(anchors))


def drift_for(old: Dataset, new: Dataset, v: views.View, pairing: str,
              anchors: tuple[str, ...] | None = None, answer_key: str | None = None) -> Drift:
    """:func:`calib.drift.drift` with the view's settings (cached by content); ``anchors``:
    the ids of a fixed anchor set (``calib drift --anchors``), else the items that kept their
    answer; ``answer_key``: the field holding the answer in both runs (``--answer-key``), else
    an item whose outcome is unchanged is taken as the same answer. Raises
    :class:`CalibError` when a run's file lacks the answer on a judged line."""
    s = settings_of(v).only("reps", "seed", "level", "target", "confidence")
    s = replace(s, target=s.target_error)  # the page checks the threshold at the default target too
    answers = None if answer_key is None else (_answers_of(old, answer_key), _answers_of(new, answer_key))
    return _drift_cached(cache_key(old), cache_key(new), pairing, threshold_of(new, v), s, anchors, answer_key,
                         old, new, answers)


#: The answer-field choice that compares outcomes (the CLI without ``--answer-key``).
BY_OUTCOME = "(none: an unchanged outcome is the same answer)"


@st.cache_data(max_entries=16, show_spinner=False)
def _fields_cached(key: str, exclude: tuple[str, ...], _data: bytes, _rows: Judgments) -> list[str]:
    from calib.readers.covariate import field_names

    return field_names(_data, _rows, exclude)


@st.cache_data(max_entries=16, show_spinner="Reading the answers…")
def _answers_cached(key: str, field: str, name: str, _data: bytes, _rows: Judgments) -> np.ndarray:
    from calib.runs.drift import answers_from

    return answers_from(_data, name, _rows, field, flag="Answer field", instead=f"choose {BY_OUTCOME!r}")


def _answers_of(ds: Dataset, field: str) -> np.ndarray:
    data = source_bytes(ds)
    if data is None or ds.rows is None:
        raise CalibError(f"Answer field: {ds.name}: answers are read from JSON Lines runs only")
    return _answers_cached(cache_key(ds), field, ds.name, data, ds.rows)


def answer_field(old: Dataset, new: Dataset) -> str | None:
    """The field holding the system's answer in both runs, chosen on the page (``calib
    drift --answer-key``), or ``None``: who moved then compares outcomes. Offered only
    when both runs are JSON Lines files; the fields listed are those both files hold."""
    data = [source_bytes(old), source_bytes(new)]
    if data[0] is None or data[1] is None:
        return None
    keys = [tuple(v for k, v in ds.report.fields.items() if k in ("confidence", "outcome") and v)
            for ds in (old, new)]
    if old.rows is None or new.rows is None:
        return None
    first = _fields_cached(cache_key(old), keys[0], data[0], old.rows)
    second = set(_fields_cached(cache_key(new), keys[1], data[1], new.rows))
    shared = [f for f in first if f in second]
    with st.expander("Answers compared by (optional)"):
        choice = st.selectbox("Field holding the system's answer in both runs", [BY_OUTCOME, *shared],
                              key="drift_answer_key",
                              help="Who moved: an item whose answer text is the same in both runs isolates the "
                                   "judge's change (calib drift --answer-key). None: an item whose outcome did "
                                   "not change is taken as the same answer.")
    return None if choice == BY_OUTCOME else choice


#: Most characters of anchor ids typed or pasted on the Drift page (checked before they are split).
MAX_ANCHOR_CHARS = 1_000_000


def anchor_ids() -> tuple[str, ...] | None:
    """The fixed anchor set typed on the Drift page (one item id per line, blank lines
    skipped), or ``None`` (empty: the shared items that kept their answer)."""
    with st.expander("Fixed anchor set (optional)"):
        text = st.text_area("Anchor item ids, one per line: items with human labels kept across runs",
                            key="drift_anchors", max_chars=MAX_ANCHOR_CHARS,
                            help="Empty: the anchors are the shared items whose answer did not change. "
                                 "Ids the runs do not share are counted and left out.")
    text = text or ""
    if len(text) > MAX_ANCHOR_CHARS:  # the browser caps it too; a hand-made request is refused here
        show_error(CalibError(f"Anchor ids: more than {MAX_ANCHOR_CHARS:,} characters; the anchor set is ignored"))
        return None
    ids = tuple(x.strip() for x in text.splitlines() if x.strip())
    return ids or None


@st.cache_data(max_entries=16, show_spinner="Charting the runs…")
def _series_cached(keys: tuple[str, ...], threshold: float, reference: int, _runs: tuple[Dataset, ...]) -> Series:
    from calib.runs.drift import series

    with heavy("charting runs"):
        return series(list(_runs), Settings(), threshold=threshold, reference=reference)


def series_for(runs: tuple[Dataset, ...], v: views.View, reference: int) -> tuple[Series, str]:
    """:func:`calib.drift.series` over the runs in time order (:func:`calib.drift.date_order`:
    by the dates in their names, else as loaded), cached by content, and how they were ordered."""
    from calib.runs.drift import date_order

    pos, how = date_order([d.name for d in runs])
    ordered = tuple(runs[i] for i in pos)
    s = _series_cached(tuple(cache_key(d) for d in ordered), threshold_of(ordered[0], v), reference, ordered)
    return s, how


def _ci(c) -> str:  # c: calib.drift.Change
    lo, hi = c.diff.ci
    if lo is None or hi is None:
        return "no interval"
    if c.name == "ece":
        return f"change {fmt.signed(c.diff.value)}, interval [{fmt.signed(lo)}, {fmt.signed(hi)}], {fmt.p_value(c.p)}"
    return f"change {fmt.points(c.diff.value)}, interval [{fmt.points(lo)}, {fmt.points(hi)}], {fmt.p_value(c.p)}"


def show_headline(d: Drift) -> None:
    """The four headline figures: new value, change with its interval and p-value."""
    from calib.present.drift import LABELS

    cols = st.columns(4)
    for col, c in zip(cols, d.changes, strict=True):
        value = fmt.num(c.new) if c.name == "ece" else fmt.pct(c.new)
        old = fmt.num(c.old) if c.name == "ece" else fmt.pct(c.old)
        lo, hi = c.diff.ci
        change = None if lo is None or hi is None else (
            f"change {fmt.signed(c.diff.value)} {fmt.interval(lo, hi, fmt.signed)}" if c.name == "ece" else
            f"change {fmt.points(c.diff.value)} {fmt.interval(lo, hi, fmt.points)}")
        metric(col, f"{LABELS[c.name].capitalize()} (new)", value, change,
               help=f"old {old}; {_ci(c)}.  \n{explain.help_text(c.name)}")


def show_values(d: Drift) -> None:
    """The per-value table and figure (moved values marked)."""
    from calib.present.drift import use_lines, values_figure

    if d.appeared or d.disappeared:  # plain text: never markdown
        st.text("Stated values used in one run only (named, not tested):\n" + "\n".join(use_lines(d)))
    if not d.values:
        st.caption("No stated value is used by both runs (or the score is continuous): no per-value hit rates.")
        return
    show_figure(values_figure(d), key="fig_drift_values")
    st.dataframe(pd.DataFrame([{
        "stated": fmt.value(v.value), "answers old": fmt.count(v.n_old), "answers new": fmt.count(v.n_new),
        "right old": fmt.pct(v.old.value), "right new": fmt.pct(v.new.value),
        "change": fmt.points(v.diff.value), "interval": fmt.ci_text(v.diff.ci, as_pct=True), "p": fmt.p_value(v.p) if v.tested else v.test,
        "moved": "moved" if v.moved else "",
    } for v in d.values]), hide_index=True, width="stretch")


def show_threshold(d: Drift) -> None:
    from calib.present.drift import threshold_lines

    if d.threshold is not None:
        st.subheader("Does the threshold still meet its target?")
        st.text("\n".join(threshold_lines(d.threshold)))


def show_attribution(d: Drift) -> None:
    """Who moved, the judge or the answers judged: the shared items, each part with its
    interval, and the anchor items' hit rate per stated value then vs now (text and
    dataframes only: the lines may hold user text)."""
    from calib.present.drift import anchor_rows, attribution_lines, attribution_rows

    a = d.attribution
    if a is None:
        return
    st.subheader("Who moved: the judge or what it judges?")
    c1, c2, c3 = st.columns(3)
    metric(c1, "Shared items", fmt.count(a.shared_items), help="Items both runs judged (matched by "
           f"{a.matched_by}).")
    metric(c2, "Kept their answer", fmt.count(a.same_answer), help=f"Answers compared by {a.answer_match}.")
    metric(c3, "Anchor items", fmt.count(a.anchor_items),
           help="Shared items whose answer is the same in both runs: their outcomes are fixed, so a stated "
                "value whose hit rate moved on them changed meaning.")
    st.dataframe(pd.DataFrame(attribution_rows(a)), hide_index=True, width="stretch", key="df_attribution")
    st.text("\n".join(attribution_lines(a)))
    if a.anchors:
        st.caption("Anchor items: hit rate of each stated value then vs now (Miettinen-Nurminen score test, "
                   "Holm's step-down over the tested values).")
        st.dataframe(pd.DataFrame(anchor_rows(a)), hide_index=True, width="stretch", key="df_anchors")


def show_verdict(d: Drift) -> None:
    """The verdict as plain text (it names the runs: user text)."""
    from calib.present.drift import drift_lines

    lines = drift_lines(d)
    start = next(i for i, x in enumerate(lines) if x.startswith("Verdict"))
    box = st.warning if d.drift else st.success
    box("Drift found" if d.drift else "No drift found")
    st.text("\n".join(lines[start:]))


def show_series(s: Series, how: str) -> None:
    """The series chart and its table; ``how``: how the runs were put in time order."""
    from calib.present.drift import series_figure, series_lines

    st.caption(f"Runs ordered {how}.")
    show_figure(series_figure(s), key="fig_drift_series")
    st.dataframe(pd.DataFrame([{
        # text cells, "—" where a figure does not exist (a reference run has no EWMA), never "None"
        "run": r.name, "answers": fmt.count(r.n), "accuracy": fmt.pct(r.accuracy),
        "ECE": fmt.num(r.ece), "accepted": fmt.count(r.accepted),
        "error among accepted": fmt.pct(r.error_accepted),
        "EWMA of accuracy": fmt.num(s.accuracy.ewma[i]), "limit": fmt.num(s.accuracy.upper[i]),
    } for i, r in enumerate(s.runs)]), hide_index=True, width="stretch")
    st.text("\n".join(series_lines(s)[-5:]))  # the chart, its in-control rate, both charts, the verdict
