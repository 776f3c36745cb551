"""Small layout helpers every page uses: the pages and their titles, the words of the
choices (UI labels), escaping for markdown elements, error boxes, metrics with their
interval, links between pages, and figures kept across threshold moves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from calib.dataset import Dataset
from dashboard.keys import FIGURES_KEY

if TYPE_CHECKING:  # pandas costs half a second to import: not on the cold start's path
    import pandas as pd
    import plotly.graph_objects as go

ROOT = Path(__file__).resolve().parents[1]

#: Page name -> script path relative to the app root (for st.switch_page / st.page_link).
PAGE_FILES: dict[str, str] = {
    "data": "pages/0_Data.py",
    "overview": "pages/1_Overview.py",
    "scale": "pages/2_Scale.py",
    "reliability": "pages/3_Reliability.py",
    "recalibration": "pages/4_Recalibration.py",
    "routing": "pages/5_Routing.py",
    "report": "pages/6_Report.py",
    "drift": "pages/7_Drift.py",
    "review": "pages/8_Review.py",
}
PAGE_TITLES: dict[str, str] = {
    "data": "Data",
    "overview": "Overview",
    "scale": "How the scale was used",
    "reliability": "Reliability",
    "recalibration": "Recalibration",
    "routing": "Routing",
    "report": "Report",
    "drift": "Drift between runs",
    "review": "Review",
}

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
THRESHOLD_ON_LABELS = {"stated": "stated confidence", "calibrated": "recalibrated probability"}

_MD_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


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


def show_error(message: object) -> None:
    """A user-fixable problem: its message (escaped) in an error box, never a traceback."""
    st.error(md_escape(str(message)), icon="⚠️")


def metric(container: Any, label: str, value: str, interval: str | None = None, *, help: str | None = None,
           **kwargs: Any) -> None:
    """``st.metric`` with its interval printed under the value (as the metric's delta, grey
    and without an arrow: inside the metric, so it is read with it) and its plain-words
    explanation (:mod:`calib.present.explain`) as the help.

    ``label``, ``interval`` and ``help`` are fixed strings and numbers written by the app
    (never user text): the help renders markdown. ``interval`` is written as
    :data:`calib.present.explain.INTERVAL_PATTERN` reads it (``95% [0.120, 0.160]``).
    """
    if interval:
        kwargs.update(delta=interval, delta_color="off", delta_arrow="off")
    container.metric(label, value, help=help, **kwargs)


def page_question(question: str, answer: str) -> None:
    """A page's first lines: the question it answers and its answer for the loaded data.

    Drawn inside ``st.container(key="page-question")`` (the element gets the CSS class
    ``st-key-page-question``; the browser tests check it is on the first screen). The
    answer may name a model (user text): it is escaped for markdown.
    """
    with st.container(key="page-question"):
        st.subheader(question, anchor=False)
        st.markdown(md_escape(answer))


def link(page: str, label: str, icon: str | None = None) -> None:
    """A link to another page; plain text when the page is not reachable (a page run
    as its own entry script, as tests do for deep links)."""
    from streamlit.errors import StreamlitAPIException

    try:
        st.page_link(PAGE_FILES[page], label=label, icon=icon)
    except StreamlitAPIException:
        st.caption(f"{label}: open the {PAGE_TITLES[page]} page.")


def traffic_only() -> bool:
    """Whether the session holds traffic (no outcomes, issue 24) and nothing else loaded."""
    from dashboard.keys import ENTRIES_KEY

    items = st.session_state.get(ENTRIES_KEY, [])
    return any(getattr(e, "traffic", None) is not None for e in items) and not any(
        getattr(e, "dataset", None) is not None for e in items)


def nothing_loaded() -> str:
    """A page question's answer while no dataset with outcomes is loaded."""
    from calib.present.traffic import NEEDS_OUTCOMES_SHORT

    return NEEDS_OUTCOMES_SHORT if traffic_only() else "Nothing is loaded yet."


def no_data() -> None:
    """What a page shows before anything is loaded (never an exception); with traffic
    only, that the page needs outcomes (:data:`calib.present.traffic.NEEDS_OUTCOMES`)."""
    if traffic_only():
        from calib.present.traffic import NEEDS_OUTCOMES

        st.info(NEEDS_OUTCOMES)
        link("review", "Go to the Review page", icon=":material/rate_review:")
        return
    st.info("No data loaded yet. Upload a file or pick a sample on the Data page.")
    link("data", "Go to the Data page", icon=":material/folder_open:")


def safe_filename(name: str, suffix: str) -> str:
    """A download file name from a model name: letters, digits, ``._-`` only."""
    base = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "_" for ch in name).strip("._")
    return f"{base[:80] or 'calib'}{suffix}"


#: Figures kept per session for threshold moves (a few, the views of one page).
MAX_SESSION_FIGURES = 6


def session_figure(key: tuple[object, ...], build: Callable[[], go.Figure]) -> go.Figure:
    """A figure built once per session and key, then reused (and changed in place).

    For figures redrawn on every threshold move: only the threshold traces change
    (:func:`calib.present.figures.move_threshold_lines`,
    :func:`calib.present.figures.move_marker`), so rebuilding the whole figure each
    time would be wasted. Kept in the session, never shared between sessions, so
    changing it in place is safe.
    """
    store: dict[tuple[object, ...], go.Figure] = st.session_state.setdefault(FIGURES_KEY, {})
    if key in store:
        fig = store.pop(key)
    else:
        fig = build()
        while len(store) >= MAX_SESSION_FIGURES:
            store.pop(next(iter(store)))
    store[key] = fig
    return fig


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
