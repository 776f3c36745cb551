"""The dashboard server's connections send each response at once (``TCP_NODELAY``).

Why
---
Streamlit 1.67 binds its listening socket itself (``socket.socket(family=...)``, so its
``proto`` is 0) and hands it to uvicorn. Accepted connections inherit that ``proto``, and
asyncio turns Nagle's algorithm off only on sockets whose ``proto`` is ``IPPROTO_TCP``
(``asyncio.base_events._set_nodelay``). So every connection of the dashboard kept Nagle on.
uvicorn writes a response's headers and its body in two writes; on a keep-alive
connection the body's segment then waits until the browser acknowledges the headers, and
the browser delays that acknowledgement (Linux: 40 ms). Every request after a
connection's first paid those 40 ms: the ~130 JavaScript files of a page open over six
connections (a second of waiting), each figure frame's files, the health probes. The same
bug in uvicorn's own binding: https://github.com/Kludex/uvicorn/pull/3155.

What
----
:func:`install` wraps uvicorn's HTTP protocols' ``connection_made`` (looked up on the
class at every new connection, so it holds for every server in the process) to set
``TCP_NODELAY`` on the connection's socket, as asyncio does for sockets it creates. A
WebSocket keeps the connection it was upgraded from, so its messages are sent at once too.
"""

from __future__ import annotations

import functools
import socket
from typing import Any


def set_nodelay(transport: Any) -> bool:
    """Turn Nagle's algorithm off on ``transport``'s socket when it is TCP; whether it was."""
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
        return False
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:  # a socket closed under us: nothing to speed up
        return False
    return True


def install() -> list[str]:
    """Wrap the ``connection_made`` of uvicorn's HTTP protocols (h11 and httptools, those
    importable) so every accepted connection gets ``TCP_NODELAY``; the protocols wrapped
    (idempotent: a second call wraps nothing again)."""
    done = []
    for module, name in (("uvicorn.protocols.http.h11_impl", "H11Protocol"),
                         ("uvicorn.protocols.http.httptools_impl", "HttpToolsProtocol")):
        try:
            cls = getattr(__import__(module, fromlist=[name]), name)
        except ImportError:  # uvicorn absent, or httptools not installed
            continue
        original = cls.connection_made
        if not getattr(original, "_calib_nodelay", False):
            cls.connection_made = _wrapped(original)
        done.append(name)
    return done


def _wrapped(original: Any) -> Any:
    @functools.wraps(original)
    def connection_made(self: Any, transport: Any) -> None:
        set_nodelay(transport)
        original(self, transport)

    connection_made._calib_nodelay = True  # type: ignore[attr-defined]
    return connection_made
