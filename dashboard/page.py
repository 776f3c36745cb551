"""The start of every page: :func:`page_setup` (see the package docstring), the sidebar's
data and recalibration panels, and the warm-up of the engine after the Data page's
first paint."""

from __future__ import annotations

import logging

import streamlit as st

from calib.dataset import Dataset
from calib.hosting import view as views
from dashboard import auth
from dashboard.context import Context
from dashboard.entries import (
    available_samples,
    count_uploads_in_url,
    datasets,
    entries,
    load_entry,
    note_lost_uploads,
    set_entries,
    sync_samples,
)
from dashboard.keys import NOTES_KEY, PAGE_JUMPED_KEY, SHARED_KEY, VIEW_KEY
from dashboard.layout import (
    METHOD_LABELS,
    PAGE_FILES,
    PAGE_TITLES,
    SCORING_LABELS,
    link,
    md_escape,
    no_data,
    nothing_loaded,
    page_question,
)
from dashboard.navigation import close_sidebar_on_page_change
from dashboard.sharing import end_if_link_gone, restore_shared, share_panel
from dashboard.state import bind, get_view, set_view, sync_url
from dashboard.style import apply_style
from dashboard.threshold import threshold_panel

LOG = logging.getLogger("calib.ui")


def start(page: str, *, needs_data: bool = True) -> Context:
    """Every page's first line: :func:`page_setup`, then the page's title; a page that
    ``needs_data`` and finds nothing loaded shows its question, "Nothing is loaded yet."
    (with traffic only: that the page needs outcomes, :func:`dashboard.layout.nothing_loaded`)
    and where to load data, and stops there."""
    ctx = page_setup(page)
    st.title(PAGE_TITLES[page])
    if needs_data and not ctx.datasets:
        from calib.present.questions import QUESTIONS

        page_question(QUESTIONS[page], nothing_loaded())
        no_data()
        st.stop()
    return ctx


def pandas_ready() -> None:
    """Return once pandas is wholly imported (importing it if no thread has).

    Plotly takes ``sys.modules["pandas"]`` without the import lock when it builds or
    serialises a figure (to test for a Series), so while another session's thread imports
    pandas on first use it reads a half-made module and raises ``AttributeError``: 13
    tracebacks in the server log of 20 sessions opening one link on a fresh server
    (tests/e2e/test_load.py). ``import pandas`` waits for that import under the lock; every
    page run passes here before it draws anything."""
    import pandas  # noqa: F401  (for plotly; see above)


def page_setup(page: str) -> Context:
    """Start a page: access, view from the URL, data, sidebar. See the package docstring."""
    pandas_ready()
    st.set_page_config(page_title=f"calib · {PAGE_TITLES[page]}", layout="wide")
    apply_style()  # the narrow-screen CSS
    acc = auth.access()
    if not acc.allowed:
        st.stop()
    end_if_link_gone()  # a link revoked since this session opened it: nothing of its data shows
    first_run = VIEW_KEY not in st.session_state
    v = _restore_view()
    if page == "data" and ("page" in st.query_params or SHARED_KEY in st.session_state) and v.page != "data" \
            and not st.session_state.get(PAGE_JUMPED_KEY):
        # a share link opens the entry page with ?page=...: go where it points, once
        st.session_state[PAGE_JUMPED_KEY] = True
        st.switch_page(PAGE_FILES[v.page])
    if v.page != page:
        v = views.with_changes(v, page=page)
        set_view(v)
    sync_samples(v)
    if first_run:
        note_lost_uploads()  # a refresh cleared the uploads the address counts: the Data page says so
    ds = datasets()
    if ds and v.model not in {d.name for d in ds}:
        v = views.with_changes(v, model=ds[0].name)
        set_view(v)
    from calib.present import figures

    colors = figures.palette([d.name for d in ds])
    with st.sidebar:
        close_sidebar_on_page_change(page)  # on a narrow screen, once a page is chosen
        _data_panel(ds, page)
        share_panel(acc, ds)
        _recalibration_panel(ds)
    notes = st.session_state.pop(NOTES_KEY, ())
    for n in notes:
        st.warning(md_escape(n))
    v = get_view()
    sync_url(v)
    count_uploads_in_url()  # a page switch empties the query
    ctx = Context(page=page, view=v, access=acc, datasets=tuple(ds), colors=colors)
    if page not in ("routing", "data"):
        # the Routing page calls the panel itself, with its detail in the main area; the
        # Data page calls it after its load reports, so that a fresh upload's report shows
        # before the routing resamples are drawn (a second on a 14,000-sample folder)
        with st.sidebar:
            threshold_panel(ctx)
    return ctx


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


def _data_panel(ds: list[Dataset], page: str) -> None:
    st.subheader("Data")
    failed = sum(1 for e in entries() if e.error is not None)
    if failed:
        st.caption(f"{failed} input(s) could not be loaded: see the Data page.")
    traffic = sum(1 for e in entries() if e.traffic is not None)
    if traffic:
        st.caption(f"{traffic} traffic input(s) without outcomes: labelled on the Review page.")
    if not ds:
        if not traffic:
            st.caption("No data loaded yet.")
        if page != "data" and not traffic:
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


#: Imported by :func:`warm_up`: what the first upload and the first audit need.
WARM_MODULES = (
    "pandas", "pyarrow.json", "scipy.optimize", "scipy.special", "scipy.fft", "scipy.sparse",
    "calib.readers.stated", "calib.readers.logprobs", "calib.readers.lmeval", "calib.readers.inspect",
    "calib.audit", "calib.compare", "calib.curves", "calib.maps", "calib.routing", "calib.present.figures",
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
