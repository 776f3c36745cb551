"""The dashboard's own CSS: what a page needs to read on a phone (390 px wide).

Contract
--------
:func:`apply_style` adds one fixed ``<style>`` element (:data:`CSS`) to the page; it is
called once per run by :func:`dashboard.page.page_setup`. The CSS is a constant of this
module: no user text, no value from the session or the URL ever enters it, so it cannot
carry markup of anyone's making.

What it does, below :data:`NARROW_PX` of viewport width (Streamlit already stacks
``st.columns`` there):

- the main block keeps a small side padding and the page title shrinks, so that the
  page's question and its answer (``.st-key-page-question``) sit in the first screen;
- headline metrics (``st.metric``) shrink a little and their labels wrap instead of being cut;
- long words (file names, model names, URLs) break instead of pushing the page sideways;
- figures, tables and code blocks never grow past the main block (a table scrolls inside
  its own frame, as on a laptop).

At every width: the sidebar closer's 0 px frame
(:func:`dashboard.navigation.close_sidebar_on_page_change`) takes no room in the sidebar;
figures are as wide as their container (Plotly's autosize, the legend is
below the plot: :func:`calib.present.plot_base._layout`).
"""

from __future__ import annotations

import streamlit as st

#: Viewport width (CSS px) under which the narrow-screen rules apply; Streamlit stacks
#: columns under 640 px.
NARROW_PX = 640
#: The key of the sidebar closer's element (:func:`dashboard.navigation.close_sidebar_on_page_change`).
SIDEBAR_CLOSER_KEY = "calib-sidebar-closer"

CSS = f"""<style>
.st-key-{SIDEBAR_CLOSER_KEY} {{ position: absolute; width: 0; height: 0; overflow: hidden; }}
@media (max-width: {NARROW_PX}px) {{
  [data-testid="stMainBlockContainer"] {{
    padding-left: 0.9rem; padding-right: 0.9rem; padding-top: 3.2rem;
  }}
  [data-testid="stMainBlockContainer"] h1 {{ font-size: 1.85rem; padding-bottom: 0.4rem; }}
  [data-testid="stMainBlockContainer"] h2 {{ font-size: 1.4rem; }}
  .st-key-page-question h3 {{ font-size: 1.25rem; }}
  [data-testid="stMetricValue"] {{ font-size: 1.75rem; }}
  [data-testid="stMetricLabel"] p {{ white-space: normal; overflow-wrap: anywhere; }}
  [data-testid="stMain"] p, [data-testid="stMain"] li, [data-testid="stCaptionContainer"],
  [data-testid="stText"], [data-testid="stAlert"] {{ overflow-wrap: anywhere; }}
  [data-testid="stText"] {{ white-space: pre-wrap; }}
  [data-testid="stCustomComponentV1"], [data-testid="stDataFrame"], [data-testid="stTable"],
  [data-testid="stCode"], [data-testid="stExpander"] {{ max-width: 100%; }}
  [data-testid="stTable"], [data-testid="stCode"] {{ overflow-x: auto; }}
}}
</style>"""


def apply_style() -> None:
    """Add :data:`CSS` to the page (a style-only ``st.html`` takes no room on the page)."""
    st.html(CSS)
