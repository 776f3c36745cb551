"""Streamlit's own front-end files and the app's versioned assets, served from memory by
the server's guard.

Why
---
Every page a browser opens for the first time asks for about 130 of Streamlit's JavaScript
and style files (4 MB; 131 on the Routing page). Streamlit serves each through its whole
middleware stack and Starlette's ``FileResponse``, which opens and reads the file on a
worker thread: about 1.5 ms of the server's time a file, 0.19 s for the 131 with six
connections at once, on a 2-core machine whose other core draws the page (measured in
bench/bench_browser.py's share-link run: the page's bundles done 0.1 s sooner and its
first figure 0.15 s sooner served from here). They are content-hashed files that never
change while the server runs, so :class:`StaticAssets` keeps each in memory on first use
and answers with one write, gzip-compressed once when the browser accepts it (Streamlit
sends them uncompressed, expecting a proxy in front; a share link opened over the
Internet fetches 1.2 MB instead of 4), with the same ``Cache-Control`` Streamlit sends
(``public, immutable, max-age=31536000``) and an ``ETag``.

The app's own versioned assets (the figures' plotly.js, named by ``app.py``) are served the
same way at the address that carries their version (``…/plotly-basic.min.js?v=4.1.1``), so
that a page can prefetch them before the first figure is drawn (Streamlit serves a
component's files only once a page has declared it) and browsers keep them.

What it serves
--------------
Only files that were in Streamlit's ``static/static`` folder when the server started, and
the versioned assets at exactly their address (path and query), looked up by that address
(no path is ever joined from the request), for ``GET`` and ``HEAD`` without a ``Range``
header; anything else goes on to Streamlit as before.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: What browsers may keep (Streamlit sends the same for these content-hashed files).
CACHE_CONTROL = b"public, immutable, max-age=31536000"
#: Files smaller than this are sent as they are (gzip would save nothing worth a header).
MIN_GZIP = 1024
#: Types worth compressing (fonts and images are compressed already).
_TEXT_TYPES = ("text/", "application/javascript", "application/json", "image/svg+xml")
_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".json": "application/json",
          ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".svg": "image/svg+xml",
          ".png": "image/png", ".map": "application/json"}


@dataclass(frozen=True)
class Asset:
    """One file as sent: its bytes, gzip-compressed bytes (``None``: not worth it), type and ETag."""

    body: bytes
    gzipped: bytes | None
    content_type: bytes
    etag: bytes


class StaticAssets:
    """The files under ``root`` (Streamlit's ``static/static``), served at ``prefix`` +
    their path relative to ``root`` (``/static/js/index.A1.js``), whatever the query; and
    each of ``versioned`` (``(request path, query, file)``) at exactly that path and query."""

    def __init__(self, root: Path | None, prefix: str = "/static/",
                 versioned: Iterable[tuple[str, str, Path]] = ()) -> None:
        self.prefix = prefix
        self._files: dict[str, tuple[Path, str | None]] = {}  # request path -> (file, the query it needs)
        if root is not None and root.is_dir():
            top = root.resolve()
            for path in top.rglob("*"):
                if path.is_file() and not path.is_symlink() and path.resolve().is_relative_to(top):
                    self._files[prefix + path.relative_to(top).as_posix()] = (path, None)
        for path, query, file in versioned:
            if Path(file).is_file():
                self._files[path] = (Path(file), query)
        self._cache: dict[str, Asset] = {}

    def __contains__(self, path: str) -> bool:
        return path in self._files

    def asset(self, path: str) -> Asset | None:
        """The file at the request path ``path``, read (and compressed) on first use."""
        hit = self._cache.get(path)
        if hit is None and path in self._files:
            hit = self._cache[path] = _read(self._files[path][0])
        return hit

    def response(self, path: str, method: str, headers: dict[bytes, bytes],
                 query: str = "") -> tuple[int, list[tuple[bytes, bytes]], bytes] | None:
        """``(status, headers, body)`` for a request, or None when it is not ours to answer
        (another path, query or method, a ``Range`` request)."""
        entry = self._files.get(path)
        if method not in ("GET", "HEAD") or b"range" in headers or entry is None:
            return None
        if entry[1] is not None and entry[1] != query:
            return None
        a = self.asset(path)
        if a is None:
            return None
        out = [(b"content-type", a.content_type), (b"cache-control", CACHE_CONTROL), (b"etag", a.etag)]
        if a.gzipped is not None:
            out.append((b"vary", b"Accept-Encoding"))
        if a.etag in _etags(headers.get(b"if-none-match", b"")):
            return 304, out, b""
        body = a.body
        if a.gzipped is not None and _accepts_gzip(headers.get(b"accept-encoding", b"")):
            body = a.gzipped
            out.append((b"content-encoding", b"gzip"))
        out.append((b"content-length", str(len(body)).encode()))
        return 200, out, b"" if method == "HEAD" else body


def _read(path: Path) -> Asset:
    body = path.read_bytes()
    kind = _TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    text = kind.startswith(_TEXT_TYPES)
    content_type = f"{kind}; charset=utf-8" if text else kind
    gz = gzip.compress(body, compresslevel=6, mtime=0) if text and len(body) >= MIN_GZIP else None
    if gz is not None and len(gz) >= len(body):
        gz = None
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    return Asset(body, gz, content_type.encode(), etag.encode())


def _etags(value: bytes) -> set[bytes]:
    """The entity tags of an ``If-None-Match`` header (weak ones compared as strong)."""
    return {t.strip().removeprefix(b"W/") for t in value.split(b",") if t.strip()}


def _accepts_gzip(value: bytes) -> bool:
    """Whether ``Accept-Encoding`` allows gzip (named, or ``*``, with a non-zero ``q``)."""
    for part in value.lower().split(b","):
        name, _, params = part.strip().partition(b";")
        if name.strip() in (b"gzip", b"*"):
            q = params.strip()
            return not (q.startswith(b"q=") and _float(q[2:]) == 0.0)
    return False


def _float(value: bytes) -> float:
    try:
        return float(value)
    except ValueError:
        return 1.0
