"""The ``st.session_state`` keys the dashboard keeps its state under (none is a widget key).

Widget state is per page in Streamlit's multipage mode and dropped on a page switch;
these keys survive it. Tests and ``bench/`` read some of them.
"""

from __future__ import annotations

VIEW_KEY = "calib_view"                   # the current calib.hosting.view.View
ENTRIES_KEY = "calib_entries"             # the session's inputs (dashboard.entries.Entry)
NOTES_KEY = "calib_link_notes"            # what a copied link got wrong, shown once
UPLOAD_COUNTER_KEY = "calib_upload_round"  # bumped to give the uploaders a fresh key
FIGURES_KEY = "calib_figures"             # figures reused across threshold moves
#: Where the last threshold-panel run leaves its duration (seconds), read by
#: ``bench/bench_dashboard.py``.
FRAGMENT_TIMING_KEY = "calib_threshold_seconds"
PAGE_JUMPED_KEY = "calib_page_jumped"     # a share link's ?page= was followed once
LOST_UPLOADS_KEY = "calib_lost_uploads"   # uploads the address counted, gone with a refresh

# the hosting layer's
UNLOCKED_KEY = "calib_unlocked"          # this session gave the right password
SHARED_KEY = "calib_shared_token"        # the share link this session was opened with
OWNER_KEY = "calib_owner"                # token -> owner secret of the links this session made
LAST_SHARE_KEY = "calib_last_share"      # the link made last in this session (shown in the sidebar)
OWNED_OPEN_KEY = "calib_owned_open"      # the logged-in owner asked for the list of their links
SHARE_NOTICE_KEY = "calib_share_notice"  # (ok, message) of the last share / revoke / delete
BUDGET_KEY = "calib_budget"              # this session's calib.hosting.budget.SessionBudget
USER_KEY = "calib_user"                  # the logged-in user's e-mail (OIDC), for owner actions
