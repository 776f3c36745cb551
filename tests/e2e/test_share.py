"""Share links in a real browser: upload, set a threshold, Share, open the link in a
fresh browser context (another person), see the same numbers and threshold; revoke,
and the link shows the "no longer available" page.

The routing numbers are checked against a per-row count written in the test
(:func:`hosting.expected_routing`), the headline figures against the owner's page.
"""

from __future__ import annotations

import shutil

from tests.e2e.conftest import screenshot
from tests.e2e.hosting import (
    JUDGE,
    ROUTING_LABELS,
    assert_unavailable,
    expected_routing,
    go_to,
    main_area,
    metrics,
    read_rows,
    set_threshold,
    share,
    sidebar,
    threshold,
    upload,
    wait_metrics,
    wait_text,
)

HEADLINE = ("Accuracy", "Mean stated confidence", "ECE", "Brier score", "Brier of the constant", "AUROC")


def test_share_round_trip_then_revoke(server, browser, page, tmp_path):
    rows = read_rows()
    path = tmp_path / "judge_for_review.jsonl"  # a name of its own: the upload, not the sample
    shutil.copy(JUDGE, path)

    # the owner uploads, looks at the overview, then sets the threshold on the Routing page
    page.goto(server.url)
    upload(page, str(path))
    go_to(page, "Overview")
    owner_headline = metrics(page, HEADLINE, scope=main_area(page))
    accuracy = sum(r.correct for r in rows) / len(rows)
    assert owner_headline["Accuracy"] == f"{100 * accuracy:.1f}%"
    go_to(page, "Routing")
    set_threshold(page, 90)
    want = expected_routing(rows, 90)
    assert want != expected_routing(rows, 80)  # the move changes the numbers
    assert wait_metrics(page, want, scope=main_area(page)) == want
    link, key = share(page)
    assert "share=" in link and key not in link and "judge" not in link
    screenshot(page, "share_owner")

    # a reviewer opens the link in a fresh browser context: same page, threshold and numbers
    viewer_ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        viewer = viewer_ctx.new_page()
        viewer.goto(link)
        viewer.get_by_test_id("stHeading").filter(has_text="Routing").first.wait_for(timeout=90_000)
        assert wait_metrics(viewer, want, scope=main_area(viewer)) == want
        assert threshold(viewer) == 90
        wait_text(viewer, "You opened a shared link: read-only")
        screenshot(viewer, "share_viewer_routing")
        # the reviewer may move the threshold in their own view...
        set_threshold(viewer, 95)
        want95 = expected_routing(rows, 95)
        assert wait_metrics(viewer, want95, scope=main_area(viewer)) == want95
        # ...and sees the owner's headline figures
        go_to(viewer, "Overview")
        assert wait_metrics(viewer, owner_headline, scope=main_area(viewer)) == owner_headline
        # the owner's view is untouched by the reviewer
        assert metrics(page, ROUTING_LABELS, scope=main_area(page)) == want
    finally:
        viewer_ctx.close()

    # the owner revokes; a fresh context now gets the dead-link page
    sidebar(page).get_by_role("button", name="Revoke").click()
    wait_text(page, "The link is revoked")
    dead_ctx = browser.new_context()
    try:
        dead = dead_ctx.new_page()
        dead.goto(link)
        assert_unavailable(dead)
        screenshot(dead, "share_revoked")
    finally:
        dead_ctx.close()
