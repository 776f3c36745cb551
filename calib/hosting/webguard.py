"""HTTP hardening of the dashboard's web server: an ASGI middleware (plain Python, no
Streamlit import) that ``app.py`` hands to ``st.App``.

Streamlit 1.67 serves through Starlette on uvicorn and has no setting for response
headers or for who may upload; ``st.App(..., middleware=[...])`` is its supported way to
put code in front of every request, including the HTML page, the static assets and
the upload endpoint, from the server's start (before any page script has run).

What it does
------------
- Every HTTP response gets :func:`security_headers`: ``X-Content-Type-Options:
  nosniff``, a Content-Security-Policy (:func:`content_security_policy`, with
  ``frame-ancestors 'self'``), ``X-Frame-Options: SAMEORIGIN`` for old browsers and
  ``Referrer-Policy: same-origin`` (a ``?share=TOKEN`` address never leaves in a
  Referer header).
- ``PUT /_stcore/upload_file/<session_id>/<file_id>`` is refused with 403, before a
  byte of the body is read, unless the page has registered that session in
  :data:`calib.hosting.access.UPLOAD_SESSIONS` (it does once the session is allowed in and
  not read-only: past the password or login, or on a server with neither).
- ``/_stcore/metrics`` (Streamlit's cache statistics) is refused with 403, whatever the
  method: it names every cached computation with its hits and sizes (what other people
  loaded and computed), makes the server measure its caches on request, and the page does
  not use it. No session comes with the request, so there is nothing to check a password
  against: it is not served at all.
- The HTML page of every page but the Data page (Streamlit serves the same ``index.html``
  at each page's address; the app's pages are named by ``app.py``) gets
  :func:`calib.hosting.page_head.build` in its head: the app's root for Streamlit's
  connection (no failed look-up under the page's path first), the element chunks loaded
  from the start instead of on their first element, a prefetch of the figures' plotly.js
  and module preloads. The Data page is served as Streamlit writes it.
- Streamlit's front-end files (``/static/…``) and the app's versioned assets (the figures'
  plotly.js) are answered from memory, gzip-compressed when the browser accepts it, kept
  by browsers (:mod:`calib.hosting.static_assets`).
- Every connection sends at once (``TCP_NODELAY``, :mod:`calib.hosting.nodelay`):
  Streamlit's listening socket left Nagle's algorithm on, which held each response's body
  for the browser's delayed acknowledgement, 40 ms a request on a kept-alive connection.
- ``GET /_calib/ready`` (any base URL path) is the load balancer's readiness probe
  (:func:`readiness`): 200 ``ready`` when the share store's catalog answers a query, 503
  when it does not or once the server has begun to stop (:mod:`calib.hosting.shutdown`).
  Liveness is Streamlit's own ``/_stcore/health`` (200 ``ok`` while the server runs). Both
  answer anyone and say nothing else.
- The client address: :func:`install_proxy_policy` makes uvicorn's proxy-header
  handling follow ``CALIB_TRUSTED_PROXIES`` (:func:`calib.hosting.access.client_address`)
  instead of uvicorn's default, which believes ``X-Forwarded-For`` from any loopback
  peer.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import hashlib
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any

from calib.errors import CalibError
from calib.hosting import nodelay, page_head
from calib.hosting.access import UPLOAD_SESSIONS, SessionRegistry, TrustedProxies, client_address
from calib.hosting.shutdown import WRITES
from calib.hosting.static_assets import StaticAssets

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: ``/<base>/_stcore/upload_file/<session_id>/<file_id>`` (any base URL path).
_UPLOAD_PATH = re.compile(r"/_stcore/upload_file/(?P<session>[^/]+)/[^/]+/?$")
#: Streamlit routes this app never serves (any base URL path): its cache statistics.
_NOT_SERVED = re.compile(r"/_stcore/metrics/?$")
#: The readiness probe (any base URL path).
_READY = re.compile(r"/_calib/ready/?$")
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.S)


def inline_script_hashes(index_html: bytes) -> list[str]:
    """CSP source expressions (``'sha256-…'``) of the inline ``<script>`` blocks of
    Streamlit's ``index.html`` (it has one: ``window.prerenderReady = false``), so the
    policy allows exactly those and no other inline script."""
    return [_sha256_source(m.group(1)) for m in _INLINE_SCRIPT.finditer(index_html)]


def content_security_policy(script_hashes: Iterable[str] = ()) -> str:
    """The policy: everything from the app's own origin, nothing from elsewhere.

    What Streamlit's frontend needs, found by loading every page in Chromium with a
    ``securitypolicyviolation`` listener (tests/e2e/test_attacks.py): its scripts and
    the hashed inline one; ``'wasm-unsafe-eval'`` (it compiles WebAssembly; this allows
    no JavaScript ``eval``); inline styles (its CSS-in-JS writes ``<style>`` elements);
    ``data:``/``blob:`` images and fonts; the WebSocket to the same origin (``'self'``
    covers ``ws:``/``wss:`` of the same host in CSP level 3 browsers); ``blob:``
    workers and downloads.
    """
    return "; ".join([
        "default-src 'self'",
        "script-src 'self' 'wasm-unsafe-eval' " + " ".join(script_hashes),
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "frame-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    ])


def script_hash(text: str) -> str:
    """The CSP source expression (``'sha256-…'``) that allows the inline script ``text``."""
    return _sha256_source(text.encode())


def _sha256_source(script: bytes) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script).digest()).decode() + "'"


def page_script_hashes(head: page_head.PageHead | None = None) -> list[str]:
    """The hashes of every inline script a page of the app may carry: Streamlit's own and
    the page head's (``head``, default :func:`calib.hosting.page_head.build`)."""
    scripts = (page_head.build() if head is None else head).scripts
    return inline_script_hashes(page_head.streamlit_index_html()) + [script_hash(t) for t in scripts]


def security_headers(script_hashes: Iterable[str] | None = None) -> list[tuple[bytes, bytes]]:
    """The headers added to every HTTP response (raw ASGI form); the policy allows the
    inline scripts of ``script_hashes`` (default :func:`page_script_hashes`)."""
    hashes = page_script_hashes() if script_hashes is None else list(script_hashes)
    return [
        (b"x-content-type-options", b"nosniff"),
        (b"content-security-policy", content_security_policy(hashes).encode()),
        (b"x-frame-options", b"SAMEORIGIN"),
        (b"referrer-policy", b"same-origin"),
    ]


class GuardMiddleware:
    """Adds the security headers, refuses uploads of sessions not allowed in and does not
    serve Streamlit's cache statistics.

    Parameters
    ----------
    app:
        The ASGI application behind (Streamlit's Starlette app).
    sessions:
        The sessions that may upload (default :data:`calib.hosting.access.UPLOAD_SESSIONS`).
    headers:
        The headers to add (default :func:`security_headers`).
    pages:
        The request paths of the pages whose HTML gets the head tags
        (:func:`calib.hosting.page_head.page_paths`; default none).
    head:
        Those tags (default :func:`calib.hosting.page_head.build`: the installed Streamlit's).
    assets:
        Streamlit's front-end files and the app's versioned assets, answered from memory
        (:mod:`calib.hosting.static_assets`; default none: Streamlit serves them).
    ready:
        What the readiness probe checks: raises when this server should get no traffic
        (default :func:`store_ready`).
    """

    def __init__(self, app: ASGIApp, *, sessions: SessionRegistry | None = None,
                 headers: list[tuple[bytes, bytes]] | None = None, pages: Iterable[str] = (),
                 head: page_head.PageHead | None = None, assets: StaticAssets | None = None,
                 ready: Callable[[], None] | None = None) -> None:
        self.app = app
        self.sessions = UPLOAD_SESSIONS if sessions is None else sessions
        self.headers = security_headers() if headers is None else headers
        self._names = {k for k, _ in self.headers}
        self.pages = frozenset(pages)
        self.head = page_head.build() if head is None else head
        self.assets = assets
        self.ready = store_ready if ready is None else ready

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return

        path = str(scope.get("path", ""))

        async def send_with_headers(message: Message) -> None:
            if message.get("type") == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in self._names]
                message["headers"] = kept + self.headers
            await send(message)

        if _NOT_SERVED.search(path):
            await _refuse(send_with_headers, b"Not served by this dashboard.")
            return
        if _READY.search(path) and scope.get("method") in ("GET", "HEAD"):
            status, body = await readiness(self.ready)
            await send_with_headers({"type": "http.response.start", "status": status,
                                     "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                                 (b"cache-control", b"no-store"),
                                                 (b"content-length", str(len(body)).encode())]})
            await send_with_headers({"type": "http.response.body",
                                     "body": b"" if scope.get("method") == "HEAD" else body})
            return
        if scope.get("method") == "PUT" and not self._may_upload(path):
            await _refuse(send_with_headers, b"This session may not upload: unlock the dashboard first.")
            return
        if self.assets is not None and path in self.assets:
            request = {k.lower(): v for k, v in scope.get("headers", [])}
            query = bytes(scope.get("query_string", b"")).decode("latin-1")
            answer = self.assets.response(path, str(scope.get("method", "")), request, query)
            if answer is not None:
                status, headers, body = answer
                await send_with_headers({"type": "http.response.start", "status": status, "headers": headers})
                await send_with_headers({"type": "http.response.body", "body": body})
                return
        if scope.get("method") == "GET" and path in self.pages:
            await self.app(scope, receive, _HtmlRewrite(send_with_headers, self.head))
            return
        await self.app(scope, receive, send_with_headers)

    def _may_upload(self, path: str) -> bool:
        m = _UPLOAD_PATH.search(path)
        return m is None or self.sessions.contains(m.group("session"))


class _HtmlRewrite:
    """A ``send`` that puts ``head``'s tags in the head of a 200 ``text/html`` response.
    The page is a few kB: it is held whole, un-gzipped if Streamlit compressed it, and sent
    plain with its new length; every other response passes through as it comes."""

    def __init__(self, send: Send, head: page_head.PageHead) -> None:
        self.send, self.head = send, head
        self.start: Message | None = None
        self.body: list[bytes] = []

    async def __call__(self, message: Message) -> None:
        kind = message.get("type")
        if kind == "http.response.start" and message.get("status") == 200:
            headers = {k.lower(): v.lower() for k, v in message.get("headers", [])}
            encoding = headers.get(b"content-encoding", b"identity").strip()
            if headers.get(b"content-type", b"").startswith(b"text/html") and encoding in (b"identity", b"gzip"):
                self.start = message
                return
        elif kind == "http.response.body" and self.start is not None:
            self.body.append(message.get("body", b""))
            if not message.get("more_body"):
                await self._send_page(self.start, b"".join(self.body))
            return
        await self.send(message)

    async def _send_page(self, start: Message, body: bytes) -> None:
        headers = list(start.get("headers", []))
        if any(k.lower() == b"content-encoding" and v.strip().lower() == b"gzip" for k, v in headers):
            body = gzip.decompress(body)
        body = page_head.with_head(body, self.head)
        kept = [(k, v) for k, v in headers if k.lower() not in (b"content-length", b"content-encoding")]
        start["headers"] = [*kept, (b"content-length", str(len(body)).encode())]
        await self.send(start)
        await self.send({"type": "http.response.body", "body": body})


def store_ready() -> None:
    """Raise unless the share store (the process's, :mod:`calib.hosting.resident`, as
    ``dashboard.runtime.share_store`` opens it) answers a query."""
    from calib.hosting.resident import resident
    from calib.hosting.store import Store

    resident("share_store", Store.from_env).ping()


async def readiness(check: Callable[[], None]) -> tuple[int, bytes]:
    """``(status, body)`` of the readiness probe: 503 once the server is stopping, 503 when
    ``check`` raises (logged; run in a worker thread, it may wait on the database), else 200."""
    if WRITES.draining:
        return 503, b"stopping"
    try:
        await asyncio.to_thread(check)
    except Exception:
        log.exception("readiness probe: the share store does not answer")
        return 503, b"not ready: the share store does not answer (the server log has the details)"
    return 200, b"ready"


async def _refuse(send: Send, body: bytes) -> None:
    """403 saying ``body``, without reading the request body (uvicorn closes the
    connection if the client keeps sending)."""
    await send({"type": "http.response.start", "status": 403,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def middleware(pages: Iterable[str] = (), assets: Iterable[tuple[str, Path]] = (),
               base_url_path: str = "") -> list[Any]:
    """What ``app.py`` passes to ``st.App(middleware=...)``: the guard, with ``pages`` the
    request paths of the app's pages that get the head tags (:func:`page_head.page_paths`)
    and ``assets`` the app's versioned assets (``(address relative to the app's root, with
    its ``?v=`` query; file)``, under ``base_url_path``), served from memory, kept by
    browsers and prefetched by the pages. Also makes every connection send at once
    (:func:`calib.hosting.nodelay.install`) and installs the proxy policy
    (:func:`install_proxy_policy`)."""
    from starlette.middleware import Middleware

    nodelay.install()
    try:
        install_proxy_policy()
    except CalibError as exc:  # a setting that does not parse stops the server, naming it
        raise SystemExit(f"calib: {exc}") from None
    assets = tuple(assets)
    js = page_head.streamlit_static_js()
    files = StaticAssets(None if js is None else js.parent, page_head.app_path("static/", base_url_path),
                         [(page_head.app_path(url, base_url_path), url.partition("?")[2], file) for url, file in assets])
    return [Middleware(GuardMiddleware, pages=frozenset(pages), head=page_head.build(tuple(u for u, _ in assets)),
                       assets=files)]


# ---------------------------------------------------------------- proxies
def install_proxy_policy(trusted: TrustedProxies | None = None) -> bool:
    """Make uvicorn's ``ProxyHeadersMiddleware`` follow ``CALIB_TRUSTED_PROXIES``.

    uvicorn (under Streamlit 1.67) wraps every app in ``ProxyHeadersMiddleware``, which
    by default rewrites the client address from ``X-Forwarded-For`` whenever the peer
    is 127.0.0.1 or ::1: anyone on the host, or any local proxy that passes the header
    through, picks the address the password lock-out counts under. Streamlit has no
    setting for it, and uvicorn reads ``FORWARDED_ALLOW_IPS`` before ``app.py`` is
    imported. So this replaces the class's ``__call__`` (looked up at every call, so
    instances made before or after are covered): the peer address stands unless it is
    a trusted proxy; then the right-most untrusted ``X-Forwarded-For`` hop
    (:func:`calib.hosting.access.client_address`) and ``X-Forwarded-Proto`` apply.

    ``trusted`` defaults to ``CALIB_TRUSTED_PROXIES``, read now: a value that does not
    parse raises :class:`calib.errors.CalibError` at start-up, not on every request.
    Returns False when uvicorn is not importable (nothing to patch).
    """
    global _TRUSTED
    _TRUSTED = TrustedProxies.from_env() if trusted is None else trusted
    try:
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
    except ImportError:
        return False
    if getattr(ProxyHeadersMiddleware.__call__, "_calib", False):
        return True

    async def __call__(self: Any, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") in ("http", "websocket"):
            _apply_proxy_policy(scope, _TRUSTED)
        await self.app(scope, receive, send)

    __call__._calib = True  # type: ignore[attr-defined]
    ProxyHeadersMiddleware.__call__ = __call__  # type: ignore[method-assign]
    return True


#: The policy the patched middleware applies (set by :func:`install_proxy_policy`).
_TRUSTED = TrustedProxies()


def _apply_proxy_policy(scope: Scope, trusted: TrustedProxies) -> None:
    peer = scope.get("client")
    host = peer[0] if peer else None
    if not host or not trusted.contains(host):
        return
    forwarded = [v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"x-forwarded-for"]
    client = client_address(host, ", ".join(forwarded), trusted)
    if client != host:
        scope["client"] = (client, 0)
    proto = [v.decode("latin-1").strip().lower() for k, v in scope.get("headers", []) if k == b"x-forwarded-proto"]
    if proto and proto[-1] in ("http", "https"):
        scope["scheme"] = proto[-1].replace("http", "ws") if scope.get("type") == "websocket" else proto[-1]
