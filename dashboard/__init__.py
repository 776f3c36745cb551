"""The Streamlit face of calib: what every page shares.

Every page (``pages/*.py``) starts with ``ctx = dashboard.page.start("<page>")``
(``needs_data=False`` on the Data and Review pages, which load their own), which
sets the title and, with nothing loaded, says so and stops the page; before that,
:func:`dashboard.page.page_setup`

1. runs the access hook (:func:`dashboard.auth.access`: the place hosting adds a
   password gate, a login, read-only links and ``?share=TOKEN`` loading);
2. restores the view from ``st.query_params`` on the first run of a session, so a
   deep link to any page works even when it is the first script run;
3. loads the sample files the view names (cached by content hash + options);
4. renders the sidebar: the data selector, the share panel and the recalibration panel;
5. writes the view back to the URL.

The review-threshold panel is a fragment (:func:`dashboard.threshold.threshold_panel`):
moving the slider reruns only it, not the page. Pages call it where the routing detail goes;
the Routing page draws what a threshold move leaves alone (the decision card, the judges,
the two-threshold and chain sections) outside it, so a key press resends only the rest.

State lives in ``st.session_state`` under keys that are not widget keys
(:mod:`dashboard.keys`): widget state is per page in Streamlit's automatic multipage
mode and is dropped on a page switch, so each widget is seeded from the view before it
renders and writes back through its ``on_change`` callback (:func:`dashboard.state.bind`).

The rooms: :mod:`~dashboard.keys` (session-state keys), :mod:`~dashboard.layout` (labels
and small layout helpers), :mod:`~dashboard.context` (what a page gets),
:mod:`~dashboard.runtime` (process-wide hosting state), :mod:`~dashboard.auth` (access
and the password form), :mod:`~dashboard.state` (the view and its URL binding),
:mod:`~dashboard.entries` (the session's inputs), :mod:`~dashboard.sharing` (share links),
:mod:`~dashboard.results` (the typed, cached engine calls), :mod:`~dashboard.threshold`
(the threshold widgets and fragment), :mod:`~dashboard.routing_detail` (the Routing
page's main area), :mod:`~dashboard.summary` and :mod:`~dashboard.report` (what the
Overview and the report print), :mod:`~dashboard.page` (``start``).

Safety: user-supplied text (file names, model names, ids, question text) is shown
only through escaping elements (``st.text``, ``st.code``, ``st.dataframe``,
selectbox options, text inputs). Labels passed to markdown-rendering elements
(``st.markdown``, ``st.caption``, ``st.metric``, ``st.info``, widget labels) are
fixed strings written in this package, and messages carrying user text go through
:func:`dashboard.layout.md_escape` first.

This ``__init__`` imports nothing: Streamlit serves ``app.py`` before its runtime
exists, and the modules here create caches that must not be made before it does.
"""
