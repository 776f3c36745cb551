"""The dashboard's pages and their order: every ``pages/N_Name.py``, the Data page
(``pages/0_Data.py``) first and the default (served at ``/``), each titled by its name.

Streamlit names the entry script's page after its file, so a ``pages/`` folder behind
``app.py`` lists the Data page as "app". ``app.py`` hands the pages to ``st.navigation``
instead (Streamlit then ignores its own reading of ``pages/``): the same files, the same
URL paths (``/Overview``, ``/Routing``... from the file names), the entry page called
"Data". The folder is read by glob, so a new page is one new file.

On a narrow screen the sidebar closes once a page is chosen (:func:`close_sidebar_on_page_change`:
Streamlit does it only for browsers that call themselves phones).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard.style import NARROW_PX, SIDEBAR_CLOSER_KEY

PAGES_DIR = Path(__file__).resolve().parents[1] / "pages"
#: The sidebar closer's files (a 0 px frame: ``index.html`` and ``closer.js``).
SIDEBAR_FRAME_DIR = Path(__file__).resolve().parent / "sidebar_frame"

#: The entry page, relative to the app root (what st.switch_page / st.page_link take).
ENTRY = "pages/0_Data.py"


def page_files() -> list[Path]:
    """The page scripts in their order (``N_`` prefix), the entry page first."""
    def order(p: Path) -> tuple[int, str]:
        head = p.stem.split("_", 1)[0]
        return (int(head) if head.isdigit() else 10**6, p.name)

    return sorted((p for p in PAGES_DIR.glob("*.py") if not p.name.startswith(("_", "."))), key=order)


def url_path(page: Path) -> str:
    """The page's address under the app's root: its file name less the order prefix
    (``pages/5_Routing.py`` -> ``Routing``), as Streamlit would infer it; given to
    ``st.Page`` explicitly so that the server's guard knows the same paths
    (:func:`served_pages`)."""
    return page.stem.split("_", 1)[-1]


def served_pages(base_url_path: str) -> frozenset[str]:
    """The request paths of every page but the entry page (``/Routing``...; under
    Streamlit's ``server.baseUrlPath``), for the server's guard: only these get the head
    tags that open a page sooner (:mod:`calib.hosting.page_head`)."""
    from calib.hosting.page_head import page_paths

    return page_paths((url_path(p) for p in page_files() if p.name != Path(ENTRY).name), base_url_path)


def claim_pages_folder() -> None:
    """Tell Streamlit, when its server starts, that this app lists its pages itself.

    With a ``pages/`` folder beside the entry script, Streamlit marks the app as a
    version-1 multipage app (``PagesManager.uses_pages_directory``) and, until some run
    has called ``st.navigation``, runs the page the address names straight from its file
    and lists the entry script as "app" beside the pages. A fresh server first opened on
    ``/Routing`` (a share link, a bookmark) showed that list to every session until
    someone opened ``/`` (tests/e2e/test_navigation.py). ``st.navigation`` clears the flag
    on its first call; this does the same before the first session, through the same
    attribute (Streamlit 1.67 has no setting for it)."""
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False


def run() -> None:
    """Register the pages and run the one the URL names (the entry page by default)."""
    pages = [
        st.Page(str(p), title=url_path(p).replace("_", " "), url_path=url_path(p), default=p.name == Path(ENTRY).name)
        for p in page_files()
    ]
    st.navigation(pages).run()


@functools.cache
def _closer() -> Any:
    """The closer frame, declared on its first use (inside a page's run)."""
    import streamlit.components.v1 as components

    return components.declare_component("sidebar", path=str(SIDEBAR_FRAME_DIR))


def close_sidebar_on_page_change(page: str) -> None:
    """Close the sidebar after a page was chosen, on a screen at most
    :data:`~dashboard.style.NARROW_PX` wide (where the open sidebar covers most of the page).

    Streamlit closes it after a tap on a page link only for a browser whose user agent says
    "mobile"; a narrow window of any other browser kept it open over 77% of a 390 px screen
    after every tap. A 0 px frame (``sidebar_frame/closer.js``), drawn in the sidebar on every
    run with the page's name, clicks the sidebar's collapse button when the name differs
    from the one this tab showed last and the window is narrow; a rerun of the same page (a
    sidebar widget changed) leaves the sidebar as it is. The frame sends nothing back."""
    _closer()(page=page, narrow=NARROW_PX, key=SIDEBAR_CLOSER_KEY, default=None, height=0)
