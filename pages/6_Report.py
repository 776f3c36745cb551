"""Report: the whole audit as one self-contained HTML file, and the metrics as JSON."""

from __future__ import annotations

import streamlit as st

from calib.errors import CalibError
from calib.hosting.shares import UNAVAILABLE_TITLE
from calib.present import figures, html_report, questions
from calib.present import text_report as report
from dashboard.layout import page_question, safe_filename, show_error
from dashboard.page import start
from dashboard.report import session_report_parts
from dashboard.runtime import link_ended, session_link
from dashboard.sharing import decision_first
from dashboard.summary import settings_text

ctx = start("report")
QUESTION = questions.QUESTIONS["report"]

page_question(QUESTION, questions.report_answer([d.name for d in ctx.datasets]))
decision_first(ctx)  # a share's reviewer reads the owner's decision first
v = ctx.view
st.caption(
    "The HTML report holds, for every loaded judge, its audit, what its figures mean, its threshold decision "
    "with intervals and costs, and its routing, with the settings chosen here (binning, resamples, map, "
    "threshold). Its figures stay interactive and it opens offline: plotly.js is inside the file, once. "
    "The JSON holds the metrics in the schema of the command line's audit."
)

try:
    parts = session_report_parts(ctx)
except CalibError as exc:
    show_error(exc)
    st.stop()

settings = settings_text(v)
st.text(settings)
names = ", ".join(d.name for d in ctx.datasets)
st.text(f"models: {names}")


link = session_link()


def build_html() -> bytes:
    """Built on click, on a server thread, maybe long after the page ran: a share link
    revoked since then gets the dead-link words, not the report (issue 22)."""
    ended = link_ended(link)
    if ended is not None:
        return html_report.render(UNAVAILABLE_TITLE, [html_report.Paragraph(ended)]).encode("utf-8")
    return html_report.audit_report(
        parts.models, comparison=parts.comparison, comparison_figures=parts.comparison_figures,
        settings=settings, config=figures.CONFIG,
    ).encode("utf-8")


# on_click="ignore": a download changes nothing on the page, and the rerun a click would start
# replaces the deferred HTML file while it is fetched (a second click then fails for 5 s)
c1, c2 = st.columns(2)
with c1:
    st.download_button("Download the report (HTML)", data=build_html, mime="text/html",
                       file_name="calib_audit.html", key="dl_html", type="primary",
                       on_click="ignore")
with c2:
    # exactly what `calib audit FILE --json` prints for each file
    focus_audit = next(a for a in parts.audits if a.name == ctx.focus.name)
    st.download_button("Download the metrics (JSON)", data=report.to_json(focus_audit), mime="application/json",
                       file_name=safe_filename(ctx.focus.name, "_metrics.json"), key="dl_json", on_click="ignore",
                       help="The focused model's audit, exactly as the command line's audit writes it as JSON.")
    if len(parts.audits) > 1:
        st.download_button(
            "Download every model's metrics (JSON lines)",
            data="".join(report.to_json(a, indent=None) + "\n" for a in parts.audits),
            mime="application/x-ndjson", file_name="calib_metrics.jsonl", key="dl_jsonl", on_click="ignore",
        )

with st.expander("What is in the report"):
    for m in parts.models:
        st.text(f"{m.name}: {len(m.headline)} headline figures, {len(m.figures)} figures, "
                f"{len(m.tables)} tables, {len(m.sections)} extra sections")
