"""Streamlit's front-end files answered from memory (calib.hosting.static_assets), alone and
inside the server's guard (calib.hosting.webguard.GuardMiddleware)."""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path

import pytest

from calib.hosting.access import SessionRegistry
from calib.hosting.page_head import streamlit_index_html, streamlit_static_js
from calib.hosting.static_assets import CACHE_CONTROL, StaticAssets
from calib.hosting.webguard import GuardMiddleware, security_headers
from tests.test_webguard import run

JS = b"export const a = 1;\n" * 200  # compressible, above the gzip threshold


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "index.A1.js").write_bytes(JS)
    (tmp_path / "js" / "tiny.B2.js").write_bytes(b"x")
    (tmp_path / "media").mkdir()
    (tmp_path / "media" / "font.C3.woff2").write_bytes(bytes(range(256)) * 8)
    (tmp_path.parent / "secret.txt").write_text("not served")
    return tmp_path


def test_a_known_file_is_sent_whole_with_its_type_cache_and_etag(root: Path) -> None:
    files = StaticAssets(root, "/static/")
    status, headers, body = files.response("/static/js/index.A1.js", "GET", {})
    h = dict(headers)
    assert status == 200 and body == JS
    assert h[b"content-type"] == b"text/javascript; charset=utf-8"
    assert h[b"cache-control"] == CACHE_CONTROL == b"public, immutable, max-age=31536000"
    assert h[b"etag"] == b'"' + hashlib.sha256(JS).hexdigest()[:32].encode() + b'"'
    assert h[b"content-length"] == str(len(JS)).encode() and h[b"vary"] == b"Accept-Encoding"
    assert b"content-encoding" not in h
    font = dict(files.response("/static/media/font.C3.woff2", "GET", {b"accept-encoding": b"gzip"})[1])
    assert font[b"content-type"] == b"font/woff2" and b"content-encoding" not in font and b"vary" not in font


def test_gzip_when_the_browser_accepts_it_and_only_then(root: Path) -> None:
    files = StaticAssets(root, "/static/")
    for accept in (b"gzip, deflate, br, zstd", b"br;q=1.0, gzip;q=0.8", b"*"):
        status, headers, body = files.response("/static/js/index.A1.js", "GET", {b"accept-encoding": accept})
        h = dict(headers)
        assert h[b"content-encoding"] == b"gzip" and gzip.decompress(body) == JS, accept
        assert h[b"content-length"] == str(len(body)).encode() and len(body) < len(JS) / 5
    for accept in (b"", b"br", b"identity", b"gzip;q=0", b"deflate, gzip;q=0.0"):
        body = files.response("/static/js/index.A1.js", "GET", {b"accept-encoding": accept})[2]
        assert body == JS, accept
    # a one-byte file is never worth a header
    assert b"content-encoding" not in dict(files.response("/static/js/tiny.B2.js", "GET",
                                                          {b"accept-encoding": b"gzip"})[1])


def test_not_modified_head_and_what_goes_on_to_streamlit(root: Path) -> None:
    files = StaticAssets(root, "/static/")
    etag = dict(files.response("/static/js/index.A1.js", "GET", {})[1])[b"etag"]
    for inm in (etag, b"W/" + etag, b'"other", ' + etag):
        status, headers, body = files.response("/static/js/index.A1.js", "GET", {b"if-none-match": inm})
        assert status == 304 and body == b"" and b"content-length" not in dict(headers), inm
    assert files.response("/static/js/index.A1.js", "GET", {b"if-none-match": b'"other"'})[0] == 200
    status, headers, body = files.response("/static/js/index.A1.js", "HEAD", {})
    assert status == 200 and body == b"" and dict(headers)[b"content-length"] == str(len(JS)).encode()
    # not ours: other methods, ranges, unknown files, anything outside the folder
    assert files.response("/static/js/index.A1.js", "POST", {}) is None
    assert files.response("/static/js/index.A1.js", "GET", {b"range": b"bytes=0-1"}) is None
    for path in ("/static/js/none.js", "/static/js", "/static/", "/static/../secret.txt", "/static/js/../../secret.txt",
                 "/static/%2e%2e/secret.txt", "/static//js/index.A1.js", "/js/index.A1.js", "/static/js/index.A1.js/"):
        assert path not in files and files.response(path, "GET", {}) is None, path


def test_a_file_added_after_the_start_or_a_link_out_of_the_folder_is_not_served(root: Path, tmp_path: Path) -> None:
    (root / "js" / "out.js").symlink_to(root.parent / "secret.txt")
    files = StaticAssets(root, "/app/static/")
    (root / "js" / "late.D4.js").write_bytes(b"late")
    assert "/app/static/js/index.A1.js" in files and "/static/js/index.A1.js" not in files
    assert files.response("/app/static/js/late.D4.js", "GET", {}) is None
    assert files.response("/app/static/js/out.js", "GET", {}) is None
    assert StaticAssets(None).response("/static/js/index.A1.js", "GET", {}) is None
    assert StaticAssets(root / "missing").response("/static/js/index.A1.js", "GET", {}) is None


def test_a_versioned_asset_is_served_at_exactly_its_address(root: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.js"
    bundle.write_bytes(JS)
    files = StaticAssets(root, "/static/", [("/app/component/x/bundle.js", "v=1", bundle),
                                            ("/app/component/x/gone.js", "v=1", tmp_path / "gone.js")])
    status, headers, body = files.response("/app/component/x/bundle.js", "GET", {b"accept-encoding": b"gzip"}, "v=1")
    h = dict(headers)
    assert status == 200 and gzip.decompress(body) == JS and h[b"cache-control"] == CACHE_CONTROL
    for query in ("", "v=2", "v=1&x=2"):  # another version, or none: Streamlit's to answer
        assert files.response("/app/component/x/bundle.js", "GET", {}, query) is None, query
    assert "/app/component/x/gone.js" not in files  # a file that is not there is never promised
    assert files.response("/static/js/index.A1.js", "GET", {}, "any=query")[2] == JS  # hashed names: any query


def test_every_file_streamlits_page_loads_is_known() -> None:
    js = streamlit_static_js()
    assert js is not None
    files = StaticAssets(js.parent, "/static/")
    wanted = re.findall(r'(?:href|src)="\./(static/[\w./-]+)"', streamlit_index_html().decode())
    assert len(wanted) > 40 and all("/" + w in files for w in wanted)
    assert sum(1 for p in js.parent.rglob("*") if p.is_file()) == len(files._files)


def _call(app, path: str, headers: list[tuple[bytes, bytes]], method: str = "GET"):  # type: ignore[no-untyped-def]
    sent: list[dict] = []

    async def receive():  # type: ignore[no-untyped-def]
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(msg):  # type: ignore[no-untyped-def]
        sent.append(msg)

    run(app({"type": "http", "method": method, "path": path, "headers": headers}, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


def test_the_guard_answers_them_with_its_security_headers_and_passes_the_rest(root: Path) -> None:
    seen: list[str] = []

    async def streamlit(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    guard = GuardMiddleware(streamlit, sessions=SessionRegistry(), headers=security_headers(["'sha256-x'"]),
                            assets=StaticAssets(root, "/static/"))
    status, headers, body = _call(guard, "/static/js/index.A1.js", [(b"accept-encoding", b"gzip")])
    assert status == 200 and gzip.decompress(body) == JS and seen == []
    assert b"frame-ancestors 'self'" in headers[b"content-security-policy"]
    assert headers[b"x-content-type-options"] == b"nosniff"
    for path, head in (("/static/js/none.js", []), ("/static/js/index.A1.js", [(b"range", b"bytes=0-3")])):
        assert _call(guard, path, head)[0] == 404
    assert seen == ["/static/js/none.js", "/static/js/index.A1.js"]
