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
- The HTML page of every page but the Data page (Streamlit serves the same ``index.html``
  at each page's address) gets :func:`page_preloads` in its head: ``<link
  rel="modulepreload">`` of the chunks that draw what those pages show (metrics, select
  boxes, sliders, number inputs, buttons, tables, the component frame that holds each
  figure: :data:`PRELOADED_CHUNKS`) and of their imports. Streamlit loads each of them
  only once the first element that needs it has arrived, about 70 small files over the
  browser's six connections to the server; preloaded, a fresh browser (a share link
  opened cold) fetches and compiles them while the page connects and its script runs
  (bench/bench_browser.py ``--only share``; README, speed table). The figures themselves
  are drawn by plotly.js's basic bundle inside that frame (:mod:`dashboard.chart`);
  before, these tags preloaded Streamlit's own Plotly chunk (4.7 MB). The Data page
  draws no figure and is served as Streamlit writes it.
- The client address: :func:`install_proxy_policy` makes uvicorn's proxy-header
  handling follow ``CALIB_TRUSTED_PROXIES`` (:func:`calib.hosting.access.client_address`)
  instead of uvicorn's default, which believes ``X-Forwarded-For`` from any loopback
  peer.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any

from calib.errors import CalibError
from calib.hosting.access import UPLOAD_SESSIONS, SessionRegistry, TrustedProxies, client_address

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: ``/<base>/_stcore/upload_file/<session_id>/<file_id>`` (any base URL path).
_UPLOAD_PATH = re.compile(r"/_stcore/upload_file/(?P<session>[^/]+)/[^/]+/?$")
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.S)
#: Streamlit's lazily loaded chunks a page with figures is told to fetch at once: those of
#: the elements the Routing page of a share link draws (found by listing the chunks a fresh
#: browser requested after the script's first message), 72 files and 2.0 MB with their
#: imports in Streamlit 1.67. ``ComponentInstance`` holds each figure's frame.
PRELOADED_CHUNKS = ("ComponentInstance", "Metric", "Selectbox", "Slider", "NumberInput", "Button", "Checkbox",
                    "TextInput", "DataFrame", "Table", "Html", "DownloadButton")
#: A chunk's static imports (Vite writes them first: ``import{a as b}from"./x.js";``).
_STATIC_IMPORT = re.compile(rb'(?:from|import)\s*"\./([\w.-]+\.js)"')
#: How much of a chunk its static imports are read from (they open the file).
_IMPORTS_HEAD = 16_384


def inline_script_hashes(index_html: bytes) -> list[str]:
    """CSP source expressions (``'sha256-…'``) of the inline ``<script>`` blocks of
    Streamlit's ``index.html`` (it has one: ``window.prerenderReady = false``), so the
    policy allows exactly those and no other inline script."""
    return [
        "'sha256-" + base64.b64encode(hashlib.sha256(m.group(1)).digest()).decode() + "'"
        for m in _INLINE_SCRIPT.finditer(index_html)
    ]


def streamlit_index_html() -> bytes:
    """The ``index.html`` Streamlit serves (read from the installed package, without
    importing Streamlit)."""
    import importlib.util

    spec = importlib.util.find_spec("streamlit")
    if spec is None or spec.origin is None:
        return b""
    path = Path(spec.origin).parent / "static" / "index.html"
    return path.read_bytes() if path.is_file() else b""


def streamlit_static_js() -> Path | None:
    """The folder of Streamlit's JavaScript bundles (``static/static/js``), or None."""
    import importlib.util

    spec = importlib.util.find_spec("streamlit")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "static" / "static" / "js"
    return folder if folder.is_dir() else None


def chunk_files(index_html: bytes, js_dir: Path | None, chunks: Iterable[str] = PRELOADED_CHUNKS) -> list[str]:
    """The files of the Streamlit chunks named ``chunks`` (``NAME.<hash>.js`` in ``js_dir``),
    each first, then their static imports, less what ``index_html`` already loads or
    preloads; ``[]`` when a chunk is not found (another Streamlit build)."""
    if js_dir is None:
        return []
    have = set(re.findall(r'(?:href|src)="\./static/js/([\w.-]+\.js)"', index_html.decode("utf-8", "replace")))
    todo: list[str] = []
    for name in chunks:
        found = sorted(js_dir.glob(f"{name}.*.js"))
        if len(found) != 1:
            return []
        todo.append(found[0].name)
    out: list[str] = []
    while todo:
        name = todo.pop(0)
        path = js_dir / name
        if name in have or not path.is_file():
            continue
        have.add(name)
        out.append(name)
        with path.open("rb") as f:
            todo.extend(m.decode() for m in _STATIC_IMPORT.findall(f.read(_IMPORTS_HEAD)))
    return out


def page_preloads(files: list[str]) -> bytes:
    """The tags a page with figures gets in its head: a module preload of each of
    ``files`` (fetched and compiled, not run), at low priority so that Streamlit's own
    bundles, which start the page, are fetched first (at high priority the page's title
    came up to 0.15 s later in some runs; at low, within the runs' noise either way).
    Relative addresses, as Streamlit's own tags: they hold under a base URL path."""
    return "".join(f'<link rel="modulepreload" fetchpriority="low" crossorigin href="./static/js/{name}">'
                   for name in files).encode()


def with_preloads(html: bytes, tags: bytes) -> bytes:
    """``html`` with ``tags`` just before its ``</head>`` when it is Streamlit's page (it
    mounts the app on ``<div id="root">``); any other HTML (a component's) unchanged."""
    head = html.rfind(b"</head>")
    if not tags or head < 0 or b'<div id="root">' not in html:
        return html
    return html[:head] + tags + html[head:]


def gets_preloads(path: str) -> bool:
    """Whether the page at ``path`` gets :func:`page_preloads`: every page but the Data
    page, the app's root (``/``, or ``<base>/`` under a base URL path). The pages past
    the Data page draw figures, but for Report and Review; they, and ``<base>`` without
    its slash (which cannot be told from a page), pay the low-priority fetch only."""
    return not path.endswith("/") and "/_stcore/" not in path and "/static/" not in path


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


def security_headers(script_hashes: Iterable[str] | None = None) -> list[tuple[bytes, bytes]]:
    """The headers added to every HTTP response (raw ASGI form)."""
    hashes = inline_script_hashes(streamlit_index_html()) if script_hashes is None else list(script_hashes)
    return [
        (b"x-content-type-options", b"nosniff"),
        (b"content-security-policy", content_security_policy(hashes).encode()),
        (b"x-frame-options", b"SAMEORIGIN"),
        (b"referrer-policy", b"same-origin"),
    ]


class GuardMiddleware:
    """Adds the security headers and refuses uploads of sessions not allowed in.

    Parameters
    ----------
    app:
        The ASGI application behind (Streamlit's Starlette app).
    sessions:
        The sessions that may upload (default :data:`calib.hosting.access.UPLOAD_SESSIONS`).
    headers:
        The headers to add (default :func:`security_headers`).
    preload:
        The Streamlit chunk files the pages with figures preload (default
        :func:`chunk_files` of the installed Streamlit; ``[]``: none).
    """

    def __init__(self, app: ASGIApp, *, sessions: SessionRegistry | None = None,
                 headers: list[tuple[bytes, bytes]] | None = None, preload: list[str] | None = None) -> None:
        self.app = app
        self.sessions = UPLOAD_SESSIONS if sessions is None else sessions
        self.headers = security_headers() if headers is None else headers
        self._names = {k for k, _ in self.headers}
        files = chunk_files(streamlit_index_html(), streamlit_static_js()) if preload is None else preload
        self.tags = page_preloads(files)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message.get("type") == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in self._names]
                message["headers"] = kept + self.headers
            await send(message)

        path = str(scope.get("path", ""))
        if scope.get("method") == "PUT" and not self._may_upload(path):
            await _refuse(send_with_headers)
            return
        if scope.get("method") == "GET" and self.tags and gets_preloads(path):
            await self.app(scope, receive, _HtmlRewrite(send_with_headers, self.tags))
            return
        await self.app(scope, receive, send_with_headers)

    def _may_upload(self, path: str) -> bool:
        m = _UPLOAD_PATH.search(path)
        return m is None or self.sessions.contains(m.group("session"))


class _HtmlRewrite:
    """A ``send`` that puts ``tags`` in the head of a 200 ``text/html`` response. The page
    is a few kB: it is held whole, un-gzipped if Streamlit compressed it, and sent plain
    with its new length; every other response passes through as it comes."""

    def __init__(self, send: Send, tags: bytes) -> None:
        self.send, self.tags = send, tags
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
        body = with_preloads(body, self.tags)
        kept = [(k, v) for k, v in headers if k.lower() not in (b"content-length", b"content-encoding")]
        start["headers"] = [*kept, (b"content-length", str(len(body)).encode())]
        await self.send(start)
        await self.send({"type": "http.response.body", "body": body})


async def _refuse(send: Send) -> None:
    """403 without reading the request body (uvicorn closes the connection if the
    client keeps sending)."""
    body = b"This session may not upload: unlock the dashboard first."
    await send({"type": "http.response.start", "status": 403,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def middleware() -> list[Any]:
    """What ``app.py`` passes to ``st.App(middleware=...)``; also installs the proxy
    policy (:func:`install_proxy_policy`)."""
    from starlette.middleware import Middleware

    try:
        install_proxy_policy()
    except CalibError as exc:  # a setting that does not parse stops the server, naming it
        raise SystemExit(f"calib: {exc}") from None
    return [Middleware(GuardMiddleware)]


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
