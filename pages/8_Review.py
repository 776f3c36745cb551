"""Review: reviewers of a share link label the review queue and the audit sample (issue 12)."""

from __future__ import annotations

from dashboard.page import start
from dashboard.review import review_page

ctx = start("review", needs_data=False)  # a reviewer's link loads its data inside the page
review_page(ctx)
