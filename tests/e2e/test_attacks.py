"""Attack cases against the running dashboard, each asserting the safe outcome:

- share tokens that are guessed, truncated, empty, a content hash, or a path
  (``../``, absolute, percent-encoded) all show the same "no longer available" page
  and touch no file;
- XSS payloads in ids, question text, a file name and an edited model name are shown
  as inert text: no dialog, no flag set by a payload, no request leaves 127.0.0.1 —
  on the owner's pages and on a shared link;
- an oversized upload is refused by the browser and, when the browser check is
  bypassed, by the server (HTTP 413); a gzip bomb is refused with a clear message;
- repeated wrong passwords lock the address out, even the right password is then
  refused, while a session unlocked before stays usable;
- a read-only viewer of a link cannot upload, rename, remove, revoke or delete.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import secrets
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store
from dashboard.chart import FRAME_SELECTOR
from tests.e2e.conftest import screenshot, start_server
from tests.e2e.hosting import (
    JUDGE,
    SLOW,
    UNAVAILABLE_TITLE,
    assert_unavailable,
    expected_routing,
    go_to,
    main_area,
    read_rows,
    set_threshold,
    share,
    sidebar,
    threshold,
    upload,
    wait_metrics,
    wait_text,
)
from tests.e2e.screens import settle
from tests.wsclient import Session, password_attempt, password_outcome

VIEW_AT_90 = {"v": 1, "params": {"page": "routing", "lo": "90"},
              "datasets": [{"kind": "file", "filename": "judge.jsonl", "overrides": {}}]}


def make_share(data_dir: Path, data: bytes | None = None, name: str = "judge") -> tuple[str, str, str]:
    """A share written straight into the server's data directory (another process,
    as a second server replica would): (token, owner secret, content hash)."""
    data = JUDGE.read_bytes() if data is None else data
    store = Store.open(data_dir)
    r = store.share([DatasetSpec.from_upload(name, "judge.jsonl", data)], VIEW_AT_90)
    return r.token, r.owner_secret, hashlib.sha256(data).hexdigest()


def tree(path: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``path`` with its size and modification time."""
    return {str(p.relative_to(path)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(path.rglob("*")) if p.is_file() and not p.name.startswith("catalog.sqlite3")}


# ------------------------------------------------------------------ tokens
def test_bad_tokens_show_no_longer_available(server, page, tmp_path):
    token, _, content_hash = make_share(server.data_dir)
    # a canary next to the data directory: a path token must never reach it
    canary = server.data_dir.parent / "canary.txt"
    canary.write_text("untouched")
    before_tree, canary_stat = tree(server.data_dir), canary.stat()
    bad = {
        "guessed": secrets.token_urlsafe(24),
        "truncated": token[:-1],
        "one character changed": token[:-1] + ("A" if token[-1] != "A" else "B"),
        "too long": token + "A",
        "empty": "",
        "content hash": content_hash,
        "parent path": "../" * 6 + "etc/passwd",
        "into the data dir": "../calib-data/catalog.sqlite3",
        "absolute path": str(canary),
        "encoded path": quote("../../canary.txt", safe=""),
        "token then path": token + "/../../canary.txt",
        "blob path": f"blobs/{content_hash[:2]}/{content_hash}",
    }
    # the real token opens (so the page below is the refusal, not a broken app)
    page.goto(f"{server.url}/?share={token}")
    page.get_by_test_id("stHeading").filter(has_text="Routing").first.wait_for(timeout=SLOW)
    for why, value in bad.items():
        page.goto(f"{server.url}/?share={value}")
        try:
            assert_unavailable(page)
        except AssertionError as exc:  # pragma: no cover - names the case that failed
            raise AssertionError(f"{why}: {exc}") from exc
        assert "Routing" not in page.get_by_test_id("stMain").inner_text()
    screenshot(page, "attack_bad_token")
    assert tree(server.data_dir) == before_tree
    assert canary.read_text() == "untouched" and canary.stat().st_mtime_ns == canary_stat.st_mtime_ns
    # the dead-link page offers a way out to an empty dashboard
    page.get_by_role("button", name="Start a new analysis").click()
    page.get_by_test_id("stHeading").filter(has_text="Data").first.wait_for(timeout=SLOW)
    assert "share" not in urlsplit(page.url).query
    page.get_by_test_id("stFileUploader").first.wait_for(timeout=SLOW)


# --------------------------------------------------------------------- XSS
OUTSIDE = "203.0.113.1"  # TEST-NET-3: any request to it is a leak
PAYLOADS = (
    "<script>window.__xss_script=1</script>",
    f'<img src="http://{OUTSIDE}/img.png" onerror="window.__xss_img=1">',
    f"![x](http://{OUTSIDE}/md.png)",
    '<svg onload="window.__xss_svg=1"></svg>',
    "[click](javascript:window.__xss_js=1)",
    f'<iframe src="http://{OUTSIDE}/frame"></iframe>',
    "$\\href{javascript:window.__xss_tex=1}{x}$ :red[red] **bold**",
)
FLAGS = ("__xss_script", "__xss_img", "__xss_svg", "__xss_js", "__xss_tex", "__xss_name", "__xss_model")
FILE_NAME = "<img src=x onerror=window.__xss_name=1>.jsonl"
MODEL_NAME = f"![m](http://{OUTSIDE}/model.png)<script>window.__xss_model=1</script>"


def hostile_jsonl() -> bytes:
    lines = []
    for i in range(400):
        p = PAYLOADS[i % len(PAYLOADS)]
        lines.append({"id": f"{p} #{i}", "question": f"Q{i}: {p}", "confidence": 50 + (i * 7) % 51,
                      "correct": i % 3 != 0})
    out = [json.dumps(obj) for obj in lines]
    # bad lines whose previews (shown in the load report) carry the payloads raw
    out += [f'{{"id": "bad", "confidence": "{p}", "correct": true}}' for p in PAYLOADS]
    out += [f"not json {p}" for p in PAYLOADS]
    return ("\n".join(out) + "\n").encode()


class Watch:
    """Every request and dialog of one page."""

    def __init__(self, page) -> None:
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("dialog", self._dialog)

    def _dialog(self, d) -> None:
        self.dialogs.append(d.message)
        d.dismiss()

    def outside(self) -> list[str]:
        out = []
        for url in self.requests:
            parts = urlsplit(url)
            if parts.scheme in ("data", "blob", "about"):
                continue
            if parts.hostname != "127.0.0.1":
                out.append(url)
        return out


def assert_inert(page, watch: Watch) -> None:
    flags = page.evaluate(f"() => {list(FLAGS)!r}.filter(f => window[f] !== undefined)")
    assert flags == [], f"a payload ran: {flags}"
    assert watch.dialogs == []
    assert watch.outside() == []
    # nothing a payload would create exists in the page
    for selector in (f'img[src*="{OUTSIDE}"]', f'iframe[src*="{OUTSIDE}"]', "a[href^='javascript']",
                     "[onerror]", "[onload]"):
        assert page.locator(selector).count() == 0, selector


def test_xss_payloads_are_inert_text_and_make_no_outside_request(server, browser, page):
    watch = Watch(page)
    page.goto(server.url)
    upload(page, {"name": FILE_NAME, "mimeType": "application/json", "buffer": hostile_jsonl()})
    # the file name is shown as text, character for character
    page.get_by_test_id("stText").filter(has_text=f"uploaded file: {FILE_NAME}").wait_for(timeout=SLOW)
    wait_text(page, "Lines that were not used")
    # the model name is edited to a payload
    name_box = page.get_by_label("Model name").first
    name_box.fill(MODEL_NAME)
    name_box.press("Enter")
    page.wait_for_function(  # the sidebar's model selector has taken the new name
        """() => {
            const box = document.querySelector('[data-testid="stSidebar"] [data-testid="stSelectbox"]');
            if (!box) return false;
            const values = [box.innerText, ...[...box.querySelectorAll('input')].map(i => i.value)];
            return values.some(v => v.includes('203.0.113.1/model'));
        }""", timeout=SLOW)
    assert_inert(page, watch)
    for title in ("Overview", "How the scale was used", "Reliability", "Recalibration", "Routing", "Report"):
        go_to(page, title)
        page.get_by_test_id("stText").filter(has_text=MODEL_NAME).first.wait_for(timeout=SLOW)
        settle(page)  # the figures drawn, the run idle
        assert_inert(page, watch)
    screenshot(page, "attack_xss_report")
    # the same data opened by a reviewer through a share link
    link, _ = share(page)
    ctx = browser.new_context()
    try:
        viewer = ctx.new_page()
        vwatch = Watch(viewer)
        viewer.goto(link)
        viewer.get_by_test_id("stText").filter(has_text=MODEL_NAME).first.wait_for(timeout=SLOW)
        go_to(viewer, "Overview")
        viewer.get_by_test_id("stText").filter(has_text=MODEL_NAME).first.wait_for(timeout=SLOW)
        settle(viewer)
        assert_inert(viewer, vwatch)
    finally:
        ctx.close()
    assert watch.requests, "the recorder saw nothing"


# ------------------------------------------------------------- size limits
@pytest.fixture(scope="module")
def small_server(tmp_path_factory):
    """A server with a 1 MB upload cap and a 1 MB cap on decompressed .gz."""
    s = start_server(tmp_path_factory.mktemp("small"),
                     env={"STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "1", "CALIB_MAX_DECOMPRESSED_MB": "1"})
    yield s
    s.stop()


def test_oversized_upload_is_refused_by_the_browser_and_by_the_server(small_server, page):
    big = b'{"confidence": 80, "correct": true}\n' * 60_000  # 2.1 MB
    assert len(big) > 2 * 1024 * 1024
    page.goto(small_server.url)
    wait_text(page, "1MB per file")
    upload(page, {"name": "big.jsonl", "mimeType": "application/json", "buffer": big}, wait_rows=None)
    wait_text(page, "File must be 1.0MB or smaller.")
    screenshot(page, "attack_oversized_upload")
    assert page.get_by_test_id("stMetric").count() == 0

    # bypass the browser's check: a small pick whose request body is swapped for 2 MB
    statuses: list[int] = []

    def swap(route, request) -> None:
        body = request.post_data_buffer or b""
        boundary = request.headers["content-type"].split("boundary=")[1].encode()
        head, _, _ = body.partition(b"\r\n\r\n")
        route.continue_(post_data=head + b"\r\n\r\n" + big + b"\r\n--" + boundary + b"--\r\n")

    page.route("**/_stcore/upload_file/**", swap)
    page.on("response", lambda r: statuses.append(r.status) if "/_stcore/upload_file/" in r.url else None)
    page.reload()
    wait_text(page, "1MB per file")
    upload(page, {"name": "small.jsonl", "mimeType": "application/json", "buffer": big[:1000]}, wait_rows=None)
    for _ in range(300):
        if statuses:
            break
        page.wait_for_timeout(200)
    assert statuses == [413]
    settle(page)  # the rerun after the refused upload has finished
    assert page.get_by_test_id("stMetric").count() == 0  # nothing was loaded
    assert "Traceback" not in small_server.log()


def test_gzip_bomb_is_refused_with_a_clear_message(small_server, page):
    inflated = b'{"confidence": 80, "correct": true}\n' * 1_000_000  # 36 MB of JSON lines
    bomb = gzip.compress(inflated, compresslevel=9)
    assert len(bomb) < 1024 * 1024 < len(inflated)
    page.goto(small_server.url)
    upload(page, {"name": "bomb.jsonl.gz", "mimeType": "application/gzip", "buffer": bomb}, wait_rows=None)
    err = page.get_by_test_id("stAlertContentError").filter(has_text="decompresses to more than")
    err.wait_for(timeout=SLOW)
    text = err.inner_text()
    assert "bomb.jsonl.gz" in text and "1,048,576 bytes (1 MB)" in text and "refused" in text
    assert "CALIB_MAX_DECOMPRESSED_MB" in text  # the setting that raises the cap
    assert page.get_by_test_id("stMetric").count() == 0
    screenshot(page, "attack_gzip_bomb")


# ---------------------------------------------------------------- password
def test_wrong_passwords_lock_out_even_the_right_one(browser, tmp_path):
    srv = start_server(tmp_path, env={"CALIB_PASSWORD": "correct horse battery", "CALIB_LOGIN_MAX_FAILURES": "3"})
    contexts = []

    def fresh():
        c = browser.new_context()
        contexts.append(c)
        p = c.new_page()
        p.goto(srv.url)
        p.get_by_label("Password", exact=True).wait_for(timeout=SLOW)
        assert p.get_by_test_id("stFileUploader").count() == 0  # nothing behind the gate shows
        return p

    def attempt(p, password: str) -> None:
        box = p.get_by_label("Password", exact=True)
        box.fill(password)
        p.get_by_role("button", name="Unlock").click()

    try:
        early = fresh()
        attempt(early, "correct horse battery")
        early.get_by_test_id("stHeading").filter(has_text="Data").first.wait_for(timeout=SLOW)

        p = fresh()
        attempt(p, "wrong 1")
        wait_text(p, "Wrong password (2 more tries before a pause).")
        attempt(p, "wrong 2")
        wait_text(p, "Wrong password (1 more try before a pause).")
        attempt(p, "wrong 3")
        wait_text(p, "Too many wrong passwords; try again in 15 minutes.")
        attempt(p, "correct horse battery")
        settle(p)  # the attempt's rerun has finished (the lockout text was there before it)
        wait_text(p, "Too many wrong passwords; try again in")
        assert p.get_by_test_id("stFileUploader").count() == 0
        screenshot(p, "attack_password_locked")
        # a new session from the same address is locked out too, right password or not
        q = fresh()
        attempt(q, "correct horse battery")
        wait_text(q, "Too many wrong passwords; try again in")
        assert q.get_by_test_id("stFileUploader").count() == 0
        # the session unlocked before the attack keeps working
        upload(early, str(JUDGE))
        # the password never appears in a URL
        assert all("horse" not in x.url for x in (early, p, q))
    finally:
        for c in contexts:
            c.close()
        srv.stop()
    assert "Traceback" not in srv.log()


# --------------------------------------------------------------- read-only
def test_a_read_only_viewer_cannot_change_revoke_or_delete(server, browser, page):
    rows = read_rows()
    token, owner_secret, _ = make_share(server.data_dir, name="shared judge")
    link = f"{server.url}/?share={token}"
    page.goto(link)
    page.get_by_test_id("stHeading").filter(has_text="Routing").first.wait_for(timeout=SLOW)
    want = expected_routing(rows, 90)
    assert wait_metrics(page, want, scope=main_area(page)) == want
    bar = sidebar(page)
    wait_text(page, "You opened a shared link: read-only")
    assert bar.get_by_role("button", name="Share this view").count() == 0
    # the Data page: no upload, no rename, no removal, no sample picking
    go_to(page, "Data")
    assert page.get_by_test_id("stFileUploaderDropzoneInput").first.is_disabled()
    assert page.get_by_role("button", name="Remove").first.is_disabled()
    assert page.get_by_label("Model name").first.is_disabled()
    # revoke and delete without the owner key, and with a wrong one, are refused
    bar.get_by_text("Owner of this link?").click()
    for key in ("", secrets.token_urlsafe(32)):
        bar.get_by_label("Owner key", exact=True).fill(key)
        bar.get_by_role("button", name="Delete").click()
        wait_text(page, "Only the owner of this link can revoke, delete or change it.")
        bar.get_by_role("button", name="Revoke").click()
        wait_text(page, "Only the owner of this link can revoke, delete or change it.")
    screenshot(page, "attack_read_only_refused")
    # the viewer's own threshold move changes nothing stored: a fresh visitor sees 90
    go_to(page, "Routing")
    set_threshold(page, 95)
    ctx = browser.new_context()
    try:
        other = ctx.new_page()
        other.goto(link)
        other.get_by_test_id("stHeading").filter(has_text="Routing").first.wait_for(timeout=SLOW)
        assert wait_metrics(other, want, scope=main_area(other)) == want
        assert threshold(other) == 90
    finally:
        ctx.close()
    # the form itself works: the owner's key revokes
    if not bar.get_by_label("Owner key", exact=True).is_visible():
        bar.get_by_text("Owner of this link?").click()
    bar.get_by_label("Owner key", exact=True).fill(owner_secret)
    bar.get_by_role("button", name="Revoke").click()
    wait_text(page, "The link is revoked")
    page.goto(link)
    assert_unavailable(page)


# -------------------------------------------------------------- revocation
#: What a dead link's page may draw: its style, title, message and way out; no data of any kind.
DEAD_LINK_KINDS = {"html", "heading", "markdown", "button"}


def test_revoking_a_link_ends_the_sessions_that_have_it_open(server):
    """At the protocol level (tests/wsclient.py): a tab that opened the link before it was
    revoked sees, at its next run of any page, the dead-link page and none of the data."""
    token, secret, _ = make_share(server.data_dir, name="revoked judge")
    with Session(server.url, query_string=f"share={token}") as s:
        opened = s.run()
        assert "Routing" in opened.headings() and opened.has("metric") and "revoked judge" in opened.text()
        s.run(page="Report")
        assert s.page.has("download_button")
        # the owner revokes from another process (as another server replica would)
        assert Store.open(server.data_dir).revoke(token, owner_secret=secret).ok
        assert set(s.pages) >= {"Data", "Overview", "Scale", "Reliability", "Recalibration", "Routing", "Report",
                                "Review"}
        for name in ["Report", *s.pages]:  # the page it is on, then every page
            page = s.run(page=name)
            assert UNAVAILABLE_TITLE in page.headings(), (name, page.headings())
            assert "revoked" in page.text(), name  # told why
            assert set(page.kinds()) <= DEAD_LINK_KINDS, (name, page.kinds())
            assert "revoked judge" not in page.text(), name
        # the way out: an empty dashboard, none of the link's data kept in the session
        s.click("Start a new analysis")
        assert "share" not in s.query_string
        page = s.run(page="Data")
        assert page.has("file_uploader") and not page.has("metric") and "revoked judge" not in page.text()
        assert "No data loaded yet." in page.text()


def test_revoking_a_link_ends_its_threshold_fragment_and_its_report_download(server):
    """A slider move reruns only the threshold's fragment, and the HTML report is built
    when its button is pressed: both after the page ran, so both must find the link gone
    (issue 22). At the protocol level: the fragment's rerun and the deferred download as
    the browser sends them."""
    token, secret, _ = make_share(server.data_dir, name="revoked judge")
    with Session(server.url, query_string=f"share={token}") as s:
        routing = s.run()  # a share link opens on its Routing page
        assert "Routing" in routing.headings() and routing.fragments and routing.has("metric"), routing.kinds()
        fragment = sorted(routing.fragments)[0]
        assert s.run(fragment=fragment).has("metric")  # the fragment alone, link live: the numbers
        s.run(page="Report")
        live = s.download(server.url, "Download the report (HTML)")
        assert b"revoked judge" in live  # the report, while the link is live
        assert Store.open(server.data_dir).revoke(token, owner_secret=secret).ok
        # the tab still shows the Report page: its button, pressed now
        gone = s.download(server.url, "Download the report (HTML)").decode("utf-8")
        assert "revoked judge" not in gone and UNAVAILABLE_TITLE in gone and "revoked" in gone
    token, secret, _ = make_share(server.data_dir, name="revoked judge")
    with Session(server.url, query_string=f"share={token}") as s:
        fragment = sorted(s.run().fragments)[0]
        assert Store.open(server.data_dir).revoke(token, owner_secret=secret).ok
        page = s.run(fragment=fragment)  # a slider moved after the revocation
        assert UNAVAILABLE_TITLE in page.headings(), page.headings()
        assert set(page.kinds()) <= DEAD_LINK_KINDS, page.kinds()
        assert "revoked judge" not in page.text()


# ------------------------------------------------------- response headers
PAGES = ("Overview", "How the scale was used", "Reliability", "Recalibration", "Routing", "Report")
CHARTED = ("Overview", "How the scale was used", "Reliability", "Routing")
#: Records every Content-Security-Policy violation of a page (installed before its scripts run).
CSP_RECORDER = ("window.__cspViolations = [];"
                "document.addEventListener('securitypolicyviolation', e => window.__cspViolations.push("
                "e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));")


def csp_violations(page) -> list[str]:  # type: ignore[no-untyped-def]
    """What :data:`CSP_RECORDER` recorded in the page and in each of its frames (an init
    script runs in every frame: the figures' frames are documents of their own)."""
    out: list[str] = []
    for frame in page.frames:
        try:
            out += frame.evaluate("window.__cspViolations || []")
        except Exception:  # noqa: BLE001 - a frame that went away while being read
            continue
    return out


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()


def assert_hardened(headers: dict[str, str], what: str) -> None:
    assert headers.get("x-content-type-options") == "nosniff", what
    csp = headers.get("content-security-policy", "")
    directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
    assert directives.get("frame-ancestors") == ["'self'"], (what, csp)
    assert directives.get("default-src") == ["'self'"], (what, csp)
    assert "'unsafe-eval'" not in csp and "'unsafe-inline'" not in directives.get("script-src", []), (what, csp)


def test_pages_and_assets_send_nosniff_and_a_csp_from_the_first_request(tmp_path):
    srv = start_server(tmp_path)  # no session has run a page yet: the first answers count
    try:
        status, headers, html = get(srv.url + "/")
        assert status == 200 and b"<script" in html
        assert_hardened(headers, "/")
        assets = sorted(set(re.findall(rb'src="\./(static/js/[^"]+\.js)"', html)))
        assert assets, "no script asset found in index.html"
        for path in ("/" + assets[0].decode(), "/favicon.png", "/_stcore/health", "/_stcore/host-config",
                     "/Routing", "/Reliability"):
            status, headers, _ = get(srv.url + path)
            assert status == 200, path
            assert_hardened(headers, path)
    finally:
        srv.stop()


def test_every_page_renders_with_no_csp_violation(server, page):
    page.add_init_script(CSP_RECORDER)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server.url)
    upload(page, [str(JUDGE), str(JUDGE.with_name("judge_b_synthetic.jsonl"))])
    for title in PAGES:
        go_to(page, title)
        if title in CHARTED:  # the figures drew: a policy that blocked Plotly would leave none
            page.frame_locator(FRAME_SELECTOR).first.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=SLOW)
        settle(page)
        assert page.get_by_test_id("stException").count() == 0, title
        assert csp_violations(page) == [], title
    screenshot(page, "attack_csp_every_page")
    assert not [e for e in errors if "Content Security Policy" in e], errors


def test_another_site_cannot_frame_the_dashboard(server, page):
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "frame-ancestors" in m.text else None)
    frame_html = f'<iframe id="victim" src="{server.url}/" width="800" height="600"></iframe>'
    # control: a page of the app's own origin may frame it, and the frame renders
    page.goto(server.url + "/_stcore/health")
    page.set_content(frame_html)
    page.frame_locator("#victim").get_by_test_id("stApp").wait_for(timeout=SLOW)
    assert refused == []
    # another origin (a blank page, as a site of the attacker's would be) may not
    other = page.context.new_page()
    other.on("console", lambda m: refused.append(m.text) if "frame-ancestors" in m.text else None)
    other.set_content(frame_html)
    # a fixed wait on purpose: it proves the frame does NOT render within 5 s (no condition to await)
    other.wait_for_timeout(5000)
    assert other.frame_locator("#victim").get_by_test_id("stApp").count() == 0
    assert refused, "Chromium did not report the frame-ancestors refusal"


def test_streamlits_cache_statistics_are_not_served_before_the_password(tmp_path):
    """``/_stcore/metrics`` lists every cached computation and its size (what other people
    loaded), and asks the server to measure its caches; no session comes with the request."""
    import urllib.error
    import urllib.request

    srv = start_server(tmp_path, env={"CALIB_PASSWORD": "correct horse battery"})
    try:
        for method, accept in (("GET", "*/*"), ("GET", "application/x-protobuf"), ("OPTIONS", "*/*"),
                               ("HEAD", "*/*")):
            req = urllib.request.Request(srv.url + "/_stcore/metrics", method=method, headers={"Accept": accept})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(req, timeout=10)
            assert refused.value.code == 403, (method, accept)
            body = refused.value.read()
            assert b"# TYPE" not in body and b"cache_" not in body, (method, accept)
            assert_hardened({k.lower(): v for k, v in refused.value.headers.items()}, "/_stcore/metrics")
        status, _, _ = get(srv.url + "/_stcore/health")  # the public routes still answer
        assert status == 200
    finally:
        srv.stop()


# ------------------------------------------------------------- upload gate
def capture_session_ids(page) -> list[str]:
    """Session ids the server announces to this page over its WebSocket (NewSession)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    ids: list[str] = []

    def on_frame(payload) -> None:
        if isinstance(payload, (bytes, bytearray)):
            msg = ForwardMsg()
            msg.ParseFromString(bytes(payload))
            if msg.HasField("new_session"):
                ids.append(msg.new_session.initialize.session_id)

    page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
    return ids


PUT_FROM_PAGE = """async ([url, size]) => {
  const xsrf = document.cookie.split('; ').find(c => c.startsWith('_streamlit_xsrf='));
  const body = new FormData();
  body.append('file', new Blob([new Uint8Array(size).fill(48)]), 'judge.jsonl');
  try {
    const r = await fetch(url, {method: 'PUT', body, credentials: 'same-origin',
                                headers: {'X-Xsrftoken': xsrf ? xsrf.slice('_streamlit_xsrf='.length) : ''}});
    return r.status;
  } catch (e) { return String(e); }
}"""


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_a_locked_session_cannot_push_bytes_into_server_memory(browser, tmp_path):
    srv = start_server(tmp_path, env={"CALIB_PASSWORD": "correct horse battery"})
    ctx = browser.new_context()
    try:
        p = ctx.new_page()
        ids = capture_session_ids(p)
        p.goto(srv.url)
        p.get_by_label("Password", exact=True).wait_for(timeout=SLOW)
        assert ids, "no session id seen on the WebSocket"
        url = f"{srv.url}/_stcore/upload_file/{ids[-1]}/{secrets.token_hex(8)}"
        settle(p)  # the password page drawn and idle before the baseline
        before = peak_rss_mb(srv.proc.pid)
        size = 64 * 1024 * 1024  # under the 200 MB cap: only the gate can refuse it
        status = p.evaluate(PUT_FROM_PAGE, [url, size])
        # a fixed wait on purpose: the server must NOT go on reading the refused bytes after
        # answering; a second of grace lets a late read show in the peak
        p.wait_for_timeout(1000)
        grew = peak_rss_mb(srv.proc.pid) - before
        assert status in (403, "TypeError: Failed to fetch"), status
        assert grew < 16, f"the server's peak memory grew by {grew:.0f} MB for a refused upload"
        small = p.evaluate(PUT_FROM_PAGE, [url, 1000])
        assert small == 403
        # the same request from the same session once the password is given: accepted
        p.get_by_label("Password", exact=True).fill("correct horse battery")
        p.get_by_role("button", name="Unlock").click()
        p.get_by_test_id("stHeading").filter(has_text="Data").first.wait_for(timeout=SLOW)
        assert p.evaluate(PUT_FROM_PAGE, [url, 1000]) == 204
    finally:
        ctx.close()
        srv.stop()
    assert "Traceback" not in srv.log()


def test_a_read_only_viewer_cannot_upload_through_the_endpoint(server, browser):
    token, _, _ = make_share(server.data_dir, name="shared judge")
    ctx = browser.new_context()
    try:
        p = ctx.new_page()
        ids = capture_session_ids(p)
        p.goto(f"{server.url}/?share={token}")
        p.get_by_test_id("stHeading").filter(has_text="Routing").first.wait_for(timeout=SLOW)
        url = f"{server.url}/_stcore/upload_file/{ids[-1]}/{secrets.token_hex(8)}"
        assert p.evaluate(PUT_FROM_PAGE, [url, 1000]) == 403
        # a fresh session without the link is read-write, and may upload
        p.goto(server.url)
        p.get_by_test_id("stFileUploader").first.wait_for(timeout=SLOW)
        url = f"{server.url}/_stcore/upload_file/{ids[-1]}/{secrets.token_hex(8)}"
        assert p.evaluate(PUT_FROM_PAGE, [url, 1000]) == 204
    finally:
        ctx.close()


# ------------------------------------------------- client address, proxies
# At the protocol level (tests/wsclient.py): the headers a proxy writes are sent in the
# WebSocket handshake, where the lock-out reads the address. A browser's extra headers do not
# reach the WebSocket in every Chromium (150 sends none), so they cannot test this.
PROXY = {"X-Forwarded-Proto": "https"}


def test_a_forged_forwarded_for_does_not_dodge_the_lockout(tmp_path):
    srv = start_server(tmp_path, env={"CALIB_PASSWORD": "correct horse battery", "CALIB_LOGIN_MAX_FAILURES": "3"})
    try:
        # every attempt claims another address: without a trusted proxy the header is ignored
        got = [password_attempt(srv.url, f"wrong {i}", {"X-Forwarded-For": f"203.0.113.{10 + i}", **PROXY})
               for i in range(3)]
        assert got == ["wrong", "wrong", "locked"]
        assert password_attempt(srv.url, "correct horse battery", {"X-Forwarded-For": "198.51.100.99"}) == "locked"
    finally:
        srv.stop()
    assert "Traceback" not in srv.log()


def test_behind_a_trusted_proxy_the_right_most_untrusted_hop_is_the_client(tmp_path):
    srv = start_server(tmp_path, env={"CALIB_PASSWORD": "correct horse battery", "CALIB_LOGIN_MAX_FAILURES": "3",
                                      "CALIB_TRUSTED_PROXIES": "127.0.0.1, ::1, 10.0.0.0/8"})
    try:
        # the client writes whatever it likes on the left; the proxies (10.x) append what they saw
        got = [password_attempt(srv.url, f"wrong {i}",
                                {"X-Forwarded-For": f"192.0.2.{i}, 203.0.113.7, 10.1.2.3", **PROXY})
               for i in range(3)]
        assert got == ["wrong", "wrong", "locked"]
        # the same client through one proxy hop fewer, whatever it writes on the left: locked out
        assert password_attempt(srv.url, "correct horse battery",
                                {"X-Forwarded-For": "192.0.2.200, 203.0.113.7", **PROXY}) == "locked"
        # another client behind the same proxy is not locked out
        assert password_attempt(srv.url, "correct horse battery",
                                {"X-Forwarded-For": "203.0.113.8, 10.1.2.3", **PROXY}) == "in"
        # nor is the proxy's own address (a request it makes without the header)
        assert password_attempt(srv.url, "correct horse battery") == "in"
    finally:
        srv.stop()
    assert "Traceback" not in srv.log()


def test_a_clear_cache_message_does_not_reset_the_lockout(tmp_path):
    """Any client may send ``clear_cache`` (Streamlit's menu item), before the password and
    with no page code in the way: the lock-out must not live in what it empties."""
    srv = start_server(tmp_path, env={"CALIB_PASSWORD": "correct horse battery", "CALIB_LOGIN_MAX_FAILURES": "3"})
    try:
        with Session(srv.url) as s:
            s.run()
            got = [password_outcome(s.submit({"Password": f"wrong {i}"}, "Unlock")) for i in range(3)]
            assert got == ["wrong", "wrong", "locked"]
            s.clear_cache()
            # the next run on the same socket is handled after the clear_cache: it has happened
            assert password_outcome(s.run()) == "form"
            assert password_outcome(s.submit({"Password": "correct horse battery"}, "Unlock")) == "locked"
        assert password_attempt(srv.url, "correct horse battery") == "locked"
    finally:
        srv.stop()
    assert "Traceback" not in srv.log()


# --------------------------------------------------------- listen address
def listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on ``port`` (read from /proc/net/tcp{,6})."""
    import ipaddress
    import struct

    found: set[str] = set()
    for name, width in (("tcp", 4), ("tcp6", 16)):
        path = Path(f"/proc/net/{name}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr_hex, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(addr_hex)
            # the kernel prints each 32-bit word in host (little-endian) order
            raw = b"".join(struct.pack(">I", struct.unpack("<I", raw[i:i + 4])[0]) for i in range(0, width, 4))
            found.add(str(ipaddress.ip_address(raw)))
    return found


def test_streamlit_run_app_py_listens_on_loopback_only(tmp_path):
    """`streamlit run app.py` as the README says, with no address flag: .streamlit/config.toml binds 127.0.0.1."""
    import subprocess
    import sys
    import time
    import urllib.request

    from tests.e2e.conftest import ROOT, free_port

    port = free_port()
    log = tmp_path / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CALIB_", "STREAMLIT_SERVER_ADDRESS"))}
    env["CALIB_DATA_DIR"] = str(tmp_path / "data")
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", f"--server.port={port}",
                                 "--server.fileWatcherType=none"], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.3)
        else:
            raise AssertionError(log.read_text())
        assert listening_addresses(port) == {"127.0.0.1"}, log.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
