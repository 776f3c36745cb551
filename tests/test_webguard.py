"""The web server's guard (calib.hosting.webguard) and the plain-Python parts it relies on
(calib.hosting.access: trusted proxies, the client address, the upload registry), driven as
ASGI calls; tests/e2e/test_attacks.py drives the same through a real server and browser."""

from __future__ import annotations

import asyncio
import concurrent.futures
import ipaddress
import random
import re

import pytest

from calib.errors import CalibError
from calib.hosting.access import SessionRegistry, TrustedProxies, client_address
from calib.hosting.page_head import streamlit_index_html
from calib.hosting.webguard import (
    GuardMiddleware,
    _apply_proxy_policy,
    content_security_policy,
    inline_script_hashes,
    security_headers,
)

PROXIES = TrustedProxies.parse("127.0.0.1 ::1, 10.0.0.0/8")


# ------------------------------------------------------------ trusted proxies
def test_trusted_proxies_parse_addresses_and_networks():
    assert PROXIES.contains("127.0.0.1") and PROXIES.contains("::1") and PROXIES.contains("10.200.3.4")
    assert PROXIES.contains("::ffff:10.0.0.1")  # IPv4-mapped, as a dual-stack socket reports it
    assert not PROXIES.contains("11.0.0.1") and not PROXIES.contains("127.0.0.2")
    assert not PROXIES.contains("not an address") and not PROXIES.contains("")
    assert TrustedProxies.parse("").networks == () and not TrustedProxies.parse(" ").contains("127.0.0.1")
    assert TrustedProxies.from_env({}).networks == ()


@pytest.mark.parametrize("bad", ["10.0.0.0/33", "localhost", "10.0.0.*", "1.2.3.4/8/8"])
def test_trusted_proxies_refuse_what_is_not_an_address(bad):
    with pytest.raises(CalibError, match="CALIB_TRUSTED_PROXIES"):
        TrustedProxies.parse(f"127.0.0.1, {bad}")


@pytest.mark.parametrize("peer, header, want", [
    ("203.0.113.5", "1.2.3.4", "203.0.113.5"),             # not a proxy: the header is ignored
    ("127.0.0.1", None, "127.0.0.1"),                       # a proxy that sent no header
    ("127.0.0.1", "198.51.100.1", "198.51.100.1"),
    ("127.0.0.1", "6.6.6.6, 198.51.100.1", "198.51.100.1"),  # the left part is the client's own text
    ("127.0.0.1", "6.6.6.6, 198.51.100.1, 10.1.1.1", "198.51.100.1"),  # a chain of proxies
    ("10.9.9.9", "10.1.1.1, 10.2.2.2", "10.1.1.1"),        # all trusted: the left-most
    ("127.0.0.1", "garbage, 198.51.100.1", "198.51.100.1"),
    ("127.0.0.1", "198.51.100.1, garbage", "127.0.0.1"),    # junk appended: the walk stops at the proxy
    ("127.0.0.1", "[2001:db8::1]:443", "2001:db8::1"),
    ("127.0.0.1", "198.51.100.1:5555", "198.51.100.1"),
    ("127.0.0.1", " , ", "127.0.0.1"),
])
def test_client_address_is_the_right_most_untrusted_hop(peer, header, want):
    assert client_address(peer, header, PROXIES) == want


def test_client_address_brute_force_against_a_model():
    """Random chains of trusted and untrusted hops: the answer is the last untrusted hop
    before the trusted tail (or the peer when it is not trusted)."""
    rng = random.Random(7)
    for _ in range(2000):
        hops = [str(ipaddress.ip_address(rng.choice([0x0A000000, 0xCB007100]) + rng.randrange(256)))
                for _ in range(rng.randrange(0, 5))]
        peer = rng.choice(["127.0.0.1", "203.0.113.9"])
        got = client_address(peer, ", ".join(hops), PROXIES)
        if not PROXIES.contains(peer):
            assert got == peer
            continue
        untrusted = [h for h in hops if not PROXIES.contains(h)]
        if untrusted:
            tail = hops[len(hops) - 1 - hops[::-1].index(untrusted[-1]):]
            assert got == tail[0] == untrusted[-1]
        else:
            assert got == (hops[0] if hops else peer)


# ----------------------------------------------------------------- registry
def test_session_registry_adds_discards_and_stays_bounded():
    r = SessionRegistry(max_size=3)
    for s in "abcd":
        r.add(s)
    assert len(r) == 3 and not r.contains("a") and r.contains("d")
    r.add("b")  # seen again: now the newest
    r.add("e")
    assert r.contains("b") and not r.contains("c")
    r.discard("b")
    r.discard("never")
    assert not r.contains("b")


# --------------------------------------------------------------- middleware
class Backend:
    """An ASGI app that records whether it ran and whether it read the body."""

    def __init__(self) -> None:
        self.called = False
        self.read = 0

    async def __call__(self, scope, receive, send) -> None:
        self.called = True
        msg = await receive()
        self.read += len(msg.get("body", b""))
        await send({"type": "http.response.start", "status": 204,
                    "headers": [(b"x-content-type-options", b"sniff-away"), (b"vary", b"Origin")]})
        await send({"type": "http.response.body", "body": b""})


def run(coro) -> None:
    """Run a coroutine on a fresh event loop in its own thread: the browser tests' Playwright
    (sync API) keeps a loop running in the main thread, where ``asyncio.run`` is refused."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coro).result()


def call(app, method: str, path: str, body: bytes = b"x" * 1000, typ: str = "http") -> tuple[int, dict, int]:
    received: list[dict] = []
    reads = 0

    async def receive():
        nonlocal reads
        reads += 1
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(msg):
        received.append(msg)

    run(app({"type": typ, "method": method, "path": path, "headers": []}, receive, send))
    start = next(m for m in received if m["type"] == "http.response.start")
    return start["status"], dict(start["headers"]), reads


def guard(*allowed: str) -> tuple[GuardMiddleware, Backend]:
    reg = SessionRegistry()
    for s in allowed:
        reg.add(s)
    backend = Backend()
    return GuardMiddleware(backend, sessions=reg, headers=security_headers(["'sha256-x'"])), backend


@pytest.mark.parametrize("path", ["/_stcore/upload_file/S1/f1", "/base/path/_stcore/upload_file/S1/f1",
                                  "/_stcore/upload_file/S1/f1/"])
def test_an_upload_for_an_unregistered_session_is_refused_before_its_body_is_read(path):
    app, backend = guard("other")
    status, headers, reads = call(app, "PUT", path)
    assert status == 403 and reads == 0 and not backend.called
    assert headers[b"x-content-type-options"] == b"nosniff"


def test_a_registered_session_uploads_and_other_requests_pass():
    app, backend = guard("S1")
    status, headers, _ = call(app, "PUT", "/_stcore/upload_file/S1/f1")
    assert status == 204 and backend.called and backend.read == 1000
    # Streamlit's own header is replaced, not duplicated; the others are kept
    assert headers[b"x-content-type-options"] == b"nosniff" and headers[b"vary"] == b"Origin"
    for method, path in [("GET", "/"), ("GET", "/static/js/index.js"), ("OPTIONS", "/_stcore/upload_file/S2/f"),
                         ("PUT", "/_stcore/other/S2/f")]:
        app, backend = guard()
        status, headers, _ = call(app, method, path)
        assert status == 204 and backend.called, (method, path)
        assert b"frame-ancestors 'self'" in headers[b"content-security-policy"]


@pytest.mark.parametrize("path", ["/_stcore/metrics", "/_stcore/metrics/", "/base/path/_stcore/metrics"])
@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "POST"])
def test_streamlits_cache_statistics_are_refused_to_everyone(method, path):
    app, backend = guard("S1")  # a session let in changes nothing: the request names none
    status, headers, reads = call(app, method, path)
    assert status == 403 and reads == 0 and not backend.called
    assert headers[b"x-content-type-options"] == b"nosniff"
    # routes that only look alike still pass
    for other in ("/_stcore/metrics-x", "/_stcore/metricsx", "/metrics", "/Metrics"):
        app, backend = guard()
        assert call(app, method, other)[0] == 204 and backend.called, other


def test_websockets_and_lifespan_pass_untouched():
    seen = []

    async def backend(scope, receive, send):
        seen.append(scope["type"])

    app = GuardMiddleware(backend, sessions=SessionRegistry(), headers=[])
    for typ in ("websocket", "lifespan"):
        run(app({"type": typ, "path": "/_stcore/upload_file/S/f", "method": "PUT"}, None, None))
    assert seen == ["websocket", "lifespan"]


def test_the_policy_allows_only_streamlits_own_inline_script_and_the_page_heads():
    from calib.hosting import page_head
    from calib.hosting.webguard import page_script_hashes, script_hash

    html = streamlit_index_html()
    hashes = inline_script_hashes(html)
    assert len(hashes) == html.count(b"<script>") >= 1  # Streamlit 1.67 has one
    head = page_head.build()
    assert len(head.scripts) == 2  # the app's root for the connection; the element chunks' head start
    allowed = page_script_hashes()
    assert allowed == hashes + [script_hash(t) for t in head.scripts]
    # each hash is the one a browser computes over the script's text as the page carries it
    page = page_head.with_head(html, head)
    carried = re.findall(rb"<script(?: type=\"module\")?>(.*?)</script>", page, re.S)
    assert sorted(_sha(c) for c in carried) == sorted(allowed)
    csp = content_security_policy(allowed)
    directives = {d.split()[0]: d.split()[1:] for d in csp.split("; ")}
    assert directives["frame-ancestors"] == ["'self'"] and directives["object-src"] == ["'none'"]
    assert "'unsafe-inline'" not in directives["script-src"] and "'unsafe-eval'" not in csp
    assert inline_script_hashes(b"<script>a</script><script src=x></script>") == [
        "'sha256-ypeBEsobvcr6wjGzmiPcTaeG7/gUfE5yuYB3ha/uSLs='"]
    assert security_headers() == security_headers(allowed)


def _sha(script: bytes) -> str:
    import base64
    import hashlib

    return "'sha256-" + base64.b64encode(hashlib.sha256(script).digest()).decode() + "'"


# ------------------------------------------------------------ proxy policy
def scope_with(peer: str, *headers: tuple[bytes, bytes]) -> dict:
    return {"type": "http", "client": (peer, 5000), "headers": list(headers), "scheme": "http"}


def test_proxy_policy_ignores_forwarded_for_from_an_untrusted_peer():
    for peer in ("127.0.0.1", "203.0.113.1"):
        s = scope_with(peer, (b"x-forwarded-for", b"6.6.6.6"), (b"x-forwarded-proto", b"https"))
        _apply_proxy_policy(s, TrustedProxies())
        assert s["client"] == (peer, 5000) and s["scheme"] == "http"


def test_proxy_policy_behind_a_trusted_proxy():
    s = scope_with("127.0.0.1", (b"x-forwarded-for", b"6.6.6.6, 198.51.100.4"), (b"x-forwarded-proto", b"https"))
    _apply_proxy_policy(s, PROXIES)
    assert s["client"][0] == "198.51.100.4" and s["scheme"] == "https"
    ws = scope_with("::1", (b"x-forwarded-for", b"198.51.100.4"), (b"x-forwarded-proto", b"https"))
    ws["type"] = "websocket"
    _apply_proxy_policy(ws, PROXIES)
    assert ws["client"][0] == "198.51.100.4" and ws["scheme"] == "wss"


def test_a_bad_trusted_proxy_setting_stops_the_server_naming_it(monkeypatch):
    from calib.hosting import webguard

    monkeypatch.setenv("CALIB_TRUSTED_PROXIES", "10.0.0.0/33")
    with pytest.raises(SystemExit, match="CALIB_TRUSTED_PROXIES: '10.0.0.0/33' is not an IP address"):
        webguard.middleware()
    monkeypatch.setenv("CALIB_TRUSTED_PROXIES", "")
    (mw,) = webguard.middleware()
    assert mw.cls is GuardMiddleware
