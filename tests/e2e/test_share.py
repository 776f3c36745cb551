"""Share links in a real browser: upload, set a threshold, Share, open the link in a
fresh browser context (another person), see the same numbers and threshold; revoke,
and the link shows the "no longer available" page.

The routing numbers are checked against a per-row count written in the test
(:func:`hosting.expected_routing`), the headline figures against the owner's page.
"""

from __future__ import annotations

import re
import shutil

from tests.e2e.conftest import screenshot
from tests.e2e.hosting import (
    JUDGE,
    ROUTING_LABELS,
    SLOW,
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
    # the app's address, the page it was shared from + a 32-character token: no file name,
    # hash or owner key
    assert re.fullmatch(re.escape(server.url) + r"/Routing\?share=[A-Za-z0-9_-]{32}", link), link
    assert key not in link
    screenshot(page, "share_owner")

    # a reviewer opens the link in a fresh browser context: same page, threshold and numbers
    viewer_ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        viewer = viewer_ctx.new_page()
        viewer.goto(link)
        viewer.get_by_test_id("stHeading").filter(has_text="Routing").first.wait_for(timeout=SLOW)
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


def test_server_killed_while_sharing_then_restarted(browser, tmp_path):
    """SIGKILL the real server while it writes a share (as soon as the upload's
    temporary blob file appears in the data directory), restart it on the same data
    directory: the catalog is sound, holds only complete datasets, the dead writer's
    leftovers are removed, and the link handed out before the kill still opens with
    the same numbers."""
    import hashlib
    import json
    import os
    import signal
    import threading
    import time

    from tests.e2e.conftest import start_server
    from tests.test_store_crash import assert_consistent

    rows = read_rows()
    data_dir = tmp_path / "data"
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = start_server(tmp_path / "first", data_dir=data_dir)
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        page.goto(first.url)
        upload(page, str(JUDGE))
        go_to(page, "Routing")
        set_threshold(page, 90)
        want = expected_routing(rows, 90)
        assert wait_metrics(page, want, scope=main_area(page)) == want
        link, _ = share(page)

        # a large second upload, so that writing its blob takes a while
        victim = tmp_path / "victim.jsonl"
        filler = "x" * 10_000
        victim.write_text("".join(
            json.dumps({"id": f"v{i}", "question": filler, "confidence": 50 + i % 51, "correct": i % 2 == 0}) + "\n"
            for i in range(1500)))
        digest = hashlib.sha256(victim.read_bytes()).hexdigest()
        go_to(page, "Data")
        upload(page, str(victim))
        page.get_by_test_id("stText").filter(has_text="uploaded file: victim.jsonl").wait_for(timeout=SLOW)

        folder = data_dir / "blobs" / digest[:2]
        seen: list[str] = []

        def kill_when_writing() -> None:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and first.proc.poll() is None:
                try:
                    names = [n for n in os.listdir(folder) if n.startswith(".tmp-")]
                except FileNotFoundError:
                    names = []
                if names:
                    os.kill(first.proc.pid, signal.SIGKILL)
                    seen.extend(names)
                    return

        watcher = threading.Thread(target=kill_when_writing)
        watcher.start()
        sidebar(page).get_by_role("button", name="Share this view").click()
        watcher.join(120)
        assert seen, "the server never started writing the blob"
        first.proc.wait(timeout=30)
        assert first.proc.returncode == -signal.SIGKILL
    finally:
        ctx.close()
        first.stop()

    # as the crash left it: sound, and only the earlier, complete share is listed
    assert assert_consistent(data_dir) == 1
    # the restarted server tidies up and serves the earlier link
    second = start_server(tmp_path / "second", data_dir=data_dir)
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        page.goto(second.url + "/?" + link.split("?", 1)[1])  # same token, the new server's port
        page.get_by_test_id("stHeading").filter(has_text="Routing").first.wait_for(timeout=SLOW)
        assert wait_metrics(page, want, scope=main_area(page)) == want
        assert threshold(page) == 90
        screenshot(page, "share_after_crash")
    finally:
        ctx.close()
        second.stop()
    assert list((data_dir / "blobs").glob("*/.tmp-*")) == []
    assert assert_consistent(data_dir) == 1
    assert "Traceback" not in second.log()
