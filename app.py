"""calib dashboard: ``streamlit run app.py``.

The pages are ``pages/*.py``, listed and run by :mod:`dashboard.navigation` (the Data page,
``pages/0_Data.py``, first and at ``/``); every page starts with
:func:`dashboard.page.page_setup`, which restores the view from the URL.

This file is read twice. ``streamlit run`` finds the ``st.App`` at the bottom (Streamlit
looks for one without running the file), imports the file as the module ``app`` and serves
that App: Streamlit's own server with :mod:`calib.hosting.webguard` in front of every request
(security headers, uploads refused for sessions not let in, the proxy policy). The App's
script is this same file, which Streamlit then runs for every session and rerun as
``__main__``: the page. Only that second reading draws anything.
"""

from __future__ import annotations

import streamlit as st

from calib.hosting import webguard

if __name__ == "__main__":
    # a page run (Streamlit executes this file as __main__ for every session and rerun): the
    # page the URL names, among pages/ (the Data page, pages/0_Data.py, by default)
    from dashboard.navigation import run

    run()
else:
    # `streamlit run app.py` finds this st.App and serves it: the same app, with the security
    # headers and the upload guard in front of every request (calib.hosting.webguard).
    from dashboard.chart import cached_assets
    from dashboard.navigation import claim_pages_folder, served_pages

    claim_pages_folder()  # pages/ is listed by st.navigation, from the first session on
    base = st.get_option("server.baseUrlPath")
    app = st.App(__file__, middleware=webguard.middleware(served_pages(base), cached_assets(), base))
