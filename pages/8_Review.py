"""Review: reviewers of a share link label the review queue and the audit sample (issue 12)."""

from __future__ import annotations

import streamlit as st

from dashboard.layout import PAGE_TITLES
from dashboard.page import page_setup
from dashboard.review import review_page

ctx = page_setup("review")
st.title(PAGE_TITLES["review"])
review_page(ctx)
