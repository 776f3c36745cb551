"""A fresh server whose first visitor opens a page other than the Data page (a share link
on /Routing, a bookmark) lists the pages by their names, as one opened at "/" does.

Streamlit marks an app with a ``pages/`` folder as a version-1 multipage app when its
server starts, and until some run has called ``st.navigation`` it runs a page's file
directly, listing the entry script as "app" beside the nine pages. Opened first at
/Routing, a fresh server showed "app" in the sidebar for every session until someone
opened "/" (``app.py`` now claims the folder at the server's start).
"""

from __future__ import annotations

from dashboard.navigation import served_pages
from tests.e2e.conftest import start_server

PAGES = ["Data", "Overview", "Scale", "Reliability", "Recalibration", "Routing", "Report", "Drift", "Review"]
TIMEOUT_MS = 120_000


def nav(page) -> list[str]:  # type: ignore[no-untyped-def]
    return [t.strip() for t in page.locator("[data-testid=stSidebarNav] a").all_inner_texts()]


def test_a_page_opened_first_on_a_fresh_server_lists_the_pages_by_name(browser, tmp_path) -> None:  # type: ignore[no-untyped-def]
    srv = start_server(tmp_path)
    try:
        for path, title in (("/Routing", "Routing"), ("/Overview?sample=judge_a_synthetic.jsonl", "Overview"),
                            ("/", "Data")):
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
            try:
                page = ctx.new_page()
                page.goto(srv.url + path)
                page.locator("[data-testid=stMain] h1").first.wait_for(timeout=TIMEOUT_MS)
                page.locator("[data-testid=stSidebarNav] a").first.wait_for(timeout=TIMEOUT_MS)
                assert nav(page) == PAGES, path
                assert title in page.title(), path
                # the addresses the server's guard gives a head to are the pages' own
                hrefs = page.eval_on_selector_all("[data-testid=stSidebarNav] a",
                                                  "els => els.map(e => new URL(e.href).pathname)")
                assert sorted(hrefs) == sorted(["/", *served_pages("")]), hrefs
            finally:
                ctx.close()
    finally:
        srv.stop()
    assert "Traceback" not in srv.log()
