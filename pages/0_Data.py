"""Data: load data (upload files or a folder, or pick samples), see what was kept and
dropped line by line, and override the detected fields and scale.

The entry page (``/``): :mod:`dashboard.navigation` lists it first and as the default.
Every page starts with :func:`dashboard.page.start`, which restores the view from the URL.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from calib import settings
from calib.hosting import view as views
from calib.loading import field_names
from calib.present import traffic as traffic_words
from calib.present.questions import QUESTIONS, data_answer
from calib.present.tables import load_lines, scale_words
from dashboard.context import Context
from dashboard.entries import (
    SAMPLE_DIR,
    Entry,
    Overrides,
    add_entry,
    available_samples,
    entries,
    lost_uploads_notice,
    new_upload_entry,
    remove_entry,
    rename_entry,
    set_overrides,
    sync_samples,
)
from dashboard.keys import UPLOAD_COUNTER_KEY
from dashboard.layout import link, load_report_frames, md_escape, page_question, show_error
from dashboard.page import start, warm_up
from dashboard.state import bind, get_view
from dashboard.threshold import threshold_panel

UPLOAD_TYPES = ["jsonl", "ndjson", "json", "gz", "eval", "csv", "parquet", "db"]  # db: MLflow's mlflow.db


def ingest_uploads(files: list[tuple[str, bytes]], *, folder: bool, folder_name: str = "") -> list[Entry]:
    """Turn uploaded files into loaded entries (one per file, or one for a folder).

    Returns the entries added; load problems are kept on the entry (``entry.error``),
    never raised.
    """
    if not files:
        return []
    if folder:
        return [add_entry(new_upload_entry(files, folder=True, folder_name=folder_name))]
    return [add_entry(new_upload_entry([f])) for f in files]


def _folder_name(files: list) -> str:
    """Name of an uploaded folder: the common first path part of its files, if any."""
    parts = {f.name.replace("\\", "/").split("/")[0] for f in files if "/" in f.name.replace("\\", "/")}
    return parts.pop() if len(parts) == 1 else "lm-eval folder"


def upload_section(ctx: Context) -> None:
    round_ = st.session_state.get(UPLOAD_COUNTER_KEY, 0)
    disabled = ctx.access.read_only
    c1, c2 = st.columns(2)
    with c1:
        files = st.file_uploader(
            "Upload evaluation files (one file per model or judge)", type=UPLOAD_TYPES,
            accept_multiple_files=True, key=f"upload_files_{round_}", disabled=disabled,
            help="JSONL of stated confidences, option log-probs, lm-eval samples, Inspect .eval/.json logs, "
                 "or a count table (CSV/Parquet with value, n, correct).",
        )
    with c2:
        folder = st.file_uploader(
            "Or upload an lm-eval output folder (read as one dataset, tasks as groups)",
            accept_multiple_files="directory", key=f"upload_folder_{round_}", disabled=disabled,
        )
    added: list[Entry] = []
    if files:
        added += ingest_uploads([(f.name, f.getvalue()) for f in files], folder=False)
    if folder:
        added += ingest_uploads([(f.name, f.getvalue()) for f in folder], folder=True,
                                folder_name=_folder_name(folder))
    if added:
        # a fresh (empty) uploader next run: what was uploaded now lives in the list below
        st.session_state[UPLOAD_COUNTER_KEY] = round_ + 1
        st.rerun()


def sample_section(ctx: Context) -> None:
    samples = available_samples()
    if not samples:
        st.caption("No sample files in sample_data/.")
        return
    st.multiselect(
        "Or pick sample files (synthetic data, see sample_data/README.md)", samples,
        **bind("samples", "w_samples", to_widget=list, from_widget=tuple),
        disabled=ctx.access.read_only,
    )


def _on_name(entry_id: str, key: str) -> None:
    rename_entry(entry_id, str(st.session_state[key]))


def _on_override(entry_id: str, prefix: str) -> None:
    s = st.session_state
    ov = Overrides(
        confidence_key=s.get(f"{prefix}conf") or None,
        outcome_key=s.get(f"{prefix}outcome") or None,
        group_key=s.get(f"{prefix}group") or None,
        cluster_key=s.get(f"{prefix}cluster") or None,
        scale=s.get(f"{prefix}scale", "auto"),
        custom_scale=s.get(f"{prefix}custom", ""),
        normalisation=s.get(f"{prefix}norm", "none"),
        variant=s.get(f"{prefix}variant", "acc"),
    )
    set_overrides(entry_id, ov)


def overrides_section(entry: Entry, idx: int, read_only: bool) -> None:
    ds = entry.dataset
    prefix = f"ov{idx}_"
    ov = entry.overrides
    detected = dict(ds.report.fields) if ds is not None else {}
    keys: list[str] = []
    if entry.kind == "file":
        keys = field_names(entry.files[0][1])
    elif entry.kind == "sample" and (SAMPLE_DIR / entry.filename).is_file():
        keys = field_names((SAMPLE_DIR / entry.filename).read_bytes()[:262144])
    fmt = ds.report.format if ds is not None else ""
    cb = {"on_change": _on_override, "args": (entry.id, prefix), "disabled": read_only}

    def field_select(label: str, name: str, current: str | None, role: str, extra: tuple[str, ...] = (),
                     help: str | None = None) -> None:
        opts = [""] + [k for k in keys if k] + list(extra)
        if current and current not in opts:
            opts.append(current)
        st.session_state[f"{prefix}{name}"] = current or ""
        auto = detected.get(role)
        st.selectbox(
            label, opts, key=f"{prefix}{name}",
            format_func=lambda k, auto=auto: f"(detected: {auto})" if k == "" and auto else ("(auto)" if k == "" else k),
            help=help, **cb,
        )

    c1, c2, c3, c7 = st.columns(4)
    with c1:
        field_select("Confidence field", "conf", ov.confidence_key, "confidence")
    with c2:
        field_select("Outcome field", "outcome", ov.outcome_key, "outcome")
    with c3:
        field_select("Group field", "group", ov.group_key, "group")
    with c7:
        field_select("Cluster field", "cluster", ov.cluster_key, "cluster", extra=("none",),
                     help="Rows with the same value are one item judged several times: intervals resample these "
                          "clusters. auto: Inspect epochs and ids on several rows; none: rows are independent.")
    c4, c5, c6 = st.columns(3)
    with c4:
        st.session_state[f"{prefix}scale"] = ov.scale
        st.selectbox("Scale", settings.SCALE_CHOICES, key=f"{prefix}scale", **cb,
                     help="auto: detected from the values (see the load report). mixed: the values mix "
                          "probabilities and a larger scale (0.85 next to 85): up to 1 is a probability.")
    with c5:
        if ov.scale == "custom":
            st.session_state[f"{prefix}custom"] = ov.custom_scale
            st.text_input("Custom scale LO,HI", key=f"{prefix}custom", placeholder="0,100", **cb)
    with c6:
        if fmt in ("logprobs", "lmeval"):
            if fmt == "lmeval":
                st.session_state[f"{prefix}variant"] = ov.variant
                st.selectbox("lm-eval variant", settings.VARIANTS, key=f"{prefix}variant", **cb)
            else:
                st.session_state[f"{prefix}norm"] = ov.normalisation
                st.selectbox("Length normalisation", settings.NORMALISATIONS, key=f"{prefix}norm", **cb)


def _on_mode(entry_id: str, key: str) -> None:
    ov = next((e.overrides for e in entries() if e.id == entry_id), Overrides())
    set_overrides(entry_id, replace(ov, mode=str(st.session_state[key])))


def mode_choice(entry: Entry, idx: int, read_only: bool) -> None:
    """The person's choice of what the file holds: outcomes (an audit) or traffic (issue 24)."""
    key = f"mode_{idx}"
    st.session_state[key] = entry.overrides.mode
    st.radio(traffic_words.MODE_QUESTION, list(traffic_words.MODES), format_func=traffic_words.MODES.__getitem__,
             key=key, horizontal=True, on_change=_on_mode, args=(entry.id, key), disabled=read_only,
             help=traffic_words.MODE_HELP)


def traffic_report(entry: Entry) -> None:
    """The load report of a file read as traffic: kept, dropped (each line's reason), strata."""
    from calib.runs.traffic import strata

    tr = entry.traffic
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Items kept", f"{len(tr):,}")
    m2.metric("Lines dropped", f"{traffic_words.dropped_count(tr.messages):,}")
    m3.metric("Format", "traffic (no outcomes)")
    m4.metric("Distinct stated values", f"{np.unique(tr.stated).size:,}")
    for line in traffic_words.load_lines(len(tr), traffic_words.dropped_count(tr.messages), tr.top, len(strata(tr))):
        st.text(line)
    if tr.messages:
        st.text("\n".join(tr.messages))  # file names and values are user text: plain text only
    st.info(traffic_words.TRAFFIC_NEXT, icon=":material/rate_review:")


def entry_section(entry: Entry, idx: int, read_only: bool) -> None:
    with st.container(border=True):
        c1, c2 = st.columns([4, 1])
        with c1:
            key = f"name_{idx}"
            st.session_state[key] = entry.name
            st.text_input("Model name", key=key, on_change=_on_name, args=(entry.id, key),
                          max_chars=views.MAX_TEXT, disabled=read_only)
            st.text(f"{'sample' if entry.kind == 'sample' else 'uploaded'} {entry.kind if entry.kind == 'folder' else 'file'}: "
                    f"{entry.filename}")
        with c2:
            st.button("Remove", key=f"remove_{idx}", on_click=remove_entry, args=(entry.id,),
                      disabled=read_only)
        mode_choice(entry, idx, read_only)
        if entry.error is not None:
            show_error(entry.error)
        if entry.traffic is not None:
            traffic_report(entry)
        ds = entry.dataset
        if ds is not None:
            r = ds.report
            m1, m2, m3, m4 = st.columns(4)
            m1.metric("Rows kept", f"{r.kept:,}")
            m2.metric("Lines dropped", f"{r.dropped:,}")
            m3.metric("Format", r.format)
            m4.metric("Distinct stated values", f"{ds.table.pooled_over_groups().cells:,}")
            for w in r.warnings:  # an override that contradicts the data (calib.scale.rescale_warnings)
                st.warning(md_escape(scale_words(w)))
            # plain text, not a table: a session's first data grid costs the browser half a
            # second of script loading, on the page every upload lands on. Each fact once:
            # read/kept, the scale, the fields, then the reader's other notes as one block
            lines = load_lines(r, ds.table.scale)
            for line in lines[:3]:
                st.text(line)
            if lines[3:]:
                st.text("\n".join(lines[3:]))
            if r.dropped:
                reasons, issues = load_report_frames(ds)
                st.markdown("**Dropped by reason**")
                st.dataframe(reasons, hide_index=True, width="content")
                st.markdown("**Lines that were not used** (first examples of each reason)")
                st.dataframe(issues, hide_index=True)
        with st.expander("Override detected fields and scale", expanded=entry.error is not None):
            overrides_section(entry, idx, read_only)


def main() -> None:
    ctx = start("data", needs_data=False)  # the page where data is loaded
    top = st.container()  # the question and its answer, once this run's uploads and samples are in
    st.caption(
        "Upload what your evaluation wrote: a JSONL file with a stated confidence and an outcome per line, "
        "option log-probs, lm-evaluation-harness samples, or Inspect AI logs. Each file is one model or judge. "
        "Bad lines are reported below and never block the valid ones."
    )
    notice = lost_uploads_notice()
    if notice:
        st.warning(notice, icon=":material/info:")
    upload_section(ctx)
    sample_section(ctx)
    # the sample selection may have changed in this run's callback
    sync_samples(get_view())
    items = entries()
    kept = [e.dataset.report for e in items if e.dataset is not None]
    traffic = [e.traffic for e in items if e.traffic is not None]
    with top:
        page_question(QUESTIONS["data"], data_answer(
            sum(r.kept for r in kept) + sum(len(t) for t in traffic),
            sum(r.dropped for r in kept) + sum(traffic_words.dropped_count(t.messages) for t in traffic),
            len(kept) + len(traffic),
            sum(1 for e in items if e.error is not None)) if items else
            "Nothing yet: upload a file or pick a sample below.")
    if not items:
        st.info("No data loaded yet. Upload a file or pick a sample above.")
        return
    st.subheader("Loaded")
    for idx, entry in enumerate(items):
        entry_section(entry, idx, ctx.access.read_only)
    link("overview", "Go to the overview", icon=":material/arrow_forward:")
    # last: the load reports above are on screen while the routing resamples are drawn
    with st.sidebar:
        threshold_panel(ctx)


main()
# after the page is drawn: the first upload then finds pandas, scipy and the readers loaded
warm_up()
